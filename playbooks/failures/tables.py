"""Upstream's error tables, classed for a training job: look an error up by its name, number or message.

The JSON under data/ is written by scripts/gen_failure_tables.py from upstream's own tables (the CUDA
runtime's and driver's cudaGetErrorName/cudaGetErrorString output, NCCL's ncclResult_t and WARN formats,
glibc's errno and signal texts, exception classes of Python and PyTorch, NVIDIA's Xid catalogue); each
file's header names its source. Every lookup answers None for what the tables do not hold.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from playbooks import linear

CLASSES = ("hardware", "code", "data", "resources", "environment", "image", "network", "distributed",
           "storage", "permission", "external", "internal", "benign")


@dataclass(frozen=True)
class Entry:
    name: str            # cudaErrorIllegalAddress | CUDA_ERROR_ILLEGAL_ADDRESS | ncclSystemError | ENOSPC | SIGBUS | torch.OutOfMemoryError | an NCCL WARN format
    message: str         # upstream's own text: "an illegal memory access was encountered", "No space left on device", "Bus error"
    klass: str           # one of CLASSES
    meaning: str         # one plain sentence: what it means for a training job and the next step
    code: str | None     # the finding code this entry decides, or None (the reader then uses training.failed)
    number: int | None = None


@dataclass(frozen=True)
class XidEntry:
    xid: int
    name: str            # NVIDIA's name for it
    kind: str            # "application" | "hardware" | "driver" | "informational"
    action: str          # "none" | "restart_app" | "reset_gpu" | "drain" | "reboot"  (what the operator does)
    meaning: str


_SPACE = re.compile(r"\s+")
# Prefixes PyTorch and CuPy put before a CUDA error's text or name.
_CUDA_PREFIX = re.compile(r"^(?:cuda (?:driver )?error:\s*|cuda failure\s*)", re.IGNORECASE)
_NCCL_WARN_PREFIX = "NCCL WARN "
# strsignal texts as a shell or Python print them after a crash.
_CORE_DUMPED = re.compile(r"\s*\(core dumped\)\s*$", re.IGNORECASE)
# A bare prefix of an NCCL result's text shorter than this would match on a word ("in", "un").
_MIN_PREFIX = 6


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def _entry(row: dict) -> Entry:
    return Entry(name=row["name"], message=row["message"], klass=row["class"], meaning=row["meaning"],
                 code=row["code"], number=row["number"])


@lru_cache(maxsize=None)
def _rows(name: str) -> tuple[dict, ...]:
    text = (resources.files("playbooks.failures") / "data" / f"{name}.json").read_text()
    return tuple(json.loads(text)["entries"])


@dataclass(frozen=True)
class _Index:
    by_name: dict[str, Entry]
    by_number: dict[int, Entry]
    by_message: dict[str, Entry]


@lru_cache(maxsize=None)
def _index(*tables: str) -> _Index:
    """Name (exact and lower-case), number and normalised message -> the first entry that has it."""
    by_name: dict[str, Entry] = {}
    by_number: dict[int, Entry] = {}
    by_message: dict[str, Entry] = {}
    for table in tables:
        for row in _rows(table):
            e = _entry(row)
            by_name.setdefault(e.name, e)
            by_name.setdefault(e.name.lower(), e)
            if e.number is not None:
                by_number.setdefault(e.number, e)
            if e.message:
                by_message.setdefault(_norm(e.message).rstrip("."), e)
    return _Index(by_name, by_number, by_message)


def _number(key: str) -> int | None:
    key = key.strip()
    return int(key) if key.lstrip("-").isdigit() and len(key) <= 6 else None


def cuda_error(key: str | int) -> Entry | None:
    """A cudaError_t or CUresult by runtime name, driver name, number or upstream's exact message
    (case-insensitive, whitespace collapsed, a "CUDA error: " prefix tolerated)."""
    index = _index("cuda_runtime", "cuda_driver")
    if isinstance(key, int):
        return index.by_number.get(key)
    text = _CUDA_PREFIX.sub("", key.strip()).strip().strip("'\"")
    if (number := _number(text)) is not None:
        return index.by_number.get(number)
    return (index.by_name.get(text) or index.by_name.get(text.lower())
            or index.by_message.get(_norm(text).rstrip(".")))


def nccl_result(key: str | int) -> Entry | None:
    """An ncclResult_t by name, number or ncclGetErrorString's text; a prefix of the text is enough
    ("unhandled system error"), and so is the text followed by more (NCCL's version, a detail)."""
    index = _index("nccl_results")
    if isinstance(key, int):
        return index.by_number.get(key)
    text = key.strip()
    if (number := _number(text)) is not None:
        return index.by_number.get(number)
    found = index.by_name.get(text) or index.by_name.get(text.lower())
    if found:
        return found
    norm = _norm(text).rstrip(".")
    if len(norm) < _MIN_PREFIX:
        return None
    matches = {e for message, e in index.by_message.items() if message.startswith(norm) or norm.startswith(message)}
    return matches.pop() if len(matches) == 1 else None


@dataclass(frozen=True)
class _Warn:
    entry: Entry
    anchor: str                 # the format's longest literal run, lower-cased: a cheap test before the pattern
    literal: int                # how many characters of the format are literal: the more, the more specific
    pattern: str                # RE2 syntax, compiled when a message first contains the anchor


@lru_cache(maxsize=None)
def _compiled(pattern: str) -> linear.Pattern:
    # Compiling all 300+ formats up front costs half a second; a log names a handful of them.
    return linear.compile(pattern)


@lru_cache(maxsize=1)
def _warns() -> tuple[_Warn, ...]:
    warns = []
    for row in _rows("nccl_warnings"):
        literals = re.split(r"%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|z|j|t|L|q)?[diouxXeEfgGcspm%]", row["name"])
        anchor = max(literals, key=len).strip().lower()
        warns.append(_Warn(_entry(row), anchor, sum(map(len, literals)), row["pattern"]))
    # The most specific format first: "Error: network %s not found." before "%s: connect to %s failed : %s".
    warns.sort(key=lambda w: -w.literal)
    return tuple(warns)


def nccl_warning(message: str) -> Entry | None:
    """The NCCL WARN format the text after "NCCL WARN " was printed from, or None when none matches.
    The whole message must match; failing that, a message that starts with a format's full text
    (NCCL sometimes appends a detail) is accepted."""
    text = message.strip()
    if _NCCL_WARN_PREFIX in text:
        text = text.split(_NCCL_WARN_PREFIX, 1)[1].strip()
    low = text.lower()
    candidates = [w for w in _warns() if w.anchor in low]
    for w in candidates:
        if _compiled(w.pattern).fullmatch(text):
            return w.entry
    for w in candidates:
        if _compiled(w.pattern).match(text):
            return w.entry
    return None


def errno_entry(key: str | int) -> Entry | None:
    """An errno by name ("ENOSPC"), number (28) or strerror text ("No space left on device")."""
    index = _index("errno")
    if isinstance(key, int):
        return index.by_number.get(abs(key))
    text = key.strip()
    if (number := _number(text)) is not None:
        return index.by_number.get(abs(number))
    return index.by_name.get(text.upper()) or index.by_message.get(_norm(text).rstrip("."))


def signal_entry(key: str | int) -> Entry | None:
    """A signal by name ("SIGKILL", "KILL"), number (9), a process's negative exit code (-9), a shell's
    128+N exit code (137), or strsignal text ("Killed", "Bus error", "Segmentation fault (core dumped)")."""
    index = _index("signals")
    if isinstance(key, str):
        text = _CORE_DUMPED.sub("", key.strip()).removeprefix("Signals.")
        number = _number(text)
        if number is None:
            upper = text.upper()
            return (index.by_name.get(upper) or index.by_name.get("SIG" + upper)
                    or index.by_message.get(_norm(text).rstrip(".")))
        key = number
    key = abs(key)
    if 128 < key <= 128 + 64:
        key -= 128
    return index.by_number.get(key)


@lru_cache(maxsize=1)
def _exceptions_by_last() -> dict[str, Entry]:
    last: dict[str, Entry] = {}
    for row in _rows("exceptions"):
        last.setdefault(row["name"].rsplit(".", 1)[-1], _entry(row))
    return last


def exception_entry(type_name: str) -> Entry | None:
    """An exception class by its full dotted name as a traceback prints it, else by its last component
    ("OutOfMemoryError" is PyTorch's, "builtins.KeyError" is KeyError)."""
    name = type_name.strip()
    if not name:
        return None
    found = _index("exceptions").by_name.get(name)
    if found or ("." in name and name.split(".", 1)[0] not in _exception_roots()):
        return found  # another library's class of the same name is not this one (ray's OutOfMemoryError)
    return _exceptions_by_last().get(name.rsplit(".", 1)[-1])


@lru_cache(maxsize=1)
def _exception_roots() -> frozenset[str]:
    """The packages the table holds classes of (torch, triton, cupy ...): an alias inside them is found by its
    last name."""
    return frozenset(row["name"].split(".", 1)[0] for row in _rows("exceptions") if "." in row["name"]) | {"builtins"}


@lru_cache(maxsize=1)
def _xids() -> dict[int, XidEntry]:
    return {row["xid"]: XidEntry(xid=row["xid"], name=row["name"], kind=row["kind"], action=row["action"],
                                 meaning=row["meaning"]) for row in _rows("xid")}


def xid_entry(xid: int) -> XidEntry | None:
    """What an Xid means and what the operator does about it; None for an Xid the catalogue lacks."""
    return _xids().get(xid)


@lru_cache(maxsize=1)
def device_plugin_ignored_xids() -> frozenset[int]:
    """The Xids NVIDIA's device plugin treats as the application's and never marks a GPU unhealthy for
    (NVIDIA/k8s-device-plugin internal/rm/health.go, as read into xid.json)."""
    return frozenset(row["xid"] for row in _rows("xid") if row.get("device_plugin_ignores"))
