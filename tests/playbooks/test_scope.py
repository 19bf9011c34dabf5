"""Pods of namespaces the asker may not read are masked in quoted cluster text, in every form
Karpenter writes them; everything else in the line stays as the cluster wrote it."""
from __future__ import annotations

import pytest

from playbooks.model import Diagnosis, Evidence, Finding, Target
from playbooks.scope import HIDDEN, mask_other_namespaces, mask_text


def allowed(namespace: str) -> bool:
    return namespace in ("vision-train", "llm-research")


@pytest.mark.parametrize("line, kept, gone", [
    # v1.x provisioner batch (pkg/controllers/provisioning/provisioner.go): "Pods" lists every batched pod.
    ('{"level":"INFO","message":"found provisionable pod(s)","Pods":"llm-prod/qwen-72b-0, vision-train/vit-h-0",'
     '"duration":"63ms"}', ["vision-train/vit-h-0", '"duration":"63ms"'], ["llm-prod", "qwen-72b-0"]),
    # v1.5+ disruption blocked (pkg/utils/pod/scheduling.go).
    ('Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=llm-prod/qwen-72b-0)',
     ['"karpenter.sh/do-not-disrupt" annotation'], ["llm-prod/qwen-72b-0"]),
    # v1.2-1.4 wording.
    ('Pod "llm-prod/qwen-72b-0" has "karpenter.sh/do-not-disrupt" annotation', ["annotation"], ["qwen-72b-0"]),
    # Structured object key (controller-runtime logging).
    ('{"message":"could not schedule pod","Pod":{"name":"qwen-72b-0","namespace":"llm-prod"},"error":"x"}',
     ['"error":"x"', '"message":"could not schedule pod"'], ["qwen-72b-0", "llm-prod"]),
    ('{"Pod":{"namespace":"llm-prod","name":"qwen-72b-0"}}', ['"Pod"'], ["qwen-72b-0", "llm-prod"]),
])
def test_other_namespaces_are_masked(line, kept, gone):
    masked = mask_text(line, allowed)
    for text in kept:
        assert text in masked
    for text in gone:
        assert text not in masked


@pytest.mark.parametrize("line", [
    "0/12 nodes are available: 4 Insufficient nvidia.com/gpu, 8 node(s) didn't match Pod's node affinity/selector.",
    "Pod should schedule on: nodeclaim/gpu-h100-x7k2q, node/ip-10-0-12-7.us-west-2.compute.internal",
    '"provider-id":"aws:///us-west-2b/i-0a1b2c3d4e5f60718","karpenter.sh/nodepool":"gpu-h100"',
    "apiVersion karpenter.sh/v1 kind NodePool; apps/v1 DaemonSet nvidia-device-plugin",
    "vision-train/vit-h-0 and llm-research/mixtral-0 were nominated",
])
def test_what_is_not_another_namespace_stays(line):
    assert mask_text(line, allowed) == line


def test_only_evidence_is_masked():
    finding = Finding(code="karpenter.provisioning", severity="info", confidence="high",
                      title="vision-train/vit-h-0 waits for a node", detail="requests/limits as declared",
                      evidence=[Evidence(source="karpenter log", text="Pods=llm-prod/qwen-0, vision-train/vit-h-0")])
    diagnosis = Diagnosis(target=Target(kind="pod", name="vit-h-0", namespace="vision-train"), cluster="c",
                          summary="s", findings=[finding])
    masked = mask_other_namespaces(diagnosis, allowed)
    assert masked.findings[0].evidence[0].text == f"Pods={HIDDEN}, vision-train/vit-h-0"
    assert masked.findings[0].detail == "requests/limits as declared"  # gpubot's own prose is not rewritten
    assert diagnosis.findings[0].evidence[0].text.startswith("Pods=llm-prod")  # the original is untouched


def test_a_console_log_batch_is_masked():
    line = "INFO controller.provisioner found provisionable pod(s) Pods=llm-prod/qwen-72b-0, vision-train/vit-h-0"
    assert mask_text(line, allowed).endswith(f"Pods={HIDDEN}, vision-train/vit-h-0")
