"""When a log line was written, and which host wrote it: what blaming the rank that failed first needs.

``line_time(text)`` reads the timestamp a line starts with and returns it as ISO-8601 UTC (``2026-01-01T12:08:32Z``,
fractions kept to microseconds), or None. Prefixes read, each after an optional PyTorch ``[rank0]:`` tag:
- ``[2026-01-01 12:08:32]`` (a wrapper's or a shipper's stamp before NCCL's own prefix) and torchrun's Python
  logging ``[2026-01-01 12:08:32,123]``;
- ISO 8601 / RFC 3339 as ``kubectl logs --timestamps`` and log shippers write it: ``2026-01-01T12:08:32.123456789Z``
  (an offset is converted to UTC);
- klog / glog ``E0101 12:08:32.123456`` and PyTorch's c10 logging ``[E101 12:08:33.945328381 ProcessGroupNCCL.cpp:1538]``
  (c10/util/Logging.cpp writes the month without padding): no year, so the result is ISO 8601's truncated
  ``--01-01T12:08:32.123456Z``; ``first_failure`` compares such stamps within one year;
- libfabric's ``libfabric:<pid>:<epoch seconds>::efa:...`` (ofiwg/libfabric src/log.c ``fi_log``).
A stamp with no zone is taken as UTC (containers log in UTC unless told otherwise).

``line_host(text)`` is the host of NCCL's ``host:pid:tid [dev]`` prefix (NVIDIA/nccl src/debug.cc ``ncclDebugLog``:
``"%s:%d:%d [%d] "`` with hostname, pid, tid, cudaDev), after any stamp.

``first_failure(pairs)`` takes (host, time) pairs and returns the host whose earliest time is first, and whether the
next host failed within ``ALIKE_SECONDS`` of it (then nobody is to blame: the ranks failed alike, and a second's
difference between two clocks says nothing about which failed first).
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from playbooks import linear
from playbooks.signatures.model import KEEP, Verdict

ALIKE_SECONDS = 2.0

_RANK_TAG = linear.compile(r"\[rank\d{1,6}\]:")
_BRACKETED = linear.compile(r"\[(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?\]")
# A stamp is followed by a space or the end. RE2 has no lookahead, so the space is matched and
# _stamp_end() leaves it out.
_ISO = linear.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?(?:\s|$)")
_KLOG = linear.compile(r"\[?[IWEF](\d{1,2})(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\s")
_LIBFABRIC = linear.compile(r"libfabric:\d{1,10}:(\d{9,11})::")
_HOST = linear.compile(r"([A-Za-z0-9][\w.-]{0,252}):\d{1,10}:\d{1,10} \[\d{1,3}\]")
_STAMP_END = linear.compile(r"\]?\s*")


def _fraction(digits: str | None) -> str:
    return "." + digits[:6].ljust(6, "0") if digits else ""


def _stamp_end(found: linear.Match) -> int:
    end = found.end()
    return end - 1 if end > found.start() and found.string[end - 1].isspace() else end


def _valid(month: str, day: str, hour: str, minute: str, second: str) -> bool:
    return 1 <= int(month) <= 12 and 1 <= int(day) <= 31 and int(hour) < 24 and int(minute) < 60 and int(second) < 61


def _stamp(text: str) -> tuple[str | None, int]:
    """The normalised time a line starts with and where the rest of the line begins."""
    start = 0
    if text.startswith("[rank"):
        tag = _RANK_TAG.match(text)
        start = tag.end() if tag else 0
    first = text[start:start + 1]
    if not first or first not in "[0123456789IWEFl":  # cheap: nothing else can start a stamp
        return None, start
    if first == "l":
        found = _LIBFABRIC.match(text, start)
        if found is None:
            return None, start
        when = datetime.fromtimestamp(int(found.group(1)), tz=timezone.utc)
        return when.strftime("%Y-%m-%dT%H:%M:%SZ"), start  # the NCCL-style host prefix never follows it
    if first == "[":
        found = _BRACKETED.match(text, start)
        if found is not None:
            year, month, day, hour, minute, second, frac = found.groups()
            if not _valid(month, day, hour, minute, second):
                return None, start
            end = _STAMP_END.match(text, found.end()).end()
            return f"{year}-{month}-{day}T{hour}:{minute}:{second}{_fraction(frac)}Z", end
    if first.isdigit():
        found = _ISO.match(text, start)
        if found is None:
            return None, start
        year, month, day, hour, minute, second, frac, zone = found.groups()
        if not _valid(month, day, hour, minute, second):
            return None, start
        end = _STAMP_END.match(text, _stamp_end(found)).end()
        if zone and zone != "Z":
            sign = 1 if zone[0] == "+" else -1
            digits = zone[1:].replace(":", "")
            offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:])) * sign
            local = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second))
            utc = local - offset
            return utc.strftime("%Y-%m-%dT%H:%M:%S") + _fraction(frac) + "Z", end
        return f"{year}-{month}-{day}T{hour}:{minute}:{second}{_fraction(frac)}Z", end
    found = _KLOG.match(text, start)
    if found is None:
        return None, start
    month, day, hour, minute, second, frac = found.groups()
    if not _valid(month, day, hour, minute, second):
        return None, start
    return f"--{int(month):02d}-{day}T{hour}:{minute}:{second}{_fraction(frac)}Z", found.end()


def line_time(text: str) -> str | None:
    """ISO-8601 UTC time the line starts with, or None."""
    return _stamp(text)[0]


def line_host(text: str) -> str | None:
    """Host named by NCCL's ``host:pid:tid [dev]`` prefix (after any stamp), or None."""
    _, start = _stamp(text)
    found = _HOST.match(text, start)
    return found.group(1) if found else None


