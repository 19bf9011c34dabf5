"""The world the policy tests run in: two teams sharing one simulated cluster, a narrow policy file,
and gpubot served over HTTP against the fake Slack Web API, its incidents on SQLite or PostgreSQL.

Team A reads ``vision-train`` from channel C0VISION; team B reads ``llm-*`` (llm-prod, llm-research)
from C0LLM; every other channel reads the cluster's nodes and NodePools only. U0ADMIN reads
everything from anywhere. The scenario (fixtures/policy-world/two-teams.yaml) gives each namespace
something to ask about, a name that exists in two namespaces, and a trainer in llm-prod whose
environment and log hold credentials.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from bot.payloads import Signer
from tests import pg
from tests.fakes.slack_api import Call
from tests.slack.conftest import Bot

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "policy-world"
SCENARIO = "two-teams"
BACKENDS = ["sqlite", "postgresql"]
# A known key, so a test can seal values as gpubot would (a value the bot sent, or one forged by someone
# holding the key) and show that a valid seal alone is not enough.
BUTTON_KEY = "policy-tests-button-key-0123456789abcdef"
# A context in gpubot's kubeconfig that no channel is granted; and one that is in no kubeconfig.
OTHER_CONTEXT = "staging-east"
UNKNOWN_CONTEXT = "nowhere-east"

VISION, LLM, ELSEWHERE = "C0VISION", "C0LLM", "C0RANDOM"
ALICE, BOB, ADMIN = "U0ALICE", "U0BOB", "U0ADMIN"  # team A, team B, the platform admin

# What mixtral-sft-0 (llm-prod) carries in its env and log; none may reach Slack or the database.
SECRETS = (
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "xoxb-2716384950-5823916374-q1w2e3r4t5y6u7i8o9p0",
    "hunter2hunter2",
    "hf_LeakedInTheSameLine0123456789abcdefg",
)


def policy_text(context: str, *, vision_namespaces: tuple[str, ...] = ("vision-train",)) -> str:
    listed = ", ".join(vision_namespaces)
    return f"""\
channels:
  {VISION}: {{clusters: [{context}], namespaces: [{listed}], default_namespace: vision-train}}
  {LLM}:    {{clusters: [{context}], namespaces: ["llm-*"], default_namespace: llm-prod}}
  "*":      {{clusters: [{context}], namespaces: []}}
users:
  {ADMIN}: {{clusters: ["*"], namespaces: ["*"]}}
approvers: {{users: [U0ONCALL]}}
remediations:
  annotate-do-not-disrupt: {{namespaces: ["llm-*"]}}
  nodepool-consolidation: {{nodepools: ["gpu-*"]}}
"""


def write_atomically(path: Path, text: str) -> None:
    """As a ConfigMap update does: a new file renamed over the old one."""
    tmp = path.with_name(f".{path.name}.new")
    tmp.write_text(text)
    os.replace(tmp, path)


@dataclass
class World:
    bot: Bot
    sim: object  # sim.serve.SimHandle
    context: str
    database: str
    policy_path: Path
    kubeconfig: Path

    @property
    def slack(self):
        return self.bot.slack

    def signer(self, *, ttl: float = 7 * 24 * 3600.0, clock=None) -> Signer:
        """A signer holding gpubot's own key (``clock``: when it believes it is)."""
        return Signer(BUTTON_KEY.encode(), ttl=ttl, **({"clock": clock} if clock else {}))

    def fresh(self) -> None:
        """Let the bot finish, check nothing it sent so far holds a secret, and forget it."""
        self.bot.settle()
        assert_no_secret(self.slack.calls())
        self.slack.reset()
        self.sim.reset_requests()


def dumped(calls: list[Call]) -> str:
    return json.dumps([c.args for c in calls], ensure_ascii=False)


def assert_no_secret(calls: list[Call]) -> None:
    text = dumped(calls)
    leaked = [s for s in SECRETS if s in text]
    assert leaked == [], f"sent to Slack: {leaked}"


def kubeconfig_with_another_context(source: Path, target: Path) -> Path:
    """The sim's kubeconfig plus a second context that no policy grant names."""
    doc = yaml.safe_load(source.read_text())
    doc["clusters"].append({"name": OTHER_CONTEXT, "cluster": {"server": "https://staging-east.internal.example:6443"}})
    doc["users"].append({"name": OTHER_CONTEXT, "user": {"token": "staging-token"}})
    doc["contexts"].append({"name": OTHER_CONTEXT, "context": {"cluster": OTHER_CONTEXT, "user": OTHER_CONTEXT}})
    target.write_text(yaml.safe_dump(doc, sort_keys=False))
    return target


@pytest.fixture(scope="module")
def two_teams_sim():
    from sim.serve import start_sim

    with start_sim(directory=FIXTURES, scenarios=[SCENARIO]) as sim:
        yield sim


@pytest.fixture(scope="module", params=BACKENDS)
def policy_world(request, two_teams_sim, tmp_path_factory):
    """gpubot with the two-team policy, its incidents on SQLite or PostgreSQL (a fresh database each)."""
    state = tmp_path_factory.mktemp(f"policy-{request.param}")
    if request.param == "sqlite":
        from tests.slack.conftest import migrated_sqlite

        yield from _served(two_teams_sim, state, migrated_sqlite(state / "gpubot.db"))
        return
    with pg.fresh_database() as url:
        from bot.store import make_engine, migrate

        engine = make_engine(url)
        migrate.upgrade(engine)
        engine.dispose()
        yield from _served(two_teams_sim, state, url)


def _served(sim, state: Path, database: str):
    from bot.app import create_app
    from bot.http_server import SlackHttpServer
    from bot.settings import load_settings
    from tests.conftest import SIM_ENV
    from tests.fakes import workspace as ws
    from tests.fakes.signing import SlackRequests
    from tests.fakes.slack_api import FakeSlack
    from tests.slack.conftest import bot_env

    context = yaml.safe_load(Path(sim.kubeconfig).read_text())["current-context"]
    kubeconfig = kubeconfig_with_another_context(Path(sim.kubeconfig), state / "kubeconfig")
    policy_path = state / "policy.yaml"
    policy_path.write_text(policy_text(context))
    with pytest.MonkeyPatch.context() as mp, FakeSlack() as slack:
        for key, value in SIM_ENV.items():
            mp.setenv(key, value)  # boto3 reads credentials from the environment
        settings = load_settings(bot_env(sim, slack, KUBECONFIG=str(kubeconfig), GPUBOT_DATABASE_URL=database,
                                         GPUBOT_POLICY=str(policy_path), GPUBOT_CHANNEL_NAMESPACES="",
                                         GPUBOT_BUTTON_KEY=BUTTON_KEY))
        app = create_app(settings)
        server = SlackHttpServer(app, host="127.0.0.1", port=0).start()
        try:
            bot = Bot(slack, SlackRequests(f"http://127.0.0.1:{server.port}", secret=ws.SIGNING_SECRET), server, app)
            yield World(bot=bot, sim=sim, context=context, database=database, policy_path=policy_path,
                        kubeconfig=kubeconfig)
        finally:
            server.stop()


@pytest.fixture
def world(policy_world):
    policy_world.fresh()
    yield policy_world
    policy_world.bot.settle()
    assert_no_secret(policy_world.slack.calls())
