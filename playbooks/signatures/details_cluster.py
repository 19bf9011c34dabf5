"""Detail paragraphs for containers that never ran the job: an image that cannot be pulled, a spec the
kubelet cannot turn into a container, a filesystem that filled up.

Registered into ``details.WRITERS`` / ``NEXT_STEPS``; each writer gets the same ``View`` as the others. The
fields come from signatures/images.py, containers.py and storage.py (``problem`` first, then the kubelet's
``reason``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from playbooks.signatures.details import View

_BACKOFF = ("The kubelet retries with a back-off (10 s, doubling to 5 minutes) and the container waits in "
            "ImagePullBackOff meanwhile.")


def _image(view: View) -> str:
    return f" {view.get('image')}" if view.get("image") else ""


def _pull_unauthorized(view: View) -> str:
    image = _image(view)
    if view.get("ecr_repository") or ".dkr.ecr." in view.get("image"):
        return (
            f"Amazon ECR refused to serve{image}. Nodes pull from ECR with the node's IAM role (the kubelet's ECR "
            "credential provider): that role needs ecr:GetAuthorizationToken, ecr:BatchGetImage and "
            "ecr:GetDownloadUrlForLayer (AmazonEC2ContainerRegistryReadOnly), and a repository in another account "
            "also needs a repository policy that allows the role. 'Your authorization token has expired' comes from "
            "a docker-registry Secret holding an ECR token, which lasts 12 hours: drop the Secret and let the node "
            f"role pull, or refresh it on a schedule. {_BACKOFF}"
        )
    return (
        f"The registry refused to serve{image} to the node. A private image needs a Secret of type "
        "kubernetes.io/dockerconfigjson in the pod's namespace, named in spec.imagePullSecrets or in the pod's "
        "ServiceAccount; a Secret that does not exist is skipped (the kubelet warns 'Unable to retrieve some image "
        "pull secrets'). Docker Hub answers 'pull access denied ... repository does not exist or may require "
        f"authorization' for a repository that does not exist as well: check the name first. {_BACKOFF}"
    )


_PULL = {
    "not_found": lambda view: (
        f"The registry has no image{_image(view)}: the tag or the repository does not exist (a typo, a tag that "
        "was never pushed or was deleted by a lifecycle policy, a registry path missing its account or region). "
        "Retrying will not help: list the repository's tags and correct spec.containers[].image (or push the tag)."
    ),
    "unauthorized": _pull_unauthorized,
    "rate_limited": lambda view: (
        f"The registry is rate limiting pulls{' of' + _image(view) if view.get('image') else ''} (HTTP 429, "
        "toomanyrequests). Docker Hub counts anonymous pulls per source IP, and every node behind one NAT gateway "
        "shares that IP, so a job that starts many pods on fresh nodes hits the limit at once. Pull with "
        "credentials (imagePullSecrets), or mirror the image into ECR (a pull-through cache rule for Docker Hub "
        f"keeps the same image names under your registry) and use imagePullPolicy: IfNotPresent. {_BACKOFF}"
    ),
    "network": lambda view: (
        f"The node could not reach the registry{' ' + view.get('registry') if view.get('registry') else ''} (a "
        "connection timeout, a DNS failure, a refused connection or a TLS error). Nodes in private subnets need a "
        "NAT gateway or VPC endpoints (for ECR: com.amazonaws.REGION.ecr.api, ecr.dkr and the S3 gateway endpoint "
        "that serves the layers); check the node security group's egress, the subnet's route table and any HTTP "
        "proxy the runtime uses. An x509 error means the node does not trust the registry's certificate."
    ),
    "invalid_name": lambda view: (
        "The image reference does not parse (InvalidImageName), so the kubelet never tries to pull it: repository "
        "names are lower case, without spaces or a scheme (no https://), with the tag after ':' and a digest "
        "after '@'. A value templated from an empty variable (image: ':v1' or 'registry/:tag') fails the same way."
    ),
    "never_pull": lambda view: (
        f"imagePullPolicy is Never and the node does not have{_image(view) or ' the image'}: the kubelet will not "
        "pull it (ErrImageNeverPull). Bake it into the node image (AMI or Bottlerocket data volume snapshot) or "
        "use IfNotPresent."
    ),
    "disk_full": lambda view: (
        f"The node's disk filled while unpacking{_image(view) or ' the image'}: containerd keeps the compressed "
        "layers and the unpacked snapshot on the root volume. Deep-learning images of 10 to 20 GB need room for "
        "both plus the images already there: give the GPU nodes a larger root volume (EC2NodeClass "
        "blockDeviceMappings) and keep the kubelet's image garbage collection thresholds at their defaults."
    ),
}


def pull_failed(view: View) -> str:
    writer = _PULL.get(view.get("problem"))
    if writer is not None:
        return writer(view)
    reason = view.get("reason") or "ErrImagePull"
    return (
        f"The kubelet could not pull{_image(view) or ' the container image'} ({reason}). {_BACKOFF} The reason is "
        "in the message after 'Failed to pull image' in the pod's events (kubectl describe pod): 'not found' is a "
        "wrong tag or repository, '401 Unauthorized' / '403 Forbidden' / 'pull access denied' are credentials, "
        "'toomanyrequests' is a rate limit, 'i/o timeout' / 'no such host' is the network path to the registry."
    )


def _where(view: View) -> str:
    namespace = view.get("namespace")
    return f" in namespace {namespace}" if namespace else " in the pod's namespace"


_CONFIG = {
    "missing key": lambda view: (
        f"The container refers to key {view.get('key')} of {'Secret ' + view.get('secret') if view.get('secret') else 'ConfigMap ' + view.get('configmap')}"
        f"{_where(view)} (env valueFrom, envFrom or a volume's items), and that object has no such key (keys are "
        "case-sensitive). The kubelet will not create the container (CreateContainerConfigError) and retries until "
        "the key exists: add the key, correct the reference, or mark the reference optional: true if the program "
        "can run without it."
    ),
    "missing secret": lambda view: (
        f"Secret {view.get('secret')} does not exist{_where(view)}"
        f"{' (needed by volume ' + view.get('volume') + ')' if view.get('volume') else ''}. Secrets are namespaced: a "
        "Secret created in another namespace, or by an operator or External Secrets sync that has not run yet, "
        "does not count. The container waits (CreateContainerConfigError, or ContainerCreating for a volume) until "
        "it exists; create it there or correct the name."
    ),
    "missing configmap": lambda view: (
        f"ConfigMap {view.get('configmap')} does not exist{_where(view)}"
        f"{' (needed by volume ' + view.get('volume') + ')' if view.get('volume') else ''}. ConfigMaps are "
        "namespaced; the container waits (CreateContainerConfigError, or ContainerCreating for a volume) until it "
        "exists: create it there or correct the name."
    ),
    "executable not found": lambda view: (
        f"The command {view.get('path') or 'in the spec'} is not in the image's PATH, so the runtime cannot start "
        f"the container{' (the ' + view.get('probe') + ' probe runs it)' if view.get('probe') else ''}: the image "
        "lacks it (a slimmer base image, a virtualenv not on PATH) or command / args name it wrongly. Give the "
        "absolute path, or check the image with the same tag: kubectl run -it --rm --image=IMAGE -- which COMMAND. "
        "Every restart fails the same way."
    ),
    "no such file": lambda view: (
        f"The runtime cannot find {view.get('path') or 'the command'} in the image: the script or binary is not "
        "at that path (a different WORKDIR, a file not copied into the image, a volume mounted over it). A script "
        "with Windows line endings fails the same way, because its interpreter line names '/bin/bash\\r'."
    ),
    "permission denied": lambda view: (
        f"{view.get('path') or 'The command'} exists in the image but is not executable for the container's user: "
        "chmod +x it in the Dockerfile, run it through its interpreter (bash script.sh), or check "
        "securityContext.runAsUser against the file's owner."
    ),
    "wrong architecture": lambda view: (
        f"{view.get('path') or 'The image'} was built for another CPU architecture than the node (exec format "
        "error): an amd64 image on an arm64 (Graviton) node or the reverse. Build a multi-arch image, or keep the "
        "pod on nodes of the image's architecture (nodeSelector kubernetes.io/arch, or the NodePool's "
        "kubernetes.io/arch requirement)."
    ),
    "mount failed": lambda view: (
        f"The runtime cannot mount a volume{' at ' + view.get('path') if view.get('path') else ''}: most often a "
        "ConfigMap or Secret mounted with subPath onto a path that is a directory in the image (or a directory "
        "onto a file), or a hostPath whose type does not match what is on the node. Mount the whole volume at a "
        "directory, or point subPath at the file's own path."
    ),
}


def config_error(view: View) -> str:
    writer = _CONFIG.get(view.get("problem"))
    if writer is not None:
        return writer(view)
    reason = view.get("reason") or "CreateContainerConfigError"
    if reason == "CreateContainerConfigError":
        cause = ("the kubelet could not build the container's configuration: a Secret, ConfigMap or key the spec "
                 "refers to is missing, or runAsNonRoot is set and the image runs as root")
    else:
        cause = ("the container runtime could not create or start the container from its spec: a command that is "
                 "not in the image, a mount it cannot make, or a runtime hook that failed")
    return (
        f"Container{' ' + view.get('container') if view.get('container') else ''} cannot start ({reason}): {cause}. "
        "The Warning event 'Error: ...' on the pod (kubectl describe pod) names what is missing; the pod waits, "
        "and nothing changes until the spec or the missing object does."
    )


def disk_full(view: View) -> str:
    scope, problem = view.get("scope"), view.get("problem")
    if scope:
        what = {"container": f"container {view.get('container')} wrote more than its ephemeral-storage limit",
                "pod": "the pod's containers together wrote more than the sum of their ephemeral-storage limits",
                "emptyDir": f"emptyDir volume {view.get('volume')} grew past its sizeLimit"}[scope]
        return (
            f"The kubelet evicted the pod: {what}{' (' + view.get('limit') + ')' if view.get('limit') else ''}. "
            "Ephemeral storage is the container's writable layer, its logs and every emptyDir not backed by memory, "
            "all on the node's root volume. Checkpoints, Hugging Face caches and datasets belong on a volume (a PVC, "
            "a generic ephemeral volume, FSx for Lustre), not in the container; or raise the limit if the usage is "
            "expected. Every restart fills it again."
        )
    if view.get("reason") == "Evicted":
        usage = (f" Container {view.get('container')} used {view.get('usage')} against a request of "
                 f"{view.get('request')}, so it was evicted first." if view.get("usage") else "")
        return (
            f"The node's root volume ran low on {view.get('resource') or 'ephemeral-storage'} and the kubelet "
            f"evicted pods to free it.{usage} The kubelet evicts first the pods that use most beyond their "
            "ephemeral-storage request: set requests that match what the job writes, give GPU nodes a larger root "
            "volume (EC2NodeClass blockDeviceMappings), and write checkpoints and caches to a volume."
        )
    if problem == "node disk":
        return (
            "The node's root volume is full: container images, their unpacked layers, container logs and emptyDirs "
            "all live there, and the kubelet cannot free enough by removing unused images. New pods cannot pull or "
            "start. Give the GPU nodes a larger root volume (EC2NodeClass blockDeviceMappings) and move data off the "
            "containers' writable layers."
        )
    if problem == "quota exceeded":
        return (
            f"A disk quota is exhausted{' writing ' + view.get('path') if view.get('path') else ''} (EDQUOT): the "
            "filesystem has room but this user or project has used its share (home directories, NFS, EFS access "
            "points with quotas). Free space under that quota or raise it; a larger disk does not help."
        )
    if problem == "write failed":
        return (
            "torch.save stopped writing the checkpoint mid-file (the zip writer's 'file write failed' or 'unexpected "
            "pos'): the write came back short, most often because the filesystem or a quota is full, sometimes a "
            "network filesystem that dropped. The checkpoint file is truncated: do not resume from it. Check free "
            "space where the checkpoints go (df -h DIR inside the container)."
        )
    path = view.get("path")
    return (
        f"A filesystem the job writes is full{' (writing ' + path + ')' if path else ''}: ENOSPC. In a pod that is "
        "the container's writable layer or an emptyDir (both on the node's root volume) or a mounted volume: "
        "df -h inside the container shows which. Checkpoints accumulate: write them to a volume sized for the "
        "number you keep and delete old ones (save_total_limit in Hugging Face Trainer, or your own rotation); "
        "a partly written checkpoint is not safe to resume from."
    )


WRITERS: dict[str, Callable[[View], str]] = {
    "image.pull_failed": pull_failed,
    "container.config_error": config_error,
    "storage.disk_full": disk_full,
}

NEXT_STEPS: dict[str, str] = {
    "image.pull_failed": "the pod's events (kubectl describe pod): the full 'Failed to pull image' message, and the "
                         "imagePullSecrets of the pod and its ServiceAccount",
    "container.config_error": "the pod's events (the 'Error: ...' message) and the Secrets / ConfigMaps in the pod's "
                              "namespace (kubectl get secret,configmap -n NAMESPACE)",
    "storage.disk_full": "df -h inside the container and on the node, and the pod's ephemeral-storage requests, "
                         "limits and volumes",
}


# Where to look next, per component that wrote the text (the vocabulary entry's own next step wins).
_LOOK = (
    ("karpenter", "the Karpenter controller's log around that time (kubectl logs -n kube-system -l app.kubernetes.io/name=karpenter) "
                  "and the NodeClaim, NodePool and EC2NodeClass it names (kubectl describe)"),
    ("kubelet", "the node's kubelet log (journalctl -u kubelet on the node) and kubectl describe node"),
    ("scheduler", "kubectl describe pod (its Events) and the pod's requests, selectors, affinities and tolerations"),
    ("kernel", "the node's kernel log (dmesg -T, journalctl -k) and the device it names"),
    ("device", "the device plugin pod's log on that node (kubectl logs -n kube-system -l name=nvidia-device-plugin-ds) "
               "and kubectl describe node (Capacity and Allocatable)"),
    ("ec2", "the EC2 error code in the AWS documentation and the IAM role or quota it names"),
)


def unrecognised(view: View) -> str:
    writer = view.get("writer") or view.get("entry_component") or "a component"
    said = view.get("message")
    reason = view.get("reason")
    meaning = view.get("meaning")
    head = f"{writer} reported " + (f"{reason}: " if reason else "") + (f"\"{said}\"" if said else "an error") + "."
    if meaning:
        owner = {"spec": "the job's own spec", "platform": "the cluster's or the node's configuration",
                 "capacity": "capacity or a quota", "hardware": "the hardware", "transient": "a transient condition "
                 "that retries on its own"}.get(view.get("owner"), "")
        return (f"{head} {meaning}" + (f" Whose move: {owner}." if owner else "") +
                f" Next: {view.get('next') or _next(writer)}." +
                (f" What would confirm it: {view.get('upgrade')}." if view.get("upgrade") else ""))
    return (f"{head} No rule of gpubot explains this message, so it is quoted as the cluster wrote it: it is the "
            f"best evidence there is. Next: read {_next(writer)}.")


def _next(writer: str) -> str:
    low = writer.lower()
    for word, where in _LOOK:
        if word in low:
            return where
    return "the log of the component that wrote it and kubectl describe of the object it names"


WRITERS["cluster.unrecognised"] = unrecognised
NEXT_STEPS["cluster.unrecognised"] = ("the full log of the component that wrote the message around that time, and "
                                      "kubectl describe of the object it names")
