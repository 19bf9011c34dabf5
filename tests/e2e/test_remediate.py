"""`gpubot remediate`: propose, approve, apply, verify, undo against the simulated cluster over HTTP,
with the policy checked for the acting user and every state in the store (SQLite and PostgreSQL).
Each person acts with their own kubeconfig (the simulator's alice and bob may approve, carol may
not): who acts is who the cluster authenticates (tests/e2e/test_remediate_identity.py says more).

Each test gets a cluster of its own (the seed where consolidation disrupts a PyTorchJob), since the
tests write to it."""
from __future__ import annotations

import json
import threading
import urllib.request

import pytest

from tests.conftest import SIM_ENV

SCENARIO = "seed-consolidation-disrupts-training"
NODEPOOL = "gpu-training"
JOB, NS = "llama-3-8b-fsdp", "llm-consolidation"
POLICY = """\
channels:
  "*": {clusters: ["*"], namespaces: []}
users:
  U0REQUESTER: {clusters: ["*"], namespaces: ["*"]}
  U0ONCALL1: {clusters: ["*"], namespaces: ["*"]}
  U0ONCALL2: {clusters: ["*"], namespaces: ["*"]}
  U0STRANGER: {clusters: ["*"], namespaces: ["*"]}
approvers:
  users: [U0ONCALL1, U0ONCALL2]
  kubernetes: {{users: [alice@example.com], groups: [sre]}}
remediations:
  expiry: {expiry}
  two_person: {two_person}
  annotate-do-not-disrupt: {{namespaces: ["llm-*"]}}
  nodepool-consolidation: {{nodepools: ["gpu-*"]}}
"""


@pytest.fixture
def world(tmp_path, monkeypatch, db_url, cli):
    from sim.serve import start_sim

    with start_sim(scenarios=[SCENARIO], ec2=False) as sim:
        monkeypatch.setenv("KUBECONFIG", str(sim.kubeconfig))
        monkeypatch.setenv("GPUBOT_DATABASE_URL", db_url)
        for key, value in SIM_ENV.items():
            monkeypatch.setenv(key, value)
        assert cli("db", "upgrade").code == 0

        def policy(*, expiry: str = "30m", two_person: bool = False) -> None:
            path = tmp_path / "policy.yaml"
            path.write_text(POLICY.replace("{expiry}", expiry).replace("{two_person}", str(two_person).lower())
                            .replace("{{", "{").replace("}}", "}"))
            monkeypatch.setenv("GPUBOT_POLICY", str(path))

        policy()
        yield World(sim=sim, cli=cli, policy=policy)


class World:
    def __init__(self, *, sim, cli, policy) -> None:
        self.sim, self.cli, self.policy = sim, cli, policy

    def run(self, *args: str, user: str | None = None):
        """``gpubot remediate ARGS --json``, as ``user``'s kubeconfig (None: the one KUBECONFIG names)."""
        who = ("--kubeconfig", str(self.sim.kubeconfig_for(user))) if user else ()
        result = self.cli("remediate", *args, *who, "--json")
        return result, (json.loads(result.out) if result.out.strip() else None)

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(f"{self.sim.url}{path}") as response:
            return json.loads(response.read())

    def nodepool(self) -> dict:
        return self.get(f"/apis/karpenter.sh/v1/nodepools/{NODEPOOL}")

    def patches(self) -> list[dict]:
        return [r for r in self.get("/sim/requests/details")["requests"] if r["method"] == "PATCH"]

    def fault(self, **spec) -> None:
        request = urllib.request.Request(f"{self.sim.url}/sim/faults", data=json.dumps(spec).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request).read()


def _propose_consolidation(world: World, user: str = "carol") -> dict:
    result, proposal = world.run("propose", "nodepool-consolidation", f"nodepool/{NODEPOOL}",
                                 "--reason", "consolidation evicts training pods", user=user)
    assert result.code == 0, result.err
    assert proposal["state"] == "pending" and proposal["requested_by"] == f"k8s:{user}@example.com"
    return proposal


