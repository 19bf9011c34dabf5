"""``nvidia-smi -q`` read as a whole: a value means something only under its section.

``Pending : Yes`` is a row remapping waiting for a GPU reset under ``Remapped Rows`` and nothing under
``MIG Mode``, so the reader follows the indentation (4 spaces a level) and the ``GPU <bus id>`` headings.
Layouts: driver 535/550/560 (H100: ``ECC Errors > Volatile > DRAM Uncorrectable``, ``SRAM Uncorrectable
Parity``/``SEC-DED``, ``Remapped Rows``, ``GPU Reset Status``, ``Fabric``) and older ones (``Double Bit >
Total``, ``Retired Pages > Pending Page Blacklist``); healthy examples in leptonai/gpud
``pkg/nvidia-query/testdata/nvidia-smi-query.535.161.08.out.0.valid`` (8x H100). What counts as unhealthy
follows NVIDIA's GPU memory error management guide (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt):
a pending remap or page retirement needs a GPU reset, a remapping failure or SRAM threshold is an RMA.
Uncorrectable counts under ``Remapped Rows`` alone are history the GPU already repaired: quiet.
"""
from __future__ import annotations

from dataclasses import dataclass

from playbooks import linear
from playbooks.signatures.catalogue import iter_lines
from playbooks.signatures.model import Signal, trim

MARKERS = ("NVSMI LOG",)
_GPU = linear.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_ENTRY = linear.compile(r"^(?P<indent> *)(?P<key>[^:]+?)\s*(?::\s*(?P<value>.*?))?\s*$")


@dataclass(frozen=True)
class _Check:
    section: tuple[str, ...]  # the trailing section names the key must sit under
    key: str  # the key, or a prefix of it when it ends with "*"
    code: str
    severity: str
    confidence: str
    title: str

    def applies(self, path: tuple[str, ...], key: str) -> bool:
        if path[-len(self.section):] != self.section:
            return False
        return key.startswith(self.key[:-1]) if self.key.endswith("*") else key == self.key


_YES = (
    _Check(("Remapped Rows",), "Remapping Failure Occurred", "gpu.unhealthy_device", "critical", "high",
           "GPU {bus}: row remapping failed, its memory can no longer be repaired: replace the node"),
    _Check(("Remapped Rows",), "Pending", "gpu.unhealthy_device", "warning", "high",
           "GPU {bus} has a row remapping pending: drain the node and reset the GPU (or reboot) to apply it"),
    _Check(("Retired Pages",), "Pending Page Blacklist", "gpu.unhealthy_device", "warning", "high",
           "GPU {bus} has a page retirement pending: drain the node and reset the GPU (or reboot) to apply it"),
    _Check(("Retired Pages",), "Pending Page Retirement", "gpu.unhealthy_device", "warning", "high",
           "GPU {bus} has a page retirement pending: drain the node and reset the GPU (or reboot) to apply it"),
    _Check(("Aggregate",), "SRAM Threshold Exceeded", "gpu.unhealthy_device", "error", "high",
           "GPU {bus} exceeded NVIDIA's SRAM uncorrectable error threshold: replace the node"),
    _Check(("GPU Reset Status",), "Reset Required", "gpu.unhealthy_device", "error", "high",
           "GPU {bus} needs a reset before it can be used again: drain the node and reset or replace it"),
    _Check(("GPU Reset Status",), "Drain and Reset Recommended", "gpu.unhealthy_device", "error", "high",
           "NVIDIA recommends draining and resetting GPU {bus}"),
)
_COUNTS = (
    _Check(("ECC Errors", "Volatile"), "SRAM Uncorrectable*", "gpu.unhealthy_device", "error", "high",
           "GPU {bus}: {value} uncorrectable SRAM ECC error(s) since the driver loaded ({key})"),
    _Check(("ECC Errors", "Volatile"), "DRAM Uncorrectable", "gpu.unhealthy_device", "error", "medium",
           "GPU {bus}: {value} uncorrectable DRAM ECC error(s) since the driver loaded (check Remapped Rows)"),
    _Check(("ECC Errors", "Volatile", "Double Bit"), "Total", "gpu.unhealthy_device", "error", "medium",
           "GPU {bus}: {value} double-bit ECC error(s) since the driver loaded"),
)


def _finding(check: _Check, *, bus: str, key: str, value: str, lineno: int, line: str, source: str) -> Signal:
    fields = {"bus": bus, "key": key, "value": value}
    return Signal(code=check.code, severity=check.severity, confidence=check.confidence, title=check.title.format(**fields),
                  line=trim(line), source=source, lineno=lineno, fields=fields)


def _judge(path: tuple[str, ...], key: str, value: str) -> _Check | None:
    if value == "Yes":
        return next((c for c in _YES if c.applies(path, key)), None)
    if value.isdigit() and int(value) > 0:
        return next((c for c in _COUNTS if c.applies(path, key)), None)
    return None


def read(text: str, source: str) -> list[Signal]:
    found: list[Signal] = []
    bus, stack = "?", []  # stack: (indent, section name)
    for lineno, raw in enumerate(iter_lines(text), start=1):
        line = raw.rstrip()
        heading = _GPU.match(line)
        if heading is not None:
            bus, stack = heading.group("bus"), []
            continue
        entry = _ENTRY.match(line)
        if entry is None or not line.strip() or bus == "?":
            continue
        indent, key, value = len(entry.group("indent")), entry.group("key").strip(), entry.group("value")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if value is None or value == "":
            stack.append((indent, key))
            continue
        check = _judge(tuple(name for _, name in stack), key, value)
        if check is not None:
            found.append(_finding(check, bus=bus, key=key, value=value, lineno=lineno, line=line, source=source))
    return found
