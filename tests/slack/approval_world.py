"""The world the approval-flow tests run in: a cluster of their own (fixtures/approval/h100-consolidation.yaml,
which the tests write to), gpubot served over HTTP against the fake Slack Web API with its proposals on
SQLite or PostgreSQL, and the means to start more instances of it on the same database and cluster
(a second replica, a restart, another policy).

Team channel C0FM reads ``foundation-models``; the on-call channel C0ONCALL reads everything and is
where approval requests are posted. U0ONCALL1 approves by name, members of user group S0GPUONCALL
(U0GROUPIE) by membership; U0ML is a member of the team who may ask but not approve.
"""
from __future__ import annotations

import itertools
import json
import re
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from bot.payloads import ACTION_APPROVAL, ACTION_RESOLVE
from tests import pg
from tests.conftest import SIM_ENV
from tests.fakes.slack_api import Call, FakeSlack
from tests.slack.conftest import Bot, opened

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "approval"
SCENARIO = "h100-consolidation"
BACKENDS = ["sqlite", "postgresql"]
BUTTON_KEY = "approval-tests-button-key-0123456789abcdef"

NODEPOOL, JOB, NS = "gpu-h100", "falcon-180b-pretrain", "foundation-models"
PODS = ("falcon-180b-pretrain-master-0", "falcon-180b-pretrain-worker-0")
TEAM, ONCALL = "C0FM", "C0ONCALL"
REQUESTER, APPROVER, GROUPIE, GROUP = "U0ML", "U0ONCALL1", "U0GROUPIE", "S0GPUONCALL"
FINDING = "karpenter.disruption"
NODEPOOL_PATH = f"/apis/karpenter.sh/v1/nodepools/{NODEPOOL}"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
PROPOSAL = re.compile(r"^Change #(\d+) (\w+): ")


def policy_text(*, expiry: str = "30m", two_person: bool = False) -> str:
    return f"""\
channels:
  {TEAM}:   {{clusters: ["*"], namespaces: [{NS}]}}
  {ONCALL}: {{clusters: ["*"], namespaces: ["*"]}}
approvers: {{users: [{APPROVER}], usergroups: [{GROUP}], channel: {ONCALL}}}
remediations:
  expiry: {expiry}
  self_approval: false
  two_person: {str(two_person).lower()}
  annotate-do-not-disrupt: {{namespaces: ["foundation-*"]}}
  nodepool-consolidation: {{nodepools: ["gpu-*"]}}
"""


def buttons(blocks: list[dict], action_id: str) -> list[dict]:
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"] if e["action_id"] == action_id]


def button(call: Call, action_id: str) -> str:
    [found] = buttons(call.args["blocks"], action_id)
    return found["value"]


def shown(call: Call) -> str:
    return json.dumps(call.args.get("blocks"), ensure_ascii=False)


@dataclass
class Posted:
    """One proposal as gpubot first posted it: where (channel -> the chat.postMessage) and the requester's note."""
    id: int
    posts: dict[str, Call]
    note: Call

    def places(self) -> set[tuple[str, str]]:
        return {(channel, call.response["ts"]) for channel, call in self.posts.items()}


@dataclass
class Diagnosed:
    """The diagnosis in the team channel that the approval requests come from."""
    call: Call
    incident: int
    requests: dict[str, str] = field(default_factory=dict)  # remediation kind -> sealed Request approval value

    @property
    def ts(self) -> str:
        return self.call.args["ts"]


