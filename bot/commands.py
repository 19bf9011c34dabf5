"""``/gpu`` command text to a typed command. Quoting follows shell rules, but nothing is ever run."""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from bot.errors import UserError
from bot.store_cli import parse_since
from bot.targets import parse_target, validate_context, validate_namespace

SUBCOMMANDS = ("why-pending", "diagnose", "explain", "nodes", "nodepools", "incidents", "incident", "help")
ALIASES = {"why": "why-pending", "pending": "why-pending", "diag": "diagnose", "np": "nodepools", "node": "nodes"}
MAX_TEXT = 40_000


@dataclass(frozen=True)
class GpuCommand:
    action: str
    target: str | None = None
    namespace: str | None = None
    cluster: str | None = None
    text: str = ""  # the log after `explain`
    status: str = "open"  # incidents: open or all
    since: str | None = None  # incidents: a duration such as 7d
    incident_id: int | None = None


def parse_command(text: str) -> GpuCommand:
    text = (text or "").strip()
    if len(text) > MAX_TEXT:
        raise UserError(f"that command is {len(text)} characters long; paste long logs with /gpu explain (a form opens)")
    if not text:
        return GpuCommand("help")
    head, _, rest = text.partition(" ")
    action = ALIASES.get(head.lower(), head.lower())
    if action not in SUBCOMMANDS:
        raise UserError(f"unknown subcommand {head[:40]!r}: try /gpu why-pending <job>, /gpu diagnose <target>, /gpu help")
    if action == "explain":
        return GpuCommand("explain", text=rest.strip())
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise UserError(f"cannot read that command ({exc}): check the quotes") from None
    namespace = cluster = since = None
    positional: list[str] = []
    it = iter(words)
    for word in it:
        if word in ("-n", "--namespace"):
            namespace = validate_namespace(_next(it, word))
        elif word == "--cluster" or word == "--context":
            cluster = validate_context(_next(it, word))
        elif word == "--since" and action == "incidents":
            since = _next(it, word)
            parse_since(since)
        elif word.startswith("-"):
            raise UserError(f"unknown option {word[:40]!r}: /gpu takes -n NAMESPACE and --cluster NAME")
        else:
            positional.append(word)
    if action in ("why-pending", "diagnose"):
        if len(positional) != 1:
            raise UserError(f"/gpu {action} takes one target, e.g. /gpu {action} llama-3-8b -n ml-training")
        parse_target(positional[0], namespace=namespace)  # refuse a bad name now, in the acknowledgement
        return GpuCommand(action, target=positional[0], namespace=namespace, cluster=cluster)
    if action == "incidents":
        if len(positional) > 1 or (positional and positional[0] not in ("open", "all")):
            raise UserError("/gpu incidents takes open (the default) or all, and --since 7d")
        return GpuCommand("incidents", status=positional[0] if positional else "open", since=since)
    if action == "incident":
        if len(positional) != 1 or not positional[0].lstrip("#").isdigit() or len(positional[0]) > 10:
            raise UserError("/gpu incident takes an incident number, e.g. /gpu incident 12")
        return GpuCommand("incident", incident_id=int(positional[0].lstrip("#")))
    if positional:
        raise UserError(f"/gpu {action} takes no arguments besides --cluster")
    return GpuCommand(action, namespace=namespace, cluster=cluster)


def _next(it, option: str) -> str:
    try:
        return next(it)
    except StopIteration:
        raise UserError(f"{option} needs a value") from None
