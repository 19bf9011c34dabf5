"""nodepool-consolidation: consolidate a GPU NodePool only when its nodes are empty, after a delay,
optionally with a disruption budget. The undo puts the previous ``spec.disruption`` back as it was."""
from __future__ import annotations

from typing import Any

from playbooks.model import Remediation
from playbooks.remediations.diff import object_diff
from playbooks.remediations.model import (
    JSON_PATCH, MERGE_PATCH, Change, NothingToDo, ObjectRef, Permission, Plan, Reads,
)
from playbooks.remediations.proposals import InvalidRemediation
from playbooks.remediations.readback import verify_change
from playbooks.validation import merge_patch, validate_object

API_VERSION = "karpenter.sh/v1"
DISRUPTION = "/spec/disruption"


class NodePoolConsolidation:
    kind = "nodepool-consolidation"
    permissions = (Permission("karpenter.sh", "nodepools", "get"), Permission("karpenter.sh", "nodepools", "patch"))

    def reads(self, remediation: Remediation) -> Reads:
        return Reads(owner=ObjectRef(API_VERSION, "NodePool", "nodepools", remediation.params["nodepool"]))

    def plan(self, remediation: Remediation, owner: dict, pods: list[dict]) -> Plan:
        ref = self.reads(remediation).owner
        _check_owner(owner, ref)
        before = (owner.get("spec") or {}).get("disruption")
        wanted = _wanted(remediation.params)
        if before is not None and all(before.get(k) == v for k, v in wanted.items()):
            raise NothingToDo(f"{ref} already consolidates {_describe(before, budgets='budgets' in wanted)}")
        patch = {"spec": {"disruption": wanted}}
        after_object = merge_patch(owner, patch)
        _check_schema(owner, after_object, ref)
        after = after_object["spec"]["disruption"]
        change = Change(ref=ref, patch_type=MERGE_PATCH, patch=patch,
                        resource_version=(owner.get("metadata") or {}).get("resourceVersion"),
                        watched={DISRUPTION: before})
        # Put back exactly what was there, but only over what gpubot wrote: someone's later edit of
        # these fields makes the test fail, and the undo is refused instead of overwriting it.
        tests = [{"op": "test", "path": f"{DISRUPTION}/{key}", "value": value} for key, value in wanted.items()]
        restore = ({"op": "replace", "path": DISRUPTION, "value": before} if before is not None
                   else {"op": "remove", "path": DISRUPTION})
        undo = Change(ref=ref, patch_type=JSON_PATCH, patch=[*tests, restore],
                      watched={f"{DISRUPTION}/{key}": value for key, value in wanted.items()})
        preview = object_diff(ref, {"spec": {"disruption": before}} if before is not None else {"spec": {}},
                              {"spec": {"disruption": after}})
        budgets = "budgets" in wanted
        was = f"was {_describe(before, budgets=budgets)}" if before else "no disruption settings before"
        return Plan(changes=(change,), undo=(undo,), preview=preview,
                    summary=f"set consolidationPolicy {_describe(after, budgets=budgets)} on NodePool {ref.name} ({was})")

    def verify(self, change: Change, after: dict) -> str | None:
        return verify_change(change, after)


def _wanted(params: dict[str, Any]) -> dict[str, Any]:
    wanted: dict[str, Any] = {"consolidationPolicy": params["consolidationPolicy"],
                              "consolidateAfter": params["consolidateAfter"]}
    if params.get("budgetNodes") is not None:
        wanted["budgets"] = [{"nodes": str(params["budgetNodes"])}]
    return wanted


def _check_owner(owner: dict, ref: ObjectRef) -> None:
    name = (owner.get("metadata") or {}).get("name")
    if owner.get("kind") != "NodePool" or name != ref.name:
        raise InvalidRemediation(f"expected {ref}, read {owner.get('kind')} {name}")
    if owner.get("apiVersion") != API_VERSION:
        raise InvalidRemediation(
            f"NodePool {name} is served as {owner.get('apiVersion')}: this cluster runs a Karpenter older than v1.0, "
            f"whose disruption settings differ (WhenUnderutilized; consolidateAfter only with WhenEmpty). Upgrade "
            f"Karpenter to v1 (its v1 migration guide), or edit the NodePool's spec.disruption by hand")


def _check_schema(before: dict, after: dict, ref: ObjectRef) -> None:
    """The NodePool CRD's own schema decides: an error the change introduces refuses it (errors the
    live object already had are not gpubot's to judge)."""
    known = set(validate_object(before))
    new = [e for e in validate_object(after) if e not in known]
    if new:
        raise InvalidRemediation(f"the NodePool schema refuses this change: {new[0]}")


def _describe(disruption: dict, *, budgets: bool) -> str:
    """"WhenEmpty after 10m", with ", budgets 1 node" when the change sets budgets."""
    text = f"{disruption.get('consolidationPolicy', 'WhenEmptyOrUnderutilized')} after {disruption.get('consolidateAfter', '0s')}"
    if budgets:
        text += ", budgets " + (", ".join(_budget(b) for b in disruption.get("budgets") or []) or "none")
    return text


def _budget(budget: dict) -> str:
    nodes = str(budget.get("nodes"))
    text = f"{nodes} of nodes" if nodes.endswith("%") else f"{nodes} node{'' if nodes == '1' else 's'}"
    if budget.get("schedule"):
        text += f" at {budget['schedule']} for {budget.get('duration')}"
    if budget.get("reasons"):
        text += f" for {'/'.join(budget['reasons'])}"
    return text
