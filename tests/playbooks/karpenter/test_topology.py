"""The topology model against upstream semantics: label selectors (apimachinery), the domains Karpenter
can create (topology.go), spread skew with minDomains and node policies (podtopologyspread/filtering.go),
one-node groups (topologygroup.go) and bound volume zones (volumebinding)."""
from __future__ import annotations

from playbooks.analyzers import topology as analyzer
from playbooks.karpenter.topology import (
    GPU, check_spread, group_fits_one_node, launchable_domains, peer_key, pod_launchable_domains, selector_matches,
    selector_string, usable_nodepools, volume_zones,
)
from tests.playbooks.karpenter.topology_builders import G5_12XL, G5_48XL, P4D, facts, failed, node, nodepool, pod

APP = {"app": "ranker"}
ZONE = "topology.kubernetes.io/zone"


def _spread(**extra) -> dict:
    return {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": APP}, **extra}


# -- selectors -------------------------------------------------------------------------------------

def test_nil_selector_matches_nothing_and_empty_selector_matches_everything():
    assert not selector_matches(None, {"app": "x"})
    assert selector_matches({}, {"app": "x"})


def test_notin_matches_pods_without_the_label():
    selector = {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["web"]}]}
    assert selector_matches(selector, {})
    assert not selector_matches(selector, {"tier": "web"})


def test_selector_string_is_the_api_spelling_sorted_by_key():
    selector = {"matchLabels": {"job": "a"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]},
                                     {"key": "debug", "operator": "DoesNotExist"}]}
    assert selector_string(selector) == "!debug,job=a,tier in (a,b)"
    assert peer_key("ml", selector) == "ml|!debug,job=a,tier in (a,b)"


# -- domains ---------------------------------------------------------------------------------------

def test_zones_are_those_where_a_type_that_fits_the_pod_is_offered():
    big = pod("p-0", gpus=8)
    f = facts([big], zones={"g5.12xlarge": ("us-east-1a", "us-east-1b", "us-east-1c"),
                            "g5.48xlarge": ("us-east-1b",), "p4d.24xlarge": ("us-east-1c",)})
    domains = launchable_domains(ZONE, pod=big, nodepool=f.nodepools["gpu"], facts=f)
    assert domains.values == {"us-east-1b", "us-east-1c"}  # g5.12xlarge (4 GPUs) does not fit 8
    assert domains.verified


def test_nodepool_zone_requirement_narrows_the_offered_zones():
    pool = nodepool(requirements=[{"key": ZONE, "operator": "In", "values": ["us-east-1a"]}])
    p = pod("p-0")
    f = facts([p], nodepools=[pool])
    assert launchable_domains(ZONE, pod=p, nodepool=pool, facts=f).values == {"us-east-1a"}


def test_without_ec2_only_an_explicit_zone_requirement_gives_domains():
    p = pod("p-0")
    assert launchable_domains(ZONE, pod=p, nodepool=nodepool(), facts=facts([p], ec2=False)).values is None
    pool = nodepool(requirements=[{"key": ZONE, "operator": "In", "values": ["us-east-1a", "us-east-1b"]}])
    domains = launchable_domains(ZONE, pod=p, nodepool=pool, facts=facts([p], nodepools=[pool], ec2=False))
    assert domains.values == {"us-east-1a", "us-east-1b"} and not domains.verified


def test_hostname_domains_are_unbounded():
    p = pod("p-0")
    f = facts([p])
    assert launchable_domains("kubernetes.io/hostname", pod=p, nodepool=f.nodepools["gpu"], facts=f).unbounded


# -- topology spread -------------------------------------------------------------------------------

def _placed(zones_pods: dict[str, int]) -> tuple[list, list]:
    pods, nodes = [], []
    for zone, count in zones_pods.items():
        nodes.append(node(f"n-{zone}", zone))
        pods += [pod(f"r-{zone}-{i}", labels=APP, node=f"n-{zone}") for i in range(count)]
    return pods, nodes


