"""`gpubot doctor` over real connections: the simulated API server (SelfSubjectAccessReview), the fake
Slack Web API (auth.test and its x-oauth-scopes header), moto (STS and EC2) and SQLite at head; and a
broken set-up, where each failure is said with its fix."""
from __future__ import annotations

import json
import socket

import pytest

from bot.doctor import EXIT_CONFIGURATION, EXIT_DEPENDENCY, EXIT_OK
from bot.doctor_checks import manifest_scopes
from tests.conftest import REPO, point_cli_at, run_cli
from tests.fakes.slack_api import DEFAULT_SCOPES, FakeSlack

POLICY = """\
channels:
  C0123ABCD: {clusters: ["*"], namespaces: ["*"]}
approvers:
  users: [U0ONCALL1]
remediations:
  expiry: 2h
  annotate-do-not-disrupt: {namespaces: ["*"]}
  nodepool-consolidation: {nodepools: ["gpu-*"]}
  cordon-gpu-node: {nodes: ["*"]}
"""


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def sqlite_at_head(tmp_path):
    from bot.store import make_engine, migrate

    url = f"sqlite:///{tmp_path / 'gpubot.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    return url


@pytest.fixture
def world(seed_sim, monkeypatch, sqlite_at_head, tmp_path):
    """Everything the doctor checks, working: seed cluster + moto, fake Slack, SQLite at head, a policy."""
    point_cli_at(seed_sim, monkeypatch)
    for name in ("AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_STS", "SLACK_APP_TOKEN", "GPUBOT_POLICY", "GPUBOT_BUTTON_KEYS",
                 "GPUBOT_BUTTON_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("GPUBOT_DATABASE_URL", sqlite_at_head)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    monkeypatch.setenv("GPUBOT_POLICY", str(policy))
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "signing-secret-for-the-doctor-test")
    with FakeSlack() as slack:
        monkeypatch.setenv("SLACK_API_URL", slack.url)
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
        yield slack


def _rows(out: str) -> dict[str, str]:
    """check name -> its line, from the plain output (one 'STATUS  name: detail' line per check)."""
    rows = {}
    for line in out.splitlines():
        if line and not line.startswith(" "):
            status, rest = line.split(None, 1)
            rows[rest.split(":", 1)[0]] = status
    return rows


def test_a_working_setup_passes_every_check(world):
    result = run_cli("doctor")
    assert result.code == EXIT_OK, result.out + result.err
    assert _rows(result.out) == {"settings": "ok", "policy": "ok", "database": "ok", "slack": "ok", "cluster reads": "ok",
                                 "leader election": "ok", "remediation writes": "ok", "aws": "ok"}, result.out
    assert world.calls("auth.test")
    assert "schema at head" in result.out and "arn:aws:sts::" in result.out
    assert f"all {len(manifest_scopes('http'))} bot scopes of the http manifest granted" in result.out


def test_json_lists_each_check(world):
    result = run_cli("doctor", "--json")
    answer = json.loads(result.out)
    assert result.code == EXIT_OK and answer["ok"] is True
    assert [c["name"] for c in answer["checks"]][:4] == ["settings", "policy", "database", "slack"]
    assert all(c["status"] == "ok" for c in answer["checks"])


def test_a_broken_setup_says_each_failure_and_its_fix(world, monkeypatch):
    port = _closed_port()
    monkeypatch.setenv("GPUBOT_DATABASE_URL", f"postgresql://gpubot:secret-pw@127.0.0.1:{port}/gpubot")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-not-the-right-one")
    result = run_cli("doctor", "--context", "no-such-context")
    assert result.code == EXIT_DEPENDENCY, result.out + result.err
    rows = _rows(result.out)
    assert (rows["database"], rows["slack"], rows["cluster"]) == ("FAIL", "FAIL", "FAIL"), result.out
    assert f"FAIL    database: cannot reach postgresql+psycopg://gpubot:***@127.0.0.1:{port}/gpubot" in result.out
    assert "fix: start the database or correct host, port and credentials in GPUBOT_DATABASE_URL" in result.out
    assert "auth.test refused the bot token (invalid_auth)" in result.out
    assert "fix: set SLACK_BOT_TOKEN to the Bot User OAuth Token" in result.out
    assert "no-such-context" in result.out and "fix: pass --context with a context of the kubeconfig" in result.out
    assert "secret-pw" not in result.out and "Traceback" not in result.out + result.err
    # every failing line is followed by its fix
    lines = result.out.splitlines()
    for at, line in enumerate(lines):
        if line.startswith("FAIL"):
            assert lines[at + 1].strip().startswith("fix: "), line


