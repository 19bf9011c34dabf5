"""The chart's RBAC: reads for diagnoses, the bot's own Lease, and, when asked for, exactly the writes
the remediation definitions make (playbooks/remediations/registry.py permissions())."""
from __future__ import annotations

from tests.deploy.chart import CHART, NAMESPACE, REQUIRED, one, render

WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate", "*"}
SUBJECT = [{"kind": "ServiceAccount", "name": "gpubot", "namespace": NAMESPACE}]


def _granted(role: dict) -> set[tuple[str, str, str]]:
    return {(group, resource, verb) for rule in role["rules"] for group in rule.get("apiGroups", [])
            for resource in rule.get("resources", []) for verb in rule["verbs"]}


def _bound(objects: list[dict], kind: str, role: dict) -> dict:
    [binding] = [d for d in objects if d["kind"] == kind and d["roleRef"]["name"] == role["metadata"]["name"]]
    assert binding["roleRef"]["kind"] == role["kind"]
    return binding


def test_the_read_role_writes_nothing_and_is_bound_to_the_bot():
    objects = render(None, *REQUIRED)
    role = one(objects, "ClusterRole", "gpubot-read")
    assert _granted(role) and not {v for _, _, v in _granted(role)} & WRITE_VERBS
    assert _bound(objects, "ClusterRoleBinding", role)["subjects"] == SUBJECT
    assert "gpubot-remediate" not in {o["metadata"]["name"] for o in objects}


def test_each_replica_may_take_the_lease_in_its_own_namespace_and_nothing_else():
    objects = render(None, *REQUIRED)
    role = one(objects, "Role", "gpubot-leader-election")
    assert _granted(role) == {("coordination.k8s.io", "leases", v) for v in ("get", "create", "update")}
    # get and update only on the bot's own Lease, the one GPUBOT_LEASE_NAME names.
    env = {e["name"]: e.get("value") for e in one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert [r["resourceNames"] for r in role["rules"] if "resourceNames" in r] == [[env["GPUBOT_LEASE_NAME"]]]
    binding = _bound(objects, "RoleBinding", role)
    assert binding["subjects"] == SUBJECT
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == NAMESPACE


def test_the_remediation_role_grants_exactly_what_the_definitions_need():
    from playbooks.remediations import permissions

    objects = render(CHART / "ci" / "http-full-values.yaml")
    read, remediate = one(objects, "ClusterRole", "gpubot-read"), one(objects, "ClusterRole", "gpubot-remediate")
    needed = {(p.group, p.resource, p.verb) for p in permissions()}
    added = _granted(remediate)
    assert {g for g in added if g[2] in WRITE_VERBS} == {n for n in needed if n[2] in WRITE_VERBS}
    assert {v for _, _, v in added} <= {"get", "list", "patch"}
    # Every read a plan or a verification makes is granted by one role or the other, and the
    # remediation role reads nothing the definitions do not need.
    assert needed <= added | _granted(read)
    assert added <= needed
    assert _bound(objects, "ClusterRoleBinding", remediate)["subjects"] == SUBJECT
