"""Who `gpubot remediate` acts as: the user the cluster authenticates for the kubeconfig in use
(SelfSubjectReview, over HTTP against the simulator), never an id typed on the command line.

The simulator's people (sim/kubeconfig.py): alice (approver by name), bob (approver through his group
``sre``), carol (no approver rights); each has a kubeconfig of their own, same context, own token.
"""
from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import SIM_ENV, run_cli
from tests.slack.approval_world import (  # noqa: F401 - fixtures
    APPROVER, GROUP, NS, ONCALL, REQUESTER, TEAM, World, approval_world, h100_sim, world,
)
from tests.slack.test_approval_flow import APPROVE_TEXT, applied_once, approve, nothing_written

SCENARIO = "seed-consolidation-disrupts-training"
NODEPOOL = "gpu-training"
POLICY = """\
channels:
  "*": {clusters: ["*"], namespaces: []}
approvers:
  users: [U0ONCALL1]
  kubernetes: {users: [alice@example.com], groups: [sre]}
remediations:
  two_person: TWO_PERSON
  nodepool-consolidation: {nodepools: ["gpu-*"]}
"""
ALICE, BOB, CAROL = "k8s:alice@example.com", "k8s:bob@example.com", "k8s:carol@example.com"


class Cli:
    def __init__(self, sim, tmp_path) -> None:
        self.sim, self.tmp_path = sim, tmp_path

    def run(self, *args: str, user: str | None = "carol", kubeconfig=None):
        path = kubeconfig or self.sim.kubeconfig_for(user)
        result = run_cli("remediate", *args, "--kubeconfig", str(path), "--json")
        return result, (json.loads(result.out) if result.out.strip() else None)

    def propose(self, user: str = "carol") -> dict:
        result, proposal = self.run("propose", "nodepool-consolidation", f"nodepool/{NODEPOOL}", user=user)
        assert result.code == 0, result.err
        return proposal

    def show(self, proposal_id: int) -> dict:
        result, shown = self.run("show", str(proposal_id))
        assert result.code == 0, result.err
        return shown

    def writes(self) -> list[dict]:
        return [r for r in self.sim.request_details() if r["method"] == "PATCH"]

    def reviews(self) -> list[str]:
        return [line for line in self.sim.request_log() if "selfsubjectreviews" in line]

    def kubeconfig_copy(self, user: str, *, entry: str | None = None, token: str | None = "keep") -> str:
        """``user``'s kubeconfig with its user entry renamed (``entry``) or its token replaced (None: no token)."""
        doc = yaml.safe_load(self.sim.kubeconfig_for(user).read_text())
        if entry is not None:
            doc["users"][0]["name"] = entry
            doc["contexts"][0]["context"]["user"] = entry
        if token != "keep":
            doc["users"][0]["user"] = {"token": token} if token else {}
        path = self.tmp_path / f"kubeconfig-{user}-{entry}-{token}"
        path.write_text(yaml.safe_dump(doc))
        return str(path)


@pytest.fixture
def cli(tmp_path, monkeypatch, db_url):
    from sim.serve import start_sim

    with start_sim(scenarios=[SCENARIO], ec2=False) as sim:
        monkeypatch.setenv("GPUBOT_DATABASE_URL", db_url)
        for key, value in SIM_ENV.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("KUBECONFIG", raising=False)
        assert run_cli("db", "upgrade").code == 0
        path = tmp_path / "policy.yaml"
        path.write_text(POLICY.replace("TWO_PERSON", "true"))
        monkeypatch.setenv("GPUBOT_POLICY", str(path))
        yield Cli(sim, tmp_path)


def test_an_approval_records_the_user_the_cluster_authenticated(cli):
    proposal = cli.propose()
    assert proposal["requested_by"] == CAROL and proposal["acting_as"] == CAROL
    result, approved = cli.run("approve", str(proposal["id"]), user="alice")
    assert result.code == 0, result.err
    assert approved["acting_as"] == ALICE and approved["approved_by"] == [ALICE]
    # One SelfSubjectReview per action, each sent with that person's own credentials.
    assert cli.reviews() == ["POST /apis/authentication.k8s.io/v1/selfsubjectreviews 201"] * 2


