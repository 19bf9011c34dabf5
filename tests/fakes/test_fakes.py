"""The fakes, exercised by slack_sdk's and Bolt's own clients over real sockets."""
from __future__ import annotations

import http.client
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest
from slack_bolt import App, BoltRequest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.webhook import WebhookClient

from tests.fakes.payloads import new_trigger_id
from tests.fakes import (APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack, SlackRequests, payloads, problems, sign,
                         view_problems)


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def client(slack):
    return WebClient(token=slack.token, base_url=slack.url)


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def button(text: str = "Apply fix", value: str = "v", action_id: str = "remediate") -> dict:
    return {"type": "actions", "elements": [
        {"type": "button", "text": {"type": "plain_text", "text": text}, "value": value, "action_id": action_id}]}


def modal(blocks: list) -> dict:
    return {"type": "modal", "callback_id": "approve", "title": {"type": "plain_text", "text": "Approve fix"},
            "submit": {"type": "plain_text", "text": "Apply"}, "blocks": blocks}


# -- the Web API ---------------------------------------------------------------------------------

def test_post_update_and_open_view_are_recorded_with_slack_shaped_answers(slack, client):
    first = client.chat_postMessage(channel="C0TRAIN", text="pending", blocks=[section("*pending*")])
    reply = client.chat_postMessage(channel="C0TRAIN", text="details", thread_ts=first["ts"])
    updated = client.chat_update(channel="C0TRAIN", ts=first["ts"], text="fixed", blocks=[section("*fixed*")])
    view = client.views_open(trigger_id=new_trigger_id(), view=modal([section("Apply?")]))

    assert first["ts"] < reply["ts"] and first["ts"].startswith("1767225600.")
    assert first["message"]["bot_id"] == "B0BOT" and first["message"]["user"] == "U0BOT"
    assert first["message"]["blocks"][0]["text"]["text"] == "*pending*"
    assert first["message"]["blocks"][0]["block_id"]  # Slack fills in block ids
    assert reply["message"]["thread_ts"] == first["ts"]
    assert updated["ts"] == first["ts"] and updated["text"] == "fixed"
    assert view["view"]["id"].startswith("V") and view["view"]["hash"] and view["view"]["callback_id"] == "approve"

    assert [c.method for c in slack.calls()] == ["chat.postMessage", "chat.postMessage", "chat.update", "views.open"]
    [post, _] = slack.calls("chat.postMessage")
    assert post.args["blocks"] == [section("*pending*")] and post.args["channel"] == "C0TRAIN"
    assert post.headers["Authorization"] == f"Bearer {BOT_TOKEN}"
    assert slack.calls("views.open")[0].args["view"]["title"]["text"] == "Approve fix"


def test_form_encoded_blocks_and_view_are_parsed(slack, client):
    client.api_call("chat.postMessage", data={"channel": "C0TRAIN", "text": "t", "blocks": json.dumps([section("x")])})
    client.api_call("views.open", data={"trigger_id": new_trigger_id(), "view": json.dumps(modal([section("y")]))})
    assert slack.calls("chat.postMessage")[0].args["blocks"] == [section("x")]
    assert slack.calls("views.open")[0].args["view"]["blocks"] == [section("y")]


def test_read_methods_answer(client):
    assert client.auth_test()["user_id"] == "U0BOT"
    assert client.auth_test()["bot_id"] == "B0BOT"
    assert client.conversations_info(channel="C0TRAIN")["channel"]["name"] == "train"
    assert client.users_info(user="U0ALICE")["user"]["name"] == "alice"
    assert client.chat_postEphemeral(channel="C0TRAIN", user="U0ALICE", text="only you")["message_ts"]


def test_update_and_delete_need_a_message_the_bot_posted(slack, client):
    with pytest.raises(SlackApiError) as missing:
        client.chat_update(channel="C0TRAIN", ts="1.000001", text="x")
    assert missing.value.response["error"] == "message_not_found"
    theirs = slack.seed_message("C0TRAIN", text="why is my job pending?")
    with pytest.raises(SlackApiError) as not_ours:
        client.chat_update(channel="C0TRAIN", ts=theirs, text="x")
    assert not_ours.value.response["error"] == "cant_update_message"
    ours = client.chat_postMessage(channel="C0TRAIN", text="x")["ts"]
    assert client.chat_delete(channel="C0TRAIN", ts=ours)["ok"]


def test_bad_tokens_and_unknown_methods(slack):
    with pytest.raises(SlackApiError) as bad:
        WebClient(token="xoxb-wrong", base_url=slack.url).auth_test()
    assert bad.value.response.status_code == 200 and bad.value.response["error"] == "invalid_auth"
    with pytest.raises(SlackApiError) as none:
        WebClient(base_url=slack.url).auth_test()
    assert none.value.response["error"] == "not_authed"
    with pytest.raises(SlackApiError) as unknown:
        WebClient(token=slack.token, base_url=slack.url).api_call("chat.postMesage", json={"channel": "C1"})
    assert unknown.value.response["error"] == "unknown_method"


