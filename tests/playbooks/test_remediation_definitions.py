"""Each remediation definition planned from realistic live objects, applied with a real merge-patch
and JSON-patch implementation (the simulator's), verified from the object read back, and undone
to the original object byte for byte."""
from __future__ import annotations

import json

import pytest

from playbooks.model import REMEDIATION_KINDS, Remediation
from playbooks.remediations import (
    DO_NOT_DISRUPT, JSON_PATCH, MERGE_PATCH, InvalidRemediation, NothingToDo, Permission, Plan,
    annotate_do_not_disrupt, cordon_gpu_node, definition, nodepool_consolidation, parse, permissions, plan,
    with_precondition,
)
from playbooks.remediations.model import pointer_get
from playbooks.remediations.registry import DEFINITIONS
from playbooks.validation import validate_object
from sim.patching import PatchTestFailed, apply_patch
from tests.playbooks.remediation_objects import (
    BARE_POD, CPU_NODE, GPU_NODE, JOB, JOBSET, MPIJOB, NODEPOOL, PYTORCHJOB, TFJOB, fresh, kubeflow_pods, pod,
)


def dump(obj) -> str:
    return json.dumps(obj, sort_keys=True)


class Cluster:
    """Objects by (kind, namespace, name); patches applied the way the API server applies them."""

    def __init__(self, *objects: dict) -> None:
        self.objects = {self.key(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): fresh(o) for o in objects}

    @staticmethod
    def key(kind, namespace, name):
        return kind, namespace, name

    def get(self, ref) -> dict:
        return self.objects[self.key(ref.kind, ref.namespace, ref.name)]

    def apply(self, change) -> dict:
        k = self.key(change.ref.kind, change.ref.namespace, change.ref.name)
        self.objects[k] = apply_patch(self.objects[k], patch_type=change.patch_type, body=with_precondition(change))
        return self.objects[k]

    def snapshot(self) -> dict:
        return {k: dump(v) for k, v in self.objects.items()}


def round_trip(rem: Remediation, cluster: Cluster, pods: list[dict]) -> Plan:
    """plan -> watched fields hold -> apply -> verify -> undo -> byte for byte the original."""
    before = cluster.snapshot()
    d = definition(rem.kind)
    owner = cluster.get(d.reads(rem).owner)
    result = plan(rem, owner, pods)
    # The plan survives the database: JSON out, JSON in, equal.
    assert Plan.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    for change in result.changes:
        live = cluster.get(change.ref)
        assert all(pointer_get(live, p) == v for p, v in change.watched.items()), change.ref
        assert d.verify(change, live) is not None  # not there yet: verify says what is missing
        after = cluster.apply(change)
        assert d.verify(change, after) is None, change.ref
    for back in result.undo:
        live = cluster.get(back.ref)
        assert all(pointer_get(live, p) == v for p, v in back.watched.items()), back.ref
        assert d.verify(back, cluster.apply(back)) is None
    assert cluster.snapshot() == before
    return result


# -- annotate-do-not-disrupt ------------------------------------------------------------------------