def stamp_fields(text: str) -> dict[str, str]:
    """``time`` and ``host`` of a line, those that it has: fields for the rules that blame a peer."""
    when, start = _stamp(text)
    fields = {"time": when} if when else {}
    found = _HOST.match(text, start)
    if found is not None:
        fields["host"] = found.group(1)
    return fields


def stamped(refine: Callable[[dict[str, str], str], Verdict | None] | None = None) -> Callable[[dict[str, str], str], Verdict | None]:
    """A rule's ``refine`` that also adds the line's ``time`` and ``host`` when the match is kept."""

    def run(fields: dict[str, str], text: str) -> Verdict | None:
        verdict = refine(fields, text) if refine is not None else KEEP
        if verdict is not None:
            for name, value in stamp_fields(text).items():
                fields.setdefault(name, value)
        return verdict

    return run


def parse_time(value: str, *, year: int = 2000) -> datetime | None:
    """A ``line_time`` string as an aware datetime; a year-less stamp gets ``year``."""
    if value.startswith("--"):
        value = f"{year:04d}{value[1:]}"
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def first_failure(values: list[tuple[str, str]]) -> tuple[str, bool] | None:
    """(host that failed first, the next one failed alike) from (host, time) pairs; None without a readable time.

    Each host counts at its earliest time. Year-less stamps take the year of the full ones beside them, so
    klog and ISO stamps of one run compare. One host alone is "alike": there is nobody to compare it with."""
    years = [int(t[:4]) for _, t in values if t[:4].isdigit()]
    year = max(years) if years else 2000
    earliest: dict[str, datetime] = {}
    for host, value in values:
        when = parse_time(value, year=year)
        if when is None:
            continue
        if host not in earliest or when < earliest[host]:
            earliest[host] = when
    if not earliest:
        return None
    ordered = sorted(earliest.items(), key=lambda item: item[1])
    if len(ordered) == 1:
        return ordered[0][0], True
    gap = (ordered[1][1] - ordered[0][1]).total_seconds()
    return ordered[0][0], gap <= ALIKE_SECONDS
