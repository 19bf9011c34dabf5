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

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        """Objects are stored by (group, kind) so any served version reaches the same object."""
        return (self.group, self.kind)


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
    ResourceType("karpenter.sh", "v1", "nodepools", "NodePool", False),
    ResourceType("karpenter.sh", "v1", "nodeclaims", "NodeClaim", False),
    ResourceType("karpenter.k8s.aws", "v1", "ec2nodeclasses", "EC2NodeClass", False),
    ResourceType("eks.amazonaws.com", "v1", "nodeclasses", "NodeClass", False),
    ResourceType("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", True),
)


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


def invalid(*, plural: str, name: str, message: str) -> ApiError:
    return ApiError(
        code=422,
        reason="Invalid",
        message=message,
        details={"name": name, "kind": plural},
    )
