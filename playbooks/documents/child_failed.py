"""torchrun's ``ChildFailedError`` block read as a whole: which rank failed first, where, and how.

The layout is pytorch/pytorch torch/distributed/elastic/multiprocessing/errors/__init__.py (1.9 to 2.11)
``ChildFailedError.format_msg``: ``_MSG_FORMAT_TEMPLATE`` (a ``=`` border, ``<script> FAILED``, ``Failures:``
with the other failures or ``<NO_OTHER_FAILURES>``, ``Root Cause (first observed failure):``, a border) and
one ``_FAILURE_FORMAT_TEMPLATE`` entry per failure::

    [0]:
      time      : 2024-09-09_09:36:56          (time.strftime("%Y-%m-%d_%H:%M:%S"), the agent's clock)
      host      : f5735d9ffd4f
      rank      : 7 (local_rank: 7)
      exitcode  : -9 (pid: 3309)
      error_file: <N/A>
      traceback : Signal 9 (SIGKILL) received by PID 3309

``traceback`` is the child's own traceback (several lines) when it wrote an error file (``@record``), the
signal for a negative exit code, or ``To enable traceback see: ...`` otherwise.

The line rules see ``exitcode  : -9`` alone; this reader names the root-cause rank and host and counts the
other failures. Every signal it gives carries ``root_cause=yes``: explain then treats the other ranks'
SIGTERMs as what torchrun did after the root cause, never as the cause. A negative exit code is read as
elastic.py reads it (training.by_signal: SIGTERM / SIGKILL come from outside, SIGINT / SIGHUP from a closed
session); SIGABRT / SIGSEGV / SIGBUS are crashes whose cause is in the lines before, said as such. When the
root cause's own traceback names an error a line rule knows (a CUDA OOM, a device-side assert ...), that
code is used instead. A positive exit code with no traceback is the script's own error: a low-confidence
``training.failed`` for that rank, which explain replaces by the error the text shows for it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from playbooks import linear
from playbooks.failures import tables
from playbooks.signatures.catalogue import iter_lines, scan_line
from playbooks.signatures.model import Signal, trim
from playbooks.signatures.training import by_signal, signal_name

MARKERS = ("ChildFailedError", "Root Cause")
_FAILURES = "Failures:"
_ROOT = "Root Cause (first observed failure)"
_NO_OTHERS = "<NO_OTHER_FAILURES>"
_ENTRY = linear.compile(r"^\s{0,4}\[(?P<idx>\d{1,6})\]:\s*$")
_FIELD = linear.compile(r"^\s{0,6}(?P<key>time|host|rank|exitcode|error_file|traceback)\s{0,8}:\s?(?P<value>.*)$")
_RANK = linear.compile(r"^(?P<rank>\d{1,7})(?: \(local_rank: (?P<local_rank>\d{1,5})\))?")
_EXIT = linear.compile(r"^(?P<exit_code>-?\d{1,3})(?: \(pid: (?P<pid>\d{1,10})\))?")
_TIME = linear.compile(r"^(\d{4}-\d{2}-\d{2})_(\d{2}:\d{2}:\d{2})$")
_BORDER = linear.compile(r"^\s*(?:={8,}|-{8,})\s*$")


@dataclass
class _Failure:
    values: dict[str, str] = field(default_factory=dict)
    exit_line: tuple[int, str] | None = None
    traceback: list[str] = field(default_factory=list)


@dataclass
class _Block:
    root: _Failure | None = None
    others: int = 0


def _blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    block: _Block | None = None
    section = ""  # "failures" | "root"
    entry: _Failure | None = None
    in_traceback = False
    for lineno, raw in enumerate(iter_lines(text), start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if stripped == _FAILURES:
            block, section, entry, in_traceback = _Block(), "failures", None, False
            blocks.append(block)
            continue
        if block is None:
            continue
        if stripped.startswith(_ROOT):
            section, entry, in_traceback = "root", None, False
            continue
        if _BORDER.match(line):
            in_traceback = False
            if section == "root" and block.root is not None:
                block, section = None, ""  # the closing border
            continue
        found = _ENTRY.match(line)
        if found is not None:
            entry, in_traceback = _Failure(), False
            if section == "root" and block.root is None:
                block.root = entry
            elif section == "failures":
                block.others += 1
            continue
        if entry is None:
            continue
        item = _FIELD.match(line)
        if item is not None:
            key, value = item.group("key"), item.group("value").strip()
            entry.values[key] = value
            if key == "exitcode":
                entry.exit_line = (lineno, line)
            in_traceback = key == "traceback"
            if in_traceback and value:
                entry.traceback.append(value)
        elif in_traceback and stripped:
            entry.traceback.append(stripped)
    return [b for b in blocks if b.root is not None and b.root.exit_line is not None]


def _fields(failure: _Failure, others: int) -> dict[str, str]:
    values = failure.values
    fields: dict[str, str] = {}
    rank = _RANK.match(values.get("rank", ""))
    if rank:
        fields.update({k: v for k, v in rank.groupdict().items() if v})
    exit_code = _EXIT.match(values.get("exitcode", ""))
    if exit_code:
        fields.update({k: v for k, v in exit_code.groupdict().items() if v})
    host = values.get("host", "")
    if host:
        fields["host"] = host
    when = _TIME.match(values.get("time", ""))
    if when:
        fields["time"] = f"{when.group(1)}T{when.group(2)}Z"  # agent's local clock: UTC in a container by default
    error_file = values.get("error_file", "")
    if error_file and error_file != "<N/A>":
        fields["error_file"] = error_file
    fields["other_failures"] = str(others)
    fields["root_cause"] = "yes"
    return fields


def _who(fields: dict[str, str]) -> str:
    who = f"rank {fields.get('rank', '?')}"
    if "host" in fields:
        who += f" on {fields['host']}"
    return who


def _after(fields: dict[str, str]) -> str:
    others = int(fields.get("other_failures", "0"))
    return f"; {others} other rank(s) failed after it" if others else ""


def _named_error(failure: _Failure, source: str) -> Signal | None:
    """The strongest signal a line rule finds in the root cause's own traceback (not the exit itself)."""
    found: list[Signal] = []
    for line in failure.traceback:
        found.extend(s for s in scan_line(line, source=source) if s.code != "training.terminated")
    return min(found, key=lambda s: s.rank) if found else None