def test_propose_approve_apply_undo_restores_the_object_exactly(world):
    before = world.nodepool()
    proposal = _propose_consolidation(world)
    [change] = proposal["patch"]
    assert change["patch"]["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert world.patches() == []  # proposing writes nothing

    result, applied = world.run("approve", str(proposal["id"]), user="alice")
    assert result.code == 0, result.err
    assert applied["state"] == "applied" and applied["approved_by"] == ["k8s:alice@example.com"]
    assert [r["result"] for r in applied["results"]] == ["applied"]
    assert world.nodepool()["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"
    patches = world.patches()
    assert [p["target"].endswith("dryRun=All") for p in patches] == [True, False]  # dry run first, then the write

    result, undone = world.run("undo", str(proposal["id"]), user="bob")
    assert result.code == 0, result.err
    assert undone["state"] == "undone"
    after = world.nodepool()
    assert after["spec"] == before["spec"]  # spec.disruption as it was, byte for byte
    assert json.dumps(after["spec"], sort_keys=True) == json.dumps(before["spec"], sort_keys=True)


@pytest.mark.parametrize("user, reason", [
    ("carol", "authenticates you as k8s:carol@example.com, who is not an approver"),
    ("admin", "authenticates you as k8s:gpubot-sim-admin, who is not an approver"),
])
def test_who_may_not_approve(world, user, reason):
    proposal = _propose_consolidation(world)
    result, error = world.run("approve", str(proposal["id"]), user=user)
    assert result.code == 2 and reason in error["error"]
    assert world.patches() == []
    _, shown = world.run("show", str(proposal["id"]))
    assert shown["state"] == "pending"


def test_self_approval_is_refused_unless_the_policy_allows_it(world):
    proposal = _propose_consolidation(world, user="alice")
    result, error = world.run("approve", str(proposal["id"]), user="alice")
    assert result.code == 2 and "self-approval is off" in error["error"]
    assert world.patches() == []


def test_two_person_rule(world):
    world.policy(two_person=True)
    proposal = _propose_consolidation(world)
    result, first = world.run("approve", str(proposal["id"]), user="alice")
    assert result.code == 0 and first["state"] == "pending" and "second approver" in first["message"]
    again, _ = world.run("approve", str(proposal["id"]), user="alice")  # the same person twice
    assert again.code == 0 and world.patches() == []
    result, second = world.run("approve", str(proposal["id"]), user="bob")
    assert result.code == 0 and second["state"] == "applied"
    assert second["approved_by"] == ["k8s:alice@example.com", "k8s:bob@example.com"]


def test_an_expired_proposal_is_refused(world):
    import time

    world.policy(expiry="1s")
    proposal = _propose_consolidation(world)
    time.sleep(1.2)
    result, error = world.run("approve", str(proposal["id"]), user="alice")
    assert result.code == 2 and "expired" in error["error"]
    assert world.patches() == []


def test_a_second_approval_does_not_apply_again(world):
    proposal = _propose_consolidation(world)
    assert world.run("approve", str(proposal["id"]), user="alice")[0].code == 0
    result, error = world.run("approve", str(proposal["id"]), user="bob")
    assert result.code == 2 and "already applied by k8s:alice@example.com" in error["error"]
    assert len([p for p in world.patches() if "dryRun" not in p["target"]]) == 1


def test_concurrent_approvals_apply_once(world, db_url):
    """Two replicas (their own engines and gateways) receive the same approval at the same moment."""
    from bot.errors import GpubotError
    from bot.remediation.flow import Remediator
    from bot.service import Asker, DiagnosisService
    from bot.settings import load_settings
    from bot.store import make_engine
    from bot.store.proposals import ProposalStore

    proposal = _propose_consolidation(world)
    import os

    settings = load_settings(dict(os.environ))
    replicas = [Remediator(DiagnosisService(settings), ProposalStore(make_engine(db_url))) for _ in range(4)]
    start, outcomes = threading.Barrier(len(replicas)), []

    def click(remediator, user):
        start.wait()
        try:
            outcomes.append(remediator.approve(proposal["id"], asker=Asker(user, None)).message)
        except GpubotError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=click, args=(r, f"U0ONCALL{1 + i % 2}")) for i, r in enumerate(replicas)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sum(o.startswith("applied") for o in outcomes) == 1, outcomes
    assert len([p for p in world.patches() if "dryRun" not in p["target"]]) == 1


def test_a_target_changed_since_the_proposal_stops_the_apply(world):
    proposal = _propose_consolidation(world)
    request = urllib.request.Request(
        f"{world.sim.url}/apis/karpenter.sh/v1/nodepools/{NODEPOOL}", method="PATCH",
        data=json.dumps({"spec": {"disruption": {"consolidateAfter": "5m"}}}).encode(),
        headers={"Content-Type": "application/merge-patch+json"})
    urllib.request.urlopen(request).read()  # someone edits the NodePool after the proposal
    result, failed = world.run("approve", str(proposal["id"]), user="alice")
    assert result.code == 0 and failed["state"] == "failed"
    assert "changed since the proposal" in failed["message"]
    assert len(world.patches()) == 1  # only the edit above: no dry run, no write
    assert world.nodepool()["spec"]["disruption"]["consolidateAfter"] == "5m"


def test_a_failed_write_is_reported_with_the_api_reason_and_can_be_retried(world):
    proposal = _propose_consolidation(world)
    world.fault(status=409, times=1, method="PATCH", after=1, path_contains=f"/nodepools/{NODEPOOL}")
    result, failed = world.run("approve", str(proposal["id"]), user="alice")
    assert result.code == 0 and failed["state"] == "failed"
    [outcome] = failed["results"]
    assert outcome["result"] == "failed" and "(409)" in outcome["reason"]
    result, retried = world.run("approve", str(proposal["id"]), user="alice")
    assert result.code == 0 and retried["state"] == "applied"


def test_a_forbidden_write_stops_at_the_dry_run(world):
    proposal = _propose_consolidation(world)
    world.fault(status=403, times=1, method="PATCH", path_contains=f"/nodepools/{NODEPOOL}")
    result, failed = world.run("approve", str(proposal["id"]), user="alice")
    assert failed["state"] == "failed" and "dry run refused" in failed["message"]
    assert failed["results"][0]["result"] == "dry run refused"


def test_annotate_a_job_and_its_pods_then_undo(world):
    result, proposal = world.run("propose", "annotate-do-not-disrupt", f"pytorchjob/{JOB}", "-n", NS,
                                 user="carol")
    assert result.code == 0, result.err
    objects = [c["object"]["kind"] for c in proposal["patch"]]
    assert objects[0] == "PyTorchJob" and set(objects[1:]) == {"Pod"}
    result, applied = world.run("approve", str(proposal["id"]), user="alice")
    assert applied["state"] == "applied", applied
    pods = world.get(f"/api/v1/namespaces/{NS}/pods")["items"]
    annotated = [p for p in pods if (p["metadata"].get("annotations") or {}).get("karpenter.sh/do-not-disrupt") == "true"]
    assert len(annotated) == len(objects) - 1
    result, undone = world.run("undo", str(proposal["id"]), user="alice")
    assert undone["state"] == "undone", undone
    pods = world.get(f"/api/v1/namespaces/{NS}/pods")["items"]
    assert not any("karpenter.sh/do-not-disrupt" in (p["metadata"].get("annotations") or {}) for p in pods)


@pytest.mark.parametrize("args, message", [
    (("propose", "nodepool-consolidation", "nodepool/cpu-general"), "not allowed by gpubot's policy"),
    (("propose", "annotate-do-not-disrupt", "pytorchjob/x", "-n", "kube-system"), "not allowed by gpubot's policy"),
    (("propose", "nodepool-consolidation", "pytorchjob/x"), "takes nodepool/NAME"),
    (("propose", "nodepool-consolidation", f"nodepool/{NODEPOOL}", "--by", "U0REQUESTER"),
     "--by no longer names a Slack user"),
    (("approve", "999999"), "there is no proposal #999999"),
])
def test_refusals_are_one_line_and_change_nothing(world, args, message):
    result, error = world.run(*args, user="carol")
    assert result.code == 2 and message in error["error"], (result.err, error)
    assert len(result.err.strip().splitlines()) == 1
    assert world.patches() == []
