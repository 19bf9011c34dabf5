"""``gpubot remediate``: the approval flow from a terminal, for operators without Slack (and for the
checks). Same policy, same store, same guarded transitions as the Slack buttons; ``--by`` is the Slack
user id the action is taken as, checked against the policy like a click (with no channel: the
person's own grant and the policy's ``"*"`` channel apply)."""
from __future__ import annotations

import argparse
import json
import re

from bot.errors import UserError
from bot.settings import Settings

KINDS = ("annotate-do-not-disrupt", "nodepool-consolidation", "cordon-gpu-node")
_USER = re.compile(r"^[UW][A-Z0-9]{2,}$")
_PARAM = re.compile(r"^([A-Za-z]+)=(.{1,64})$")


def add_parsers(sub) -> None:
    parser = sub.add_parser("remediate", help="propose, approve, reject, undo a change (policy-checked)")
    rsub = parser.add_subparsers(dest="remediate_command", required=True, parser_class=sub._parser_class)

    p = rsub.add_parser("propose", help="propose KIND on TARGET (pytorchjob/x, nodepool/x, node/x)")
    p.add_argument("kind", choices=KINDS)
    p.add_argument("target")
    p.add_argument("-n", "--namespace")
    p.add_argument("--context", help="kubeconfig context (cluster)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="consolidateAfter=10m, budgetNodes=10%% (nodepool-consolidation)")
    p.add_argument("--reason", default="proposed from the command line")
    _by_and_json(p)
    for name, what in (("approve", "approve (applies it when enough approvers agree)"), ("reject", "reject"),
                       ("undo", "undo an applied change"), ("show", "show one proposal")):
        p = rsub.add_parser(name, help=what)
        p.add_argument("id", type=int)
        _by_and_json(p, required=name != "show")
    p = rsub.add_parser("list", help="recent proposals")
    _by_and_json(p, required=False)


def _by_and_json(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    p.add_argument("--by", required=required, metavar="USER", help="Slack user id acting (checked against the policy)")
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from bot.remediation.flow import Remediator
    from bot.service import Asker, DiagnosisService
    from bot.store import check_current, make_engine
    from bot.store.proposals import ProposalStore

    if args.by is not None and not _USER.match(args.by):
        raise UserError(f"--by takes a Slack user id such as U0123ABCD, got {args.by[:40]!r}")
    asker = Asker(user=args.by, channel=None) if args.by else None
    engine = make_engine(settings.database_url)
    check_current(engine)
    service = DiagnosisService(settings)
    remediator = Remediator(service, ProposalStore(engine))
    try:
        command = args.remediate_command
        if command == "propose":
            proposal = remediator.propose(_remediation(args, settings), asker=asker, cluster=args.context,
                                          namespace=args.namespace or settings.namespace, reason=args.reason)
            _show(proposal, args.json, message=f"proposal #{proposal.id} recorded: awaiting approval")
        elif command in ("approve", "reject", "undo"):
            outcome = getattr(remediator, command)(args.id, asker=asker)
            _show(outcome.proposal, args.json, message=outcome.message)
        elif command == "show":
            _show(remediator.get(args.id, asker=asker), args.json)
        else:
            proposals = remediator.list(asker=asker)
            if args.json:
                print(json.dumps([proposal_json(p) for p in proposals], indent=2))
            else:
                for p in proposals:
                    print(f"#{p.id:<5} {p.state:<9} {p.kind:<24} {p.target}  (by {p.requested_by})")
                if not proposals:
                    print("no proposals")
        return 0
    finally:
        service.close()
        engine.dispose()


def _remediation(args: argparse.Namespace, settings: Settings):
    from playbooks.remediations import InvalidRemediation, annotate_do_not_disrupt, nodepool_consolidation
    from playbooks.remediations.proposals import cordon_gpu_node
    from bot.targets import KIND_ALIASES, validate_name

    kind_text, sep, name = args.target.partition("/")
    kind = KIND_ALIASES.get(kind_text.lower(), kind_text.lower())
    if not sep:
        raise UserError(f"name the target as KIND/NAME (pytorchjob/x, nodepool/x, node/x), got {args.target[:60]!r}")
    validate_name(name)
    params = {}
    for item in args.param:
        match = _PARAM.match(item)
        if not match:
            raise UserError(f"--param takes KEY=VALUE, got {item[:60]!r}")
        params[match.group(1)] = match.group(2)
    try:
        if args.kind == "annotate-do-not-disrupt":
            return annotate_do_not_disrupt(kind=kind, namespace=args.namespace or settings.namespace, name=name)
        if args.kind == "nodepool-consolidation":
            if kind != "nodepool":
                raise UserError("nodepool-consolidation takes nodepool/NAME")
            return nodepool_consolidation(nodepool=name, consolidate_after=params.pop("consolidateAfter", "10m"),
                                          budget_nodes=params.pop("budgetNodes", None))
        if kind != "node":
            raise UserError("cordon-gpu-node takes node/NAME")
        return cordon_gpu_node(node=name)
    except InvalidRemediation as exc:
        raise UserError(f"{args.kind} on {args.target}: {exc}") from None


def proposal_json(p) -> dict:
    return {"id": p.id, "kind": p.kind, "target": p.target, "cluster": p.cluster, "namespace": p.namespace,
            "state": p.state, "requested_by": p.requested_by, "approved_by": list(p.approvals),
            "decided_by": p.decided_by, "reason": p.reason, "expires_at": p.expires_at.isoformat(),
            "patch": [{"object": c["ref"], "patchType": c["patchType"], "patch": c["patch"]}
                      for c in (p.plan.get("changes") or [])],
            "undo": p.undo, "results": p.results}


def _show(p, as_json: bool, *, message: str | None = None) -> None:
    if as_json:
        print(json.dumps({**proposal_json(p), **({"message": message} if message else {})}, indent=2))
        return
    if message:
        print(message)
    print(f"proposal #{p.id} ({p.state}): {p.kind} on {p.target} in {p.cluster}, requested by {p.requested_by}")
    print(f"  reason: {p.reason}")
    if p.approvals:
        print(f"  approved by: {', '.join(p.approvals)}")
    summary = p.plan.get("summary")
    if summary:
        print(f"  change: {summary}")
    preview = p.plan.get("preview")
    if preview:
        print("\n".join("  " + line for line in preview.splitlines()))
    for r in p.results:
        print(f"  {r.get('object')}: {r.get('result')}" + (f" ({r['reason']})" if r.get("reason") else ""))
