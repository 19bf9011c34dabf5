"""One duration grammar for gpubot: Go/Kubernetes durations plus days and weeks.

Three readers, one scanner:

- ``parse_go_duration``: exactly what Go's ``time.ParseDuration`` accepts (src/time/format.go: an
  optional sign, then one or more decimal numbers each with a unit ns, us, µs, μs, ms, s, m, h; the lone
  ``0`` needs no unit; past int64 nanoseconds is refused). Karpenter reads NodePool durations and the
  ``karpenter.sh/do-not-disrupt`` annotation with it, so a value read from the cluster is judged by it.
- ``parse_nodepool_duration``: a NodePool's ``consolidateAfter`` / ``expireAfter``, which Karpenter's
  ``NillableDuration`` reads with ``time.ParseDuration`` or as the word ``Never``.
- ``parse_duration``: what a person types to gpubot (settings, ``--since``, the policy's ``expiry:``):
  Go's grammar plus ``d`` (24h) and ``w`` (7d), and, where a setting took plain seconds, a bare number.

Writes to a NodePool must pass its CRD's OpenAPI pattern, stricter than Go's reader (whole numbers of
s, m, h only): ``is_karpenter_duration`` (karpenter.sh_nodepools.yaml, ``^(([0-9]+(s|m|h))+|Never)$``).

The text is untrusted (a Slack message, an annotation a tenant wrote), so each term is matched in
linear time (RE2, playbooks.linear) by a loop that only moves forward.
"""
from __future__ import annotations

from datetime import timedelta

from playbooks import linear

NEVER = "Never"
_NS = {"ns": 1, "us": 10**3, "\u00b5s": 10**3, "\u03bcs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
       "h": 3600 * 10**9}
_NS_EXTENDED = {**_NS, "d": 86400 * 10**9, "w": 7 * 86400 * 10**9}
# Go time.ParseDuration: "invalid duration" past int64 nanoseconds (about 292 years).
_MAX_NS = 2**63 - 1
# Longer unit names first, so "ms" is not read as "m" followed by garbage.
_GO_TERM = linear.compile(r"(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_TERM = linear.compile(r"(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h|d|w)")
_BARE = linear.compile(r"(\d+\.?\d*|\.\d+)\Z")
# karpenter.sh_nodepools.yaml (v1), disruption.consolidateAfter and template.spec.expireAfter.
_KARPENTER_CRD = linear.compile(r"^(([0-9]+(s|m|h))+|Never)$")
EXAMPLES = "90s, 1h30m, 1.5h, 7d or 2w"


class DurationError(ValueError):
    """A duration gpubot cannot read; the message names the field and gives an example."""


def _nanoseconds(number: str, unit_ns: int) -> int:
    whole, _, fraction = number.partition(".")
    ns = int(whole or "0") * unit_ns
    if fraction:
        ns += (int(fraction) * unit_ns + 10 ** len(fraction) // 2) // 10 ** len(fraction)  # to the nearest ns
    return ns


def _scan(text: object, term, *, bare_seconds: bool = False) -> int | None:
    """Signed nanoseconds, or None where the grammar refuses ``text``."""
    if not isinstance(text, str) or not text or len(text) > 200:
        return None
    s, sign = text, 1
    if s[0] in "+-":
        sign, s = (-1 if s[0] == "-" else 1), s[1:]
    if s == "0":
        return 0
    if bare_seconds and (bare := _BARE.match(s)):
        total = _nanoseconds(bare.group(1), 10**9)
        return sign * total if total <= _MAX_NS else None
    units = _NS_EXTENDED if term is _TERM else _NS
    pos, total = 0, 0
    while pos < len(s):
        m = term.match(s, pos)
        if m is None:
            return None
        total += _nanoseconds(m.group(1), units[m.group(2)])
        if total > _MAX_NS:
            return None
        pos = m.end()
    return sign * total if pos else None


def _delta(ns: int) -> timedelta:
    micros = (abs(ns) + 500) // 1000  # timedelta holds microseconds: the nearest one
    return timedelta(microseconds=micros) if ns >= 0 else -timedelta(microseconds=micros)


def parse_go_duration(text: object) -> timedelta | None:
    """A Go duration ("1h30m", "-5s", "1.5h", "0"); None where Go's time.ParseDuration refuses it."""
    ns = _scan(text, _GO_TERM)
    return None if ns is None else _delta(ns)


def parse_nodepool_duration(text: object, *, field: str = "consolidateAfter") -> timedelta | None:
    """A NodePool duration as Karpenter reads it: a Go duration, or ``Never`` (None)."""
    if text == NEVER:
        return None
    value = parse_go_duration(text)
    if value is None:
        raise DurationError(f"{field} must be a Go duration such as 30s, 10m or 1h30m, or Never, got {str(text)[:40]!r}")
    return value


def is_karpenter_duration(text: object) -> bool:
    """Whether Karpenter's API server admits ``text`` in a NodePool duration field (its CRD pattern)."""
    return isinstance(text, str) and len(text) <= 64 and _KARPENTER_CRD.match(text) is not None


def parse_duration(text: object, *, name: str, bare_seconds: bool = False) -> timedelta:
    """A duration a person typed: Go's grammar plus d and w (and plain seconds where ``bare_seconds``).

    Raises DurationError with one line naming ``name`` and giving examples."""
    raw = text.strip() if isinstance(text, str) else text
    ns = _scan(raw, _TERM, bare_seconds=bare_seconds)
    if ns is None:
        shown = repr(text[:40]) if isinstance(text, str) else repr(text)
        plain = " or a number of seconds" if bare_seconds else ""
        raise DurationError(f"{name} must be a duration like {EXAMPLES}{plain}, got {shown}")
    return _delta(ns)


def format_duration(value: timedelta) -> str:
    """The shortest spelling ``parse_duration`` reads back to the same value ("1w2d3h", "90ms", "0s")."""
    micros = (value.days * 86400 + value.seconds) * 10**6 + value.microseconds
    if micros == 0:
        return "0s"
    sign, micros = ("-" if micros < 0 else ""), abs(micros)
    parts = []
    for unit, size in (("w", 604800 * 10**6), ("d", 86400 * 10**6), ("h", 3600 * 10**6), ("m", 60 * 10**6),
                       ("s", 10**6), ("ms", 10**3), ("us", 1)):
        count, micros = divmod(micros, size)
        if count:
            parts.append(f"{count}{unit}")
    return sign + "".join(parts)