def test_a_bad_setting_is_exit_2_and_names_it(world, monkeypatch):
    monkeypatch.setenv("GPUBOT_SWEEP_INTERVAL", "soon")
    result = run_cli("doctor")
    assert result.code == EXIT_CONFIGURATION
    assert result.out.startswith("FAIL    settings: GPUBOT_SWEEP_INTERVAL must be a duration like 90s, 1h30m")


def test_a_bad_policy_is_exit_2(world, tmp_path, monkeypatch):
    bad = tmp_path / "bad.yaml"
    bad.write_text("remediations:\n  expiry: 30\n")
    monkeypatch.setenv("GPUBOT_POLICY", str(bad))
    result = run_cli("doctor")
    assert result.code == EXIT_CONFIGURATION and f"FAIL    policy: {bad}:2: remediations.expiry" in result.out


def test_a_missing_scope_is_named(world, monkeypatch):
    with FakeSlack(scopes=DEFAULT_SCOPES - {"files:write"}) as slack:
        monkeypatch.setenv("SLACK_API_URL", slack.url)
        result = run_cli("doctor")
    assert result.code == EXIT_DEPENDENCY
    assert "the token lacks scope(s) files:write" in result.out and "Bot Token Scopes" in result.out


def test_denied_reads_are_listed(monkeypatch, world):
    from sim.serve import start_sim

    with start_sim(scenarios=["sweep-restricted-reads"], ec2=False, directory=REPO / "sim" / "scenarios" / "sweep") as sim:
        monkeypatch.setenv("KUBECONFIG", str(sim.kubeconfig))
        result = run_cli("doctor")
    assert result.code == EXIT_DEPENDENCY, result.out
    line = next(line for line in result.out.splitlines() if "cluster reads" in line)
    assert line.startswith("FAIL") and "4 of 37 denied" in line
    assert "list karpenter.sh/nodeclaims" in line and "get events" in line and "get pods" not in line
    assert "ClusterRole gpubot-read" in result.out


def test_the_manifests_of_both_modes_ask_for_the_same_scopes():
    assert manifest_scopes("http") == manifest_scopes("socket") <= DEFAULT_SCOPES


def test_the_reads_checked_are_the_read_role_of_the_install():
    from bot.gateway.permissions import reads

    from tests.deploy.chart import REQUIRED, render

    docs = render(None, *REQUIRED)  # the Helm chart's objects (deploy/helm/gpubot)
    [role] = [d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "gpubot-read"]
    granted = {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
               for v in rule["verbs"]}
    assert {(a.group, a.resource, a.verb) for a in reads()} == granted



def test_socket_mode_checks_the_app_token_too(world, monkeypatch):
    with FakeSlack(socket_mode=True) as slack:
        monkeypatch.setenv("SLACK_API_URL", slack.url)
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
        monkeypatch.setenv("SLACK_APP_TOKEN", slack.app_token)
        result = run_cli("doctor")
        assert len(slack.calls("apps.connections.open")) == 1
    assert result.code == EXIT_OK, result.out + result.err
    rows = _rows(result.out)
    assert (rows["settings"], rows["slack"], rows["slack app token"]) == ("ok", "ok", "ok"), result.out
    assert "ok      settings: loaded (socket mode)" in result.out
    assert f"all {len(manifest_scopes('socket'))} bot scopes of the socket manifest granted" in result.out


@pytest.mark.parametrize(("token", "error"), [("xapp-1-not-the-right-one", "invalid_auth"),
                                              ("BOT", "not_allowed_token_type")])
def test_a_refused_app_token_is_said_with_its_fix(world, monkeypatch, token, error):
    with FakeSlack(socket_mode=True) as slack:
        monkeypatch.setenv("SLACK_API_URL", slack.url)
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
        monkeypatch.setenv("SLACK_APP_TOKEN", slack.token if token == "BOT" else token)
        result = run_cli("doctor")
    assert result.code == EXIT_DEPENDENCY, result.out
    rows = _rows(result.out)
    assert (rows["slack"], rows["slack app token"]) == ("ok", "FAIL"), result.out
    assert f"FAIL    slack app token: apps.connections.open refused the app-level token ({error})" in result.out
    assert "fix: set SLACK_APP_TOKEN to an xapp-... token with connections:write" in result.out
    assert "xapp-1-not-the-right-one" not in result.out


def test_socket_mode_without_an_app_token_is_a_configuration_failure(world, monkeypatch):
    monkeypatch.setenv("GPUBOT_SLACK_MODE", "socket")
    result = run_cli("doctor")
    assert result.code == EXIT_CONFIGURATION, result.out
    assert "FAIL    slack app token: GPUBOT_SLACK_MODE is socket but SLACK_APP_TOKEN is not set" in result.out
    assert not world.calls("apps.connections.open")


def test_http_mode_does_not_check_an_app_token(world):
    result = run_cli("doctor")
    assert "slack app token" not in _rows(result.out) and not world.calls("apps.connections.open")
