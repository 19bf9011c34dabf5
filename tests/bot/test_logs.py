"""gpubot's log: GPUBOT_LOG_FORMAT=json gives one JSON object per line carrying the request's fields
(from `gpubot serve` handling a real command), nothing secret survives (message, arguments, fields,
traceback), and the text format is the lines it always was."""
from __future__ import annotations

import io
import json
import logging
import re
import time

import pytest

from bot.logs import configure_logging, request_fields
from bot.settings import load_settings
from tests.fakes.slack_api import FakeSlack
from tests.slack.serve_process import serving

BOT_TOKEN = "xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx"
AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRETS = (BOT_TOKEN, AWS_KEY_ID, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")


@pytest.fixture
def root_logger():
    """configure_logging replaces the root logger's handlers: pytest's own come back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def configured(fmt: str, level: str = "INFO") -> io.StringIO:
    out = io.StringIO()
    configure_logging(load_settings({"GPUBOT_LOG_FORMAT": fmt, "GPUBOT_LOG_LEVEL": level}), stream=out)
    return out


def test_a_command_handled_by_serve_logs_json_lines_with_its_fields(seed_sim, tmp_path):
    with FakeSlack() as slack, serving(seed_sim, slack, tmp_path, GPUBOT_WORKERS="0", GPUBOT_LOG_FORMAT="json") as bot:
        bot.send.slash_command("why-pending pytorch-dist-job -n t5-fsdp", response_url=slack.response_url())
        slack.wait_for("chat.update", timeout=60,
                       predicate=lambda c: "karpenter.provisioning" in json.dumps(c.args.get("blocks")))
        deadline = time.monotonic() + 20
        while True:  # logged when the listener returns, just after its last Slack call
            lines = [line for line in bot.log.read_text().splitlines() if line.strip()]
            handled = [line for line in lines if "command why-pending handled" in line]
            if handled or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    # Every line is one JSON object, save the one line serve prints for people (where it listens).
    records = [json.loads(line) for line in lines if not line.startswith("gpubot: listening")]
    assert all(isinstance(r, dict) and {"time", "level", "message", "logger"} <= set(r) for r in records)
    [line] = handled
    record = json.loads(line)
    assert record["level"] == "INFO" and record["logger"] == "gpubot.requests"
    assert (record["channel"], record["user"], record["target"]) == ("C0TRAIN", "U0ALICE", "pytorch-dist-job")
    assert re.fullmatch(r"[0-9a-f]{12}", record["request_id"]) and isinstance(record["duration_ms"], int)
    assert record["duration_ms"] > 0


def test_json_lines_carry_the_request_fields_of_the_request_they_were_logged_in(root_logger):
    out = configured("json")
    with request_fields(request_id="r1", channel="C1", user="U1", target="job/a"):
        logging.getLogger("gpubot.anywhere").warning("cluster slow")
    logging.getLogger("gpubot.anywhere").warning("outside")
    inside, outside = (json.loads(line) for line in out.getvalue().splitlines())
    assert {k: inside[k] for k in ("request_id", "channel", "user", "target", "level", "message", "logger")} == {
        "request_id": "r1", "channel": "C1", "user": "U1", "target": "job/a", "level": "WARNING",
        "message": "cluster slow", "logger": "gpubot.anywhere"}
    assert "request_id" not in outside and outside["message"] == "outside"


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_no_secret_reaches_the_log(root_logger, fmt):
    out = configured(fmt)
    log = logging.getLogger("gpubot.test")
    with request_fields(request_id="r2", target=f"job/x {AWS_SECRET}"):
        log.info("posting with %s", BOT_TOKEN)
        log.info(f"key {AWS_KEY_ID} in the message itself")
        try:
            raise RuntimeError(f"boto said {AWS_SECRET}")
        except RuntimeError:
            log.exception("the call failed")
    text = out.getvalue()
    assert text.count("[REDACTED]") >= (4 if fmt == "json" else 3)  # text lines show no request fields
    for secret in SECRETS:
        assert secret not in text
    if fmt == "json":
        records = [json.loads(line) for line in text.splitlines()]
        assert len(records) == 3 and "RuntimeError" in records[2]["exc_info"]
        assert records[0]["target"].startswith("job/x ")


def test_the_text_format_is_unchanged(root_logger):
    out = configured("text")
    with request_fields(request_id="r3", channel="C1"):
        logging.getLogger("gpubot").info("gpubot: stopped")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO gpubot gpubot: stopped\n", out.getvalue())


def test_the_level_is_gpubot_log_level(root_logger):
    out = configured("json", level="WARNING")
    logging.getLogger("gpubot").info("not shown")
    logging.getLogger("gpubot").warning("shown")
    assert [json.loads(line)["message"] for line in out.getvalue().splitlines()] == ["shown"]


def test_a_librarys_extra_fields_are_redacted_and_colour_copies_dropped():
    import io
    import json as _json
    import logging as _logging

    from bot.logs import handler

    stream = io.StringIO()
    log = _logging.getLogger("gpubot.test.extra")
    log.handlers[:] = [handler(fmt="json", stream=stream)]
    log.propagate = False
    log.setLevel(_logging.INFO)
    token = "xoxb-" + "1234567890-" * 2 + "abcdefghijklmnopqrstuvwx"
    log.info("started", extra={"color_message": "\x1b[36mstarted\x1b[0m", "upstream": f"token={token}"})
    line = _json.loads(stream.getvalue().strip())
    assert "color_message" not in line
    assert token not in line["upstream"] and "REDACTED" in line["upstream"]
