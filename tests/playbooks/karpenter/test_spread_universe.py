"""The domains a topology spread constraint counts, as kubernetes-sigs/karpenter v1.14.0 registers them
(pkg/controllers/provisioning/scheduling/topology.go buildDomainGroups, topologydomaingroup.go,
topologygroup.go): every NodePool's, whatever the pod tolerates or selects, unless nodeTaintsPolicy is Honor.
The cases follow upstream's own topology_test.go: three zones, maxSkew 1, one matching pod placed."""
from __future__ import annotations

from playbooks.analyzers import topology as analyzer
from playbooks.karpenter.topology import check_spread, pod_launchable_domains, spread_universe
from tests.playbooks.karpenter.topology_builders import facts, node, nodepool, pod

APP = {"app": "ranker"}
ZONE = "topology.kubernetes.io/zone"


def _spread(**extra) -> dict:
    return {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": APP}, **extra}


def _pool(name: str, zone: str, *, taint: str | None = None) -> dict:
    np = nodepool(name, requirements=[{"key": ZONE, "operator": "In", "values": [zone]},
                                      {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["g"]}])
    if taint:
        np["spec"]["template"]["spec"]["taints"] = [{"key": taint, "value": "true", "effect": "NoSchedule"}]
    return np


def _cluster(constraint: dict, *, second_taint: str | None = "dedicated", node_selector: dict | None = None):
    """gpu-a launches in us-east-1a, gpu-b (tainted) in us-east-1b; one matching pod runs in us-east-1a and
    no node exists in us-east-1b."""
    running = pod("r-0", labels=APP, node="n-a", nodeSelector={})
    pending = pod("r-1", labels=APP, nodeSelector=node_selector or {}, topologySpreadConstraints=[constraint])
    pools = [_pool("gpu-a", "us-east-1a"), _pool("gpu-b", "us-east-1b", taint=second_taint)]
    return pending, facts([running, pending], nodes=[node("n-a", "us-east-1a", nodepool="gpu-a")], nodepools=pools)


def _check(constraint: dict, pending, f):
    domains, _ = pod_launchable_domains(ZONE, pod=pending, facts=f)
    return check_spread(constraint, pod=pending, facts=f, launchable=domains)


def test_an_untolerated_nodepools_zone_counts_under_the_default_taints_policy():
    # nodeTaintsPolicy Ignore: us-east-1b (gpu-b, whose taint the pod does not tolerate) is a domain with 0
    # pods, so the global minimum is 0 and us-east-1a, the only zone the pod can launch in, gives 1 + 1 - 0 > 1.
    # The old model counted only zones of NodePools the pod tolerates: {a: 1}, minimum 1, placeable.
    pending, f = _cluster(_spread())
    assert spread_universe(ZONE, pod=pending, facts=f, honor_taints=False).sources == {
        "us-east-1a": ("gpu-a",), "us-east-1b": ("gpu-b",)}
    check = _check(_spread(), pending, f)
    assert check.counts == {"us-east-1a": 1, "us-east-1b": 0}
    assert check.global_min == 0 and check.blocked
    [finding] = [x for x in analyzer.analyze(f) if x.code == "scheduling.topology_spread"]
    assert "NodePool gpu-b can launch there" in finding.detail
    assert "nodeTaintsPolicy: Honor" in finding.detail


def test_honor_drops_the_zones_of_nodepools_whose_taints_the_pod_does_not_tolerate():
    constraint = _spread(nodeTaintsPolicy="Honor")
    pending, f = _cluster(constraint)
    assert spread_universe(ZONE, pod=pending, facts=f, honor_taints=True).sources == {"us-east-1a": ("gpu-a",)}
    check = _check(constraint, pending, f)
    assert check.counts == {"us-east-1a": 1} and check.placeable == ["us-east-1a"]  # 1 + 1 - 1 <= 1
    assert not [x for x in analyzer.analyze(f) if x.code == "scheduling.topology_spread"]


def test_honor_keeps_the_zones_of_tainted_nodepools_the_pod_tolerates():
    constraint = _spread(nodeTaintsPolicy="Honor")
    pending, f = _cluster(constraint, second_taint="nvidia.com/gpu")
    pending.pod["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    check = _check(constraint, pending, f)
    assert check.counts == {"us-east-1a": 1, "us-east-1b": 0} and check.placeable == ["us-east-1b"]


def test_a_nodepool_the_pod_selects_away_still_adds_its_zone():
    # #2671 (89c1296) filtered domains by NodePool compatibility; #2957 (4e80a7e, 5e51202 in v1.11.1) reverted it
    pending, f = _cluster(_spread(), second_taint=None, node_selector={"karpenter.sh/nodepool": "gpu-a"})
    domains, names = pod_launchable_domains(ZONE, pod=pending, facts=f)
    assert names == ["gpu-a"] and domains.values == {"us-east-1a"}
    check = _check(_spread(), pending, f)
    assert check.counts == {"us-east-1a": 1, "us-east-1b": 0} and check.blocked


def test_the_pods_own_zone_requirement_still_narrows_the_minimum():
    # domainMinCount(podDomains): a zone the pod's required node affinity excludes never sets the minimum
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["us-east-1a"]}]}]}}}
    pending, f = _cluster(_spread())
    pending.pod["spec"]["affinity"] = affinity
    check = _check(_spread(), pending, f)
    assert check.counts == {"us-east-1a": 1} and not check.blocked


def test_node_affinity_policy_does_not_narrow_the_nodepool_domains():
    # nodeAffinityPolicy only filters existing nodes (topologynodefilter.go); #2639 (aa00d04), which applied it to
    # the NodePools' domains, was reverted by #2797 (ea4d81b)
    pending, f = _cluster(_spread(nodeAffinityPolicy="Honor"), second_taint=None,
                          node_selector={"karpenter.sh/nodepool": "gpu-a"})
    check = _check(_spread(nodeAffinityPolicy="Honor"), pending, f)
    assert "us-east-1b" in check.counts and check.blocked


def test_nodepool_without_zone_requirement_adds_the_zones_its_types_are_offered_in():
    free = nodepool("cpu", requirements=[])
    free["spec"]["template"]["spec"]["taints"] = [{"key": "dedicated", "value": "cpu", "effect": "NoSchedule"}]
    pending, f = _cluster(_spread(), second_taint=None)
    f.nodepools["cpu"] = free
    f.ec2.candidates["cpu"] = dict(f.ec2.candidates["gpu-a"])
    universe = spread_universe(ZONE, pod=pending, facts=f, honor_taints=False)
    assert universe.sources["us-east-1c"] == ("cpu",) and universe.complete


def test_a_nodepool_whose_nodeclass_is_not_ready_adds_nothing():
    pending, f = _cluster(_spread())
    f.nodeclasses["karpenter.k8s.aws/default"] = {"status": {"conditions": [
        {"type": "Ready", "status": "False", "reason": "AMINotFound"}]}}
    assert spread_universe(ZONE, pod=pending, facts=f, honor_taints=False).sources == {}
