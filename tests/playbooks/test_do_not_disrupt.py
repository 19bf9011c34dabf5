"""karpenter.sh/do-not-disrupt read as Karpenter reads it: "true" always, a positive Go duration from
v1.12 until the pod has run that long (kubernetes-sigs/karpenter pkg/utils/pod/scheduling.go
IsDoNotDisruptActive, PR #2874; before that HasDoNotDisrupt: "true" only); and the annotate
remediation agreeing with it."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from playbooks.remediations import DO_NOT_DISRUPT, annotate_do_not_disrupt, plan
from playbooks.remediations.protection import parse_go_duration, protection

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)


def pod(value: str | None, *, started: datetime | None = NOW - timedelta(hours=3), name: str = "p") -> dict:
    meta = {"name": name, "namespace": "ml", "labels": {"batch.kubernetes.io/job-name": "train"}}
    if value is not None:
        meta["annotations"] = {DO_NOT_DISRUPT: value}
    status = {"phase": "Running"}
    if started is not None:
        status["startTime"] = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c"}]},
            "status": status}


@pytest.mark.parametrize("text,seconds", [("5m", 300), ("1h30m", 5400), ("1.5h", 5400), ("2h30m45s", 9045),
                                          ("300ms", 0.3), ("0", 0)])
def test_go_durations(text, seconds):
    assert parse_go_duration(text).total_seconds() == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["5", "true", "1d", "2 h", " 2h", "", "h", "9" * 5000 + "h", "3000000h"])
def test_not_go_durations(text):
    assert parse_go_duration(text) is None


def test_a_hostile_annotation_or_version_is_no_protection_and_no_crash():
    reading = protection(pod("9" * 5000 + "h"), now=NOW, karpenter_version="v" + "9" * 5000 + ".1")
    assert not reading.active


def test_true_protects_in_every_version():
    assert protection(pod("true"), now=NOW, karpenter_version="1.0.5").active
    assert protection(pod("true"), now=NOW).active


def test_a_duration_protects_until_it_runs_out():
    assert protection(pod("4h"), now=NOW).active  # started 3 h ago
    lapsed = protection(pod("2h"), now=NOW)
    assert not lapsed.active and lapsed.expired and "ran out at 2026-03-02 11:00 UTC" in lapsed.why
    assert protection(pod("2h", started=None), now=NOW).active  # no start time: Karpenter fails safe


def test_a_duration_means_nothing_before_v1_12():
    reading = protection(pod("4h"), now=NOW, karpenter_version="1.11.2")
    assert not reading.active and "v1.12" in reading.why
    assert protection(pod("4h"), now=NOW, karpenter_version="v1.12.0").active


@pytest.mark.parametrize("value", ["True", "yes", "false", "-5m", "0s"])
def test_values_karpenter_ignores(value):
    assert not protection(pod(value), now=NOW).active


def test_annotate_replaces_a_lapsed_duration_and_the_undo_restores_it():
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml",
                                                                  "resourceVersion": "7"},
           "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}, "status": {"startTime": "2026-03-02T09:00:00Z"}}
    pods = [pod("2h", name="lapsed"), pod("4h", name="still"), pod("True", name="typo")]
    result = plan(annotate_do_not_disrupt(kind="job", namespace="ml", name="train"), job, pods, now=NOW)
    touched = {c.ref.name: c for c in result.changes}
    assert set(touched) == {"lapsed", "typo"}
    undo = {u.ref.name: u for u in result.undo}
    assert undo["lapsed"].patch[-1] == {"op": "replace", "path": "/metadata/annotations/karpenter.sh~1do-not-disrupt",
                                        "value": "2h"}
    assert touched["lapsed"].watched["/metadata/annotations/karpenter.sh~1do-not-disrupt"] == "2h"
    assert "1 already carries it" in result.summary
