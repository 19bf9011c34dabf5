"""Pending pods against topology constraints, judged as kube-scheduler and Karpenter judge them: a
self-affine group bootstraps, a hard spread or anti-affinity blocks only when no launchable domain
keeps it, a bound volume pins the pod to its zone."""
from __future__ import annotations

import yaml

from playbooks.analyzers import affinity, topology
from playbooks.karpenter.topology import peer_key
from tests.playbooks.karpenter.topology_builders import (
    G5_12XL, G5_48XL, P4D, failed, facts, node, nodepool, pod,
)

JOB = {"training.kubeflow.org/job-name": "llm", "training.kubeflow.org/replica-type": "worker"}
JOB_TERM = {"labelSelector": {"matchExpressions": [{"key": "training.kubeflow.org/job-name", "operator": "In",
                                                    "values": ["llm"]}]},
            "topologyKey": "kubernetes.io/hostname"}
SCHEDULER = ("0/3 nodes are available: 1 node(s) didn't match pod affinity rules, 2 node(s) didn't match Pod's node "
             "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
SPREAD_LINE = ("0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints. preemption: 0/2 "
               "nodes are available: 2 Preemption is not helpful for scheduling.")
ZONE = "topology.kubernetes.io/zone"


def _affine(n: int, *, gpus: int, term: dict = JOB_TERM, labels: dict = JOB) -> list:
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    return [pod(f"llm-worker-{i}", labels=labels, gpus=gpus, events=[failed(SCHEDULER)], **spec) for i in range(n)]


# -- pod affinity ----------------------------------------------------------------------------------

def test_self_affine_group_that_fits_one_node_is_not_a_deadlock():
    # seed 002: 4 x 1 GPU with required self-affinity on hostname; a g5.12xlarge holds all four
    pods = _affine(4, gpus=1)
    assert list(affinity.analyze(facts(pods))) == []


def test_self_affine_group_larger_than_any_instance_type_is_a_deadlock():
    pods = _affine(4, gpus=8)
    [finding] = affinity.analyze(facts(pods, types=[G5_12XL, G5_48XL, P4D]))
    assert finding.code == "scheduling.pod_affinity_unsatisfiable"
    assert finding.confidence == "high" and finding.severity == "error"
    assert "nvidia.com/gpu=32" in finding.title and "4 pods" in finding.title
    texts = [e.text for e in finding.evidence]
    assert any("topologyKey" in t and "kubernetes.io/hostname" in t for t in texts)
    assert any("p4d.24xlarge (nvidia.com/gpu=8" in t for t in texts)
    assert SCHEDULER in texts  # the scheduler's own line, verbatim
    patch = yaml.safe_load(finding.fix.snippet)
    affinity_patch = patch["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["affinity"]["podAffinity"]
    assert affinity_patch["requiredDuringSchedulingIgnoredDuringExecution"] is None
    assert affinity_patch["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"] == JOB_TERM


def test_group_too_big_without_ec2_is_reported_with_medium_confidence():
    [finding] = affinity.analyze(facts(_affine(4, gpus=4), ec2=False))  # 16 GPUs: more than any EC2 type has
    assert finding.confidence == "medium"
    assert list(affinity.analyze(facts(_affine(4, gpus=2), ec2=False))) == []  # 8 GPUs may fit: say nothing


def test_self_affinity_on_zone_never_runs_out_of_room():
    term = dict(JOB_TERM, topologyKey=ZONE)
    assert list(affinity.analyze(facts(_affine(4, gpus=8, term=term)))) == []


def _gpu_node(name: str, gpus: int) -> dict:
    out = node(name, "us-east-1a")
    out["status"] = {"allocatable": {"cpu": "95", "memory": "1100Gi", "pods": "250", "nvidia.com/gpu": str(gpus)}}
    return out


def test_pending_pods_that_must_join_a_full_node():
    # the first 8-GPU pod landed on a p4d; the others may only join that node, which has no GPU left
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [JOB_TERM]}}}
    first = pod("llm-worker-0", labels=JOB, gpus=8, node="p4d-1", **spec)
    waiting = _affine(3, gpus=8)[1:]
    [finding] = affinity.analyze(facts([first, *waiting], nodes=[_gpu_node("p4d-1", 8)]))
    assert "on node p4d-1, which has no room left" in finding.title
    assert any("nvidia.com/gpu: wants 8, free 0" in e.text for e in finding.evidence)


def test_pending_pod_that_fits_beside_the_running_ones_is_not_reported():
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [JOB_TERM]}}}
    first = pod("llm-worker-0", labels=JOB, gpus=4, node="p4d-1", **spec)
    waiting = _affine(2, gpus=4)[1:]
    assert list(affinity.analyze(facts([first, *waiting], nodes=[_gpu_node("p4d-1", 8)]))) == []