def test_injected_failures(slack, client):
    slack.inject("chat.postMessage", error="ratelimited", status=429, headers={"Retry-After": "1"})
    with pytest.raises(SlackApiError) as limited:
        client.chat_postMessage(channel="C0TRAIN", text="x")
    assert limited.value.response.status_code == 429 and limited.value.response.headers["retry-after"] == "1"
    assert client.chat_postMessage(channel="C0TRAIN", text="x")["ok"]


def test_wait_for_blocks_until_calls_arrive_and_reports_what_it_saw(slack, client):
    threading.Timer(0.2, lambda: client.chat_postMessage(channel="C0TRAIN", text="late")).start()
    [call] = slack.wait_for("chat.postMessage", timeout=5, predicate=lambda c: c.args["text"] == "late")
    assert call.args["text"] == "late"
    with pytest.raises(AssertionError, match="calls seen: .*chat.postMessage"):
        slack.wait_for("chat.update", timeout=0.2)
    slack.reset()
    assert slack.calls() == []


def test_keep_alive_connections_are_served_and_closed_on_stop():
    fake = FakeSlack().start()
    conn = http.client.HTTPConnection("127.0.0.1", int(fake.root.rsplit(":", 1)[1]), timeout=5)
    ports = set()
    for text in ("a", "b"):
        conn.request("POST", "/api/chat.postMessage", body=json.dumps({"channel": "C0TRAIN", "text": text}),
                     headers={"Authorization": f"Bearer {BOT_TOKEN}", "Content-Type": "application/json"})
        assert json.loads(conn.getresponse().read())["ok"]
        ports.add(conn.sock.getsockname()[1])
    assert len(ports) == 1  # one connection, two requests
    fake.stop()
    assert conn.sock.recv(1) == b""  # the idle connection was closed with the server
    conn.close()


def test_response_urls_are_recorded(slack):
    url = slack.response_url("cmd-1")
    assert WebhookClient(url).send(text="working on it", response_type="ephemeral").status_code == 200
    [call] = slack.wait_for("response_url")
    assert call.path == "/response/cmd-1" and call.args == {"text": "working on it", "response_type": "ephemeral"}
    oversize = WebhookClient(url).send(text="x", blocks=[section("x")] * 51)
    assert (oversize.status_code, oversize.body) == (400, "invalid_blocks")


# -- Block Kit limits, at the edge and directly ---------------------------------------------------

@pytest.mark.parametrize("blocks, pointer", [
    ([section("x")] * 51, "no more than 50 items allowed [json-pointer:/blocks]"),
    ([section("x" * 3001)], "must be less than 3001 characters [json-pointer:/blocks/0/text/text]"),
    ([{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}], "/blocks/0/text/text"),
    ([{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}], "/blocks/0/text/type"),
    ([{"type": "context", "elements": [{"type": "mrkdwn", "text": "c" * 2001}]}], "/blocks/0/elements/0/text"),
    ([button(text="b" * 76)], "/blocks/0/elements/0/text/text"),
    ([button(value="v" * 2001)], "/blocks/0/elements/0/value"),
    ([button(action_id="a" * 256)], "/blocks/0/elements/0/action_id"),
    ([dict(section("x"), block_id="b" * 256)], "/blocks/0/block_id"),
    ([{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}], "/blocks/0/fields"),
    ([{"type": "section", "fields": [{"type": "mrkdwn", "text": "f" * 2001}]}], "/blocks/0/fields/0/text"),
    ([{"type": "table", "rows": []}], "unsupported type: table [json-pointer:/blocks/0/type]"),
    ([{"type": "actions", "elements": [{"type": "workflow_button"}]}], "/blocks/0/elements/0/type"),
    ([section("")], "must be more than 0 characters"),
    ([{"type": "actions", "elements": [dict(button()["elements"][0], confirm={
        "title": {"type": "plain_text", "text": "Apply?"}, "text": {"type": "mrkdwn", "text": "t" * 301},
        "confirm": {"type": "plain_text", "text": "Yes"}, "deny": {"type": "plain_text", "text": "No"}})]}],
     "/blocks/0/elements/0/confirm/text/text"),
])
def test_oversize_or_unknown_blocks_are_refused_like_slack(client, blocks, pointer):
    with pytest.raises(SlackApiError) as refused:
        client.chat_postMessage(channel="C0TRAIN", text="fallback", blocks=blocks)
    assert refused.value.response["error"] == "invalid_blocks"
    assert any(pointer in m for m in refused.value.response["response_metadata"]["messages"])
    assert problems(blocks)  # and the same checks, called directly