class World:
    def __init__(self, *, sim, slack: FakeSlack, database: str, state: Path) -> None:
        self.sim, self.slack, self.database, self.state = sim, slack, database, state
        self._names = itertools.count(1)
        self.bot: Bot | None = None
        self.diagnosis: Diagnosed | None = None
        self.original: dict | None = None  # the NodePool as the scenario file has it

    # -- gpubot instances ------------------------------------------------------------------------

    @contextmanager
    def serve(self, *, policy: str | None = None, button_key: str | None = BUTTON_KEY):
        """Another gpubot on the same database, cluster and fake Slack (``button_key`` None: the key
        derived from the Slack signing secret, as a deployment without GPUBOT_BUTTON_KEY has)."""
        from bot.app import create_app
        from bot.http_server import SlackHttpServer
        from bot.settings import load_settings
        from tests.fakes import workspace as ws
        from tests.fakes.signing import SlackRequests
        from tests.slack.conftest import bot_env

        path = self.state / f"policy-{next(self._names)}.yaml"
        path.write_text(policy or policy_text())
        extra = {"GPUBOT_BUTTON_KEY": button_key} if button_key else {}
        settings = load_settings(bot_env(self.sim, self.slack, GPUBOT_DATABASE_URL=self.database,
                                         GPUBOT_POLICY=str(path), GPUBOT_CHANNEL_NAMESPACES="", **extra))
        app = create_app(settings)
        server = SlackHttpServer(app, host="127.0.0.1", port=0).start()
        bot = Bot(self.slack, SlackRequests(f"http://127.0.0.1:{server.port}", secret=ws.SIGNING_SECRET), server, app)
        try:
            yield bot
        finally:
            bot.settle()
            server.stop()

    # -- Slack ---------------------------------------------------------------------------------------

    def diagnose(self, bot: Bot, *, user: str = REQUESTER) -> Diagnosed:
        def final(c: Call) -> bool:
            return c.args["channel"] == TEAM and FINDING in shown(c) and bool(buttons(c.args["blocks"], ACTION_APPROVAL))

        before = len([c for c in self.slack.calls("chat.update") if final(c)])
        bot.command(f"diagnose pytorchjob/{JOB} -n {NS}", channel_id=TEAM, user_id=user)
        call = self.slack.wait_for("chat.update", count=before + 1, timeout=30, predicate=final)[-1]
        requests = {json.loads(opened(b["value"]))["r"]["kind"]: b["value"]
                    for b in buttons(call.args["blocks"], ACTION_APPROVAL)}
        incident = json.loads(opened(button(call, ACTION_RESOLVE)))["incident"]
        return Diagnosed(call=call, incident=incident, requests=requests)

    def request(self, bot: Bot | None = None, *, user: str = REQUESTER, kind: str = "nodepool-consolidation",
                diagnosis: Diagnosed | None = None) -> Posted:
        """Click Request approval under the diagnosis; the proposal as posted everywhere."""
        bot, diagnosis = bot or self.bot, diagnosis or self.diagnosis
        seen = {id(c) for c in self.slack.calls("chat.postMessage")}
        notes = len(self.slack.calls("chat.postEphemeral"))
        status, _, _ = bot.send.block_action(ACTION_APPROVAL, diagnosis.requests[kind], channel=TEAM, user=user,
                                             message_ts=diagnosis.ts)
        assert status == 200
        bot.settle()
        posts = [c for c in self.slack.calls("chat.postMessage") if id(c) not in seen and PROPOSAL.match(c.args["text"])]
        new_notes = [c for c in self.slack.calls("chat.postEphemeral")[notes:] if c.args["user"] == user]
        assert len(new_notes) == 1, [c.args["text"] for c in new_notes]
        ids = {int(PROPOSAL.match(c.args["text"]).group(1)) for c in posts}
        assert len(ids) == 1, [c.args["text"] for c in posts]
        return Posted(id=ids.pop(), posts={c.args["channel"]: c for c in posts}, note=new_notes[0])

    def click(self, bot: Bot | None, action_id: str, value: str, *, user: str, channel: str = ONCALL,
              ts: str = "1767225000.000100") -> list[str]:
        """A click and everything its clicker heard privately once gpubot finished with it."""
        bot = bot or self.bot
        before = len(self.slack.calls("chat.postEphemeral"))
        status, _, _ = bot.send.block_action(action_id, value, channel=channel, user=user, message_ts=ts)
        assert status == 200
        bot.settle()
        return [c.args["text"] for c in self.slack.calls("chat.postEphemeral")[before:] if c.args["user"] == user]

    def updates(self, proposal_id: int, since: int = 0) -> list[Call]:
        return [c for c in self.slack.calls("chat.update")[since:]
                if (m := PROPOSAL.match(c.args.get("text") or "")) and int(m.group(1)) == proposal_id]

    # -- the cluster ---------------------------------------------------------------------------------

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(f"{self.sim.url}{path}") as response:
            return json.loads(response.read())

    def raw(self, path: str) -> bytes:
        with urllib.request.urlopen(f"{self.sim.url}{path}") as response:
            return response.read()

    def patch(self, path: str, body, content_type: str) -> None:
        request = urllib.request.Request(f"{self.sim.url}{path}", method="PATCH", data=json.dumps(body).encode(),
                                         headers={"Content-Type": content_type})
        urllib.request.urlopen(request).read()

    def nodepool(self) -> dict:
        return self.get(NODEPOOL_PATH)

    def writes(self) -> list[dict]:
        """The PATCH requests the cluster served since the test began, dry runs included."""
        return [d for d in self.sim.request_details() if d["method"] == "PATCH"]

    def restore(self) -> None:
        """Put the NodePool back as loaded (a test may have applied its change and not undone it)."""
        if self.nodepool()["spec"]["disruption"] != self.original["spec"]["disruption"]:
            self.patch(NODEPOOL_PATH, [{"op": "replace", "path": "/spec/disruption",
                                        "value": self.original["spec"]["disruption"]}], "application/json-patch+json")
        for name in PODS:
            annotations = self.get(f"/api/v1/namespaces/{NS}/pods/{name}")["metadata"].get("annotations") or {}
            assert DO_NOT_DISRUPT not in annotations, f"a test left {name} annotated"


