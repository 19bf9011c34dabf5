"""`gpubot serve` starting against a Slack that refuses the token, a Slack that does not answer, and a
database that does not answer: one line naming what to fix, exit 3, no traceback; while it waits for
Slack the probe port already answers /healthz (alive) and /readyz (not ready, and why)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bot.errors import SlackAuthFailed, SlackUnreachable
from bot.slack_token import SlackAppTokenRefused, verify_app_token, verify_bot_token
from tests.conftest import SIM_ENV
from tests.fakes import workspace as ws
from tests.fakes.ports import free_port, refused_port
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import migrated_sqlite

ROOT = Path(__file__).resolve().parents[2]


def _serve(tmp_path: Path, **env: str) -> tuple[subprocess.Popen, Path, int]:
    probe_port = free_port()
    full = {**os.environ, **SIM_ENV, "PYTHONPATH": str(ROOT), "GPUBOT_SLACK_MODE": "http",
            "SLACK_SIGNING_SECRET": ws.SIGNING_SECRET, "SLACK_BOT_TOKEN": ws.BOT_TOKEN,
            "GPUBOT_HTTP_PORT": str(free_port()), "GPUBOT_PROBE_PORT": str(probe_port), "GPUBOT_WORKERS": "0",
            "KUBECONFIG": str(tmp_path / "no-kubeconfig"),
            "GPUBOT_DATABASE_URL": migrated_sqlite(tmp_path / "gpubot.db"), **env}
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=full, cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT)
    return proc, log, probe_port


def _probe(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _last_line(log: Path) -> str:
    return log.read_text().strip().splitlines()[-1]


def test_a_refused_token_stops_serve_with_one_line_and_exit_3(tmp_path):
    with FakeSlack() as slack:
        proc, log, _ = _serve(tmp_path, SLACK_API_URL=slack.url, SLACK_BOT_TOKEN="xoxb-not-the-right-one")
        assert proc.wait(timeout=60) == 3, log.read_text()
        assert slack.calls("auth.test"), "serve did not ask Slack about the token"
    text = log.read_text()
    assert "Traceback" not in text and "BoltError" not in text
    assert _last_line(log).startswith("gpubot: Slack refused the bot token (invalid_auth): set SLACK_BOT_TOKEN")
    assert "xoxb-not-the-right-one" not in text


def test_while_slack_does_not_answer_healthz_is_served_and_readyz_says_why(tmp_path):
    with refused_port() as dead:
        proc, log, probe_port = _serve(tmp_path, SLACK_API_URL=f"http://127.0.0.1:{dead}/api/")
        try:
            deadline = time.monotonic() + 30
            while True:
                assert proc.poll() is None, log.read_text()
                try:
                    status, _ = _probe(probe_port, "/healthz")
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"/healthz never answered:\n{log.read_text()}"
                    time.sleep(0.2)
            assert status == 200
            status, body = _probe(probe_port, "/readyz")
            assert status == 503
            assert "waiting for Slack" in json.loads(body)["reason"]
            assert proc.poll() is None  # still retrying within its deadline
            while "Slack did not answer auth.test (connection refused)" not in log.read_text():
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        finally:
            proc.kill()
            proc.wait(timeout=30)


def test_slack_unreachable_past_the_deadline_is_one_line_and_exit_3():
    with refused_port() as dead:
        started = time.monotonic()
        with pytest.raises(SlackUnreachable) as raised:
            verify_bot_token(ws.BOT_TOKEN, api_url=f"http://127.0.0.1:{dead}/api/", deadline=2.0)
        took = time.monotonic() - started
    assert 2.0 <= took < 20, took
    assert raised.value.exit_code == 3
    message = str(raised.value)
    assert message.startswith(f"cannot reach Slack at http://127.0.0.1:{dead}/api/ (connection refused) after trying")
    assert "\n" not in message


def test_a_server_error_is_retried_and_then_the_token_is_checked():
    with FakeSlack() as slack:
        slack.inject("auth.test", status=503, error="service_unavailable")
        answer = verify_bot_token(ws.BOT_TOKEN, api_url=slack.url, deadline=30)
        assert answer["ok"] is True
        assert len(slack.calls("auth.test")) == 2


def test_a_refused_token_is_not_retried():
    with FakeSlack() as slack:
        with pytest.raises(SlackAuthFailed) as raised:
            verify_bot_token("xoxb-wrong", api_url=slack.url, deadline=30)
        assert len(slack.calls("auth.test")) == 1
    assert raised.value.exit_code == 3 and raised.value.error == "invalid_auth"


def test_an_unreachable_database_stops_serve_with_one_line_and_exit_3(tmp_path):
    with refused_port() as dead:
        url = f"postgres://gpubot:Sup3rSecret@127.0.0.1:{dead}/gpubot"
        proc, log, _ = _serve(tmp_path, GPUBOT_DATABASE_URL=url, SLACK_API_URL="http://127.0.0.1:9/api/")
        assert proc.wait(timeout=60) == 3, log.read_text()
    text = log.read_text()
    assert "Traceback" not in text and "Sup3rSecret" not in text
    assert _last_line(log) == (f"gpubot: cannot reach the database at postgresql://127.0.0.1:{dead}/gpubot "
                               f"(connection refused): check GPUBOT_DATABASE_URL")


def _socket_env(slack: FakeSlack, app_token: str) -> dict[str, str]:
    return {"SLACK_API_URL": slack.url, "GPUBOT_SLACK_MODE": "socket", "SLACK_APP_TOKEN": app_token}


@pytest.mark.parametrize(("app_token", "error"), [("xapp-1-not-the-right-one", "invalid_auth"),
                                                   (ws.BOT_TOKEN, "not_allowed_token_type")])
def test_socket_mode_with_a_refused_app_token_stops_serve_with_one_line_and_exit_3(tmp_path, app_token, error):
    with FakeSlack(socket_mode=True) as slack:
        proc, log, _ = _serve(tmp_path, **_socket_env(slack, app_token))
        assert proc.wait(timeout=60) == 3, log.read_text()
        assert len(slack.calls("auth.test")) == 1  # the bot token was fine
        assert len(slack.calls("apps.connections.open")) == 1  # refused: not retried
    text = log.read_text()
    assert "Traceback" not in text and "BoltError" not in text and "xapp-1-not-the-right-one" not in text
    assert _last_line(log) == (f"gpubot: Slack refused the app-level token ({error}): set SLACK_APP_TOKEN to an "
                               "xapp-... token with the connections:write scope (the app's Basic Information > "
                               "App-Level Tokens), and turn Socket Mode on for the app")


def test_socket_mode_with_the_right_app_token_goes_on_to_connect(tmp_path):
    with FakeSlack(socket_mode=True) as slack:
        proc, log, _ = _serve(tmp_path, **_socket_env(slack, ws.APP_TOKEN))
        try:
            deadline = time.monotonic() + 60
            while "connected to Slack in Socket Mode" not in log.read_text():
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            assert "Slack accepts the app-level token" in log.read_text()
            # The start-up check and the handler's own connection: one URL each.
            assert len(slack.calls("apps.connections.open")) >= 2
        finally:
            proc.kill()
            proc.wait(timeout=30)


def test_http_mode_does_not_ask_for_a_socket_url(tmp_path):
    with FakeSlack() as slack:
        proc, log, probe_port = _serve(tmp_path, SLACK_API_URL=slack.url)
        try:
            deadline = time.monotonic() + 60
            while "listening for Slack" not in log.read_text():
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            assert slack.calls("auth.test") and not slack.calls("apps.connections.open")
        finally:
            proc.kill()
            proc.wait(timeout=30)


def test_the_app_token_check_retries_a_server_error_and_answers_a_socket_url():
    with FakeSlack(socket_mode=True) as slack:
        slack.inject("apps.connections.open", status=503, error="service_unavailable")
        answer = verify_app_token(ws.APP_TOKEN, api_url=slack.url, deadline=30)
        assert answer["ok"] is True and answer["url"].startswith("ws")
        assert len(slack.calls("apps.connections.open")) == 2


def test_a_refused_app_token_is_exit_3_and_names_the_variable():
    with FakeSlack(socket_mode=True) as slack:
        with pytest.raises(SlackAppTokenRefused) as raised:
            verify_app_token("xapp-wrong", api_url=slack.url, deadline=30)
    assert raised.value.exit_code == 3 and raised.value.error == "invalid_auth"
    assert "SLACK_APP_TOKEN" in str(raised.value) and "SLACK_BOT_TOKEN" not in str(raised.value)
