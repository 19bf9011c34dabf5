"""Variants of a failure text as it reaches the bot in the field, generated deterministically.

The same failure arrives behind torchrun's tee prefixes, behind a logger's or kubectl's timestamps,
interleaved with a healthy rank's output, wrapped by a terminal or a form, and with other ranks, hosts,
pids, sizes, paths and versions than the fixture's. Every rewording here changes only what upstream's
format strings leave variable (the `%d` of a rank, the `%s` of a host); the fixed words are never touched.

`variants(name, text)` yields `Variant`s; `body(text)` drops a fixture's `# ` header. A variant's `quotable`
holds the lines a finding may quote: the (reworded) failure's own lines and the variant's lines that came
from it, never the healthy filler.
"""
from __future__ import annotations

import random
import re
import textwrap
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "text"
WIDTHS = (80, 120)


@dataclass(frozen=True)
class Variant:
    name: str
    text: str
    quotable: frozenset[str]


def body(text: str) -> str:
    """The fixture without its leading `# ` comment lines (how it was made is not part of the output)."""
    lines = text.splitlines()
    while lines and (lines[0].startswith("# ") or lines[0] == "#"):
        lines.pop(0)
    return "\n".join(lines)


def _healthy() -> list[str]:
    """A healthy rank's output: NCCL INFO lines and set-up lines of the benign fixtures, and progress lines."""
    lines = []
    for name in ("benign_nccl_info.log", "benign_training_families.log"):
        lines += [line for line in body((FIXTURES / name).read_text()).splitlines() if line.strip()]
    lines += [f"{{'loss': {2.5 - i / 50:.4f}, 'grad_norm': {0.8 + i / 100:.3f}, 'learning_rate': 2e-05, 'epoch': {i / 100:.2f}}}"
              for i in range(1, 40, 3)]
    lines += [f"step {i * 10}/5000 | loss {2.31 - i / 100:.4f} | lr 3.00e-04 | 412.7 samples/s" for i in range(1, 20)]
    return lines


HEALTHY = _healthy()


# (a) the prefixes torchrun's --tee / --local-ranks-filter put before each line of a rank's output
# (torch/distributed/elastic/multiprocessing): "[rank%d]:" in recent PyTorch, "[%s%d]:" (role, local rank) before.
def _tee(role: str) -> Callable[[random.Random], Callable[[int], str]]:
    return lambda rng: (lambda n, r=rng.randrange(8): f"[{role}{r}]:")


def _clock(fmt: Callable[[datetime], str]) -> Callable[[random.Random], Callable[[int], str]]:
    def make(rng: random.Random) -> Callable[[int], str]:
        start = datetime(2026, 11, 25, 23, 58, 24, tzinfo=timezone.utc) + timedelta(seconds=rng.randrange(86400))
        return lambda n: fmt(start + timedelta(microseconds=6113 * n))
    return make