def test_pytorchjob_running_pods_and_both_templates():
    pods = kubeflow_pods("llama", "ml", {"Master": 1, "Worker": 3})
    pods[3]["status"]["phase"] = "Succeeded"  # a finished pod is not protected
    pods[2]["metadata"]["annotations"] = {"prometheus.io/scrape": "true"}
    other = pod("llama-2-worker-0", "ml", {"training.kubeflow.org/job-name": "llama-2"})  # another job's pod
    cluster = Cluster(PYTORCHJOB, *pods, other)
    rem = annotate_do_not_disrupt(kind="pytorchjob", namespace="ml", name="llama")

    assert definition(rem.kind).reads(rem).pod_selector == "training.kubeflow.org/job-name=llama"
    result = round_trip(rem, cluster, [*pods, other])

    assert result.summary == "annotate 3 running pods and 2 pod templates of pytorchjob ml/llama"
    assert [str(c.ref) for c in result.changes] == ["PyTorchJob ml/llama", "Pod ml/llama-master-0",
                                                     "Pod ml/llama-worker-0", "Pod ml/llama-worker-1"]
    owner_change = result.changes[0]
    assert owner_change.patch_type == MERGE_PATCH and owner_change.resource_version == "48113"
    assert owner_change.patch == {"spec": {"pytorchReplicaSpecs": {
        "Master": {"template": {"metadata": {"annotations": {DO_NOT_DISRUPT: "true"}}}},
        "Worker": {"template": {"metadata": {"annotations": {DO_NOT_DISRUPT: "true"}}}}}}}
    # The Master template had no metadata: the undo removes that, not an emptied map.
    assert result.undo[0].patch == [
        {"op": "test", "path": "/spec/pytorchReplicaSpecs/Master/template/metadata",
         "value": {"annotations": {DO_NOT_DISRUPT: "true"}}},
        {"op": "remove", "path": "/spec/pytorchReplicaSpecs/Master/template/metadata"},
        {"op": "test", "path": "/spec/pytorchReplicaSpecs/Worker/template/metadata/annotations/karpenter.sh~1do-not-disrupt",
         "value": "true"},
        {"op": "remove", "path": "/spec/pytorchReplicaSpecs/Worker/template/metadata/annotations/karpenter.sh~1do-not-disrupt"},
    ]
    assert owner_change.watched["/spec/pytorchReplicaSpecs/Worker/template/metadata/annotations"] == {
        "sidecar.istio.io/inject": "false"}
    assert result.preview.startswith("--- PyTorchJob ml/llama (now)\n+++ PyTorchJob ml/llama (after)\n")
    assert "-      template: {}\n+      template:\n+        metadata:\n" in result.preview
    assert "     sidecar.istio.io/inject: 'false'\n+            karpenter.sh/do-not-disrupt: 'true'\n" in result.preview
    assert "llama-worker-2" not in result.preview and "llama-2" not in result.preview


def test_a_value_already_there_is_left_alone_and_survives_undo():
    pods = kubeflow_pods("llama", "ml", {"Master": 1, "Worker": 2})
    pods[1]["metadata"]["annotations"] = {DO_NOT_DISRUPT: "false"}
    job = fresh(PYTORCHJOB)
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["metadata"]["annotations"][DO_NOT_DISRUPT] = "30m"
    cluster = Cluster(job, *pods)
    rem = annotate_do_not_disrupt(kind="pytorchjob", namespace="ml", name="llama")

    result = round_trip(rem, cluster, pods)

    touched = {str(c.ref) for c in result.changes}
    assert "Pod ml/llama-worker-0" not in touched and "Pod ml/llama-master-0" in touched
    assert "Worker" not in result.changes[0].patch["spec"]["pytorchReplicaSpecs"]
    assert result.summary == ("annotate 2 running pods and 1 pod template of pytorchjob ml/llama "
                              "(1 already carries it)")
    for change in result.changes:
        cluster.apply(change)
    assert cluster.get(result.changes[1].ref)["metadata"]["annotations"] == {DO_NOT_DISRUPT: "true"}
    assert cluster.objects[("Pod", "ml", "llama-worker-0")]["metadata"]["annotations"] == {DO_NOT_DISRUPT: "false"}


def test_everything_annotated_is_nothing_to_do():
    pods = kubeflow_pods("llama", "ml", {"Master": 1})
    pods[0]["metadata"]["annotations"] = {DO_NOT_DISRUPT: "true"}
    job = fresh(PYTORCHJOB)
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["template"].setdefault("metadata", {}).setdefault("annotations", {})[DO_NOT_DISRUPT] = "true"
    rem = annotate_do_not_disrupt(kind="pytorchjob", namespace="ml", name="llama")
    with pytest.raises(NothingToDo, match="already carries karpenter.sh/do-not-disrupt"):
        plan(rem, job, pods)


def test_tfjob_templates_and_pods():
    pods = kubeflow_pods("dist-mnist", "ml", {"PS": 1, "Worker": 2})
    rem = annotate_do_not_disrupt(kind="tfjob", namespace="ml", name="dist-mnist")
    result = round_trip(rem, Cluster(TFJOB, *pods), pods)
    assert result.summary == "annotate 3 running pods and 2 pod templates of tfjob ml/dist-mnist"
    assert set(result.changes[0].patch["spec"]["tfReplicaSpecs"]) == {"PS", "Worker"}


