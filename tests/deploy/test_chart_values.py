"""Values that cannot work stop `helm template` with one line saying what to change; values that can
give a container environment gpubot's own settings loader accepts."""
from __future__ import annotations

import pytest
import yaml

from tests.deploy.chart import CHART, CI_VALUES, NAMESPACE, RELEASE, REQUIRED, helm, one, render, render_error

FULL = tuple(REQUIRED)


@pytest.mark.parametrize("sets, message", [
    (FULL + ("replicas=2",), "mode=socket runs exactly one replica, got replicas=2: set replicas=1, or mode=http"),
    (("image.repository=r", "database.existingSecret=gpubot-db"), "slack.existingSecret is empty: create a Secret"),
    (("image.repository=r", "slack.existingSecret=gpubot-slack"), "database.existingSecret is empty: create a Secret"),
    (("slack.existingSecret=s", "database.existingSecret=d"), "image.repository is empty"),
    (FULL + ("ingress.enabled=true",), "ingress.enabled needs mode=http"),
    (FULL + ("probePort=3000",), "probePort must differ from httpPort"),
    (FULL + ("shutdownGrace=30",), "shutdownGrace (30 s) must be shorter than terminationGracePeriodSeconds (30 s)"),
    (FULL + ("mode=websocket",), "at '/mode': value must be one of 'socket', 'http'"),
    (FULL + ("replica=2",), "additional properties 'replica' not allowed"),
    (FULL + ("image.digest=abc",), "at '/image/digest'"),
    (FULL + ("logFormat=yaml",), "at '/logFormat'"),
], ids=["socket-replicas", "no-slack-secret", "no-db-secret", "no-image", "socket-ingress", "same-ports",
        "grace", "mode", "typo", "digest", "log-format"])
def test_bad_values_fail_with_a_clear_message(sets, message):
    error = render_error(*sets)
    assert message in error
    # The reason is on the error's first line, not buried under a trace.
    assert error.splitlines()[0].startswith("Error:") and (message in error.splitlines()[0] or "values don't meet" in error)


def _settings_env(container: dict, secrets: dict[tuple[str, str], str]) -> dict[str, str]:
    """The environment the kubelet would give the container, with the Secrets' values filled in."""
    env = {}
    for item in container["env"]:
        source = item.get("valueFrom")
        if source is None:
            env[item["name"]] = item["value"]
        elif "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            env[item["name"]] = secrets[(ref["name"], ref["key"])]
        else:
            env[item["name"]] = {"metadata.name": "gpubot-6d5f-x2k4q", "metadata.namespace": NAMESPACE}[
                source["fieldRef"]["fieldPath"]]
    return env


SECRETS = {("gpubot-slack", "bot-token"): "xoxb-1-2-abc", ("gpubot-slack", "app-token"): "xapp-1-A-2-abc",
           ("gpubot-slack", "signing-secret"): "8f" * 16, ("gpubot-db", "url"): "postgresql+psycopg://u:p@db:5432/gpubot",
           ("gpubot-button-keys", "keys"): "k" * 32 + "," + "o" * 32, ("gpubot-alertmanager", "token"): "t" * 24}


@pytest.mark.parametrize("values", CI_VALUES, ids=[p.stem for p in CI_VALUES])
def test_the_container_environment_loads_as_gpubot_settings(values):
    from bot.policy import parse_policy
    from bot.settings import load_settings

    objects = render(values)
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    settings = load_settings(_settings_env(container, SECRETS))
    rendered = yaml.safe_load(values.read_text())
    assert settings.slack_mode == rendered["mode"]
    assert settings.probe_port != settings.http_port
    assert (settings.identity, settings.lease_namespace) == ("gpubot-6d5f-x2k4q", NAMESPACE)
    # The kubelet's SIGKILL must not come before the bot's own grace period ends.
    assert settings.shutdown_grace < pod["terminationGracePeriodSeconds"]
    # The init container upgrades the same database the bot uses.
    [init] = pod["initContainers"]
    assert init["args"] == ["db", "upgrade"]
    assert load_settings(_settings_env(init, SECRETS)).database_url == settings.database_url

    # The policy is the ConfigMap, mounted as a directory (a subPath never sees updates).
    configmap = one(objects, "ConfigMap")
    [volume] = [v for v in pod["volumes"] if v.get("configMap", {}).get("name") == configmap["metadata"]["name"]]
    [mount] = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    assert "subPath" not in mount and mount["readOnly"] is True
    assert settings.policy_path == f"{mount['mountPath']}/policy.yaml"
    policy = parse_policy(configmap["data"]["policy.yaml"], source="policy.yaml")
    granted = {c for grant in policy.channels.values() for c in grant.clusters}
    if settings.kubeconfig:
        # From a kubeconfig the clusters are its contexts; the one commands default to is granted.
        assert settings.context in granted
        return
    # In-cluster the cluster is known by GPUBOT_CLUSTER_NAME: the policy's channels name it and no other.
    assert granted == ({settings.cluster_name} if rendered.get("policy") else set())


def test_the_policy_value_is_rendered_as_given(tmp_path):
    policy = {"channels": {"C0TEAM": {"clusters": ["train-1"], "namespaces": ["team-a"]}}}
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"policy": policy, "clusterName": "train-1"}))
    configmap = one(render(values, *REQUIRED), "ConfigMap")
    assert yaml.safe_load(configmap["data"]["policy.yaml"]) == policy


def test_the_default_policy_grants_nothing_and_the_notes_say_so():
    from bot.policy import parse_policy

    policy = parse_policy(one(render(None, *REQUIRED), "ConfigMap")["data"]["policy.yaml"], source="policy.yaml")
    assert (policy.channels, policy.users) == ({}, {})
    notes = helm("install", RELEASE, str(CHART), "--dry-run=client", "--namespace", NAMESPACE,
                 *[a for s in REQUIRED for a in ("--set", s)])
    assert notes.returncode == 0, notes.stderr
    assert "The policy is empty, so every request is refused" in notes.stdout


def test_probes_and_ports():
    container = one(render(None, *REQUIRED), "Deployment")["spec"]["template"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert (container["livenessProbe"]["httpGet"], container["readinessProbe"]["httpGet"]) == (
        {"path": "/healthz", "port": "probes"}, {"path": "/readyz", "port": "probes"})
    assert ports == {"http": 3000, "probes": 8081}
    assert CHART.joinpath("values.schema.json").is_file()
