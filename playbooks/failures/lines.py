"""One line of a failure read by its structure and classed by upstream's own tables.

The line catalogue's rules know particular messages; this reader knows the shapes every failure takes and
looks what it names up in the tables of ``playbooks/failures/tables.py`` (cudaError_t, CUresult,
ncclResult_t, NCCL's WARN formats, errno, signals, Python and PyTorch exception classes):

=======================  ====================================================  =================================
shape                    example                                               read as
=======================  ====================================================  =================================
Python exception line    ``torch.AcceleratorError: CUDA error: <message>``     the message first, then the type
CUDA runtime error       ``CUDA error: an illegal memory access was ...``      cudaError_t by its message
CUDA error names         ``cudaErrorMisalignedAddress``, ``CUDA_ERROR_...``    cudaError_t / CUresult by name
NCCL's CUDA check        ``NCCL WARN Cuda failure 2 'out of memory'``          the CUDA error inside NCCL
NCCL warning             ``NCCL WARN Bootstrap : no socket interface found``   NCCL's WARN formats (src/)
NCCL result              ``ncclInternalError``, ``NCCL error in: ..., <msg>``  ncclResult_t
C++ check                ``[enforce fail at inline_container.cc:672] ...``     the message, else a native error
errno                    ``[Errno 28] No space left on device``                errno
process end              ``DataLoader worker (pid 7) is killed by signal: ...``  the signal and the process it ended
                         ``Segmentation fault (core dumped)``, ``Killed``
non-zero exit            ``failed (exitcode: 1) local_rank: 1``, ``Exit Code: 1``  the floor: its output holds why
=======================  ====================================================  =================================

Sources of the shapes: CPython Lib/traceback.py ``format_exception_only`` (``<qualified type>: <message>``);
pytorch/pytorch c10/cuda/CUDAException.cpp ``c10_cuda_check_implementation`` (``CUDA error: %s``),
c10/util/Exception.cpp (``[enforce fail at %s:%d] %s``), torch/csrc/DataLoader.cpp (``DataLoader worker (pid
%d) is killed by signal: %s.``), torch/utils/data/dataloader.py (``DataLoader worker (pid(s) %s) exited
unexpectedly``), torch/distributed/elastic/multiprocessing/api.py (``failed (exitcode: %d) local_rank: %d``),
torch/csrc/distributed/c10d/NCCLUtils.hpp (``NCCL error in: %s:%d, %s, NCCL version %s``); NVIDIA/nccl
src/include/checks.h (``Cuda failure '%s'``, 2.19+ ``Cuda failure %d '%s'``) and src/debug.cc (``NCCL WARN``);
bash's and Python's reports of a fatal signal (strsignal: ``Segmentation fault``, ``Bus error``, ``Killed``;
CPython Python/pylifecycle.c ``Fatal Python error: %s``); Linux mm/oom_kill.c (``Out of memory: Killed
process %d (%s)``, ``Memory cgroup out of memory: Killed process``); kubectl describe's ``Exit Code:``.

PyTorch's own messages for a process without a usable GPU are in ``messages.py``, the numerical ones too.

A line whose level is a warning (glog ``W``, ``UserWarning``) is not a failure. When another rule of the
catalogue reads the same line, the generic ``training.failed`` from here is left out
(``catalogue.scan_line``): the specific finding says more.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from playbooks import linear
from playbooks.failures import messages, prefixes, tables
from playbooks.signatures.model import Hit

GENERIC = "training.failed"

KEYWORDS: tuple[str, ...] = (
    "Error", "Exception", "KeyboardInterrupt", "SystemExit", "StopIteration", "GeneratorExit",
    "CUDA error", "cudaError", "CUDA_ERROR_", "Cuda failure", "CUDA driver error",
    "NCCL WARN", "NCCL error", "ncclInvalid", "ncclInProgress", "ncclSystem", "ncclInternal", "ncclRemote",
    "ncclUnhandled",
    "enforce fail", "[Errno ", "No space left on device", "Disk quota exceeded", "Cannot allocate memory",
    "killed by signal", "exited unexpectedly", "Segmentation fault", "Bus error", "Aborted", "Killed",
    "Illegal instruction", "Floating point exception", "terminate called", "Fatal Python error",
    "exitcode: ", "Exit Code:", "CUBLAS_STATUS_", "CUDNN_STATUS_", "Caught signal ",
    *messages.KEYWORDS,
)

_EXCEPTION = linear.compile(
    r"^(?P<exc_type>(?:[A-Za-z_][A-Za-z0-9_]{0,80}\.){0,10}[A-Za-z_][A-Za-z0-9_]{0,80})(?::(?:\s(?P<message>.*))?)?$")
_EXCEPTION_ENDINGS = ("Error", "Exception", "Exit", "Interrupt", "Failure", "Fault", "Timeout", "Iteration")
_WARNING_ENDINGS = ("Warning",)
# Exceptions that only carry another failure: the table torchrun prints (documents/child_failed.py reads it)
# and the signal torchrun's agent received (elastic.py's process.signal_received).
_CARRIERS = ("ChildFailedError", "SignalException")
# A DataLoader worker's exception re-raised in the main process (pytorch/pytorch torch/_utils.py
# ``ExceptionWrapper.reraise``: ``Caught {type} {where}.``, then ``Original Traceback``): the original
# exception, a few lines on, is the failure.
_RERAISED = linear.compile(r"^Caught [A-Za-z_][\w.]{0,120} in (?:DataLoader worker process \d{1,5}|replica \d{1,5} on device \d{1,5}|pin memory thread)")

_CUDA_MESSAGE = linear.compile(r"CUDA (?:error|driver error): (?P<message>[^\n]{1,300})")
_CUDA_NAME = linear.compile(r"\b(?P<name>cudaError[A-Z][A-Za-z]{1,60}|CUDA_ERROR_[A-Z_]{2,60})\b")
_NCCL_CUDA = linear.compile(r"Cuda failure (?:(?P<number>\d{1,5}) )?'(?P<message>[^']{1,300})'")
_NCCL_WARN = linear.compile(r"NCCL WARN (?P<message>.{1,600})")
_NCCL_NAME = linear.compile(
    r"\b(?P<name>nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError|InProgress|Timeout))\b")
_NCCL_ERROR_IN = linear.compile(r"NCCL error in: (?P<where>[^,]{1,300}), (?P<message>[^,]{1,300}), NCCL version")
_ENFORCE = linear.compile(r"\[enforce fail at (?P<where>[^\]]{1,200})\]\s?\.?\s?(?P<message>.{0,400})")
_ERRNO = linear.compile(r"\[Errno (?P<errno>-?\d{1,4})\] (?P<strerror>[^:'\"\]]{1,120})")
_ERRNO_C10 = linear.compile(r"errno:? (?P<errno>\d{1,4})(?: - (?P<strerror>[A-Za-z ]{1,80}))?")
_STRERROR_ALONE = linear.compile(r"(?P<strerror>No space left on device|Disk quota exceeded|Cannot allocate memory)")
# UCX's fatal-signal handler (openucx src/ucs/debug/debug.c: "Caught signal %d (%s)"), printed before its
# backtrace when NCCL or MPI dies inside UCX.
_UCX_SIGNAL = linear.compile(r"Caught signal (?P<number>\d{1,2}) \((?P<signal>[A-Za-z ]{3,40})(?::[^)]{0,120})?\)")
_DATALOADER = linear.compile(
    r"DataLoader worker \(pid(?:\(s\))? (?P<pid>[\d, ]{1,200})\) (?:is killed by signal: (?P<signal>[A-Za-z ]{1,40})|exited unexpectedly)")
_FATAL_SIGNAL = linear.compile(
    r"^(?:Fatal Python error: )?(?P<signal>Segmentation fault|Bus error|Aborted|Illegal instruction|Floating point exception|Killed)"
    r"(?: \(core dumped\))?\s*$")
_OOM_KILLER = linear.compile(r"(?:Memory cgroup out of memory|Out of memory): Killed process (?P<pid>\d{1,10}) \((?P<process>[^)]{1,64})\)")
_CXX_TERMINATE = linear.compile(r"terminate called after throwing an instance of '(?P<exc_type>[^']{1,200})'")
_ELASTIC_EXIT = linear.compile(r"failed \(exitcode: (?P<exit_code>[1-9]\d{0,2})\) local_rank: (?P<local_rank>\d{1,5})")
_CONTAINER_EXIT = linear.compile(r"^Exit Code:\s{1,30}(?P<exit_code>[1-9]\d{0,2})\s*$")
_LIBRARY_STATUS = linear.compile(r"\b(?P<name>(?:CUBLAS|CUDNN)_STATUS_[A-Z_]{2,60})\b")


# Where a message names an upstream error, in the order they are tried: (pattern, group, table lookup, kind).
_NAMED = (
    (_CUDA_MESSAGE, "message", lambda said: tables.cuda_error(said.rstrip(".")), "CUDA error"),
    (_NCCL_CUDA, "message", lambda said: tables.cuda_error(said.rstrip(".")), "CUDA error"),
    (_CUDA_NAME, "name", tables.cuda_error, "CUDA error"),
    (_NCCL_WARN, "message", tables.nccl_warning, "NCCL warning:"),
    (_NCCL_NAME, "name", tables.nccl_result, "NCCL result"),
    (_NCCL_ERROR_IN, "message", tables.nccl_result, "NCCL result"),
)


def scan(text: str, base: dict[str, str]) -> Iterator[Hit]:
    """The catalogue's unit: at most one Hit for a line that carries a failure."""
    line = prefixes.split(text)
    if line.level == "W" or not line.body or "NCCL INFO" in line.body:
        return  # a warning, or NCCL tracing what it does (an INFO line repeats a failure WARN already said)
    hit = classify(line.body)
    if hit is None:
        return
    fields = {**base, **hit.fields}
    if line.rank:
        fields.setdefault("rank", line.rank)
    if line.host:
        fields.setdefault("host", line.host)
    yield Hit(hit.code, hit.severity, hit.confidence, hit.title, fields)


