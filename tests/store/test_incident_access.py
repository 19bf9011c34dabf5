"""The incident store shows and accepts only what the asker may read (SQLite and PostgreSQL)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from bot.errors import NotFoundError, UserError
from bot.policy.model import Access, Grant
from bot.store import IncidentStore
from playbooks.model import Diagnosis, Evidence, Finding, Target

# (cluster, namespace, kind, name, code): namespace None is a cluster-scoped target.
TARGETS = [
    ("prod", "ml", "pytorchjob", "llama", "karpenter.disruption"),
    ("prod", "research", "pytorchjob", "mixtral", "training.cuda_oom"),
    ("prod", None, "nodepool", "gpu", "karpenter.disruption"),
    ("llm-east", "ml", "pytorchjob", "qwen", "training.cuda_oom"),
    ("llm-west", "team_a", "pod", "notebook", "image.slow_pull"),
    ("llm-west", "teamxa", "pod", "notebook", "image.slow_pull"),
    ("llm-west", "a%b", "pod", "sweep", "image.slow_pull"),
    ("llm-west", "axb", "pod", "sweep", "image.slow_pull"),
    ("llm-west", None, "node", "ip-10-0-1-7", "karpenter.disruption"),
    ("Prod-EU", "ml", "pod", "eval", "training.cuda_oom"),
    ("prod-eu", "ml", "pod", "eval", "training.cuda_oom"),
    ("gpu[1]", "ml", "pod", "bench", "image.slow_pull"),
    ("gpu1", "ml", "pod", "bench", "image.slow_pull"),
    ("staging", "ml", "job", "smoke", "karpenter.disruption"),
]


def label(cluster: str, namespace: str | None, name: str) -> str:
    return f"{cluster}/{namespace or '-'}/{name}"


def diagnosis(cluster: str, namespace: str | None, kind: str, name: str, code: str) -> Diagnosis:
    finding = Finding(code, "error", "high", f"{code} on {name}", "detail", [Evidence("event x", "Back-off pulling image")])
    return Diagnosis(Target(kind, name, namespace), f"summary of {code}", [finding], cluster=cluster)


@pytest.fixture
def store(engine, clock):
    return IncidentStore(engine, clock=clock)


@pytest.fixture
def recorded(store, clock):
    """label -> incident id, one incident per target."""
    ids = {}
    for cluster, namespace, kind, name, code in TARGETS:
        clock.now += timedelta(minutes=1)
        rec = store.record_diagnosis(diagnosis(cluster, namespace, kind, name, code), actor="U0ALICE", source="slack")
        ids[label(cluster, namespace, name)] = rec.incident.id
    return ids


def visible(store: IncidentStore, access: Access | None, *, status: str = "all", limit: int = 50) -> set[str]:
    return {label(i.cluster, i.namespace, i.target_name) for i in store.list(status=status, limit=limit, access=access)}


def access(*grants: Grant) -> Access:
    return Access(grants=grants)


EVERY = {label(c, n, name) for c, n, _, name, _ in TARGETS}


@pytest.mark.parametrize("who, expected", [
    (access(Grant(clusters=("prod",), namespaces=("ml",))), {"prod/ml/llama", "prod/-/gpu"}),
    (access(Grant(clusters=("llm-*",), namespaces=("*",))),
     {"llm-east/ml/qwen", "llm-west/team_a/notebook", "llm-west/teamxa/notebook", "llm-west/a%b/sweep",
      "llm-west/axb/sweep", "llm-west/-/ip-10-0-1-7"}),
    (access(Grant(clusters=("*",), namespaces=("ml",))),
     {"prod/ml/llama", "prod/-/gpu", "llm-east/ml/qwen", "llm-west/-/ip-10-0-1-7", "Prod-EU/ml/eval",
      "prod-eu/ml/eval", "gpu[1]/ml/bench", "gpu1/ml/bench", "staging/ml/smoke"}),
    (access(Grant(clusters=("*",), namespaces=("*",))), EVERY),
    # No namespaces: the cluster's nodes and NodePools only.
    (access(Grant(clusters=("prod", "llm-west"))), {"prod/-/gpu", "llm-west/-/ip-10-0-1-7"}),
    # Two grants (channel and person): the union.
    (access(Grant(clusters=("prod",), namespaces=("research",)), Grant(clusters=("llm-*",), namespaces=("team_*",))),
     {"prod/research/mixtral", "prod/-/gpu", "llm-west/team_a/notebook", "llm-west/-/ip-10-0-1-7"}),
    (Access.everything(), EVERY),
    (None, EVERY),
    (Access(), set()),
    (access(Grant(clusters=(), namespaces=("*",))), set()),
], ids=["exact", "llm-glob", "any-cluster-ml", "star", "no-namespaces", "union", "unrestricted", "cli", "no-grants",
        "no-clusters"])
def test_list_shows_exactly_what_may_be_read(store, recorded, who, expected):
    assert visible(store, who) == expected


@pytest.mark.parametrize("who, expected", [
    # "_" and "%" are names' own characters, never SQL wildcards.
    (access(Grant(clusters=("llm-west",), namespaces=("team_*",))), {"llm-west/team_a/notebook", "llm-west/-/ip-10-0-1-7"}),
    (access(Grant(clusters=("llm-west",), namespaces=("team_a",))), {"llm-west/team_a/notebook", "llm-west/-/ip-10-0-1-7"}),
    (access(Grant(clusters=("llm-west",), namespaces=("a%*",))), {"llm-west/a%b/sweep", "llm-west/-/ip-10-0-1-7"}),
    (access(Grant(clusters=("llm_west", "llm%"), namespaces=("*",))), set()),
    # Nor are SQLite's GLOB characters.
    (access(Grant(clusters=("gpu[*",), namespaces=("*",))), {"gpu[1]/ml/bench"}),
    (access(Grant(clusters=("gpu?",), namespaces=("*",))), set()),
    # Cluster and namespace names are compared case-sensitively, on SQLite too.
    (access(Grant(clusters=("Prod-*",), namespaces=("*",))), {"Prod-EU/ml/eval"}),
    (access(Grant(clusters=("prod-*",), namespaces=("*",))), {"prod-eu/ml/eval"}),
    (access(Grant(clusters=("Prod-EU",), namespaces=("ml",))), {"Prod-EU/ml/eval"}),
    (access(Grant(clusters=("PROD", "PROD*"), namespaces=("*",))), set()),
    (access(Grant(clusters=("prod",), namespaces=("ML", "M*"))), {"prod/-/gpu"}),
], ids=["underscore-glob", "underscore-exact", "percent", "sql-wildcards-in-clusters", "bracket", "question-mark",
        "capital-glob", "lower-glob", "capital-exact", "upper-misses", "namespace-case"])
def test_patterns_match_literally_and_case_sensitively(store, recorded, who, expected):
    assert visible(store, who) == expected
    # The SQL condition selects exactly what the policy's own check allows.
    assert expected == {name for name in EVERY if who.may_read(*_cluster_namespace(name))}


def _cluster_namespace(name: str) -> tuple[str, str | None]:
    cluster, namespace, _ = name.split("/")
    return cluster, None if namespace == "-" else namespace


def test_reads_and_actions_on_an_unreadable_incident_look_like_a_missing_one(store, recorded, engine):
    ml_only = access(Grant(clusters=("prod",), namespaces=("ml",)))
    hidden, missing = recorded["prod/research/mixtral"], max(recorded.values()) + 1000
    before = _row(engine, hidden)
    calls = {
        "get": lambda i: store.get(i, access=ml_only),
        "acknowledge": lambda i: store.acknowledge(i, actor="U0MALLORY", access=ml_only),
        "resolve": lambda i: store.resolve(i, actor="U0MALLORY", resolution="done", access=ml_only),
    }
    for name, call in calls.items():
        with pytest.raises(UserError) as refused:
            call(hidden)
        with pytest.raises(UserError) as absent:
            call(missing)
        assert type(refused.value) is type(absent.value) is NotFoundError, name
        assert str(refused.value) == str(absent.value).replace(f"#{missing}", f"#{hidden}"), name
        assert refused.value.suggestions == absent.value.suggestions == [], name
    assert _row(engine, hidden) == before
    assert [e.kind for e in store.get(hidden).timeline] == ["diagnosis"]


def test_a_resolved_unreadable_incident_is_still_just_missing(store, recorded):
    hidden = recorded["staging/ml/smoke"]
    store.resolve(hidden, actor="U0ONCALL")
    with pytest.raises(NotFoundError, match=f"there is no incident #{hidden}"):
        store.acknowledge(hidden, actor="U0MALLORY", access=access(Grant(clusters=("prod",), namespaces=("*",))))


def test_a_readable_incident_reads_and_acts_as_without_a_policy(store, recorded):
    team = access(Grant(clusters=("llm-*",), namespaces=("team_*",)))
    for key in ("llm-west/team_a/notebook", "llm-west/-/ip-10-0-1-7"):
        assert store.get(recorded[key], access=team) == store.get(recorded[key])
    acked = store.acknowledge(recorded["llm-west/team_a/notebook"], actor="U0BOB", access=team)
    assert acked.status == "acknowledged" and acked.acknowledged_by == "U0BOB"
    resolved = store.resolve(recorded["llm-west/-/ip-10-0-1-7"], actor="U0BOB", access=team)
    assert resolved.status == "resolved"
    assert {i.status for i in store.list(status="all", access=team)} == {"acknowledged", "resolved"}
    assert visible(store, team, status="open") == {"llm-west/team_a/notebook"}


def test_counts_by_code_count_only_readable_incidents(store, recorded):
    assert store.counts_by_code() == {"karpenter.disruption": 4, "training.cuda_oom": 4, "image.slow_pull": 6}
    assert store.counts_by_code(access=access(Grant(clusters=("prod",), namespaces=("ml",)))) == {"karpenter.disruption": 2}
    assert store.counts_by_code(access=access(Grant(clusters=("llm-*",)))) == {"karpenter.disruption": 1}
    assert store.counts_by_code(access=Access()) == {}


def test_limit_applies_to_what_may_be_read(store, recorded, clock):
    for n in range(30):  # another team's newer incidents
        clock.now += timedelta(minutes=1)
        store.record_diagnosis(diagnosis("batch", "etl", "job", f"load-{n}", "image.slow_pull"), actor="U", source="sweep")
    prod_ml = access(Grant(clusters=("prod",), namespaces=("ml",)))
    assert visible(store, prod_ml, limit=2) == {"prod/ml/llama", "prod/-/gpu"}
    assert {i.cluster for i in store.list(status="all", limit=2)} == {"batch"}
    assert len(store.list(status="open", limit=25, access=access(Grant(clusters=("batch",), namespaces=("*",))))) == 25


def test_what_people_type_and_diagnoses_are_stored_redacted(store, recorded, engine):
    key = recorded["prod/ml/llama"]
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    view = store.resolve(key, actor="U0ONCALL", resolution=f"rotated AWS_SECRET_ACCESS_KEY={secret}",
                         access=access(Grant(clusters=("prod",), namespaces=("ml",))))
    assert view.resolution == "rotated AWS_SECRET_ACCESS_KEY=[REDACTED]"
    token = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"
    leaky = Diagnosis(Target("pod", "notifier", "ml"), f"notify via {token} failed",
                      [Finding("training.cuda_oom", "error", "high", f"token {token}", "d",
                               [Evidence(f"env {token}", f"SLACK_BOT_TOKEN={token}")])], cluster="prod")
    store.record_diagnosis(leaky, actor="U0ALICE", source="slack")
    store.add_timeline(key, kind="remediation_applied", actor="U0ONCALL", detail=f"used {token}")
    with engine.connect() as conn:
        stored = " ".join(str(v) for table in ("incidents", "diagnosis_runs", "findings", "timeline")
                          for row in conn.execute(text(f"SELECT * FROM {table}")) for v in row)
    assert secret not in stored
    assert token not in stored
    assert "token [REDACTED]" in stored  # the incident's title, from the first finding
    assert "rotated AWS_SECRET_ACCESS_KEY=[REDACTED]" in stored
    assert "notify via [REDACTED] failed" in stored and "SLACK_BOT_TOKEN=[REDACTED]" in stored


def _row(engine, incident_id: int) -> tuple:
    with engine.connect() as conn:
        incident = conn.execute(text("SELECT * FROM incidents WHERE id = :i"), {"i": incident_id}).one()
        timeline = conn.execute(text("SELECT COUNT(*) FROM timeline WHERE incident_id = :i"), {"i": incident_id}).scalar()
    return tuple(incident), timeline
