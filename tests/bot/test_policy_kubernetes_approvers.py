"""``approvers.kubernetes``: who may approve with `gpubot remediate`, by the user and groups the cluster
authenticates. Every mistake is one line naming the line and what to write instead."""
from __future__ import annotations

import pytest

from bot.policy import PolicyError, parse_policy
from bot.policy.source import describe

GOOD = """\
approvers:
  users: [U0ONCALL1]
  usergroups: [S0GPUONCALL]
  kubernetes:
    users: [alice@example.com, "arn:aws:iam::111122223333:role/gpu-oncall", Alice Smith]
    groups: [sre-oncall, "system:serviceaccounts:ci"]
remediations:
  cordon-gpu-node: {nodes: ["*"]}
"""


def test_kubernetes_approvers_are_read_exactly():
    approvers = parse_policy(GOOD, source="p.yaml").approvers
    assert approvers.kubernetes_users == {"alice@example.com", "arn:aws:iam::111122223333:role/gpu-oncall",
                                          "Alice Smith"}
    assert approvers.kubernetes_groups == {"sre-oncall", "system:serviceaccounts:ci"}
    assert approvers.users == {"U0ONCALL1"}  # Slack approvers are untouched


@pytest.mark.parametrize("username, groups, allowed", [
    ("alice@example.com", frozenset(), True),
    ("bob@example.com", frozenset({"system:authenticated", "sre-oncall"}), True),
    ("bob@example.com", frozenset({"system:authenticated"}), False),
    ("U0ONCALL1", frozenset(), False),  # a Slack approver's id is not a Kubernetes user of that name
    ("alice@example.com.evil", frozenset(), False),  # exact names, no patterns
    ("S0GPUONCALL", frozenset({"S0GPUONCALL"}), False),  # nor is a Slack user group a Kubernetes group
])
def test_who_may_approve_in_the_cluster(username, groups, allowed):
    policy = parse_policy(GOOD, source="p.yaml")
    assert policy.may_approve_in_cluster(username, groups=groups) is allowed
    assert policy.may_approve(username) is (username == "U0ONCALL1")


def test_describe_counts_them():
    assert "7 approvers" in describe(parse_policy(GOOD, source="p.yaml"))


def test_an_empty_kubernetes_section_names_nobody():
    approvers = parse_policy("approvers:\n  users: [U0ONCALL1]\n  kubernetes:\n", source="p.yaml").approvers
    assert approvers.kubernetes_users == frozenset() and approvers.kubernetes_groups == frozenset()


@pytest.mark.parametrize("text, line, needles", [
    ("approvers:\n  kubernetes:\n    users: ['*']\n", 3, ["approvers.kubernetes.users: '*' is not a Kubernetes user",
                                                         "no *"]),
    ("approvers:\n  kubernetes:\n    users: ['sre-*']\n", 3, ["'sre-*' is not a Kubernetes user"]),
    ("approvers:\n  kubernetes:\n    users: [' alice']\n", 3, ["' alice' is not a Kubernetes user"]),
    ("approvers:\n  kubernetes:\n    groups: [system:authenticated]\n", 3,
     ["approvers.kubernetes.groups: system:authenticated stands for everyone", "e.g. sre-oncall"]),
    ("approvers:\n  kubernetes:\n    groups: [system:serviceaccounts]\n", 3, ["stands for everyone"]),
    ("approvers:\n  kubernetes:\n    users: [system:anonymous]\n", 3, ["system:anonymous stands for everyone"]),
    ("approvers:\n  kubernetes:\n    users: [a]\n    people: [b]\n", 4,
     ["approvers.kubernetes: unknown key 'people'", "users, groups"]),
    ("approvers:\n  kubernetes: [alice]\n", 2, ["approvers.kubernetes must be a mapping",
                                                "{users: [alice@example.com], groups: [sre-oncall]}"]),
    ("approvers:\n  kubernetes:\n    users: alice@example.com\n", 3,
     ["must be a list: write [alice@example.com]"]),
    ("approvers:\n  kubernetes:\n    groups: [true]\n", 3, ["expected a name, got 'true'"]),
    ("approvers:\n  k8s:\n    users: [alice]\n", 2, ["approvers: unknown key 'k8s'", "kubernetes"]),
])
def test_mistakes_are_one_line_with_the_line_number(text, line, needles):
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, source="p.yaml")
    message = str(caught.value)
    assert message.startswith(f"p.yaml:{line}: ") and "\n" not in message, message
    for needle in needles:
        assert needle in message, message
