"""What gpubot asks of a cluster, and a SelfSubjectAccessReview for each (``gpubot doctor``).

The reads are written as the RBAC rules that grant them, in the shape of the Helm chart's ClusterRole
gpubot-read (deploy/helm/gpubot/templates/rbac.yaml), and a test holds that role to this list; the
leader-election writes are the Role beside it; remediation writes come from the remediation registry
(the chart's source too).
SelfSubjectAccessReview: authorization.k8s.io/v1 (k8s.io/api/authorization/v1 types.go), which every
authenticated user may create (ClusterRole system:basic-user), the question `kubectl auth can-i` asks.
"""
from __future__ import annotations

from dataclasses import dataclass

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from bot.errors import ClusterError

# (API groups, resources, verbs): the ClusterRole gpubot-read, rule for rule.
READ_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (("",), ("pods", "pods/log", "events", "nodes", "namespaces"), ("get", "list")),
    (("apps",), ("daemonsets",), ("get", "list")),
    (("batch",), ("jobs",), ("get", "list")),
    (("karpenter.sh",), ("nodepools", "nodeclaims"), ("get", "list")),
    (("karpenter.k8s.aws", "eks.amazonaws.com"), ("ec2nodeclasses", "nodeclasses"), ("get", "list")),
    (("kubeflow.org",), ("pytorchjobs", "tfjobs", "mpijobs"), ("get", "list")),
    (("jobset.x-k8s.io",), ("jobsets",), ("get", "list")),
    (("trainer.kubeflow.org",), ("trainjobs",), ("get", "list")),
    (("coordination.k8s.io",), ("leases",), ("get",)),  # which Karpenter replica leads
)


@dataclass(frozen=True)
class Access:
    verb: str
    group: str
    resource: str  # plural, or plural/subresource as RBAC writes it (pods/log)
    namespace: str | None = None
    name: str | None = None

    def text(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.verb} {self.group + '/' if self.group else ''}{self.resource}{'/' + self.name if self.name else ''}{where}"

    def attributes(self) -> dict:
        resource, _, subresource = self.resource.partition("/")
        out = {"verb": self.verb, "group": self.group, "resource": resource}
        for key, value in (("subresource", subresource), ("namespace", self.namespace), ("name", self.name)):
            if value:
                out[key] = value
        return out


def reads() -> list[Access]:
    return [Access(verb, group, resource) for groups, resources, verbs in READ_RULES
            for group in groups for resource in resources for verb in verbs]


def leader_election(*, namespace: str, lease: str) -> list[Access]:
    """client-go's leaderelection asks these of its own Lease (the chart's Role gpubot-leader-election)."""
    return [Access("create", "coordination.k8s.io", "leases", namespace),
            Access("get", "coordination.k8s.io", "leases", namespace, lease),
            Access("update", "coordination.k8s.io", "leases", namespace, lease)]


def remediation_writes() -> list[Access]:
    from playbooks.remediations import permissions

    return [Access(p.verb, p.group, p.resource) for p in permissions()]


def review(gateway, accesses: list[Access]) -> list[tuple[Access, bool]]:
    """Whether the gateway's credentials may do each; ClusterError when the review itself is refused."""
    authz = client.AuthorizationV1Api(gateway._api)
    out = []
    for access in accesses:
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": access.attributes()}}
        try:
            answer = gateway._json(authz.create_self_subject_access_review, body=body)
        except ApiException as exc:
            raise ClusterError(f"cluster {gateway.name} refused a SelfSubjectAccessReview ({exc.status} {exc.reason}): "
                          "its credentials are not accepted") from None
        out.append((access, bool((answer.get("status") or {}).get("allowed"))))
    return out
