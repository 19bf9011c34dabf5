"""Whether a GPU node's AMI carries the NVIDIA driver, read from what the cluster records about it.

How Karpenter picks the AMI variant (aws/karpenter-provider-aws, v1.0 and later):
- An alias term (``al2023@<version>``, ``bottlerocket@<version>``, ``al2@<version>``) resolves every
  variant's SSM parameter (``pkg/providers/amifamily/al2023.go`` ``DescribeImageQuery``: standard, nvidia
  and, on x86_64, neuron; ``bottlerocket.go``: ``aws-k8s-<k8s>`` and ``aws-k8s-<k8s>-nvidia``) and gives each
  image its variant's requirements (``types.go`` ``Variant.Requirements``: nvidia = ``instance-gpu-count``
  Exists; standard = ``instance-gpu-count`` and ``instance-accelerator-count`` DoesNotExist).
  ``ami.go`` ``MapToInstanceTypes`` gives each instance type the first AMI whose requirements it meets, so
  an NVIDIA instance type always launches the NVIDIA variant: on x86_64 from v1.0, on arm64 (g5g) from
  v1.4.0 (#7996, "al2023 arm64 nvidia ami support"); before that an arm64 GPU type matched no AL2023 AMI
  and was not launched at all.
- A term by ``id``, ``name``, ``tags`` or ``owner`` carries no variant requirements: every instance type
  gets the selected image, GPU or not. This is how a GPU node ends up on
  ``amazon-eks-node-al2023-x86_64-standard-…``, a non-nvidia Bottlerocket build or a custom AMI.

Without a driver NVIDIA's device plugin cannot load NVML (NVIDIA/k8s-device-plugin via go-nvlib:
``could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or
directory``, then ``Failed to initialize NVML``) and registers no ``nvidia.com/gpu``: no toleration or
restart of the plugin changes that; the AMI must change.
"""
from __future__ import annotations

from playbooks import linear
from dataclasses import dataclass

# AMI names as the EKS and Bottlerocket builds publish them (the names EC2NodeClass status.amis lists):
# amazon-eks-node-al2023-<arch>-<variant>-<k8s>-v<date>, amazon-eks-gpu-node-<k8s>-v<date> (AL2 accelerated),
# amazon-eks-[arm64-]node-<k8s>-v<date> (AL2 standard), bottlerocket-aws-k8s-<k8s>[-nvidia]-<arch>-v<version>-<commit>.
_AL2023 = linear.compile(r"amazon-eks-node-al2023-(?P<arch>x86_64|arm64)-(?P<variant>standard|nvidia|neuron)-[\d.]+-(?P<version>v\d{8})")
_AL2_GPU = linear.compile(r"amazon-eks-gpu-node-[\d.]+-(?P<version>v\d{8})")
_AL2_STANDARD = linear.compile(r"amazon-eks-(?:arm64-)?node-\d+\.\d+-(?P<version>v\d{8})")
_BOTTLEROCKET = linear.compile(r"bottlerocket-aws-k8s-[\d.]+(?P<nvidia>-nvidia)?-(?:x86_64|aarch64)-(?P<version>v\d+\.\d+\.\d+)")
# node.status.nodeInfo.osImage on Bottlerocket names the variant: "Bottlerocket OS 1.26.2 (aws-k8s-1.31-nvidia)".
_BOTTLEROCKET_OS = linear.compile(r"Bottlerocket OS (?P<version>\d+\.\d+\.\d+) \(aws-k8s-[\d.]+(?P<nvidia>-nvidia)?\)")
# What the device plugin (go-nvlib) and NVML say when libnvidia-ml is not on the node.
NO_DRIVER_LINES = ("could not load NVML library", "libnvidia-ml.so.1: cannot open shared object file",
                   "ERROR_LIBRARY_NOT_FOUND", "NVML library not found")


@dataclass(frozen=True)
class Ami:
    """What is known of one node's image."""

    driver: bool | None  # True: an NVIDIA variant; False: an image without the NVIDIA driver; None: unknown
    family: str | None = None  # "al2023", "al2" or "bottlerocket": the alias family that replaces it
    version: str | None = None  # the release, to pin the alias to the same one ("v20251103", "v1.26.2")
    name: str | None = None  # the AMI name, or the osImage it was read from
    image_id: str | None = None

    @property
    def alias(self) -> str | None:
        """The alias term that launches this family's NVIDIA variant for GPU types (same release when known)."""
        if self.family is None:
            return None
        return f"{self.family}@{self.version or 'latest'}"


def classify(name: str | None, *, image_id: str | None = None, os_image: str | None = None) -> Ami:
    """The AMI a node runs, from its AMI name (EC2NodeClass status.amis) or, failing that, its osImage."""
    text = name or ""
    if found := _AL2023.search(text):
        return Ami(found["variant"] == "nvidia", "al2023", found["version"], text, image_id)
    if found := _BOTTLEROCKET.search(text):
        return Ami(bool(found["nvidia"]), "bottlerocket", found["version"], text, image_id)
    if found := _AL2_GPU.search(text):
        return Ami(True, "al2", found["version"], text, image_id)
    if found := _AL2_STANDARD.search(text):
        return Ami(False, "al2", found["version"], text, image_id)
    if found := _BOTTLEROCKET_OS.search(os_image or ""):
        return Ami(bool(found["nvidia"]), "bottlerocket", f"v{found['version']}", os_image, image_id)
    return Ami(None, None, None, name or None, image_id)


def says_no_driver(log: str) -> str | None:
    """The device plugin log line that says the NVIDIA user-space driver is not on the node."""
    for line in log.splitlines():
        if any(marker in line for marker in NO_DRIVER_LINES):
            return line.strip()
    return None
