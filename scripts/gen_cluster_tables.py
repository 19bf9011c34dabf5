"""Write playbooks/vocabulary/data/*.json: the cluster's own vocabulary, read from upstream source.

    .venv/bin/python scripts/gen_cluster_tables.py [--out DIR] [--date YYYY-MM-DD] [--refresh] [--mirrors DIR] [--only NAME]

One table per source module under scripts/cluster_tables/sources/ (the contract is in
scripts/cluster_tables/common.py). Without --refresh nothing outside the repository is read: each table is
built from its checked-in snapshot, scripts/cluster_tables/upstream/NAME.json, which holds upstream's facts
only (reasons, types, message formats, the file and tag each came from); the classing (whose move, the next
step, the finding code) lives in the source module. The test passes the checked-in date to reproduce
every table byte for byte.

With --refresh each source first reads its mirrors (``fetch github:owner/name`` puts them under
/work/.mirror) at the tags it names and rewrites its snapshot; a missing mirror stops the run with the
fetch to do, and nothing is written.
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.cluster_tables import common, sources  # noqa: E402

UPSTREAM = ROOT / "scripts" / "cluster_tables" / "upstream"
OUT = ROOT / "playbooks" / "vocabulary" / "data"
MIRRORS = Path("/work/.mirror")
GENERATOR = "scripts/gen_cluster_tables.py"


def source_modules(only: str | None = None) -> list:
    names = sorted(m.name for m in pkgutil.iter_modules(sources.__path__) if not m.name.startswith("_"))
    modules = [importlib.import_module(f"scripts.cluster_tables.sources.{name}") for name in names]
    return [m for m in modules if only is None or m.NAME == only]


def dump(data: object) -> str:
    return json.dumps(data, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def build(module, snapshot: dict, date: str) -> dict:
    rows = module.classify(snapshot)
    seen: set[tuple[str, str, str, str]] = set()
    unique = []
    for r in sorted(rows, key=lambda r: (r["component"], r["kind"], r["reason"], r["message"])):
        key = (r["component"], r["kind"], r["reason"], r["message"])
        if key in seen:
            continue
        seen.add(key)
        unique.append(r)
    return {"source": snapshot["source"], "generated": date, "generator": GENERATOR, "entries": unique}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--date", default=dt.date.today().isoformat())
    parser.add_argument("--refresh", action="store_true")
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--only")
    args = parser.parse_args(argv)
    try:
        dt.date.fromisoformat(args.date)
    except ValueError:
        print(f"gen_cluster_tables: --date {args.date!r} is not YYYY-MM-DD", file=sys.stderr)
        return 2
    modules = source_modules(args.only)
    if not modules:
        print(f"gen_cluster_tables: no source named {args.only!r}", file=sys.stderr)
        return 2
    snapshots = {}
    for module in modules:
        if args.refresh:
            try:
                snapshots[module.NAME] = module.refresh(args.mirrors)
            except common.MissingMirror as missing:
                print(f"gen_cluster_tables: {module.NAME} needs a mirror under {args.mirrors}: fetch {missing}",
                      file=sys.stderr)
                return 3
        else:
            snapshots[module.NAME] = json.loads((UPSTREAM / f"{module.NAME}.json").read_text())
    tables = {name: build(m, snapshots[name], args.date) for m in modules for name in [m.NAME]}
    if args.refresh:
        for name, snapshot in snapshots.items():
            (UPSTREAM / f"{name}.json").write_text(dump(snapshot))
    args.out.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        (args.out / f"{name}.json").write_text(dump(table))
    print("entries: " + " ".join(f"{name} {len(t['entries'])}" for name, t in sorted(tables.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
