"""Training processes: DeepSpeed memory pressure, resolver errors, container exits, OOM kills, evictions.

CUDA OOM spellings live in cuda_oom.py, torchrun / c10d failures in elastic.py; the signal helpers here
are shared with elastic.py. A SIGKILL (torchrun exitcode -9, container exit 137) is the kernel OOM killer
(host memory) or an eviction / deletion that outlasted its grace period: medium confidence, since the
text alone cannot tell which.

Sources: kubernetes/kubernetes pkg/kubelet/eviction/helpers.go ``The node was low on resource: %v.``;
container ``Exit Code`` / ``Reason: OOMKilled`` as ``kubectl describe pod`` prints them (staging/src/
k8s.io/kubectl/pkg/describe/describe.go); DeepSpeed deepspeed/runtime/zero/stage3.py ``%d pytorch allocator
cache flushes since last step``; glibc getaddrinfo messages (``Name or service not known``).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures import storage
from playbooks.signatures.model import Rule, Verdict

SIGNALS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}


def signal_name(value: str) -> str:
    value = value.strip().removeprefix("Signals.")
    if value.lstrip("-").isdigit():
        return SIGNALS.get(abs(int(value)), f"signal {abs(int(value))}")
    return value


def by_signal(signal: str) -> Verdict | None:
    """SIGTERM/SIGKILL come from outside (kubelet, Karpenter, the OOM killer); SIGABRT/SIGSEGV are crashes."""
    if signal == "SIGTERM":
        return Verdict(fields={"signal": signal})
    if signal == "SIGKILL":
        return Verdict(
            confidence="medium",
            title="Training process killed by SIGKILL: the kernel OOM killer (host memory) or an eviction past its grace period",
            fields={"signal": signal},
        )
    if signal in ("SIGINT", "SIGHUP"):
        return Verdict(severity="warning", confidence="medium", title=f"Training process stopped by {signal} (interactive session closed or interrupted)", fields={"signal": signal})
    return None


def _exit_code(fields: dict[str, str], text: str) -> Verdict | None:
    code = int(fields.get("exit_code", "0"))
    if code <= 128 or code - 128 not in SIGNALS:
        return None  # 0, 1, 2 ...: the program's own exit, not a kill from outside
    return by_signal(SIGNALS[code - 128])


RULES: tuple[Rule, ...] = (
    Rule(
        name="deepspeed.cache_flushes",
        code="training.memory_pressure",
        severity="warning",
        confidence="high",
        title="DeepSpeed ZeRO-3:[ {flushes}] PyTorch allocator cache flush(es) since last step (GPU memory pressure)",
        keywords=("allocator cache flushes",),
        extract=(linear.compile(r"(?P<flushes>\d+) pytorch allocator cache flushes"),),
        fields_doc="flushes",
        example="[2025-12-31 17:08:24,236] [WARNING] [stage3.py:2236:step] 1 pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is detrimental to performance.",
    ),
    Rule(
        name="dns.name_resolution",
        code="training.rendezvous_failed",
        severity="warning",
        confidence="low",
        title="Name resolution failed ({problem}): MASTER_ADDR / Service DNS not resolvable",
        keywords=("Name or service not known", "Temporary failure in name resolution"),
        pattern=linear.compile(r"(?P<problem>Name or service not known|Temporary failure in name resolution)"),
        # pip / git / HTTP clients print the same resolver errors; those are not rendezvous failures.
        unless=("The client socket has failed", "DistNetworkError", "HTTPConnection", "HTTPSConnection", "new connection", "urllib3", "Could not resolve host", "pip"),
        fields_doc="problem",
        example="socket.gaierror: [Errno -2] Name or service not known",
    ),
    Rule(
        name="container.exit_code",
        code="training.terminated",
        severity="error",
        confidence="high",
        title="Container exited with code {exit_code} ({signal})",
        keywords=("Exit Code", "exit code", "exitCode", "exited with code"),
        pattern=linear.compile(r"(?:Exit Code|exit code|exitCode|exited with code)\"?[:=]?\s{0,20}(?P<exit_code>\d{1,3})\b"),
        refine=_exit_code,
        fields_doc="exit_code (143, 137, ...), signal",
        example="Normal  ExitedWithCode  3m10s  pytorchjob-controller  Pod: default.pytorch-dist-job-worker-0 exited with code 143",
    ),
    Rule(
        name="container.oomkilled",
        code="training.terminated",
        severity="error",
        confidence="high",
        title="Container OOMKilled by the kernel (host memory limit, not GPU memory)",
        keywords=("OOMKilled",),
        refine=lambda f, t: Verdict(fields={"reason": "OOMKilled", "signal": "SIGKILL"}),
        fields_doc="reason (OOMKilled), signal",
        example="      Reason:       OOMKilled",
    ),
    Rule(
        name="kubelet.eviction",
        code="training.terminated",
        severity="error",
        confidence="high",
        title="kubelet evicted the pod (node-pressure eviction[: low on {resource}])",
        keywords=("The node was low on resource",),
        extract=(linear.compile(r"low on resource: (?P<resource>[\w-]+(?:\.\w[\w-]*)*)"),),
        refine=storage.eviction,  # ephemeral-storage / inodes: storage.disk_full
        fields_doc="resource (memory, ephemeral-storage), reason (Evicted), container, usage, request, threshold, available",
        example="Warning  Evicted  2m  kubelet  The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 8Gi.",
    ),
)
