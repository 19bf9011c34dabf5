"""NodeClaim detector: failed launches and registrations, one problem per NodePool and cause."""
from __future__ import annotations

from playbooks.sweep.nodeclaims import nodeclaim_problems

from tests.playbooks.sweep_objects import NOW, ago, nodeclaim

READY = [{"type": t, "status": "True", "reason": t, "lastTransitionTime": ago(hours=1)}
         for t in ("Launched", "Registered", "Initialized", "Ready")]


def problems(*claims):
    return nodeclaim_problems(list(claims), cluster="prod-use1", now=NOW)


def test_ready_and_young_nodeclaims_give_nothing():
    launching = nodeclaim("g6-abc", pool="g6", created=ago(seconds=40), conditions=[
        {"type": "Launched", "status": "Unknown", "reason": "AwaitingReconciliation"}])
    registering = nodeclaim("g6-def", pool="g6", conditions=[
        {"type": "Launched", "status": "True", "lastTransitionTime": ago(minutes=2)},
        {"type": "Registered", "status": "Unknown", "reason": "NodeNotFound", "message": "Node not registered with cluster"}])
    assert problems(nodeclaim("g6-ok", pool="g6", conditions=READY), launching, registering) == []


def test_launch_failed_on_capacity_names_the_cause():
    msg = ("creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do "
           "not have sufficient p5e.48xlarge capacity in the Availability Zone you requested (us-west-2b).")
    claims = [nodeclaim(f"p5e-{i}", pool="p5e", conditions=[
        {"type": "Launched", "status": "False", "reason": "LaunchFailed", "message": msg}]) for i in range(4)]
    [p] = problems(*claims)
    assert p.code == "karpenter.insufficient_capacity" and p.target.name == "p5e"
    assert "4 NodeClaims failed to launch (p5e-0, p5e-1, p5e-2 and 1 more)" in p.title
    assert "InsufficientInstanceCapacity" in p.evidence[0].text


def test_launched_but_never_registered_gpu_nodes():
    # aws/karpenter-provider-aws#8720: g6 instances launch, kubelet never starts, NodeClaims stay NodeNotFound
    claim = nodeclaim("gpu-g6-7k2p9", pool="gpu-g6", conditions=[
        {"type": "Launched", "status": "True", "reason": "Launched", "lastTransitionTime": ago(minutes=12)},
        {"type": "Registered", "status": "Unknown", "reason": "NodeNotFound", "message": "Node not registered with cluster"}])
    [p] = problems(claim)
    assert p.code == "karpenter.node_registration_failed" and p.severity == "error"
    assert "launched but did not register" in p.title and p.group == "nodepool/gpu-g6"


def test_subnet_and_capacity_failures_of_one_pool_are_two_problems():
    subnet = nodeclaim("a", pool="trn", conditions=[{"type": "Launched", "status": "False", "reason": "LaunchFailed",
                                                     "message": "creating instance, no subnets found"}])
    stuck = nodeclaim("b", pool="trn", created=ago(minutes=8), conditions=[
        {"type": "Launched", "status": "Unknown", "reason": "AwaitingReconciliation", "message": ""}])
    codes = sorted(p.code for p in problems(subnet, stuck))
    assert codes == ["karpenter.node_registration_failed", "karpenter.subnet_problem"]