def test_pod_that_does_not_match_its_own_selector_and_has_nothing_to_join():
    term = {"labelSelector": {"matchLabels": {"role": "parameter-server"}}, "topologyKey": "kubernetes.io/hostname"}
    pods = _affine(1, gpus=1, term=term)
    [finding] = affinity.analyze(facts(pods))
    assert finding.code == "scheduling.pod_affinity_unsatisfiable"
    assert "no such pod exists" in finding.title
    # once a pod to join exists, even a pending one, the pod can follow it
    server = pod("ps-0", labels={"role": "parameter-server"}, gpus=0)
    assert list(affinity.analyze(facts([*pods, server]))) == []


def test_pods_to_join_in_a_zone_the_nodepool_cannot_launch_in():
    term = dict(JOB_TERM, topologyKey=ZONE)
    running = pod("llm-master-0", labels=JOB, node="n-a")
    pending = _affine(1, gpus=1, term=term)
    pool = nodepool(requirements=[{"key": ZONE, "operator": "In", "values": ["us-east-1b"]}])
    [finding] = affinity.analyze(facts([*pending, running], nodes=[node("n-a", "us-east-1a")], nodepools=[pool]))
    assert "us-east-1a" in finding.title
    assert any(e.text == "us-east-1a: 1" for e in finding.evidence)
    pool_a = nodepool(requirements=[{"key": ZONE, "operator": "In", "values": ["us-east-1a", "us-east-1b"]}])
    assert list(affinity.analyze(facts([*pending, running], nodes=[node("n-a", "us-east-1a")], nodepools=[pool_a]))) == []


# -- topology spread -------------------------------------------------------------------------------

APP = {"app": "ranker"}


def _spread_pod(**extra) -> object:
    constraint = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                  "labelSelector": {"matchLabels": APP}, **extra}
    return pod("ranker-new", labels=APP, topologySpreadConstraints=[constraint], events=[failed(SPREAD_LINE)])


def _ranker_cluster(pending, *, zones_offered: dict | None = None, full_node_in_c: bool = True):
    # n-c: a full node in us-east-1c holding no ranker pod, so the global minimum is 0
    nodes = [node("n-a", "us-east-1a"), node("n-b", "us-east-1b")] + ([node("n-c", "us-east-1c")] if full_node_in_c else [])
    placed = [pod(f"ranker-{z}-{i}", labels=APP, node=f"n-{z}") for z in ("a", "b") for i in range(2)]
    offered = zones_offered or {"g5.12xlarge": ("us-east-1a", "us-east-1b", "us-east-1c")}
    return facts([pending, *placed], nodes=nodes, types=[G5_12XL], zones=offered)


def test_spread_reported_when_the_emptiest_zone_has_no_offering():
    pending = _spread_pod()
    [finding] = topology.analyze(_ranker_cluster(pending, zones_offered={"g5.12xlarge": ("us-east-1a", "us-east-1b")}))
    assert finding.code == "scheduling.topology_spread" and finding.confidence == "high"
    assert "maxSkew=1" in finding.title and "us-east-1a: 2, us-east-1b: 2, us-east-1c: 0" in finding.title
    texts = [e.text for e in finding.evidence]
    assert any(t.startswith("us-east-1a: 2, us-east-1b: 2, us-east-1c: 0 (global minimum 0") for t in texts)
    assert "us-east-1c" in finding.fix.summary  # the zone to let the NodePool launch in
    assert SPREAD_LINE in texts
    patch = yaml.safe_load(finding.fix.snippet)
    [constraint] = patch["spec"]["topologySpreadConstraints"]
    assert constraint["whenUnsatisfiable"] == "ScheduleAnyway" and constraint["topologyKey"] == ZONE


def test_spread_with_min_domains_blocks_until_enough_zones_can_be_launched():
    offered = {"g5.12xlarge": ("us-east-1a", "us-east-1b")}
    # two domains at 2 pods each: 2 + 1 - 2 <= 1, the pod fits either
    assert list(topology.analyze(_ranker_cluster(_spread_pod(), zones_offered=offered, full_node_in_c=False))) == []
    pending = _spread_pod(minDomains=3)
    [finding] = topology.analyze(_ranker_cluster(pending, zones_offered=offered, full_node_in_c=False))
    assert "global minimum 0" in " ".join(e.text for e in finding.evidence)
    assert "minDomains=3" in " ".join(e.text for e in finding.evidence)


def test_spread_that_a_new_zone_satisfies_is_not_reported():
    assert list(topology.analyze(_ranker_cluster(_spread_pod()))) == []  # us-east-1c is offered: 0 + 1 - 0 <= 1


def test_schedule_anyway_spread_is_never_reported():
    pending = _spread_pod(whenUnsatisfiable="ScheduleAnyway")
    assert list(topology.analyze(_ranker_cluster(pending, zones_offered={"g5.12xlarge": ("us-east-1a",)}))) == []


# -- pod anti-affinity -----------------------------------------------------------------------------

def _anti(name: str, key: str = ZONE):
    term = {"labelSelector": {"matchLabels": APP}, "topologyKey": key}
    return pod(name, labels=APP, affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})


