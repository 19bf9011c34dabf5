"""Folding the peers' failures under the rank that failed first (playbooks/consequences.py), on findings
the analyzers build from a job's pods, nodes and events (engine.analyze with the default registry).

A job of four ranks, one pod per node. Upstream: torchrun's agent stops every worker with SIGTERM when
one fails (torch/distributed/elastic/agent/server/api.py), and NCCL's survivors read "remote process
exited or there was a network error" when a peer's sockets close (src/transport/net_socket.cc).
"""
from __future__ import annotations

from playbooks.consequences import consequences, follow_causes
from playbooks.engine import analyze
from playbooks.facts import Facts, PodFacts
from playbooks.model import Diagnosis, Evidence, Finding, Target
from playbooks.registry import default_registry

NS = "rl-train"
JOB = "neox-20b"
XID79 = "NVRM: Xid (PCI:0000:97:00): 79, pid=1234, name=python3, GPU has fallen off the bus."
NCCL_LOST = ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
             "ProcessGroupNCCL.cpp:3699, remote process exited or there was a network error, NCCL version 2.27.3")
WATCHDOG = ("[rank1]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=131072000, NumelOut=131072000, "
            "Timeout(ms)=600000) ran for 600081 milliseconds before timing out.")
CUDA_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
            "44.53 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 43.46 GiB memory in use.")


def node(i: int) -> str:
    return f"ip-10-42-0-{i}.us-east-2.compute.internal"


def term(code: int, at: str, reason: str = "Error") -> dict:
    return {"exitCode": code, "reason": reason, "finishedAt": f"2026-03-02T04:{at}Z"}


def pod(i: int, *, ended: dict | None = None, log: str = "") -> PodFacts:
    state = {"terminated": ended} if ended else {"running": {"startedAt": "2026-03-02T01:00:00Z"}}
    return PodFacts(pod={
        "metadata": {"name": f"{JOB}-worker-{i}", "namespace": NS, "labels": {"training.kubeflow.org/job-name": JOB},
                     "ownerReferences": [{"kind": "PyTorchJob", "name": JOB, "apiVersion": "kubeflow.org/v1"}]},
        "spec": {"nodeName": node(i), "containers": [{"name": "trainer"}]},
        "status": {"phase": "Failed" if ended else "Running",
                   "containerStatuses": [{"name": "trainer", "restartCount": 0, "state": state}]},
    }, logs={("trainer", False): log} if log else {})


def job(pods: list[PodFacts], *, target: str | None = None, xid_on: int | None = None, xid_at: str = "00:00") -> Facts:
    facts = Facts(target=Target(kind="pod", name=target, namespace=NS) if target else
                  Target(kind="pytorchjob", name=JOB, namespace=NS), cluster="prod")
    facts.pods = sorted(pods, key=lambda p: p.name != target)  # the target pod first, as gather puts it
    for p in pods:
        facts.nodes[p.node_name] = {"metadata": {"name": p.node_name, "labels": {}}, "status": {}}
    if xid_on is not None:
        # the device plugin took the fallen GPU out of allocatable: the node's status bears the report out (one
        # event alone never makes a node critical, playbooks/speakers.py)
        facts.nodes[node(xid_on)]["status"] = {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "7"}}
        # a kernel monitor (node-problem-detector) writes the driver's line as a node event in "default"
        facts.node_events[node(xid_on)] = [{
            "metadata": {"name": f"{node(xid_on)}.1", "namespace": "default"},
            "involvedObject": {"kind": "Node", "name": node(xid_on)}, "reason": "NVRMXid", "message": XID79,
            "source": {"component": "kernel-monitor"}, "type": "Warning", "count": 1,
            "firstTimestamp": f"2026-03-02T04:{xid_at}Z", "lastTimestamp": f"2026-03-02T04:{xid_at}Z"}]
    return facts


def diagnose(facts: Facts) -> Diagnosis:
    return analyze(facts, registry=default_registry())


def table(d: Diagnosis) -> list[tuple[str, str, str | None]]:
    return [(f.code, f.severity, f.consequence_of) for f in d.findings]


