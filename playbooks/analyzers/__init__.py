"""Built-in analyzers. Order matters only for wording: when two analyzers report the same code, the
first one's title, detail and fix are kept and the later one's evidence is added (engine.merge).
Structural analyzers come first; the catch-all over text signals comes last."""
from __future__ import annotations

from playbooks.registry import Registry


def register_all(registry: Registry) -> None:
    from playbooks.analyzers import (
        affinity, crash_loop, disruption, gpu, interruption, nccl, nodes, pending, signals, topology, training, waiting,
    )
    from playbooks.analyzers import containers, gpu_usage, volumes

    registry.register("waiting", waiting.analyze)
    registry.register("pending", pending.analyze)
    registry.register("containers", containers.analyze)
    registry.register("volumes", volumes.analyze)
    registry.register("topology", topology.analyze)
    registry.register("pod-affinity", affinity.analyze)
    registry.register("interruption", interruption.analyze)
    registry.register("disruption", disruption.analyze)
    registry.register("nccl", nccl.analyze)
    registry.register("gpu-unhealthy", gpu.analyze_unhealthy)
    registry.register("gpu-xid", gpu.analyze_xid)
    registry.register("gpu-plugin-missing", gpu.analyze_plugin_missing)
    registry.register("cuda-oom", training.analyze_oom)
    registry.register("terminated", training.analyze_terminated)
    registry.register("crash-loop", crash_loop.analyze)
    registry.register("node-not-ready", nodes.analyze_not_ready)
    registry.register("nodepool", nodes.analyze_nodepool)
    registry.register("signals", signals.analyze)
    registry.register("gpu-idle", gpu_usage.analyze)
