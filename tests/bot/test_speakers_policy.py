"""The policy's trusted_node_reporters: namespaces whose Events about nodes speak for the node whatever
runs there (playbooks/speakers.py), named exactly, each mistake one line naming its line."""
from __future__ import annotations

import pytest

from bot.policy import PolicyError, parse_policy
from playbooks.analyzers.gpu import analyze_xid
from playbooks.facts import Facts
from playbooks.model import Target
from tests.playbooks.sweep_objects import gpu_node, node_event

XID79 = "NVRM: Xid (PCI:0000:97:00): 79, pid=1234, name=python3, GPU has fallen off the bus."


def test_the_section_is_a_set_of_exact_namespaces():
    policy = parse_policy("channels:\n  C0123ABCD: {clusters: [prod]}\n"
                          "trusted_node_reporters: [gpu-health, node-problem-detector]\n", source="p.yaml")
    assert policy.trusted_node_reporters == frozenset({"gpu-health", "node-problem-detector"})


def test_left_out_or_empty_it_trusts_no_namespace():
    for text in ("channels: {}\n", "channels: {}\ntrusted_node_reporters:\n", "channels: {}\ntrusted_node_reporters: []\n"):
        assert parse_policy(text, source="p.yaml").trusted_node_reporters == frozenset()


@pytest.mark.parametrize("text, line, words", [
    ("trusted_node_reporters: node-problem-detector\n", 1,
     ["must be a list", "write [node-problem-detector] instead of node-problem-detector"]),
    ("channels: {}\ntrusted_node_reporters: ['node-*']\n", 2,
     ["'node-*' is a pattern", "name each namespace exactly", "a tenant who may create namespaces"]),
    ("trusted_node_reporters:\n  - gpu-health\n  - '*'\n", 3, ["'*' is a pattern"]),
    ("trusted_node_reporters: [Node_Problem_Detector]\n", 1, ["is not a namespace"]),
    ("trusted_node_reporters: {gpu-health: true}\n", 1, ["must be a list", "got a mapping"]),
    ("trusted_node_reporter: [gpu-health]\n", 1, ["unknown key 'trusted_node_reporter'", "trusted_node_reporters"]),
])
def test_a_bad_value_is_one_line_naming_its_line(text, line, words):
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, source="p.yaml")
    message = str(caught.value)
    assert message.startswith(f"p.yaml:{line}: ") and "\n" not in message, message
    assert all(word in message for word in words), message


def _claim(namespace: str, component: str) -> dict:
    found = node_event("ip-10-1-0-1", "NvidiaXID79Error", XID79)
    found["metadata"]["namespace"] = namespace
    found["source"] = {"component": component}
    return found


def test_a_trusted_namespace_speaks_for_the_node_in_a_diagnosis():
    policy = parse_policy("trusted_node_reporters: [gpu-health]\n", source="p.yaml")
    events = [_claim("gpu-health", "kernel-monitor"), _claim("default", "eks-node-monitoring-agent")]
    facts = Facts(target=Target(kind="node", name="ip-10-1-0-1"), cluster="prod",
                  nodes={"ip-10-1-0-1": gpu_node("ip-10-1-0-1")}, node_events={"ip-10-1-0-1": events},
                  trusted_node_reporters=policy.trusted_node_reporters)
    [finding] = list(analyze_xid(facts))
    assert finding.severity == "critical" and [r.kind for r in finding.remediations] == ["cordon-gpu-node"]
    untrusted = Facts(target=facts.target, cluster="prod", nodes=facts.nodes, node_events={"ip-10-1-0-1": events})
    [finding] = list(analyze_xid(untrusted))  # the agent alone: counted, no cordon
    assert finding.severity == "error" and not finding.remediations
