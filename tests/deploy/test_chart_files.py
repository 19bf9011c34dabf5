"""The chart's PrometheusRule renders copies of deploy/prometheus/*-rules.yaml (a chart cannot read
outside its directory): the copies must equal their sources (scripts/sync-chart-files.sh makes them)."""
from __future__ import annotations

import yaml

from tests.deploy.chart import CHART, REQUIRED, one, render

SOURCES = CHART.parents[2] / "deploy" / "prometheus"
COPIES = CHART / "files" / "prometheus"
FIX = "run scripts/sync-chart-files.sh"


def test_every_rules_file_has_an_identical_copy_in_the_chart():
    sources = {p.name: p.read_bytes() for p in SOURCES.glob("*-rules.yaml")}
    copies = {p.name: p.read_bytes() for p in COPIES.glob("*.yaml")}
    assert sources, "no deploy/prometheus/*-rules.yaml"
    assert set(copies) == set(sources), FIX
    for name in sources:
        assert copies[name] == sources[name], f"{COPIES / name} differs from {SOURCES / name}: {FIX}"


def test_the_prometheus_rule_carries_every_group_of_every_file():
    objects = render(None, *REQUIRED, "prometheusRule.enabled=true", "prometheusRule.labels.release=kps")
    rule = one(objects, "PrometheusRule")
    expected = [g for p in sorted(COPIES.glob("*.yaml")) for g in yaml.safe_load(p.read_text())["spec"]["groups"]]
    assert rule["spec"]["groups"] == expected
    assert rule["metadata"]["labels"]["release"] == "kps"
    assert "PrometheusRule" not in {o["kind"] for o in render(None, *REQUIRED)}
