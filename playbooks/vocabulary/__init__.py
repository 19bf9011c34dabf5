"""The cluster's own vocabulary as data: event reasons, conditions, refusals, launch errors and component
messages of Kubernetes, Karpenter, EC2, the GPU and network stack and the batch layers, each classed.

The JSON under data/ is written by scripts/gen_cluster_tables.py from snapshots of upstream source
(scripts/cluster_tables/upstream/, each entry naming the tag and file it came from); the classing rules
live in scripts/cluster_tables/sources/. Each entry says what failed, whose move it is (``owner``: the job's
spec, the platform's configuration, capacity, hardware, transient, or benign), the next step, and what
evidence would raise the confidence. A line is read by the component that wrote it as well as by its words:
an entry of another component is taken only when none of the writer's own matches.

Every lookup answers None for what the tables do not hold.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from playbooks import linear

OWNERS = ("spec", "platform", "capacity", "hardware", "transient", "benign")
LEVELS = ("error", "warning", "normal")
# An anchor shorter than this is a word, not a message ("failed", "timeout"): it would match anything.
MIN_ANCHOR = 12


@dataclass(frozen=True)
class Entry:
    table: str          # the data file's stem: kubernetes, karpenter, ec2, gpu_stack, batch
    component: str      # who writes it: kubelet, kube-scheduler, karpenter, ec2, nvidia-device-plugin, kueue ...
    kind: str           # event | condition | error | log | container_reason | ec2_code | admission | exit
    reason: str         # the event / condition / container reason or the error code, "" when it has none
    level: str          # error | warning | normal
    message: str        # upstream's format string
    pattern: str        # RE2 syntax matching what the format prints
    anchor: str         # the format's longest literal run, lower-cased
    owner: str          # whose move: one of OWNERS
    meaning: str        # what failed, in one sentence
    next: str           # the next step
    upgrade: str        # what evidence would raise the confidence
    code: str | None    # the finding code the entry decides, or None (cluster.unrecognised)
    where: tuple[str, ...]


def _entry(table: str, row: dict) -> Entry:
    return Entry(table=table, component=row["component"], kind=row["kind"], reason=row["reason"], level=row["level"],
                 message=row["message"], pattern=row["pattern"], anchor=row["anchor"], owner=row["owner"],
                 meaning=row["meaning"], next=row["next"], upgrade=row["upgrade"], code=row["code"],
                 where=tuple(row["where"]))


@lru_cache(maxsize=1)
def tables() -> tuple[str, ...]:
    folder = resources.files("playbooks.vocabulary") / "data"
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json")))


@lru_cache(maxsize=None)
def entries(table: str | None = None) -> tuple[Entry, ...]:
    if table is None:
        return tuple(e for name in tables() for e in entries(name))
    text = (resources.files("playbooks.vocabulary") / "data" / f"{table}.json").read_text()
    return tuple(_entry(table, row) for row in json.loads(text)["entries"])


@lru_cache(maxsize=1)
def _by_reason() -> dict[str, tuple[Entry, ...]]:
    index: dict[str, list[Entry]] = {}
    for e in entries():
        if e.reason:
            index.setdefault(e.reason, []).append(e)
    return {k: tuple(v) for k, v in index.items()}


@lru_cache(maxsize=1)
def _anchored() -> tuple[tuple[str, tuple[Entry, ...]], ...]:
    index: dict[str, list[Entry]] = {}
    for e in entries():
        if len(e.anchor) >= MIN_ANCHOR:
            index.setdefault(e.anchor, []).append(e)
    # The most literal format first: "failed to launch nodeclaim" before "failed to".
    return tuple(sorted(((a, tuple(v)) for a, v in index.items()), key=lambda item: -len(item[0])))


@lru_cache(maxsize=1)
def _prefilter():
    from playbooks.signatures.prefilter import Prefilter  # the same one-pass word finder explain uses
    words = tuple(a for a, _ in _anchored() if "\n" not in a and "\r" not in a)
    return Prefilter(words) if words else None


@lru_cache(maxsize=None)
def _compiled(pattern: str) -> linear.Pattern:
    return linear.compile(pattern)


def _own_first(found: list[Entry], component: str | None) -> list[Entry]:
    if not component:
        return found
    own = [e for e in found if _same_component(e.component, component)]
    return own + [e for e in found if e not in own]


def _same_component(entry_component: str, writer: str) -> bool:
    a, b = entry_component.lower(), writer.lower()
    return a == b or a in b or b in a


_VERB = linear.compile(r"%[-+ #0-9.*]{0,8}[a-zA-Z%]")


@lru_cache(maxsize=None)
def _literal(e: Entry) -> int:
    """How many characters of the format are its own words: the more, the more specific."""
    return len(_VERB.sub("", e.message))


def by_reason(reason: str, message: str = "", component: str | None = None) -> Entry | None:
    """The entry for an event, condition or container reason: the one whose format matches the message
    when there is one, else the writer's own entry for that reason, else any entry for it."""
    candidates = _own_first(list(_by_reason().get(reason, ())), component)
    if not candidates:
        return None
    if message:
        matching = [e for e in candidates if e.message and _compiled(e.pattern).search(message)]
        if matching:
            # The most literal format wins ("object %q/%q not registered" over "MountVolume.SetUp failed for
            # volume %q : %v"); the writer's own entry on a tie.
            best = max(_literal(e) for e in matching)
            return next(e for e in matching if _literal(e) == best)
    return candidates[0]


def by_message(text: str, component: str | None = None) -> Entry | None:
    """The entry whose format printed (a part of) ``text``: the most literal match, the writer's own first."""
    prefilter = _prefilter()
    if prefilter is None:
        return None
    low = text.lower()
    present = set()
    for _, _, words in prefilter.lines(low.replace("\n", " ")):
        present.update(words)
    if not present:
        return None
    found: list[Entry] = []
    for anchor, group in _anchored():
        if anchor not in present:
            continue
        for e in group:
            if _compiled("(?i)" + e.pattern).search(text):
                found.append(e)
        if found and not component:
            break
    if not found:
        return None
    best = max(_literal(e) for e in found)
    return _own_first([e for e in found if _literal(e) == best] + [e for e in found if _literal(e) != best], component)[0]


def code_entry(code: str, component: str | None = None) -> Entry | None:
    """An error code a component passes through (EC2's ``InsufficientInstanceCapacity``, an AWS API's
    ``UnauthorizedOperation``), as its entry of kind ec2_code."""
    for e in _own_first([e for e in _by_reason().get(code, ()) if e.kind == "ec2_code"], component):
        return e
    return None
