"""GPU nodes and GPU NodePools as terminal tables."""
from __future__ import annotations

from playbooks.fleet import NodePoolsReport, NodesReport


def render_nodes(report: NodesReport) -> str:
    lines = [f"GPU nodes in {report.cluster}: {len(report.nodes) + report.more} nodes, "
             f"{report.allocatable_gpus}/{report.total_gpus} GPUs allocatable, {report.allocated_gpus} requested by pods, "
             f"{len(report.unhealthy)} with unhealthy GPUs, {len(report.not_ready)} NotReady", ""]
    if not report.nodes:
        return lines[0] + "\n"
    width = max(len(n.name) for n in report.nodes)
    lines.append(f"{'NODE':<{width}}  {'NODEPOOL':<20} {'TYPE':<15} {'ZONE':<16} {'GPU used':>8} {'GPU alloc/cap':>13}  STATUS")
    for n in report.nodes:
        status = "Ready" if n.ready else f"NotReady ({n.ready_reason})"
        if n.unhealthy_gpus:
            status += f", {n.unhealthy_gpus} GPU unhealthy"
        lines.append(f"{n.name:<{width}}  {n.nodepool or '-':<20} {n.instance_type or '-':<15} {n.zone or '-':<16} "
                     f"{n.gpu_allocated:>8} {f'{n.gpu_allocatable}/{n.gpu_capacity}':>13}  {status}")
    if report.more:
        lines.append(f"... and {report.more} more GPU nodes")
    return "\n".join(lines) + "\n"


def render_nodepools(report: NodePoolsReport) -> str:
    lines = [f"GPU NodePools in {report.cluster}: {len(report.nodepools)}", ""]
    if not report.nodepools:
        return lines[0] + "\n"
    width = max(len(p.name) for p in report.nodepools)
    lines.append(f"{'NODEPOOL':<{width}}  {'GPUs used/limit':>15}  {'CONSOLIDATION':<34} BUDGETS")
    for p in report.nodepools:
        limit = "none" if p.gpu_limit is None else str(p.gpu_limit)
        flags = (" AT LIMIT" if p.at_limit else "") + (" (Auto Mode)" if p.auto_mode else "")
        lines.append(f"{p.name:<{width}}  {f'{p.gpu_used}/{limit}':>15}  "
                     f"{p.consolidation_policy + ' after ' + p.consolidate_after:<34} {'; '.join(p.budgets)}{flags}")
    risky = [p.name for p in report.nodepools if p.do_not_disrupt_risk]
    if risky:
        lines += ["", f"Consolidating underutilized GPU nodes (may disrupt training): {', '.join(risky)}"]
    return "\n".join(lines) + "\n"
