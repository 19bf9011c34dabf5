"""``gpubot db`` (migrations) and ``gpubot incidents`` (history from the terminal)."""
from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from dataclasses import asdict
from datetime import timedelta

from bot.durations import DurationError, parse_duration
from bot.errors import UserError
from bot.settings import Settings

EXPORT_FIELDS = ("id", "status", "severity", "code", "cluster", "namespace", "target_kind", "target_name", "title",
                 "occurrences", "opened_at", "updated_at", "resolved_at", "acknowledged_by", "resolved_by", "resolution",
                 "slack_channel", "slack_ts")


def parse_since(text: str | None) -> timedelta | None:
    if not text:
        return None
    try:
        since = parse_duration(text, name="--since")
    except DurationError as exc:
        raise UserError(str(exc)) from None
    if since <= timedelta(0):
        raise UserError(f"--since must be a positive duration such as 2h30m or 7d, got {text[:20]!r}")
    return since


def add_parsers(sub) -> None:
    db = sub.add_parser("db", help="the incident database schema (GPUBOT_DATABASE_URL)")
    db_sub = db.add_subparsers(dest="db_command", required=True, parser_class=sub._parser_class)
    up = db_sub.add_parser("upgrade", help="migrate to REV (default: the latest)")
    up.add_argument("revision", nargs="?", default="head")
    down = db_sub.add_parser("downgrade", help="migrate back to REV (e.g. base)")
    down.add_argument("revision")
    db_sub.add_parser("current", help="show the schema revision")
    prune = db_sub.add_parser("prune", help="delete resolved incidents, resolved alerts and Slack deliveries older "
                                            "than GPUBOT_RETENTION_INCIDENTS / _ALERTS / _DELIVERIES")
    prune.add_argument("--dry-run", action="store_true", help="count what would be deleted, delete nothing")

    inc = sub.add_parser("incidents", help="incidents recorded from Slack and `diagnose --record`")
    inc_sub = inc.add_subparsers(dest="incidents_command", required=True, parser_class=sub._parser_class)
    ls = inc_sub.add_parser("list", help="open (default) or all incidents")
    ls.add_argument("status", nargs="?", default="open", choices=("open", "all"))
    ls.add_argument("--since", help="only incidents updated within, e.g. 7d")
    ls.add_argument("--json", action="store_true")
    show = inc_sub.add_parser("show", help="one incident and its timeline")
    show.add_argument("id", type=int)
    show.add_argument("--json", action="store_true")
    export = inc_sub.add_parser("export", help="all incidents as CSV or JSON")
    export.add_argument("--format", choices=("csv", "json"), default="csv")
    export.add_argument("--since", help="only incidents updated within, e.g. 30d")


def open_store(settings: Settings, *, check: bool = True):
    from bot.store import IncidentStore, check_current, make_engine

    engine = make_engine(settings.database_url)
    if check:
        check_current(engine)
    return IncidentStore(engine)


def run_db(args: argparse.Namespace, settings: Settings) -> int:
    from bot.store import db, make_engine, migrate

    engine = make_engine(settings.database_url)
    where = db.where(engine.url)
    if args.db_command == "upgrade":
        print(f"{where}: schema at {migrate.upgrade(engine, args.revision) or 'base'}")
    elif args.db_command == "downgrade":
        print(f"{where}: schema at {migrate.downgrade(engine, args.revision) or 'base'}")
    elif args.db_command == "prune":
        print(f"{where}: {_prune(engine, settings, dry_run=args.dry_run)}")
    else:
        have, want = migrate.current(engine), migrate.head()
        print(f"{where}: schema at {have or 'base'} (latest {want}{', up to date' if have == want else ''})")
    engine.dispose()
    return 0


def _prune(engine, settings: Settings, *, dry_run: bool) -> str:
    from bot.store import check_current, retention

    check_current(engine)
    policy = retention.Retention.from_settings(settings)
    pruned = retention.prune(engine, policy, dry_run=dry_run)
    counts = (f"{pruned.incidents} incidents, {pruned.alerts} alerts ({pruned.alert_groups} alert messages), "
              f"{pruned.deliveries} Slack deliveries, {pruned.webhooks} Alertmanager webhooks")
    return f"{'would prune' if dry_run else 'pruned'} {counts} ({policy.describe()})"


def run_incidents(args: argparse.Namespace, settings: Settings) -> int:
    from bot.render import terminal_incidents

    store = open_store(settings)
    if args.incidents_command == "list":
        incidents = store.list(status=args.status, since=parse_since(args.since), limit=500)
        if args.json:
            print(json.dumps([_row(i) for i in incidents], indent=2))
        else:
            sys.stdout.write(terminal_incidents.render_list(incidents))
    elif args.incidents_command == "show":
        detail = store.get(args.id)
        if args.json:
            print(json.dumps({"incident": _row(detail.incident), "timeline": [_plain(asdict(t)) for t in detail.timeline],
                              "findings": [asdict(f) for f in detail.findings]}, indent=2))
        else:
            sys.stdout.write(terminal_incidents.render_detail(detail))
    else:
        incidents = store.list(status="all", since=parse_since(args.since), limit=100_000)
        rows = [_row(i) for i in incidents]
        if args.format == "json":
            print(json.dumps(rows, indent=2))
        else:
            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=EXPORT_FIELDS, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
            sys.stdout.write(out.getvalue())
    store.engine.dispose()
    return 0


def _row(incident) -> dict:
    return _plain({k: v for k, v in asdict(incident).items() if k in EXPORT_FIELDS})


def _plain(row: dict) -> dict:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
