"""Findings that follow from another one: when one rank of a distributed job fails, the other ranks'
NCCL errors, timeouts and SIGTERMs are what losing a peer looks like, not causes of their own. They stay
in the diagnosis (the evidence is real) as info, each marked with the cause it follows
(``Finding.consequence_of``), so the cause comes first and renderers fold them under it.

Why the peers fail, upstream:

- NCCL: a rank whose process or node is gone closes its sockets / queue pairs; the survivors' next
  collective fails with ``remote process exited or there was a network error`` / ``Connection closed by
  remote peer`` (NVIDIA/nccl src/transport/net_socket.cc, net_ib.cc, src/proxy.cc), or hangs until the
  ProcessGroupNCCL watchdog times it out (nccl.timeout).
- torchrun: when one worker fails the elastic agent stops all the others with SIGTERM
  (pytorch/pytorch torch/distributed/elastic/agent/server/api.py ``_restart_workers`` /
  ``_stop_workers``; multiprocessing/api.py ``_close``: "Sending process %s closing signal SIGTERM"), and
  the job controller deletes the remaining pods (exit code 143).

So a rank that failed for a reason of its own (its node taken by EC2 or Karpenter or gone NotReady, its
GPU fallen off the bus or out of ECC, its container OOM-killed, CUDA out of memory) is the cause, and the
other ranks' NCCL errors and SIGTERMs follow it. A follower must be on another pod than the cause (a
SIGTERM may be the same pod's: torchrun stops the failed worker's siblings in the same container too),
and must not have failed before the cause where both times are known. Any other error (a code error, an
NCCL misconfiguration) keeps its own standing: only the followers' codes fold.

The failed rank's own symptoms fold too, when its node's GPU failed: NVIDIA's Xid catalogue
(docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html) has Xid 79 "GPU has fallen off the bus",
the driver no longer reaching the device, and uncorrectable ECC (48, 94, 95) ending the work on it; every
CUDA call of the program on that GPU then fails ("unspecified launch failure", "an illegal memory access",
"uncorrectable ECC error encountered", "GPU is lost", NCCL's "Cuda failure"). So a CUDA error logged by a
pod on that node, at or after the fault, is what losing the GPU looks like to the program, not a fault of
its code; and the device plugin's unhealthy mark or the node monitoring agent's condition about the same
node are the same fault seen by other reporters: their quotes join the cause's evidence. An application
Xid (13, 31, 43, 45, 68, 109: NVIDIA's RESTART_APP class, kind "application" in xid.json) is never such a
fault, and a CUDA error on a node with no hardware fault keeps its own standing.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from playbooks import linear
from playbooks.analyzers.evidence import event_time, parse_time
from playbooks.codes import precedence
from playbooks.facts import Facts
from playbooks.failures.tables import xid_entry
from playbooks.model import CONFIDENCES, SEVERITIES, Finding
from playbooks.signatures.gpu import HARDWARE_XIDS
from playbooks.signatures.nccl import SETUP_CUDA_FAILURES

# Codes that take a node of the job away, strongest first.
NODE_LOSS = ("karpenter.interruption", "karpenter.disruption", "node.not_ready")
# A GPU of the node failed under the rank (Xid 79 fallen off the bus, uncorrectable ECC, unhealthy device).
HARDWARE = ("gpu.xid_error", "gpu.unhealthy_device")
# The rank ran out of memory: its container OOM-killed by the kernel, or CUDA out of memory.
OUT_OF_MEMORY = ("training.terminated", "training.cuda_oom")
# Every code that can be a cause here, strongest first.
CAUSES = (*NODE_LOSS, *HARDWARE, *OUT_OF_MEMORY)
# What the surviving ranks report when a peer goes (torch.distributed: the NCCL watchdog times out,
# OFI / NCCL lose the peer, torchrun's agent sends SIGTERM); after a lost node, the rendezvous cannot
# re-form either.
PEER_ERRORS = frozenset({"nccl.peer_unresponsive", "nccl.timeout", "training.terminated"})
FOLLOWERS = PEER_ERRORS | {"training.rendezvous_failed"}
# A node-loss cause that hit the target itself (critical) or one of its peers (error): either way the
# rank the user asked about failed because a node was taken, and its own NCCL error only repeats that.
# A warning karpenter.disruption is the NodePool's policy, not a node taken.
SERIOUS = ("critical", "error")
# kubelet reports finishedAt to the second, and the survivors notice within the same second when the
# peer's sockets close: a follower up to this much earlier than its cause is concurrent with it.
CONCURRENT = timedelta(seconds=2)
SIGTERM_EXIT = 143

# Hardware Xids that take the GPU from under the program (xid.json kind "hardware": 48, 63, 64, 74, 79, 94,
# 95, 140, 143), less those NVIDIA asks nothing for (92: a high rate of corrected single-bit errors).
FAULT_XIDS = frozenset(x for x in HARDWARE_XIDS if (entry := xid_entry(x)) is not None and entry.action != "none")
# The Xid a finding names: "GPU Xid 79 reported", NVRM's "Xid (PCI:0000:a0:1c): 79", the EKS node
# monitoring agent's "XID-79" / NvidiaXID79Error.
_XID = linear.compile(r"\bXID[ -]?(?:\([^)]{0,40}\):? ?)?(?P<xid>\d{1,4})(?:\D|$)", re.IGNORECASE)
# What a program's CUDA calls return once its GPU is gone or its memory failed (CUDA runtime API
# cudaError_t / driver API CUresult, cudaGetErrorString's wording; NVML's "GPU is lost"). Device-side
# asserts, misaligned addresses and illegal instructions are the job's own code and are not here.
GPU_LOSS_ERRORS = (
    "unspecified launch failure", "CUDA_ERROR_LAUNCH_FAILED", "cudaErrorLaunchFailure",
    "an illegal memory access was encountered", "CUDA_ERROR_ILLEGAL_ADDRESS", "cudaErrorIllegalAddress",
    "uncorrectable ECC error encountered", "CUDA_ERROR_ECC_UNCORRECTABLE", "cudaErrorECCUncorrectable",
    "uncorrectable NVLink error", "CUDA_ERROR_NVLINK_UNCORRECTABLE", "cudaErrorNvlinkUncorrectable",
    "busy or unavailable", "cudaErrorDevicesUnavailable", "hardware stack error",
    "GPU is lost", "ERROR_GPU_IS_LOST", "fallen off the bus",
)
# NVIDIA/nccl src/include/checks.h: "Cuda failure '<cudaGetErrorString>'" (2.19+: "Cuda failure <n> '<msg>'").
_NCCL_CUDA = linear.compile(r"Cuda failure (?:\d{1,4} )?'(?P<message>[^']{1,120})'")
# The codes a CUDA error of the program is filed under (the runtime's table: code error, GPU not visible,
# a GPU fault; NCCL's CUDA check; the generic failure and the crash loop that quote the same line).
CUDA_ERROR_CODES = ("training.code_error", "training.gpu_not_visible", "training.failed", "training.crash_loop",
                    "nccl.invalid_usage", "gpu.unhealthy_device")

_POD = linear.compile(r"(?:^|\s)pod/[^/\s]+/(?P<name>[^\s]+)")
_NODE = linear.compile(r"(?:^|\s)node/(?P<name>[^\s]+)")


@dataclass(frozen=True)
class Cause:
    finding: Finding
    pods: frozenset[str]  # the pods it happened to (empty: not known)
    when: datetime | None  # when it happened (None: not known)
    node_loss: bool = False


def follow_causes(findings: list[Finding], *, facts: Facts | None = None) -> list[Finding]:
    """Mark the findings that follow from the strongest cause; ``facts`` (the job's pods, nodes and
    events) say where and when each happened. The cause takes the strongest severity of what follows
    from it: a peer's OOM kill is the answer for the rank whose NCCL error the user asked about."""
    findings = fold_gpu_faults(findings, facts=facts)
    for kind in (NODE_LOSS, HARDWARE, OUT_OF_MEMORY):
        found = [(cause, followers) for cause in _causes(findings, facts, kind)
                 if (followers := [f for f in findings if f is not cause.finding and _follows(f, cause, facts)])]
        if not found:
            continue
        # Two findings of a kind about one fault (the Xid and the GPU the device plugin marked unhealthy):
        # the peers' errors fold under the one the engine will put first, so that the lead shows them.
        cause, followers, severity = min(
            ((c, fs, _strongest(c.finding, fs)) for c, fs in found),
            key=lambda item: (SEVERITIES.index(item[2]), item[0].finding.confidence_rank, precedence(item[0].finding.code)))
        out = []
        for f in findings:
            if f is cause.finding:
                out.append(replace(f, severity=severity) if severity != f.severity else f)
            elif any(f is g for g in followers):
                out.append(replace(f, severity="info", consequence_of=cause.finding.code))
            else:
                out.append(f)
        return out
    return findings