def test_mpijob_v2beta1_launcher_and_workers():
    pods = kubeflow_pods("pi", "hpc", {"Launcher": 1, "Worker": 2})
    rem = annotate_do_not_disrupt(kind="mpijob", namespace="hpc", name="pi")
    reads = definition(rem.kind).reads(rem)
    assert (reads.owner.api_version, reads.owner.plural) == ("kubeflow.org/v2beta1", "mpijobs")
    result = round_trip(rem, Cluster(MPIJOB, *pods), pods)
    assert result.summary == "annotate 3 running pods and 2 pod templates of mpijob hpc/pi"
    assert set(result.changes[0].patch["spec"]["mpiReplicaSpecs"]) == {"Launcher", "Worker"}


def jobset_pods(jobset: dict) -> list[dict]:
    name = jobset["metadata"]["name"]
    return [pod(f"{name}-{rj['name']}-0-{i}", "ml", {"jobset.sigs.k8s.io/jobset-name": name,
                                                     "jobset.sigs.k8s.io/replicatedjob-name": rj["name"],
                                                     "batch.kubernetes.io/job-name": f"{name}-{rj['name']}-0"})
            for rj in jobset["spec"]["replicatedJobs"] for i in range(rj["template"]["spec"]["parallelism"])]


def test_suspended_jobset_templates_by_list_index():
    rem = annotate_do_not_disrupt(kind="jobset", namespace="ml", name="paralleljobs")
    assert definition(rem.kind).reads(rem).pod_selector == "jobset.sigs.k8s.io/jobset-name=paralleljobs"
    result = round_trip(rem, Cluster(JOBSET), [])

    [change] = result.changes
    assert change.patch_type == JSON_PATCH
    base = "/spec/replicatedJobs/{}/template/spec/template/metadata"
    assert change.patch == [
        {"op": "test", "path": "/spec/replicatedJobs/0/name", "value": "leader"},
        {"op": "add", "path": base.format(0), "value": {"annotations": {DO_NOT_DISRUPT: "true"}}},
        {"op": "test", "path": "/spec/replicatedJobs/1/name", "value": "workers"},
        {"op": "add", "path": base.format(1) + "/annotations/karpenter.sh~1do-not-disrupt", "value": "true"},
    ]
    assert result.summary == "annotate 2 pod templates of jobset ml/paralleljobs"
    assert "- name: leader" in result.preview and "- name: workers" in result.preview


def test_a_reordered_jobset_refuses_the_patch_instead_of_annotating_the_wrong_template():
    rem = annotate_do_not_disrupt(kind="jobset", namespace="ml", name="paralleljobs")
    result = plan(rem, fresh(JOBSET), [])
    swapped = fresh(JOBSET)
    swapped["spec"]["replicatedJobs"].reverse()
    with pytest.raises(PatchTestFailed):
        apply_patch(swapped, patch_type=JSON_PATCH, body=result.changes[0].patch)


def test_running_jobset_annotates_its_pods_only():
    running = fresh(JOBSET)
    running["spec"]["suspend"] = False
    pods = jobset_pods(running)
    rem = annotate_do_not_disrupt(kind="jobset", namespace="ml", name="paralleljobs")
    result = round_trip(rem, Cluster(running, *pods), pods)
    assert [c.ref.kind for c in result.changes] == ["Pod"] * 3
    assert result.summary.startswith("annotate 3 running pods of jobset ml/paralleljobs (a running JobSet's pod "
                                     "templates cannot change")


def test_started_job_annotates_its_pods_only():
    pods = [pod(f"finetune-{s}", "ml", {"batch.kubernetes.io/job-name": "finetune", "job-name": "finetune"})
            for s in ("x7k2p", "q9m4w")]
    legacy = pod("finetune-old12", "ml", {"job-name": "finetune"})  # created before 1.27: the legacy label only
    rem = annotate_do_not_disrupt(kind="job", namespace="ml", name="finetune")
    assert definition(rem.kind).reads(rem).pod_selector == "batch.kubernetes.io/job-name=finetune"
    result = round_trip(rem, Cluster(JOB, *pods, legacy), [*pods, legacy])
    assert [c.ref.name for c in result.changes] == ["finetune-x7k2p", "finetune-q9m4w", "finetune-old12"]
    assert "pod template cannot change" in result.summary


def test_suspended_job_that_never_started_gets_its_template_annotated():
    job = fresh(JOB)
    job["spec"]["suspend"] = True
    job["status"] = {}
    result = round_trip(annotate_do_not_disrupt(kind="job", namespace="ml", name="finetune"), Cluster(job), [])
    assert result.changes[0].patch == {"spec": {"template": {"metadata": {"annotations": {DO_NOT_DISRUPT: "true"}}}}}
    assert result.summary == "annotate 1 pod template of job ml/finetune"


