"""The proposal store on SQLite and on a real PostgreSQL: its state machine, and transitions that only
one caller wins, however many replicas receive the same click at once."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from bot.errors import NotFoundError, UserError
from bot.policy.model import Access, Grant
from bot.store import IncidentStore, ProposalConflict, ProposalStore, make_engine
from bot.store import migrate
from bot.store.models import Base
from playbooks.model import Diagnosis, Evidence, Finding, Target
from tests.store.conftest import Clock

HF = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"
TABLES = {"proposals", "proposal_approvals", "proposal_messages"}
PLAN = {"changes": [{"ref": {"kind": "NodePool", "name": "gpu"}, "patchType": "application/merge-patch+json",
                     "patch": {"spec": {"disruption": {"consolidationPolicy": "WhenEmpty"}}}}],
        "undo": [], "preview": "- WhenEmptyOrUnderutilized\n+ WhenEmpty", "summary": "consolidate NodePool gpu only when empty"}


@pytest.fixture
def store(engine, clock):
    return ProposalStore(engine, clock=clock)


@pytest.fixture
def incidents(engine, clock):
    return IncidentStore(engine, clock=clock)


def propose(store: ProposalStore, clock: Clock, **overrides) -> int:
    fields = dict(kind="nodepool-consolidation", target="nodepool/gpu", cluster="prod", namespace=None,
                  params={"consolidateAfter": "10m"}, reason="Karpenter keeps disrupting training pods",
                  requested_by="U0ALICE", expires_at=clock.now + timedelta(minutes=30), plan=PLAN)
    fields.update(overrides)
    return store.create(**fields).id


DIAGNOSIS = Diagnosis(Target("pytorchjob", "llama", "ml"), "summary", [Finding(
    "karpenter.disruption", "error", "high", "disrupted", "detail", [Evidence("event", "Disrupting")])], cluster="prod")


def incident(incidents: IncidentStore) -> int:
    return incidents.record_diagnosis(DIAGNOSIS, actor="U0ALICE", source="slack").incident.id


# -- schema ---------------------------------------------------------------------------------------


def test_migration_0004_adds_and_drops_the_proposal_tables(db_url):
    engine = make_engine(db_url)
    try:
        assert migrate.upgrade(engine, "0003") == "0003"
        assert not TABLES & _tables(engine)
        assert migrate.upgrade(engine, "0004") == "0004"
        assert TABLES <= _tables(engine)
        with engine.connect() as conn:  # the ORM models say what the migration made, column for column
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert [d for d in diff if TABLES & _named(d)] == []
        ProposalStore(engine).create(kind="cordon-gpu-node", target="node/ip-10-0-1-7", cluster="prod", namespace=None,
                                     params={}, reason="", requested_by="U0ALICE", plan={},
                                     expires_at=datetime.now(timezone.utc) + timedelta(minutes=5))
        assert migrate.downgrade(engine, "0003") == "0003"
        tables = _tables(engine)
        assert not TABLES & tables and "incidents" in tables
        assert migrate.upgrade(engine) == migrate.head()
        assert ProposalStore(engine).list() == []
    finally:
        engine.dispose()


def test_the_database_refuses_an_unknown_state(engine, store, clock):
    pid = propose(store, clock)
    with pytest.raises(Exception, match="ck_proposals_state|CHECK constraint"), engine.begin() as conn:
        conn.execute(text("UPDATE proposals SET state = 'done' WHERE id = :id"), {"id": pid})


def _tables(engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.dialect.get_table_names(conn))


def _named(diff) -> set[str]:
    """The table names one autogenerate difference mentions (its tuples nest for column changes)."""
    names: set[str] = set()
    for item in diff if isinstance(diff, (list, tuple)) else [diff]:
        if isinstance(item, (list, tuple)):
            names |= _named(item)
        elif isinstance(item, str):
            names.add(item)
        elif hasattr(item, "name") and hasattr(item, "columns"):
            names.add(item.name)
        elif getattr(item, "table", None) is not None:
            names.add(item.table.name)
    return names


# -- create, get, list ----------------------------------------------------------------------------


def test_create_and_get_round_trip(store, clock):
    pid = propose(store, clock, reason=f"deploy with token {HF}", namespace=None, finding_code="karpenter.disruption")
    view = store.get(pid)
    assert (view.kind, view.target, view.cluster, view.namespace, view.state) == (
        "nodepool-consolidation", "nodepool/gpu", "prod", None, "pending")
    assert view.params == {"consolidateAfter": "10m"} and view.plan == PLAN
    assert view.reason == "deploy with token [REDACTED]"  # typed by a person: redacted before it is stored
    assert view.requested_at == clock.now and view.expires_at == clock.now + timedelta(minutes=30)
    assert view.approvals == () and view.results == [] and view.undo == [] and view.messages == ()
    assert view.version == 1 and view.incident_id is None and view.finding_code == "karpenter.disruption"
    with pytest.raises(NotFoundError, match=r"^there is no proposal #999\.$"):
        store.get(999)


def test_a_proposal_for_a_missing_incident_is_refused(store, clock):
    with pytest.raises(NotFoundError, match="no incident #42"):
        propose(store, clock, incident_id=42)
    assert store.list() == []


def test_get_and_list_show_only_what_access_may_read(store, clock):
    ids = {}
    for cluster, namespace, target in [("prod", "ml", "pytorchjob/llama"), ("prod", "research", "pytorchjob/mixtral"),
                                       ("prod", None, "nodepool/gpu"), ("llm-west", "team_a", "job/x"),
                                       ("llm-west", "teamxa", "job/y"), ("Prod-EU", "ml", "job/z")]:
        clock.now += timedelta(minutes=1)
        ids[target] = propose(store, clock, cluster=cluster, namespace=namespace, target=target)
    ml = Access(grants=(Grant(clusters=("prod",), namespaces=("ml",)),))
    assert [p.target for p in store.list(access=ml)] == ["nodepool/gpu", "pytorchjob/llama"]  # newest first
    team = Access(grants=(Grant(clusters=("llm-*",), namespaces=("team_*",)),))
    assert [p.target for p in store.list(access=team)] == ["job/x"]  # "_" is no wildcard
    lower = Access(grants=(Grant(clusters=("prod*",), namespaces=("*",)),))
    assert "job/z" not in {p.target for p in store.list(access=lower)}  # case-sensitive on both databases
    assert len(store.list()) == len(store.list(access=Access.everything())) == 6
    assert store.list(access=Access()) == []
    # Filtered before the limit: others' newer proposals cannot crowd out the one ml may read.
    assert [p.target for p in store.list(access=ml, limit=1)] == ["nodepool/gpu"]
    assert store.get(ids["pytorchjob/llama"], access=ml).target == "pytorchjob/llama"
    hidden = ids["pytorchjob/mixtral"]
    with pytest.raises(NotFoundError) as unreadable:
        store.get(hidden, access=ml)
    with pytest.raises(NotFoundError) as missing:
        store.get(999, access=ml)
    assert str(unreadable.value) == f"there is no proposal #{hidden}." and str(missing.value) == "there is no proposal #999."


def test_list_by_state(store, clock):
    first, second = propose(store, clock), propose(store, clock)
    store.reject(first, actor="U0BOB")
    assert [p.id for p in store.list(states=["pending"])] == [second]
    assert [p.id for p in store.list(states=("rejected", "pending"))] == [second, first]
    with pytest.raises(UserError, match="unknown proposal state 'done'"):
        store.list(states=["done"])


# -- approving ------------------------------------------------------------------------------------


def test_one_approval_claims_once_and_a_second_is_told_who(store, clock):
    pid = propose(store, clock)
    view, claimed = store.approve(pid, approver="U0BOB", needed=1)
    assert claimed and view.state == "approved" and view.decided_by == "U0BOB" and view.approvals == ("U0BOB",)
    assert view.version == 2
    with pytest.raises(ProposalConflict, match=rf"^proposal #{pid} is being applied by <@U0BOB>$") as busy:
        store.approve(pid, approver="U0CAROL", needed=1)
    assert busy.value.proposal.state == "approved"
    clock.now = clock.now.replace(hour=12, minute=3)
    store.finish(pid, ok=True, results=[{"object": "NodePool gpu", "result": "applied"}], undo=[{"undo": 1}])
    for who in ("U0BOB", "U0CAROL"):
        with pytest.raises(ProposalConflict, match=rf"^proposal #{pid} was already applied by <@U0BOB> at 12:03 UTC$"):
            store.approve(pid, approver=who, needed=1)
    clock.now += timedelta(days=1)
    with pytest.raises(ProposalConflict, match="already applied by <@U0BOB> at 2026-11-01 12:03 UTC"):
        store.approve(pid, approver="U0BOB", needed=1)
    assert store.get(pid).approvals == ("U0BOB",)  # a refused approval is not recorded


def test_two_person_rule_needs_two_distinct_approvers(store, clock):
    pid = propose(store, clock)
    view, claimed = store.approve(pid, approver="U0BOB", needed=2)
    assert not claimed and view.state == "pending" and view.approvals == ("U0BOB",)
    clock.now += timedelta(minutes=1)
    view, claimed = store.approve(pid, approver="U0BOB", needed=2)  # the same person again
    assert not claimed and view.state == "pending" and view.approvals == ("U0BOB",)
    clock.now += timedelta(minutes=1)
    view, claimed = store.approve(pid, approver="U0CAROL", needed=2)
    assert claimed and view.state == "approved" and view.decided_by == "U0CAROL"
    assert view.approvals == ("U0BOB", "U0CAROL")


def test_a_rejected_proposal_cannot_be_approved(store, clock):
    pid = propose(store, clock)
    rejected = store.reject(pid, actor="U0CAROL")
    assert rejected.state == "rejected" and rejected.decided_by == "U0CAROL" and rejected.version == 2
    with pytest.raises(ProposalConflict, match=rf"^proposal #{pid} was rejected by <@U0CAROL>$"):
        store.approve(pid, approver="U0BOB", needed=1)
    with pytest.raises(ProposalConflict, match="was rejected by <@U0CAROL>"):
        store.reject(pid, actor="U0BOB")
    assert store.get(pid).state == "rejected"


def test_an_expired_proposal_is_refused_and_stays_expired(store, clock):
    pid = propose(store, clock)
    clock.now += timedelta(minutes=30)
    store.approve(pid, approver="U0BOB", needed=2)  # at the expiry itself: still in time
    clock.now += timedelta(seconds=1)
    with pytest.raises(ProposalConflict, match=rf"^proposal #{pid} expired at 09:30 UTC: propose it again$") as late:
        store.approve(pid, approver="U0CAROL", needed=2)
    assert late.value.proposal.state == "expired"  # kept: the conflict is raised after the transaction
    assert store.get(pid).state == "expired" and store.get(pid).approvals == ("U0BOB",)
    with pytest.raises(ProposalConflict, match="expired at"):
        store.reject(pid, actor="U0CAROL")


def test_expire_due_moves_only_open_proposals_past_their_expiry(store, clock):
    due = propose(store, clock, expires_at=clock.now + timedelta(minutes=5))
    later = propose(store, clock, expires_at=clock.now + timedelta(hours=1))
    failed = propose(store, clock, expires_at=clock.now + timedelta(minutes=5))
    store.approve(failed, approver="U0BOB", needed=1)
    store.finish(failed, ok=False, results=[], undo=[])
    applied = propose(store, clock, expires_at=clock.now + timedelta(minutes=5))
    store.approve(applied, approver="U0BOB", needed=1)
    store.finish(applied, ok=True, results=[], undo=[])
    assert store.expire_due() == []
    clock.now += timedelta(minutes=10)
    assert store.expire_due() == [due, failed]
    assert store.expire_due() == []
    assert [store.get(i).state for i in (due, later, failed, applied)] == ["expired", "pending", "expired", "applied"]


# -- applying and undoing -------------------------------------------------------------------------


def test_finish_applied_and_failed(store, clock):
    pid = propose(store, clock)
    with pytest.raises(ProposalConflict, match="was not applied: it is waiting for approval"):
        store.finish(pid, ok=True, results=[], undo=[])  # nobody claimed it
    store.approve(pid, approver="U0BOB", needed=1)
    clock.now += timedelta(minutes=1)
    failed = store.finish(pid, ok=False, results=[{"object": "NodePool gpu", "result": "failed", "reason": "409"}],
                          undo=[])
    assert failed.state == "failed" and failed.applied_at is None and failed.results[0]["reason"] == "409"
    with pytest.raises(ProposalConflict, match="its apply failed; approve it again to retry"):
        store.finish(pid, ok=True, results=[], undo=[])
    # A failed apply is retryable: the next approval claims it again.
    view, claimed = store.approve(pid, approver="U0CAROL", needed=1)
    assert claimed and view.state == "approved" and view.decided_by == "U0CAROL"
    clock.now += timedelta(minutes=1)
    applied = store.finish(pid, ok=True, results=[{"object": "NodePool gpu", "result": "applied"}],
                           undo=[{"ref": "NodePool gpu", "patch": {"spec": {"disruption": None}}}])
    assert applied.state == "applied" and applied.applied_at == clock.now
    assert applied.results == [{"object": "NodePool gpu", "result": "applied"}]
    assert applied.undo == [{"ref": "NodePool gpu", "patch": {"spec": {"disruption": None}}}]
    assert applied.version == 5  # approved, failed, approved, applied
    with pytest.raises(ProposalConflict, match="already applied by <@U0CAROL>"):
        store.finish(pid, ok=True, results=[], undo=[])


def test_undo_is_claimed_once_and_a_failed_undo_can_be_tried_again(store, clock):
    pid = propose(store, clock)
    with pytest.raises(ProposalConflict, match="was not applied"):
        store.claim_undo(pid, actor="U0BOB")
    store.approve(pid, approver="U0BOB", needed=1)
    store.finish(pid, ok=True, results=[{"result": "applied"}], undo=[{"undo": 1}])
    clock.now += timedelta(minutes=5)
    undoing = store.claim_undo(pid, actor="U0DAVE")
    assert undoing.state == "undone" and undoing.undone_by == "U0DAVE" and undoing.undone_at == clock.now
    assert undoing.undo == [{"undo": 1}]
    with pytest.raises(ProposalConflict, match=rf"^proposal #{pid} was already undone by <@U0DAVE> at 09:05 UTC$"):
        store.claim_undo(pid, actor="U0BOB")
    back = store.undo_failed(pid, results=[{"result": "not restored", "reason": "403 Forbidden"}])
    assert back.state == "applied" and back.undone_by is None and back.undone_at is None
    assert back.results == [{"result": "applied"}, {"result": "not restored", "reason": "403 Forbidden"}]
    with pytest.raises(ProposalConflict, match="already applied"):
        store.undo_failed(pid, results=[])  # nothing claimed to fail
    store.claim_undo(pid, actor="U0BOB")
    done = store.finish_undo(pid, ok=True, results=[{"result": "restored"}])
    assert done.state == "undone" and done.undone_by == "U0BOB"
    assert [r["result"] for r in done.results] == ["applied", "not restored", "restored"]
    with pytest.raises(ProposalConflict, match="already undone by <@U0BOB>"):
        store.claim_undo(pid, actor="U0DAVE")


def test_messages_are_kept_once_each(store, clock):
    pid = propose(store, clock)
    store.add_message(pid, channel="C0TRAIN", ts="1767225600.000100")
    store.add_message(pid, channel="C0APPROVE", ts="1767225601.000200")
    store.add_message(pid, channel="C0TRAIN", ts="1767225600.000100")  # a retried post: still one
    assert store.get(pid).messages == (("C0TRAIN", "1767225600.000100"), ("C0APPROVE", "1767225601.000200"))
    with pytest.raises(NotFoundError):
        store.add_message(999, channel="C0TRAIN", ts="1")


# -- the incident's timeline ----------------------------------------------------------------------


def test_every_step_is_on_the_incident_timeline(store, incidents, clock):
    iid = incident(incidents)
    pid = propose(store, clock, incident_id=iid, reason=f"HF_TOKEN={HF} leaked in the job spec")
    store.approve(pid, approver="U0BOB", needed=2)
    store.approve(pid, approver="U0CAROL", needed=2)
    store.finish(pid, ok=False, results=[{"object": "NodePool gpu", "result": "failed",
                                          "reason": f"422 Unprocessable: token {HF}"}], undo=[])
    store.approve(pid, approver="U0CAROL", needed=2)
    store.finish(pid, ok=True, results=[{"object": "NodePool gpu", "result": "applied"}], undo=[{"undo": 1}])
    store.claim_undo(pid, actor="U0DAVE")
    store.undo_failed(pid, results=[{"object": "NodePool gpu", "result": "not restored"}])
    store.claim_undo(pid, actor="U0DAVE")
    store.finish_undo(pid, ok=True, results=[{"object": "NodePool gpu", "result": "restored"}])
    rejected = propose(store, clock, incident_id=iid)
    store.reject(rejected, actor="U0BOB")
    expiring = propose(store, clock, incident_id=iid)
    clock.now += timedelta(hours=1)
    assert store.expire_due() == [expiring]

    timeline = incidents.get(iid).timeline
    ours = [(e.kind, e.actor) for e in timeline if e.kind.startswith("remediation_")]
    assert ours == [
        ("remediation_proposed", "U0ALICE"), ("remediation_approved", "U0BOB"), ("remediation_approved", "U0CAROL"),
        ("remediation_failed", "U0CAROL"), ("remediation_approved", "U0CAROL"), ("remediation_applied", "U0CAROL"),
        ("remediation_undone", "U0DAVE"), ("remediation_failed", "U0DAVE"), ("remediation_undone", "U0DAVE"),
        ("remediation_undone", "U0DAVE"),
        ("remediation_proposed", "U0ALICE"), ("remediation_rejected", "U0BOB"),
        ("remediation_proposed", "U0ALICE"), ("remediation_expired", "gpubot"),
    ]
    details = {e.kind: e.detail for e in timeline}
    assert all(HF not in e.detail for e in timeline)
    proposed = next(e.detail for e in timeline if e.kind == "remediation_proposed" and e.actor == "U0ALICE")
    assert proposed.startswith(f"#{pid} nodepool-consolidation on nodepool/gpu: consolidate NodePool gpu only when empty")
    assert "[REDACTED]" in proposed
    assert "422 Unprocessable" in next(e.detail for e in timeline if e.kind == "remediation_failed")
    assert '"result":"applied"' in details["remediation_applied"]
    # The applied remediation is what the incident's history offers as the last fix, next time.
    incidents.resolve(iid, actor="U0BOB")
    recurrence = incidents.record_diagnosis(DIAGNOSIS, actor="U0ALICE", source="slack")
    assert recurrence.created and recurrence.history.last_fix.startswith(
        f"#{pid} nodepool-consolidation on nodepool/gpu: consolidate NodePool gpu only when empty")


def test_a_deleted_incident_leaves_its_proposals(engine, store, incidents, clock):
    iid = incident(incidents)
    pid = propose(store, clock, incident_id=iid)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM incidents WHERE id = :id"), {"id": iid})
    assert store.get(pid).incident_id is None
    store.approve(pid, approver="U0BOB", needed=1)  # no timeline to write to: nothing fails


# -- replicas racing --------------------------------------------------------------------------------

REPLICAS = 8
ROUNDS = 20


@pytest.fixture
def replicas(db_url, engine):
    """Eight stores, each with an engine (a connection pool) of its own, as separate replicas would be."""
    engines = [make_engine(db_url) for _ in range(REPLICAS)]
    yield [ProposalStore(e) for e in engines]
    for e in engines:
        e.dispose()


def race(replicas: list[ProposalStore], act) -> tuple[list, list[ProposalConflict]]:
    """Call ``act(store, i)`` from every replica at once; what they returned, and the conflicts."""
    barrier = threading.Barrier(len(replicas))
    won, lost, errors = [], [], []
    lock = threading.Lock()

    def run(store: ProposalStore, i: int) -> None:
        barrier.wait()
        try:
            result = act(store, i)
        except ProposalConflict as exc:
            with lock:
                lost.append(exc)
        except BaseException as exc:  # noqa: BLE001 - reported below
            with lock:
                errors.append(exc)
        else:
            with lock:
                won.append(result)

    threads = [threading.Thread(target=run, args=(s, i)) for i, s in enumerate(replicas)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return won, lost


def test_concurrent_approvals_claim_exactly_once(store, replicas):
    for _ in range(ROUNDS):
        pid = store.create(kind="cordon-gpu-node", target="node/ip-10-0-1-7", cluster="prod", namespace=None,
                           params={}, reason="Xid 79", requested_by="U0ALICE", plan=PLAN,
                           expires_at=datetime.now(timezone.utc) + timedelta(minutes=30)).id
        won, lost = race(replicas, lambda s, i: s.approve(pid, approver=f"U{i}", needed=1))
        claimed = [view for view, claimed in won if claimed]
        assert len(claimed) == 1 and len(won) + len(lost) == REPLICAS
        assert all(f"is being applied by <@{claimed[0].decided_by}>" in str(c) for c in lost)
        # And the same person clicking on every replica at once.
        pid = store.create(kind="cordon-gpu-node", target="node/ip-10-0-1-8", cluster="prod", namespace=None,
                           params={}, reason="Xid 79", requested_by="U0ALICE", plan=PLAN,
                           expires_at=datetime.now(timezone.utc) + timedelta(minutes=30)).id
        won, lost = race(replicas, lambda s, i: s.approve(pid, approver="U0BOB", needed=1))
        assert sum(claimed for _, claimed in won) == 1 and store.get(pid).approvals == ("U0BOB",)


def test_concurrent_second_approvals_never_lose_the_claim(store, replicas):
    """Two-person rule: eight different approvers at once; exactly one of them completes it."""
    for _ in range(ROUNDS):
        pid = store.create(kind="cordon-gpu-node", target="node/ip-10-0-1-7", cluster="prod", namespace=None,
                           params={}, reason="Xid 79", requested_by="U0ALICE", plan=PLAN,
                           expires_at=datetime.now(timezone.utc) + timedelta(minutes=30)).id
        won, lost = race(replicas, lambda s, i: s.approve(pid, approver=f"U{i}", needed=2))
        assert sum(claimed for _, claimed in won) == 1
        assert store.get(pid).state == "approved"


def test_concurrent_undos_claim_exactly_once(store, replicas):
    for _ in range(ROUNDS):
        pid = store.create(kind="cordon-gpu-node", target="node/ip-10-0-1-7", cluster="prod", namespace=None,
                           params={}, reason="Xid 79", requested_by="U0ALICE", plan=PLAN,
                           expires_at=datetime.now(timezone.utc) + timedelta(minutes=30)).id
        store.approve(pid, approver="U0BOB", needed=1)
        store.finish(pid, ok=True, results=[], undo=[{"undo": 1}])
        won, lost = race(replicas, lambda s, i: s.claim_undo(pid, actor=f"U{i}"))
        assert len(won) == 1 and len(lost) == REPLICAS - 1
        assert all(f"already undone by <@{won[0].undone_by}>" in str(c) for c in lost)