def consequences(findings: list[Finding], cause: Finding) -> list[Finding]:
    """The findings marked as following from ``cause``, in their order."""
    return [f for f in findings if f.consequence_of == cause.code and f is not cause]


# -- a GPU that failed under the program ------------------------------------------------------------

def fold_gpu_faults(findings: list[Finding], *, facts: Facts | None = None) -> list[Finding]:
    """Per node whose GPU failed: the other reports of that fault (the device plugin's unhealthy mark, the
    node monitoring agent's condition) join the cause's evidence, and the CUDA errors of the pods on the
    node, at or after the fault, follow it (``consequence_of``)."""
    leads: dict[str, Finding] = {}
    for f in sorted((f for f in findings if _gpu_fault(f)), key=_lead_order):
        node = _node_of(f, facts)
        if node:
            leads.setdefault(node, f)
    if not leads:
        return findings
    joined: dict[int, list[Finding]] = {id(lead): [] for lead in leads.values()}
    followers: dict[int, Finding] = {}
    for f in findings:
        if f.consequence_of is not None or any(f is lead for lead in leads.values()):
            continue
        node = _node_of(f, facts) if f.code in HARDWARE and not _logged(f) else None
        if node in leads and _xid_of(f) in (None, *FAULT_XIDS):
            joined[id(leads[node])].append(f)
        elif (lead := _lost_gpu_of(f, leads, facts)) is not None:
            followers[id(f)] = lead
    out = []
    for f in findings:
        if id(f) in joined:
            out.append(_join(f, joined[id(f)]))
        elif id(f) in followers:
            out.append(_what_the_program_saw(f, followers[id(f)]))
        elif not any(f is other for others in joined.values() for other in others):
            out.append(f)
    return out


