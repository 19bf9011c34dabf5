"""POST /alertmanager: the status code and one-line JSON answer for every case, and what reaches the sink."""
from __future__ import annotations

import json
import logging

import pytest

from bot.alerts.alertmanager import MAX_BODY
from bot.alerts.intake import AlertmanagerEndpoint
from tests.bot.alertmanager_payloads import alert, encode, fixture, webhook

TOKEN = "am-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


class Sink:
    def __init__(self, fail: Exception | None = None) -> None:
        self.batches = []
        self.fail = fail

    def __call__(self, batch) -> None:
        self.batches.append(batch)
        if self.fail:
            raise self.fail


def endpoint(sink=None, *, token: str | None = TOKEN) -> AlertmanagerEndpoint:
    return AlertmanagerEndpoint(token, sink if sink is not None else Sink(), cluster="prod")


def one_line_error(answer: dict) -> str:
    assert set(answer) == {"error"} and "\n" not in answer["error"] and "Traceback" not in answer["error"]
    json.dumps(answer)  # what the server writes back must be JSON
    return answer["error"]


def test_a_firing_batch_is_handed_to_the_sink_and_accepted():
    sink = Sink()
    status, answer = endpoint(sink).handle("POST", AUTH, fixture("dcgm_xid_firing.json"))
    assert (status, answer) == (202, {"accepted": 2})
    [batch] = sink.batches
    assert [a.problem.code for a in batch.alerts] == ["gpu.xid_error", "gpu.xid_error"]
    assert {a.problem.cluster for a in batch.alerts} == {"prod"}


def test_a_resolved_batch_is_accepted_too():
    sink = Sink()
    body = encode(webhook(alert({"node": "n1"}, status="resolved", endsAt="2026-05-14T10:00:00Z")))
    assert endpoint(sink).handle("POST", AUTH, body) == (202, {"accepted": 1})
    assert sink.batches[0].status == "resolved"


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "HEAD"])
def test_other_methods_are_405(method):
    sink = Sink()
    status, answer = endpoint(sink).handle(method, AUTH, fixture("dcgm_xid_firing.json"))
    assert status == 405 and "use POST" in one_line_error(answer)
    assert sink.batches == []


@pytest.mark.parametrize("token", [None, ""])
def test_without_a_configured_token_the_intake_is_off(token):
    sink = Sink()
    status, answer = endpoint(sink, token=token).handle("POST", AUTH, fixture("dcgm_xid_firing.json"))
    assert status == 503 and "GPUBOT_ALERTMANAGER_TOKEN" in one_line_error(answer)
    assert sink.batches == []


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": ""},
    {"Authorization": "Bearer"},
    {"Authorization": "Bearer wrong-token"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": f"Bearer {TOKEN[:-1]}"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": TOKEN},
    {"X-Authorization": f"Bearer {TOKEN}"},
    {"Authorization": "Bearer ümlaut"},
    {"Authorization": f"Bearer {TOKEN}", "authorization": "Bearer wrong"},  # two values: which one?
])
def test_a_missing_or_wrong_token_is_401(headers):
    sink = Sink()
    status, answer = endpoint(sink).handle("POST", headers, fixture("dcgm_xid_firing.json"))
    assert status == 401 and "bearer token" in one_line_error(answer)
    assert TOKEN not in answer["error"]
    assert sink.batches == []


@pytest.mark.parametrize("value", [f"bearer {TOKEN}", f"BEARER {TOKEN}", f"  Bearer {TOKEN}  "])
def test_the_scheme_is_case_insensitive_and_header_names_too(value):
    assert endpoint().handle("POST", {"authorization": value}, fixture("karpenter_firing.json"))[0] == 202


def test_the_token_is_checked_before_the_body_is_read():
    status, _ = endpoint().handle("POST", {}, b"{not json")
    assert status == 401


def test_a_body_over_one_mebibyte_is_413():
    status, answer = endpoint().handle("POST", AUTH, b" " * (MAX_BODY + 1))
    assert status == 413 and "max_alerts" in one_line_error(answer)


def test_more_than_a_thousand_alerts_is_413():
    small = {"status": "firing", "labels": {"alertname": "A"}, "startsAt": "2026-01-01T00:00:00Z"}
    status, answer = endpoint().handle("POST", AUTH, encode(webhook(*[small] * 1001)))
    assert status == 413 and "1001 alerts" in one_line_error(answer)


@pytest.mark.parametrize("body, message", [
    (b"{not json", "body is not JSON"),
    (b"", "body is not JSON"),
    (encode({**webhook(), "version": "3"}), "webhook version '3' is not supported"),
    (encode(webhook({**alert({}), "labels": {}})), "alerts[0].labels.alertname is missing"),
    (encode(webhook(alert({}, startsAt="soon"))), "alerts[0].startsAt is not an RFC 3339 timestamp"),
])
def test_malformed_bodies_are_400_with_the_reason(body, message):
    sink = Sink()
    status, answer = endpoint(sink).handle("POST", AUTH, body)
    assert status == 400 and message in one_line_error(answer)
    assert sink.batches == []


def test_a_failing_sink_is_500_with_one_line_and_a_log_line(caplog):
    sink = Sink(fail=RuntimeError("database is locked\nsecond line"))
    with caplog.at_level(logging.ERROR, logger="bot.alerts.intake"):
        status, answer = endpoint(sink).handle("POST", AUTH, fixture("dcgm_xid_firing.json"))
    assert status == 500
    error = one_line_error(answer)
    assert "Alertmanager will retry" in error and "database is locked" not in error
    [record] = caplog.records
    assert "RuntimeError: database is locked second line" in record.getMessage()
    assert "GPUXidError" in record.getMessage()  # the group key says which alerts were lost