def is_dry_run(request: dict) -> bool:
    return "dryRun=All" in request["target"]


@pytest.fixture(scope="module")
def h100_sim():
    from sim.serve import start_sim

    with start_sim(directory=FIXTURES, scenarios=[SCENARIO], ec2=False) as sim:
        yield sim


@contextmanager
def _database(backend: str, state: Path):
    from bot.store import make_engine, migrate

    if backend == "sqlite":
        from tests.slack.conftest import migrated_sqlite

        yield migrated_sqlite(state / "gpubot.db")
        return
    with pg.fresh_database() as url:
        engine = make_engine(url)
        migrate.upgrade(engine)
        engine.dispose()
        yield url


@pytest.fixture(scope="module", params=BACKENDS)
def approval_world(request, h100_sim, tmp_path_factory):
    state = tmp_path_factory.mktemp(f"approval-{request.param}")
    with _database(request.param, state) as database, pytest.MonkeyPatch.context() as mp, FakeSlack() as slack:
        for key, value in SIM_ENV.items():
            mp.setenv(key, value)  # boto3 reads credentials from the environment
        slack.state.usergroups = {GROUP: [GROUPIE]}
        world = World(sim=h100_sim, slack=slack, database=database, state=state)
        world.original = next(o for o in yaml.safe_load((FIXTURES / f"{SCENARIO}.yaml").read_text())["objects"]
                              if o["kind"] == "NodePool")
        with world.serve() as bot:
            world.bot = bot
            world.restore()  # the other backend's module may have left its change applied
            world.diagnosis = world.diagnose(bot)
            assert set(world.diagnosis.requests) == {"annotate-do-not-disrupt", "nodepool-consolidation"}, world.diagnosis
            yield world


@pytest.fixture
def world(approval_world):
    w = approval_world
    w.bot.settle()
    w.restore()
    w.slack.reset()
    w.sim.reset_requests()
    yield w
    w.bot.settle()
