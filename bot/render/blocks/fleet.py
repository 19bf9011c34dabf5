"""GPU nodes and GPU NodePools: totals as fields, then the rows in the report's order (trouble first,
then the fullest) as a fixed-width table, and "and N more" for whatever does not fit, however large
the cluster."""
from __future__ import annotations

from collections import defaultdict

from bot.render.blocks import kit, limits
from bot.render.blocks.finding import MARKERS
from bot.render.blocks.text import clean, escape, fenced_chunks
from playbooks.fleet import GpuNode, GpuNodePool, NodePoolsReport, NodesReport

MAX_NODE_ROWS = 20
MAX_POOL_ROWS = 15
MAX_NODEPOOLS = 12
OK = ":large_green_circle:"
_TABLE_LIMIT = limits.SECTION_TEXT - 100


def nodes_blocks(report: NodesReport) -> list[dict]:
    nodes = report.nodes
    blocks = [kit.header(f"GPU nodes · {report.cluster}")]
    if not nodes:
        return blocks + [kit.section("No GPU nodes (no node has `nvidia.com/gpu` capacity).")]
    unhealthy, not_ready = report.unhealthy, report.not_ready
    listed = f"{len(nodes)}" + (f" (+{report.more} not listed)" if report.more else "")
    blocks.append(kit.fields_section([
        f"*Nodes*\n{listed}",
        f"*GPUs allocatable / capacity*\n{report.allocatable_gpus} / {report.total_gpus}",
        f"*GPUs requested by pods*\n{report.allocated_gpus} of {report.allocatable_gpus} healthy"
        f"{_share(report.allocated_gpus, report.allocatable_gpus)}",
        f"*Unhealthy GPUs*\n{_mark(unhealthy, 'error')} {sum(n.unhealthy_gpus for n in unhealthy)}"
        f" on {len(unhealthy)} node{'' if len(unhealthy) == 1 else 's'}",
        f"*NotReady*\n{_mark(not_ready, 'critical')} {len(not_ready)} node{'' if len(not_ready) == 1 else 's'}",
    ]))
    rows = [_node_row(n) for n in nodes[:MAX_NODE_ROWS]]
    blocks += _table(("NODE", "POOL", "TYPE", "ZONE", "GPU used", "healthy/cap", "STATE"), rows,
                     title="*Trouble first, then the fullest*" if unhealthy or not_ready else "*Fullest first*",
                     more=len(nodes) - len(rows), what="nodes")
    pools = _by_pool(nodes)
    blocks += _table(("NODEPOOL", "NODES", "GPU used", "healthy/cap", "NOT READY"), pools[:MAX_POOL_ROWS],
                     title="*By NodePool*",
                     more=len(pools) - MAX_POOL_ROWS, what="NodePools")
    return blocks


def nodepools_blocks(report: NodePoolsReport) -> list[dict]:
    pools = report.nodepools
    blocks = [kit.header(f"GPU NodePools · {report.cluster}")]
    if not pools:
        return blocks + [kit.section("No GPU NodePools (none limits, taints or selects GPU instances).")]
    at_limit = sum(p.at_limit for p in pools)
    risky = sum(p.do_not_disrupt_risk for p in pools)
    blocks.append(kit.section(f"{len(pools)} GPU NodePool{'' if len(pools) == 1 else 's'}: "
                              f"{at_limit} at the GPU limit, {risky} consolidate underutilized GPU nodes "
                              "(running jobs can be disrupted)."))
    blocks += [_pool_section(p) for p in pools[:MAX_NODEPOOLS]]
    if len(pools) > MAX_NODEPOOLS:
        blocks.append(kit.context(f"and {len(pools) - MAX_NODEPOOLS} more NodePools"))
    return blocks


def _pool_section(pool: GpuNodePool) -> dict:
    marker = MARKERS["critical"] if pool.at_limit else MARKERS["warning"] if pool.do_not_disrupt_risk else OK
    mode = "EKS Auto Mode" if pool.auto_mode else "Karpenter"
    title = f"{marker} *{clean(pool.name, 200)}* · {mode}" + ("" if pool.ready else " · :warning: not Ready")
    if pool.gpu_limit is None:
        usage = f"{pool.gpu_used} / no limit"
    else:
        pct = f" ({100 * pool.gpu_used // pool.gpu_limit}%)" if pool.gpu_limit else ""
        usage = f"{pool.gpu_used} / {pool.gpu_limit}{pct}" + (" :no_entry: at limit" if pool.at_limit else "")
    consolidation = f"{clean(pool.consolidation_policy, 100)} after {clean(pool.consolidate_after, 50)}"
    if pool.do_not_disrupt_risk:
        consolidation += "\n:warning: underutilized GPU nodes are consolidated"
    budgets = "\n".join(clean(b, 300) for b in pool.budgets[:5]) or "none"
    if len(pool.budgets) > 5:
        budgets += f"\nand {len(pool.budgets) - 5} more"
    return kit.fields_section([f"*GPUs used / limit*\n{usage}", f"*Consolidation*\n{consolidation}",
                               f"*Disruption budgets*\n{budgets}"], text=title)


def _mark(nodes: list[GpuNode], severity: str) -> str:
    return MARKERS[severity] if nodes else OK


def _node_row(node: GpuNode) -> tuple[str, ...]:
    state = "Ready" if node.ready else f"NotReady ({node.ready_reason})"
    if node.unhealthy_gpus:
        state += f", {node.unhealthy_gpus} GPU unhealthy"
    return (_short(node.name), node.nodepool or "-", node.instance_type or "-", node.zone or "-",
            str(node.gpu_allocated), f"{node.gpu_allocatable}/{node.gpu_capacity}", state)


def _by_pool(nodes: list[GpuNode]) -> list[tuple[str, ...]]:
    groups: dict[str, list[GpuNode]] = defaultdict(list)
    for node in nodes:
        groups[node.nodepool or "(no NodePool)"].append(node)
    worst = sorted(groups.items(), key=lambda kv: (-sum(not n.ready or n.unhealthy_gpus > 0 for n in kv[1]),
                                                   -len(kv[1]), kv[0]))
    return [(name, str(len(g)), str(sum(n.gpu_allocated for n in g)),
             f"{sum(n.gpu_allocatable for n in g)}/{sum(n.gpu_capacity for n in g)}",
             str(sum(not n.ready for n in g))) for name, g in worst]


def _share(part: int, whole: int) -> str:
    return f" ({100 * part // whole}%)" if whole else ""


def _short(name: str) -> str:
    """EC2 private DNS names without the domain everyone shares: ip-10-0-6-77.<region>.compute.internal."""
    for suffix in (".compute.internal", ".ec2.internal"):
        if name.endswith(suffix):
            return name.split(".", 1)[0]
    return name


def _table(columns: tuple[str, ...], rows: list[tuple[str, ...]], *, title: str, more: int, what: str) -> list[dict]:
    cells = [tuple(c[:60] for c in row) for row in [columns, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    chunks = fenced_chunks("\n".join(lines), limit=_TABLE_LIMIT - len(title) - 1)
    blocks = [kit.section(f"{title}\n{chunks[0]}")]
    hidden = more + sum(chunk.count("\n") - 1 for chunk in chunks[1:])
    if hidden > 0:
        blocks.append(kit.context(f"and {hidden} more {escape(what)}"))
    return blocks