# (b) log prefixes: ISO-8601 with Z; Python logging's asctime; glog/klog as torch elastic writes it
# (E%m%d %H:%M:%S.%f pid file:line]); kubectl logs --timestamps (RFC 3339 with nanoseconds); kubectl logs --prefix.
PREFIXES: dict[str, Callable[[random.Random], Callable[[int], str]]] = {
    "rank_prefix": _tee("rank"),
    "default_prefix": _tee("default"),
    "iso8601": _clock(lambda t: t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z "),
    "python_logging": _clock(lambda t: t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d} "),
    "glog": _clock(lambda t: t.strftime("E%m%d %H:%M:%S.%f") + " 482 torch/distributed/elastic/multiprocessing/api.py:986] "),
    "kubectl_timestamps": _clock(lambda t: t.strftime("%Y-%m-%dT%H:%M:%S.%f") + "417Z "),
    "kubectl_prefix": lambda rng: (lambda n, p=rng.choice(["llama-3-8b-worker-1", "mixtral-ft-master-0"]): f"[pod/{p}/trainer] "),
}


def _prefixed(lines: list[str], prefix: Callable[[int], str]) -> list[str]:
    return [prefix(n) + line for n, line in enumerate(lines)]


def _interleaved(lines: list[str], rng: random.Random, ranks: bool) -> tuple[list[str], list[str]]:
    out, own = [], []
    for line in lines:
        mine = f"[rank0]:{line}" if ranks else line
        other = rng.choice(HEALTHY)
        out += [mine, f"[rank1]:{other}" if ranks else other]
        own.append(mine)
    return out, own


def _terminal_wrap(line: str, width: int) -> list[str]:
    """A terminal breaks at the column, mid-word."""
    return [line[i:i + width] for i in range(0, len(line), width)] or [""]


def _form_wrap(line: str, width: int) -> list[str]:
    """A form (a ticket, a chat box) breaks at word boundaries."""
    return textwrap.wrap(line, width, break_on_hyphens=False, drop_whitespace=True) or [line]


# (e) values upstream formats leave variable, by kind. Each pattern's group 1 is the variable; a new value is
# drawn once per kind and old value, so one text stays consistent (rank 1 is rank 7 everywhere, in the traceback
# and in torchrun's table alike).
_MODELS = ["mistral-7b", "qwen2-72b", "mixtral-8x7b", "gemma-2-27b", "falcon-40b", "deepseek-v2-lite"]
_RANK = lambda r, v: str(r.randrange(1, 64))  # noqa: E731
_PID = lambda r, v: str(r.randrange(100, 4_000_000))  # noqa: E731
REWORDS: list[tuple[str, re.Pattern[str], Callable[[random.Random, str], str]]] = [
    ("rank", re.compile(r"\b(?:[Rr]ank|local_rank)\s*:?\s*(\d{1,3})\b"), _RANK),
    ("rank", re.compile(r"\[rank(\d{1,3})\]"), _RANK),
    ("pid", re.compile(r"\b(?:pid|PID)(?:\(s\))?[ =:]\s?(\d{2,7})\b"), _PID),
    ("pid", re.compile(r"\bProcess (\d{2,7}) got signal"), _PID),
    ("pid", re.compile(r"\bSending process (\d{2,7}) closing"), _PID),
    ("ip", re.compile(r"\b(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})\b"),
     lambda r, v: f"10.{r.randrange(256)}.{r.randrange(256)}.{r.randrange(1, 255)}"),
    ("host", re.compile(r"\b(ip-\d+-\d+-\d+-\d+)\b"),
     lambda r, v: f"ip-10-{r.randrange(256)}-{r.randrange(256)}-{r.randrange(1, 255)}"),
    ("nccl", re.compile(r"\bNCCL version (\d+\.\d+\.\d+)"), lambda r, v: r.choice(["2.18.5", "2.21.5", "2.23.4", "2.26.2"])),
    ("gpu", re.compile(r"\bCUDA device (\d+)\b"), lambda r, v: str(r.randrange(8))),
    ("gpu", re.compile(r"\bGPU (\d)\b"), lambda r, v: str(r.randrange(8))),
    ("size", re.compile(r"\b(\d+\.\d{2}) [GM]iB\b"), lambda r, v: f"{float(v) * r.uniform(0.3, 3):.2f}"),
    ("time", re.compile(r"\b(\d{2}:\d{2}:\d{2})\b"),
     lambda r, v: f"{r.randrange(24):02d}:{r.randrange(60):02d}:{r.randrange(60):02d}"),
    ("path", re.compile(r"(/tmp/tmp[a-z0-9_]{8})/"),
     lambda r, v: "/tmp/tmp" + "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))),
    ("path", re.compile(r"(/home/[A-Za-z0-9_.-]+|/data1/[A-Za-z0-9_.-]+|/public/home/[A-Za-z0-9_.-]+)/"),
     lambda r, v: r.choice(["/home/jovyan", "/mnt/work/ml", "/fsx/users/ana"])),
    ("model", re.compile(r"\b(llama-3-8b|Llama-3-8B)\b"), lambda r, v: r.choice(_MODELS)),
    ("seconds", re.compile(r"\bafter (\d+) seconds\b"), lambda r, v: str(r.randrange(5, 3600))),
]


def reword(text: str, rng: random.Random) -> str:
    chosen: dict[tuple[str, str], str] = {}
    for kind, pattern, draw in REWORDS:
        def sub(m: re.Match[str], kind: str = kind, draw=draw) -> str:
            old = m.group(1)
            if (kind, old) not in chosen:
                taken = {v for (k, _), v in chosen.items() if k == kind}
                new = draw(rng, old)
                for _ in range(50):  # two ranks (or pids) do not collapse into one
                    if new not in taken:
                        break
                    new = draw(rng, old)
                chosen[kind, old] = new
            new = chosen[kind, old]
            return m.group(0)[: m.start(1) - m.start(0)] + new + m.group(0)[m.end(1) - m.start(0):]

        text = pattern.sub(sub, text)
    return text


def _command_output(lines: list[str]) -> bool:
    head = [line for line in lines if line.strip()][:10]
    return any(line.startswith("Name:") or "NVSMI LOG" in line for line in head)


def _stripped(lines: list[str]) -> frozenset[str]:
    return frozenset(line.strip() for line in lines if line.strip())


def variants(name: str, text: str) -> Iterator[Variant]:
    """Every kind of variant of one fixture's body, deterministic for a given fixture name."""
    rng = random.Random(zlib.crc32(name.encode()))
    base = body(text)
    lines = base.splitlines()
    own = _stripped(lines)
    for kind, make in PREFIXES.items():
        out = _prefixed(lines, make(rng))
        yield Variant(kind, "\n".join(out), own | _stripped(out))
    for ranks in (False, True):
        if not ranks and _command_output(lines):
            # A command's report (kubectl describe, nvidia-smi -q) is never interleaved line by line with a
            # log stream that carries no rank tags; with tags (interleaved_ranks) it is, and is read per stream.
            continue
        out, mine = _interleaved(lines, rng, ranks)
        yield Variant("interleaved_ranks" if ranks else "interleaved", "\n".join(out), own | _stripped(mine))
    for width in WIDTHS:
        out = [piece for line in lines for piece in _terminal_wrap(line, width)]
        yield Variant(f"terminal_wrap_{width}", "\n".join(out), own | _stripped(out))
        out = [piece for line in lines for piece in (_form_wrap(line, width) if len(line) > width else [line])]
        yield Variant(f"form_wrap_{width}", "\n".join(out), own | _stripped(out))
    for n in (1, 2):
        reworded = reword(base, rng)
        yield Variant(f"reworded_{n}", reworded, _stripped(reworded.splitlines()))