def test_anti_affinity_reported_when_every_launchable_zone_is_taken():
    pending = _anti("ranker-3")
    nodes = [node(f"n-{z}", f"us-east-1{z}") for z in "abc"]
    placed = [pod(f"ranker-{z}", labels=APP, node=f"n-{z}") for z in "abc"]
    [finding] = topology.analyze(facts([pending, *placed], nodes=nodes))
    assert finding.code == "scheduling.pod_affinity_unsatisfiable"
    assert "us-east-1a: 1, us-east-1b: 1, us-east-1c: 1" in finding.title
    assert yaml.safe_load(finding.fix.snippet)["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"] is None


def test_anti_affinity_group_larger_than_the_zones():
    pending = [_anti(f"ranker-{i}") for i in range(4)]
    [finding] = topology.analyze(facts(pending))
    assert "4 pods repel each other" in finding.title and "3: us-east-1a" in finding.title
    assert list(topology.analyze(facts(pending[:3]))) == []


def test_anti_affinity_on_hostname_always_has_a_new_node():
    pending = _anti("ranker-1", key="kubernetes.io/hostname")
    placed = [pod("ranker-0", labels=APP, node="n-a")]
    assert list(topology.analyze(facts([pending, *placed], nodes=[node("n-a", "us-east-1a")]))) == []


def test_anti_affinity_counts_peer_pods_gathered_for_its_selector():
    pending = _anti("ranker-3")
    nodes = [node(f"n-{z}", f"us-east-1{z}") for z in "abc"]
    others = [pod(f"other-{z}", labels=APP, node=f"n-{z}").pod for z in "abc"]
    f = facts([pending], nodes=nodes, peers={peer_key("train", {"matchLabels": APP}): others})
    assert [f.code for f in topology.analyze(f)] == ["scheduling.pod_affinity_unsatisfiable"]


# -- volume zones ----------------------------------------------------------------------------------

def _with_volume(zone: str | None, *, pool: dict | None = None):
    p = pod("db-0", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
            events=[failed("0/3 nodes are available: 3 node(s) had volume node affinity conflict.")])
    f = facts([p], nodepools=[pool] if pool else None)
    f.volumes = {"pvc/train/data": {"metadata": {"name": "data"}, "spec": {"volumeName": "pv-1"} if zone else {}}}
    if zone:
        f.volumes["pv/pv-1"] = {"metadata": {"name": "pv-1"}, "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": [zone]}]}]}}}}
    return f


def test_volume_pinned_to_a_zone_the_nodepool_excludes():
    pool = nodepool(requirements=[{"key": ZONE, "operator": "In", "values": ["us-east-1a", "us-east-1b"]}])
    [finding] = topology.analyze(_with_volume("us-east-1c", pool=pool))
    assert finding.code == "scheduling.volume_zone_conflict" and "us-east-1c" in finding.title
    assert "zone requirement excludes it" in finding.detail
    assert "volume node affinity conflict" in " ".join(e.text for e in finding.evidence)
    patch = yaml.safe_load(finding.fix.snippet)
    assert patch["kind"] == "NodePool"
    assert patch["spec"]["template"]["spec"]["requirements"][0]["values"] == ["us-east-1a", "us-east-1b", "us-east-1c"]


def test_volume_in_a_zone_without_offerings():
    [finding] = topology.analyze(_with_volume("us-east-1d"))
    assert "no instance type that fits the pod is offered there" in finding.detail
    assert yaml.safe_load(finding.fix.snippet)["kind"] == "StorageClass"


def test_volume_in_a_launchable_zone_or_unbound_is_fine():
    assert list(topology.analyze(_with_volume("us-east-1a"))) == []
    assert list(topology.analyze(_with_volume(None))) == []


# -- malformed input -------------------------------------------------------------------------------

def test_a_malformed_constraint_becomes_a_gap_not_a_crash():
    pending = _spread_pod(maxSkew="one")
    f = _ranker_cluster(pending, zones_offered={"g5.12xlarge": ("us-east-1a", "us-east-1b")})
    assert list(topology.analyze(f)) == []
    assert any(g.startswith("Topology constraints of pod ranker-new not checked: ValueError") for g in f.gaps)


def test_spread_is_not_judged_when_matching_pods_sit_on_nodes_not_read():
    pending = _spread_pod()
    f = _ranker_cluster(pending, zones_offered={"g5.12xlarge": ("us-east-1a", "us-east-1b")})
    f.pods.append(pod("ranker-elsewhere", labels=APP, node="n-unread"))
    assert list(topology.analyze(f)) == []


def test_nothing_to_join_in_another_namespace_is_not_claimed():
    term = {"labelSelector": {"matchLabels": {"role": "parameter-server"}}, "namespaces": ["infra"],
            "topologyKey": "kubernetes.io/hostname"}
    assert list(affinity.analyze(facts(_affine(1, gpus=1, term=term)))) == []