def test_started_job_with_every_pod_annotated_is_nothing_to_do():
    done = pod("finetune-x7k2p", "ml", {"batch.kubernetes.io/job-name": "finetune"}, annotations={DO_NOT_DISRUPT: "true"})
    with pytest.raises(NothingToDo, match="pod template cannot change"):
        plan(annotate_do_not_disrupt(kind="job", namespace="ml", name="finetune"), fresh(JOB), [done])


def test_bare_pod():
    rem = annotate_do_not_disrupt(kind="pod", namespace="research", name="notebook")
    assert definition(rem.kind).reads(rem).pod_selector is None
    result = round_trip(rem, Cluster(BARE_POD), [])
    assert result.changes[0].patch == {"metadata": {"annotations": {DO_NOT_DISRUPT: "true"}}}
    assert result.undo[0].patch == [
        {"op": "test", "path": "/metadata/annotations", "value": {DO_NOT_DISRUPT: "true"}},
        {"op": "remove", "path": "/metadata/annotations"}]
    assert result.summary == "annotate pod research/notebook with karpenter.sh/do-not-disrupt"
    finished = fresh(BARE_POD)
    finished["status"]["phase"] = "Succeeded"
    with pytest.raises(InvalidRemediation, match="has finished"):
        plan(rem, finished, [])
    annotated = fresh(BARE_POD)
    annotated["metadata"]["annotations"] = {DO_NOT_DISRUPT: "false"}
    with pytest.raises(NothingToDo):
        plan(rem, annotated, [])


def test_an_undo_refuses_when_someone_else_annotated_the_pod_since():
    rem = annotate_do_not_disrupt(kind="pod", namespace="research", name="notebook")
    cluster = Cluster(BARE_POD)
    result = plan(rem, cluster.get(definition(rem.kind).reads(rem).owner), [])
    after = cluster.apply(result.changes[0])
    after["metadata"]["annotations"]["team"] = "research"
    with pytest.raises(PatchTestFailed):
        apply_patch(after, patch_type=JSON_PATCH, body=result.undo[0].patch)


def test_many_pods_preview_shows_three_and_counts_the_rest():
    pods = kubeflow_pods("llama", "ml", {"Master": 1, "Worker": 15})
    result = plan(annotate_do_not_disrupt(kind="pytorchjob", namespace="ml", name="llama"), fresh(PYTORCHJOB), pods)
    assert len(result.changes) == 17
    assert result.preview.count("--- Pod ml/") == 3
    assert result.preview.endswith("... and 13 more pods, changed alike")


def test_wrong_owner_is_refused():
    rem = annotate_do_not_disrupt(kind="tfjob", namespace="ml", name="llama")
    with pytest.raises(InvalidRemediation, match="expected TFJob ml/llama, read PyTorchJob"):
        plan(rem, fresh(PYTORCHJOB), [])


# -- nodepool-consolidation -------------------------------------------------------------------------

