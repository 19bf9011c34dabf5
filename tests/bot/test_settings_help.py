"""Every setting in `gpubot serve --help` and the README, generated from the settings model; --version."""
from __future__ import annotations

import sys
from dataclasses import fields
from importlib.metadata import version

import pytest

from bot.settings import Settings, SettingsError, load_settings, shown_default
from bot.settings_help import README_BEGIN, README_END, markdown_table
from bot.cli import build_parser
from tests.conftest import REPO


def _parse(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(list(args))
    assert done.value.code == 0
    return capsys.readouterr().out


def _serve_help(capsys) -> str:
    return _parse(capsys, "serve", "--help")


def test_serve_help_lists_every_setting_with_its_default_and_help(capsys):
    text = _serve_help(capsys)
    for spec in fields(Settings):
        variable = spec.metadata["env"][0]
        assert variable in text, variable
        line = next(line for line in text.splitlines() if line.strip().split()[:1] == [variable])
        assert f"[default: {shown_default(spec)}]" in line, line
        assert spec.metadata["help"].split()[0] in text
    assert "GPUBOT_BUTTON_KEYS  [default: unset]" in text
    assert "GPUBOT_RETENTION_DELIVERIES  [default: 2w]" in text
    assert "GPUBOT_REQUEST_TIMEOUT  [default: 10s]" in text


def test_every_field_is_read_from_its_variable():
    """The help is true: setting each variable changes its field (no field is documented but unread)."""
    samples = {str: "x-from-env", int: "2000"}
    for spec in fields(Settings):
        variable = spec.metadata["env"][0]
        if spec.metadata["parse"].__name__ in ("_seconds", "_retention"):
            raw, expected = "1h30m", 5400.0
        elif spec.name == "slack_mode":
            raw, expected = "socket", "socket"
        elif spec.name == "log_format":
            raw, expected = "json", "json"
        elif spec.name == "log_level":
            raw, expected = "debug", "DEBUG"
        elif spec.name == "slack_rate_share":
            raw, expected = "0.5", 0.5
        elif spec.name == "channel_namespaces":
            raw, expected = "C0123ABC=ml", {"C0123ABC": "ml"}
        elif spec.name in ("button_key", "button_keys"):
            raw = "k" * 40
            expected = raw if spec.name == "button_key" else (raw,)
        elif spec.name == "trusted_proxies":
            raw, expected = "10.0.0.0/16", ("10.0.0.0/16",)
        elif spec.name == "slack_api_url":
            raw, expected = "http://127.0.0.1:1/api", "http://127.0.0.1:1/api/"
        elif spec.type in ("int",):
            raw, expected = samples[int], 2000
        else:
            raw, expected = samples[str], samples[str]
        env = {variable: raw}
        if spec.name == "http_max_connections_per_client":
            env["GPUBOT_HTTP_MAX_CONNECTIONS"] = "4000"
        if spec.name.startswith("lease_") and spec.name != "lease_name" and spec.name != "lease_namespace":
            continue  # held to client-go's ordering together (test_bad_settings_keep_their_one_line_messages)
        assert getattr(load_settings(env), spec.name) == expected, spec.name


def test_the_readme_table_is_the_generated_one():
    readme = (REPO / "README.md").read_text()
    assert README_BEGIN in readme and README_END in readme
    table = readme.split(README_BEGIN, 1)[1].split(README_END, 1)[0].strip()
    assert table == markdown_table(), "run: .venv/bin/python -m bot.settings_help --markdown and paste it into README"


@pytest.mark.parametrize("env, message", [
    ({"GPUBOT_PROBE_PORT": "3000"}, "GPUBOT_PROBE_PORT must differ from GPUBOT_HTTP_PORT"),
    ({"GPUBOT_LEASE_DURATION": "5"}, "GPUBOT_LEASE_DURATION must exceed GPUBOT_LEASE_RENEW_DEADLINE"),
    ({"GPUBOT_SLACK_RATE_SHARE": "2"}, "at most 1, got 2 (with 2 replicas: 0.5)"),
    ({"GPUBOT_BUTTON_KEY": "short"}, "GPUBOT_BUTTON_KEY must be at least 32 characters"),
    ({"GPUBOT_SLACK_MODE": "carrier-pigeon"}, "GPUBOT_SLACK_MODE must be socket or http"),
    ({"GPUBOT_CHANNEL_NAMESPACES": "C01"}, "GPUBOT_CHANNEL_NAMESPACES items look like C0123ABC=ml-training"),
    ({"GPUBOT_PAGE_SIZE": "0"}, "GPUBOT_PAGE_SIZE must be at least 1, got '0'"),
    ({"GPUBOT_MAX_RETRIES": "many"}, "GPUBOT_MAX_RETRIES must be an integer, got 'many'"),
    ({"GPUBOT_LOG_FORMAT": "xml"}, "GPUBOT_LOG_FORMAT must be one of text, json, got 'xml'"),
    ({"GPUBOT_RETENTION_ALERTS": "-1d"}, "GPUBOT_RETENTION_ALERTS cannot be negative (0 keeps forever)"),
])
def test_bad_settings_keep_their_one_line_messages(env, message):
    with pytest.raises(SettingsError) as caught:
        load_settings(env)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_fallback_variables_and_computed_defaults():
    settings = load_settings({"AWS_DEFAULT_REGION": "us-west-2", "POD_NAMESPACE": "gpubot", "SLACK_APP_TOKEN": "xapp-1",
                              "XDG_STATE_HOME": "/state"})
    assert (settings.aws_region, settings.lease_namespace, settings.slack_mode) == ("us-west-2", "gpubot", "socket")
    assert settings.database_url == "sqlite:////state/gpubot/gpubot.db"
    assert load_settings({"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-west-2"}).aws_region == "eu-west-1"


def test_version_names_gpubot_and_python(capsys):
    out = _parse(capsys, "--version").strip()
    assert out == f"gpubot {version('gpubot')} (Python {sys.version.split()[0]})"


def test_doctor_is_listed_in_the_help(capsys):
    assert "doctor" in _parse(capsys, "--help")
