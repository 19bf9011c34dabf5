"""Full filesystems: ENOSPC / EDQUOT from any process, the kubelet's ephemeral-storage evictions, a
checkpoint that could not be written.

==============================  =================  ==========================================================
rule                            code               fields
==============================  =================  ==========================================================
os.no_space                     storage.disk_full  problem (no space, quota exceeded, node disk), path; under
                                                   /dev/shm: training.shm_exhausted
kubelet.ephemeral_limit         storage.disk_full  resource, reason, scope (container, pod, emptyDir),
                                                   container, volume, limit
kubelet.image_gc_failed         storage.disk_full  resource, problem (node disk)
torch.save_write_failed         storage.disk_full  problem (write failed), record
kubelet.eviction (training.py)  storage.disk_full  resource (ephemeral-storage, inodes), reason, container,
                                                   usage, request, threshold, available
==============================  =================  ==========================================================

Where the write went decides the fix: a path under /dev/shm is shared memory (training.shm_exhausted: the
NCCL and DataLoader segments live there; NCCL's ``posix_fallocate`` only ever extends a /dev/shm segment);
containerd's own paths (/var/lib/containerd, image layers) are the node's root volume; anything else is
the container's writable layer, an emptyDir or a mounted volume. Errno 28 also comes from inotify (``inotify
watch limit reached``, Node.js ``System limit for number of file watchers reached``): those are not disks.

Sources:
- Linux errno ENOSPC (28) / EDQUOT (122) and their glibc strerror texts ``No space left on device`` / ``Disk
  quota exceeded``; Python's OSError ``[Errno 28] No space left on device: 'path'``; Go's syscall.Errno
  texts (lower case) inside ``write PATH: no space left on device``.
- kubernetes/kubernetes pkg/kubelet/eviction/helpers.go: ``The node was low on resource: %v. ``,
  ``Container %s exceeded its local ephemeral storage limit %q. ``, ``Pod ephemeral local storage usage
  exceeds the total limit of containers %s. ``, ``Usage of EmptyDir volume %q exceeds the limit %q. ``,
  ``Container %s was using %s, which exceeds its request of %s. ``; eviction_manager.go
  (localStorageEviction, the Evicted reason).
- pkg/kubelet/images/image_gc_manager.go: ``Failed to garbage collect required amount of images. Attempted
  to free %d bytes, but only found %d bytes eligible to free.`` (events FreeDiskSpaceFailed / ImageGCFailed).
- pytorch/pytorch caffe2/serialize/inline_container.cc ``PyTorchStreamWriter::valid``: ``PytorchStreamWriter
  failed writing file %s: file write failed`` (miniz MZ_ZIP_FILE_WRITE_FAILED) and ``ostream_write_func``
  ``unexpected pos %d vs %d``: torch.save whose writes stopped, most often on a full disk.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

_NOT_A_DISK = ("file watchers", "inotify", "watch limit")
_NODE_DISK = ("/var/lib/containerd", "/var/lib/kubelet", "/var/lib/docker", "failed to extract layer",
              "failed to pull and unpack image")
_QUANTITY = r"[0-9]{1,15}(?:\.[0-9]{1,6})?[A-Za-z]{0,3}"
_USAGE = linear.compile(rf"Container (?P<container>[a-z0-9](?:[-a-z0-9]{{0,61}}[a-z0-9])?) was using "
                        rf"(?P<usage>{_QUANTITY}), which exceeds its request of (?P<request>{_QUANTITY})")
_THRESHOLD = linear.compile(rf"Threshold quantity: (?P<threshold>{_QUANTITY}), available: (?P<available>{_QUANTITY})")


def _no_space(fields: dict[str, str], text: str) -> Verdict | None:
    if any(marker in text for marker in _NOT_A_DISK):
        return None
    path = fields.get("path", "")
    if path.startswith("/dev/shm") or "posix_fallocate" in text:
        return Verdict(code="training.shm_exhausted", title="/dev/shm is full[ (writing {path})]: shared memory, not disk",
                       fields={"problem": "No space left on device"})
    quota = "quota" in text or "Errno 122" in text or "EDQUOT" in text
    if quota:
        return Verdict(title="Disk quota exceeded[ writing {path}]", fields={"problem": "quota exceeded"})
    if path.startswith(("/var/lib/containerd", "/var/lib/docker")) or any(m in text for m in _NODE_DISK):
        return Verdict(title="The node's disk is full[ (writing {path})]: image layers and containers cannot be stored",
                       fields={"problem": "node disk"})
    return Verdict(fields={"problem": "no space"})


def eviction(fields: dict[str, str], text: str) -> Verdict:
    """kubelet.eviction (training.py): a node short of ephemeral-storage or inodes evicted the pod because
    its disk is full; memory and PID evictions stay training.terminated."""
    resource = fields.get("resource", "")
    if resource not in ("ephemeral-storage", "inodes", "nodefs", "imagefs"):
        return Verdict(fields={"reason": "Evicted"})
    extra = {"reason": "Evicted"}
    for pattern in (_USAGE, _THRESHOLD):
        found = pattern.search(text)
        if found is not None:
            extra.update({k: v for k, v in found.groupdict().items() if v})
    title = ("kubelet evicted the pod: the node's disk is low on {resource}[ (container {container} used {usage}, "
             "request {request})]")
    return Verdict(code="storage.disk_full", title=title, fields=extra)


def _ephemeral_limit(fields: dict[str, str], text: str) -> Verdict:
    scope = "emptyDir" if "volume" in fields else "container" if "container" in fields else "pod"
    titles = {
        "container": "Container {container} exceeded its ephemeral-storage limit {limit}: kubelet evicted the pod",
        "pod": "Pod exceeded the sum of its containers' ephemeral-storage limits[ ({limit})]: kubelet evicted it",
        "emptyDir": "emptyDir volume {volume} exceeded its sizeLimit {limit}: kubelet evicted the pod",
    }
    return Verdict(title=titles[scope], fields={"resource": "ephemeral-storage", "reason": "Evicted", "scope": scope})


RULES: tuple[Rule, ...] = (
    Rule(
        name="os.no_space",
        code="storage.disk_full",
        severity="error",
        confidence="high",
        title="No space left on device[ writing {path}]",
        keywords=("No space left on device", "no space left on device", "[Errno 28]", "ENOSPC",
                  "Disk quota exceeded", "disk quota exceeded", "[Errno 122]", "EDQUOT"),
        # Owned by shm.py (torch_ shared-memory files, NCCL's /dev/shm segments): same meaning, named there.
        unless=("</torch_", "Error while creating shared memory segment"),
        extract=(
            linear.compile(r"\[Errno (?:28|122)\] [A-Za-z ]{1,40}: '(?P<path>/[^']{0,400})'"),
            linear.compile(r"(?:write|open|mkdir|create|rename|copy|sync) (?P<path>/[^\s:\"\\]{0,400}): (?:no space left on device|disk quota exceeded)"),
            linear.compile(r"(?:error writing|cannot create|failed to write|Cannot write:?) '?(?P<path>/[^\s':]{0,400})'?:? ?(?:No space left|Disk quota)"),
        ),
        refine=_no_space,
        fields_doc="problem (no space, quota exceeded, node disk), path",
        example="OSError: [Errno 28] No space left on device: '/checkpoints/llama-8b/step_12000/model-00003-of-00004.safetensors'",
    ),
    Rule(
        name="kubelet.ephemeral_limit",
        code="storage.disk_full",
        severity="error",
        confidence="high",
        title="Ephemeral storage limit exceeded: kubelet evicted the pod",
        keywords=("exceeded its local ephemeral storage limit", "Pod ephemeral local storage usage exceeds",
                  "Usage of EmptyDir volume"),
        extract=(
            linear.compile(r"Container (?P<container>[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?) exceeded its local ephemeral "
                           rf"storage limit \\?\"(?P<limit>{_QUANTITY})\\?\""),
            linear.compile(rf"exceeds the total limit of containers (?P<limit>{_QUANTITY})"),
            linear.compile(r"Usage of EmptyDir volume \\?\"(?P<volume>[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)\\?\" exceeds "
                           rf"the limit \\?\"(?P<limit>{_QUANTITY})\\?\""),
        ),
        refine=_ephemeral_limit,
        fields_doc="resource (ephemeral-storage), reason (Evicted), scope (container, pod, emptyDir), container, volume, limit",
        example='Warning  Evicted  1m  kubelet  Container pytorch exceeded its local ephemeral storage limit "50Gi". ',
    ),
    Rule(
        name="kubelet.image_gc_failed",
        code="storage.disk_full",
        severity="warning",
        confidence="medium",
        title="The node's disk is full: kubelet cannot free enough space by removing unused images",
        keywords=("garbage collect required amount of images",),
        refine=lambda f, t: Verdict(fields={"resource": "ephemeral-storage", "problem": "node disk"}),
        fields_doc="resource (ephemeral-storage), problem (node disk)",
        example="Warning  FreeDiskSpaceFailed  2m  kubelet  Failed to garbage collect required amount of images. "
                "Attempted to free 42949672960 bytes, but only found 0 bytes eligible to free.",
    ),
    Rule(
        name="torch.save_write_failed",
        code="storage.disk_full",
        severity="error",
        confidence="medium",
        title="torch.save could not write the checkpoint[ (record {record})]: most often a full disk or quota",
        keywords=("PytorchStreamWriter failed writing", "unexpected pos "),
        pattern=linear.compile(r"PytorchStreamWriter failed writing|unexpected pos \d{1,20} vs \d{1,20}"),
        extract=(linear.compile(r"PytorchStreamWriter failed writing file (?P<record>[\w./-]{1,200})"),),
        refine=lambda f, t: Verdict(fields={"problem": "write failed"}),
        fields_doc="problem (write failed), record (the archive entry)",
        example="RuntimeError: [enforce fail at inline_container.cc:595] . PytorchStreamWriter failed writing file "
                "data/5769: file write failed",
    ),
)
