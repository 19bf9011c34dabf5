"""What every cluster vocabulary source shares: Go format strings turned into RE2 patterns, and the row
each table entry becomes (the contract of playbooks/vocabulary/data/*.json).

A source module under scripts/cluster_tables/sources/ defines:

- ``NAME``: the table's file stem (``kubernetes`` writes playbooks/vocabulary/data/kubernetes.json and reads
  its snapshot scripts/cluster_tables/upstream/kubernetes.json).
- ``MIRRORS``: the ``fetch`` sources it reads (``github:kubernetes/kubernetes``), named in the error when a
  mirror is missing.
- ``refresh(mirrors: Path) -> dict``: reads the fetched mirrors (``git show TAG:PATH`` on the bare git
  directories under /work/.mirror) and returns the snapshot: ``{"source": str, "items": [...]}`` where each
  item holds upstream's own facts only (reason, type, message format, the files it came from). Raises
  ``MissingMirror(source)`` when a mirror is absent.
- ``classify(snapshot: dict) -> list[dict]``: one row per item, built with ``row(...)`` below: the class,
  whose move it is, the next step and the finding code are decided here, never in the snapshot.

Rows are sorted and written by scripts/gen_cluster_tables.py; the same snapshot always gives the same bytes.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

# Whose move a failure is (the classes): the job's own spec, the platform's configuration,
# capacity (EC2, quotas, limits), hardware, something transient that retries on its own, or nothing
# wrong at all.
OWNERS = ("spec", "platform", "capacity", "hardware", "transient", "benign")
# An entry's level: error (a failure: a finding above info), warning (a warning worth a finding when it is
# about the target), normal (routine: never a finding above info).
LEVELS = ("error", "warning", "normal")
KINDS = ("event", "condition", "error", "log", "container_reason", "ec2_code", "admission", "exit")


class MissingMirror(Exception):
    """A mirror the refresh needs is not under --mirrors: ``fetch`` it first."""


def mirror(mirrors: Path, repo: str) -> Path:
    """The bare git directory of a fetched repository (``owner/name``), or MissingMirror."""
    base = mirrors / repo.replace("/", "+")
    if base.is_dir():
        for candidate in (base, *sorted(base.iterdir())):
            if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
                return candidate
    raise MissingMirror(f"github:{repo}")


def git(gitdir: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True, capture_output=True, text=True,
                          errors="replace").stdout


def tags(gitdir: Path) -> list[str]:
    return git(gitdir, "tag").split()


def show(gitdir: Path, tag: str, path: str) -> str | None:
    try:
        return git(gitdir, "show", f"{tag}:{path}")
    except subprocess.CalledProcessError:
        return None


def files(gitdir: Path, tag: str, under: str = "") -> list[str]:
    args = ["ls-tree", "-r", "--name-only", tag] + ([under] if under else [])
    return git(gitdir, *args).splitlines()


# Go's fmt verbs (and C's, for the few C sources): flags, width, precision, verb.
_VERB = re.compile(r"%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|z|j|t|L|q)?([a-zA-Z%])")
_NUMBER_VERBS = set("dioxXbcU")
_FLOAT_VERBS = set("eEfFgG")
_SAMPLES = {"s": "example", "v": "example", "q": '"example"', "w": "example error", "T": "string", "t": "true"}
MAX_FIELD = 400


def pattern_of(fmt: str) -> str:
    """An RE2 pattern (Python ``re`` syntax, no lookaround) matching what ``fmt`` prints: literal text
    escaped, each verb a bounded capture. Bounded repetition keeps every pattern linear and small."""
    out: list[str] = []
    pos = 0
    for found in _VERB.finditer(fmt):
        out.append(re.escape(fmt[pos:found.start()]))
        verb = found.group(1)
        if verb == "%":
            out.append("%")
        elif verb in _NUMBER_VERBS:
            out.append(r"(-?[0-9A-Fa-fx.]{1,24})")
        elif verb in _FLOAT_VERBS:
            out.append(r"(-?[0-9.eE+-]{1,32})")
        else:
            out.append(f"(.{{0,{MAX_FIELD}}}?)")
        pos = found.end()
    out.append(re.escape(fmt[pos:]))
    return "".join(out)


def sample_of(fmt: str) -> str:
    """``fmt`` printed with plain values: what a test feeds back to the pattern."""
    def value(found: re.Match) -> str:
        verb = found.group(1)
        if verb == "%":
            return "%"
        if verb in _NUMBER_VERBS:
            return "3"
        if verb in _FLOAT_VERBS:
            return "1.5"
        return _SAMPLES.get(verb, "example")
    return _VERB.sub(value, fmt)


def literal_parts(fmt: str) -> list[str]:
    return [part for part in _VERB.split(fmt)[::2]]


def anchor_of(fmt: str) -> str:
    """The format's longest literal run, lower-cased and trimmed: a cheap substring test before the pattern."""
    return max((p.strip() for p in _VERB.sub("\x00", fmt).split("\x00")), key=len, default="").lower()


def row(*, component: str, kind: str, reason: str, level: str, message: str, owner: str, meaning: str,
        next_step: str, upgrade: str, code: str | None, where: list[str], literal: bool = False) -> dict:
    """One table entry. ``message`` is upstream's format string (or literal text when ``literal``);
    ``where`` lists ``TAG:PATH[:LINE]`` for each place it was read."""
    assert owner in OWNERS, owner
    assert level in LEVELS, level
    assert kind in KINDS, kind
    assert meaning.strip() and next_step.strip(), (reason, message)
    pattern = re.escape(message) if literal else pattern_of(message)
    return {
        "component": component,
        "kind": kind,
        "reason": reason,
        "level": level,
        "message": message,
        "pattern": pattern,
        "anchor": message.strip().lower() if literal else anchor_of(message),
        "sample": message if literal else sample_of(message),
        "owner": owner,
        "meaning": meaning.strip(),
        "next": next_step.strip(),
        "upgrade": upgrade.strip(),
        "code": code,
        "where": sorted(set(where)),
    }
