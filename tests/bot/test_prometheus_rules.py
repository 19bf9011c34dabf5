"""The alert rules we ship (deploy/prometheus) use metrics upstream really exports, keep the labels our
parser reads to name an object, and the receiver snippet points Alertmanager at gpubot correctly."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.alerts import labels as alert_labels
from bot.alerts.alertmanager import MAX_ALERTS, parse_webhook
from tests.bot.alertmanager_payloads import alert, encode, webhook

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS = ROOT / "deploy" / "prometheus"
# The finding codes' contract: the first column of docs/findings.md.
CODES = set(re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|", (ROOT / "docs" / "findings.md").read_text(), re.M))

# DCGM exporter's labels: NVIDIA/dcgm-exporter internal/pkg/rendermetrics/render_metrics.go (gpu, UUID,
# pci_bus_id, device, modelName, Hostname; hostname since #655) and internal/pkg/transformation/const.go
# (pod, namespace, container, and their pod_name/pod_namespace/container_name forms).
_DCGM = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "hostname", "DCGM_FI_DRIVER_VERSION",
         "pod", "namespace", "container", "pod_name", "pod_namespace", "container_name"}

# Every metric a rule may read, with the labels upstream gives it.
UPSTREAM_METRICS = {
    # kubernetes-sigs/karpenter pkg/controllers/metrics/nodepool/controller.go (Limit, Usage), named
    # karpenter_nodepools_* by pkg/metrics/metrics.go (Namespace "karpenter", NodePoolSubsystem "nodepools").
    "karpenter_nodepools_usage": {"nodepool", "resource_type"},
    "karpenter_nodepools_limit": {"nodepool", "resource_type"},
    # kubernetes-sigs/karpenter pkg/metrics/metrics.go NodeClaimsDisruptedTotal.
    "karpenter_nodeclaims_disrupted_total": {"reason", "nodepool", "capacity_type", "consolidation_policy",
                                             "termination_mode"},
    # NVIDIA/dcgm-exporter etc/default-counters.csv.
    "DCGM_FI_DEV_XID_ERRORS": _DCGM,
    "DCGM_FI_DEV_GPU_UTIL": _DCGM,
}
# Labels Prometheus adds while scraping: exported_* when a ServiceMonitor does not honour the scraped
# pod/namespace (honor_labels: false), `node` from a relabeling of __meta_kubernetes_pod_node_name.
SCRAPE_LABELS = {"exported_pod", "exported_namespace", "node"}
# karpenter_nodeclaims_disrupted_total reasons for a NodeClaim that never became a node: kubernetes-sigs/
# karpenter pkg/controllers/nodeclaim/lifecycle/launch.go (insufficient_capacity, nodeclass_not_ready)
# and lifecycle/liveness.go (launch_timeout, registration_timeout).
LAUNCH_FAILURE_REASONS = {"insufficient_capacity", "nodeclass_not_ready", "launch_timeout", "registration_timeout"}

EXPECTED = {  # alert -> (target kind, finding code) with every label of its `by (...)` present
    "GPUNodePoolNearLimit": ("nodepool", "karpenter.nodepool_limit_reached"),
    "KarpenterProvisioningFailed": ("nodepool", "karpenter.insufficient_capacity"),
    "GPUXidError": ("node", "gpu.xid_error"),
    "LowGPUUtilization": ("pod", "alertmanager/LowGPUUtilization"),
}
SAMPLE = {"nodepool": "gpu-general", "resource_type": "nvidia.com/gpu", "reason": "insufficient_capacity",
          "namespace": "ml", "pod": "llama-worker-0", "exported_namespace": "ml", "exported_pod": "llama-worker-0",
          "gpu": "0", "UUID": "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52", "modelName": "NVIDIA A100-SXM4-40GB"}
NODE = "ip-10-0-12-34.us-west-2.compute.internal"
_NODE_LABELS = ("node", "Hostname", "hostname")

_SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}")
_MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"')
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9_:])[A-Za-z_:][A-Za-z0-9_:]*\b(?!\s*\()")
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "group_left", "group_right"}


def rules() -> list[dict]:
    doc = yaml.safe_load((PROMETHEUS / "gpubot-rules.yaml").read_text())
    assert (doc["apiVersion"], doc["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    return [rule for group in doc["spec"]["groups"] for rule in group["rules"]]


def metric_names(expr: str) -> set[str]:
    """The metrics an expression reads: identifiers left once strings, matchers, ranges, grouping
    clauses, function calls and keywords are taken out."""
    bare = re.sub(r'"[^"]*"', "", _GROUPING.sub("", re.sub(r"\[[^\]]*\]", "", re.sub(r"\{[^}]*\}", "", expr))))
    return {name for name in _IDENTIFIER.findall(bare) if name not in _KEYWORDS}


def kept_labels(expr: str) -> list[str]:
    """The labels of the outermost aggregation (its `by (...)`, which comes first in our rules)."""
    match = re.search(r"\bby\s*\(([^)]*)\)", expr)
    assert match, f"aggregate `by (...)` the labels to keep: {expr}"
    return [label.strip() for label in match.group(1).split(",") if label.strip()]


def test_the_rules_are_the_seed_notes_alerts():
    assert [r["alert"] for r in rules()] == list(EXPECTED)


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r["alert"])
def test_rules_read_only_metrics_and_labels_upstream_exports(rule):
    expr = rule["expr"]
    names = metric_names(expr)
    assert names and names <= set(UPSTREAM_METRICS), names - set(UPSTREAM_METRICS)
    for metric, matchers in _SELECTOR.findall(expr):
        for label, op, value in _MATCHER.findall(matchers):
            assert label in UPSTREAM_METRICS[metric], f"{metric} has no label {label}"
            if (metric, label) == ("karpenter_nodeclaims_disrupted_total", "reason"):
                assert set(value.split("|")) <= LAUNCH_FAILURE_REASONS, value
    exported = set().union(*(UPSTREAM_METRICS[n] for n in names)) | SCRAPE_LABELS
    assert set(kept_labels(expr)) <= exported, set(kept_labels(expr)) - exported


def test_metric_names_are_found_where_they_stand():
    expr = ('sum by (nodepool) (increase(karpenter_nodeclaims_terminated_total{reason="x"}[15m])) '
            '/ on (nodepool) group_left karpenter_nodepool_usage > bool 0')
    assert metric_names(expr) == {"karpenter_nodeclaims_terminated_total", "karpenter_nodepool_usage"}


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r["alert"])
def test_every_alert_names_a_target_our_parser_understands(rule):
    kind, code = EXPECTED[rule["alert"]]
    assert alert_labels.severity_for(rule["labels"]) == rule["labels"]["severity"]
    assert {"summary", "description"} <= set(rule["annotations"])
    kept = kept_labels(rule["expr"])
    labels = {**{k: SAMPLE.get(k, NODE) for k in kept}, **rule["labels"], "alertname": rule["alert"]}
    [a] = parse_webhook(encode(webhook(alert(labels)))).alerts
    assert (a.problem.target.kind, a.problem.code) == (kind, code)
    # DCGM's series name their node one way or another, by exporter version and scrape configuration:
    # each way alone must do.
    node_labels = [k for k in kept if k in _NODE_LABELS]
    for label in node_labels:
        only = {label: NODE, **rule["labels"], "alertname": rule["alert"]}
        [a] = parse_webhook(encode(webhook(alert(only)))).alerts
        assert a.problem.target.to_dict() == {"kind": "node", "name": NODE, "namespace": None}, label


def test_mapped_codes_are_finding_codes():
    for alertname in alert_labels._CODES:
        code = alert_labels.code_for({"alertname": alertname, "reason": "insufficient_capacity"})
        assert code in CODES, (alertname, code)
    assert alert_labels.code_for({"alertname": "KarpenterProvisioningFailed", "reason": "registration_timeout"}) in CODES


def test_the_receiver_posts_to_gpubot_with_the_bearer_token():
    config = yaml.safe_load((PROMETHEUS / "alertmanager-receiver.yaml").read_text())
    [route] = [r for r in config["route"]["routes"] if r["receiver"] == "gpubot"]
    routed = re.fullmatch(r'alertname=~"(.*)"', route["matchers"][0]).group(1).split("|")
    assert sorted(routed) == sorted(r["alert"] for r in rules())
    [receiver] = [r for r in config["receivers"] if r["name"] == "gpubot"]
    [hook] = receiver["webhook_configs"]
    assert hook["url"].endswith("/alertmanager")
    assert hook["send_resolved"] is True
    assert 0 < hook["max_alerts"] <= MAX_ALERTS
    assert "payload" not in hook  # a custom payload is not the version 4 body gpubot reads
    authorization = hook["http_config"]["authorization"]
    assert authorization["type"] == "Bearer" and authorization["credentials_file"]
