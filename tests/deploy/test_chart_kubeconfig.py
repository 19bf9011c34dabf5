"""Several clusters from a pod: the chart mounts a kubeconfig Secret read-only, points KUBECONFIG at it
and sets GPUBOT_CONTEXT; the bindings name the groups an EKS access entry gives the IAM role. The
rendered mount is then laid out on disk as the kubelet would and read by gpubot's own loader."""
from __future__ import annotations

import yaml

from bot.gateway import eks_token
from bot.gateway.kubeconfig import load_kubeconfig
from tests.deploy.chart import CHART, REQUIRED, helm, one, render, render_error

MULTI = CHART / "ci" / "multicluster-values.yaml"
BINDINGS = ("ClusterRoleBinding", "RoleBinding")


def _env(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container.get("env") or []}


def _pod(objects: list[dict]) -> dict:
    return one(objects, "Deployment")["spec"]["template"]["spec"]


def _eks_user(cluster: str, region: str) -> dict:
    # What `aws eks update-kubeconfig --name CLUSTER --alias CLUSTER` writes for the user.
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws",
                     "args": ["--region", region, "eks", "get-token", "--cluster-name", cluster, "--output", "json"]}}


def _kubeconfig(clusters: dict[str, str]) -> dict:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": next(iter(clusters)),
        "clusters": [{"name": f"arn:aws:eks:{r}:111122223333:cluster/{c}",
                      "cluster": {"server": f"https://{c.upper()}0123.gr7.{r}.eks.amazonaws.com"}}
                     for c, r in clusters.items()],
        "users": [{"name": f"arn:aws:eks:{r}:111122223333:cluster/{c}", "user": _eks_user(c, r)} for c, r in clusters.items()],
        "contexts": [{"name": c, "context": {"cluster": f"arn:aws:eks:{r}:111122223333:cluster/{c}",
                                             "user": f"arn:aws:eks:{r}:111122223333:cluster/{c}"}}
                     for c, r in clusters.items()],
    }


def test_without_a_kubeconfig_the_pod_reads_its_own_cluster_only():
    objects = render(None, *REQUIRED)
    pod = _pod(objects)
    env = _env(pod["containers"][0])
    assert "KUBECONFIG" not in env and "GPUBOT_CONTEXT" not in env
    assert env["GPUBOT_CLUSTER_NAME"]["value"] == "gpu-prod"
    assert "kubeconfig" not in {v["name"] for v in pod["volumes"]}
    for binding in (o for o in objects if o["kind"] in BINDINGS):
        assert [s["kind"] for s in binding["subjects"]] == ["ServiceAccount"], binding["metadata"]["name"]


def test_the_kubeconfig_secret_is_mounted_read_only_where_KUBECONFIG_points():
    pod = _pod(render(MULTI))
    [gpubot] = pod["containers"]
    env = _env(gpubot)
    [mount] = [m for m in gpubot["volumeMounts"] if m["name"] == "kubeconfig"]
    [volume] = [v for v in pod["volumes"] if v["name"] == "kubeconfig"]
    assert mount["readOnly"] is True and "subPath" not in mount  # a subPath would never see a rotated Secret
    assert volume["secret"]["secretName"] == "gpubot-kubeconfig"
    [item] = volume["secret"]["items"]
    assert item["key"] == "config"
    assert env["KUBECONFIG"]["value"] == f"{mount['mountPath']}/{item['path']}"
    assert env["GPUBOT_CONTEXT"]["value"] == "gpu-prod"
    # The database upgrade reads no cluster: the init container gets neither.
    [init] = pod["initContainers"]
    assert "KUBECONFIG" not in _env(init) and "kubeconfig" not in {m["name"] for m in init["volumeMounts"]}


def test_another_key_and_no_context_leave_the_current_context(tmp_path):
    pod = _pod(render(None, *REQUIRED, "kubeconfig.existingSecret=clusters", "kubeconfig.key=clusters.yaml"))
    env = _env(pod["containers"][0])
    assert env["KUBECONFIG"]["value"].endswith("/clusters.yaml") and "GPUBOT_CONTEXT" not in env
    [volume] = [v for v in pod["volumes"] if v["name"] == "kubeconfig"]
    assert volume["secret"]["items"] == [{"key": "clusters.yaml", "path": "clusters.yaml"}]