def test_spread_blocked_when_the_emptiest_zone_cannot_be_launched_in():
    placed, nodes = _placed({"us-east-1a": 2, "us-east-1b": 2})
    pending = pod("r-new", labels=APP, topologySpreadConstraints=[_spread()])
    pool = nodepool(requirements=[{"key": ZONE, "operator": "In", "values": ["us-east-1a", "us-east-1b"]}])
    f = facts([pending, *placed], nodes=[*nodes, node("n-c", "us-east-1c", nodepool="general")], nodepools=[pool])
    # n-c matches no nodeSelector of the pod (nodeAffinityPolicy Honor): zone c is not a domain of the pod
    check = check_spread(_spread(), pod=pending, facts=f,
                         launchable=launchable_domains(ZONE, pod=pending, nodepool=pool, facts=f))
    assert check is not None and not check.blocked  # a/b both at 2: 2 + 1 - 2 <= 1

    placed, nodes = _placed({"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 0})
    f = facts([pending, *placed], nodes=nodes, nodepools=[pool])
    check = check_spread(_spread(), pod=pending, facts=f,
                         launchable=launchable_domains(ZONE, pod=pending, nodepool=pool, facts=f))
    assert check.counts == {"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 0}
    assert check.global_min == 0 and check.blocked  # 2 + 1 - 0 > 1 in a and b; c cannot be launched in


def test_spread_places_the_pod_in_the_emptiest_zone_it_can_launch_in():
    placed, nodes = _placed({"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 0})
    pending = pod("r-new", labels=APP)
    f = facts([pending, *placed], nodes=nodes)
    check = check_spread(_spread(), pod=pending, facts=f,
                         launchable=launchable_domains(ZONE, pod=pending, nodepool=f.nodepools["gpu"], facts=f))
    assert check.placeable == ["us-east-1c"]


def test_schedule_anyway_never_blocks():
    pending = pod("r-new", labels=APP)
    f = facts([pending])
    domains = launchable_domains(ZONE, pod=pending, nodepool=f.nodepools["gpu"], facts=f)
    assert check_spread(_spread(whenUnsatisfiable="ScheduleAnyway"), pod=pending, facts=f, launchable=domains) is None


def test_min_domains_counts_the_global_minimum_as_zero_below_it():
    placed, nodes = _placed({"us-east-1a": 1})
    pending = pod("r-new", labels=APP)
    pool = nodepool(requirements=[{"key": ZONE, "operator": "In", "values": ["us-east-1a"]}])
    f = facts([pending, *placed], nodes=nodes, nodepools=[pool])
    domains = launchable_domains(ZONE, pod=pending, nodepool=pool, facts=f)
    assert not check_spread(_spread(), pod=pending, facts=f, launchable=domains).blocked  # 1 + 1 - 1 <= 1
    check = check_spread(_spread(minDomains=3), pod=pending, facts=f, launchable=domains)
    assert check.global_min == 0 and check.blocked  # 1 domain < minDomains 3: 1 + 1 - 0 > 1


def test_pods_on_nodes_outside_the_pods_node_affinity_do_not_count():
    pending = pod("r-new", labels=APP)
    other = node("n-cpu", "us-east-1a", nodepool="general")
    placed = [pod(f"r-{i}", labels=APP, node="n-cpu") for i in range(3)]
    f = facts([pending, *placed], nodes=[other])
    domains = launchable_domains(ZONE, pod=pending, nodepool=f.nodepools["gpu"], facts=f)
    assert check_spread(_spread(), pod=pending, facts=f, launchable=domains).counts == {
        "us-east-1a": 0, "us-east-1b": 0, "us-east-1c": 0}
    assert check_spread(_spread(nodeAffinityPolicy="Ignore"), pod=pending, facts=f, launchable=domains).counts[
        "us-east-1a"] == 3


def test_hostname_spread_never_blocks_a_new_node_is_a_new_domain():
    pending = pod("r-new", labels=APP)
    f = facts([pending])
    domains = launchable_domains("kubernetes.io/hostname", pod=pending, nodepool=f.nodepools["gpu"], facts=f)
    assert check_spread(_spread(topologyKey="kubernetes.io/hostname"), pod=pending, facts=f, launchable=domains) is None


def test_peer_pods_gathered_for_the_selector_are_counted():
    pending = pod("r-new", labels=APP)
    peer = pod("other-0", labels=APP, node="n-a").pod
    f = facts([pending], nodes=[node("n-a", "us-east-1a")], peers={peer_key("train", {"matchLabels": APP}): [peer]})
    domains = launchable_domains(ZONE, pod=pending, nodepool=f.nodepools["gpu"], facts=f)
    assert check_spread(_spread(), pod=pending, facts=f, launchable=domains).counts["us-east-1a"] == 1


# -- one-node groups -------------------------------------------------------------------------------

def test_four_one_gpu_pods_fit_one_g5_12xlarge():
    group = [pod(f"w-{i}", gpus=1) for i in range(4)]
    fit = group_fits_one_node(group, nodepools=[nodepool()], facts=facts(group))
    assert fit.fits and fit.verified and fit.totals[GPU] == 4


def test_four_eight_gpu_pods_fit_no_instance_type():
    group = [pod(f"w-{i}", gpus=8) for i in range(4)]
    fit = group_fits_one_node(group, nodepools=[nodepool()], facts=facts(group, types=[G5_12XL, G5_48XL, P4D]))
    assert not fit.fits and fit.totals[GPU] == 32
    assert max(c[GPU] for c in fit.largest.values()) == 8


def test_without_ec2_only_more_than_eight_gpus_is_known_not_to_fit():
    small = [pod(f"w-{i}", gpus=2) for i in range(4)]
    assert group_fits_one_node(small, nodepools=[nodepool()], facts=facts(small, ec2=False)).fits
    big = [pod(f"w-{i}", gpus=4) for i in range(4)]
    fit = group_fits_one_node(big, nodepools=[nodepool()], facts=facts(big, ec2=False))
    assert not fit.fits and not fit.verified


# -- volumes ---------------------------------------------------------------------------------------

def _claim(name: str, volume: str | None) -> dict:
    return {"metadata": {"name": name, "namespace": "train"}, "spec": {"volumeName": volume} if volume else {}}


def test_bound_volume_zone_comes_from_the_pv_node_affinity():
    p = pod("p-0", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    f = facts([p])
    f.volumes = {"pvc/train/data": _claim("data", "pv-1"), "pv/pv-1": {"metadata": {"name": "pv-1"}, "spec": {
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": ["us-east-1d"]}]}]}}}}}
    [found] = volume_zones(p, f)
    assert found.zones == {"us-east-1d"} and found.volume == "pv/pv-1"


def test_unbound_wait_for_first_consumer_claim_has_no_zone():
    p = pod("p-0", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    f = facts([p])
    f.volumes = {"pvc/train/data": _claim("data", None)}
    assert volume_zones(p, f) == []


# -- every NodePool the pod can use ----------------------------------------------------------------

def _pool(name: str, zone: str, *, taint: str | None = None) -> dict:
    np = nodepool(name, requirements=[{"key": ZONE, "operator": "In", "values": [zone]},
                                      {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["g"]}])
    if taint:
        np["spec"]["template"]["spec"]["taints"] = [{"key": taint, "value": "true", "effect": "NoSchedule"}]
    return np


def _two_pools(*, second_taint: str, event_names: str = "gpu-a"):
    # one matching pod in us-east-1a; a node in us-east-1b holds none, so the global minimum is 0 and
    # us-east-1a (2 - 0 > 1) is closed: only a NodePool that launches in us-east-1b can serve the pod
    running = pod("r-0", labels=APP, node="n-a", nodeSelector={})
    event = failed(f'incompatible with nodepool "{event_names}", unsatisfiable topology constraint', "karpenter")
    pending = pod("r-1", labels=APP, nodeSelector={}, topologySpreadConstraints=[_spread()],
                  tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}], events=[event])
    pools = [_pool("gpu-a", "us-east-1a"), _pool("gpu-b", "us-east-1b", taint=second_taint)]
    f = facts([running, pending], nodes=[node("n-a", "us-east-1a", nodepool="gpu-a"),
                                         node("n-b", "us-east-1b", nodepool="gpu-b")], nodepools=pools)
    return pending, f


def test_spread_domains_come_from_every_nodepool_the_pod_tolerates_not_the_one_an_event_named():
    pending, f = _two_pools(second_taint="nvidia.com/gpu")
    assert usable_nodepools(pending, f) == ["gpu-a", "gpu-b"]
    domains, names = pod_launchable_domains(ZONE, pod=pending, facts=f)
    assert domains.values == {"us-east-1a", "us-east-1b"} and names == ["gpu-a", "gpu-b"]
    check = check_spread(_spread(), pod=pending, facts=f, launchable=domains)
    assert check.placeable == ["us-east-1b"] and check.counts == {"us-east-1a": 1, "us-east-1b": 0}
    assert not [x for x in analyzer.analyze(f) if x.code == "scheduling.topology_spread"]


def test_a_nodepool_whose_taint_the_pod_does_not_tolerate_adds_no_launchable_domain():
    pending, f = _two_pools(second_taint="dedicated")
    assert usable_nodepools(pending, f) == ["gpu-a"]
    domains, _ = pod_launchable_domains(ZONE, pod=pending, facts=f)
    assert domains.values == {"us-east-1a"}
    found = [x for x in analyzer.analyze(f) if x.code == "scheduling.topology_spread"]
    assert len(found) == 1 and "us-east-1b" in found[0].detail


def test_a_nodepool_the_pod_selects_away_adds_no_launchable_domain():
    pending, f = _two_pools(second_taint="nvidia.com/gpu")
    pending.pod["spec"]["nodeSelector"] = {"karpenter.sh/nodepool": "gpu-a"}
    assert usable_nodepools(pending, f) == ["gpu-a"]
