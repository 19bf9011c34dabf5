"""Evidence from cluster-wide sources, seen by someone who may read only some namespaces.

Karpenter's controller log and the events of nodes, NodeClaims and NodePools are about the whole
cluster: one line about the NodePool a job waits for also lists the other pods Karpenter batched with
it, whatever their namespace. Those lines stay evidence (the cluster's own words), but a pod of a
namespace the asker may not read is shown as ``[other namespace]/[pod]``.

Karpenter names pods ``<namespace>/<name>`` (``"Pods":"ns/a, ns/b"``, ``Pod=ns/a``, ``Pod "ns/a"``:
kubernetes-sigs/karpenter pkg/controllers/provisioning/provisioner.go, pkg/utils/pod/scheduling.go,
pkg/controllers/disruption/events) and, in structured logs, ``"Pod":{"name":..,"namespace":..}``
(controller-runtime's object key, pkg/operator/logging).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from playbooks import linear
from playbooks.model import Diagnosis, Evidence

HIDDEN = "[other namespace]/[pod]"
# Words before a slash that are kinds or API groups, never namespaces: node/x, nodeclaim/x, apps/v1.
_NOT_NAMESPACES = frozenset({
    "pod", "pods", "job", "jobs", "pytorchjob", "node", "nodes", "nodepool", "nodeclaim", "nodeclass", "machine",
    "ec2nodeclass", "deployment", "daemonset", "statefulset", "replicaset", "service", "apps", "batch", "v1",
    "aws", "instance", "instances", "subnet", "zone", "pvc", "pv", "persistentvolumeclaim", "configmap", "secret",
})
_LETTER = linear.compile(r"[a-z]")
_VERSION = linear.compile(r"^v\d+((alpha|beta)\d+)?$")
# A namespace is an RFC 1123 label (no dots). A reference starts where a run of name characters
# starts, which keeps "nvidia.com/gpu", "aws:///zone/i-..." and path segments out, and its name ends
# before a character that could continue it; that character (or the end) is matched too and left out
# (RE2 has no lookaround).
_RUN = linear.compile(r"[\w.:/-]+")
_REF = linear.compile(r"([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)/([a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?)(?:[^\w/-]|$)")
# Where Karpenter lists pods: "Pods":"a/b, c/d" (JSON logs), Pods=a/b (console logs), Pod=a/b and
# Pod "a/b" (events). Only there is "x/y" read as a pod; elsewhere it is prose ("affinity/selector").
_POD_LIST = linear.compile(r'(?P<lead>"Pods?"\s*:\s*"|\b[Pp]ods?=|\b[Pp]od ")(?P<refs>[^"()\[\]{}]*)')
_JSON_POD = linear.compile(r'\{"name":"([^"\\]*)","namespace":"([^"\\]*)"\}|\{"namespace":"([^"\\]*)","name":"([^"\\]*)"\}')


def mask_text(text: str, allowed: Callable[[str], bool]) -> str:
    def ref(m: linear.Match) -> str:
        namespace, name = m.group(1), m.group(2)
        if namespace in _NOT_NAMESPACES or _VERSION.match(name) or allowed(namespace) \
                or not _LETTER.search(namespace) or not _LETTER.search(name):  # "0/5 nodes are available"
            return f"{namespace}/{name}"
        return HIDDEN

    def json_pod(m: linear.Match) -> str:
        namespace = m.group(2) if m.group(1) is not None else m.group(3)
        if not namespace or allowed(namespace):
            return m.group(0)
        return '{"name":"[pod]","namespace":"[other namespace]"}'

    if "/" not in text and '"namespace"' not in text:
        return text
    text = _POD_LIST.sub(lambda m: m.group("lead") + _replace_refs(m.group("refs"), ref), text)
    return _JSON_POD.sub(json_pod, text)


def _replace_refs(text: str, ref: Callable[[linear.Match], str]) -> str:
    pieces, last = [], 0
    for run in _RUN.finditer(text):
        found = _REF.match(text, run.start())
        if found is not None:
            pieces += (text[last : found.start()], ref(found))
            last = found.end(2)
    pieces.append(text[last:])
    return "".join(pieces)


def mask_other_namespaces(diagnosis: Diagnosis, allowed: Callable[[str], bool]) -> Diagnosis:
    """The diagnosis with pods of namespaces outside ``allowed`` masked in its evidence (the quoted
    cluster text; gpubot's own prose names only the asker's target)."""
    return replace(diagnosis, findings=[
        replace(f, evidence=[Evidence(source=e.source, text=mask_text(e.text, allowed)) for e in f.evidence])
        for f in diagnosis.findings])