def test_gpubot_reads_the_mounted_kubeconfig_and_makes_each_clusters_token_itself(tmp_path):
    """Lay the Secret out as the kubelet does (items: key -> path under the mount), then load it the
    way `gpubot serve` does, from the rendered KUBECONFIG and GPUBOT_CONTEXT."""
    pod = _pod(render(MULTI))
    [gpubot] = pod["containers"]
    env = _env(gpubot)
    [mount] = [m for m in gpubot["volumeMounts"] if m["name"] == "kubeconfig"]
    [item] = [v for v in pod["volumes"] if v["name"] == "kubeconfig"][0]["secret"]["items"]
    root = tmp_path / mount["mountPath"].lstrip("/")
    root.mkdir(parents=True)
    clusters = {"gpu-staging": "us-west-2", "gpu-prod": "us-east-1"}
    (root / item["path"]).write_text(yaml.safe_dump(_kubeconfig(clusters)))
    kubeconfig = load_kubeconfig(str(tmp_path / env["KUBECONFIG"]["value"].lstrip("/")))
    assert kubeconfig is not None and kubeconfig.contexts() == sorted(clusters)
    # GPUBOT_CONTEXT wins over the file's current-context (gpu-staging).
    assert kubeconfig.resolve(env["GPUBOT_CONTEXT"]["value"]) == "gpu-prod"
    for name, region in clusters.items():
        assert kubeconfig.info(name).region == region
        tokens = eks_token.token_source(kubeconfig.user(name), fallback_region=None)
        assert tokens is not None, f"{name}: aws eks get-token would need the AWS CLI in the image"
    # The policy grants the contexts by name.
    policy = yaml.safe_load(one(render(MULTI), "ConfigMap")["data"]["policy.yaml"])
    granted = policy["channels"]["C04GPUONCALL"]["clusters"]
    assert set(granted) == set(clusters)


def test_the_access_entry_groups_are_bound_beside_the_service_account():
    objects = render(MULTI)
    bindings = [o for o in objects if o["kind"] in BINDINGS]
    names = {b["metadata"]["name"] for b in bindings}
    assert {"gpubot-read", "gpubot-leader-election", "gpubot-remediate"} <= names, names
    for binding in bindings:
        subjects = {(s["kind"], s["name"]) for s in binding["subjects"]}
        assert subjects == {("ServiceAccount", "gpubot"), ("Group", "gpubot")}, binding["metadata"]["name"]
        [group] = [s for s in binding["subjects"] if s["kind"] == "Group"]
        assert group["apiGroup"] == "rbac.authorization.k8s.io" and "namespace" not in group


def test_a_context_without_a_kubeconfig_is_refused():
    error = render_error(*REQUIRED, "kubeconfig.context=gpu-staging")
    assert "kubeconfig.context=gpu-staging needs kubeconfig.existingSecret" in error


def test_a_system_group_is_refused_by_the_schema():
    # system: is Kubernetes' own prefix (system:masters is cluster-admin): never a grant to hand out here.
    done = helm("template", "gpubot", str(CHART), *[a for s in REQUIRED for a in ("--set", s)],
                "--set", "rbac.groups={system:masters}")
    assert done.returncode != 0 and "rbac" in done.stderr and "groups" in done.stderr, done.stderr


def test_the_notes_name_the_secret_and_the_default_context():
    done = helm("install", "gpubot", str(CHART), "--dry-run=client", "--namespace", "gpubot", "--values", str(MULTI))
    assert done.returncode == 0, done.stderr
    notes = done.stdout.split("NOTES:", 1)[1]
    assert "Secret gpubot-kubeconfig (key config)" in notes and "go to gpu-prod" in notes
    assert "Kubernetes groups gpubot" in notes