def test_a_gpu_that_fell_off_the_bus_leads_and_the_peers_nccl_errors_and_sigterms_follow():
    pods = [pod(i, ended=term(143, "00:41"), log=NCCL_LOST) for i in (0, 1, 3)]
    pods.append(pod(2, ended=term(1, "00:01")))
    d = diagnose(job(pods, xid_on=2))
    lead, *rest = d.findings
    assert (lead.code, lead.severity) == ("gpu.xid_error", "critical") and node(2) in lead.title
    followed = {f.code for f in rest if f.consequence_of == "gpu.xid_error"}
    assert followed == {"nccl.peer_unresponsive", "training.terminated"}
    assert all(f.severity == "info" for f in rest if f.consequence_of)
    # the cluster's own words stay with what followed: the NCCL line and the SIGTERMed status
    quoted = [e.text for f in consequences(d.findings, lead) for e in f.evidence]
    assert any("remote process exited or there was a network error" in t for t in quoted)
    assert any('"exitCode": 143' in t for t in quoted)


def test_a_rank_oomkilled_leads_and_the_other_ranks_sigterms_follow_it_not_merged_into_it():
    pods = [pod(i, ended=term(143, "10:05"), log=NCCL_LOST) for i in (0, 1, 2)]
    pods.append(pod(3, ended=term(137, "10:03", reason="OOMKilled")))
    d = diagnose(job(pods))
    lead = d.findings[0]
    assert lead.code == "training.terminated" and lead.consequence_of is None
    assert "OOMKilled" in lead.title and lead.title.startswith(f"{JOB}-worker-3")
    after = consequences(d.findings, lead)
    assert {f.code for f in after} == {"training.terminated", "nccl.peer_unresponsive"}
    sigterms = next(f for f in after if f.code == "training.terminated")
    assert "exit code 143" in sigterms.title and not any("OOMKilled" in e.text for e in sigterms.evidence)


def test_a_peers_oom_kill_is_the_answer_for_the_rank_the_user_asked_about():
    target = f"{JOB}-worker-0"
    pods = [pod(0, ended=term(143, "10:05"), log=WATCHDOG), pod(1, ended=term(143, "10:05")),
            pod(3, ended=term(137, "10:03", reason="OOMKilled"))]
    d = diagnose(job(pods, target=target))
    lead = d.findings[0]
    # the peer's kill was a warning about the job; the target failed because of it, so it leads at its severity
    assert (lead.code, lead.severity) == ("training.terminated", "error") and "worker-3" in lead.title
    assert ("nccl.timeout", "info", "training.terminated") in table(d)


def test_a_cuda_oom_in_one_rank_folds_the_others_watchdog_timeouts():
    pods = [pod(0, ended=term(1, "20:00"), log=CUDA_OOM)]
    pods += [pod(i, ended=term(143, "30:01"), log=WATCHDOG) for i in (1, 2, 3)]
    d = diagnose(job(pods))
    assert d.findings[0].code == "training.cuda_oom" and d.findings[0].severity == "error"
    assert ("nccl.timeout", "info", "training.cuda_oom") in table(d)
    assert ("training.terminated", "info", "training.cuda_oom") in table(d)


def test_an_nccl_error_with_no_other_failure_stays_an_error():
    pods = [pod(i, ended=term(1, "10:05"), log=WATCHDOG) for i in range(4)]
    d = diagnose(job(pods))
    assert not [f for f in d.findings if f.consequence_of]
    assert d.findings[0].code == "nccl.timeout" and d.findings[0].severity == "error"


def test_ranks_that_failed_before_the_gpu_did_are_not_its_consequences():
    pods = [pod(i, ended=term(143, "00:10"), log=NCCL_LOST) for i in (0, 1, 3)]
    pods.append(pod(2))
    d = diagnose(job(pods, xid_on=2, xid_at="05:00"))  # the Xid came five minutes after the others had stopped
    assert not [f for f in d.findings if f.consequence_of], table(d)


def test_the_failed_ranks_own_nccl_error_is_not_folded_under_its_own_failure():
    pods = [pod(0, ended=term(137, "10:03", reason="OOMKilled"), log=NCCL_LOST)]
    d = diagnose(job(pods))
    assert any(f.code.startswith("nccl.") for f in d.findings), table(d)
    assert not [f for f in d.findings if f.code.startswith("nccl.") and f.consequence_of], table(d)


def test_an_uncorroborated_gpu_claim_is_no_cause():
    lead = Finding(code="gpu.xid_error", severity="warning", confidence="low", title="GPU Xid 79 on n reported by x",
                   detail="d.", evidence=[Evidence("event node/n NVRMXid (my-app)", XID79)])
    peer = Finding(code="nccl.timeout", severity="error", confidence="high", title="w-1: watchdog", detail="d.",
                   evidence=[Evidence(f"log pod/{NS}/w-1 container trainer", WATCHDOG)])
    assert [f.consequence_of for f in follow_causes([lead, peer])] == [None, None]