def _gpu_fault(f: Finding) -> bool:
    """A corroborated report that a GPU of a node failed in hardware, never an application Xid."""
    if f.code not in HARDWARE or f.consequence_of is not None or f.severity not in SERIOUS or f.confidence == "low":
        return False
    if _logged(f):
        return False  # a pod's own log is the program's view, not the node's
    xid = _xid_of(f)
    if xid is not None:
        return xid in FAULT_XIDS
    return f.code == "gpu.unhealthy_device" or f.severity == "critical"  # the agent's double-bit ECC names no Xid


def _lead_order(f: Finding) -> tuple:
    # the Xid names the fault; the unhealthy mark is its consequence in the device plugin
    return (f.code != "gpu.xid_error", f.severity_rank, f.confidence_rank)


def _xid_of(f: Finding) -> int | None:
    for text in (f.title, *(e.text for e in f.evidence)):
        if m := _XID.search(text):
            return int(m.group("xid"))
    return None


def _logged(f: Finding) -> bool:
    return bool(f.evidence) and all(e.source.startswith("log ") for e in f.evidence)


def _gpu_loss_line(f: Finding) -> str | None:
    """The CUDA error a pod logged that losing its GPU produces, if the finding quotes one."""
    for e in f.evidence:
        if not e.source.startswith("log "):
            continue
        nccl = _NCCL_CUDA.search(e.text)
        if nccl and nccl.group("message") not in SETUP_CUDA_FAILURES and "out of memory" not in nccl.group("message"):
            return e.text.strip()
        if any(marker in e.text for marker in GPU_LOSS_ERRORS):
            return e.text.strip()
    return None