def _signal(failure: _Failure, others: int, source: str) -> Signal | None:
    fields = _fields(failure, others)
    lineno, line = failure.exit_line  # type: ignore[misc]
    named = _named_error(failure, source)
    if named is not None:
        fields.update({k: v for k, v in named.fields.items() if k not in fields})
        title = f"{_who(fields)} failed first (exitcode {fields.get('exit_code', '?')}): {named.title}{_after(fields)}"
        return Signal(code=named.code, severity=named.severity, confidence=named.confidence, title=title,
                      line=trim(line), source=source, lineno=lineno, fields=fields)
    exit_code = fields.get("exit_code", "")
    if not exit_code.startswith("-"):
        # The script's own exit: its output names the cause (explain puts that error in this rank's name).
        fields["kind"] = "exit"
        title = (f"{_who(fields)} failed first (exitcode {exit_code or '?'}); this text holds no error of it: "
                 f"read that rank's own log{_after(fields)}")
        return Signal(code="training.failed", severity="error", confidence="low", title=title,
                      line=trim(line), source=source, lineno=lineno, fields=fields)
    entry = tables.signal_entry(exit_code)
    signal = entry.name if entry is not None else signal_name(exit_code)
    verdict = by_signal(signal)
    if verdict is None:
        # SIGABRT / SIGSEGV / SIGBUS ...: the process crashed; the signal's own meaning (failures/tables.py)
        # says where to look, and the lines before it may say why.
        meaning = f": {entry.meaning}" if entry is not None else ": a native crash inside the process"
        fields.update({"signal": signal, "kind": "process end"})
        if entry is not None:
            fields.update({"error": entry.name, "error_class": entry.klass, "meaning": entry.meaning})
        code = entry.code if entry is not None and entry.code else "training.failed"
        confidence = "medium" if code != "training.failed" else "low"
        title = f"{_who(fields)} crashed first with {signal} (exitcode {exit_code}){meaning}{_after(fields)}"
        return Signal(code=code, severity="error", confidence=confidence, title=title,
                      line=trim(line), source=source, lineno=lineno, fields=fields)
    fields["signal"] = signal
    meaning = {
        "SIGKILL": ": the kernel OOM killer (host memory) or an eviction past its grace period",
        "SIGTERM": ": stopped from outside (kubelet, Karpenter, the job's operator)",
    }.get(signal, "")
    title = f"{_who(fields)} was killed by {signal} (exitcode {exit_code}) first{meaning}{_after(fields)}"
    return Signal(code="training.terminated", severity=verdict.severity or "error", confidence=verdict.confidence or "high",
                  title=title, line=trim(line), source=source, lineno=lineno, fields=fields)


def read(text: str, source: str) -> list[Signal]:
    found: list[Signal] = []
    for block in _blocks(text):
        signal = _signal(block.root, block.others, source)  # type: ignore[arg-type]
        if signal is not None:
            found.append(signal)
    return found
