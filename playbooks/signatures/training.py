"""Training processes: PyTorch / DeepSpeed memory, torch.distributed rendezvous, external kills."""
from __future__ import annotations

import re

from playbooks.signatures.model import Rule, Verdict

_SIZE = r"[\d.]{1,12} [KMGTP]?i?B"
SIGNALS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}
_OTHER_PROCESS = re.compile(rf"Process (?P<pid>\d+) has (?P<mem>{_SIZE}) memory in use")


def signal_name(value: str) -> str:
    value = value.strip().removeprefix("Signals.")
    if value.lstrip("-").isdigit():
        return SIGNALS.get(abs(int(value)), f"signal {abs(int(value))}")
    return value


def _oom(fields: dict[str, str], text: str) -> Verdict:
    others = [f"{m.group('pid')}={m.group('mem')}" for m in _OTHER_PROCESS.finditer(text)]
    return Verdict(fields={"other_processes": "; ".join(others)} if others else {})


def _by_signal(signal: str) -> Verdict | None:
    """SIGTERM/SIGKILL come from outside (kubelet, Karpenter, the OOM killer); SIGABRT/SIGSEGV are crashes."""
    if signal == "SIGTERM":
        return Verdict(fields={"signal": signal})
    if signal == "SIGKILL":
        return Verdict(confidence="medium", title="Training process killed by SIGKILL (host OOM killer or grace period exceeded)", fields={"signal": signal})
    if signal in ("SIGINT", "SIGHUP"):
        return Verdict(severity="warning", confidence="medium", title=f"Training process stopped by {signal} (interactive session closed or interrupted)", fields={"signal": signal})
    return None


def _signalled(fields: dict[str, str], text: str) -> Verdict | None:
    raw = fields.get("signal") or fields.get("exit_code") or ""
    return _by_signal(signal_name(raw))


def _received(fields: dict[str, str], text: str) -> Verdict | None:
    raw = fields.get("signal") or fields.pop("signal2", None) or fields.pop("signal3", "")
    fields.pop("signal2", None)
    fields.pop("signal3", None)
    return _by_signal(signal_name(raw))


def _exit_code(fields: dict[str, str], text: str) -> Verdict | None:
    code = int(fields.get("exit_code", "0"))
    if code <= 128 or code - 128 not in SIGNALS:
        return None  # 0, 1, 2 ...: the program's own exit, not a kill from outside
    return _by_signal(SIGNALS[code - 128])


def _socket_connect(fields: dict[str, str], text: str) -> Verdict:
    if "any network address" in text or "DistNetworkError" in text:
        return Verdict(severity="error", confidence="medium")
    return Verdict()


