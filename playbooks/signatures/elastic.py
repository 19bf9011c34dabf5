"""torchrun / torch.distributed.elastic failures: worker exits and signals, ChildFailedError, rendezvous and
c10d store timeouts, DistNetworkError.

What an exit code means: a negative torchrun ``exitcode`` is the signal that ended the worker. -15 (SIGTERM)
comes from outside (kubelet, Karpenter, the operator); -9 (SIGKILL, 137 as a container exit) is most often
the kernel OOM killer (host memory) or a deletion that outlasted its grace period, so it is medium
confidence. A positive code (1) is the script's own error: the traceback above it names the cause, so the
exit line itself yields nothing. SIGABRT / SIGSEGV (-6, -11) are crashes inside the process (the NCCL watchdog
aborts with SIGABRT after a timeout): the lines before them say why, so they yield nothing either.

Sources (pytorch/pytorch, 2.0 to 2.11):
- torch/distributed/elastic/multiprocessing/api.py ``_close`` / ``PContext``: ``failed (exitcode: %s)
  local_rank: %s (pid: %s) of binary: %s`` (logger prefix ``E0101 ... api.py:874]``; before 2.2
  ``ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) ...``) (rule elastic.exitcode).
- torch/distributed/elastic/multiprocessing/errors/__init__.py ``_FAILURE_FORMAT_TEMPLATE`` of
  ``ChildFailedError`` (the "Root Cause (first observed failure)" table): ``exitcode  : ${exitcode} (pid:
  ${pid})`` and ``traceback : Signal ${n} (${name}) received by PID ${pid}`` for a signal, ``To enable
  traceback see: https://pytorch.org/docs/stable/elastic/errors.html`` otherwise (rules elastic.failure_row,
  process.signal_received).
- torch/distributed/elastic/agent/server/api.py: ``Received Signals.SIGTERM death signal, shutting down
  workers`` (older ``Received 15 death signal``); torch/distributed/elastic/multiprocessing/api.py
  ``_terminate_process_handler``: ``got signal: 15`` (rule process.signal_received).
- torch/distributed/elastic/rendezvous/api.py ``RendezvousClosedError`` / ``RendezvousTimeoutError`` /
  ``RendezvousConnectionError`` (raised by dynamic_rendezvous.py and c10d_rendezvous_backend.py: ``The
  connection to the C10d store has failed. See inner exception for details.``) (rule torch.rendezvous_error).
- torch/csrc/distributed/c10d/TCPStore.cpp ``waitForWorkers``: ``DistStoreError: Timed out after %d seconds
  waiting for clients. %d/%d clients joined.``; ``doWait``: ``wait timeout after %dms, keys: %s`` (before 2.3
  ``Socket Timeout``) (rule torch.rendezvous_error).
- torch/csrc/distributed/c10d/socket.cpp: ``The client socket has failed to connect to any network address of
  (host, port).``, ``The client socket has timed out after %s while trying to connect to (host, port).``,
  ``The server socket has failed to listen on any local network address. port: %d, useIpv6: %d, code: %d,
  name: %s, message: %s`` (before 2.3: ``... The server socket has failed to bind to [::]:29500 (errno: 98 -
  Address already in use).``) (rules torch.socket_connect, c10d.listen_failed).
- torch/csrc/distributed/c10d/TCPStore.cpp / Utils.hpp ``recvBytes``: ``[c10d] recvValue failed on
  SocketImpl(...): Connection reset by peer`` and ``DistNetworkError: Connection reset by peer`` when the
  store's host went away (rule c10d.connection_reset).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict
from playbooks.signatures.training import SIGNALS, by_signal, signal_name


def _exit(fields: dict[str, str], text: str) -> Verdict | None:
    code = int(fields["exit_code"])
    if code < 0:
        return by_signal(signal_name(fields["exit_code"]))
    if code > 128 and code - 128 in SIGNALS:  # a shell in between reports 128 + signal
        return by_signal(SIGNALS[code - 128])
    return None  # 0, 1, 2 ...: the script's own exit; its traceback carries the cause, not this line


def _received(fields: dict[str, str], text: str) -> Verdict | None:
    raw = fields.get("signal") or fields.pop("signal2", None) or fields.pop("signal3", "")
    fields.pop("signal2", None)
    fields.pop("signal3", None)
    return by_signal(signal_name(raw))


_RENDEZVOUS_TITLES = {
    "RendezvousClosedError": "torchrun rendezvous was closed: another node's agent exited or gave up first (look at the other pods)",
    "RendezvousTimeoutError": "torchrun rendezvous timed out: not enough nodes joined in time (pods Pending, or the endpoint unreachable)",
    "wait timeout after": "c10d store wait timed out[ after {timeout_ms} ms]: a rank never published its key (it died, hangs or never started)",
    "clients joined": "TCPStore timed out waiting for workers[ ({joined}/{world} joined)]: the others never started or cannot reach the master",
}


def _rendezvous(fields: dict[str, str], text: str) -> Verdict:
    error = fields.get("error", "")
    title = _RENDEZVOUS_TITLES.get(error)
    if error == "DistStoreError" and "joined" in fields:
        title = _RENDEZVOUS_TITLES["clients joined"]
    confidence = "medium" if error in ("RendezvousTimeoutError", "RendezvousClosedError") else None
    return Verdict(title=title, confidence=confidence)


def _socket_connect(fields: dict[str, str], text: str) -> Verdict:
    if "any network address" in text or "DistNetworkError" in text or "has timed out after" in text:
        return Verdict(severity="error", confidence="medium")
    return Verdict()


def _listen(fields: dict[str, str], text: str) -> Verdict:
    port = fields.pop("port2", None)
    found = {"port": port} if port and "port" not in fields else {}
    problem = fields.get("problem", "")
    if "in use" in problem.lower() or problem == "EADDRINUSE":
        return Verdict(
            title="torch.distributed master cannot listen[ on port {port}] (address already in use): another process on the node holds MASTER_PORT",
            fields={**found, "problem": "address already in use"},
        )
    return Verdict(confidence="medium", fields=found)


def _reset(fields: dict[str, str], text: str) -> Verdict:
    if "DistNetworkError" in text or "RendezvousConnectionError" in text:
        return Verdict(severity="error", confidence="medium")
    return Verdict()  # a store warning: at the end of a run the master may simply have exited first


RULES: tuple[Rule, ...] = (
    Rule(
        name="elastic.exitcode",
        code="training.terminated",
        severity="error",
        confidence="high",
        title="torchrun worker killed by {signal} (exitcode {exit_code})",
        keywords=("failed (exitcode: ",),
        pattern=linear.compile(r"failed \(exitcode: (?P<exit_code>-?\d{1,3})\)(?: local_rank: (?P<local_rank>\d{1,5}))?(?: \(pid: (?P<pid>\d{1,10})\))?"),
        refine=_exit,
        fields_doc="exit_code (negative: the signal number), signal, local_rank, pid",
        example="E0101 11:10:18.826000 7 site-packages/torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -15) local_rank: 0 (pid: 192) of binary: /usr/local/bin/python",
    ),
    Rule(
        name="elastic.failure_row",
        code="training.terminated",
        severity="error",
        confidence="high",
        title="torchrun worker killed by {signal} (exitcode {exit_code})",
        keywords=("exitcode  : ",),
        pattern=linear.compile(r"^exitcode\s{1,4}: (?P<exit_code>-?\d{1,3}) \(pid: (?P<pid>\d{1,10})\)"),
        refine=_exit,
        fields_doc="exit_code, signal, pid",
        example="  exitcode  : -9 (pid: 3309)",
    ),
    Rule(
        name="process.signal_received",
        code="training.terminated",
        severity="error",
        confidence="high",
        title="Training process received {signal} from outside",
        keywords=(") received by PID", "(SIGTERM) received", "death signal", "got signal: "),
        pattern=linear.compile(r"Signal \d+ \((?P<signal>SIG[A-Z]+)\) received|Received (?P<signal2>(?:Signals\.)?SIG[A-Z]+|\d+) death signal|got signal: (?P<signal3>\d+)"),
        refine=_received,
        fields_doc="signal (SIGTERM, SIGKILL, ...)",
        example="W0616 00:37:22.830000 4015698 torch/distributed/elastic/agent/server/api.py:719] Received Signals.SIGTERM death signal, shutting down workers",
    ),
    Rule(
        name="torch.rendezvous_error",
        code="training.rendezvous_failed",
        severity="error",
        confidence="high",
        title="torch.distributed rendezvous failed ({error})",
        keywords=("RendezvousConnectionError", "RendezvousTimeoutError", "RendezvousClosedError", "DistStoreError", "clients joined", "wait timeout after"),
        pattern=linear.compile(r"(?P<error>RendezvousConnectionError|RendezvousTimeoutError|RendezvousClosedError|clients joined|wait timeout after|DistStoreError)"),
        extract=(
            linear.compile(r"(?P<joined>\d{1,6})/(?P<world>\d{1,6}) clients joined"),
            linear.compile(r"wait timeout after (?P<timeout_ms>\d{1,10})ms(?:, keys: (?P<keys>\S{1,200}))?"),
        ),
        refine=_rendezvous,
        fields_doc="error, joined, world, timeout_ms, keys",
        example="torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",
    ),
    Rule(
        name="torch.socket_connect",
        code="training.rendezvous_failed",
        severity="warning",
        confidence="low",
        title="torch.distributed cannot reach the master[ {host}:{port}][ ({problem})]",
        keywords=("The client socket has failed to connect", "The client socket has timed out after", "DistNetworkError"),
        unless=("failed to listen on any local network address", "Connection reset by peer"),
        extract=(
            linear.compile(r"connect to (?:any network address of )?[\[(](?P<host>[^\]\s,()]{1,253})[\]]?(?::|, )(?P<port>\d{1,5})"),
            linear.compile(r"(?P<problem>Name or service not known|Temporary failure in name resolution|Connection refused|Connection timed out|No route to host|has timed out after)"),
        ),
        refine=_socket_connect,
        fields_doc="host, port, problem",
        example="[W socket.cpp:663] [c10d] The client socket has failed to connect to [llama-3-8b-node-0-0.llama-3-8b]:29500 (errno: 111 - Connection refused).",
    ),
    Rule(
        name="c10d.listen_failed",
        code="training.rendezvous_failed",
        severity="error",
        confidence="high",
        title="torch.distributed master cannot listen[ on port {port}][ ({problem})]: check MASTER_PORT and the pod's network",
        keywords=("failed to listen on any local network address",),
        extract=(
            linear.compile(r"port: (?P<port>\d{1,5})|bind to (?:\[[^\]]{1,60}\]|[\w.?]{1,60}):(?P<port2>\d{1,5})"),
            linear.compile(r"(?P<problem>[Aa]ddress already in use|EADDRINUSE|Cannot assign requested address|Permission denied)"),
        ),
        refine=_listen,
        fields_doc="port, problem",
        example="torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
    ),
    Rule(
        name="c10d.connection_reset",
        code="training.rendezvous_failed",
        severity="warning",
        confidence="low",
        title="The c10d store connection was reset: the master (rank 0's agent) went away",
        keywords=("Connection reset by peer",),
        pattern=linear.compile(r"(?:DistNetworkError|RendezvousConnectionError|\[c10d\]|TCPStore)[^\n]{0,300}Connection reset by peer"),
        refine=_reset,
        fields_doc="(none)",
        example="torch.distributed.DistNetworkError: Connection reset by peer",
    ),
)
