"""``gpubot remediate``: the approval flow from a terminal, for operators without Slack (and for the
checks). Same policy, same store, same guarded transitions as the Slack buttons.

Who acts is who the cluster says the kubeconfig in use is: every propose, approve, reject and undo
first asks the cluster for a SelfSubjectReview (``kubectl auth whoami``) with the credentials the
change will be written with, and records ``k8s:USERNAME``; the policy's ``approvers.kubernetes``
names who may approve. Nothing typed on the command line can change that identity: ``--by`` is only
a check that it is the one expected. What the person may read is what their kubeconfig may read."""
from __future__ import annotations

import argparse
import json
import re

from bot.errors import Refused, UserError
from bot.settings import Settings

KINDS = ("annotate-do-not-disrupt", "nodepool-consolidation", "cordon-gpu-node")
_SLACK_USER = re.compile(r"^[UW][A-Z0-9]{2,}$")
ACTING = ("propose", "approve", "reject", "undo")
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
    _options(p, acting=True)
    for name, what in (("approve", "approve (applies it when enough approvers agree)"), ("reject", "reject"),
                       ("undo", "undo an applied change"), ("show", "show one proposal")):
        p = rsub.add_parser(name, help=what)
        p.add_argument("id", type=int)
        _options(p, acting=name in ACTING)
    p = rsub.add_parser("list", help="recent proposals")
    _options(p, acting=False)


def _options(p: argparse.ArgumentParser, *, acting: bool) -> None:
    p.add_argument("--kubeconfig", help="kubeconfig file (default: KUBECONFIG or ~/.kube/config); its "
                                        "credentials are who acts")
    if acting:
        p.add_argument("--by", metavar="K8S_USER",
                       help="optional check, never an identity: the Kubernetes user you expect to act as "
                            "(as `kubectl auth whoami` prints it); refused, with nothing recorded, unless the "
                            "cluster authenticates your kubeconfig as exactly that user. Who acts is always "
                            "the authenticated user")
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from bot.remediation.flow import Remediator
    from bot.service import DiagnosisService
    from bot.store import check_current, make_engine
    from bot.store.proposals import ProposalStore

    engine = make_engine(settings.database_url)
    check_current(engine)
    service = DiagnosisService(settings)
    remediator = Remediator(service, ProposalStore(engine))
    try:
        command = args.remediate_command
        if command == "propose":
            remediation = _remediation(args, settings)
            identity = _authenticated(service, args.context, claimed=args.by)
            proposal = remediator.propose(remediation, asker=None, identity=identity, cluster=args.context,
                                          namespace=args.namespace or settings.namespace, reason=args.reason)
            _show(proposal, args.json, message=f"proposal #{proposal.id} recorded: awaiting approval",
                  acting=identity.actor)
        elif command in ("approve", "reject", "undo"):
            # The proposal's cluster vouches for the approver: the one the change is written to.
            identity = _authenticated(service, remediator.get(args.id, asker=None).cluster, claimed=args.by)
            outcome = getattr(remediator, command)(args.id, asker=None, identity=identity)
            _show(outcome.proposal, args.json, message=outcome.message, acting=identity.actor)
        elif command == "show":
            _show(remediator.get(args.id, asker=None), args.json)
        else:
            proposals = remediator.list(asker=None)
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


def _authenticated(service, cluster: str | None, *, claimed: str | None):
    """Who ``cluster`` authenticates this kubeconfig as (SelfSubjectReview); ``claimed`` (``--by``)
    must name that same user, else nothing happens."""
    identity = service.gateway(cluster).who_am_i()
    if claimed is not None and claimed not in (identity.username, identity.actor):
        hint = (" (--by no longer names a Slack user: the command line acts as the user your kubeconfig "
                "authenticates)" if _SLACK_USER.match(claimed) else "")
        raise Refused(f"--by {claimed[:80]!r} is not who cluster {identity.cluster} authenticates this kubeconfig "
                      f"as ({identity.actor}){hint}: nothing was recorded; drop --by or use that user's kubeconfig")
    return identity


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


def _show(p, as_json: bool, *, message: str | None = None, acting: str | None = None) -> None:
    if as_json:
        extra = {**({"message": message} if message else {}), **({"acting_as": acting} if acting else {})}
        print(json.dumps({**proposal_json(p), **extra}, indent=2))
        return
    if acting:
        print(f"acting as {acting} (as the cluster authenticates your kubeconfig)")
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
