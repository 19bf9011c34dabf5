"""Kubernetes' own vocabulary: event reasons and their message formats (kubelet, kube-scheduler,
kube-controller-manager), pod / Job / node condition reasons, container waiting and terminated reasons and
the refusals of the admission chain, over the releases EKS supports (v1.29 to the newest tag read).

Where the facts come from (the snapshot, scripts/cluster_tables/upstream/kubernetes.json):

- The published staging repositories kubernetes/api, kubernetes/apiserver and
  kubernetes/pod-security-admission, read by ``refresh`` at the last patch tag of each minor series
  (``kubernetes-1.29.15`` ... ) with ``git grep``. Their ``where`` is written as the same file in
  kubernetes/kubernetes (``v1.29.15:staging/src/k8s.io/api/core/v1/types.go:3024``): those repositories are
  published from that folder, byte for byte.
- kubernetes/kubernetes itself (kubelet, scheduler plugins, controllers, plugin/pkg/admission) is larger
  than a mirror may be here, so its items were transcribed from its source files and carry
  ``"read": "transcribed"`` and a ``where`` of ``kubernetes/kubernetes:PATH`` without tag or line.
  ``refresh`` keeps them from the checked-in snapshot as they are; with a mirror of kubernetes/kubernetes
  under --mirrors they are checked (each format must still occur in its file at the newest tag).

The classing (level, whose move, next step, finding code) is below, keyed by reason and by the format's
words; an item no rule names gets the default of its event type and no code.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from scripts.cluster_tables.common import MissingMirror, git, mirror, row, tags

NAME = "kubernetes"
MIRRORS = ("github:kubernetes/api", "github:kubernetes/apiserver", "github:kubernetes/pod-security-admission",
           "github:kubernetes/kubernetes")
FIRST_MINOR = 29  # the oldest minor EKS supports (standard and extended support) when this was written
SNAPSHOT = Path(__file__).resolve().parent.parent / "upstream" / f"{NAME}.json"
MAIN = "kubernetes/kubernetes"

# ----------------------------------------------------------------------------------------------- refresh
# Constants read from the API types: (repo, path, constant-name pattern, component, kind).
CONSTANTS = (
    # staging/src/k8s.io/api/core/v1/types.go: PodReasonUnschedulable, PodReasonSchedulingGated,
    # PodReasonSchedulerError, PodReasonTerminationByKubelet, PodReasonPreemptionByScheduler, and from
    # v1.33 the in-place resize reasons PodReasonDeferred, PodReasonInfeasible, PodReasonError.
    ("kubernetes/api", "core/v1/types.go", r"PodReason\w+", "pod", "condition"),
    # staging/src/k8s.io/api/batch/v1/types.go: JobReasonBackoffLimitExceeded, ... the Job's Failed and
    # Complete condition reasons.
    ("kubernetes/api", "batch/v1/types.go", r"JobReason\w+", "job-controller", "condition"),
)
# Format strings found by a literal anchor in a folder: (repo, folder, anchor regex, component, kind, reason,
# event type, wrapper). The message is the Go string literal on the anchor's line that the anchor matches;
# ``wrapper`` ("{}: %s") writes what the caller makes of it.
FORMATS = (
    # pkg/admission/plugin/webhook/errors/statuserror.go ToStatusErr: deniedBy + ": " + the webhook's message.
    ("kubernetes/apiserver", "pkg/admission/plugin/webhook", r"admission webhook %q denied the request",
     "kube-apiserver", "admission", "", "", "{}: %s"),
    ("kubernetes/apiserver", "pkg/admission/plugin/webhook", r"admission webhook %q does not support dry run",
     "kube-apiserver", "admission", "", "", "{}"),
    ("kubernetes/apiserver", "pkg/admission/plugin/webhook", r"admission webhook %q attempted to modify",
     "kube-apiserver", "admission", "", "", "{}"),
    # pkg/util/webhook/error.go ErrCallingWebhook.Error().
    ("kubernetes/apiserver", "pkg/util/webhook", r"failed calling webhook %q", "kube-apiserver", "admission", "",
     "", "{}"),
    # pkg/admission/plugin/resourcequota/controller.go.
    ("kubernetes/apiserver", "pkg/admission/plugin/resourcequota", r"exceeded quota: ", "kube-apiserver",
     "admission", "", "", "{}"),
    ("kubernetes/apiserver", "pkg/admission/plugin/resourcequota", r"failed quota: ", "kube-apiserver",
     "admission", "", "", "{}"),
    ("kubernetes/apiserver", "pkg/admission/plugin/resourcequota", r"insufficient quota to consume",
     "kube-apiserver", "admission", "", "", "{}"),
    ("kubernetes/apiserver", "pkg/admission/plugin/resourcequota", r"status unknown for quota",
     "kube-apiserver", "admission", "", "", "{}"),
    # pkg/admission/plugin/namespace/lifecycle/admission.go.
    ("kubernetes/apiserver", "pkg/admission/plugin/namespace", r"because it is being terminated",
     "kube-apiserver", "admission", "", "", "{}"),
    # pkg/admission/plugin/validatingadmissionpolicy/controller.go (v1.29),
    # pkg/admission/plugin/policy/validating/dispatcher.go (v1.30+).
    ("kubernetes/apiserver", "pkg/admission/plugin", r"ValidatingAdmissionPolicy '%s' (with binding '%s' )?denied",
     "kube-apiserver", "admission", "", "", "{}"),
    # admission/admission.go of pod-security-admission: the enforce refusal (warn/audit say "would violate").
    ("kubernetes/pod-security-admission", "admission", r"^violates PodSecurity %q", "kube-apiserver",
     "admission", "", "", "{}"),
    ("kubernetes/pod-security-admission", "admission", r"^would violate PodSecurity %q", "kube-apiserver",
     "admission", "", "", "{}"),
)
_GO_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_GO_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def release_tags(gitdir: Path) -> list[str]:
    """The last patch tag of each minor series from FIRST_MINOR on: ``kubernetes-1.29.15`` ..."""
    newest: dict[int, tuple[int, str]] = {}
    for tag in tags(gitdir):
        found = re.fullmatch(r"kubernetes-1\.(\d+)\.(\d+)", tag)
        if found and int(found.group(1)) >= FIRST_MINOR:
            minor, patch = int(found.group(1)), int(found.group(2))
            if minor not in newest or patch > newest[minor][0]:
                newest[minor] = (patch, tag)
    return [newest[m][1] for m in sorted(newest)]


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", lambda m: _GO_ESCAPES.get(m.group(1), m.group(0)), literal)


def _where(repo: str, tag: str, path: str, line: str) -> str:
    # kubernetes/api at tag kubernetes-1.29.15 is staging/src/k8s.io/api of kubernetes/kubernetes v1.29.15.
    return f"v{tag.removeprefix('kubernetes-')}:staging/src/k8s.io/{repo.split('/')[1]}/{path}:{line}"


def _grep(gitdir: Path, tag: str, pattern: str, under: str) -> list[tuple[str, str, str]]:
    try:
        out = git(gitdir, "grep", "-n", "-E", pattern, tag, "--", under)
    except Exception:  # git grep exits 1 when nothing matches
        return []
    hits = []
    for line in out.splitlines():
        _, path, number, text = line.split(":", 3)
        if not path.endswith("_test.go"):
            hits.append((path, number, text))
    return hits


def _item(items: dict, *, component: str, kind: str, reason: str, type_: str, message: str, where: str) -> None:
    key = (component, kind, reason, type_, message)
    entry = items.setdefault(key, {"component": component, "kind": kind, "reason": reason, "type": type_,
                                   "message": message, "where": []})
    entry["where"].append(where)


def read_staging(mirrors: Path) -> tuple[list[dict], dict[str, list[str]]]:
    items: dict = {}
    read: dict[str, list[str]] = {}
    for repo in sorted({c[0] for c in CONSTANTS} | {f[0] for f in FORMATS}):
        gitdir = mirror(mirrors, repo)
        read[repo] = release_tags(gitdir)
        for tag in read[repo]:
            for c_repo, path, name, component, kind in CONSTANTS:
                if c_repo != repo:
                    continue
                for path_, number, text in _grep(gitdir, tag, rf"^\s*{name}\s+(string\s+)?=\s+\"", path):
                    value = _GO_STRING.search(text)
                    _item(items, component=component, kind=kind, reason=_unquote(value.group(1)), type_="",
                          message="", where=_where(repo, tag, path_, number))
            for f_repo, under, anchor, component, kind, reason, type_, wrapper in FORMATS:
                if f_repo != repo:
                    continue
                for path_, number, text in _grep(gitdir, tag, anchor.lstrip("^"), under):
                    for literal in _GO_STRING.findall(text):
                        message = _unquote(literal)
                        if re.search(anchor, message):
                            _item(items, component=component, kind=kind, reason=reason, type_=type_,
                                  message=wrapper.format(message), where=_where(repo, tag, path_, number))
    for entry in items.values():
        entry["where"] = sorted(set(entry["where"]), key=_where_order)
    return list(items.values()), read


def _where_order(where: str) -> tuple:
    version, rest = where.split(":", 1)
    return (tuple(int(p) for p in version.lstrip("v").split(".")), rest)


def _check_main(gitdir: Path, transcribed: list[dict]) -> None:
    """With a kubernetes/kubernetes mirror: every transcribed format must still be in its file at the
    newest v1.x tag (a renamed or reworded one is to be transcribed again)."""
    newest = max((t for t in tags(gitdir) if re.fullmatch(r"v1\.\d+\.\d+", t)),
                 key=lambda t: tuple(int(p) for p in t[1:].split(".")))
    for item in transcribed:
        for where in item["where"]:
            path = where.split(":", 1)[1]
            text = git(gitdir, "show", f"{newest}:{path}")
            literal = max(re.split(r"%[-+ #0-9.]*[a-zA-Z]", item["message"] or item["reason"]), key=len)
            if literal.strip() and literal.strip() not in text:
                print(f"kubernetes: {literal.strip()!r} not in {newest}:{path}")


def refresh(mirrors: Path) -> dict:
    staging, read = read_staging(mirrors)
    transcribed = [i for i in json.loads(SNAPSHOT.read_text())["items"] if i.get("read") == "transcribed"]
    try:
        _check_main(mirror(mirrors, MAIN), transcribed)
    except MissingMirror:
        pass  # too large to mirror here: the transcribed items stand as checked in
    items = sorted(staging + transcribed, key=lambda i: (i["component"], i["kind"], i["reason"], i["message"]))
    return {
        "source": "kubernetes/kubernetes: staging/src/k8s.io/{api,apiserver,pod-security-admission} read at "
                  + ", ".join(f"v{t.removeprefix('kubernetes-')}" for t in read["kubernetes/api"])
                  + " (published mirrors kubernetes/api, kubernetes/apiserver, kubernetes/pod-security-admission; "
                  + "pod-security-admission's newest: " + read["kubernetes/pod-security-admission"][-1]
                  + "); kubelet, scheduler, controllers and plugin/pkg/admission transcribed from source",
        "tags": read,
        "items": items,
    }


# ---------------------------------------------------------------------------------------------- classify
# A class: (level, owner, code, meaning, next step, upgrade). Rules are tried in order; the first whose
# reason (exact, "" = any) and message regex (searched, None = any) and kind match decides.
K = "kubectl describe pod POD -n NS"

RULES: list[tuple[dict, tuple[str, str, str | None, str, str, str]]] = []


def rule(level: str, owner: str, code: str | None, meaning: str, next_step: str, upgrade: str = "", *,
         reason: str | tuple[str, ...] = "", message: str | None = None, kind: str | None = None,
         component: str | None = None) -> None:
    reasons = (reason,) if isinstance(reason, str) else reason
    RULES.append(({"reasons": reasons, "message": re.compile(message) if message else None, "kind": kind,
                   "component": component}, (level, owner, code, meaning, next_step, upgrade)))


# --- container waiting / terminated reasons: pkg/kubelet/images/types.go, pkg/kubelet/container/sync_result.go,
# pkg/kubelet/kuberuntime/kuberuntime_container.go, pkg/kubelet/kubelet_pods.go; terminated reasons are the
# CRI runtime's (containerd internal/cri/server/container_status.go).
rule("error", "spec", "image.pull_failed",
     "The container's image cannot be pulled (tag or repository missing, registry refused the credentials, "
     "rate limit or no route to the registry).",
     f"{K}: read the Failed event's 'Failed to pull image' text; check the image name, imagePullSecrets and "
     "the node role's ECR permissions.",
     "The kubelet's 'Failed to pull image' message naming not found / unauthorized / toomanyrequests.",
     reason=("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "ImageInspectError",
             "RegistryUnavailable", "SignatureValidationFailed"), kind="container_reason")
rule("error", "spec", "container.config_error",
     "The kubelet cannot build or start the container from its spec (a missing Secret, ConfigMap or key, an "
     "invalid mount, runAsNonRoot against a root image, a command not in the image).",
     f"{K}: the container's state.waiting.message names the missing object or the runtime's error.",
     "The waiting message or a Failed event naming the Secret / ConfigMap / executable.",
     reason=("CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreCreateHookError",
             "PreStartHookError", "PostStartHookError", "StartError", "ContainerCannotRun"),
     kind="container_reason")
rule("error", "spec", "training.crash_loop",
     "The container keeps exiting and the kubelet waits longer before each restart.",
     "kubectl logs POD -c CONTAINER --previous -n NS: read the last error lines and the exit code "
     "(lastState.terminated).",
     "The previous container's exit code and last log lines.", reason="CrashLoopBackOff", kind="container_reason")
rule("error", "capacity", "training.terminated",
     "The kernel's OOM killer ended the container: it used more memory than its limit (or the node ran out).",
     "Raise the container's memory limit or lower the job's memory use; kubectl describe node NODE for "
     "memory pressure.", "The container's memory limit next to its usage (metrics, dmesg on the node).",
     reason="OOMKilled", kind="container_reason")
rule("error", "spec", None,
     "The container's process exited with a non-zero code.",
     "kubectl logs POD -c CONTAINER --previous -n NS: the exit code and the last lines say why.",
     "The exit code (137 killed, 143 SIGTERM, 1 an error in the program) and the traceback.",
     reason="Error", kind="container_reason")
rule("warning", "platform", None,
     "The kubelet lost the container's status: it could not be found when the pod was stopped or deleted.",
     f"{K}: look at the node's events around that time (node restart, runtime restart, eviction).",
     "Node events (Rebooted, NodeNotReady) at the same time.", reason="ContainerStatusUnknown",
     kind="container_reason")
rule("error", "platform", None,
     "The pod's sandbox (its network namespace and pause container) could not be created, configured or "
     "removed.", f"{K}: read the FailedCreatePodSandBox event; the CNI's error (aws-node logs) is the cause.",
     "The aws-node (VPC CNI) log on that node at the same time.",
     reason=("CreatePodSandboxError", "ConfigPodSandboxError", "KillPodSandboxError"), kind="container_reason")
rule("warning", "platform", None, "The kubelet failed to stop a container.",
     f"{K}; read the kubelet and container runtime logs on the node.", reason="KillContainerError",
     kind="container_reason")
rule("error", "platform", "training.terminated",
     "The container ran past the runtime's deadline and was stopped.", f"{K}: read the container's last state.",
     reason="DeadlineExceeded", kind="container_reason")
rule("normal", "benign", None, "A routine container state (being created, initialising, or finished).",
     "Nothing to do.", reason=("ContainerCreating", "PodInitializing", "Completed"), kind="container_reason")

# --- image events: pkg/kubelet/images/image_manager.go, pkg/kubelet/events/event.go.
rule("error", "spec", "image.pull_failed",
     "The kubelet could not pull the image (missing tag or repository, refused credentials, rate limit, "
     "no path to the registry).",
     "Read the error after the image name: not found -> fix the image; 401/403 -> imagePullSecrets or the "
     "node role's ECR policy; toomanyrequests -> a mirror or credentials.",
     "The registry's answer in the error text.",
     message=r"^(Failed to pull image|Back-off pulling image|Failed to inspect image|Failed to apply default "
             r"image tag|Container image .* is not present with pull policy of Never)")
rule("normal", "benign", None, "Routine image activity on the node.",
     "Nothing to do; long 'in Xm' durations mean slow pulls (image.slow_pull).",
     "The pull duration against the job's start-up time.",
     reason=("Pulling", "Pulled"), kind="event")

# --- container lifecycle events: pkg/kubelet/kuberuntime/kuberuntime_container.go, kuberuntime_manager.go.
rule("error", "spec", "training.crash_loop",
     "The container exited again and the kubelet is waiting before the next restart.",
     "kubectl logs POD -c CONTAINER --previous -n NS for the last error and exit code.",
     "The previous container's exit code and last log lines.", message=r"^Back-off restarting failed container")
rule("error", "spec", None,
     "The kubelet could not create or start the container; the text after 'Error:' is the waiting reason or "
     "the runtime's error.",
     f"{K}: the container's state.waiting.reason/message; ErrImagePull / ImagePullBackOff are image pulls, "
     "CreateContainerConfigError a missing Secret / ConfigMap.",
     "The container's waiting reason.", reason="Failed", message=r"^Error: ")
rule("error", "platform", None,
     "The pod's sandbox could not be created: usually the CNI failed to set up its network (no free IP, "
     "ipamd not ready, missing IAM permissions).",
     "Read the error: 'failed to assign an IP address' -> subnet or prefix delegation; check the aws-node pod "
     "and ipamd log on the node.", "The aws-node (ipamd) log on that node.",
     reason=("FailedCreatePodSandBox", "FailedPodSandBoxStatus"))
rule("warning", "transient", None,
     "The pod's sandbox changed (node or runtime restart): the kubelet kills and recreates it.",
     "Nothing unless it repeats; then read the container runtime log on the node.", reason="SandboxChanged")
rule("warning", "spec", None,
     "A probe failed; a failing liveness or startup probe restarts the container.",
     f"{K}: compare the probe's path, port and timeouts with what the process serves and how long it starts.",
     "Restart counts and the container's last state.", reason=("Unhealthy", "ProbeWarning"))
rule("warning", "spec", None,
     "The container is restarted because a probe failed or its spec changed.",
     f"{K}: read the Unhealthy events before it; raise the probe's thresholds for slow starts.",
     reason="Killing", message=r"will be restarted")
# The job controller's "Job suspended" (pkg/controller/job/job_controller.go, a Normal event): the job holds on
# purpose (spec.suspend, set by a person or by Kueue until its Workload is admitted) and its pods are gone: the
# answer to "why is it not running", as scheduling.gated, until a newer "Job resumed" or Suspended=False says it
# is over (the analyzers read that newer state).
rule("warning", "spec", "scheduling.gated",
     "The Job is suspended (spec.suspend, often Kueue holding it until its Workload is admitted): its pods are "
     "deleted and none are created until it is resumed.",
     "kubectl get job JOB -o jsonpath='{.spec.suspend}'; with Kueue, kubectl describe workload -n NS for its "
     "QuotaReserved / Admitted conditions.", "The Job's Suspended condition still True.",
     reason="Suspended", message=r"^Job suspended$", kind="event")
rule("normal", "benign", None, "Routine container lifecycle on the node.", "Nothing to do.",
     reason=("Created", "Started", "Killing", "Scheduled", "SuccessfulAttachVolume", "SuccessfulMountVolume",
             "Starting", "NodeAllocatableEnforced", "RegisteredNode", "RemovingNode", "SuccessfulCreate",
             "SuccessfulDelete", "Completed", "Suspended", "Resumed", "ProvisioningSucceeded",
             "WaitForFirstConsumer", "ExternalProvisioning", "TaintManagerEviction", "NodeReady",
             "NodeSchedulable", "NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID",
             "KubeletReady", "KubeletHasSufficientMemory", "KubeletHasNoDiskPressure", "KubeletHasSufficientPID",
             "CompletionsReached", "SuccessPolicy"), kind="event")
rule("error", "spec", "container.config_error",
     "A lifecycle hook failed, so the container is killed.",
     "Read the hook's command or HTTP target in the pod spec and the error in the event.",
     reason=("FailedPostStartHook", "FailedPreStopHook"))
rule("warning", "platform", None, "The container runtime did not stop the pod within its grace period.",
     "Read the container runtime log on the node.", reason=("ExceededGracePeriod", "FailedKillPod"))

# --- volumes: pkg/volume/util/operationexecutor/operation_generator.go, pkg/kubelet/kubelet.go,
# pkg/kubelet/volumemanager/volume_manager.go, pkg/controller/volume/attachdetach/reconciler/reconciler.go.
rule("error", "spec", None,
     "A ReadWriteOnce volume is still attached to (or used by a pod on) another node, so it cannot attach here.",
     "Find the other pod or node using the PVC (kubectl get pods -o wide | grep CLAIM); wait for the old node "
     "to detach or delete the stale VolumeAttachment.",
     "kubectl get volumeattachment showing the volume on another node.", message=r"^Multi-Attach error")
rule("error", "platform", None,
     "The volume could not be attached to the node (CSI driver error, IAM permissions, attach limit, zone).",
     "kubectl describe pvc CLAIM and kubectl get volumeattachment; read the CSI controller (ebs-csi-controller) "
     "log.", "The CSI controller's error (UnauthorizedOperation, VolumeInUse, zone mismatch).",
     reason="FailedAttachVolume")
# A write that lost an optimistic-concurrency race (apimachinery pkg/api/errors NewConflict with the registry's
# OptimisticLockErrorMsg): every controller requeues and retries it; routine, never the cause.
rule("normal", "transient", None, "A controller's update raced another writer; it retries with the newer object.",
     "Nothing to do unless the same object conflicts for minutes.", "The same object failing to update for minutes.",
     reason="Conflict", message=r"the object has been modified")
# Every webhook server in the cluster is a Go net/http server (Karpenter's, Kueue's, the GPU Operator's): it logs
# this line for each client that closes the connection during the TLS handshake, load balancer and kubelet
# probes included (golang/go src/net/http/server.go).
rule("normal", "transient", None, "A client closed its connection to the webhook server during the TLS handshake.",
     "Nothing to do unless webhook calls fail (then the API server's 'failed calling webhook' says so).",
     "The API server's 'failed calling webhook' for the same service.", message=r"^http: TLS handshake error from")
# The kubelet's Secret / ConfigMap manager answers "object NS/NAME not registered" until the pod's first sync
# registers its objects (pkg/kubelet/util/manager/watch_based_manager.go GetObject); the projected service
# account volume (kube-root-ca.crt) then mounts on the next try. Seen at every start of a pod on a busy node
# (kubernetes/kubernetes#105204): routine, not a failure.
rule("normal", "transient", None,
     "The kubelet tried to mount the volume before the pod's Secrets and ConfigMaps were registered with it; "
     "the next sync mounts it.", "Nothing to do unless the pod stays in ContainerCreating.",
     "The pod staying in ContainerCreating with the same event repeating.", reason="FailedMount",
     message=r"object %q/%q not registered")
rule("error", "platform", None,
     "A volume of the pod could not be mounted or mapped on the node, so the pod cannot start.",
     "Read the error after the volume name: a missing Secret / ConfigMap is the spec's; a CSI error needs the "
     "node's CSI driver log (ebs-csi-node / efs-csi-node / fsx-csi-node).",
     "The CSI node plugin's log on that node.", reason=("FailedMount", "FailedMapVolume"))
rule("error", "platform", None, "The kubelet could not attach or mount the pod's volumes in time.",
     f"{K}: the FailedMount / FailedAttachVolume events before it name the volume and the error.",
     message=r"^(Unable to attach or mount volumes|unmounted volumes=)")
rule("warning", "platform", None, "A volume's expansion or unmount on the node failed.",
     "Read the CSI node plugin's log on that node.", reason=("VolumeResizeFailed", "FileSystemResizeFailed",
                                                            "FailedUnMount", "FailedDetachVolume", "FailedUnmapDevice"))

# --- PersistentVolume controller: pkg/controller/volume/persistentvolume/pv_controller.go.
rule("error", "platform", "storage.provisioning_failed",
     "The PersistentVolumeClaim cannot be provisioned or bound.",
     "kubectl describe pvc CLAIM -n NS: the StorageClass, the provisioner named in it and its controller log "
     "(UnauthorizedOperation on CreateVolume is the node/controller role).",
     "The CSI controller's log for the claim.", reason=("ProvisioningFailed", "FailedBinding"))
rule("error", "platform", None, "A bound claim lost its PersistentVolume, or two claims share one volume.",
     "kubectl describe pvc CLAIM and kubectl get pv; restore the volume or rebind the claim.",
     reason=("ClaimLost", "ClaimMisbound"))

# --- scheduler: pkg/scheduler/framework/plugins/*, pkg/scheduler/schedule_one.go, framework/types.go.
rule("error", "spec", "scheduling.untolerated_taint",
     "Nodes carry a taint the pod does not tolerate.",
     "Compare the taint in the message with the pod's tolerations; add a toleration (nvidia.com/gpu) or fix "
     "the NodePool's taints.", "A Karpenter 'did not tolerate' line for the same pod.",
     message=r"untolerated taint")
rule("error", "spec", "scheduling.node_selector_mismatch",
     "No node matches the pod's nodeSelector / required node affinity.",
     "Compare the pod's nodeSelector and affinity with node labels and the NodePool's template labels.",
     "Karpenter's 'incompatible requirements' for the same pod.",
     message=r"didn't match (Pod's node affinity/selector|scheduler-enforced node affinity|the requested node name)")
rule("error", "spec", "scheduling.pod_affinity_unsatisfiable",
     "The pod's required pod (anti-)affinity cannot be met on any node.",
     "Read the pod's podAffinity / podAntiAffinity; a rule requiring co-location with pods not yet running "
     "deadlocks.", message=r"(pod affinity rules|pod anti-affinity rules|existing pods anti-affinity rules)")
rule("error", "spec", "scheduling.topology_spread",
     "The pod's topology spread constraints cannot be met.",
     "Read topologySpreadConstraints (maxSkew, whenUnsatisfiable) against the zones / nodes available.",
     message=r"pod topology spread constraints")
rule("error", "platform", "scheduling.volume_zone_conflict",
     "The pod's PersistentVolume is pinned to a zone or node where the pod cannot be placed.",
     "kubectl get pv -o yaml for nodeAffinity; allow that zone in the NodePool or recreate the volume.",
     message=r"(volume node affinity conflict|no available volume zone)")
rule("error", "platform", "storage.provisioning_failed",
     "The pod's PersistentVolumeClaims are unbound or have nowhere to be provisioned.",
     "kubectl describe pvc -n NS for each claim: the StorageClass, its binding mode and the provisioner.",
     message=r"(unbound immediate PersistentVolumeClaims|didn't find available persistent volumes|did not have "
             r"enough free storage|bound to non-existent pv|persistentvolumeclaim %q|running PreBind plugin)")
rule("error", "capacity", None,
     "The nodes lack free capacity for the pod's requests.",
     "Compare the pod's requests with node allocatable (kubectl describe node); a GPU name here is "
     "scheduling.insufficient_gpu when no new node is on its way.",
     "A Karpenter Nominated event (capacity coming) or its absence.", message=r"^(Insufficient %v|Too many pods)")
rule("warning", "transient", "scheduling.node_lifecycle_taint",
     "The only candidate nodes are cordoned or not yet ready.",
     "Wait if a node is joining; kubectl get nodes for cordoned (SchedulingDisabled) nodes otherwise.",
     message=r"(were unschedulable|had unknown conditions)")
rule("error", "spec", None, "The pod asks for host ports already taken on every node.",
     "Drop hostPort from the pod spec or spread the pods.", message=r"free ports for the requested pod ports")
rule("error", "capacity", None, "The nodes reached their limit of attachable volumes.",
     "Use an instance type with more attachments or fewer volumes per node.",
     message=r"(exceed max volume count|no available disk|ReadWriteOncePod access mode)")
rule("warning", "spec", "scheduling.gated", "The pod is held by schedulingGates on purpose.",
     "Read spec.schedulingGates and the controller that should remove them (Kueue).",
     message=r"waiting for scheduling gates")
rule("warning", "spec", "scheduling.gated", "The pod is held by schedulingGates on purpose.",
     "Read spec.schedulingGates and the controller that should remove them (Kueue).", reason="SchedulingGated")
rule("warning", "capacity", None,
     "No node fits the pod; the reasons that follow in the message say why for each group of nodes.",
     "Read each 'N node(s) ...' reason; Karpenter should nominate a new node if one can help.",
     "Karpenter's Nominated event or its own scheduling error for the pod.",
     message=r"^(0/%v nodes are available|preemption: |No preemption victims|Preemption is not helpful)")
rule("warning", "capacity", None, "The scheduler could not place the pod.",
     f"{K}: the FailedScheduling message lists a reason per group of nodes.", reason=("FailedScheduling",
                                                                                      "Unschedulable"))
rule("warning", "platform", None, "The scheduler itself failed for this pod.",
     "Read the kube-scheduler log (CloudWatch control-plane logs on EKS).", reason="SchedulerError")
rule("warning", "capacity", None, "The pod was preempted to make room for a higher-priority pod.",
     "Check the job's priorityClassName; give training pods a priority that other workloads cannot preempt.",
     "The preemptor pod's name and priority.", reason=("Preempted", "PreemptionByScheduler"))

# --- kubelet admission and node pressure: pkg/kubelet/lifecycle/predicate.go, pkg/kubelet/cm/...,
# pkg/kubelet/eviction/helpers.go, pkg/kubelet/nodeshutdown.
rule("error", "hardware", "gpu.unhealthy_device",
     "The device plugin has no healthy device to give the pod: GPUs were marked unhealthy.",
     "kubectl describe node NODE: allocatable vs capacity for nvidia.com/gpu; the device plugin log and dmesg "
     "(Xid) on the node.", "An Xid in dmesg or the device plugin's 'unhealthy' line.",
     message=r"no healthy devices present")
rule("error", "platform", None,
     "The kubelet refused the pod at admission: the device or resource manager could not allocate what it asked.",
     f"{K}: the message names the resource; read the device plugin log on the node.",
     reason=("UnexpectedAdmissionError", "TopologyAffinityError"))
rule("error", "capacity", None,
     "The kubelet refused the pod: the node did not have enough of a resource when it arrived (OutOf<resource>).",
     "kubectl describe node NODE: allocatable; for nvidia.com/gpu, is the device plugin advertising all GPUs?",
     "A device plugin restart or unhealthy GPUs at the same time.",
     message=r"^(Node didn't have enough resource|requested number of devices unavailable)")
rule("error", "capacity", "storage.disk_full",
     "The pod was evicted because the node (or the pod) ran out of ephemeral storage.",
     "Mount a volume for checkpoints and caches, or set an ephemeral-storage request/limit that fits; "
     "grow the node's root volume in the EC2NodeClass.",
     message=r"(ephemeral-storage|ephemeral local storage|local ephemeral storage|EmptyDir volume)")
rule("error", "capacity", None,
     "The kubelet evicted the pod under node pressure (memory, disk or PIDs).",
     "kubectl describe node NODE for the pressure condition; set requests equal to limits for training pods.",
     "The node's condition and the pod's usage named in the message.",
     reason=("Evicted", "TerminationByKubelet", "EvictionThresholdMet"))
rule("warning", "capacity", "training.terminated", "The kernel's OOM killer killed a process on the node.",
     "Find the container the process belonged to (its lastState) and raise its memory limit.", reason="SystemOOM")
rule("error", "transient", "training.terminated",
     "The node is shutting down: the kubelet terminated (or refused) the pod.",
     "Look for the node's interruption or disruption (Karpenter events, spot interruption); the job must "
     "resume from a checkpoint.", reason=("Terminated", "NodeShutdown"))
rule("error", "spec", "scheduling.node_selector_mismatch",
     "The kubelet refused the pod: it does not match this node's labels.",
     "Compare the pod's nodeSelector / nodeName with the node's labels.", reason="NodeAffinity")

# --- node conditions and node events: pkg/kubelet/nodestatus/setters.go,
# pkg/controller/nodelifecycle/node_lifecycle_controller.go.
rule("error", "platform", "node.not_ready",
     "The node is not ready: the kubelet stopped reporting or reports a failing runtime, network or PLEG.",
     "kubectl describe node NODE: the Ready condition's message; read the kubelet and aws-node logs on it.",
     "The Ready condition's message (cni plugin not initialized, PLEG is not healthy).",
     reason=("NodeNotReady", "KubeletNotReady", "NodeStatusUnknown", "NodeStatusNeverUpdated"))
rule("error", "platform", "node.not_ready", "The kubelet reports the node not ready for this reason.",
     "kubectl describe node NODE; read the kubelet, container runtime and aws-node logs on it.",
     message=r"^(container runtime network not ready|PLEG is not healthy|container runtime is down)")
rule("warning", "capacity", None, "The node reports memory, disk or PID pressure; pods may be evicted.",
     "kubectl describe node NODE: which pods use the most; lower their use or give the node more.",
     reason=("NodeHasInsufficientMemory", "NodeHasDiskPressure", "NodeHasInsufficientPID",
             "KubeletHasInsufficientMemory", "KubeletHasDiskPressure", "KubeletHasInsufficientPID"))
rule("warning", "platform", None, "The node was cordoned.", "kubectl get node NODE: who cordoned it (Karpenter "
     "disruption, a drain).", reason="NodeNotSchedulable")
rule("warning", "hardware", None, "The node rebooted.", "Read the node's events and the instance's console "
     "log; pods on it restart.", reason="Rebooted")
# The image GC manager records InvalidDiskCapacity when its first stats read finds the image filesystem's
# capacity still 0 (pkg/kubelet/images/image_gc_manager.go), which happens at every kubelet start before
# cAdvisor has measured the disk: the one-off start-up warning docs/findings.md calls benign.
rule("normal", "transient", None, "The kubelet's first look at the image filesystem came before cAdvisor had "
     "measured it; a one-off start-up warning.", "Nothing to do unless it repeats after start-up (then read "
     "the kubelet log on the node).", "The event repeating long after the node became Ready.",
     reason="InvalidDiskCapacity")
rule("warning", "platform", None, "The kubelet failed a routine node task (garbage collection, set-up).",
     "Read the kubelet log on the node.", reason=("ContainerGCFailed", "ImageGCFailed",
                                                 "KubeletSetupFailed", "FailedNodeAllocatableEnforcement",
                                                 "FailedSync", "FailedValidation"))
rule("warning", "capacity", "storage.disk_full",
     "The kubelet could not free enough image space on the node's disk.",
     "Grow the node's root volume (EC2NodeClass blockDeviceMappings) or use smaller images.",
     reason="FreeDiskSpaceFailed")
rule("warning", "transient", None, "The pod is being evicted from a node with a NoExecute taint.",
     "Read the node's taints (node.kubernetes.io/not-ready, unreachable, Karpenter's disrupted).",
     "The node's taint and Karpenter's disruption events.", reason="DeletionByTaintManager")
rule("warning", "transient", None, "The pod was evicted through the Eviction API (a drain, Karpenter).",
     "Look for who drained the node: Karpenter disruption or interruption events, kubectl drain.",
     reason="EvictionByEvictionAPI")
rule("warning", "platform", None, "The pod was deleted by the pod garbage collector: its node is gone.",
     "Look for the node's removal (Karpenter, interruption).", reason="DeletionByPodGC")
rule("warning", "spec", None, "The eviction was refused: it would break a PodDisruptionBudget.",
     "kubectl get pdb -n NS: a budget allowing 0 disruptions blocks drains and Karpenter's disruption.",
     message=r"disruption budget")

# --- workload controllers: pkg/controller/controller_utils.go, pkg/controller/job/job_controller.go,
# pkg/controller/statefulset/stateful_pod_control.go, pkg/controller/daemon/daemon_controller.go,
# pkg/controller/deployment/util/deployment_util.go.
rule("error", "spec", None,
     "The controller could not create its pods: the API server refused them (admission, quota, invalid spec).",
     "Read the error after 'Error creating:' / 'failed error:'; a quota or webhook refusal has its own entry.",
     "The refusal text in the message.", reason="FailedCreate")
rule("error", "spec", "training.failed",
     "The Job stopped: it reached its backoffLimit of failed pods.",
     "kubectl logs on the last failed pod (--previous) for why each attempt failed.",
     "The failed pods' exit codes and last lines.", reason="BackoffLimitExceeded")
rule("error", "spec", "training.failed",
     "The Job stopped: it ran longer than activeDeadlineSeconds.",
     "Raise spec.activeDeadlineSeconds or find why the job ran long (stuck rank, slow data).",
     reason="DeadlineExceeded")
rule("error", "spec", "training.failed",
     "The Job stopped: a pod failure matched a FailJob rule of its podFailurePolicy.",
     "Read the rule index and exit code in the message against spec.podFailurePolicy.",
     reason="PodFailurePolicy")
rule("error", "spec", "training.failed",
     "The indexed Job stopped: too many indexes failed (maxFailedIndexes), or some failed.",
     "kubectl get pods -l job-name=JOB for the failed indexes and their logs.",
     reason=("MaxFailedIndexesExceeded", "FailedIndexes"))
rule("warning", "platform", None, "The Job controller found more pods than it expected.",
     "Usually transient; check for another controller creating pods with the same labels.",
     reason=("TooManyActivePods", "TooManySucceededPods"))
rule("warning", "spec", None, "A StatefulSet is recreating a failed pod.", "Read the failed pod's last state.",
     reason=("RecreatingFailedPod", "RecreatingTerminatedPod"))
rule("error", "spec", None, "A DaemonSet pod cannot be placed on a node.",
     "Read the reason in the message (taints, resources) for the node it names.", reason="FailedPlacement")
rule("warning", "platform", None, "A DaemonSet pod failed on a node and will be replaced.",
     "kubectl logs on the failed daemon pod.", reason="FailedDaemonPod")
rule("error", "spec", None, "The controller's selector selects every pod.", "Set a non-empty selector.",
     reason="SelectingAll")
rule("warning", "spec", None, "The controller could not delete a pod.", "Read the error in the message.",
     reason="FailedDelete")
rule("error", "spec", None, "The Deployment did not progress within progressDeadlineSeconds.",
     "kubectl describe deployment and its newest ReplicaSet for the pods' failure.",
     reason=("ProgressDeadlineExceeded", "ReplicaSetCreateError"))

# --- admission: plugin/pkg/admission/*, staging apiserver and pod-security-admission.
rule("error", "spec", None,
     "The pod violates the namespace's Pod Security level and was refused.",
     "Read the listed violations (privileged, hostPath, runAsNonRoot ...) and fix the pod spec, or label the "
     "namespace with a level that allows it.", message=r"^violates PodSecurity")
rule("warning", "spec", None,
     "The pod would violate the namespace's warn / audit Pod Security level (admitted).",
     "Fix the listed fields before the level is enforced.", message=r"^would violate PodSecurity")
rule("error", "capacity", None,
     "The namespace's ResourceQuota refused the object: the request would exceed it.",
     "kubectl describe resourcequota -n NS: raise the quota or lower the requests.",
     message=r"(exceeded quota|insufficient quota|failed quota|status unknown for quota)")
rule("error", "spec", None, "The namespace's LimitRange refused the pod's requests or limits.",
     "kubectl describe limitrange -n NS and fit the container's requests / limits into it.",
     message=r"usage per %s is %s|limit to request ratio")
rule("error", "platform", None,
     "An admission webhook refused the request, or could not be called (down, timing out, TLS).",
     "Read the webhook's name in the message: kubectl get validatingwebhookconfigurations,"
     "mutatingwebhookconfigurations and the log of the service it calls.",
     "The webhook service's pods and log.", message=r"admission webhook|failed calling webhook")
rule("error", "platform", None, "A ValidatingAdmissionPolicy refused the request.",
     "kubectl get validatingadmissionpolicy NAME -o yaml: read the validation the message quotes.",
     message=r"^ValidatingAdmissionPolicy")
rule("error", "spec", None, "The object was refused because its namespace is being deleted.",
     "Use another namespace or wait for the deletion (kubectl get ns NS -o yaml: finalizers).",
     message=r"being terminated")
rule("error", "spec", None, "An admission plugin refused the pod for a field of its spec.",
     "Read the message: the PriorityClass, RuntimeClass, ServiceAccount, node selector or toleration it names "
     "must exist or be allowed in the namespace.", kind="admission")

# Defaults by event type, then by kind.
DEFAULTS = {
    "Warning": ("warning", "platform", None, "The component reported a warning for this object.",
                "kubectl describe the object and read the component's log around the event.", ""),
    "Normal": ("normal", "benign", None, "A routine event.", "Nothing to do.", ""),
}
KIND_DEFAULTS = {
    "condition": ("warning", "platform", None, "A condition reason set on the object.",
                  "kubectl describe the object and read the condition's message.", ""),
    "error": ("warning", "platform", None, "An error the component reports.", "Read the component's log.", ""),
    "container_reason": ("warning", "platform", None, "A container state reason.", "kubectl describe pod.", ""),
}
# Reasons whose own component is not the reader's guess: the API types name them, these write them.
WRITERS = {
    "Unschedulable": "kube-scheduler", "SchedulingGated": "kube-scheduler", "SchedulerError": "kube-scheduler",
    "PreemptionByScheduler": "kube-scheduler", "TerminationByKubelet": "kubelet", "Deferred": "kubelet",
    "Infeasible": "kubelet", "Error": "kubelet",
}


def class_of(item: dict) -> tuple[str, str, str | None, str, str, str]:
    for match, klass in RULES:
        if match["kind"] and match["kind"] != item["kind"]:
            continue
        if match["component"] and match["component"] != item["component"]:
            continue
        if match["reasons"] != ("",) and item["reason"] not in match["reasons"]:
            continue
        if match["message"] is not None and not match["message"].search(item["message"]):
            continue
        return klass
    if item["kind"] == "condition" and item["reason"] in ("Deferred", "Infeasible", "Error"):
        return ("warning", "capacity" if item["reason"] == "Infeasible" else "platform", None,
                "An in-place resize of the pod's resources was deferred, is infeasible on this node, or failed.",
                "kubectl describe pod: the PodResizePending / PodResizeInProgress condition's message.", "")
    if item["kind"] == "condition" and item["reason"] in ("SuccessPolicy", "CompletionsReached"):
        return ("normal", "benign", None, "The Job succeeded.", "Nothing to do.", "")
    return DEFAULTS.get(item.get("type", ""), KIND_DEFAULTS.get(item["kind"], DEFAULTS["Warning"]))


def classify(snapshot: dict) -> list[dict]:
    rows = []
    for item in snapshot["items"]:
        level, owner, code, meaning, next_step, upgrade = class_of(item)
        component = item["component"]
        if component == "pod":
            component = WRITERS.get(item["reason"], "kube-apiserver")
        rows.append(row(component=component, kind=item["kind"], reason=item["reason"], level=level,
                        message=item["message"], owner=owner, meaning=meaning, next_step=next_step,
                        upgrade=upgrade, code=code, where=item["where"]))
    return rows
