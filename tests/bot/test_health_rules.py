"""gpubot's own health rules and Grafana dashboard read only the metrics and labels gpubot exports
(bot/metrics.py): a renamed metric or label fails here, not silently in a dashboard. promtool checks
the rules where it is installed."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from bot import metrics
from tests.tools import required_tool

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "gpubot-health-rules.yaml"
DASHBOARD = ROOT / "deploy" / "grafana" / "gpubot-dashboard.json"
# Labels Prometheus adds to every series it scrapes (a ServiceMonitor's target labels), and le.
TARGET_LABELS = {"job", "instance", "pod", "namespace", "service", "endpoint", "container", "le"}
SELECTOR = re.compile(r"\b(gpubot_[a-z_]+)(?:\{([^}]*)\})?")


def exported() -> dict[str, set[str]]:
    """Every sample name gpubot serves, with its labels."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
    names: dict[str, set[str]] = {}
    for collector in list(metrics.REGISTRY._collector_to_names):  # the families as defined, samples or not
        for family in collector.describe():
            labels = set(getattr(collector, "_labelnames", ()))
            for suffix in suffixes[family.type]:
                names[family.name + suffix] = labels
    return names


def expressions() -> list[tuple[str, str]]:
    spec = yaml.safe_load(RULES.read_text())["spec"]
    rules = [("rule " + r["alert"], r["expr"]) for group in spec["groups"] for r in group["rules"]]
    dashboard = json.loads(DASHBOARD.read_text())
    panels = [(f"panel {p['title']!r}", t["expr"]) for p in dashboard["panels"] for t in p["targets"]]
    return rules + panels


@pytest.mark.parametrize("where, expr", expressions())
def test_every_expression_reads_what_gpubot_exports(where, expr):
    known = exported()
    used = SELECTOR.findall(expr)
    assert used or "up{" in expr, f"{where} reads no gpubot metric"
    for name, matchers in used:
        assert name in known, f"{where}: gpubot exports no {name}"
        for label in re.findall(r"([a-zA-Z_]+)\s*(?:=~|!=|!~|=)", matchers):
            assert label in known[name] | TARGET_LABELS, f"{where}: {name} has no label {label}"


def test_every_rule_waits_and_says_what_to_do():
    doc = yaml.safe_load(RULES.read_text())
    assert (doc["apiVersion"], doc["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    rules = [r for group in doc["spec"]["groups"] for r in group["rules"]]
    names = {r["alert"] for r in rules}
    assert {"GpubotDown", "GpubotNotReady", "GpubotSlackRateLimited", "GpubotAlertmanagerWebhookErrors",
            "GpubotNoLeader", "GpubotDiagnosisSlow"} <= names
    for rule in rules:
        assert re.fullmatch(r"\d+[smh]", rule["for"]), rule["alert"]
        assert rule["labels"]["severity"] in ("critical", "warning")
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]


def test_promtool_accepts_the_rules(tmp_path):
    promtool = required_tool("promtool", install="run `bash scripts/fetch-promtool.sh`")
    groups = tmp_path / "rules.yaml"
    groups.write_text(yaml.safe_dump({"groups": yaml.safe_load(RULES.read_text())["spec"]["groups"]}))
    result = subprocess.run([promtool, "check", "rules", str(groups)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_dashboard_takes_its_datasource_as_a_variable():
    dashboard = json.loads(DASHBOARD.read_text())
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"]), panel["title"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