def test_a_follower_that_names_no_rank_is_not_folded():
    """Pasted without its pod, an NCCL error cannot be placed on another rank: it keeps its standing."""
    cause = Finding(code="training.cuda_oom", severity="error", confidence="high", title="w-0: CUDA out of memory",
                    detail="d.", evidence=[Evidence(f"log pod/{NS}/w-0 container trainer", CUDA_OOM)])
    loose = Finding(code="nccl.timeout", severity="error", confidence="high", title="watchdog", detail="d.",
                    evidence=[Evidence("karpenter controller log", WATCHDOG)])
    assert follow_causes([cause, loose]) == [cause, loose]


def test_a_not_ready_node_of_a_peer_is_a_node_lost():
    lost = Finding(code="node.not_ready", severity="warning", confidence="high",
                   title=f"Node {node(1)} is NotReady (NodeStatusUnknown)", detail="d.",
                   evidence=[Evidence(f"node/{node(1)} status.conditions[Ready]", "Kubelet stopped posting node status.")])
    mine = Finding(code="nccl.peer_unresponsive", severity="error", confidence="high", title="w-0: peer", detail="d.",
                   evidence=[Evidence(f"log pod/{NS}/w-0 container trainer", NCCL_LOST)])
    folded = follow_causes([mine, lost])
    assert [(f.code, f.severity, f.consequence_of) for f in folded] == [
        ("nccl.peer_unresponsive", "info", "node.not_ready"), ("node.not_ready", "error", None)]


def test_a_node_still_joining_is_no_cause():
    joining = Finding(code="node.not_ready", severity="info", confidence="high", title="Node n is NotReady", detail="d.")
    mine = Finding(code="nccl.timeout", severity="error", confidence="high", title="w-0: timeout", detail="d.",
                   evidence=[Evidence(f"log pod/{NS}/w-0 container trainer", WATCHDOG)])
    assert follow_causes([mine, joining]) == [mine, joining]


# -- pasted text (playbooks/explain.py): only the ranks the lines name tell peers apart --------------------

PASTED_OOM = f"[rank3]: {CUDA_OOM}\n"


def test_pasted_peers_nccl_error_follows_the_rank_that_ran_out_of_memory():
    from playbooks.explain import explain_text

    d = explain_text(PASTED_OOM + f"[rank1]: {NCCL_LOST}\n" + WATCHDOG + "\n")
    # rank 1's lost peer and rank 1's watchdog timeout (WATCHDOG names rank 1) both follow rank 3's OOM
    assert table(d) == [("training.cuda_oom", "error", None), ("nccl.peer_unresponsive", "info", "training.cuda_oom"),
                        ("nccl.timeout", "info", "training.cuda_oom")]
    assert any(NCCL_LOST in e.text for f in d.findings if f.consequence_of for e in f.evidence)


def test_pasted_nccl_error_of_the_same_rank_or_of_no_rank_keeps_its_standing():
    from playbooks.explain import explain_text

    same = explain_text(PASTED_OOM + f"[rank3]: {NCCL_LOST}\n")
    unnamed = explain_text(PASTED_OOM + NCCL_LOST + "\n")
    for d in (same, unnamed):
        assert ("nccl.peer_unresponsive", "error", None) in table(d), table(d)


# -- the failed rank's own symptoms and the other reporters of its GPU's fault ------------------------------

LAUNCH_FAILURE = "RuntimeError: CUDA error: unspecified launch failure"
ILLEGAL_ADDRESS = "RuntimeError: CUDA error: an illegal memory access was encountered"
DEVICE_ASSERT = "RuntimeError: CUDA error: device-side assert triggered"
XID13 = "NVRM: Xid (PCI:0000:97:00): 13, pid=1234, name=python3, Graphics Exception: ESR 0x405840=0x1000000"


def gpu_lost(*, log: str = LAUNCH_FAILURE, on: int = 2, failed_at: str = "00:01", xid_at: str = "00:00") -> Facts:
    """Rank 2's GPU fell off the bus; rank ``on`` logged ``log`` and exited 1; the others timed out."""
    pods = [pod(i, ended=term(143, "10:01"), log=WATCHDOG) for i in (0, 1, 3) if i != on]
    pods.append(pod(on, ended=term(1, failed_at), log=log))
    if on != 2:
        pods.append(pod(2, ended=term(1, failed_at)))
    return job(pods, xid_on=2, xid_at=xid_at)