def test_one_kubeconfig_user_cannot_make_two_approvals_whatever_the_flags(cli):
    proposal = cli.propose()
    pid = str(proposal["id"])
    assert cli.run("approve", pid, user="alice")[0].code == 0
    # The same person again: another spelling of their kubeconfig, --by naming someone else, or
    # naming themselves. The cluster says alice each time, so it stays one approval.
    renamed = cli.kubeconfig_copy("alice", entry="bob")
    attempts = [
        ((), {"user": "alice"}),
        ((), {"kubeconfig": renamed}),
        (("--by", "bob@example.com"), {"user": "alice"}),
        (("--by", "k8s:bob@example.com"), {"kubeconfig": renamed}),
        (("--by", "U0ONCALL1"), {"user": "alice"}),
        (("--by", "alice@example.com"), {"user": "alice"}),
    ]
    for flags, how in attempts:
        result, answer = cli.run("approve", pid, *flags, **how)
        if "--by" in flags and "alice" not in flags[1]:
            assert result.code == 2 and "is not who cluster gpubot-sim authenticates" in answer["error"], answer
            assert len(result.err.strip().splitlines()) == 1
        else:
            assert result.code == 0 and answer["state"] == "pending" and "(1 of 2)" in answer["message"], answer
    shown = cli.show(int(pid))
    assert shown["state"] == "pending" and shown["approved_by"] == [ALICE]
    assert cli.writes() == []


def test_two_people_with_their_own_kubeconfigs_apply_it(cli):
    proposal = cli.propose()
    assert cli.run("approve", str(proposal["id"]), user="alice")[1]["state"] == "pending"
    result, applied = cli.run("approve", str(proposal["id"]), user="bob")  # bob: by his group
    assert result.code == 0, result.err
    assert applied["state"] == "applied" and applied["approved_by"] == [ALICE, BOB]
    assert [w["target"].endswith("dryRun=All") for w in cli.writes()] == [True, False]


@pytest.mark.parametrize("user", ["carol", "admin"])
def test_a_user_not_among_the_approvers_is_refused_in_one_line(cli, user):
    proposal = cli.propose(user="alice")
    result, error = cli.run("approve", str(proposal["id"]), user=user)
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert error["error"].startswith("cluster gpubot-sim authenticates you as k8s:")
    assert "who is not an approver in gpubot's policy (approvers.kubernetes)" in error["error"]
    assert cli.show(proposal["id"])["approved_by"] == [] and cli.writes() == []


def test_self_approval_follows_the_authenticated_requester(cli):
    proposal = cli.propose(user="alice")
    result, error = cli.run("approve", str(proposal["id"]), "--by", "alice@example.com", user="alice")
    assert result.code == 2 and "self-approval is off" in error["error"]
    assert cli.show(proposal["id"])["approved_by"] == []


def _break_reviews(cli: Cli, how: str) -> None:
    cluster = cli.sim.cluster
    if how == "forbidden":
        cluster.forbid(["create authentication.k8s.io/selfsubjectreviews"])
    elif how == "not served":
        cluster.authentication.versions = ()


@pytest.mark.parametrize("how, message, statuses", [
    ("forbidden", "cluster gpubot-sim refused to say who you are (403 forbidden on selfsubjectreviews)", [403]),
    ("not served", "cluster gpubot-sim cannot tell who you are (SelfSubjectReview unavailable): CLI approvals are "
                   "refused", [404, 404]),
])
def test_a_cluster_that_cannot_say_who_you_are_gets_no_approval(cli, how, message, statuses):
    proposal = cli.propose()
    cli.sim.reset_requests()
    _break_reviews(cli, how)
    for command in ("approve", "reject", "undo"):
        result, error = cli.run(command, str(proposal["id"]), user="alice")
        assert result.code == 2 and error["error"].startswith(message), error
        assert len(result.err.strip().splitlines()) == 1
    result, error = cli.run("propose", "nodepool-consolidation", f"nodepool/{NODEPOOL}", user="alice")
    assert result.code == 2 and error["error"].startswith(message)
    assert [int(line.rsplit(" ", 1)[1]) for line in cli.reviews()] == statuses * 4
    listed = json.loads(run_cli("remediate", "list", "--json").out)
    assert [(p["id"], p["state"], p["approved_by"]) for p in listed] == [(proposal["id"], "pending", [])]
    assert cli.writes() == []


def test_a_cluster_serving_only_v1beta1_still_says_who_you_are(cli):
    cli.sim.cluster.authentication.versions = ("v1beta1",)
    proposal = cli.propose()
    result, approved = cli.run("approve", str(proposal["id"]), user="alice")
    assert result.code == 0 and approved["approved_by"] == [ALICE]
    assert [line.rsplit(" ", 1)[1] for line in cli.reviews()] == ["404", "201"] * 2


@pytest.mark.parametrize("token, message", [
    ("not-a-token-anyone-was-given", "did not accept your kubeconfig's credentials (401 unauthorized)"),
    (None, "does not know who you are (it answers system:anonymous)"),
])
def test_credentials_the_cluster_does_not_accept_get_no_approval(cli, token, message):
    proposal = cli.propose()
    result, error = cli.run("approve", str(proposal["id"]), kubeconfig=cli.kubeconfig_copy("alice", token=token))
    assert result.code == 2 and message in error["error"] and len(result.err.strip().splitlines()) == 1
    assert cli.show(proposal["id"])["approved_by"] == [] and cli.writes() == []


