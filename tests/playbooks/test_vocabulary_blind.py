"""The blind property of the cluster's vocabulary (playbooks/vocabulary/data): generated from the tables, not
from any fixture. Every error- or warning-level entry, instantiated with plain values and written the ways the
cluster writes it (a ``kubectl describe`` Events row, a ``kubectl get events`` row, a zap/logr JSON line, a klog
line), gives a finding above info that quotes it; every normal-level entry written as the cluster writes routine
news (a Normal event row, an info-level line) gives none.

The counts are printed (``-s``) and kept in the README.
"""
from __future__ import annotations

import json

import pytest

from playbooks import vocabulary
from playbooks.explain import explain_text

TS = "2026-11-29T04:00:00.000Z"


def _event_reason(entry: vocabulary.Entry) -> str:
    return entry.reason if entry.reason and entry.reason.isidentifier() and entry.reason[:1].isupper() else "Failed"


def renderings(entry: vocabulary.Entry, *, routine: bool) -> dict[str, str]:
    """The entry's sample as the cluster writes it: as a Warning / error, or (routine) as a Normal / info line."""
    sample = " ".join(_sample(entry).split())
    reason = _event_reason(entry)
    kind, level, klog = ("Normal", "info", "I") if routine else ("Warning", "error", "E")
    writer = entry.component.replace(" ", "-")
    out = {}
    if entry.kind in ("event", "condition", "container_reason", "admission") or entry.reason:
        out["describe"] = f"  {kind}  {reason}  2m (x3 over 5m)  {writer}  {sample}"
        out["get events"] = f"2m          {kind}   {reason}   pod/train-worker-0   {sample}"
    if entry.kind in ("error", "log", "ec2_code", "admission", "condition") or not out:
        out["json"] = json.dumps({"level": level, "ts": TS, "logger": writer, "msg": sample})
        out["klog"] = f"{klog}1129 04:00:00.000000    1234 {writer.split('-')[0] or 'main'}.go:123] {sample}"
    return out


def _sample(entry: vocabulary.Entry) -> str:
    from scripts.cluster_tables.common import sample_of
    return sample_of(entry.message) if entry.message else (entry.reason or "failed")


def _above_info_quoting(text: str) -> bool:
    findings = explain_text(text, source="blind").findings
    return any(f.severity != "info" and any(e.text.strip() == text.strip()[:600].strip() or text.strip().startswith(e.text.rstrip("…").strip())
                                            for e in f.evidence) for f in findings)


def _silent_or_info(text: str) -> bool:
    return all(f.severity == "info" for f in explain_text(text, source="blind").findings)


def ambiguous(entry: vocabulary.Entry) -> bool:
    """An entry with no message of its own whose reason other components also write at another level: a line
    can name its reason only (``reason: Suspended``), and no reader can tell whose it is. Counted, not rendered."""
    if entry.message:
        return False
    return len({e.level for e in vocabulary.entries() if e.reason == entry.reason}) > 1


@pytest.mark.parametrize("table", vocabulary.tables())
def test_every_error_entry_is_a_finding_and_every_normal_entry_is_not(table, capsys):
    failing, normal_loud, checked, routine, skipped = [], [], 0, 0, 0
    for entry in vocabulary.entries(table):
        if ambiguous(entry):
            skipped += 1
            continue
        if entry.level == "normal":
            for form, text in renderings(entry, routine=True).items():
                routine += 1
                if not _silent_or_info(text):
                    normal_loud.append((form, text))
            continue
        for form, text in renderings(entry, routine=False).items():
            checked += 1
            if not _above_info_quoting(text):
                failing.append((form, text))
    with capsys.disabled():
        print(f"\n{table}: {checked} error/warning renderings, {checked - len(failing)} give a finding above info; "
              f"{routine} routine renderings, {routine - len(normal_loud)} give none; {skipped} reason-only entries "
              "shared with another component at another level not rendered")
    assert not failing, failing[:10]
    assert not normal_loud, normal_loud[:10]