RULES: tuple[Rule, ...] = (
    Rule(
        name="torch.cuda_oom",
        code="training.cuda_oom",
        severity="error",
        confidence="high",
        title="CUDA out of memory[ on GPU {gpu}]: tried to allocate {tried}[ with {free} free of {total}]",
        keywords=("CUDA out of memory",),
        pattern=re.compile(rf"Tried to allocate (?P<tried>{_SIZE})"),
        extract=(
            re.compile(rf"GPU (?P<gpu>\d+) has a total capacity of (?P<total>{_SIZE}) of which (?P<free>{_SIZE}) is free"),
            re.compile(rf"this process has (?P<process>{_SIZE}) memory in use"),
            re.compile(rf"Of the allocated memory (?P<allocated>{_SIZE}) is allocated by PyTorch, and (?P<reserved_unallocated>{_SIZE}) is reserved"),
            # PyTorch < 2.1: "(GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated; 4.75 MiB free; 14.71 GiB reserved in total by PyTorch)"
            re.compile(rf"\(GPU (?P<gpu>\d+); (?P<total>{_SIZE}) total capacity; (?P<allocated>{_SIZE}) already allocated; (?P<free>{_SIZE}) free;(?: {_SIZE} allowed;)? (?P<reserved_total>{_SIZE}) reserved in total"),
        ),
        refine=_oom,
        fields_doc="tried, gpu, total, free, process (this process in use), allocated, reserved_unallocated; older PyTorch: reserved_total instead of process; other_processes (pid=size; ...)",
        example="[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacity of 39.49 GiB of which 119.38 MiB is free. Including non-PyTorch memory, this process has 8.38 GiB memory in use. Of the allocated memory 7.96 GiB is allocated by PyTorch, and 7.73 MiB is reserved by PyTorch but unallocated.",
    ),
    Rule(
        name="cuda.error_oom",
        code="training.cuda_oom",
        severity="error",
        confidence="medium",
        title="CUDA error: out of memory (no allocator figures in the message)",
        keywords=("CUDA error: out of memory",),
        fields_doc="(none)",
        example="RuntimeError: CUDA error: out of memory",
    ),
    Rule(
        name="deepspeed.cache_flushes",
        code="training.memory_pressure",
        severity="warning",
        confidence="high",
        title="DeepSpeed ZeRO-3:[ {flushes}] PyTorch allocator cache flush(es) since last step (GPU memory pressure)",
        keywords=("allocator cache flushes",),
        extract=(re.compile(r"(?P<flushes>\d+) pytorch allocator cache flushes"),),
        fields_doc="flushes",
        example="[2025-12-31 17:08:24,236] [WARNING] [stage3.py:2236:step] 1 pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is detrimental to performance.",
    ),
    Rule(
        name="torch.rendezvous_error",
        code="training.rendezvous_failed",
        severity="error",
        confidence="high",
        title="torch.distributed rendezvous failed ({error})",
        keywords=("RendezvousConnectionError", "RendezvousTimeoutError", "DistStoreError", "clients joined"),
        pattern=re.compile(r"(?P<error>RendezvousConnectionError|RendezvousTimeoutError|DistStoreError|clients joined)"),
        extract=(re.compile(r"(?P<joined>\d+)/(?P<world>\d+) clients joined"),),
        refine=lambda f, t: Verdict(confidence="medium") if f.get("error") == "RendezvousTimeoutError" else Verdict(),
        fields_doc="error, joined, world",
        example="torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",
    ),
    Rule(
        name="torch.socket_connect",
        code="training.rendezvous_failed",
        severity="warning",
        confidence="low",
        title="torch.distributed cannot reach the master[ {host}:{port}][ ({problem})]",
        keywords=("The client socket has failed to connect", "DistNetworkError"),
        extract=(
            re.compile(r"connect to (?:any network address of )?[\[(](?P<host>[^\]\s,()]{1,253})[\]]?(?::|, )(?P<port>\d{1,5})"),
            re.compile(r"(?P<problem>Name or service not known|Temporary failure in name resolution|Connection refused|Connection timed out|No route to host)"),
        ),
        refine=_socket_connect,
        fields_doc="host, port, problem",
        example="[W socket.cpp:663] [c10d] The client socket has failed to connect to [llama-3-8b-node-0-0.llama-3-8b]:29500 (errno: 111 - Connection refused).",
    ),
    Rule(
        name="dns.name_resolution",
        code="training.rendezvous_failed",
        severity="warning",
        confidence="low",
        title="Name resolution failed ({problem}): MASTER_ADDR / Service DNS not resolvable",
        keywords=("Name or service not known", "Temporary failure in name resolution"),
        pattern=re.compile(r"(?P<problem>Name or service not known|Temporary failure in name resolution)"),
        # pip / git / HTTP clients print the same resolver errors; those are not rendezvous failures.
        unless=("The client socket has failed", "DistNetworkError", "HTTPConnection", "HTTPSConnection", "new connection", "urllib3", "Could not resolve host", "pip"),
        fields_doc="problem",
        example="socket.gaierror: [Errno -2] Name or service not known",
    ),
    Rule(
        name="elastic.exitcode",
        code="training.terminated",
        severity="error",
        confidence="high",
        title="torchrun worker killed by {signal} (exitcode {exit_code})",
        keywords=("exitcode: -",),
        pattern=re.compile(r"failed \(exitcode: (?P<exit_code>-\d+)\)(?: local_rank: (?P<local_rank>\d+))?(?: \(pid: (?P<pid>\d+)\))?"),
        refine=_signalled,
        fields_doc="exit_code (negative signal number), signal, local_rank, pid",
        example="E0101 11:10:18.826000 7 site-packages/torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -15) local_rank: 0 (pid: 192) of binary: /usr/local/bin/python",
    ),
    Rule(
        name="process.signal_received",
        code="training.terminated",
        severity="error",
        confidence="high",
        title="Training process received {signal} from outside",
        keywords=(") received by PID", "(SIGTERM) received", "death signal", "got signal: "),
        pattern=re.compile(r"Signal \d+ \((?P<signal>SIG[A-Z]+)\) received|Received (?P<signal2>(?:Signals\.)?SIG[A-Z]+|\d+) death signal|got signal: (?P<signal3>\d+)"),
        refine=_received,
        fields_doc="signal (SIGTERM, SIGKILL, ...)",
        example="W0616 00:37:22.830000 4015698 torch/distributed/elastic/agent/server/api.py:719] Received Signals.SIGTERM death signal, shutting down workers",
    ),
    Rule(
        name="container.exit_code",
        code="training.terminated",
        severity="error",
        confidence="high",
        title="Container exited with code {exit_code} ({signal})",
        keywords=("Exit Code", "exit code", "exitCode", "exited with code"),
        pattern=re.compile(r"(?:Exit Code|exit code|exitCode|exited with code)\"?[:=]?\s{0,20}(?P<exit_code>\d{1,3})\b"),
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
        extract=(re.compile(r"low on resource: (?P<resource>[\w-]+(?:\.\w[\w-]*)*)"),),
        refine=lambda f, t: Verdict(fields={"reason": "Evicted"}),
        fields_doc="resource (memory, ephemeral-storage), reason (Evicted)",
        example="Warning  Evicted  2m  kubelet  The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 8Gi.",
    ),
)
