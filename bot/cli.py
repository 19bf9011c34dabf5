"""The ``gpubot`` command line: diagnose, ask, explain, the simulated cluster and the demo.

Exit status: 0 when a diagnosis was produced (whatever it found), 2 for bad input (one line on
stderr), 3 when a dependency (the cluster, the database, Slack) cannot be reached or is not configured
(one line on stderr), 141 when the reader of stdout went away, 1 for anything unexpected.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bot.cluster_progress import cluster_progress
from bot.errors import GpubotError, UserError
from bot.render import json_out, terminal
from bot.settings import Settings, SettingsError, load_settings

EXIT_OK, EXIT_BUG, EXIT_INPUT, EXIT_CLUSTER = 0, 1, 2, 3
EXIT_PIPE = 128 + 13  # SIGPIPE, as the shell reports a command its reader stopped reading


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line and exit 2 like every other bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(f"{message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpubot", description="Diagnose GPU training jobs on EKS + Karpenter.")
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print gpubot's and Python's versions and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def cluster_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("-n", "--namespace", help="namespace (default: GPUBOT_NAMESPACE or 'default')")
        p.add_argument("--context", help="kubeconfig context (cluster) to use")
        p.add_argument("--kubeconfig", help="kubeconfig file (default: KUBECONFIG or ~/.kube/config)")
        p.add_argument("--json", action="store_true", help="print the diagnosis as JSON")

    p = sub.add_parser("diagnose", help="diagnose a pod, job, pytorchjob, tfjob, mpijob, jobset, trainjob, node or nodepool")
    p.add_argument("target", help="pod/NAME, job/NAME, pytorchjob/NAME (also tfjob/, mpijob/, jobset/, trainjob/), node/NAME, nodepool/NAME or a bare name")
    p.add_argument("--record", action="store_true", help="record the diagnosis as an incident (GPUBOT_DATABASE_URL)")
    cluster_options(p)

    p = sub.add_parser("ask", help='ask in plain words: gpubot ask "why is my job llama-3-8b pending?"')
    p.add_argument("question")
    cluster_options(p)

    for name, what in (("nodes", "GPU nodes: allocatable vs capacity, unhealthy GPUs, NotReady"),
                       ("nodepools", "GPU NodePools: usage vs limits, consolidation policy, budgets")):
        p = sub.add_parser(name, help=what)
        p.add_argument("--context", help="kubeconfig context (cluster) to use")
        p.add_argument("--kubeconfig", help="kubeconfig file (default: KUBECONFIG or ~/.kube/config)")
        p.add_argument("--json", action="store_true")

    from bot.settings_help import help_epilog

    p = sub.add_parser("serve", help="run the Slack bot (Socket Mode or HTTP, from the environment)",
                       epilog=help_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)

    p = sub.add_parser("doctor", help="check settings, policy, database, Slack, cluster and AWS access; say what to fix")
    p.add_argument("--context", help="kubeconfig context (cluster) to check (default: GPUBOT_CONTEXT or the current one)")
    p.add_argument("--kubeconfig", help="kubeconfig file (default: KUBECONFIG or ~/.kube/config)")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.add_argument("--derived-button-key", action="store_true",
                   help="print the button key derived from the Slack secret (hex:...), to keep it in GPUBOT_BUTTON_KEYS "
                        "while the signing secret is rotated")

    p = sub.add_parser("explain", help="diagnose a pasted log or describe output (FILE, or - for stdin)")
    p.add_argument("file", nargs="?", default="-")
    p.add_argument("--json", action="store_true")

    sim = sub.add_parser("sim", help="the simulated GPU cluster").add_subparsers(dest="sim_command", required=True,
                                                                               parser_class=_Parser)
    p = sim.add_parser("list", help="list the scenarios")
    p.add_argument("--json", action="store_true")
    p.add_argument("--scenario-dir", type=Path, metavar="DIR",
                   help="a directory of scenario files (default: the built-in seed scenarios)")
    p = sim.add_parser("serve", help="serve the simulated Kubernetes API (and EC2) on loopback")
    p.add_argument("--scenario-dir", type=Path, metavar="DIR",
                   help="a directory of scenario files (default: the built-in seed scenarios)")
    p.add_argument("--scenario", action="append", dest="scenarios", metavar="NAME",
                   help="scenario to load (repeatable; default: all in the directory)")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.add_argument("--kubeconfig-out", type=Path, help="write the kubeconfig here once serving")
    p.add_argument("--scale", help="add a synthetic cluster, e.g. nodes=5000,pods=100000")
    p.add_argument("--no-ec2", action="store_true", help="do not start the simulated EC2 API")

    from bot import store_cli

    store_cli.add_parsers(sub)

    policy = sub.add_parser("policy", help="the policy file (GPUBOT_POLICY): who may read what, from where")
    policy_sub = policy.add_subparsers(dest="policy_command", required=True, parser_class=_Parser)
    p = policy_sub.add_parser("check", help="validate a policy file and say what it opens (exit 2 when invalid)")
    p.add_argument("file", help="the policy.yaml to check")

    from bot import remediate_cli

    remediate_cli.add_parsers(sub)

    from bot import sweep_cli

    sweep_cli.add_parsers(sub)

    p = sub.add_parser("demo", help="diagnose every seed incident on the simulated cluster")
    p.add_argument("--json", action="store_true")
    return parser


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked: reading the installed metadata costs ~15 ms a start."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        print(_version())
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("gpubot")
    except PackageNotFoundError:  # run from a checkout that was never installed
        ours = "unknown (not installed)"
    return f"gpubot {ours} (Python {sys.version.split()[0]})"


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    wants_json = "--json" in args_list
    try:
        args = build_parser().parse_args(args_list)
        if args.command == "doctor":  # loads the settings itself: a bad one is a failed check, with the rest
            from bot.doctor import run as doctor

            return doctor(args)
        settings = load_settings()
        # A slow cluster shows a spinner on a terminal's stderr; `serve` logs instead.
        with cluster_progress(enabled=args.command != "serve"):
            code = _dispatch(args, settings)
        sys.stdout.flush()  # here, where a reader that went away is caught, not at interpreter exit
        return code
    except SettingsError as exc:
        return _fail(str(exc), EXIT_INPUT, wants_json)
    except GpubotError as exc:
        return _fail(str(exc), exc.exit_code, wants_json)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_went_away()


def _reader_went_away() -> int:
    """The reader of stdout closed it (`gpubot nodes | head -1`): stop quietly, as a command killed by
    SIGPIPE does. Python's own advice: point stdout at devnull so the flush at exit does not fail
    again (https://docs.python.org/3/library/signal.html#note-on-sigpipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file descriptor (captured in a test)
        pass
    return EXIT_PIPE


def _fail(message: str, code: int, wants_json: bool) -> int:
    line = " ".join(message.split())
    print(f"gpubot: {line}", file=sys.stderr)
    if wants_json:
        print(json_out.render_error(line))
    return code


def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if getattr(args, "kubeconfig", None):
        settings = Settings(**{**settings.__dict__, "kubeconfig": args.kubeconfig})
    if args.command == "diagnose":
        return _diagnose(args, settings, args.target)
    if args.command == "ask":
        return _ask(args, settings)
    if args.command == "explain":
        return _explain(args, settings)
    if args.command in ("nodes", "nodepools"):
        return _fleet(args, settings)
    if args.command in ("db", "incidents"):
        from bot import store_cli

        return store_cli.run_db(args, settings) if args.command == "db" else store_cli.run_incidents(args, settings)
    if args.command == "policy":
        return _policy_check(args.file)
    if args.command == "remediate":
        from bot import remediate_cli

        return remediate_cli.run(args, settings)
    if args.command == "sweep":
        from bot import sweep_cli

        return sweep_cli.run(args, settings)
    if args.command == "serve":
        from bot.serve import run

        return run(settings)
    if args.command == "sim":
        _require_simulator()
        from bot import sim_cli

        return sim_cli.run(args)
    if args.command == "demo":
        _require_simulator()
        from bot import demo

        return demo.run(settings, as_json=args.json)
    raise UserError(f"unknown command {args.command}")


# The simulated cluster ships apart: the image leaves out the sim package and moto[server] (its EC2).
_SIMULATOR_MODULES = {"sim", "moto", "flask", "flask_cors", "werkzeug"}


def _require_simulator() -> None:
    """One line instead of a traceback where the simulated cluster is not installed. Only a missing
    simulator module is answered so; any other import error is a bug and surfaces as one."""
    try:
        import sim.serve  # noqa: F401  (imports moto's server through sim.ec2)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in _SIMULATOR_MODULES:
            raise
        raise UserError(f"the simulated cluster is not part of this installation (no module {missing}): "
                        "install gpubot[sim] from a checkout of the repository (pip install '.[sim]') "
                        "to run gpubot sim and gpubot demo") from None


def _policy_check(path: str) -> int:
    from bot.policy import describe, load_policy

    print(describe(load_policy(path)))  # PolicyError: one line, exit 2, through main()
    return EXIT_OK


def _print(diagnosis, *, as_json: bool) -> None:
    if as_json:
        print(json_out.render(diagnosis))
    else:
        sys.stdout.write(terminal.render(diagnosis, color=sys.stdout.isatty() and not os.environ.get("NO_COLOR")))


def _diagnose(args: argparse.Namespace, settings: Settings, target: str) -> int:
    from bot.service import DiagnosisService

    store = None
    if args.record:
        from bot.store_cli import open_store

        store = open_store(settings)  # refuse before diagnosing when the schema is behind
    service = DiagnosisService(settings)
    try:
        diagnosis = service.diagnose(target, namespace=args.namespace, context=args.context)
    finally:
        service.close()
    _print(diagnosis, as_json=args.json)
    if store is not None:
        _record(store, diagnosis)
    return EXIT_OK


def _record(store, diagnosis) -> None:
    import getpass

    from bot.store import StoreUnavailable

    try:
        recorded = store.record_diagnosis(diagnosis, actor=f"cli:{getpass.getuser()}", source="cli")
    except StoreUnavailable as exc:
        print(f"gpubot: not recorded: {exc}", file=sys.stderr)
        return
    if recorded is None:
        print("gpubot: nothing above info: not recorded", file=sys.stderr)
    else:
        i, h = recorded.incident, recorded.history
        state = "new incident" if recorded.created else f"seen {h.seen_this_week} times this week"
        print(f"gpubot: recorded as incident #{i.id} ({state})", file=sys.stderr)


def _ask(args: argparse.Namespace, settings: Settings) -> int:
    from bot.errors import NotFoundError
    from bot.intent import parse_question
    from bot.service import DiagnosisService

    intent = parse_question(args.question)
    namespace = args.namespace or intent.namespace
    service = DiagnosisService(settings)
    try:
        if intent.target is None:
            pending = service.pending_jobs(namespace=namespace, context=args.context)
            ns = namespace or settings.namespace
            hint = f"Pending in {ns}: {', '.join(pending[:10])}." if pending else f"Nothing is pending in {ns}."
            raise UserError(f"Which job? Name it, e.g. gpubot ask \"why is my job NAME pending?\". {hint}")
        try:
            diagnosis = service.diagnose(intent.target, namespace=namespace, context=args.context)
        except NotFoundError as exc:
            if exc.suggestions:
                raise
            pending = service.pending_jobs(namespace=namespace, context=args.context)
            ns = namespace or settings.namespace
            hint = f" Pending in {ns}: {', '.join(pending[:10])}." if pending else f" Nothing is pending in {ns}."
            raise UserError(str(exc) + hint) from None
        _print(diagnosis, as_json=args.json)
    finally:
        service.close()
    return EXIT_OK


def _fleet(args: argparse.Namespace, settings: Settings) -> int:
    import dataclasses

    from bot.render import terminal_fleet
    from bot.service import DiagnosisService
    from bot.targets import validate_context

    if args.context:
        validate_context(args.context)
    service = DiagnosisService(settings)
    try:
        report = service.nodes(context=args.context) if args.command == "nodes" else service.nodepools(context=args.context)
    finally:
        service.close()
    if args.json:
        print(json.dumps(dataclasses.asdict(report), indent=2))
    elif args.command == "nodes":
        sys.stdout.write(terminal_fleet.render_nodes(report))
    else:
        sys.stdout.write(terminal_fleet.render_nodepools(report))
    return EXIT_OK


def _explain(args: argparse.Namespace, settings: Settings) -> int:
    # Only what reading text needs: no Kubernetes client, boto3 or simulator (seconds of imports), so
    # `gpubot explain` can sit in a pipe.
    from bot.textinput import decode_log
    from playbooks.explain import explain_text

    if args.file == "-":
        data = sys.stdin.buffer.read(settings.explain_max_bytes + 1)
        source = "standard input"
    else:
        path = Path(args.file)
        if not path.is_file():
            raise UserError(f"cannot read {args.file}: no such file (pass a log file, or - for standard input)")
        try:
            with path.open("rb") as handle:
                data = handle.read(settings.explain_max_bytes + 1)
        except OSError as exc:
            raise UserError(f"cannot read {args.file}: {exc.strerror}") from None
        source = path.name
    diagnosis = explain_text(decode_log(data, max_bytes=settings.explain_max_bytes), source=source)
    _print(diagnosis, as_json=args.json)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
