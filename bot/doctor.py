"""``gpubot doctor``: settings, policy, database, Slack, cluster access and AWS access, each checked
with the call gpubot itself would make, and what to fix for each that fails.

Exit status: 0 when every check passes (or is skipped as not configured), 2 when our own
configuration is wrong (a setting, the policy file), 3 when a dependency fails.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, replace

from bot import doctor_checks as checks
from bot.doctor_checks import FAIL, PASS, Check
from bot.settings import SettingsError, load_settings

EXIT_OK, EXIT_CONFIGURATION, EXIT_DEPENDENCY = 0, 2, 3


def run_checks(args: argparse.Namespace, env=None) -> list[Check]:
    try:
        settings = load_settings(env)
    except SettingsError as exc:
        return [Check("settings", FAIL, str(exc), "correct the variable named (`gpubot serve --help` lists them all)",
                      configuration=True)]
    if getattr(args, "kubeconfig", None):
        settings = replace(settings, kubeconfig=args.kubeconfig)
    found = [Check("settings", PASS, f"loaded ({settings.slack_mode} mode)")]
    found.append(checks.policy(settings))
    remediations = False
    if settings.policy_path and found[-1].status == PASS:
        from bot.policy import load_policy

        remediations = load_policy(settings.policy_path).remediations.enabled
    found.append(checks.database(settings))
    found.append(checks.slack(settings))
    if settings.slack_mode == "socket":
        found.append(checks.slack_app_token(settings))
    cluster_checks, info = checks.cluster(settings, context=args.context, remediations=remediations)
    found.extend(cluster_checks)
    found.append(checks.aws(settings, info))
    return found


def exit_code(found: list[Check]) -> int:
    failed = [c for c in found if c.status == FAIL]
    if any(c.configuration for c in failed):
        return EXIT_CONFIGURATION
    return EXIT_DEPENDENCY if failed else EXIT_OK


def render_plain(found: list[Check]) -> str:
    lines = []
    for check in found:
        lines.append(f"{check.status:<7} {check.name}: {check.detail}")
        if check.status == FAIL and check.fix:
            lines.append(f"        fix: {check.fix}")
    return "\n".join(lines) + "\n"


def render_table(found: list[Check]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="gpubot doctor")
    for column in ("check", "result", "detail", "fix"):
        table.add_column(column, overflow="fold")
    style = {PASS: "green", FAIL: "bold red"}
    for check in found:
        table.add_row(check.name, f"[{style.get(check.status, 'dim')}]{check.status}[/]", check.detail,
                      check.fix if check.status == FAIL else "")
    Console().print(table)


def print_derived_key() -> int:
    from bot.payloads import HEX_KEY, derived_key

    key = derived_key(load_settings())
    if key is None:
        print("gpubot: no SLACK_SIGNING_SECRET, SLACK_APP_TOKEN or SLACK_BOT_TOKEN to derive a button key from",
              file=sys.stderr)
        return EXIT_CONFIGURATION
    print(HEX_KEY + key.hex())
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    if getattr(args, "derived_button_key", False):
        return print_derived_key()
    found = run_checks(args)
    if args.json:
        print(json.dumps({"ok": exit_code(found) == EXIT_OK, "checks": [asdict(c) for c in found]}, indent=2))
    elif sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        render_table(found)
    else:
        sys.stdout.write(render_plain(found))
    return exit_code(found)
