"""Every finding code is reachable live (issue 12, "Done when"): the real line for each code
(tests/playbooks/lines.py LINES) is put where a cluster carries it, in one simulated cluster with one
namespace per code, and `gpubot diagnose --json` over HTTP must report that code above info.

A code not reached while its signal is in the cluster is the failure this product must not have: an
answer of "no problem" while the cluster states one.
"""
from __future__ import annotations

import json
from functools import partial

import pytest
import yaml

from playbooks.codes import CODES
from tests.conftest import point_cli_at
from tests.e2e import live_signals as live
from tests.e2e import live_nodeclass
from tests.e2e.live_signals import line_for

# code -> how the cluster shows it (a function of code and line) and which LINES line (index) it uses
PLACEMENTS = {
    # a Pending pod's events: kube-scheduler (default-scheduler) and Karpenter FailedScheduling
    "scheduling.node_selector_mismatch": (live.pending_pod_event, 0),
    "scheduling.untolerated_taint": (live.pending_pod_event, 0),
    # the line is the training-operator's copy on the PyTorchJob; the pod's own event is the scheduler's text
    "scheduling.node_lifecycle_taint": (lambda code, line: live.pending_pod_event(
        code, line.split("condition message: ", 1)[1]), 0),
    "scheduling.insufficient_gpu": (live.pending_pod_event, 0),
    "scheduling.pod_affinity_unsatisfiable": (live.pending_pod_event, 0),
    "scheduling.volume_zone_conflict": (live.pending_pod_event, 0),
    "scheduling.topology_spread": (live.pending_pod_event, 0),
    "efa.resource_unavailable": (live.pending_pod_event, 0),
    "karpenter.no_instance_type": (live.pending_pod_event, 1),
    "karpenter.nodepool_limit_reached": (live.pending_pod_event, 3),
    "karpenter.offering_unavailable_in_zone": (live.pending_pod_event, 2),
    # spec.schedulingGates and the PodScheduled condition the scheduler sets for them
    "scheduling.gated": (live.gated_pod, 0),
    # Karpenter's Nominated event on a Pending pod, for a NodeClaim being launched
    "karpenter.provisioning": (live.nominated_launching, 0),
    # the Karpenter leader's log about the NodeClaim nominated for the pod
    "karpenter.insufficient_capacity": (live.launch_failure, 0),
    "karpenter.quota_exceeded": (live.launch_failure, 0),
    "karpenter.subnet_problem": (live.launch_failure, 0),
    # NodeClaim conditions
    "karpenter.node_registration_failed": (live.claim_condition, 0),
    # kubelet's admission events on a rejected pod
    "karpenter.resource_not_registered": (live.failed_pod_event, 1),
    "gpu.unhealthy_device": (live.failed_pod_event, 0),
    # node events: node-controller, Karpenter disruption, node-problem-detector's kernel monitor
    "node.not_ready": (partial(live.node_event, node="ip-10-0-5-89.ap-northeast-2.compute.internal", ready={
        "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
        "message": "Kubelet stopped posting node status.", "lastHeartbeatTime": "-3m", "lastTransitionTime": "-2m"}), 1),
    "karpenter.disruption": (live.node_event, 0),
    "karpenter.interruption": (live.node_event, 0),
    "gpu.xid_error": (live.node_event, 0),
    # a GPU node advertising no GPUs, and its device plugin's log
    "gpu.device_plugin_missing": (live.gpu_node_without_gpus, 0),
    # kubelet's Pulled event on a pod that is still starting
    "image.slow_pull": (live.starting_pod_event, 0),
    # container logs of a training Job's pod: the running container, or the run before a crash
    "training.memory_pressure": (partial(live.training_log, crashed=False), 0),
    "training.cuda_oom": (partial(live.training_log, crashed=True), 0),
    "training.code_error": (partial(live.training_log, crashed=True), 0),
    "training.shm_exhausted": (partial(live.training_log, crashed=True), 0),
    "training.rendezvous_failed": (partial(live.training_log, crashed=True), 0),
    "training.terminated": (partial(live.training_log, crashed=True), 1),
    "nccl.invalid_usage": (partial(live.training_log, crashed=True), 0),
    "nccl.peer_unresponsive": (partial(live.training_log, crashed=True), 0),
    "nccl.timeout": (partial(live.training_log, crashed=True), 0),
    "efa.network_unreachable": (partial(live.training_log, crashed=True), 0),
    "training.gpu_not_visible": (partial(live.training_log, crashed=True), 0),
    "training.numerical": (partial(live.training_log, crashed=False), 0),
    "training.failed": (partial(live.training_log, crashed=True), 0),
    "nccl.network_config": (partial(live.training_log, crashed=True), 0),
    "storage.disk_full": (partial(live.training_log, crashed=True), 0),
    "training.crash_loop": (live.crash_loop_event, 0),
    # a Warning event no rule reads, on a pod still starting: the floor quotes it
    "cluster.unrecognised": (live.starting_pod_event, 1),
    # kubelet's Failed events on a pod whose container cannot start
    "image.pull_failed": (live.starting_pod_event, 0),
    "container.config_error": (live.starting_pod_event, 0),
    # the CSI provisioner's event on a Pending pod's claim; an EC2NodeClass condition of the pod's NodePool
    "storage.provisioning_failed": (live_nodeclass.claim_event, 0),
    "karpenter.nodeclass_not_ready": (live_nodeclass.nodeclass_condition, 0),
}

