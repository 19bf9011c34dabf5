import pytest

from playbooks.remediations import InvalidRemediation, annotate_do_not_disrupt, merge_patch, nodepool_consolidation, parse
from playbooks.validation import validate_patch

NODEPOOL = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu-training"},
    "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                                   "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]}},
             "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"}},
}


def test_round_trip_from_untrusted_dict():
    rem = annotate_do_not_disrupt(kind="pytorchjob", namespace="ml", name="llama")
    assert parse({"kind": rem.kind, "target": rem.target, "params": rem.params}) == rem


@pytest.mark.parametrize("raw", [
    {"kind": "delete-everything", "target": "x", "params": {}},
    {"kind": "annotate-do-not-disrupt", "target": "pod/ml/x", "params": {"kind": "pod", "namespace": "ml", "name": "X!"}},
    {"kind": "annotate-do-not-disrupt", "target": "pod/other/x", "params": {"kind": "pod", "namespace": "ml", "name": "x"}},
    {"kind": "nodepool-consolidation", "target": "nodepool/gpu", "params": {"nodepool": "gpu", "consolidationPolicy": "Sometimes", "consolidateAfter": "10m"}},
    {"kind": "nodepool-consolidation", "target": "nodepool/gpu", "params": {"nodepool": "gpu", "consolidationPolicy": "WhenEmpty", "consolidateAfter": "10 minutes"}},
    "not a dict",
    {"kind": "annotate-do-not-disrupt", "target": "pod/ml/x", "params": {"kind": "pod", "namespace": "ml", "name": "x", "extra": "y"}},
])
def test_invalid_payloads_are_refused(raw):
    with pytest.raises(InvalidRemediation):
        parse(raw)


def test_nodepool_patch_validates_against_the_crd():
    rem = nodepool_consolidation(nodepool="gpu-training", consolidate_after="10m", budget_nodes="1")
    patch = merge_patch(rem)
    assert patch["spec"]["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m", "budgets": [{"nodes": "1"}]}
    assert validate_patch(NODEPOOL, patch) == []


def test_cordon_round_trips_and_its_preview_patch_validates_on_a_node():
    from playbooks.remediations import cordon_gpu_node
    from tests.playbooks.remediation_objects import GPU_NODE

    rem = cordon_gpu_node(node="ip-10-0-7-21.ec2.internal")
    assert (rem.target, rem.params) == ("node/ip-10-0-7-21.ec2.internal", {"node": "ip-10-0-7-21.ec2.internal"})
    assert parse({"kind": rem.kind, "target": rem.target, "params": rem.params}) == rem
    patch = merge_patch(rem)
    assert patch["spec"] == {"unschedulable": True}
    assert validate_patch(GPU_NODE, patch) == []


@pytest.mark.parametrize("kind, field, types", [
    ("tfjob", "tfReplicaSpecs", {"Chief", "Worker"}),
    ("mpijob", "mpiReplicaSpecs", {"Launcher", "Worker"}),
])
def test_preview_patch_of_the_other_kubeflow_kinds(kind, field, types):
    patch = merge_patch(annotate_do_not_disrupt(kind=kind, namespace="ml", name="x"))
    assert set(patch["spec"][field]) == types
    assert all(t["template"]["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}
               for t in patch["spec"][field].values())


def test_preview_patch_of_a_pytorchjob_still_validates():
    from tests.playbooks.remediation_objects import PYTORCHJOB

    patch = merge_patch(annotate_do_not_disrupt(kind="pytorchjob", namespace="ml", name="llama"))
    assert validate_patch(PYTORCHJOB, patch) == []
