"""One duration grammar: Go's time.ParseDuration (src/time/format.go, and its table in
src/time/time_test.go parseDurationTests), plus d and w where a person types, plus bare seconds where a
setting took seconds; NodePool durations as Karpenter reads and admits them."""
from __future__ import annotations

import random
import time
from datetime import timedelta
from pathlib import Path

import pytest

from bot.durations import (
    DurationError, format_duration, is_karpenter_duration, parse_duration, parse_go_duration, parse_nodepool_duration,
)
from bot.settings import SettingsError, load_settings

# Rows of Go's parseDurationTests (time_test.go) that fit a timedelta's microseconds.
GO_ACCEPTS = [("0", 0), ("5s", 5), ("30s", 30), ("1478s", 1478), ("-5s", -5), ("+5s", 5), ("-0", 0), ("+0", 0),
              ("5.0s", 5), ("5.6s", 5.6), ("5.s", 5), (".5s", 0.5), ("1.0s", 1), ("1.00s", 1), ("1.004s", 1.004),
              ("100.00100s", 100.001), ("10ms", 0.01), ("11us", 11e-6), ("12\u00b5s", 12e-6), ("12\u03bcs", 12e-6),
              ("13ms", 0.013), ("14s", 14), ("15m", 900), ("16h", 57600), ("3h30m", 12600), ("10.5s4m", 250.5),
              ("-2m3.4s", -123.4), ("1h2m3s4ms5us", 3723.004005), ("39h9m14.425s", 141 * 1000 - 45.575),
              ("52763797000ns", 52.763797), ("0.3333333333333333333h", 1200)]
GO_REFUSES = ["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "1w", "3000000h", "9223372036854775808ns",
              " 1h", "1h ", "1 h", "1H", "Never"]


@pytest.mark.parametrize("text, seconds", GO_ACCEPTS)
def test_go_accepts_what_go_accepts(text, seconds):
    assert parse_go_duration(text).total_seconds() == pytest.approx(seconds, abs=1e-6)


@pytest.mark.parametrize("text", GO_REFUSES)
def test_go_refuses_what_go_refuses(text):
    assert parse_go_duration(text) is None


@pytest.mark.parametrize("text, expected", [
    ("7d", timedelta(days=7)), ("1w", timedelta(weeks=1)), ("2w3d", timedelta(days=17)),
    ("1h30m", timedelta(minutes=90)), ("90s", timedelta(seconds=90)), ("1.5h", timedelta(minutes=90)),
    ("300ms", timedelta(milliseconds=300)), ("1d12h", timedelta(hours=36)), (" 2h30m ", timedelta(minutes=150)),
])
def test_people_may_write_days_and_weeks(text, expected):
    assert parse_duration(text, name="--since") == expected


def test_a_bare_number_is_seconds_only_where_a_setting_took_seconds():
    assert parse_duration("600", name="GPUBOT_X", bare_seconds=True) == timedelta(seconds=600)
    assert parse_duration("0.5", name="GPUBOT_X", bare_seconds=True) == timedelta(milliseconds=500)
    with pytest.raises(DurationError, match=r"^--since must be a duration like 90s, 1h30m, 1\.5h, 7d or 2w, got '600'$"):
        parse_duration("600", name="--since")


@pytest.mark.parametrize("text", ["7x", "1h 30m", "h", "1d2", "--1h", "1e3s", "\u0661h", "9" * 300 + "h"])
def test_a_bad_duration_is_one_line_naming_the_field_with_examples(text):
    with pytest.raises(DurationError) as caught:
        parse_duration(text, name="GPUBOT_SWEEP_INTERVAL", bare_seconds=True)
    message = str(caught.value)
    assert message.startswith("GPUBOT_SWEEP_INTERVAL must be a duration like 90s, 1h30m") and "\n" not in message
    assert len(message) < 160


def test_format_then_parse_is_the_same_duration():
    rng = random.Random(20)
    samples = [timedelta(0), timedelta(microseconds=1), timedelta(days=-3, seconds=5)]
    samples += [timedelta(microseconds=rng.randrange(-10**15, 10**15)) for _ in range(3000)]
    samples += [timedelta(seconds=rng.randrange(0, 10**7)) for _ in range(1000)]
    for value in samples:
        text = format_duration(value)
        assert parse_duration(text, name="x") == value, text


