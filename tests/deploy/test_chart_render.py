"""Every values set in deploy/helm/gpubot/ci/ lints, renders, validates against the Kubernetes schemas
and gives a pod that passes the `restricted` Pod Security Standard."""
from __future__ import annotations

import copy

import pytest

from playbooks.validation import known_kinds, validate_object
from tests.deploy import pss
from tests.deploy.chart import CHART, CI_VALUES, NAMESPACE, REQUIRED, helm, kinds, one, render

CI_IDS = [p.stem for p in CI_VALUES]
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "Namespace"}


def test_the_ci_values_cover_both_modes_and_every_option():
    assert {"socket-minimal-values", "http-full-values", "digest-irsa-values"} <= set(CI_IDS)


@pytest.mark.parametrize("values", CI_VALUES, ids=CI_IDS)
def test_helm_lint_passes_strictly(values):
    done = helm("lint", str(CHART), "--strict", "--values", str(values))
    assert done.returncode == 0, done.stdout + done.stderr


def _structural_problems(obj: dict, objects: list[dict]) -> list[str]:
    """No schema for the Prometheus Operator kinds here: check what gpubot relies on instead."""
    spec = obj.get("spec") or {}
    if obj["kind"] == "ServiceMonitor":
        matches = [s for s in objects if s["kind"] == "Service"
                   and spec["selector"]["matchLabels"].items() <= s["metadata"]["labels"].items()]
        ports = {p["name"] for s in matches for p in s["spec"]["ports"]}
        return [f"endpoint port {e['port']!r} is no port of a selected Service ({sorted(ports)})"
                for e in spec.get("endpoints") or [] if e.get("port") not in ports] or ([] if matches else ["selects no Service"])
    if obj["kind"] == "PrometheusRule":
        groups = spec.get("groups") or []
        bad = [g.get("name") for g in groups
               if not g.get("name") or not g.get("rules")
               or any(not r.get("expr") or bool(r.get("alert")) == bool(r.get("record")) for r in g["rules"])]
        # The CRD makes groups a list map keyed by name: the API server refuses a name twice.
        names = [g.get("name") for g in groups]
        twice = sorted({n for n in names if names.count(n) > 1})
        return (["no rule groups"] if not groups else [f"group {name!r} is malformed" for name in bad]
                + [f"group {name!r} appears twice (files/prometheus/*.yaml)" for name in twice])
    return [f"no schema and no structural check for {obj['apiVersion']} {obj['kind']}"]


@pytest.mark.parametrize("values", CI_VALUES, ids=CI_IDS)
def test_every_rendered_object_validates(values):
    objects = render(values)
    assert kinds(objects) >= {"Deployment", "ServiceAccount", "ConfigMap", "ClusterRole", "Service"}
    for obj in objects:
        if (obj["apiVersion"], obj["kind"]) in known_kinds():
            assert validate_object(obj, strict=True) == [], obj["kind"]
        else:
            assert obj["apiVersion"] == "monitoring.coreos.com/v1", obj["kind"]
            assert _structural_problems(obj, objects) == [], obj["kind"]
        if obj["kind"] not in CLUSTER_SCOPED:
            assert obj["metadata"]["namespace"] == NAMESPACE, obj["kind"]


@pytest.mark.parametrize("values", CI_VALUES, ids=CI_IDS)
def test_the_pod_meets_the_restricted_pod_security_standard(values):
    pod = one(render(values), "Deployment")["spec"]["template"]["spec"]
    assert pss.restricted(pod) == []
    # And the settings the issue names, on the init container and the main one alike.
    for container in pod["initContainers"] + pod["containers"]:
        sc = container["securityContext"]
        assert sc["readOnlyRootFilesystem"] is True and sc["runAsUser"] == 10001, container["name"]
        assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"], container["name"]


