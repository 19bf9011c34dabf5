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


def test_probes_use_their_own_port_which_the_service_does_not_expose():
    kube = DEPLOY / "kubernetes"
    [deployment] = [d for d in yaml.safe_load_all((kube / "deployment.yaml").read_text()) if d and d["kind"] == "Deployment"]
    [service] = [d for d in yaml.safe_load_all((kube / "service.yaml").read_text()) if d and d["kind"] == "Service"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    probes = [container["readinessProbe"], container["livenessProbe"]]
    assert [p["httpGet"]["path"] for p in probes] == ["/readyz", "/healthz"]
    # Each probe names a container port, and that port is where gpubot serves the probes.
    assert {ports[p["httpGet"]["port"]] for p in probes} == {int(env["GPUBOT_PROBE_PORT"])}
    assert int(env["GPUBOT_PROBE_PORT"]) != int(env["GPUBOT_HTTP_PORT"]) == ports["http"]
    assert {p["targetPort"] for p in service["spec"]["ports"]} == {"http"}


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


WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate", "*"}


def _granted(role: dict) -> set[tuple[str, str, str]]:
    return {(group, resource, verb) for rule in role["rules"] for group in rule.get("apiGroups", [])
            for resource in rule.get("resources", []) for verb in rule["verbs"]}


def _kustomize(directory: Path) -> list[dict]:
    """The objects ``kubectl apply -k directory`` would send (resources only: the files name no patches)."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    assert set(kustomization) <= {"apiVersion", "kind", "namespace", "resources"}, "more than resources: extend this"
    out = []
    for entry in kustomization["resources"]:
        path = (directory / entry).resolve()
        out += _kustomize(path) if path.is_dir() else [d for d in yaml.safe_load_all(path.read_text()) if d]
    return out


def test_the_base_role_writes_nothing():
    roles = [d for d in yaml.safe_load_all((DEPLOY / "kubernetes" / "rbac.yaml").read_text()) if d and d["kind"] == "ClusterRole"]
    assert roles and all(not {v for _, _, v in _granted(r)} & WRITE_VERBS for r in roles)


def test_the_remediation_overlay_adds_exactly_the_definitions_writes():
    from playbooks.remediations import permissions

    overlay = DEPLOY / "overlays" / "remediation"
    objects = _kustomize(overlay)
    roles = {d["metadata"]["name"]: d for d in objects if d["kind"] == "ClusterRole"}
    assert set(roles) == {"gpubot-read", "gpubot-remediate"}
    for doc in objects:
        assert validate_object(doc) == [], doc["kind"]

    needed = {(p.group, p.resource, p.verb) for p in permissions()}
    added = _granted(roles["gpubot-remediate"])
    assert {g for g in added if g[2] in WRITE_VERBS} == {n for n in needed if n[2] in WRITE_VERBS}
    assert {v for _, _, v in added} <= {"get", "list", "patch"}
    # Every read a plan or a verification makes is granted by the base or the overlay, and the overlay
    # reads nothing the definitions do not need.
    assert needed <= added | _granted(roles["gpubot-read"])
    assert added <= needed

    [binding] = [d for d in objects if d["kind"] == "ClusterRoleBinding" and d["roleRef"]["name"] == "gpubot-remediate"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "gpubot", "namespace": "gpubot"}]