def _lost_gpu_of(f: Finding, leads: dict[str, Finding], facts: Facts | None) -> Finding | None:
    """The fault ``f`` is the program's view of: a CUDA error logged only by pods on that fault's node,
    not before it where both times are known."""
    if f.code not in CUDA_ERROR_CODES or facts is None or _gpu_loss_line(f) is None:
        return None
    xid = _xid_of(f)
    if xid is not None and xid not in FAULT_XIDS:
        return None  # the job's own Xid (13, 31, 43, ...): a fault of its code, whatever the node
    pods = frozenset(m.group("name") for e in f.evidence if e.source.startswith("log ") and (m := _POD.search(e.source)))
    nodes = {p.node_name for p in facts.pods if p.name in pods}
    if not pods or len(nodes) != 1 or (node := next(iter(nodes))) not in leads:
        return None
    lead = leads[node]
    fault_at, failed_at = _hardware_time(lead, facts), _failed_at(pods, facts)
    if fault_at is not None and failed_at is not None and failed_at < fault_at - CONCURRENT:
        return None  # it failed before the GPU did
    return lead


def _join(lead: Finding, others: list[Finding]) -> Finding:
    """The cause with the other reporters' quotes, cordon and severity; its own wording stays, and its fix
    is its code's (an unhealthy mark's "restart the device plugin" is no advice after Xid 79)."""
    if not others:
        return lead
    evidence = list(lead.evidence)
    for e in (e for other in others for e in other.evidence):
        if all(e.text != kept.text for kept in evidence):
            evidence.append(e)
    remediations = list(lead.remediations)
    for rem in (r for other in others for r in other.remediations):
        if rem not in remediations:
            remediations.append(rem)
    labels = {**{k: v for other in others for k, v in other.labels.items()}, **lead.labels}
    return replace(lead, evidence=evidence, remediations=remediations, labels=labels,
                   severity=min((lead.severity, *(o.severity for o in others)), key=SEVERITIES.index),
                   confidence=min((lead.confidence, *(o.confidence for o in others)), key=CONFIDENCES.index),
                   fix=lead.fix or next((o.fix for o in others if o.fix and o.code == lead.code), None))


def _what_the_program_saw(f: Finding, cause: Finding) -> Finding:
    """A CUDA error told as what it is here: the program losing its GPU. The analyzer's reading (a fault of
    the job's code, rerun with CUDA_LAUNCH_BLOCKING) would send the reader the wrong way, so its advice goes;
    the quotes stay."""
    pods = sorted({m.group("name") for e in f.evidence if e.source.startswith("log ") and (m := _POD.search(e.source))})
    line = _gpu_loss_line(f) or f.title
    said = line.splitlines()[0][:160]
    return replace(
        f, severity="info", consequence_of=cause.code, fix=None, remediations=[],
        title=f"{', '.join(pods)}: {said} (its GPU had failed)",
        detail=(f"What the program saw when the GPU under it failed: once a GPU falls off the bus or its memory has "
                f"an uncorrectable error, every CUDA call on it fails (NVIDIA's Xid catalogue). Not a fault of the "
                f"job's code: the fix is the node's."),
    )


# -- causes -----------------------------------------------------------------------------------------

def _strongest(cause: Finding, followers: list[Finding]) -> str:
    return min((cause.severity, *(f.severity for f in followers)), key=SEVERITIES.index)


def _causes(findings: list[Finding], facts: Facts | None, codes: tuple[str, ...]):
    for code in codes:
        for f in findings:
            if f.code != code or f.consequence_of is not None:
                continue
            if code in ("karpenter.interruption", "karpenter.disruption"):
                if f.severity in SERIOUS:
                    yield Cause(f, frozenset(), None, node_loss=True)
            elif code == "node.not_ready":
                if f.severity != "info":  # info: a node still joining, not one lost
                    yield Cause(f, frozenset(), None, node_loss=True)
            elif code in HARDWARE:
                # an uncorroborated claim (capped to a warning of low confidence) is not a fault to fold under
                if f.severity in SERIOUS and f.confidence != "low":
                    pods = _pods_on(_node_of(f, facts), facts) or _pods(f)
                    yield Cause(f, pods, _hardware_time(f, facts))
            elif code == "training.terminated":
                if _oom_killed(f):
                    pods = _pods(f)
                    yield Cause(f, pods, _terminated_at(f) or _failed_at(pods, facts))
            elif code == "training.cuda_oom":
                pods = _pods(f)
                yield Cause(f, pods, _failed_at(pods, facts))


