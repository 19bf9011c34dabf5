"""Training processes: CUDA out of memory read with the node's GPU, and pods killed from outside."""
from __future__ import annotations

from playbooks import hardware
from playbooks import linear
from playbooks.analyzers import evidence as ev
from playbooks.analyzers.disruption import disrupted_nodes
from playbooks.analyzers.history import recovered
from playbooks.analyzers.scan import signals
from playbooks.facts import Facts, PodFacts
from playbooks.fixes import render_fix
from playbooks.model import Evidence, Finding

_SIZE = linear.compile(r"(?P<n>[\d.]+)\s*(?P<unit>[KMGT]i?B)")
_UNITS = {"KiB": 1 / 1024 / 1024, "MiB": 1 / 1024, "GiB": 1.0, "TiB": 1024.0, "KB": 1e-6, "MB": 1e-3, "GB": 1.0, "TB": 1e3}


def gib(text: str | None) -> float | None:
    match = _SIZE.search(text or "")
    return float(match.group("n")) * _UNITS[match.group("unit")] if match else None


def analyze_oom(facts: Facts):
    hits = [loc for loc in signals(facts) if loc.signal.code == "training.cuda_oom" and loc.origin == "log"
            and loc.pod is not None]
    hits.sort(key=lambda loc: 0 if facts.is_target_pod(loc.pod) else 1)
    if not hits:
        return
    loc = hits[0]
    pod, fields = loc.pod, loc.signal.fields
    tried, total, free, process = (gib(fields.get(k)) for k in ("tried", "total", "free", "process"))
    labels = ((facts.node_of(pod) or {}).get("metadata") or {}).get("labels") or {}
    # The node says which GPU this is; the message's total only how big it is (never a default size).
    gpu = hardware.gpu_of_node(labels) or (hardware.gpu_from_capacity(total) if total else None)
    advice = hardware.advice(gpu)
    parts = []
    if total is not None:
        parts.append(f"GPU {fields.get('gpu', '0')} ({advice['gpu_label'] or 'GPU'}) has {total:.2f} GiB usable")
    if process is not None and total is not None and free is not None:
        others = max(total - free - process, 0.0)
        parts.append(f"this process holds {process:.2f} GiB, {free * 1024:.0f} MiB is free")
        if others > process:
            parts.append(f"so about {others:.1f} GiB belongs to other processes on the same GPU: check that each rank "
                         f"gets its own GPU (nproc_per_node equal to the GPUs requested, LOCAL_RANK used for the device, "
                         f"no leftover process)")
        else:
            parts.append("so this process itself fills the GPU: the model state does not fit")
    if tried is not None:
        parts.append(f"the failed allocation asked for {tried * 1024:.0f} MiB")
    numbers = "; ".join(parts) or "CUDA ran out of GPU memory"
    precision = ("" if gpu is None or gpu.bf16 is None else " bf16 halves activation memory against fp32 on this GPU;"
                 if gpu.bf16 else f" this {gpu.name or 'GPU'} has no bf16, so use fp16 with loss scaling;")
    fix = render_fix("cuda_oom.json.j2", **advice)
    severity = "error" if facts.is_target_pod(pod) else "warning"
    on = f" on the {advice['gpu_label']}" if gpu else ""
    yield Finding(
        code="training.cuda_oom", severity=severity, confidence="high",
        title=f"{pod.name}: CUDA out of memory{on}",
        detail=(f"{numbers}. Choices, cheapest first:{precision} ZeRO-3 with optimizer and parameter offload to CPU "
                f"memory (cuts the start-up peak when the model is moved to the GPU), a smaller micro-batch with more "
                f"gradient accumulation{_bigger(advice)}."),
        evidence=[Evidence(loc.signal.source, loc.signal.line)] + _node_evidence(pod, facts),
        fix=fix,
    )


def _bigger(advice: dict) -> str:
    if not advice["bigger"]:
        return ("" if not advice["gpu_label"] else
                f"; no AWS GPU has more memory than the {advice['gpu_label']}, so shard the model over more GPUs")
    return (f", or GPUs with more memory each ({' or '.join(advice['bigger'])}) through the NodePool's "
            f"karpenter.k8s.aws/instance-gpu-memory or instance-family requirement")


def _node_evidence(pod: PodFacts, facts: Facts) -> list[Evidence]:
    labels = ((facts.node_of(pod) or {}).get("metadata") or {}).get("labels") or {}
    keep = {k: v for k, v in labels.items() if k.endswith(("instance-type", "instance-gpu-name", "instance-gpu-memory",
                                                           "instance-gpu-count", "gpu.product", "gpu.memory"))}
    return [ev.field(f"node/{pod.node_name}", "metadata.labels", keep)] if keep else []


def analyze_terminated(facts: Facts):
    disrupted = disrupted_nodes(facts)
    for pod in facts.pods:
        term = _killed(pod)
        if not term:
            continue
        code, reason = term.get("exitCode"), term.get("reason", "")
        cause = (f"its node {pod.node_name} was disrupted by Karpenter" if pod.node_name in disrupted
                 else "the kernel OOM killer hit the container memory limit" if reason == "OOMKilled"
                 else "something outside the process stopped it (eviction, node drain or shutdown)")
        yield Finding(
            code="training.terminated", severity="error" if facts.is_target_pod(pod) else "warning", confidence="high",
            title=f"{pod.name} was killed from outside (exit code {code}{', ' + reason if reason else ''})",
            detail=(f"Exit code {code} means the process received SIGTERM/SIGKILL"
                    f"{' (OOMKilled: container memory limit)' if reason == 'OOMKilled' else ''}: {cause}. "
                    f"Every other rank of the job then fails on its next collective."),
            evidence=[ev.field(pod.ref, "status.containerStatuses", term)],
        )


def _killed(pod: PodFacts) -> dict | None:
    for status in pod.container_statuses():
        past = {} if recovered(pod.pod, status.get("name", "")) else status.get("lastState") or {}
        for state in (status.get("state") or {}, past):
            term = state.get("terminated")
            if term and (term.get("exitCode") in (143, 137) or term.get("reason") == "OOMKilled"):
                return {k: term[k] for k in ("exitCode", "reason", "signal", "finishedAt") if k in term}
    return None
