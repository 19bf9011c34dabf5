"""nvidia-smi output: only what says a GPU is unwell. A healthy table (zeros, "Off", "N/A", "No running
processes found") matches nothing.

Rules:
- ``nvidia_smi.device_handle``: "Unable to determine the device handle for GPU<bus>: <error>" (a GPU the
  driver enumerated but cannot talk to; "GPU is lost" after Xid 79). Seen on hosts and, with
  "Unknown Error", only inside a container (NVIDIA/nvidia-container-toolkit#69), so that one is medium.
- ``nvidia_smi.no_driver``: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver".
- ``nvidia_smi.no_devices``: "No devices were found" (the driver is loaded, no GPU initialised; the GPU
  Operator's startup probe says it too, NVIDIA/gpu-operator#649).
- ``nvidia_smi.err_row``: "ERR!" in a GPU row of the table. The GPU's name as ERR! (NVIDIA/gpu-operator#559)
  means the driver lost the GPU; a lone ERR! reading of power or fan is often a transient sensor read
  (Azure/azhpc-diagnostics#77), so that is low confidence.
- ``nvidia_smi.volatile_ecc``: a nonzero "Volatile Uncorr. ECC" count in a GPU row (the table layout of
  drivers 410 to 570: ``|   0  NVIDIA H100 80GB HBM3  On  |   00000000:19:00.0 Off |   0 |``).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

_BUS = r"(?P<pci>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])"
# First line of a GPU's block: index, name, persistence mode | bus id, display | volatile uncorrected ECC.
_GPU_ROW = linear.compile(r"(?:^|[\s\]:])\|\s*(?P<index>\d+)\s+(?P<name>.+?)\s+(?:On|Off)\s*\|\s*" + _BUS + r"\s+\S+\s*\|\s*(?P<ecc>\d+|ERR!|N/A|Off)\s*\|")
_ERR = "ERR!"


def _device_handle(fields: dict[str, str], text: str) -> Verdict:
    error = fields.get("error", "")
    if "GPU is lost" in error or "Reboot" in error:
        return Verdict(confidence="high", title="nvidia-smi: GPU {pci} is lost (fallen off the bus): replace the node")
    return Verdict()


def _err_row(fields: dict[str, str], text: str) -> Verdict:
    count = text.count(_ERR)
    row = _GPU_ROW.search(text)
    if row is not None and row.group("name") == _ERR:
        return Verdict(fields={"index": row.group("index"), "pci": row.group("pci")})
    if count >= 3:
        return Verdict(confidence="medium", title="nvidia-smi cannot read most of a GPU's sensors (ERR!): the GPU is failing")
    return Verdict(severity="warning", confidence="low",
                   title="nvidia-smi could not read one GPU value (ERR!): often a transient sensor read; check again and look for Xid errors")


def _volatile_ecc(fields: dict[str, str], text: str) -> Verdict | None:
    ecc = fields.get("ecc", "")
    if not ecc.isdigit() or int(ecc) == 0:
        return None
    return Verdict()


RULES: tuple[Rule, ...] = (
    Rule(
        name="nvidia_smi.device_handle",
        code="gpu.unhealthy_device",
        severity="error",
        confidence="medium",
        title="nvidia-smi cannot reach GPU {pci} ({error}): the GPU dropped off or its container lost access",
        keywords=("Unable to determine the device handle for GPU",),
        pattern=linear.compile(r"Unable to determine the device handle for GPU\s?" + _BUS + r":\s*(?P<error>[^\n]{1,120})"),
        refine=_device_handle,
        fields_doc="pci, error",
        example="Unable to determine the device handle for GPU0000:65:00.0: Unknown Error",
    ),
    Rule(
        name="nvidia_smi.no_driver",
        code="gpu.device_plugin_missing",
        severity="error",
        confidence="medium",
        title="nvidia-smi cannot talk to the NVIDIA driver: no driver loaded here (or a container without the NVIDIA runtime), so no GPU is advertised",
        keywords=("couldn't communicate with the NVIDIA driver",),
        fields_doc="(none)",
        example="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
    ),
    Rule(
        name="nvidia_smi.no_devices",
        code="gpu.unhealthy_device",
        severity="warning",
        confidence="low",
        title="nvidia-smi found no GPUs: the driver is loaded but no GPU initialised (check dmesg for Xid 79), or this container was given none",
        keywords=("No devices were found",),
        fields_doc="(none)",
        example="Warning  Unhealthy  2m6s (x41235 over 5d15h)  kubelet  Startup probe failed: No devices were found",
    ),
    Rule(
        name="nvidia_smi.err_row",
        code="gpu.unhealthy_device",
        severity="error",
        confidence="high",
        title="nvidia-smi shows GPU[ {index}][ ({pci})] as ERR!: the driver lost the GPU",
        keywords=(_ERR,),
        pattern=linear.compile(r"(?:^|[\s\]:])\|.*ERR!"),
        refine=_err_row,
        fields_doc="index, pci",
        example="|   0  ERR!                On   | 00000000:19:00.0 Off |                 ERR! |",
    ),
    Rule(
        name="nvidia_smi.volatile_ecc",
        code="gpu.unhealthy_device",
        severity="error",
        confidence="medium",
        title="GPU {index} ({pci}) has {ecc} volatile uncorrectable ECC error(s) since the driver loaded",
        keywords=(":00.0 ",),
        pattern=_GPU_ROW,
        refine=_volatile_ecc,
        fields_doc="index, name, pci, ecc",
        example="|   3  NVIDIA H100 80GB HBM3          On  |   00000000:5D:00.0 Off |                    2 |",
    ),
)
