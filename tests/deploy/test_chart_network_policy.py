"""The chart's NetworkPolicy is on by default in http mode and keeps the probes / metrics port closed to
other pods: only the kubelet (node CIDRs) and Prometheus's namespace reach it, so no pod can hold its
connections and fail the liveness probe. Rendered by the real helm and validated against the schema."""
from __future__ import annotations

import pytest

from playbooks.validation import validate_object
from tests.deploy.chart import CHART, REQUIRED, kinds, one, render, render_error

HTTP = (*REQUIRED, "mode=http")


def _rules_reaching(policy: dict, port: str) -> list[dict]:
    """Ingress rules that let traffic reach ``port``: a rule with no ports reaches every port."""
    return [rule for rule in policy["spec"].get("ingress") or []
            if not rule.get("ports") or any(p["port"] == port for p in rule["ports"])]


def _peers_other_pods_pass(rule: dict, *, prometheus: str | None, node_cidrs: set[str]) -> list[dict]:
    """The peers of ``rule`` that let some pod other than Prometheus's through (no `from`: everyone)."""
    peers = rule.get("from")
    if not peers:
        return [{"from": "anyone"}]
    open_to = []
    for peer in peers:
        if "ipBlock" in peer:
            ok = peer["ipBlock"]["cidr"] in node_cidrs and not peer["ipBlock"].get("except")
        else:
            namespaces = peer.get("namespaceSelector")
            ok = (prometheus is not None and namespaces == {"matchLabels": {"kubernetes.io/metadata.name": prometheus}})
        if not ok:
            open_to.append(peer)
    return open_to


def test_http_mode_renders_the_policy_by_default_with_the_probes_port_closed_to_other_pods():
    policy = one(render(None, *HTTP), "NetworkPolicy")
    assert validate_object(policy, strict=True) == []
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    [probes] = _rules_reaching(policy, "probes")
    assert _peers_other_pods_pass(probes, prometheus="monitoring", node_cidrs=set()) == []
    # The Slack port's rule opens that port only.
    assert [rule["ports"] for rule in _rules_reaching(policy, "http")] == [[{"port": "http", "protocol": "TCP"}]]


def test_the_kubelet_cidrs_and_prometheus_namespace_are_values():
    policy = one(render(None, *HTTP, "networkPolicy.nodeCIDRs={10.0.32.0/19,10.0.64.0/19}",
                        "networkPolicy.prometheusNamespace=observability"), "NetworkPolicy")
    [probes] = _rules_reaching(policy, "probes")
    assert probes["from"] == [{"ipBlock": {"cidr": "10.0.32.0/19"}}, {"ipBlock": {"cidr": "10.0.64.0/19"}},
                              {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "observability"}}}]
    assert _peers_other_pods_pass(probes, prometheus="observability", node_cidrs={"10.0.32.0/19", "10.0.64.0/19"}) == []


def test_no_peers_for_the_probes_port_is_no_rule_never_an_open_one():
    # An empty `from` admits everyone: with no Prometheus and no node CIDRs the rule is left out, and
    # only the pod's own node (the kubelet) reaches the port.
    policy = one(render(None, *HTTP, "networkPolicy.prometheusNamespace="), "NetworkPolicy")
    assert _rules_reaching(policy, "probes") == []


def test_the_ci_values_keep_the_probes_port_closed_to_other_pods():
    policy = one(render(CHART / "ci" / "http-full-values.yaml"), "NetworkPolicy")
    [probes] = _rules_reaching(policy, "probes")
    assert _peers_other_pods_pass(probes, prometheus="monitoring", node_cidrs={"10.0.32.0/19"}) == []


@pytest.mark.parametrize("sets, rendered", [
    (REQUIRED, False),                                           # socket mode: nothing listens for the world
    ((*HTTP, "networkPolicy.enabled=false"), False),
    ((*REQUIRED, "networkPolicy.enabled=true"), True),
])
def test_enabled_overrides_the_mode_default(sets, rendered):
    assert ("NetworkPolicy" in kinds(render(None, *sets))) is rendered


def test_trusted_proxies_reach_the_setting_and_are_checked():
    def env(*sets: str) -> dict:
        container = one(render(None, *HTTP, *sets), "Deployment")["spec"]["template"]["spec"]["containers"][0]
        return {e["name"]: e.get("value") for e in container["env"]}

    assert "GPUBOT_TRUSTED_PROXIES" not in env()
    assert env("trustedProxies={10.0.0.0/20,10.0.16.0/20}")["GPUBOT_TRUSTED_PROXIES"] == "10.0.0.0/20,10.0.16.0/20"
    assert "trustedProxies" in render_error(*HTTP, "trustedProxies={everyone}")