def classify(body: str) -> Hit | None:
    """What one message (prefixes already taken off) says failed, or None."""
    exception = _exception(body)
    if exception is not None:
        exc_type, message = exception
        if exc_type.endswith(_WARNING_ENDINGS) or carries_another(exc_type, message):
            return None
        return _inside(message, exc_type) or _named_type(exc_type, message) or _by_type(exc_type, message)
    return _inside(body, "")


def carries_another(exc_type: str, message: str) -> bool:
    """An exception that only carries a failure said elsewhere (torchrun's table, a re-raised worker error)."""
    return exc_type.rsplit(".", 1)[-1] in _CARRIERS or _RERAISED.match(message) is not None


def _named_type(exc_type: str, message: str) -> Hit | None:
    """An exception line whose type is an NCCL result or CUDA error name (``ncclInternalError: ...``)."""
    name = exc_type.rsplit(".", 1)[-1]
    entry = tables.nccl_result(name) if name.startswith("nccl") else tables.cuda_error(name) if name.startswith(("cuda", "CUDA_")) else None
    if entry is None:
        return None
    kind = "NCCL result" if name.startswith("nccl") else "CUDA error"
    return entry_hit(entry, kind, message_of(exc_type, message), {"exc_type": exc_type})


def _exception(body: str) -> tuple[str, str] | None:
    found = _EXCEPTION.match(body)
    if found is None:
        return None
    exc_type = found.group("exc_type")
    last = exc_type.rsplit(".", 1)[-1]
    if not (last.endswith(_EXCEPTION_ENDINGS) or last.endswith(_WARNING_ENDINGS) or tables.exception_entry(exc_type)):
        return None
    return exc_type, (found.group("message") or "").strip()