@pytest.mark.parametrize("breach, control", [
    (lambda pod: pod["containers"][0]["securityContext"].update(allowPrivilegeEscalation=True), "Privilege Escalation"),
    (lambda pod: pod["initContainers"][0]["securityContext"]["capabilities"].update(drop=[]), "Capabilities"),
    (lambda pod: pod["containers"][0]["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]), "Capabilities"),
    (lambda pod: [c["securityContext"].pop("seccompProfile") for c in pod["containers"] + pod["initContainers"]]
     and pod["securityContext"].pop("seccompProfile"), "Seccomp"),
    (lambda pod: pod["containers"][0]["securityContext"].update(runAsNonRoot=False), "Running as Non-root"),
    (lambda pod: pod["securityContext"].update(runAsUser=0), "Running as Non-root user"),
    (lambda pod: pod.update(hostNetwork=True), "Host Namespaces"),
    (lambda pod: pod["volumes"].append({"name": "h", "hostPath": {"path": "/"}}), "HostPath Volumes"),
    (lambda pod: pod["containers"][0]["ports"][0].update(hostPort=3000), "Host Ports"),
    (lambda pod: pod["containers"][0]["securityContext"].update(privileged=True), "Privileged Containers"),
], ids=["escalation", "no-drop", "add-cap", "no-seccomp", "root", "uid0", "hostnet", "hostpath", "hostport", "privileged"])
def test_the_checker_catches_each_breach(breach, control):
    pod = copy.deepcopy(one(render(CI_VALUES[0]), "Deployment")["spec"]["template"]["spec"])
    breach(pod)
    assert any(v.startswith(control + ":") for v in pss.restricted(pod)), pss.restricted(pod)


def _env(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container["env"]}


def test_socket_mode_runs_one_pod_with_the_app_token_and_no_ingress():
    objects = render(CHART / "ci" / "socket-minimal-values.yaml")
    deployment = one(objects, "Deployment")
    env = _env(deployment["spec"]["template"]["spec"]["containers"][0])
    assert deployment["spec"]["replicas"] == 1 and deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert env["GPUBOT_SLACK_MODE"]["value"] == "socket"
    assert env["SLACK_APP_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "gpubot-slack", "key": "app-token"}
    assert "SLACK_SIGNING_SECRET" not in env and "GPUBOT_SLACK_RATE_SHARE" not in env
    assert not kinds(objects) & {"Ingress", "PodDisruptionBudget", "NetworkPolicy", "ServiceMonitor", "PrometheusRule"}
    assert env["GPUBOT_LOG_FORMAT"]["value"] == "json"


def test_http_mode_routes_slack_through_the_ingress_to_the_service():
    objects = render(CHART / "ci" / "http-full-values.yaml")
    deployment = one(objects, "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    env = _env(container)
    assert env["SLACK_SIGNING_SECRET"]["valueFrom"]["secretKeyRef"] == {"name": "gpubot-slack", "key": "signing-secret"}
    assert "SLACK_APP_TOKEN" not in env
    service, ingress = one(objects, "Service", "gpubot"), one(objects, "Ingress")
    [rule] = ingress["spec"]["rules"]
    [path] = rule["http"]["paths"]
    assert (rule["host"], path["path"]) == ("gpubot.example.com", "/slack/events")
    assert path["backend"]["service"] == {"name": service["metadata"]["name"], "port": {"name": "http"}}
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]
    assert {p["name"]: p["containerPort"] for p in container["ports"]}["http"] == int(env["GPUBOT_HTTP_PORT"]["value"])
    pdb = one(objects, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    # Three replicas share the app's Slack rate limits.
    assert float(env["GPUBOT_SLACK_RATE_SHARE"]["value"]) * deployment["spec"]["replicas"] == pytest.approx(1, abs=1e-3)


def test_the_digest_wins_over_the_tag_and_the_service_account_carries_the_irsa_role():
    objects = render(CHART / "ci" / "digest-irsa-values.yaml")
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    expected = f"111122223333.dkr.ecr.ap-northeast-2.amazonaws.com/gpubot@{digest}"
    assert {c["image"] for c in pod["initContainers"] + pod["containers"]} == {expected}
    account = one(objects, "ServiceAccount")
    assert account["metadata"]["annotations"] == {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/gpubot"}
    assert pod["serviceAccountName"] == account["metadata"]["name"]
    # Without a digest, the tag defaults to the chart's appVersion.
    plain = one(render(None, *REQUIRED), "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
    assert plain == "registry.example.com/gpubot:0.1.0"


def test_the_metrics_are_scraped_on_the_probes_port_through_a_service_of_their_own():
    objects = render(CHART / "ci" / "http-full-values.yaml")
    monitor = one(objects, "ServiceMonitor")
    assert {(e["port"], e["path"]) for e in monitor["spec"]["endpoints"]} == {("probes", "/metrics")}
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    metrics = one(objects, "Service", "gpubot-metrics")
    assert [(p["name"], p["targetPort"]) for p in metrics["spec"]["ports"]] == [("probes", "probes")]
    # The Service the Ingress reaches has no probes port.
    assert "probes" not in {p["name"] for p in one(objects, "Service", "gpubot")["spec"]["ports"]}


def test_the_network_policy_lets_through_dns_https_the_api_server_and_the_database():
    policy = one(render(CHART / "ci" / "http-full-values.yaml"), "NetworkPolicy")
    egress = {(p.get("protocol", "TCP"), p["port"]) for rule in policy["spec"]["egress"] for p in rule["ports"]}
    assert egress >= {("UDP", 53), ("TCP", 53), ("TCP", 443), ("TCP", 6443), ("TCP", 5432)}
    [db] = [r for r in policy["spec"]["egress"] if r["ports"] == [{"port": 5432, "protocol": "TCP"}]]
    assert db["to"] == [{"ipBlock": {"cidr": "10.0.64.0/20"}}]
    ingress = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}
    assert ingress == {"http", "probes"}
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
