"""``/dev/shm`` too small: DataLoader workers and NCCL's shared-memory transport (a container gets 64 MiB
unless an emptyDir with ``medium: Memory`` is mounted at /dev/shm).

Sources:
- pytorch/pytorch torch/csrc/DataLoader.cpp: ``SIGNAL_HANDLER(SIGBUS, ..., "ERROR: Unexpected bus error
  encountered in worker. This might be caused by insufficient shared memory (shm).")`` and
  ``_error_if_any_worker_fails``: ``DataLoader worker (pid <n>) is killed by signal: Bus error.``
  (torch/utils/data/_utils/signal_handling.py installs the handlers in each worker).
- pytorch/pytorch aten/src/ATen/MapAllocator.cpp: ``unable to write to file <</torch_...>>: No space left
  on device (28)``, ``unable to allocate shared memory(shm) for file <...>``, ``unable to open shared memory
  object <...>`` (the file-descriptor / file-system sharing strategies put DataLoader batches there).
- NVIDIA/nccl src/misc/shmutils.cc ``ncclShmOpen``: ``Error: failed to extend %s to %ld bytes`` and
  ``Error while creating shared memory segment %s (size %ld)`` (2.19+ appends ``, error: %s (%d)``); the
  caller then fails with ``ncclSystemError`` / ``unhandled system error``.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict


def _size(fields: dict[str, str]) -> Verdict:
    size = fields.pop("size2", None)
    return Verdict(fields={"size": size}) if size and "size" not in fields else Verdict()


RULES: tuple[Rule, ...] = (
    Rule(
        name="dataloader.shm_bus_error",
        code="training.shm_exhausted",
        severity="error",
        confidence="high",
        title="DataLoader worker hit a bus error: /dev/shm is too small for its batches",
        keywords=("insufficient shared memory (shm)", "is killed by signal: Bus error"),
        extract=(linear.compile(r"DataLoader worker \(pid (?P<pid>\d{1,10})\)"),),
        fields_doc="pid (DataLoader worker)",
        example="ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    ),
    Rule(
        name="torch.shm_file",
        code="training.shm_exhausted",
        severity="error",
        confidence="high",
        title="PyTorch cannot place a tensor in shared memory[ ({problem})]: /dev/shm is full",
        keywords=("unable to write to file </torch_", "unable to allocate shared memory(shm)", "unable to open shared memory object </torch_"),
        extract=(
            linear.compile(r"<(?P<segment>/torch_[\w-]{1,80})>"),
            linear.compile(r"(?P<problem>No space left on device|Cannot allocate memory)"),
        ),
        fields_doc="segment (/torch_...), problem",
        example="RuntimeError: unable to write to file </torch_394_2375628163_0>: No space left on device (28)",
    ),
    Rule(
        name="nccl.shm_segment",
        code="training.shm_exhausted",
        severity="error",
        confidence="high",
        title="NCCL cannot create its shared-memory segment[ {segment}][ ({size} bytes)]: /dev/shm is too small",
        keywords=("Error while creating shared memory segment /dev/shm", "failed to extend /dev/shm"),
        extract=(
            linear.compile(r"(?P<segment>/dev/shm/nccl-[\w-]{1,40})"),
            linear.compile(r"\(size (?P<size>\d{1,15})\)|to (?P<size2>\d{1,15}) bytes"),
        ),
        refine=lambda f, t: _size(f),
        fields_doc="segment (/dev/shm/nccl-...), size (bytes)",
        example="ip-10-1-2-3:168:168 [0] misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-UbzKZ9 (size 9637888)",
    ),
)