# Codes with no live signal in a cluster: why, one line each.
EXEMPT: dict[str, str] = {
    # Its evidence is the DCGM exporter's series in Prometheus, which the simulated cluster does not
    # serve: tests/playbooks/test_gpu_usage.py reaches it live against a real Prometheus instead.
    "gpu.idle": "read from Prometheus, not from the cluster",
}

# Codes whose own nature is info: the answer when nothing is wrong yet.
INFO_BY_NATURE = {"karpenter.provisioning", "scheduling.node_lifecycle_taint"}

SCENARIOS = {code: PLACEMENTS[code][0](code, line_for(code, PLACEMENTS[code][1])) for code in PLACEMENTS}


def test_every_code_has_a_live_placement_or_a_reason():
    assert set(PLACEMENTS) | set(EXEMPT) == set(CODES), set(CODES) ^ (set(PLACEMENTS) | set(EXEMPT))
    assert not set(PLACEMENTS) & set(EXEMPT)


@pytest.fixture(scope="module")
def live_sim(tmp_path_factory):
    from sim.serve import start_sim

    directory = tmp_path_factory.mktemp("live-scenarios")
    for scenario in SCENARIOS.values():
        (directory / f"{scenario.namespace}.yaml").write_text(yaml.safe_dump(scenario.document(), sort_keys=False))
    with start_sim(directory=directory, scenarios=sorted(s.namespace for s in SCENARIOS.values())) as sim:
        yield sim


@pytest.fixture
def live_env(live_sim, monkeypatch):
    return point_cli_at(live_sim, monkeypatch)


@pytest.mark.parametrize("code", sorted(PLACEMENTS))
def test_code_is_reached_live(code, live_env, cli):
    scenario = SCENARIOS[code]
    result = cli("diagnose", scenario.target, "-n", scenario.namespace, "--json")
    assert result.code == 0, result.err
    diagnosis = json.loads(result.out)
    found = {f["code"]: f for f in diagnosis["findings"]}
    assert code in found, (f"{code} not reported although {scenario.where} says it",
                           [(f["code"], f["severity"]) for f in diagnosis["findings"]], diagnosis["summary"])
    finding = found[code]
    assert finding["severity"] != "info" or code in INFO_BY_NATURE, (code, finding["severity"], finding["detail"])
    assert finding["evidence"], finding