def test_limits_at_the_boundary_pass(client):
    blocks = [section("x" * 3000), {"type": "header", "text": {"type": "plain_text", "text": "h" * 150}},
              {"type": "context", "elements": [{"type": "mrkdwn", "text": "c" * 2000}] * 10},
              button(text="b" * 75, value="v" * 2000, action_id="a" * 255), {"type": "divider"},
              {"type": "section", "fields": [{"type": "mrkdwn", "text": "f" * 2000}] * 10}]
    blocks += [{"type": "divider"}] * (50 - len(blocks))
    assert problems(blocks) == []
    assert client.chat_postMessage(channel="C0TRAIN", text="t", blocks=blocks)["ok"]


def test_message_text_limit(client):
    assert client.chat_postMessage(channel="C0TRAIN", text="x" * 40_000)["ok"]
    with pytest.raises(SlackApiError) as long:
        client.chat_postMessage(channel="C0TRAIN", text="x" * 40_001)
    assert long.value.response["error"] == "msg_too_long"
    with pytest.raises(SlackApiError) as empty, pytest.warns(UserWarning, match="top-level `text`"):
        client.chat_postMessage(channel="C0TRAIN", text="")
    assert empty.value.response["error"] == "no_text"


def test_modal_limits(client):
    assert client.views_open(trigger_id=new_trigger_id(), view=modal([{"type": "divider"}] * 100))["ok"]
    with pytest.raises(SlackApiError) as refused:
        client.views_open(trigger_id=new_trigger_id(), view=modal([{"type": "divider"}] * 101))
    assert refused.value.response["error"] == "invalid_arguments"  # views answer invalid_arguments, not _blocks
    assert refused.value.response["response_metadata"]["messages"] == [
        "[ERROR] no more than 100 items allowed [json-pointer:/view/blocks]"]
    assert problems([{"type": "divider"}] * 101, surface="modal")
    assert view_problems(dict(modal([]), title={"type": "plain_text", "text": "t" * 25}))


def test_views_update_checks_view_id_and_hash(client):
    opened = client.views_open(trigger_id=new_trigger_id(), view=modal([section("a")]))["view"]
    updated = client.views_update(view_id=opened["id"], hash=opened["hash"], view=modal([section("b")]))["view"]
    assert updated["id"] == opened["id"] and updated["hash"] != opened["hash"]
    with pytest.raises(SlackApiError) as stale:
        client.views_update(view_id=opened["id"], hash=opened["hash"], view=modal([section("c")]))
    assert stale.value.response["error"] == "hash_conflict"


# -- signed requests from Slack ------------------------------------------------------------------

