"""The probes listen on a port and a server of their own: a full Slack port cannot fail them, /readyz
follows whether the edge accepts requests, the database answers, Slack takes the token and the workers
run (503 with one line of JSON naming which), and a probe port that is taken stops `gpubot serve` in
one line naming the setting."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from bot.edge.probes import ProbeServer
from bot.http_server import SlackHttpServer
from bot.settings import SettingsError, load_settings
from tests.conftest import SIM_ENV
from tests.fakes import workspace as ws
from tests.fakes.ports import free_port, refused_port
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import migrated_sqlite
from tests.slack.serve_process import ROOT


def _get(port: int, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_full_slack_port_leaves_the_probes_answering(bot):
    server = SlackHttpServer(bot.app, host="127.0.0.1", port=0, max_connections=8, max_connections_per_client=8).start()
    probes = ProbeServer(ready=lambda: server.serving, host="127.0.0.1", port=0).start()
    held = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(8)]
    try:
        assert _get(server.port, "/healthz") == 503  # the Slack port is full ...
        assert _get(probes.port, "/healthz") == 200  # ... the kubelet's is not
        assert _get(probes.port, "/readyz") == 200
    finally:
        for sock in held:
            sock.close()
        server.stop()
    assert _get(probes.port, "/readyz") == 503  # stopped: no new requests should be sent here
    assert _get(probes.port, "/healthz") == 200
    probes.stop()


def test_the_probe_port_limits_connections_per_client_too():
    probes = ProbeServer(ready=lambda: True, host="127.0.0.1", port=0).start()
    held = [socket.create_connection(("127.0.0.1", probes.port), timeout=5) for _ in range(8)]
    try:
        assert _get(probes.port, "/healthz") == 503
        with socket.create_connection(("127.0.0.1", probes.port), timeout=5, source_address=("127.0.0.2", 0)) as kubelet:
            kubelet.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert kubelet.recv(4096).startswith(b"HTTP/1.1 200 ")
    finally:
        for sock in held:
            sock.close()
        probes.stop()


@pytest.mark.parametrize("env, variable", [
    ({"GPUBOT_PROBE_PORT": "3000", "GPUBOT_HTTP_PORT": "3000"}, "GPUBOT_PROBE_PORT"),
    ({"GPUBOT_PROBE_PORT": "-1"}, "GPUBOT_PROBE_PORT"),
    ({"GPUBOT_HTTP_MAX_CONNECTIONS_PER_CLIENT": "0"}, "GPUBOT_HTTP_MAX_CONNECTIONS_PER_CLIENT"),
    ({"GPUBOT_HTTP_MAX_CONNECTIONS": "lots"}, "GPUBOT_HTTP_MAX_CONNECTIONS"),
    ({"GPUBOT_HTTP_MAX_CONNECTIONS": "16", "GPUBOT_HTTP_MAX_CONNECTIONS_PER_CLIENT": "32"},
     "GPUBOT_HTTP_MAX_CONNECTIONS_PER_CLIENT"),
])
def test_bad_edge_settings_are_one_line(env, variable):
    with pytest.raises(SettingsError) as err:
        load_settings(env)
    assert variable in str(err.value) and "\n" not in str(err.value)


def test_edge_settings_defaults():
    settings = load_settings({})
    assert (settings.probe_port, settings.http_max_connections_per_client, settings.http_max_connections) == (8081, 32, 1024)


def test_serve_names_the_setting_when_the_probe_port_is_taken(seed_sim, tmp_path):
    with FakeSlack() as slack, socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, **SIM_ENV, "KUBECONFIG": str(seed_sim.kubeconfig), "SLACK_BOT_TOKEN": ws.BOT_TOKEN,
               "SLACK_SIGNING_SECRET": ws.SIGNING_SECRET, "SLACK_API_URL": slack.url, "GPUBOT_SLACK_MODE": "http",
               "GPUBOT_WORKERS": "0", "GPUBOT_HTTP_PORT": str(free_port()),
               "GPUBOT_PROBE_PORT": str(port), "PYTHONPATH": str(ROOT),
               "GPUBOT_DATABASE_URL": migrated_sqlite(tmp_path / "gpubot.db")}
        result = subprocess.run([sys.executable, "-m", "bot.cli", "serve"], env=env, cwd=ROOT, capture_output=True,
                                text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("gpubot: cannot listen")]
    assert line.endswith("set GPUBOT_PROBE_PORT to a free port") and f"port {port} " in line


def _readyz(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_readyz_fails_naming_the_database_while_it_is_unreachable(tmp_path):
    from bot.edge.readiness import Readiness
    from bot.store import make_engine

    with refused_port() as port:
        engine = make_engine(f"postgresql+psycopg://gpubot@127.0.0.1:{port}/gpubot")
        probes = ProbeServer(ready=Readiness(accepting=lambda: True, database=engine), host="127.0.0.1", port=0).start()
        try:
            status, body = _readyz(probes.port)
            assert _get(probes.port, "/healthz") == 200  # alive: restarting it would not bring the database back
        finally:
            probes.stop()
            engine.dispose()
    assert status == 503 and body.count("\n") == 1
    answer = json.loads(body)
    assert answer["ready"] is False and answer["reason"].startswith("database unreachable: ")
    assert str(port) in answer["reason"]

    working = make_engine(migrated_sqlite(tmp_path / "gpubot.db"))
    probes = ProbeServer(ready=Readiness(accepting=lambda: True, database=working), host="127.0.0.1", port=0).start()
    try:
        assert _readyz(probes.port) == (200, "ok")
    finally:
        probes.stop()
        working.dispose()


def test_readyz_fails_while_slack_refuses_the_bot_token():
    from bot.edge.readiness import Readiness, SlackAuth
    from bot.slack_client import make_web_client

    with FakeSlack() as slack:
        wrong = make_web_client(token="xoxb-0000-revoked", base_url=slack.url)
        probes = ProbeServer(ready=Readiness(accepting=lambda: True, slack_client=wrong, slack_auth=SlackAuth()),
                             host="127.0.0.1", port=0).start()
        right = make_web_client(token=ws.BOT_TOKEN, base_url=slack.url)
        fixed = ProbeServer(ready=Readiness(accepting=lambda: True, slack_client=right, slack_auth=SlackAuth()),
                            host="127.0.0.1", port=0).start()
        try:
            status, body = _readyz(probes.port)
            assert _readyz(fixed.port) == (200, "ok")
            assert [c.method for c in slack.calls("auth.test")] == ["auth.test", "auth.test"]
        finally:
            probes.stop()
            fixed.stop()
    assert status == 503
    reason = json.loads(body)["reason"]
    assert "invalid_auth" in reason and "SLACK_BOT_TOKEN" in reason and "xoxb" not in reason


def test_an_auth_test_failure_recorded_at_start_holds_readiness_until_one_succeeds():
    from bot.edge.readiness import Readiness, SlackAuth

    auth = SlackAuth()
    probes = ProbeServer(ready=Readiness(accepting=lambda: True, slack_auth=auth), host="127.0.0.1", port=0).start()
    try:
        auth.mark(False, "Slack refused the bot token (token_revoked)")
        status, body = _readyz(probes.port)
        assert status == 503 and "token_revoked" in json.loads(body)["reason"]
        auth.mark(True)
        assert _readyz(probes.port) == (200, "ok")
    finally:
        probes.stop()


def test_readyz_fails_while_the_workers_are_down():
    from bot.edge.readiness import Readiness

    running = [True]
    probes = ProbeServer(ready=Readiness(accepting=lambda: True, workers_alive=lambda: running[0]),
                         host="127.0.0.1", port=0).start()
    try:
        assert _readyz(probes.port) == (200, "ok")
        running[0] = False
        status, body = _readyz(probes.port)
        assert status == 503 and "workers" in json.loads(body)["reason"]
    finally:
        probes.stop()
