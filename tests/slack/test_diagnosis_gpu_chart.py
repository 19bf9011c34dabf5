"""A diagnosis in Slack with GPUBOT_PROMETHEUS_URL set: the GPUs' utilisation and memory over the last
hour are charted into the diagnosis' thread (the fake Slack's external upload flow), an idle GPU is
noted, and a Prometheus that cannot be reached leaves a note and the diagnosis as it was.

The bot talks to a real Prometheus (tests/prometheus.py) through a loopback TCP proxy that can be
taken down, so one bot serves both cases."""
from __future__ import annotations

import json

import pytest

from bot.app import create_app
from bot.http_server import SlackHttpServer
from bot.settings import load_settings
from tests.conftest import SIM_ENV
from tests.fakes import workspace as ws
from tests.fakes.signing import SlackRequests
from tests.fakes.slack_api import FakeSlack
from tests.fakes.tcp_proxy import FlakyProxy
from tests.prometheus import Gpu, prometheus
from tests.slack.conftest import OPEN_POLICY, Bot, assert_valid_blocks, bot_env, migrated_sqlite, roomy_pacer, write_policy

NS, POD = "llm-zero3", "llama-3-8b-zero3-0"


@pytest.fixture(scope="module")
def prom_proxy(tmp_path_factory):
    gpus = [Gpu(NS, POD, i, util=0.0 if i == 2 else 91.0) for i in range(8)]
    with prometheus(tmp_path_factory.mktemp("prometheus"), gpus) as url:
        port = int(url.rsplit(":", 1)[1])
        proxy = FlakyProxy("127.0.0.1", port)
        try:
            yield proxy
        finally:
            proxy.stop()


@pytest.fixture(scope="module")
def gpu_bot(seed_sim, prom_proxy, tmp_path_factory):
    state = tmp_path_factory.mktemp("store")
    with pytest.MonkeyPatch.context() as mp, FakeSlack() as slack:
        for key, value in SIM_ENV.items():
            mp.setenv(key, value)
        env = bot_env(seed_sim, slack, GPUBOT_DATABASE_URL=migrated_sqlite(state / "gpubot.db"),
                      GPUBOT_POLICY=write_policy(state, OPEN_POLICY),
                      GPUBOT_PROMETHEUS_URL=f"http://127.0.0.1:{prom_proxy.port}", GPUBOT_REQUEST_TIMEOUT="5")
        app = create_app(load_settings(env), pacer=roomy_pacer())
        server = SlackHttpServer(app, host="127.0.0.1", port=0).start()
        try:
            yield Bot(slack, SlackRequests(f"http://127.0.0.1:{server.port}", secret=ws.SIGNING_SECRET), server, app)
        finally:
            server.stop()


@pytest.fixture
def slack_bot(gpu_bot, prom_proxy):
    gpu_bot.settle()
    gpu_bot.slack.reset()
    prom_proxy.down = False
    return gpu_bot


def test_the_diagnosis_thread_gets_the_gpu_chart_and_the_idle_gpu_is_noted(slack_bot):
    slack_bot.command(f"diagnose pod/{POD} -n {NS}", channel_id="C0GPUCHART")
    answer = slack_bot.final_update(contains="GPUs held by")
    assert_valid_blocks(answer)
    text = json.dumps(answer.args["blocks"])
    assert f"1 of 8 GPUs held by pod {POD} sat idle for the last 30 minutes" in text
    assert "gpu.idle" in text  # in the codes' context line
    [complete] = slack_bot.slack.wait_for("files.completeUploadExternal")
    assert complete.response["ok"]
    assert complete.args["channel_id"] == "C0GPUCHART"
    assert complete.args["thread_ts"] == answer.args["ts"]
    [entry] = json.loads(complete.args["files"])
    assert entry["title"] == f"GPU utilisation and memory · {POD}"
    assert slack_bot.slack.state.files[entry["id"]].data.startswith(b"\x89PNG")


def test_an_unreachable_prometheus_leaves_a_note_and_no_chart(slack_bot, prom_proxy):
    prom_proxy.down = True
    prom_proxy.cut_open_connections()
    slack_bot.command(f"diagnose pod/{POD} -n {NS}", channel_id="C0GPUCHART")
    answer = slack_bot.final_update(contains="GPU metrics could not be read")
    assert_valid_blocks(answer)
    text = json.dumps(answer.args["blocks"])
    assert "Prometheus cannot be reached" in text
    assert "GPUs held by" not in text
    slack_bot.settle()
    assert slack_bot.slack.calls("files.completeUploadExternal") == []
    assert answer.args["text"].startswith(f"Pod {POD}")  # the answer itself is unchanged