def test_signature_verifies_with_slack_sdk():
    body = payloads.slash_command("why is pytorch-dist-job pending").encode()
    headers = sign(body, secret=SIGNING_SECRET)
    verifier = SignatureVerifier(SIGNING_SECRET)
    assert verifier.is_valid(body, headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"])
    assert verifier.is_valid_request(body, headers)
    stale = sign(body, secret=SIGNING_SECRET, timestamp=int(time.time()) - 600)
    assert not verifier.is_valid_request(body, stale)
    assert not verifier.is_valid_request(body, sign(body, secret="another-secret"))


def test_slash_command_body_has_slacks_fields_in_order():
    body = payloads.slash_command("diagnose pod/x", channel_id="C0TRAIN", user_id="U0BOB", response_url="http://r/1")
    fields = [pair.split("=")[0] for pair in body.split("&")]
    assert fields == ["token", "team_id", "team_domain", "channel_id", "channel_name", "user_id", "user_name",
                      "command", "text", "api_app_id", "is_enterprise_install", "response_url", "trigger_id"]
    parsed = {k: v[0] for k, v in parse_qs(body).items()}
    assert parsed["text"] == "diagnose pod/x" and parsed["user_name"] == "bob" and parsed["command"] == "/gpu"


def test_event_builders_make_unique_events():
    first, second = payloads.app_mention("<@U0BOT> why?"), payloads.app_mention("<@U0BOT> why?")
    assert first["event_id"] != second["event_id"] and first["type"] == "event_callback"
    assert first["event"]["blocks"][0]["elements"][0]["elements"][0] == {"type": "user", "user_id": "U0BOT"}
    assert payloads.direct_message("hi")["event"]["channel_type"] == "im"
    thread = payloads.thread_message("and?", thread_ts="1.000100")["event"]
    assert thread["thread_ts"] == "1.000100" and thread["ts"] != thread["thread_ts"]


class _BoltServer:
    """Serves a Bolt ``App`` over HTTP the way any adapter does: raw body and headers to ``dispatch``."""

    def __init__(self, app: App):
        def handle(handler: BaseHTTPRequestHandler) -> None:
            body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0)).decode()
            response = app.dispatch(BoltRequest(body=body, headers={k: [v] for k, v in handler.headers.items()}))
            data = response.body.encode()
            handler.send_response(response.status)
            for key, values in response.headers.items():
                for value in values:
                    handler.send_header(key, value)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)

        handler_class = type("H", (BaseHTTPRequestHandler,), {"do_POST": handle, "log_message": lambda *a: None})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_bolt_accepts_signed_requests_and_answers_through_the_fake(slack):
    app = App(client=WebClient(token=slack.token, base_url=slack.url), signing_secret=SIGNING_SECRET)
    clicks = []

    @app.command("/gpu")
    def gpu(ack, respond, say, command):
        ack("on it")
        respond(f"diagnosing {command['text']}")
        say(text="done", thread_ts=None)

    @app.event("app_mention")
    def mention(event, say):
        say(text=f"heard {event['text']}", thread_ts=event["ts"])

    @app.action("remediate")
    def remediate(ack, body):
        ack()
        clicks.append((body["actions"][0]["value"], body["message"]["ts"]))

    server = _BoltServer(app)
    try:
        requests = SlackRequests(server.url, secret=SIGNING_SECRET)
        status, _, body = requests.slash_command("pod/gpu-pod -n ml", response_url=slack.response_url("c1"))
        assert (status, body) == (200, "on it")
        assert slack.wait_for("response_url")[0].args["text"] == "diagnosing pod/gpu-pod -n ml"
        assert slack.wait_for("chat.postMessage")[0].args["channel"] == "C0TRAIN"

        assert requests.app_mention("<@U0BOT> why?", ts="1767225000.000900").status == 200
        slack.wait_for("chat.postMessage", predicate=lambda c: c.args.get("thread_ts") == "1767225000.000900")

        posted = slack.calls("chat.postMessage")[0].response["message"]
        assert requests.block_action("remediate", "fix-1", message_ts=posted["ts"], message=posted).status == 200
        assert clicks == [("fix-1", posted["ts"])]

        assert requests.url_verification("c-123").json() == {"challenge": "c-123"}
        forged = payloads.slash_command("x").encode()
        assert requests.raw(forged, {"Content-Type": "application/x-www-form-urlencoded",
                                     **sign(forged, secret="wrong")}).status == 401
        assert requests.raw(forged, {"Content-Type": "application/x-www-form-urlencoded"}).status == 401
    finally:
        server.close()


# -- Socket Mode ---------------------------------------------------------------------------------

@pytest.fixture
def socket_slack():
    with FakeSlack(socket_mode=True) as fake:
        yield fake


def test_socket_mode_round_trip_with_slack_sdk_builtin_client(socket_slack):
    messages: list[str] = []

    def on_request(client: SocketModeClient, request: SocketModeRequest) -> None:
        client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id, payload={"text": "ok"}))

    client = SocketModeClient(app_token=APP_TOKEN, web_client=WebClient(token=BOT_TOKEN, base_url=socket_slack.url),
                              on_message_listeners=[messages.append], auto_reconnect_enabled=False)
    client.socket_mode_request_listeners.append(on_request)
    try:
        client.connect()
        fake = socket_slack.socket_mode
        fake.wait_for_connection()
        command = payloads.fixture("socket_mode_slash_commands.json")["payload"]
        envelope_id = fake.deliver("slash_commands", command)
        ack = fake.wait_for_ack(envelope_id)
        assert ack == {"envelope_id": envelope_id, "payload": {"text": "ok"}}
        assert json.loads(messages[0])["type"] == "hello"
        [opened] = socket_slack.calls("apps.connections.open")
        assert opened.headers["Authorization"] == f"Bearer {APP_TOKEN}"
        assert fake.handshakes[0].startswith("GET /link/?ticket=")
    finally:
        socket_slack.socket_mode.drop_connections()  # else close() waits out the client's 3 s recv timeout
        client.close()


def test_bolt_socket_mode_handler_acks_slash_commands(socket_slack):
    from slack_bolt.adapter.socket_mode.builtin import SocketModeHandler

    app = App(client=WebClient(token=BOT_TOKEN, base_url=socket_slack.url))

    @app.command("/gpu")
    def gpu(ack, command):
        ack(f"diagnosing {command['text']}")

    handler = SocketModeHandler(app, APP_TOKEN)
    handler.client.auto_reconnect_enabled = False
    handler.client.default_auto_reconnect_enabled = False
    try:
        handler.connect()
        command = payloads.fixture("socket_mode_slash_commands.json")["payload"]
        envelope_id = socket_slack.socket_mode.deliver("slash_commands", command)
        ack = socket_slack.socket_mode.wait_for_ack(envelope_id)
        assert ack["payload"]["text"] == f"diagnosing {command['text']}"
    finally:
        socket_slack.socket_mode.drop_connections()
        handler.close()