def test_parse_then_format_is_canonical():
    assert format_duration(parse_duration("90m", name="x")) == "1h30m"
    assert format_duration(parse_duration("14d", name="x")) == "2w"
    assert format_duration(parse_duration("1.5s", name="x")) == "1s500ms"
    assert format_duration(timedelta(0)) == "0s"


def test_hostile_input_is_refused_in_linear_time():
    start = time.perf_counter()
    for text in ("1" * 100_000 + "h", "1h" * 50_000, "." * 100_000, "1.1.1.1" * 10_000):
        assert parse_go_duration(text) is None
        with pytest.raises(DurationError):
            parse_duration(text, name="x", bare_seconds=True)
    assert time.perf_counter() - start < 0.5


def test_nodepool_durations_read_as_karpenter_reads_them():
    # NillableDuration.UnmarshalJSON: "Never" or time.ParseDuration (kubernetes-sigs/karpenter pkg/apis/v1/duration.go)
    assert parse_nodepool_duration("Never") is None
    assert parse_nodepool_duration("1h30m") == timedelta(minutes=90)
    assert parse_nodepool_duration("1.5h") == timedelta(minutes=90)  # Go reads it, though the CRD would not admit it
    with pytest.raises(DurationError, match=r"^expireAfter must be a Go duration such as 30s, 10m or 1h30m, or Never"):
        parse_nodepool_duration("7d", field="expireAfter")


@pytest.mark.parametrize("text, admitted", [("10m", True), ("1h30m", True), ("30m1h", True), ("0s", True),
                                            ("Never", True), ("1.5h", False), ("300ms", False), ("7d", False),
                                            ("", False), ("never", False), ("10", False)])
def test_writes_pass_the_nodepool_crd_pattern(text, admitted):
    assert is_karpenter_duration(text) is admitted


def test_the_write_pattern_is_the_crds():
    """Every duration field of the checked-in NodePool CRD carries the pattern is_karpenter_duration applies."""
    from playbooks.durations import _KARPENTER_CRD

    crd = (Path(__file__).parents[2] / "playbooks" / "schemas" / "crds" / "karpenter.sh_nodepools.yaml").read_text()
    patterns = {line.split("pattern:", 1)[1].strip() for line in crd.splitlines()
                if "pattern:" in line and "Never" in line}
    assert patterns == {_KARPENTER_CRD.pattern}


def test_seconds_settings_take_durations_and_plain_seconds():
    settings = load_settings({"GPUBOT_SWEEP_INTERVAL": "2m", "GPUBOT_BUTTON_TTL": "2w", "GPUBOT_ANSWER_DEADLINE": "900",
                              "GPUBOT_RETENTION_DELIVERIES": "0", "GPUBOT_RETENTION_INCIDENTS": "30d"})
    assert settings.sweep_interval == 120 and settings.button_ttl == 14 * 86400 and settings.answer_deadline == 900
    assert settings.retention_deliveries == 0 and settings.retention_incidents == 30 * 86400
    with pytest.raises(SettingsError, match="^GPUBOT_SWEEP_INTERVAL must be positive, got '0s'$"):
        load_settings({"GPUBOT_SWEEP_INTERVAL": "0s"})
    with pytest.raises(SettingsError, match="^GPUBOT_RETENTION_ALERTS must be a duration like .* got '90 days'"):
        load_settings({"GPUBOT_RETENTION_ALERTS": "90 days"})


def test_since_and_policy_expiry_take_the_same_grammar(tmp_path):
    from bot.errors import UserError
    from bot.policy import PolicyError, load_policy
    from bot.store_cli import parse_since

    assert parse_since("2h30m") == timedelta(minutes=150)
    assert parse_since("1w") == timedelta(weeks=1)
    with pytest.raises(UserError, match="^--since must be a duration like"):
        parse_since("yesterday")
    path = tmp_path / "policy.yaml"
    path.write_text("remediations:\n  expiry: 1w\n")
    assert load_policy(path).remediations.expiry == timedelta(weeks=1)
    path.write_text("remediations:\n  expiry: 1h30m\n")
    assert load_policy(path).remediations.expiry == timedelta(minutes=90)
    path.write_text("remediations:\n  expiry: 2w\n")
    with pytest.raises(PolicyError, match="at most 7d"):
        load_policy(path)
