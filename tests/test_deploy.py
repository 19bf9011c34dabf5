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
