"""Containers that cannot be created or started from their spec: missing Secrets, ConfigMaps and keys, a
command the image does not have, a mount the runtime cannot make.

=========================  ======================  ===============================================================
rule                       code                    fields
=========================  ======================  ===============================================================
container.waiting_reason   container.config_error  reason, container
container.missing_ref      container.config_error  secret or configmap, key, namespace, volume, container, problem
container.start_failed     container.config_error  problem, path, probe, container
=========================  ======================  ===============================================================

``problem``: ``missing key`` / ``missing secret`` / ``missing configmap`` (missing_ref); ``executable not
found``, ``no such file``, ``permission denied``, ``wrong architecture``, ``mount failed`` (start_failed).
A missing command or mount is read at high confidence when the runtime (``OCI runtime``, ``runc``,
``StartError``, a kubelet ``Error:`` event) says it; a bare Go ``exec: "x": executable file not found``
line from some other program is a warning at medium confidence. A failing hook of the NVIDIA container
toolkit (``nvidia-container-cli``) is the node's GPU driver, not the spec: those lines are left to the GPU
rules.

Sources:
- kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go: ``ErrCreateContainerConfig``
  (``CreateContainerConfigError``), ``ErrCreateContainer`` (``CreateContainerError``), the ``Error: %v``
  events of ``startContainer``; pkg/kubelet/container/sync_result.go ``ErrRunContainer``
  (``RunContainerError``); containerd internal/cri/server/container_start.go: terminated reason ``StartError``.
- pkg/kubelet/kubelet_pods.go ``makeEnvironmentVariables``: ``couldn't find key %v in Secret %v/%v``,
  ``couldn't find key %v in ConfigMap %v/%v``; pkg/kubelet/util/manager (the kubelet's Secret / ConfigMap
  cache) returns the API's NotFound for the singular resource: ``secret %q not found``, ``configmap %q
  not found`` (also in ``MountVolume.SetUp failed for volume %q : ...``); pkg/volume/hostpath/host_path.go
  ``hostPath type check failed: %s is not a directory``.
- opencontainers/runc libcontainer/standard_init_linux.go and Go os/exec ``ErrNotFound``: ``exec: %q:
  executable file not found in $PATH``, ``exec: %q: stat %s: no such file or directory`` (runc 1.1),
  ``exec %s: no such file or directory`` (runc 1.2), ``permission denied``, ``exec format error``;
  libcontainer/rootfs_linux.go ``error mounting %q to rootfs at %q``; containerd wraps them in ``OCI
  runtime create failed`` / ``OCI runtime start failed`` / ``OCI runtime exec failed`` (exec probes).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

_NAME = r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?"
_KEY = r"[-._a-zA-Z0-9]{1,253}"  # a Secret / ConfigMap data key (IsConfigMapKey)
_CONTAINER = linear.compile(r"\bcontainerName=\\?\"(?P<container>[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)\\?\"")
# Said by the runtime or the kubelet about starting a container, rather than by a program inside it.
_RUNTIME_CONTEXT = ("OCI runtime", "runc", "StartError", "RunContainerError", "CreateContainerError",
                    "failed to create containerd task", "failed to create shim task", "Error: ", "probe")
_NODE_GPU_HOOK = ("nvidia-container-cli", "nvidia-container-runtime-hook", "error running hook")


def _missing_ref(fields: dict[str, str], text: str) -> Verdict | None:
    kind = "secret" if "secret" in fields else "configmap" if "configmap" in fields else None
    if kind is None:
        return None
    what = {"secret": "Secret", "configmap": "ConfigMap"}[kind]
    if "key" in fields:
        return Verdict(title=f"{what} {{{kind}}} has no key {{key}}: the container cannot be created",
                       fields={"problem": "missing key"})
    return Verdict(title=f"{what} {{{kind}}} not found[ (volume {{volume}})]: the container cannot be created",
                   fields={"problem": f"missing {kind}"})


_START_PROBLEMS = (
    ("executable file not found", "executable not found"),
    ("exec format error", "wrong architecture"),
    ("error mounting", "mount failed"),
    ("hostPath type check failed", "mount failed"),
    ("permission denied", "permission denied"),
    ("no such file or directory", "no such file"),
)
_START_TITLES = {
    "executable not found": "Command[ {path}] is not in the image (executable file not found in $PATH)",
    "no such file": "Command[ {path}] does not exist in the image (no such file or directory)",
    "permission denied": "Command[ {path}] is not executable in the image (permission denied)",
    "wrong architecture": "Image binary[ {path}] is built for another CPU architecture (exec format error)",
    "mount failed": "Volume mount[ at {path}] cannot be made: the container cannot start",
}


def _start_failed(fields: dict[str, str], text: str) -> Verdict | None:
    if any(marker in text for marker in _NODE_GPU_HOOK):
        return None  # the node's NVIDIA container toolkit failed, not the pod spec
    problem = next((name for marker, name in _START_PROBLEMS if marker in text), None)
    if problem is None:
        return None
    extra = {"problem": problem}
    for probe in ("Liveness", "Readiness", "Startup"):
        if f"{probe} probe" in text:
            extra["probe"] = probe.lower()
    title = _START_TITLES[problem]
    if "probe" in extra and problem != "mount failed":
        title = "The {probe} probe's command[ {path}] cannot run in the container (" + problem + ")"
    if any(marker in text for marker in _RUNTIME_CONTEXT):
        return Verdict(title=title, fields=extra)
    return Verdict(severity="warning", confidence="medium", title=title, fields=extra)


RULES: tuple[Rule, ...] = (
    Rule(
        name="container.waiting_reason",
        code="container.config_error",
        severity="error",
        confidence="medium",
        title="Container[ {container}] cannot start: {reason}",
        keywords=("CreateContainerConfigError", "CreateContainerError", "RunContainerError", "StartError"),
        pattern=linear.compile(r"\b(?P<reason>CreateContainerConfigError|CreateContainerError|RunContainerError|StartError)\b"),
        extract=(_CONTAINER,),
        fields_doc="reason (CreateContainerConfigError, CreateContainerError, RunContainerError, StartError), container",
        example="      Reason:       CreateContainerConfigError",
    ),
    Rule(
        name="container.missing_ref",
        code="container.config_error",
        severity="error",
        confidence="high",
        title="A Secret or ConfigMap the container needs is missing",
        keywords=("couldn't find key", "Couldn't find key", 'secret "', 'configmap "', 'secret \\"', 'configmap \\"'),
        extract=(
            linear.compile(rf"[Cc]ouldn't find key (?P<key>{_KEY}) in Secret (?P<namespace>[a-z0-9-]{{1,63}})/(?P<secret>{_NAME})"),
            linear.compile(rf"[Cc]ouldn't find key (?P<key>{_KEY}) in ConfigMap (?P<namespace>[a-z0-9-]{{1,63}})/(?P<configmap>{_NAME})"),
            linear.compile(rf"\bsecret \\?\"(?P<secret>{_NAME})\\?\" not found"),
            linear.compile(rf"\bconfigmap \\?\"(?P<configmap>{_NAME})\\?\" not found"),
            linear.compile(rf"MountVolume\.SetUp failed for volume \\?\"(?P<volume>{_NAME})\\?\""),
            _CONTAINER,
        ),
        refine=_missing_ref,
        fields_doc="secret or configmap, key, namespace, volume, container, problem (missing key, missing secret, missing configmap)",
        example="Warning  Failed  8s (x3 over 30s)  kubelet  Error: couldn't find key HF_TOKEN in Secret ml/hf-credentials",
    ),
    Rule(
        name="container.start_failed",
        code="container.config_error",
        severity="error",
        confidence="high",
        title="Container cannot start from its spec",
        keywords=("executable file not found", "OCI runtime create failed", "OCI runtime start failed",
                  "OCI runtime exec failed", "exec format error", "error mounting", "hostPath type check failed"),
        extract=(
            linear.compile(r"exec:? \\?\"?(?P<path>[^\s\"\\:]{1,400})\\?\"?: (?:executable file not found|stat |no such file|permission denied|exec format error)"),
            linear.compile(r"to rootfs at \\?\"(?P<path>[^\"\\]{1,400})\\?\""),
            linear.compile(r"hostPath type check failed: (?P<path>/\S{0,400}) is not"),
            _CONTAINER,
        ),
        refine=_start_failed,
        fields_doc="problem (executable not found, no such file, permission denied, wrong architecture, mount failed), "
                   "path (the command or the mount target), probe, container",
        example='Warning  Failed  4s  kubelet  Error: failed to create containerd task: failed to create shim task: OCI '
                'runtime create failed: runc create failed: unable to start container process: exec: "torchrun": '
                'executable file not found in $PATH: unknown',
    ),
)
