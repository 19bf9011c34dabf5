"""Socket Mode: the same app, connected over a WebSocket the bot opens (no public URL)."""
from __future__ import annotations

import json

from bot.app import create_app
from bot.serve import socket_mode_handler
from bot.settings import load_settings
from tests.fakes import payloads
from tests.fakes import workspace as ws
from tests.fakes.slack_api import FakeSlack
from tests.slack.conftest import bot_env, migrated_sqlite


def test_slash_command_over_socket_mode(seed_sim, monkeypatch, tmp_path):
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    with FakeSlack(socket_mode=True) as slack:
        env = bot_env(seed_sim, slack, SLACK_APP_TOKEN=ws.APP_TOKEN, GPUBOT_SLACK_MODE="",
                      GPUBOT_DATABASE_URL=migrated_sqlite(tmp_path / "db.sqlite"))
        env.pop("SLACK_SIGNING_SECRET")
        settings = load_settings(env)
        assert settings.slack_mode == "socket"  # the default when an app token is set
        handler = socket_mode_handler(create_app(settings), settings)
        handler.client.auto_reconnect_enabled = False
        try:
            handler.connect()
            command = payloads.fixture("socket_mode_slash_commands.json")["payload"]
            command.update(text="why-pending pytorch-dist-job -n t5-fsdp", channel_id="C0TRAIN", user_id="U0ALICE")
            envelope = slack.socket_mode.deliver("slash_commands", command)
            assert slack.socket_mode.wait_for_ack(envelope, timeout=3)["envelope_id"] == envelope
            final = slack.wait_for("chat.update", timeout=20,
                                   predicate=lambda c: "karpenter.provisioning" in json.dumps(c.args.get("blocks")))
            assert final
        finally:
            slack.socket_mode.drop_connections()
            handler.close()


def test_socket_mode_reconnects_after_the_connection_drops(seed_sim, monkeypatch, tmp_path):
    """A network drop ends the WebSocket; the handler opens a new one (a fresh apps.connections.open
    ticket) and the next command is answered over it."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    with FakeSlack(socket_mode=True) as slack:
        env = bot_env(seed_sim, slack, SLACK_APP_TOKEN=ws.APP_TOKEN, GPUBOT_SLACK_MODE="",
                      GPUBOT_DATABASE_URL=migrated_sqlite(tmp_path / "db.sqlite"), GPUBOT_SOCKET_PING_INTERVAL="0.5")
        env.pop("SLACK_SIGNING_SECRET")
        settings = load_settings(env)
        handler = socket_mode_handler(create_app(settings), settings)
        assert handler.client.auto_reconnect_enabled  # the default this test relies on
        try:
            handler.connect()
            slack.socket_mode.wait_for_connection()
            opened = len(slack.calls("apps.connections.open"))
            slack.socket_mode.drop_connections()
            slack.wait_for("apps.connections.open", count=opened + 1, timeout=15)
            command = payloads.fixture("socket_mode_slash_commands.json")["payload"]
            command.update(text="help", channel_id="C0TRAIN", user_id="U0ALICE")
            envelope = slack.socket_mode.deliver("slash_commands", command, timeout=30)
            assert slack.socket_mode.wait_for_ack(envelope, timeout=10)["envelope_id"] == envelope
        finally:
            handler.client.auto_reconnect_enabled = False
            slack.socket_mode.drop_connections()
            handler.close()