def test_nodepool_consolidation_round_trip_and_schema():
    cluster = Cluster(NODEPOOL)
    rem = nodepool_consolidation(nodepool="gpu-a100")
    result = round_trip(rem, cluster, [])
    [change] = result.changes
    assert change.patch == {"spec": {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"}}}
    assert change.watched == {"/spec/disruption": NODEPOOL["spec"]["disruption"]}
    assert result.summary == ("set consolidationPolicy WhenEmpty after 10m on NodePool gpu-a100 "
                              "(was WhenEmptyOrUnderutilized after 0s)")
    assert result.undo[0].patch[-1] == {"op": "replace", "path": "/spec/disruption", "value": NODEPOOL["spec"]["disruption"]}
    patched = apply_patch(fresh(NODEPOOL), patch_type=MERGE_PATCH, body=change.patch)
    assert validate_object(patched) == []
    # The budgets were not part of the change: they stay as they were.
    assert patched["spec"]["disruption"]["budgets"] == NODEPOOL["spec"]["disruption"]["budgets"]
    assert ("-    consolidationPolicy: WhenEmptyOrUnderutilized\n-    consolidateAfter: 0s\n"
            "+    consolidationPolicy: WhenEmpty\n+    consolidateAfter: 10m\n     budgets:") in result.preview


def test_nodepool_budget_replaces_the_budgets_and_the_undo_restores_both():
    rem = nodepool_consolidation(nodepool="gpu-a100", consolidate_after="1h30m", budget_nodes="1")
    result = round_trip(rem, Cluster(NODEPOOL), [])
    assert result.changes[0].patch["spec"]["disruption"]["budgets"] == [{"nodes": "1"}]
    assert result.summary == ("set consolidationPolicy WhenEmpty after 1h30m, budgets 1 node on NodePool gpu-a100 "
                              "(was WhenEmptyOrUnderutilized after 0s, budgets 10% of nodes, 0 nodes at 0 9 * * mon-fri for 8h)")


def test_nodepool_already_so_is_nothing_to_do():
    pool = fresh(NODEPOOL)
    pool["spec"]["disruption"].update(consolidationPolicy="WhenEmpty", consolidateAfter="10m")
    with pytest.raises(NothingToDo, match="already consolidates WhenEmpty after 10m"):
        plan(nodepool_consolidation(nodepool="gpu-a100"), pool, [])


def test_the_nodepool_schema_refuses_an_invalid_consolidate_after():
    # Built directly, past parse(): the CRD's own schema is the last word.
    rem = Remediation("nodepool-consolidation", "nodepool/gpu-a100",
                      {"nodepool": "gpu-a100", "consolidationPolicy": "WhenEmpty", "consolidateAfter": "10 minutes"})
    with pytest.raises(InvalidRemediation, match=r"NodePool schema refuses .*spec\.disruption\.consolidateAfter"):
        plan(rem, fresh(NODEPOOL), [])


def test_a_v1beta1_nodepool_is_refused_with_what_to_do():
    pool = fresh(NODEPOOL)
    pool["apiVersion"] = "karpenter.sh/v1beta1"
    with pytest.raises(InvalidRemediation, match="older than v1.0.*Upgrade Karpenter"):
        plan(nodepool_consolidation(nodepool="gpu-a100"), pool, [])


def test_a_nodepool_without_disruption_is_restored_without_it():
    pool = fresh(NODEPOOL)
    del pool["spec"]["disruption"]
    result = round_trip(nodepool_consolidation(nodepool="gpu-a100"), Cluster(pool), [])
    assert result.undo[0].patch[-1] == {"op": "remove", "path": "/spec/disruption"}


# -- cordon-gpu-node --------------------------------------------------------------------------------

def test_cordon_a_gpu_node_and_uncordon_it():
    rem = cordon_gpu_node(node="ip-10-0-7-21.ec2.internal")
    result = round_trip(rem, Cluster(GPU_NODE), [])
    assert result.changes[0].patch == {"spec": {"unschedulable": True}}
    assert result.undo[0].patch == [{"op": "test", "path": "/spec/unschedulable", "value": True},
                                    {"op": "remove", "path": "/spec/unschedulable"}]
    assert result.summary == "cordon node ip-10-0-7-21.ec2.internal (schedulable now; nothing is evicted)"
    assert "+  unschedulable: true" in result.preview


def test_uncordon_restores_an_explicit_false():
    node = fresh(GPU_NODE)
    node["spec"]["unschedulable"] = False
    result = round_trip(cordon_gpu_node(node="ip-10-0-7-21.ec2.internal"), Cluster(node), [])
    assert result.undo[0].patch[-1] == {"op": "replace", "path": "/spec/unschedulable", "value": False}


def test_a_node_someone_else_cordoned_is_left_alone():
    node = fresh(GPU_NODE)
    node["spec"]["unschedulable"] = True
    with pytest.raises(NothingToDo, match="will not uncordon it"):
        plan(cordon_gpu_node(node="ip-10-0-7-21.ec2.internal"), node, [])


def test_a_gpu_node_whose_device_plugin_is_gone_is_known_by_its_label():
    node = fresh(GPU_NODE)
    for field in ("capacity", "allocatable"):
        node["status"][field].pop("nvidia.com/gpu")
    assert plan(cordon_gpu_node(node="ip-10-0-7-21.ec2.internal"), node, []).changes


def test_a_cpu_node_is_not_cordoned():
    with pytest.raises(InvalidRemediation, match="has no GPU"):
        plan(cordon_gpu_node(node="ip-10-0-3-4.ec2.internal"), fresh(CPU_NODE), [])


# -- proposals, registry, permissions ---------------------------------------------------------------

@pytest.mark.parametrize("kind", ["pod", "job", "pytorchjob", "tfjob", "mpijob", "jobset"])
def test_every_workload_kind_parses(kind):
    rem = annotate_do_not_disrupt(kind=kind, namespace="ml", name="x")
    assert parse({"kind": rem.kind, "target": f"{kind}/ml/x", "params": rem.params}) == rem


@pytest.mark.parametrize("raw", [
    {"kind": "cordon-gpu-node", "target": "node/a", "params": {"node": "b"}},
    {"kind": "cordon-gpu-node", "target": "node/A_B", "params": {"node": "A_B"}},
    {"kind": "cordon-gpu-node", "target": "node/a", "params": {"node": "a", "evict": True}},
    {"kind": "annotate-do-not-disrupt", "target": "rayjob/ml/x", "params": {"kind": "rayjob", "namespace": "ml", "name": "x"}},
])
def test_bad_proposals_are_refused(raw):
    with pytest.raises(InvalidRemediation):
        parse(raw)


def test_one_definition_per_kind():
    assert tuple(DEFINITIONS) == REMEDIATION_KINDS
    assert all(definition(kind).kind == kind for kind in REMEDIATION_KINDS)
    with pytest.raises(InvalidRemediation, match="unknown remediation kind 'reboot-node'"):
        definition("reboot-node")


def test_permissions_are_patch_on_what_is_written_and_reads_for_the_rest():
    perms = permissions()
    assert perms == sorted(set(perms), key=lambda p: (p.group, p.resource, p.verb))
    writes = {(p.group, p.resource) for p in perms if p.verb == "patch"}
    assert writes == {("", "pods"), ("", "nodes"), ("batch", "jobs"), ("kubeflow.org", "pytorchjobs"),
                      ("kubeflow.org", "tfjobs"), ("kubeflow.org", "mpijobs"), ("jobset.x-k8s.io", "jobsets"),
                      ("karpenter.sh", "nodepools")}
    assert {p.verb for p in perms} == {"get", "list", "patch"}
    assert Permission("", "pods", "list") in perms  # the pods of a job are found by label
    assert all(Permission(g, r, "get") in perms for g, r in writes)  # and every written object read back


# -- GPU findings propose the cordon ----------------------------------------------------------------

def gpu_facts(*, plugin_log: str = "", pod_log: str = ""):
    from playbooks.facts import Facts, PodFacts
    from playbooks.model import Target

    name = GPU_NODE["metadata"]["name"]
    trainer = PodFacts(pod=pod("llama-worker-0", "ml", {"training.kubeflow.org/job-name": "llama"}, node=name),
                       logs={("pytorch", False): pod_log} if pod_log else {})
    facts = Facts(target=Target(kind="pod", name="llama-worker-0", namespace="ml"), cluster="test")
    facts.pods = [trainer]
    facts.nodes = {name: fresh(GPU_NODE)}
    if plugin_log:
        facts.device_plugin_logs = {name: [("pod/kube-system/nvidia-device-plugin-daemonset-x2v9k", plugin_log)]}
    return facts


def test_unhealthy_gpu_and_xid_on_a_node_propose_cordoning_that_node():
    from playbooks.analyzers import gpu

    facts = gpu_facts(plugin_log=(
        "[ 5123.456789] NVRM: Xid (PCI:0000:10:1c): 79, pid=2451, GPU has fallen off the bus.\n"
        "I0810 15:36:05.551834       1 health.go:169] XidCriticalError: Xid=79 on Device=GPU-455e672a-1f0c-4d1b-"
        "9a7e-0c3b5d2e6f70; marking device as unhealthy.\n"))
    [unhealthy] = gpu.analyze_unhealthy(facts)
    [xid] = gpu.analyze_xid(facts)
    cordon = cordon_gpu_node(node="ip-10-0-7-21.ec2.internal")
    assert unhealthy.remediations == [cordon] and xid.remediations == [cordon]
    assert plan(cordon, facts.nodes[cordon.params["node"]], []).changes  # and it plans on that node


def test_an_xid_on_no_known_node_proposes_nothing():
    from playbooks.analyzers import gpu

    facts = gpu_facts(pod_log="[ 5123.456789] NVRM: Xid (PCI:0000:10:1c): 79, pid=2451, GPU has fallen off the bus.\n")
    [xid] = gpu.analyze_xid(facts)
    assert xid.remediations == []
