"""The Slack app in HTTP mode against the fake Slack Web API and the simulated cluster, all over
real HTTP on loopback: signed requests in, Web API calls out."""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass

import pytest
from slack_bolt import App

from bot.app import create_app, work_pool
from bot.http_server import SlackHttpServer
from bot.settings import load_settings
from tests.conftest import SIM_ENV
from tests.fakes import workspace as ws
from tests.fakes.block_kit_limits import problems
from tests.fakes.signing import SlackRequests
from tests.fakes.slack_api import FakeSlack


@dataclass
class Bot:
    slack: FakeSlack
    send: SlackRequests
    server: SlackHttpServer
    app: App

    def settle(self, timeout: float = 30) -> None:
        """Wait until every acknowledged request's lazy work (and so its Web API calls) has finished."""
        assert work_pool(self.app).wait_idle(timeout), f"the bot was still working after {timeout}s"

    def command(self, text: str, **kwargs):
        """A /gpu command whose response_url points at the fake (not hooks.slack.com)."""
        kwargs.setdefault("response_url", self.slack.response_url())
        return self.send.slash_command(text, **kwargs)

    def final_update(self, *, contains: str, timeout: float = 20):
        """The chat.update that replaced a progress message with a result containing ``contains``."""
        calls = self.slack.wait_for("chat.update", timeout=timeout,
                                    predicate=lambda c: contains in json.dumps(c.args.get("blocks")))
        return calls[-1]


def migrated_sqlite(path) -> str:
    from bot.store import make_engine, migrate

    url = f"sqlite:///{path}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    return url


# Every channel reads everything; both remediation kinds may be proposed anywhere. The security tests
# (test_policy_enforcement.py) run a bot with a narrow policy of their own.
OPEN_POLICY = """\
channels:
  "*": {clusters: ["*"], namespaces: ["*"]}
approvers:
  users: [U0ONCALL]
remediations:
  annotate-do-not-disrupt: {namespaces: ["*"]}
  nodepool-consolidation: {nodepools: ["*"]}
"""


def write_policy(directory, text: str) -> str:
    path = directory / "policy.yaml"
    path.write_text(text)
    return str(path)


def opened(value: str) -> str:
    """The value inside a button gpubot sealed (read without the key: what any Slack client can see)."""
    payload = value.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["v"]


def bot_env(sim, slack: FakeSlack, **extra) -> dict[str, str]:
    return {"KUBECONFIG": str(sim.kubeconfig), "SLACK_BOT_TOKEN": ws.BOT_TOKEN, "SLACK_SIGNING_SECRET": ws.SIGNING_SECRET,
            "SLACK_API_URL": slack.url, "GPUBOT_SLACK_MODE": "http", "GPUBOT_PROGRESS_INTERVAL": "0.05",
            "GPUBOT_CHANNEL_NAMESPACES": "C0T5=t5-fsdp", **SIM_ENV, **extra}


def roomy_pacer():
    """One app serves a whole module of tests, far more than Slack's 50 chat.update a minute: its
    pacer allows twenty times Slack's limits (this fake Slack enforces none). Pacing itself is tested
    against the limits in tests/bot/test_pacer.py, tests/slack/test_delivery_limits.py and
    tests/benchmarks/bench_limits.py."""
    from bot.delivery.pacer import Pacer, method_limits
    from bot.delivery.windows import SlidingWindows

    return Pacer(SlidingWindows(method_limits(20.0)), channel_limits={})


@pytest.fixture(scope="module")
def bot(seed_sim, tmp_path_factory):
    state = tmp_path_factory.mktemp("store")
    database = migrated_sqlite(state / "gpubot.db")
    with pytest.MonkeyPatch.context() as mp, FakeSlack() as slack:
        for key, value in SIM_ENV.items():
            mp.setenv(key, value)  # boto3 reads credentials from the environment
        app = create_app(load_settings(bot_env(seed_sim, slack, GPUBOT_DATABASE_URL=database,
                                               GPUBOT_POLICY=write_policy(state, OPEN_POLICY))),
                         pacer=roomy_pacer())
        server = SlackHttpServer(app, host="127.0.0.1", port=0).start()
        try:
            yield Bot(slack, SlackRequests(f"http://127.0.0.1:{server.port}", secret=ws.SIGNING_SECRET), server, app)
        finally:
            server.stop()


@pytest.fixture
def slack_bot(bot):
    # The previous test's lazy work may still be posting (e.g. into an incident's thread after the
    # final update): start from a clean record once it has all finished.
    bot.settle()
    bot.slack.reset()
    return bot


def assert_valid_blocks(call) -> None:
    blocks = call.args.get("blocks")
    assert blocks, call.args
    assert problems(blocks) == []
