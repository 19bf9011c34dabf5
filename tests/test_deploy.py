"""The Slack app manifests, one per mode: the same app, told apart only by how Slack reaches it; the
chart's notes name the one that goes with the mode. The chart itself: tests/deploy/."""
from pathlib import Path

import pytest
import yaml

from tests.deploy.chart import CHART, NAMESPACE, RELEASE, REQUIRED, helm

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
MODES = ("socket", "http")


def _manifest(mode: str) -> dict:
    return yaml.safe_load((DEPLOY / f"slack-app-manifest-{mode}.yaml").read_text())


def _request_urls(manifest: dict) -> list[str]:
    settings = manifest["settings"]
    return ([c["url"] for c in manifest["features"]["slash_commands"] if "url" in c]
            + [s["request_url"] for s in (settings.get("event_subscriptions", {}), settings["interactivity"])
               if "request_url" in s])


def test_one_manifest_per_mode_and_no_other():
    assert sorted(p.name for p in DEPLOY.glob("slack-app-manifest*.yaml")) == [
        f"slack-app-manifest-{m}.yaml" for m in sorted(MODES)]


@pytest.mark.parametrize("mode", MODES)
def test_each_manifest_asks_for_what_the_listeners_use(mode):
    manifest = _manifest(mode)
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/gpu"]
    assert set(manifest["settings"]["event_subscriptions"]["bot_events"]) >= {"app_mention", "message.im"}
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert set(manifest["oauth_config"]["scopes"]["bot"]) >= {"app_mentions:read", "chat:write", "commands", "im:history"}


def test_the_manifests_differ_only_in_how_slack_reaches_the_bot():
    socket, http = _manifest("socket"), _manifest("http")
    assert socket["oauth_config"] == http["oauth_config"]
    assert socket["settings"]["event_subscriptions"]["bot_events"] == http["settings"]["event_subscriptions"]["bot_events"]
    assert socket["settings"]["socket_mode_enabled"] is True and http["settings"]["socket_mode_enabled"] is False
    assert _request_urls(socket) == []
    # Stripped of its URLs and the mode switch, the HTTP manifest is the Socket Mode one.
    for manifest in (socket, http):
        del manifest["settings"]["socket_mode_enabled"]
        manifest["settings"]["event_subscriptions"].pop("request_url", None)
        manifest["settings"]["interactivity"].pop("request_url", None)
        for command in manifest["features"]["slash_commands"]:
            command.pop("url", None)
    assert socket == http


def test_the_http_manifest_points_slack_at_the_path_gpubot_serves():
    from slack_bolt import App

    from bot.http_server import EdgeApp
    from bot.replay import ReplayGuard

    urls = _request_urls(_manifest("http"))
    assert len(urls) == 3 and set(urls) == {"https://gpubot.example.com/slack/events"}
    app = App(token="xoxb-1", signing_secret="s" * 32, token_verification_enabled=False)
    edge = EdgeApp(app, ReplayGuard(), {})
    try:
        served = {route.path for route in edge.router.routes if "POST" in (route.methods or ())}
    finally:
        edge.close()
    assert "/slack/events" in served


@pytest.mark.parametrize("mode, extra", [("socket", ()), ("http", ("replicas=2",))])
def test_the_chart_notes_name_the_manifest_for_the_mode(mode, extra):
    sets = (*REQUIRED, f"mode={mode}", *extra)
    done = helm("install", RELEASE, str(CHART), "--dry-run=client", "--namespace", NAMESPACE,
                *[a for s in sets for a in ("--set", s)])
    assert done.returncode == 0, done.stderr
    notes = done.stdout.split("NOTES:", 1)[1]
    other = {"socket": "http", "http": "socket"}[mode]
    assert f"deploy/slack-app-manifest-{mode}.yaml" in notes
    assert f"slack-app-manifest-{other}.yaml" not in notes
