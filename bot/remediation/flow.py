"""Propose, approve, reject, undo: the one path every surface (Slack buttons, ``gpubot remediate``)
takes to change a cluster, with the policy checked for the person acting at every step.

- propose: the asker may read the target and the policy allows this kind of change there; the
  plan (patches, undo, preview) is computed from the live objects and stored with the proposal.
- approve: the approver is in ``approvers`` (a user or a member of a user group), is not the
  requester unless ``self_approval``, may read the target, the change is still allowed, and the
  proposal has not expired; with ``two_person`` two distinct approvers are needed. The store's
  guarded transition decides which single approval applies it, whichever replica receives it.
- undo: an approver again; only an applied change, once.

Who acts is an authenticated identity, whichever surface: a Slack user id (Slack signed the request
that names them), or, from ``gpubot remediate``, ``k8s:USERNAME`` as the cluster authenticated the
kubeconfig in use (a SelfSubjectReview, :class:`~bot.gateway.whoami.ClusterIdentity`). The two never
coincide, so two approvals are two identities; the same identity twice is one approval.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable, Sequence

from bot.errors import NotFoundError, Refused, UserError
from bot.remediation import apply as mechanics
from bot.service import Asker, DiagnosisService
from bot.store.incidents import utcnow
from bot.store.proposals import ProposalStore, ProposalView
from bot.gateway.whoami import ClusterIdentity
from bot.gateway.writes import WriteFailed
from playbooks.gather import ReadFailed
from playbooks.model import Remediation
from playbooks.remediations import parse
from playbooks.remediations.model import Change, NothingToDo, Plan
from playbooks.remediations.proposals import InvalidRemediation
from playbooks.remediations.registry import definition

log = logging.getLogger(__name__)
Groups = Callable[[str], frozenset[str]]
# Where an approval request may be posted: a conversation, and the thread in it (None: top level).
Place = tuple[str, "str | None"]


@dataclass(frozen=True)
class Outcome:
    proposal: ProposalView
    message: str  # one line for the person who acted
    changed: bool = False  # something was written to the cluster by this action


def remediation_of(proposal: ProposalView) -> Remediation:
    return parse({"kind": proposal.kind, "target": proposal.target, "params": proposal.params})


class Remediator:
    def __init__(self, service: DiagnosisService, proposals: ProposalStore, *,
                 groups: Groups | None = None, clock: Callable[[], datetime] = utcnow) -> None:
        self.service = service
        self.proposals = proposals
        self.clock = clock
        # The Slack user groups a person belongs to (usergroups.users.list, cached by the caller).
        self.groups = groups or (lambda user: frozenset())

    # -- propose --------------------------------------------------------------------------------

    def propose(self, remediation: Remediation, *, asker: Asker | None, cluster: str | None, namespace: str | None,
                reason: str, incident_id: int | None = None, finding_code: str | None = None,
                places: Sequence[Place] | None = None, identity: ClusterIdentity | None = None) -> ProposalView:
        """``cluster``/``namespace``: of the diagnosis the change comes from (its target). ``places``:
        where the request would be posted; when given and none of them may show it, it is refused
        before anything is recorded. ``identity``: the command line's requester as the cluster
        authenticated them (``asker`` is then None: the kubeconfig's own RBAC bounds what they read)."""
        self.service.check_remediation(asker, remediation, cluster=cluster, namespace=namespace)  # type: ignore[arg-type]
        gateway = self.service.gateway(cluster, asker=asker)
        requested_by = _actor(asker, identity, cluster=gateway.name)
        try:
            plan = mechanics.plan_now(gateway, definition(remediation.kind), remediation)
        except NothingToDo as exc:
            raise UserError(f"nothing to change: {exc}") from None
        except InvalidRemediation as exc:
            raise UserError(f"{remediation.kind} cannot be proposed: {exc}") from None
        except LookupError as exc:
            raise NotFoundError(f"{exc}.") from None
        except ReadFailed as exc:
            raise UserError(f"cannot read {remediation.target} to plan the change: {exc}") from None
        if places is not None and not self.shown_in(places, cluster=gateway.name,
                                                    namespace=_namespace(remediation, namespace)):
            raise Refused(f"no channel set up to show approval requests may read {remediation.target}: ask "
                          "gpubot's operators to give the approvers' channel (policy approvers.channel) a grant "
                          "that opens it")
        policy = self.service.policy.current()
        expires_at = self.clock() + policy.remediations.expiry
        return self.proposals.create(
            kind=remediation.kind, target=remediation.target, cluster=gateway.name,
            namespace=_namespace(remediation, namespace), params=remediation.params, reason=reason,
            requested_by=requested_by, expires_at=expires_at, plan=plan.to_dict(),
            incident_id=incident_id, finding_code=finding_code)

    def shown_in(self, places: Sequence[Place], *, cluster: str, namespace: str | None) -> list[Place]:
        """The places whose conversation may read the change's target by its own grant: a request is
        read by everyone there, so no one person's grant can open a channel to it."""
        return [(channel, thread) for channel, thread in dict.fromkeys(places)
                if self.service.channel_may_read(channel, cluster=cluster, namespace=namespace)]

    # -- decide ---------------------------------------------------------------------------------

    def _check_approver(self, proposal: ProposalView, asker: Asker | None, identity: ClusterIdentity | None) -> str:
        """The acting identity, once the policy lets it decide on ``proposal``."""
        policy = self.service.policy.current()
        actor = _actor(asker, identity, cluster=proposal.cluster)
        if not policy.enforced:
            raise Refused("changes are disabled: gpubot runs without a policy file (GPUBOT_POLICY)")
        if identity is not None:
            if not policy.may_approve_in_cluster(identity.username, groups=identity.groups):
                raise Refused(f"cluster {proposal.cluster} authenticates you as {actor}, who is not an approver in "
                              "gpubot's policy (approvers.kubernetes): ask someone on call")
        elif not policy.may_approve(actor, usergroups=self.groups(actor)):
            raise Refused("you are not an approver in gpubot's policy: ask someone on call")
        self.service.check_read(asker, cluster=proposal.cluster, namespace=proposal.namespace)
        remediation = remediation_of(proposal)
        params = remediation.params
        if not policy.remediations.allows(remediation.kind, namespace=params.get("namespace"),
                                          nodepool=params.get("nodepool"), node=params.get("node")):
            raise Refused(f"{remediation.kind} on {remediation.target} is no longer allowed by gpubot's policy")
        return actor

    def approve(self, proposal_id: int, *, asker: Asker | None, identity: ClusterIdentity | None = None) -> Outcome:
        proposal = self.proposals.get(proposal_id, access=self.service.access(asker))
        actor = self._check_approver(proposal, asker, identity)
        policy = self.service.policy.current()
        if actor == proposal.requested_by and not policy.remediations.self_approval:
            raise Refused("you requested this change: another approver must approve it (self-approval is off)")
        needed = 2 if policy.remediations.two_person else 1
        _audit("approval", proposal, actor, identity)
        proposal, claimed = self.proposals.approve(proposal_id, approver=actor, needed=needed)
        if not claimed:
            return Outcome(proposal, f"approval recorded: a second approver is needed ({len(proposal.approvals)} of 2)")
        return self._apply(proposal, asker)

    def _apply(self, proposal: ProposalView, asker: Asker) -> Outcome:
        remediation = remediation_of(proposal)
        try:
            gateway = self.service.gateway(proposal.cluster, asker=asker)  # errors without kubeconfig paths
            applied = mechanics.apply(gateway, definition(remediation.kind), remediation,
                                      Plan.from_dict(proposal.plan))
        except Exception as exc:  # noqa: BLE001 - the claimed proposal must not stay "approved" forever
            log.exception("applying proposal #%s failed", proposal.id)
            done = self.proposals.finish(proposal.id, ok=False, undo=[],
                                         results=[{"object": proposal.target, "result": "failed",
                                                   "reason": f"{type(exc).__name__}: {exc}"}])
            return Outcome(done, f"the change failed ({type(exc).__name__}); it can be approved again")
        results = applied.results or [{"object": proposal.target, "result": "stopped", "reason": applied.stopped or ""}]
        done = self.proposals.finish(proposal.id, ok=applied.ok, results=results, undo=applied.undo)
        if applied.ok:
            return Outcome(done, f"applied: {_tally(results)}", changed=True)
        if applied.stopped and not any(r["result"] == "applied" for r in results):
            return Outcome(done, applied.stopped)
        return Outcome(done, f"partly applied: {_tally(results)}; approve again to retry the rest", changed=True)

    def reject(self, proposal_id: int, *, asker: Asker | None, identity: ClusterIdentity | None = None) -> Outcome:
        proposal = self.proposals.get(proposal_id, access=self.service.access(asker))
        actor = self._check_approver(proposal, asker, identity)
        _audit("rejection", proposal, actor, identity)
        return Outcome(self.proposals.reject(proposal_id, actor=actor), "rejected")

    def undo(self, proposal_id: int, *, asker: Asker | None, identity: ClusterIdentity | None = None) -> Outcome:
        proposal = self.proposals.get(proposal_id, access=self.service.access(asker))
        actor = self._check_approver(proposal, asker, identity)
        _audit("undo", proposal, actor, identity)
        proposal = self.proposals.claim_undo(proposal_id, actor=actor)
        changes = [Change.from_dict(c) for c in proposal.undo]
        try:
            ok, results = mechanics.undo(self.service.gateway(proposal.cluster, asker=asker), changes)
        except (WriteFailed, ReadFailed) as exc:
            ok, results = False, [{"object": proposal.target, "result": "not restored", "reason": str(exc)}]
        if not ok:
            failed = self.proposals.undo_failed(proposal_id, results=results)
            return Outcome(failed, f"undo failed: {_tally(results)}; the change stays applied", changed=True)
        done = self.proposals.finish_undo(proposal_id, ok=True, results=results)
        return Outcome(done, f"undone: {_tally(results)}" if results else "undone: nothing had been written",
                       changed=bool(results))

    # -- read -----------------------------------------------------------------------------------

    def get(self, proposal_id: int, *, asker: Asker | None) -> ProposalView:
        return self.proposals.get(proposal_id, access=self.service.access(asker))

    def list(self, *, asker: Asker | None, limit: int = 50) -> list[ProposalView]:
        return self.proposals.list(limit=limit, access=self.service.access(asker))


def _actor(asker: Asker | None, identity: ClusterIdentity | None, *, cluster: str) -> str:
    """The id recorded for whoever acts; Refused when nobody authenticated is acting."""
    if identity is not None:
        if identity.cluster != cluster:
            # Authenticated by one cluster, acting on another: that cluster has not vouched for them.
            raise Refused(f"you were authenticated by cluster {identity.cluster}, not {cluster}: act with a "
                          f"kubeconfig context for {cluster}")
        return identity.actor
    if asker is None or not asker.user:
        raise Refused("a change is proposed and decided by an authenticated person: use Slack, or gpubot remediate "
                      "with your own kubeconfig")
    return asker.user


def _audit(what: str, proposal: ProposalView, actor: str, identity: ClusterIdentity | None) -> None:
    # Who the cluster said the actor is, groups included, for whoever audits a decision later.
    if identity is not None:
        log.info("proposal #%s: %s by %s, authenticated by cluster %s as %r in groups %s", proposal.id, what,
                 actor, identity.cluster, identity.username, sorted(identity.groups))


def _namespace(remediation: Remediation, diagnosis_namespace: str | None) -> str | None:
    """The namespace the change writes in (None: cluster-scoped), for who may see the proposal."""
    return remediation.params.get("namespace") if remediation.kind == "annotate-do-not-disrupt" else diagnosis_namespace


def _tally(results: list[dict]) -> str:
    counts: dict[str, int] = {}
    for r in results:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    return ", ".join(f"{n} {what}" for what, n in counts.items())


def expiry_text(expiry: timedelta) -> str:
    minutes = int(expiry.total_seconds() // 60)
    return f"{minutes // 60} h" if minutes >= 60 and minutes % 60 == 0 else f"{minutes} min"
