"""DCGM exporter samples pasted as text (its /metrics page, a Prometheus console row): only a GPU at
rest. Metric and label names are NVIDIA/dcgm-exporter's (etc/default-counters.csv: DCGM_FI_DEV_GPU_UTIL,
"GPU utilization (in %)"; internal/pkg/transformation/const.go: pod, namespace).

Rule:
- ``dcgm.gpu_idle``: ``DCGM_FI_DEV_GPU_UTIL{...} <value>`` under 5. One reading says the GPU rests now,
  not for how long, so it is low confidence; a diagnosis with GPUBOT_PROMETHEUS_URL set reads the hour.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict

IDLE_PERCENT = 5.0


def _idle(fields: dict[str, str], text: str) -> Verdict | None:
    try:
        busy = float(fields.get("util", ""))
    except ValueError:
        return None
    return Verdict() if busy < IDLE_PERCENT else None


RULES: tuple[Rule, ...] = (
    Rule(
        name="dcgm.gpu_idle",
        code="gpu.idle",
        severity="info",
        confidence="low",
        title="dcgm-exporter reads GPU {gpu} at {util}% busy: idle at that moment",
        keywords=("DCGM_FI_DEV_GPU_UTIL{",),
        pattern=linear.compile(r"DCGM_FI_DEV_GPU_UTIL\{[^}]{0,1000}\}\s+(?P<util>\d{1,3}(?:\.\d{1,6})?)(?:\s|$)"),
        extract=(linear.compile(r'[{,]gpu="(?P<gpu>\d{1,3})"'),
                 linear.compile(r'[{,](?:exported_)?pod="(?P<pod>[a-z0-9][-a-z0-9.]{0,252})"'),
                 linear.compile(r'[{,](?:exported_)?namespace="(?P<namespace>[a-z0-9][-a-z0-9]{0,62})"')),
        refine=_idle,
        fields_doc="util, gpu, pod, namespace",
        example='DCGM_FI_DEV_GPU_UTIL{gpu="3",UUID="GPU-5d3c",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",Hostname="ip-10-0-14-201",container="pytorch",namespace="llm-zero3",pod="llama-3-8b-zero3-0"} 0',
    ),
)
