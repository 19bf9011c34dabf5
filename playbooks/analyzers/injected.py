"""Fields the API server, its admission plugins and well-known webhooks add to a live pod, which a fix
copied from that pod must not carry into a pod template.

A template that kept them would pin every new pod to one node, mount a token volume that no longer
exists under that name, or fail validation. Each comes back on its own when the fixed pod is created:
- ``spec.nodeName``: the scheduler's binding; ``status``; ``metadata.uid``, ``resourceVersion``,
  ``generation``, ``managedFields``, ``creationTimestamp``, ``deletionTimestamp``, ``selfLink`` and
  ``ownerReferences`` (the server's and the controller's, never the user's).
- The service account token volume ``kube-api-access-<random>`` and its volumeMounts
  (kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission.go: ServiceAccountVolumeName,
  a projected volume with a serviceAccountToken source), and ``spec.serviceAccount``, the deprecated
  alias the API server copies from serviceAccountName (pkg/apis/core/v1/defaults.go).
- The tolerations ``node.kubernetes.io/not-ready`` and ``node.kubernetes.io/unreachable`` (Exists,
  NoExecute, tolerationSeconds 300) that the DefaultTolerationSeconds admission plugin adds
  (plugin/pkg/admission/defaulttolerationseconds/admission.go: default 300 s). One the user wrote with
  another value is kept.
- ``priority`` and ``preemptionPolicy``, which the Priority admission plugin resolves from
  priorityClassName (plugin/pkg/admission/priority/admission.go); a template with a stale value is
  rejected when the class changes.
- EKS credentials: the IRSA token volume ``aws-iam-token`` mounted at
  /var/run/secrets/eks.amazonaws.com/serviceaccount (aws/amazon-eks-pod-identity-webhook
  pkg/handler/handler.go) and the Pod Identity volume ``eks-pod-identity-token`` at
  /var/run/secrets/pods.eks.amazonaws.com/serviceaccount, with the AWS_* variables the webhooks set
  beside them; both webhooks add them again to every pod of a service account that asks.
"""
from __future__ import annotations

import copy
from typing import Any

SERVICE_ACCOUNT_VOLUME = "kube-api-access-"
WEBHOOK_VOLUMES = ("aws-iam-token", "eks-pod-identity-token")
WEBHOOK_MOUNT_DIRS = ("/var/run/secrets/eks.amazonaws.com/serviceaccount",
                      "/var/run/secrets/pods.eks.amazonaws.com/serviceaccount",
                      "/var/run/secrets/kubernetes.io/serviceaccount")
# aws/amazon-eks-pod-identity-webhook pkg/handler/handler.go (IRSA) and the EKS Pod Identity
# agent's webhook: the variables that point the SDKs at the injected token.
WEBHOOK_ENV = frozenset({
    "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_STS_REGIONAL_ENDPOINTS",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
})
NODE_LIFECYCLE_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
DEFAULT_TOLERATION_SECONDS = 300
SERVER_METADATA = ("uid", "resourceVersion", "generation", "managedFields", "creationTimestamp",
                   "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "ownerReferences")
PRIORITY_RESOLVED = ("priority", "preemptionPolicy")


def is_injected_volume(volume: dict) -> bool:
    name = str(volume.get("name") or "")
    if name.startswith(SERVICE_ACCOUNT_VOLUME):
        return any("serviceAccountToken" in (s or {}) for s in (volume.get("projected") or {}).get("sources") or [])
    return name in WEBHOOK_VOLUMES


def is_injected_toleration(toleration: dict) -> bool:
    return (toleration.get("key") in NODE_LIFECYCLE_TOLERATIONS and toleration.get("effect") == "NoExecute"
            and toleration.get("operator", "Equal") == "Exists"
            and toleration.get("tolerationSeconds") == DEFAULT_TOLERATION_SECONDS)


def clean_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in meta.items() if k not in SERVER_METADATA}


def clean_pod_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pod spec (or a fragment of one) without what the cluster added to the live pod."""
    out = copy.deepcopy(spec)
    out.pop("nodeName", None)
    if out.get("serviceAccount") is not None and out.get("serviceAccount") == out.get("serviceAccountName"):
        out.pop("serviceAccount")
    if out.get("priorityClassName"):
        for key in PRIORITY_RESOLVED:
            out.pop(key, None)
    if "volumes" in out:
        injected = {v.get("name") for v in out["volumes"] or [] if is_injected_volume(v)}
        out["volumes"] = [v for v in out["volumes"] or [] if v.get("name") not in injected]
    else:
        injected = set()
    if "tolerations" in out:
        out["tolerations"] = [t for t in out["tolerations"] or [] if not is_injected_toleration(t)]
    for section in ("initContainers", "containers"):
        if section in out:
            out[section] = [_clean_container(c, injected) for c in out[section] or []]
    return out


def _clean_container(container: dict, injected: set) -> dict:
    if "volumeMounts" in container:
        container["volumeMounts"] = [
            m for m in container["volumeMounts"] or []
            if m.get("name") not in injected and not str(m.get("name") or "").startswith(SERVICE_ACCOUNT_VOLUME)
            and not (m.get("name") in WEBHOOK_VOLUMES or m.get("mountPath") in WEBHOOK_MOUNT_DIRS[:2])]
        if not container["volumeMounts"]:
            del container["volumeMounts"]
    if "env" in container:
        container["env"] = [e for e in container["env"] or [] if e.get("name") not in WEBHOOK_ENV]
        if not container["env"]:
            del container["env"]
    return container


def clean_object(obj: dict[str, Any]) -> dict[str, Any]:
    """A whole live pod as a manifest one could apply again."""
    out = {k: copy.deepcopy(v) for k, v in obj.items() if k != "status"}
    if isinstance(out.get("metadata"), dict):
        out["metadata"] = clean_metadata(out["metadata"])
    if isinstance(out.get("spec"), dict):
        out["spec"] = clean_pod_spec(out["spec"])
    return out
