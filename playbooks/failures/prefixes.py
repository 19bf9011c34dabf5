"""What a log line says before its message: rank tags, timestamps, log levels, pod and NCCL prefixes.

A failure's structure (a Python exception line, ``Last error:``, a traceback header) is recognised at the
start of the message, so the prefixes that launchers, loggers and ``kubectl logs`` put in front of it are
taken off first, and what they say (the rank, the host) is kept. Each form is one bounded RE2 pattern;
several may stack (``[rank3]:`` before a glog header, a kubectl timestamp before both), so up to
``MAX_LAYERS`` are taken off in turn.

Forms, with where they come from:
- torchrun ``--tee`` / ``--log-line-prefix-template``: ``[rank3]:``, ``[default3]:``, ``3: `` (pytorch
  torch/distributed/elastic/multiprocessing/api.py ``_get_default_log_line_prefix`` / tail_log.py).
- glog / c10 logging: ``E1125 23:58:24.039000 482 torch/distributed/.../api.py:986]`` and ``[W socket.cpp:697]``
  / ``[W1125 23:58:32.992060601 ProcessGroupNCCL.cpp:1575]`` (c10/util/Logging.cpp).
- timestamps: ISO 8601 (``kubectl logs --timestamps`` writes RFC 3339 with nanoseconds), ``2026-11-25
  23:58:24,006`` (Python logging), ``[2026-11-25 23:58:32]`` (NCCL_DEBUG_TIMESTAMP_FORMAT's default), and
  a level word after it (``INFO``, ``[ERROR]``, ``E``).
- ``kubectl logs --prefix``: ``[pod/llama-worker-0/pytorch]``.
- NCCL's ``host:pid:tid [cudaDev]`` (NVIDIA/nccl src/debug.cc ``ncclDebugLog``).
"""
from __future__ import annotations

from dataclasses import dataclass

from playbooks import linear

MAX_LAYERS = 6

# Each layer takes at most one space after itself, so what follows keeps its own indentation (the
# readers of whole documents need it).
_LAYERS = (
    # [rank3]: / [default3]: / [rank3]:[W ...]
    linear.compile(r"^\[(?:rank|default)(?P<rank>\d{1,6})\]: ?"),
    # kubectl logs --prefix
    linear.compile(r"^\[pod/(?P<pod>[a-z0-9][a-z0-9.-]{0,252})/[a-z0-9][a-z0-9-]{0,62}\] "),
    # RFC 3339 / ISO 8601 timestamps, optionally bracketed, optionally followed by a level word
    linear.compile(r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\]?"
                   r"(?: (?:- )?(?:\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\]?(?: -|:)?|\[[IWEF]\]|[IWEF] ))? ?"),
    # glog: E1125 23:58:24.039000 482 file.py:986]  (also with the pid column padded)
    linear.compile(r"^(?P<level>[IWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9}\s{1,12}\d{1,10} [\w./-]{1,200}:\d{1,7}\] ?"),
    # c10 short form: [W socket.cpp:697] / [W1125 23:58:32.992060601 ProcessGroupNCCL.cpp:1575]
    linear.compile(r"^\[(?P<level2>[IWEF])(?:\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9})?\s?[\w./-]{1,200}:\d{1,7}\] ?"),
    # NCCL: host:pid:tid [dev]
    linear.compile(r"^(?P<host>[A-Za-z0-9][A-Za-z0-9._-]{0,252}):\d{1,10}:\d{1,10} \[\d{1,4}\] ?"),
    # a rank tag some launchers print as "3: " (torchrun's older prefix) or "rank3: "
    linear.compile(r"^(?:rank)?(?P<rank2>\d{1,5}): "),
)


@dataclass(frozen=True)
class Removed:
    rest: str          # the line after its prefixes, with its own indentation
    rank: str = ""
    host: str = ""
    level: str = ""


def remove(line: str) -> Removed:
    """A log line without the prefixes in front of it, and what they said."""
    rest = line.rstrip("\r\n")
    rank = host = level = ""
    for _ in range(MAX_LAYERS):
        for layer in _LAYERS:
            found = layer.match(rest)
            if found is None or found.end() == 0:
                continue
            groups = found.groupdict()
            rank = rank or groups.get("rank") or groups.get("rank2") or ""
            host = host or groups.get("host") or ""
            level = level or groups.get("level") or groups.get("level2") or ""
            rest = rest[found.end():]
            break
        else:
            break
    return Removed(rest=rest, rank=rank, host=host, level=level)


@dataclass(frozen=True)
class Line:
    body: str          # the message with every recognised prefix taken off
    rank: str = ""     # from [rankN]: / [defaultN]: / N:
    host: str = ""     # from NCCL's host:pid:tid prefix
    level: str = ""    # I / W / E / F from a glog or c10 header


def split(line: str) -> Line:
    """The message of a log line and what its prefixes said."""
    removed = remove(line.strip())
    return Line(body=removed.rest.strip(), rank=removed.rank, host=removed.host, level=removed.level)


def prefixed(lines: list[str]) -> bool:
    """Whether most of these (non-empty) lines carry a prefix: then a document in them is read without it."""
    sample = [line for line in lines if line.strip()][:200]
    return bool(sample) and sum(1 for line in sample if remove(line).rest != line.rstrip("\r\n")) * 2 >= len(sample)
