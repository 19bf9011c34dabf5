"""Resource types the simulated API server knows, and the Kubernetes `Status` errors it answers with."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResourceType:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    # Stored with another group's objects: events.k8s.io Events live in the core Event store.
    storage_group: str | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        """Objects are stored by (group, kind) so any served version reaches the same object."""
        return (self.group if self.storage_group is None else self.storage_group, self.kind)

    @property
    def is_custom(self) -> bool:
        """Served from a CustomResourceDefinition, not built into kube-apiserver."""
        return self.group not in BUILTIN_GROUPS


KNOWN_TYPES: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "namespaces", "Namespace", False),
    ResourceType("", "v1", "nodes", "Node", False),
    ResourceType("", "v1", "pods", "Pod", True),
    ResourceType("", "v1", "events", "Event", True),
    ResourceType("", "v1", "services", "Service", True),
    ResourceType("", "v1", "configmaps", "ConfigMap", True),
    ResourceType("apps", "v1", "daemonsets", "DaemonSet", True),
    ResourceType("apps", "v1", "deployments", "Deployment", True),
    ResourceType("batch", "v1", "jobs", "Job", True),
    ResourceType("coordination.k8s.io", "v1", "leases", "Lease", True),
    ResourceType("events.k8s.io", "v1", "events", "Event", True, storage_group=""),
    ResourceType("karpenter.sh", "v1", "nodepools", "NodePool", False),
    ResourceType("karpenter.sh", "v1", "nodeclaims", "NodeClaim", False),
    ResourceType("karpenter.k8s.aws", "v1", "ec2nodeclasses", "EC2NodeClass", False),
    ResourceType("eks.amazonaws.com", "v1", "nodeclasses", "NodeClass", False),
    ResourceType("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", True),
)


BUILTIN_GROUPS = frozenset({"", "apps", "batch", "coordination.k8s.io", "events.k8s.io"})

# Older versions a scenario may restrict a group to (api.serve), with the kinds each one serves:
# karpenter.sh v1beta1 (Karpenter v0.32-v0.37) has NodePool / NodeClaim, v1alpha5 (up to v0.31) has
# Provisioner / Machine; karpenter.k8s.aws v1alpha1 has AWSNodeTemplate.
VERSIONED_TYPES: tuple[ResourceType, ...] = (
    ResourceType("karpenter.sh", "v1beta1", "nodepools", "NodePool", False),
    ResourceType("karpenter.sh", "v1beta1", "nodeclaims", "NodeClaim", False),
    ResourceType("karpenter.sh", "v1alpha5", "provisioners", "Provisioner", False),
    ResourceType("karpenter.sh", "v1alpha5", "machines", "Machine", False),
    ResourceType("karpenter.k8s.aws", "v1beta1", "ec2nodeclasses", "EC2NodeClass", False),
    ResourceType("karpenter.k8s.aws", "v1alpha1", "awsnodetemplates", "AWSNodeTemplate", False),
)
# Custom kinds served once a scenario holds one of them (their CRD is then installed), with the scope
# their CRDs declare: a kind outside every table is guessed from its first object, which cannot tell
# a namespaced kind written without a namespace (the scenario's default) from a cluster-scoped one.
# kubeflow/training-operator manifests/base/crds (TFJob, MPIJob v1), kubeflow/mpi-operator (MPIJob
# v2beta1), kubernetes-sigs/jobset config/components/crd (JobSet), kubeflow/trainer
# manifests/base/crds (TrainJob, trainer.kubeflow.org_trainjobs.yaml): all namespaced.
ON_DEMAND_TYPES: tuple[ResourceType, ...] = (
    ResourceType("kubeflow.org", "v1", "tfjobs", "TFJob", True),
    ResourceType("kubeflow.org", "v1", "mpijobs", "MPIJob", True),
    ResourceType("kubeflow.org", "v2beta1", "mpijobs", "MPIJob", True),
    ResourceType("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", True),
    ResourceType("trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob", True),
)
SERVABLE_VERSIONS: dict[str, tuple[str, ...]] = {
    "karpenter.sh": ("v1", "v1beta1", "v1alpha5"),
    "karpenter.k8s.aws": ("v1", "v1beta1", "v1alpha1"),
}


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def derive_type(obj: dict) -> ResourceType:
    """A kind outside the table is served generically, the way a CRD with default names would be."""
    group, version = split_api_version(obj["apiVersion"])
    kind = obj["kind"]
    namespaced = bool(obj.get("metadata", {}).get("namespace"))
    return ResourceType(group, version, kind.lower() + "s", kind, namespaced)


class ApiError(Exception):
    """An error the server returns to the client as a Kubernetes `Status` object."""

    def __init__(self, *, code: int, reason: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict:
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def not_found(plural: str, name: str) -> ApiError:
    return ApiError(
        code=404,
        reason="NotFound",
        message=f'{plural} "{name}" not found',
        details={"name": name, "kind": plural},
    )


def already_exists(plural: str, name: str) -> ApiError:
    return ApiError(
        code=409,
        reason="AlreadyExists",
        message=f'{plural} "{name}" already exists',
        details={"name": name, "kind": plural},
    )


def conflict(plural: str, name: str) -> ApiError:
    return ApiError(
        code=409,
        reason="Conflict",
        message=(
            f'Operation cannot be fulfilled on {plural} "{name}": the object has been modified; '
            "please apply your changes to the latest version and try again"
        ),
        details={"name": name, "kind": plural},
    )


def bad_request(message: str) -> ApiError:
    return ApiError(code=400, reason="BadRequest", message=message)


def forbidden(*, verb: str, plural: str, subresource: str | None, group: str, namespace: str | None,
              name: str | None) -> ApiError:
    """kube-apiserver's RBAC refusal: the message of staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
    responsewriters/errors.go forbiddenMessage, wrapped by apimachinery errors.NewForbidden
    ("<resource>.<group> \"<name>\" is forbidden: ...")."""
    resource = f"{plural}/{subresource}" if subresource else plural
    qualified = f"{plural}.{group}" if group else plural
    subject = f'{qualified} "{name}"' if name else qualified
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    message = (f'{subject} is forbidden: User "{FORBIDDEN_USER}" cannot {verb} resource "{resource}" '
               f'in API group "{group}" {scope}')
    details = {"kind": plural} if name is None else {"name": name, "kind": plural}
    if group:
        details["group"] = group
    return ApiError(code=403, reason="Forbidden", message=message, details=details)


FORBIDDEN_USER = "system:serviceaccount:gpubot:gpubot"


def invalid(*, plural: str, name: str, message: str) -> ApiError:
    return ApiError(
        code=422,
        reason="Invalid",
        message=message,
        details={"name": name, "kind": plural},
    )