def _oom_killed(f: Finding) -> bool:
    return "OOMKilled" in f.title or any('"reason": "OOMKilled"' in e.text for e in f.evidence)


def _node_of(f: Finding, facts: Facts | None) -> str | None:
    for rem in f.remediations:
        if rem.kind == "cordon-gpu-node":
            return rem.params.get("node")
    named = [m.group("name") for e in f.evidence if (m := _NODE.search(e.source))]
    if named:
        return named[0]
    if facts is not None:
        return next((name for name in facts.nodes if name and name in f.title), None)
    return None


def _pods_on(node: str | None, facts: Facts | None) -> frozenset[str]:
    if not node or facts is None:
        return frozenset()
    return frozenset(p.name for p in facts.pods if p.node_name == node)


def _hardware_time(f: Finding, facts: Facts | None) -> datetime | None:
    """When the node's events first said what the finding quotes."""
    if facts is None:
        return None
    node = _node_of(f, facts)
    quoted = [e.text for e in f.evidence]
    times = [event_time(event) for event in facts.node_events.get(node or "", [])
             if (message := (event.get("message") or event.get("note") or "").strip())
             and any(message[:80] in text for text in quoted)]
    times = [t for t in times if t.year > 1]
    return min(times) if times else None


# -- followers --------------------------------------------------------------------------------------

def _follows(f: Finding, cause: Cause, facts: Facts | None) -> bool:
    if f.consequence_of is not None:
        return False
    if cause.node_loss:
        return f.code in FOLLOWERS
    if f.code not in PEER_ERRORS:
        return False
    sigterm = f.code == "training.terminated" and _sigterm(f)
    if f.code == "training.terminated" and not sigterm:
        return False  # a SIGKILL or another OOM kill: a failure of its own, not torchrun's SIGTERM
    pods = _pods(f)
    if not pods:
        return False  # nothing says which rank reported it: it may have a cause of its own
    if not sigterm and cause.pods & pods:
        return False  # the failed rank's own NCCL error: part of its failure, not a peer's
    if cause.when is not None:
        when = _terminated_at(f) if f.code == "training.terminated" else None
        when = when or _failed_at(pods, facts)
        if when is not None and when < cause.when - CONCURRENT:
            return False  # it failed before the cause: not because of it
    return True


def _sigterm(f: Finding) -> bool:
    if "SIGTERM" in f.title or f"exit code {SIGTERM_EXIT}" in f.title:
        return True
    return any(_termination(e.text).get("exitCode") == SIGTERM_EXIT for e in f.evidence)


def _pods(f: Finding) -> frozenset[str]:
    """The pods that reported the finding: those whose log said it, else those whose status or events did
    (an NCCL finding also quotes the dead peer's status; the log is the reporter's own)."""
    logs = {m.group("name") for e in f.evidence if e.source.startswith("log ") and (m := _POD.search(e.source))}
    if logs:
        return frozenset(logs)
    return frozenset(m.group("name") for e in f.evidence if (m := _POD.search(e.source)))


def _termination(text: str) -> dict:
    """The container's terminated state quoted as ``status.containerStatuses: {...}``."""
    _, _, value = text.partition("status.containerStatuses: ")
    try:
        parsed = json.loads(value) if value else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _terminated_at(f: Finding) -> datetime | None:
    times = [parse_time(_termination(e.text).get("finishedAt")) for e in f.evidence]
    times = [t for t in times if t is not None]
    return min(times) if times else None


def _failed_at(pods: frozenset[str], facts: Facts | None) -> datetime | None:
    """The earliest non-zero container exit among the pods, by kubelet's finishedAt."""
    if facts is None or not pods:
        return None
    times = [parse_time(term.get("finishedAt")) for pod in facts.pods if pod.name in pods
             for status in pod.container_statuses()
             for state in (status.get("state") or {}, status.get("lastState") or {})
             for term in [state.get("terminated") or {}] if term.get("exitCode") not in (None, 0)]
    times = [t for t in times if t is not None]
    return min(times) if times else None