def test_the_failed_ranks_cuda_error_on_the_lost_gpus_node_follows_the_xid():
    d = diagnose(gpu_lost())
    lead = d.findings[0]
    assert lead.code == "gpu.xid_error" and lead.consequence_of is None
    cuda = [f for f in d.findings if any(LAUNCH_FAILURE in e.text for e in f.evidence)]
    assert cuda and all((f.consequence_of, f.severity) == ("gpu.xid_error", "info") for f in cuda), table(d)
    said = cuda[0]
    # told as the program losing its GPU, not as "a fault of the job's code, not of the GPU"
    assert f"{JOB}-worker-2" in said.title and "unspecified launch failure" in said.title
    assert "not of the GPU" not in said.title + said.detail and said.fix is None and not said.remediations
    assert said in consequences(d.findings, lead)
    # nothing else stands beside the cause as an error of its own
    assert [f.code for f in d.findings if f.consequence_of is None and f.severity in ("critical", "error")] == ["gpu.xid_error"]


def test_the_device_plugins_unhealthy_mark_joins_the_xids_evidence():
    facts = gpu_lost()
    facts.nodes[node(2)]["status"] = {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "7"}}
    facts_alone = job([pod(2)])  # no Xid: the mark is a finding of its own
    facts_alone.nodes[node(2)]["status"] = facts.nodes[node(2)]["status"]
    alone = diagnose(facts_alone)
    assert [f.code for f in alone.findings] == ["gpu.unhealthy_device"]
    d = diagnose(facts)
    assert "gpu.unhealthy_device" not in {f.code for f in d.findings}, table(d)
    lead = d.findings[0]
    quoted = [e.text for e in lead.evidence]
    assert any(XID79 in t for t in quoted) and any('"allocatable": {"nvidia.com/gpu": "7"}' in t for t in quoted)
    assert [r.kind for r in lead.remediations] == ["cordon-gpu-node"]


def test_a_cuda_error_under_an_unhealthy_mark_alone_follows_the_mark():
    facts = gpu_lost(log=ILLEGAL_ADDRESS)
    facts.node_events.clear()  # no Xid read: the device plugin's mark is the one report of the fault
    facts.nodes[node(2)]["status"] = {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "7"}}
    d = diagnose(facts)
    assert d.findings[0].code == "gpu.unhealthy_device", table(d)
    assert any(f.consequence_of == "gpu.unhealthy_device" and any(ILLEGAL_ADDRESS in e.text for e in f.evidence)
               for f in d.findings), table(d)


def test_a_cuda_error_on_a_node_whose_gpu_did_not_fail_keeps_its_standing():
    d = diagnose(gpu_lost(on=1))  # the launch failure is rank 1's, on node 1; the Xid is node 2's
    cuda = [f for f in d.findings if any(LAUNCH_FAILURE in e.text for e in f.evidence)]
    assert cuda and all(f.consequence_of is None and f.severity == "error" for f in cuda), table(d)


def test_a_cuda_error_before_the_gpu_failed_keeps_its_standing():
    d = diagnose(gpu_lost(failed_at="00:01", xid_at="05:00"))
    cuda = [f for f in d.findings if any(LAUNCH_FAILURE in e.text for e in f.evidence)]
    assert cuda and all(f.consequence_of is None for f in cuda), table(d)


def test_a_device_side_assert_on_the_failed_node_is_the_jobs_code_whatever_the_gpu():
    d = diagnose(gpu_lost(log=DEVICE_ASSERT))
    asserts = [f for f in d.findings if any(DEVICE_ASSERT in e.text for e in f.evidence)]
    assert asserts and all(f.consequence_of is None and f.code == "training.code_error" for f in asserts), table(d)


def test_an_application_xid_is_never_a_fault_to_fold_under():
    facts = gpu_lost(log=ILLEGAL_ADDRESS)
    for event in facts.node_events[node(2)]:
        event["message"] = XID13  # the job's own illegal access, reported by the driver
    d = diagnose(facts)
    assert not [f for f in d.findings if f.consequence_of and f.code.startswith("training.code")], table(d)
    assert "gpu.xid_error" not in {f.code for f in d.findings if f.consequence_of is None and f.severity != "info"}


def test_a_hardware_xid_and_an_application_xid_are_told_apart_by_number():
    from playbooks.consequences import FAULT_XIDS

    assert {48, 63, 64, 74, 79, 94, 95} <= FAULT_XIDS
    assert not {13, 31, 43, 45, 68, 109, 92} & FAULT_XIDS