def quote(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def entry_hit(entry: tables.Entry, kind: str, said: str, extra: dict[str, str]) -> Hit:
    """A Hit for a table entry: its own code when the entry decides one, else the generic floor."""
    fields = {"error": entry.name, "error_class": entry.klass, "meaning": entry.meaning, "kind": kind, **extra}
    if said:
        fields.setdefault("message", quote(said))
    if entry.code and entry.code != GENERIC:
        severity, confidence = _strength(entry)
        title = f"{kind} {entry.name} ({entry.message}): {entry.meaning}" if entry.message else f"{kind} {entry.name}: {entry.meaning}"
        return Hit(entry.code, severity, confidence, title, fields)
    title = f"{kind} {entry.name}" + (f" ({entry.message})" if entry.message else "") + f", {article(entry.klass)} error: {entry.meaning}"
    return Hit(GENERIC, "error", "low", title, fields)


def _strength(entry: tables.Entry) -> tuple[str, str]:
    if entry.klass == "hardware":
        return "error", "medium"  # a hardware report from the driver; the node's Xid / ECC counters confirm it
    if entry.klass == "environment":
        return "error", "high"
    if entry.klass == "benign":
        return "info", "medium"
    return "error", "medium"


def _inside(text: str, exc_type: str) -> Hit | None:
    """A failure named inside a message: CUDA, NCCL, a C++ check, errno, a signal, PyTorch's own words."""
    prefix = {"exc_type": exc_type} if exc_type else {}
    said = message_of(exc_type, text)
    hit = messages.classify(text)
    if hit is not None:
        return Hit(hit.code, hit.severity, hit.confidence, hit.title, {**prefix, "message": quote(said), **hit.fields})
    for pattern, group, lookup, kind in _NAMED:
        found = pattern.search(text)
        if found is None:
            continue
        entry = lookup(found.group(group).strip())
        if entry is not None:
            where = {"where": found.group("where")} if "where" in found.groupdict() else {}
            return entry_hit(entry, kind, said, {**prefix, **where})
    hit = _process_end(text, said, prefix)
    if hit is not None:
        return hit
    for pattern in (_ERRNO, _ERRNO_C10, _STRERROR_ALONE):
        found = pattern.search(text)
        if found is None:
            continue
        groups = found.groupdict()
        entry = (tables.errno_entry(int(groups["errno"])) if groups.get("errno") else None) or \
            (tables.errno_entry(groups["strerror"].strip()) if groups.get("strerror") else None)
        if entry is None or not (exc_type or pattern is _STRERROR_ALONE or entry.code):
            continue
        own_words = (groups.get("strerror") or entry.message).strip()
        if not own_words.lower().startswith(entry.message.lower()[:12]):
            # A program's own text under the number (``[Errno 28] inotify watch limit reached``): the number
            # alone does not make it that errno's failure; the class stays, the code does not.
            entry = dataclasses.replace(entry, code=None)
        return entry_hit(entry, "errno", said, prefix)
    found = _ENFORCE.search(text)
    if found is not None:
        return Hit(GENERIC, "error", "low",
                   f"A C++ check in PyTorch failed at {found.group('where')}: {quote(found.group('message'), 160) or '(no message)'}",
                   {**prefix, "where": found.group("where"), "message": quote(said), "error": "enforce fail",
                    "error_class": "internal", "kind": "C++ check"})
    found = _LIBRARY_STATUS.search(text)
    if found is not None:
        name = found.group("name")
        return Hit(GENERIC, "error", "low", f"{name.split('_', 1)[0].lower()} returned {name}",
                   {**prefix, "error": name, "error_class": "code", "message": quote(said), "kind": "library status"})
    return None


def article(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def message_of(exc_type: str, text: str) -> str:
    return f"{exc_type}: {text}" if exc_type else text


def _process_end(text: str, said: str, prefix: dict[str, str]) -> Hit | None:
    found = _OOM_KILLER.search(text)
    if found is not None:
        return Hit("training.terminated", "error", "high",
                   f"The kernel's OOM killer killed {found.group('process')} (pid {found.group('pid')}): host memory, not GPU memory",
                   {**prefix, "signal": "SIGKILL", "reason": "OOMKilled", "pid": found.group("pid"), "process": found.group("process")})
    found = _UCX_SIGNAL.search(text)
    if found is not None:
        return _signal_hit(found.group("signal"), "The process", said, {**prefix, "process": "trainer"})
    found = _DATALOADER.search(text)
    if found is not None:
        return _signal_hit(found.group("signal") or "", "DataLoader worker", said,
                           {**prefix, "pid": found.group("pid").strip(), "process": "DataLoader worker"})
    found = _FATAL_SIGNAL.match(text)
    if found is not None:
        return _signal_hit(found.group("signal"), "The process", said, {**prefix, "process": "trainer"})
    found = _CXX_TERMINATE.search(text)
    if found is not None:
        return Hit(GENERIC, "error", "low",
                   f"Native code threw {found.group('exc_type')} and nothing caught it (std::terminate): the process aborted",
                   {**prefix, "exc_type": found.group("exc_type"), "signal": "SIGABRT", "error_class": "code",
                    "message": quote(said), "kind": "C++ exception"})
    found = _ELASTIC_EXIT.search(text)
    if found is not None:
        return Hit(GENERIC, "error", "low",
                   f"Local rank {found.group('local_rank')} exited with code {found.group('exit_code')}: its own output before this names the error",
                   {**prefix, "exit_code": found.group("exit_code"), "local_rank": found.group("local_rank"),
                    "message": quote(said), "kind": "exit"})
    found = _CONTAINER_EXIT.match(text)
    if found is not None:
        return Hit(GENERIC, "error", "low",
                   f"The container exited with code {found.group('exit_code')}: its last log lines name the error",
                   {**prefix, "exit_code": found.group("exit_code"), "kind": "exit"})
    return None


def _signal_hit(name: str, who: str, said: str, fields: dict[str, str]) -> Hit:
    entry = tables.signal_entry(name.strip()) if name.strip() else None
    if entry is None:  # "exited unexpectedly": the worker's own end is not in this line
        return Hit(GENERIC, "error", "low", f"{who} exited unexpectedly: its own error or the kernel's OOM killer ended it",
                   {**fields, "message": quote(said), "kind": "exit"})
    fields = {**fields, "signal": entry.name, "error": entry.name, "error_class": entry.klass, "meaning": entry.meaning,
              "message": quote(said), "kind": "process end"}
    title = f"{who} was ended by {entry.name} ({entry.message}): {entry.meaning}"
    if entry.code and entry.code != GENERIC:
        return Hit(entry.code, "error", "medium", title, fields)
    return Hit(GENERIC, "error", "low", title, fields)


def _by_type(exc_type: str, message: str) -> Hit:
    entry = tables.exception_entry(exc_type)
    said = message_of(exc_type, message)
    fields = {"exc_type": exc_type, "message": quote(said), "kind": "exception"}
    if entry is None:
        return Hit(GENERIC, "error", "low",
                   f"The process failed with {quote(said, 200)} (an exception the taxonomies do not class)",
                   {**fields, "error_class": "unknown"})
    fields.update({"error": entry.name, "error_class": entry.klass, "meaning": entry.meaning})
    if entry.klass == "benign":
        # Raised on purpose and harmless (a clean rendezvous exit, a generator's end): said, with why.
        return Hit(GENERIC, "info", "medium", f"{quote(said, 200)} is benign: {entry.meaning}", fields)
    if entry.code and entry.code != GENERIC:
        severity, confidence = _strength(entry)
        if entry.code == "training.terminated" and entry.klass == "resources":
            fields.update({"signal": "SIGKILL", "reason": "OOMKilled"})  # killed for host memory (Ray's monitor)
        return Hit(entry.code, severity, confidence, f"{quote(said, 200)}: {entry.meaning}", fields)
    return Hit(GENERIC, "error", "low", f"The process failed with {quote(said, 200)}, {article(entry.klass)} error: {entry.meaning}", fields)
