"""Score gpubot on real texts copied from public GitHub threads (tests/fixtures/text/public/threads/).

    .venv/bin/python tests/score_public.py [--batch NAME] [--verbose]

Each AREA.toml next to the texts judges them from the thread alone, written before gpubot ran on them: kind
(error or benign), the cause the thread established, the codes an honest reader may give first (accept) and
those it must never give first (must_not). Per text:

- error text: 1 when the first finding is accepted; 0.5 when an accepted code is among the findings above
  info, or the first is the floor (cluster.unrecognised / training.failed) quoting the text; 0 otherwise.
  Silent: no finding above info. Harmful: the first finding is one must_not rules out.
- benign text: 1 when nothing is above info, else 0 and a false alarm.

Prints the score (the mean), silent, harmful and false alarms, per batch (``collected`` before or after the
readers were written: the field ``batch``, "before-readers" when absent) and per area.
"""
from __future__ import annotations

import argparse
import fnmatch
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playbooks.explain import explain_text  # noqa: E402

THREADS = ROOT / "tests" / "fixtures" / "text" / "public" / "threads"
FLOORS = ("cluster.unrecognised", "training.failed")


@dataclass(frozen=True)
class Result:
    name: str
    area: str
    batch: str
    kind: str
    score: float
    silent: bool
    harmful: bool
    false_alarm: bool
    first: str
    accept: tuple[str, ...]


def body(text: str) -> str:
    lines = text.splitlines()
    while lines and (lines[0].startswith("# ") or lines[0] == "#"):
        lines.pop(0)
    return "\n".join(lines)


def manifest() -> dict[str, dict]:
    entries: dict[str, dict] = {}
    for path in sorted(THREADS.glob("*.toml")):
        for name, entry in tomllib.loads(path.read_text()).items():
            entries[name] = {**entry, "area": path.stem}
    return entries


def judge(name: str, entry: dict) -> Result:
    text = body((THREADS / name).read_text(errors="replace"))
    findings = explain_text(text, source=name).findings
    raised = [f for f in findings if f.severity != "info"]
    first = raised[0].code if raised else ""
    batch = entry.get("batch", "before-readers")
    accept = tuple(entry.get("accept", ()))
    if entry["kind"] == "benign":
        return Result(name, entry["area"], batch, "benign", 0.0 if raised else 1.0, False, False, bool(raised), first, ())
    if not raised:
        return Result(name, entry["area"], batch, "error", 0.0, True, False, False, "", accept)
    harmful = any(fnmatch.fnmatchcase(first, pattern) for pattern in entry.get("must_not", ()))
    if harmful:
        score = 0.0
    elif first in accept:
        score = 1.0
    elif any(f.code in accept for f in raised) or first in FLOORS:
        score = 0.5
    else:
        score = 0.0
    return Result(name, entry["area"], batch, "error", score, False, harmful, False, first, accept)


def results() -> list[Result]:
    return [judge(name, entry) for name, entry in manifest().items()]


def summary(rows: list[Result]) -> str:
    if not rows:
        return "no texts"
    errors = [r for r in rows if r.kind == "error"]
    benign = [r for r in rows if r.kind == "benign"]
    mean = sum(r.score for r in rows) / len(rows)
    return (f"{len(rows)} texts ({len(errors)} failures, {len(benign)} healthy): score {mean:.2f}, "
            f"silent {sum(r.silent for r in errors)}, harmful {sum(r.harmful for r in errors)}, "
            f"false alarms {sum(r.false_alarm for r in benign)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    rows = [r for r in results() if args.batch is None or r.batch == args.batch]
    print("all:", summary(rows))
    for batch in sorted({r.batch for r in rows}):
        print(f"batch {batch}:", summary([r for r in rows if r.batch == batch]))
    for area in sorted({r.area for r in rows}):
        print(f"area {area}:", summary([r for r in rows if r.area == area]))
    if args.verbose:
        for r in rows:
            if r.score < 1:
                why = "silent" if r.silent else "harmful" if r.harmful else "false alarm" if r.false_alarm else "partial" if r.score else "wrong"
                print(f"  {r.score:.1f} {why:11} {r.name}: first={r.first or '-'} accept={list(r.accept)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
