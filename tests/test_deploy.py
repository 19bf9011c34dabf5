"""The shipped manifests validate against the Kubernetes schemas; the Slack manifest asks for what the
listeners use."""
from pathlib import Path

import yaml

from playbooks.validation import validate_object

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def test_kubernetes_manifests_validate():
    docs = [d for f in sorted((DEPLOY / "kubernetes").glob("*.yaml")) if f.name != "kustomization.yaml"
            for d in yaml.safe_load_all(f.read_text()) if d]
    assert {d["kind"] for d in docs} >= {"Deployment", "Service", "ClusterRole", "ServiceAccount"}
    for doc in docs:
        assert validate_object(doc) == [], doc["kind"]


def test_slack_manifest_matches_the_listeners():
    manifest = yaml.safe_load((DEPLOY / "slack-app-manifest.yaml").read_text())
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/gpu"]
    assert set(manifest["settings"]["event_subscriptions"]["bot_events"]) >= {"app_mention", "message.im"}
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert set(manifest["oauth_config"]["scopes"]["bot"]) >= {"app_mentions:read", "chat:write", "commands", "im:history"}


def test_deployment_shares_one_database_and_outlives_the_shutdown_grace():
    [deployment] = [d for d in yaml.safe_load_all((DEPLOY / "kubernetes" / "deployment.yaml").read_text())
                    if d and d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    # Replicas on a read-only root filesystem need a shared store, not the default SQLite file.
    assert env["GPUBOT_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == "gpubot-db"
    assert [c["args"] for c in pod["initContainers"]] == [["db", "upgrade"]]
    # The kubelet's SIGKILL must not come before the bot's own grace period ends.
    assert float(env["GPUBOT_SHUTDOWN_GRACE"]["value"]) < pod["terminationGracePeriodSeconds"]


def test_the_policy_configmap_is_a_valid_policy_mounted_where_gpubot_policy_points():
    from bot.policy import parse_policy

    kube = DEPLOY / "kubernetes"
    [configmap] = [d for d in yaml.safe_load_all((kube / "policy-configmap.yaml").read_text())
                   if d and d["kind"] == "ConfigMap"]
    assert configmap["metadata"]["name"] == "gpubot-policy"
    policy = parse_policy(configmap["data"]["policy.yaml"], source="policy-configmap.yaml")
    assert "policy-configmap.yaml" in yaml.safe_load((kube / "kustomization.yaml").read_text())["resources"]

    [deployment] = [d for d in yaml.safe_load_all((kube / "deployment.yaml").read_text())
                    if d and d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    [volume] = [v for v in pod["volumes"] if v.get("configMap", {}).get("name") == "gpubot-policy"]
    [mount] = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    # A subPath mount never sees the ConfigMap's updates; the directory mount does, and gpubot reloads.
    assert "subPath" not in mount and mount["readOnly"] is True
    assert env["GPUBOT_POLICY"] == f"{mount['mountPath']}/policy.yaml"
    # In-cluster, the cluster is known by GPUBOT_CLUSTER_NAME: the example's channels must name it.
    channel_clusters = {c for grant in policy.channels.values() for c in grant.clusters}
    assert channel_clusters == {env["GPUBOT_CLUSTER_NAME"]}
