"""Alertmanager's webhook body read into an AlertBatch of Problems: real-shaped payloads (DCGM exporter,
kube-prometheus-stack, our Karpenter rules), firing and resolved, and every way a body is refused."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from bot.alerts.alertmanager import MAX_ALERTS, MAX_BODY, MalformedAlert, PayloadTooLarge, parse_webhook
from playbooks.model import Target
from playbooks.problems import fingerprint
from tests.bot.alertmanager_payloads import alert, encode, fixture, webhook


def test_dcgm_xid_alerts_are_gpu_xid_errors_of_their_node_in_one_storm():
    batch = parse_webhook(fixture("dcgm_xid_firing.json"), cluster="prod")
    assert (batch.receiver, batch.status, batch.truncated) == ("gpubot", "firing", 0)
    assert batch.group_key.endswith(':{alertname="GPUXidError"}')
    assert batch.external_url == "http://kube-prometheus-stack-alertmanager.monitoring:9093"
    first, second = batch.alerts
    node = Target(kind="node", name="ip-10-0-12-34.us-west-2.compute.internal")
    for a in batch.alerts:
        p = a.problem
        assert (a.status, p.code, p.severity, p.target, p.source, p.cluster) == (
            "firing", "gpu.xid_error", "critical", node, "alertmanager", "prod")
        assert p.group == f"gpu.xid_error@node/{node.name}"
        assert a.ends_at is None
    # Same node, same code: one problem, the incident the sweep would open for that node's Xid.
    assert first.problem.fingerprint == second.problem.fingerprint == fingerprint(
        cluster="prod", kind="node", namespace=None, name=node.name, code="gpu.xid_error")
    assert (first.am_fingerprint, second.am_fingerprint) == ("5c3f4a1b9e2d7c60", "9a0e6b2c3d4f5e71")
    assert first.problem.title == "GPU 0 on ip-10-0-12-34.us-west-2.compute.internal reported Xid 79"
    assert first.problem.detail.startswith("The NVIDIA driver reported Xid 79 on GPU 0")
    # Go writes nanoseconds; Python keeps microseconds.
    assert first.starts_at == datetime(2026, 5, 14, 9, 12, 3, 417362, tzinfo=timezone.utc)
    assert first.generator_url.endswith("%3E+0&g0.tab=1")
    assert first.alertname == "GPUXidError"


def test_evidence_is_the_alert_verbatim_alertname_first():
    a = parse_webhook(fixture("dcgm_xid_firing.json")).alerts[0]
    labels, annotations = a.problem.evidence
    assert labels.source == "alertmanager labels GPUXidError"
    assert labels.text.splitlines() == [
        "alertname=GPUXidError", "Hostname=ip-10-0-12-34.us-west-2.compute.internal",
        "UUID=GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52", "gpu=0", "modelName=NVIDIA A100-SXM4-40GB",
        "prometheus=monitoring/kube-prometheus-stack-prometheus", "severity=critical"]
    assert annotations.source == "alertmanager annotations GPUXidError"
    assert annotations.text.splitlines()[1] == "summary=GPU 0 on ip-10-0-12-34.us-west-2.compute.internal reported Xid 79"
    assert a.problem.labels["modelName"] == "NVIDIA A100-SXM4-40GB"


def test_a_problem_still_firing_on_one_gpu_is_not_resolved_by_another():
    batch = parse_webhook(fixture("dcgm_xid_partly_resolved.json"))
    assert [a.status for a in batch.alerts] == ["resolved", "firing"]
    assert batch.alerts[0].ends_at == datetime(2026, 5, 14, 9, 41, 3, 417362, tzinfo=timezone.utc)
    [merged] = batch.by_problem()
    assert (merged.status, merged.problem.labels["gpu"]) == ("firing", "3")


def test_a_fully_resolved_group():
    body = fixture("dcgm_xid_partly_resolved.json").replace(b'"status":"firing"', b'"status":"resolved"')
    body = body.replace(b'"endsAt":"0001-01-01T00:00:00Z"', b'"endsAt":"2026-05-14T09:45:00Z"')
    batch = parse_webhook(body)
    assert batch.status == "resolved"
    [merged] = batch.by_problem()
    assert merged.status == "resolved"


def test_dcgm_raw_series_name_the_workload_pod_never_the_exporter():
    xid, idle = parse_webhook(fixture("dcgm_raw_series_firing.json")).alerts
    # An Xid is the node's fault even when a training pod holds the GPU (dcgm-exporter's hostname label).
    assert xid.problem.target == Target(kind="node", name="ip-10-0-40-7.us-west-2.compute.internal")
    assert xid.problem.group == "gpu.xid_error@node/ip-10-0-40-7.us-west-2.compute.internal"
    # An idle GPU: `pod` is nvidia-dcgm-exporter-..., the exporter that was scraped, so the node it is.
    assert idle.problem.code == "alertmanager/LowGPUUtilization"
    assert idle.problem.severity == "info"
    assert idle.problem.target == Target(kind="node", name="ip-10-0-40-8.us-west-2.compute.internal")
    assert idle.problem.group == "alertmanager/LowGPUUtilization@node/ip-10-0-40-8.us-west-2.compute.internal"


def test_low_utilisation_of_a_pod_in_use_names_that_pod_from_exported_labels():
    labels = {"alertname": "LowGPUUtilization", "severity": "info", "Hostname": "ip-10-0-40-7.ec2.internal",
              "namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x7k2p",
              "exported_namespace": "ml-training", "exported_pod": "llama3-8b-worker-1"}
    [a] = parse_webhook(encode(webhook(alert(labels)))).alerts
    assert a.problem.target == Target(kind="pod", name="llama3-8b-worker-1", namespace="ml-training")
    assert a.problem.group is None


def test_kube_prometheus_stack_alerts():
    crash, job, node = parse_webhook(fixture("kube_prometheus_firing.json")).alerts
    assert crash.problem.code == "training.crash_loop"
    assert crash.problem.target == Target(kind="pod", name="llama3-8b-worker-0", namespace="ml-training")
    assert crash.problem.severity == "warning"
    # The summary does not name the pod: the title does.
    assert crash.problem.title == "Pod is crash looping. (pod/llama3-8b-worker-0)"
    assert crash.annotations["runbook_url"].endswith("/kubepodcrashlooping")
    # job="kube-state-metrics" is the scrape job; job_name is the batch Job.
    assert job.problem.target == Target(kind="job", name="t5-finetune", namespace="ml-training")
    assert job.problem.code == "alertmanager/KubeJobFailed"
    assert node.problem.code == "node.not_ready"
    assert node.problem.target == Target(kind="node", name="ip-10-0-12-34.us-west-2.compute.internal")


def test_karpenter_alerts_name_their_nodepool():
    batch = parse_webhook(fixture("karpenter_firing.json"))
    assert batch.truncated == 1
    near, no_capacity, timeout = batch.alerts
    assert near.problem.code == "karpenter.nodepool_limit_reached"
    assert near.problem.target == Target(kind="nodepool", name="gpu-general")
    assert (near.problem.nodepool, near.problem.severity) == ("gpu-general", "warning")
    assert near.problem.title == "NodePool gpu-general uses 93.75% of its nvidia.com/gpu limit"
    assert no_capacity.problem.code == "karpenter.insufficient_capacity"
    assert no_capacity.problem.severity == "critical"
    assert timeout.problem.code == "alertmanager/KarpenterProvisioningFailed"
    assert timeout.problem.target == Target(kind="nodepool", name="gpu-efa")


def test_registration_timeouts_are_node_registration_failures():
    labels = {"alertname": "KarpenterProvisioningFailed", "nodepool": "gpu", "reason": "registration_timeout"}
    [a] = parse_webhook(encode(webhook(alert(labels)))).alerts
    assert a.problem.code == "karpenter.node_registration_failed"


def test_a_pod_of_a_pytorchjob_is_grouped_with_its_job():
    labels = {"alertname": "TrainingStalled", "namespace": "ml", "pod": "llama-worker-3", "pytorchjob": "llama"}
    [a] = parse_webhook(encode(webhook(alert(labels)))).alerts
    assert a.problem.target == Target(kind="pod", name="llama-worker-3", namespace="ml")
    assert a.problem.group == "alertmanager/TrainingStalled@pytorchjob/ml/llama"
    [job] = parse_webhook(encode(webhook(alert({"namespace": "ml", "pytorchjob": "llama"})))).alerts
    assert job.problem.target == Target(kind="pytorchjob", name="llama", namespace="ml")


def test_nodes_of_one_nodepool_are_one_storm():
    labels = {"alertname": "KubeNodeNotReady", "node": "ip-10-0-1-2.ec2.internal", "nodepool": "gpu"}
    [a] = parse_webhook(encode(webhook(alert(labels)))).alerts
    assert a.problem.group == "node.not_ready@nodepool/gpu"


@pytest.mark.parametrize("labels, expected", [
    ({"instance": "ip-10-0-1-2.ec2.internal:9100"}, Target(kind="node", name="ip-10-0-1-2.ec2.internal")),
    ({"kubernetes_node": "ip-10-0-1-3.ec2.internal"}, Target(kind="node", name="ip-10-0-1-3.ec2.internal")),
    ({"Hostname": "ip-10-0-1-4.ec2.internal", "instance": "10.0.1.4:9400"},
     Target(kind="node", name="ip-10-0-1-4.ec2.internal")),
    ({"nodepool": "gpu-general"}, Target(kind="nodepool", name="gpu-general")),
    ({"pod": "x-0", "namespace": "ml", "node": "n1"}, Target(kind="pod", name="x-0", namespace="ml")),
])
def test_targets_from_labels(labels, expected):
    [a] = parse_webhook(encode(webhook(alert(labels)))).alerts
    assert a.problem.target == expected


@pytest.mark.parametrize("labels", [
    {"instance": "10.0.1.2:9100"},  # an IP address is not a node name
    {"instance": "[2001:db8::1]:9100"},
    {"pod": "x-0"},  # a pod without its namespace
    {"job": "kube-state-metrics", "namespace": "monitoring"},  # the scrape job, not a workload
    {"node": "Not_A_Node"},
])
def test_labels_that_name_nothing_give_one_problem_per_alert(labels):
    one = alert(labels, fingerprint="1111111111111111")
    other = alert({**labels, "extra": "x"}, fingerprint="2222222222222222")
    first, second = parse_webhook(encode(webhook(one, other))).alerts
    assert first.problem.target == Target(kind="alert", name="TestAlert/1111111111111111",
                                          namespace=labels.get("namespace"))  # kept: the policy reads it
    assert first.problem.fingerprint != second.problem.fingerprint
    assert first.problem.code == "alertmanager/TestAlert"


def test_without_a_fingerprint_the_label_set_identifies_the_alert():
    bare = alert({"instance": "10.0.0.1:9100"})
    del bare["fingerprint"]
    again = parse_webhook(encode(webhook(bare))).alerts[0]
    assert again.am_fingerprint == parse_webhook(encode(webhook(bare))).alerts[0].am_fingerprint
    other = parse_webhook(encode(webhook({**bare, "labels": {**bare["labels"], "x": "y"}}))).alerts[0]
    assert other.am_fingerprint != again.am_fingerprint


@pytest.mark.parametrize("value, severity", [
    ("critical", "critical"), ("page", "critical"), ("ERROR", "error"), ("high", "error"),
    ("warning", "warning"), ("warn", "warning"), ("info", "info"), ("none", "info"), ("low", "info"),
    ("disaster", "warning"), (None, "warning"),
])
def test_severity_label(value, severity):
    labels = {"severity": value} if value else {}
    [a] = parse_webhook(encode(webhook(alert(labels)))).alerts
    assert a.problem.severity == severity


def test_titles_fall_back_to_the_description_then_the_alertname():
    described = alert({"node": "n1"}, annotations={"description": "\n  Disk is full\nsecond line"})
    bare = alert({"node": "n1"})
    one, two = parse_webhook(encode(webhook(described, bare))).alerts
    assert (one.problem.title, one.problem.detail) == ("Disk is full (node/n1)", "")
    assert two.problem.title == "TestAlert (node/n1)"
    long = alert({}, annotations={"summary": "x" * 500})
    assert len(parse_webhook(encode(webhook(long))).alerts[0].problem.title) == 200


def test_secrets_in_labels_and_annotations_never_leave_the_parser():
    leaked = alert({"node": "n1", "api_token": "s3cr3t-value-123"},
                   annotations={"summary": "push failed: Authorization: Bearer abcdefghijklmnop1234",
                                "description": "MLFLOW_TRACKING_URI=https://ci:hunter22@mlflow.internal"})
    [a] = parse_webhook(encode(webhook(leaked))).alerts
    everything = " ".join([a.problem.title, a.problem.detail, *(e.text for e in a.problem.evidence),
                           *a.problem.labels.values(), *a.annotations.values()])
    for secret in ("s3cr3t-value-123", "abcdefghijklmnop1234", "hunter22"):
        assert secret not in everything
    assert a.problem.labels["api_token"] == "[REDACTED]"
    assert "https://ci:[REDACTED]@mlflow.internal" in a.problem.detail


def test_times_with_offsets_are_utc():
    [a] = parse_webhook(encode(webhook(alert({}, startsAt="2018-08-03T09:52:26.739266876+02:00")))).alerts
    assert a.starts_at == datetime(2018, 8, 3, 7, 52, 26, 739266, tzinfo=timezone.utc)


def test_optional_fields_may_be_absent():
    minimal = {"status": "firing", "labels": {"alertname": "A"}, "startsAt": "2026-01-01T00:00:00Z"}
    body = webhook(minimal)
    del body["truncatedAlerts"], body["externalURL"]
    [a] = parse_webhook(encode(body)).alerts
    assert (a.annotations, a.ends_at, a.generator_url) == ({}, None, "")


MALFORMED = [
    (b"{not json", "body is not JSON"),
    (b"\xff\xfe\x00garbage", "body is not JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b"[]", "body must be a JSON object, not a list"),
    (encode({**webhook(), "version": "3"}), "webhook version '3' is not supported: gpubot reads version '4'"),
    (encode({k: v for k, v in webhook().items() if k != "version"}), "webhook version None"),
    (encode({**webhook(), "alerts": {"a": 1}}), "alerts must be a list, not an object"),
    (encode({k: v for k, v in webhook().items() if k != "alerts"}), "alerts must be a list, not null"),
    (encode({**webhook(), "status": "pending"}), "status must be 'firing' or 'resolved', not 'pending'"),
    (encode({**webhook(), "truncatedAlerts": -1}), "truncatedAlerts must be a count"),
    (encode({**webhook(), "truncatedAlerts": True}), "truncatedAlerts must be a count"),
    (encode({**webhook(), "groupKey": 7}), "groupKey must be a string, not a number"),
    (encode({**webhook(), "receiver": None}), "receiver must be a string, not null"),
    (encode(webhook("firing")), "alerts[0] must be an object, not a string"),
    (encode(webhook(alert({}), {**alert({}), "labels": {"severity": "critical"}})),
     "alerts[1].labels.alertname is missing"),
    (encode(webhook({**alert({}), "labels": {"alertname": ""}})), "alerts[0].labels.alertname is missing"),
    (encode(webhook({**alert({}), "labels": ["alertname"]})), "alerts[0].labels must be an object of strings, not a list"),
    (encode(webhook(alert({"gpu": 0}))), "alerts[0].labels.gpu must be a string, not a number"),
    (encode(webhook(alert({}, annotations={"summary": None}) | {"annotations": {"summary": None}})),
     "alerts[0].annotations.summary must be a string, not null"),
    (encode(webhook(alert({}, status="pending"))), "alerts[0].status must be 'firing' or 'resolved'"),
    (encode(webhook(alert({}, startsAt="yesterday"))), "alerts[0].startsAt is not an RFC 3339 timestamp: 'yesterday'"),
    (encode(webhook(alert({}, startsAt="2026-05-14"))), "alerts[0].startsAt is not an RFC 3339 timestamp"),
    (encode(webhook(alert({}, startsAt=1715677200))), "alerts[0].startsAt is not an RFC 3339 timestamp: a number"),
    (encode(webhook(alert({}, startsAt="2026-02-30T00:00:00Z"))), "alerts[0].startsAt is not a valid time"),
    (encode(webhook(alert({}, startsAt="0001-01-01T00:00:00Z"))), "alerts[0].startsAt is Go's zero time"),
    (encode(webhook(alert({}, endsAt="0001-01-01T00:00:00+09:00"))), "alerts[0].endsAt is not a valid time"),
    (encode(webhook(alert({}, fingerprint=12))), "alerts[0].fingerprint must be a string, not a number"),
    (encode(webhook(alert({}, generatorURL=["x"]))), "alerts[0].generatorURL must be a string, not a list"),
]


@pytest.mark.parametrize("body, message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_bodies_say_what_is_wrong_in_one_line(body, message):
    with pytest.raises(MalformedAlert) as caught:
        parse_webhook(body)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert not isinstance(caught.value, PayloadTooLarge)


def test_a_body_over_one_mebibyte_is_refused_before_it_is_read():
    body = b" " * (MAX_BODY + 1)  # not JSON either: the size is what is reported
    with pytest.raises(PayloadTooLarge, match=r"body of 1,048,577 bytes is over the 1,048,576-byte limit"):
        parse_webhook(body)
    padded = encode(webhook(alert({}))) + b" " * (MAX_BODY - len(encode(webhook(alert({})))))
    assert len(padded) == MAX_BODY and len(parse_webhook(padded).alerts) == 1


def test_more_than_a_thousand_alerts_are_refused():
    small = {"status": "firing", "labels": {"alertname": "A"}, "startsAt": "2026-01-01T00:00:00Z"}
    assert len(parse_webhook(encode(webhook(*[small] * MAX_ALERTS))).alerts) == MAX_ALERTS
    with pytest.raises(PayloadTooLarge, match=r"1001 alerts in one body, over the limit of 1000: set max_alerts"):
        parse_webhook(encode(webhook(*[small] * (MAX_ALERTS + 1))))