# -- Slack and the command line on one proposal -----------------------------------------------------

SLACK_AND_CLI_POLICY = f"""\
channels:
  {TEAM}:   {{clusters: ["*"], namespaces: [{NS}]}}
  {ONCALL}: {{clusters: ["*"], namespaces: ["*"]}}
approvers:
  users: [{APPROVER}]
  usergroups: [{GROUP}]
  channel: {ONCALL}
  kubernetes: {{users: [alice@example.com]}}
remediations:
  two_person: true
  annotate-do-not-disrupt: {{namespaces: ["foundation-*"]}}
  nodepool-consolidation: {{nodepools: ["gpu-*"]}}
"""


def test_a_slack_approver_and_a_cli_approver_are_two_people(world: World, monkeypatch):
    with world.serve(policy=SLACK_AND_CLI_POLICY) as bot:
        posted = world.request(bot, user=REQUESTER)
        heard = approve(world, posted, bot=bot)
        assert len(heard) == 1 and "(1 of 2)" in heard[0], heard
        nothing_written(world)
        policy = world.state / "policy-slack-and-cli.yaml"
        policy.write_text(SLACK_AND_CLI_POLICY)
        monkeypatch.setenv("GPUBOT_DATABASE_URL", world.database)
        monkeypatch.setenv("GPUBOT_POLICY", str(policy))
        result = run_cli("remediate", "approve", str(posted.id), "--kubeconfig",
                         str(world.sim.kubeconfig_for("alice")), "--json")
        assert result.code == 0, result.err
        answer = json.loads(result.out)
        assert answer["state"] == "applied" and answer["approved_by"] == [APPROVER, ALICE], answer
    applied_once(world)
    # The Slack approver cannot then count twice by clicking again: it is applied.
    assert world.nodepool()["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty"


def test_a_cli_approver_then_a_slack_approver(world: World, monkeypatch):
    with world.serve(policy=SLACK_AND_CLI_POLICY) as bot:
        posted = world.request(bot, user=REQUESTER)
        policy = world.state / "policy-cli-then-slack.yaml"
        policy.write_text(SLACK_AND_CLI_POLICY)
        monkeypatch.setenv("GPUBOT_DATABASE_URL", world.database)
        monkeypatch.setenv("GPUBOT_POLICY", str(policy))
        result = run_cli("remediate", "approve", str(posted.id), "--kubeconfig",
                         str(world.sim.kubeconfig_for("alice")), "--json")
        assert result.code == 0 and json.loads(result.out)["state"] == "pending", result.err
        nothing_written(world)
        assert approve(world, posted, bot=bot) == [APPROVE_TEXT.format(id=posted.id)]
    applied_once(world)


def test_long_or_odd_usernames_stay_distinct_and_fit_the_store(cli, monkeypatch):
    """EKS names IAM roles by ARN: longer than the 64-character approver column once prefixed. Two
    that differ only at the end must stay two people, and markup in a name never reaches Slack text."""
    from sim.authn import UserInfo

    role = "arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_PlatformEngineers_0123456789abcdef"
    names = [f"{role}/alice@example.com", f"{role}/bob@example.com", "<!channel> https://evil.example|x"]
    for i, name in enumerate(names):
        cli.sim.cluster.authentication.add_token(f"sim-long-{i}", UserInfo(name, ()))
    policy = cli.tmp_path / "policy-long.yaml"
    policy.write_text(POLICY.replace("TWO_PERSON", "true").replace("users: [alice@example.com]",
                                                                  "users: " + json.dumps(names)))
    monkeypatch.setenv("GPUBOT_POLICY", str(policy))
    proposal = cli.propose()
    answers = [cli.run("approve", str(proposal["id"]), kubeconfig=cli.kubeconfig_copy("alice", token=f"sim-long-{i}"))
               for i in (2, 0, 1)]
    assert [result.code for result, _ in answers] == [0, 0, 2], [result.err for result, _ in answers]
    applied = answers[1][1]
    assert applied["state"] == "applied" and len(applied["approved_by"]) == 2
    odd, first = applied["approved_by"]
    assert len({odd, first}) == 2 and all(len(a) <= 64 and a.startswith("k8s:") for a in (odd, first))
    assert not any(c in odd for c in "<>|! ") and first.startswith("k8s:arn:aws:sts::111122223333:")
    # The third (bob's ARN) came too late: the proposal was applied, and it says by whom.
    assert "already applied by k8s:arn:aws:sts::111122223333:" in answers[2][1]["error"]
