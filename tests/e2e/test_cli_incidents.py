"""`gpubot db`, `gpubot diagnose --record` and `gpubot incidents`, on SQLite and PostgreSQL."""
from __future__ import annotations

import csv
import io
import json

from bot.store import migrate


def test_record_list_show_export(db_url, sim_env, monkeypatch, cli):
    monkeypatch.setenv("GPUBOT_DATABASE_URL", db_url)
    refused = cli("diagnose", "pod/gpu-pod", "-n", "automode-taint", "--record")
    assert refused.code == 3 and "run `gpubot db upgrade`" in refused.err  # nothing diagnosed on an old schema
    assert cli("db", "upgrade").code == 0
    latest = migrate.head()
    assert f"schema at {latest} (latest {latest}, up to date)" in cli("db", "current").out

    first = cli("diagnose", "pod/gpu-pod", "-n", "automode-taint", "--record", "--json")
    assert first.code == 0 and "recorded as incident #1 (new incident)" in first.err
    again = cli("diagnose", "pod/gpu-pod", "-n", "automode-taint", "--record")
    assert "recorded as incident #1 (seen 2 times this week)" in again.err
    assert "not recorded" not in cli("diagnose", "pod/llama-3-8b-16gpu", "-n", "llm-sizing", "--record").err

    listing = json.loads(cli("incidents", "list", "--json").out)
    assert sorted((i["code"], i["occurrences"]) for i in listing) == [
        ("karpenter.no_instance_type", 1), ("scheduling.untolerated_taint", 2)]
    shown = cli("incidents", "show", "1")
    assert "#1 scheduling.untolerated_taint on pod/gpu-pod -n automode-taint (gpubot-sim)" in shown.out
    assert shown.out.count(" diagnosis ") == 2
    rows = list(csv.DictReader(io.StringIO(cli("incidents", "export", "--format", "csv").out)))
    assert {r["target_name"] for r in rows} == {"gpu-pod", "llama-3-8b-16gpu"}
    assert json.loads(cli("incidents", "export", "--format", "json", "--since", "1d").out)
    assert cli("incidents", "show", "42").code == 2
    assert cli("incidents", "list", "--since", "forever").code == 2

    assert cli("db", "downgrade", "base").code == 0
    assert cli("incidents", "list").code == 3


def test_bad_database_url(monkeypatch, cli):
    monkeypatch.setenv("GPUBOT_DATABASE_URL", "mysql://nope")
    result = cli("db", "current")
    assert result.code == 2 and "SQLite or PostgreSQL" in result.err
    monkeypatch.setenv("GPUBOT_DATABASE_URL", "::not a url::")
    assert cli("db", "current").code == 2


def test_serve_refuses_an_old_schema(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("GPUBOT_DATABASE_URL", f"sqlite:///{tmp_path}/old.db")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test-token")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    monkeypatch.setenv("GPUBOT_SLACK_MODE", "http")
    result = cli("serve")
    assert result.code == 3
    assert result.err.strip().endswith("run `gpubot db upgrade`")
