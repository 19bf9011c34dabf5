"""Charts for where people would rather look than read: GPU use against NodePool limits, each node's
healthy / unhealthy / allocated GPUs, and incidents by code week by week. PNG bytes out.

Inputs are the reports the text renderers use (playbooks.fleet) and plain counts, so the chart and its
text fallback can never disagree. Every chart is deterministic: fixed size and DPI, no timestamp or
software version in the PNG's metadata, so the same data gives the same bytes (an uploaded chart can be
reused by its hash). matplotlib is imported on first use, with the Agg backend through its object API
(``Figure`` + ``FigureCanvasAgg``, no pyplot): the CLI's start-up does not pay for it, and charts drawn
in several threads at once share no global figure state.
"""
from __future__ import annotations

import io
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from playbooks.fleet import NodePoolsReport, NodesReport
    from playbooks.gpu_series import GpuUsage

log = logging.getLogger(__name__)

DPI = 100
WIDTH_IN = 8.0
MAX_BARS = 20  # rows beyond this are summed into "and N more" in the title, as the text table does
MAX_CODES = 8  # codes beyond the most frequent are stacked as "other"
WEEKS = 8
MAX_GPU_LINES = 16  # two 8-GPU nodes; more lines than colours to tell apart say less, not more
# Okabe-Ito colours: told apart by readers with any of the common colour-vision deficiencies.
GREEN, ORANGE, RED, BLUE, GREY = "#009E73", "#E69F00", "#D55E00", "#0072B2", "#BBBBBB"
CODE_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000", GREY)
# PNG tEXt chunks matplotlib writes by default ("Software": its version): dropped for identical bytes.
_NO_METADATA = {"Software": None}


@dataclass(frozen=True)
class WeekCounts:
    """Incidents opened in the week starting ``start`` (a Monday, UTC), by finding code."""
    start: datetime
    counts: dict[str, int]


def nodepools_chart(report: NodePoolsReport) -> bytes:
    """One horizontal bar per NodePool in the report's order (fullest share of its limit first): GPUs used
    against its limit (a marker at the limit, the share as a label); a NodePool without a GPU limit shows
    its use only."""
    pools = report.nodepools[:MAX_BARS]
    fig, ax = _figure(rows=len(pools))
    names = [p.name for p in pools][::-1]
    top = max([1, *(max(p.gpu_used, p.gpu_limit or 0) for p in pools)])
    for y, pool in enumerate(reversed(pools)):
        colour = RED if pool.at_limit else ORANGE if pool.gpu_limit and pool.gpu_used >= 0.9 * pool.gpu_limit \
            else BLUE
        ax.barh(y, pool.gpu_used, color=colour, height=0.6)
        if pool.gpu_limit is not None:
            ax.plot([pool.gpu_limit, pool.gpu_limit], [y - 0.4, y + 0.4], color="black", linewidth=2)
            share = f"{100 * pool.gpu_used // pool.gpu_limit}%" if pool.gpu_limit else "limit 0"
            label = f"{pool.gpu_used} / {pool.gpu_limit} ({share})"
        else:
            label = f"{pool.gpu_used} / no limit"
        ax.text(max(pool.gpu_used, pool.gpu_limit or 0) + top * 0.01, y, label, va="center", fontsize=9)
    ax.set_yticks(range(len(names)), labels=names)
    _margins(fig, labels=names)
    ax.set_xlim(0, top * 1.3)
    ax.set_xlabel("nvidia.com/gpu (black mark: the NodePool's limit)")
    more = len(report.nodepools) - len(pools)
    _title(ax, f"GPU NodePools · {report.cluster}: GPUs used against limits", more, "NodePools")
    return _png(fig)


def nodes_chart(report: NodesReport) -> bytes:
    """One stacked bar per node in the report's order (trouble first, then the fullest): GPUs requested
    by pods, healthy GPUs still free, unhealthy GPUs (capacity the device plugin does not offer), labelled
    used / healthy / capacity. NotReady nodes are named so and their label is red."""
    nodes = report.nodes[:MAX_BARS]
    fig, ax = _figure(rows=len(nodes))
    labels = [_short(n.name) + ("" if n.ready else " (NotReady)") for n in nodes][::-1]
    # A GPU that failed under a running pod is still requested: the bar shows at most what is healthy
    # as used, and the label the true count.
    used = [min(n.gpu_allocated, n.gpu_allocatable) for n in nodes][::-1]
    free = [n.free_gpus for n in nodes][::-1]
    unhealthy = [n.unhealthy_gpus for n in nodes][::-1]
    rows = range(len(nodes))
    ax.barh(rows, used, color=BLUE, height=0.6, label="requested by pods")
    ax.barh(rows, free, left=used, color=GREEN, height=0.6, label="healthy, free")
    if any(unhealthy):  # no legend entry (and no red) for what is not there
        ax.barh(rows, unhealthy, left=[u + f for u, f in zip(used, free)], color=RED, height=0.6, label="unhealthy")
    top = max([1, *(max(n.gpu_capacity, n.gpu_allocated) for n in nodes)])
    for y, node in zip(rows, reversed(nodes)):
        ax.text(max(node.gpu_capacity, node.gpu_allocated) + top * 0.01, y,
                f"{node.gpu_allocated} / {node.gpu_allocatable} / {node.gpu_capacity}", va="center", fontsize=9,
                color="black" if node.ready else RED)
    ax.set_yticks(list(rows), labels=labels)
    _margins(fig, labels=labels, right=0.78)
    ax.set_xlim(0, top * 1.35)
    ax.set_xlabel("GPUs per node (label: requested / healthy / capacity)")
    if nodes:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    _title(ax, f"GPU nodes · {report.cluster}: GPUs in use, free and unhealthy; trouble first, then the fullest",
           len(report.nodes) - len(nodes) + report.more, "nodes")
    return _png(fig)


def incidents_chart(weeks: list[WeekCounts]) -> bytes:
    """Stacked weekly bars of incidents opened, one colour per finding code (the most frequent
    ``MAX_CODES``; the rest as "other")."""
    totals: Counter[str] = Counter()
    for week in weeks:
        totals.update(week.counts)
    ranked = [code for code, _ in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))]
    shown, rest = ranked[:MAX_CODES], set(ranked[MAX_CODES:])
    fig = _new_figure(height=3.6)
    ax = fig.add_subplot()
    x = range(len(weeks))
    bottom = [0] * len(weeks)
    series = [(code, [w.counts.get(code, 0) for w in weeks]) for code in shown]
    if rest:
        series.append(("other", [sum(n for c, n in w.counts.items() if c in rest) for w in weeks]))
    for i, (code, values) in enumerate(series):
        colour = GREY if code == "other" else CODE_COLOURS[i % len(CODE_COLOURS)]
        ax.bar(x, values, bottom=bottom, color=colour, width=0.7, label=code)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(list(x), labels=[w.start.strftime("%d %b") for w in weeks], fontsize=8)
    ax.set_ylim(0, max([1, *bottom]) * 1.15)
    ax.set_ylabel("incidents opened")
    ax.yaxis.get_major_locator().set_params(integer=True)
    if series:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    else:
        ax.text(0.5, 0.5, "No incidents", transform=ax.transAxes, ha="center", va="center", color=GREY)
    ax.set_title("Incidents by finding code, week by week (weeks from Monday, UTC)", fontsize=10, loc="left")
    ax.spines[["top", "right"]].set_visible(False)
    fig.subplots_adjust(left=0.08, right=0.68, top=0.9, bottom=0.1)
    return _png(fig)


def incidents_by_week(opened: Iterable[tuple[datetime, str]], *, now: datetime, weeks: int = WEEKS) -> list[WeekCounts]:
    """(opened at, code) pairs counted into the last ``weeks`` weeks (Monday to Sunday, UTC), oldest
    first, the current week last; older ones are left out."""
    now = _utc(now)
    this_monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    starts = [this_monday - timedelta(weeks=weeks - 1 - i) for i in range(weeks)]
    buckets: list[Counter[str]] = [Counter() for _ in starts]
    for at, code in opened:
        at = _utc(at)
        index = (at - starts[0]) // timedelta(weeks=1)
        if 0 <= index < weeks and at <= now:
            buckets[int(index)][code] += 1
    return [WeekCounts(start=s, counts=dict(b)) for s, b in zip(starts, buckets)]


def warm_up() -> float | None:
    """Draw one tiny chart so that the first one somebody asks for does not pay for matplotlib's import and
    font loading: seconds on a fresh font cache, written under MPLCONFIGDIR for the processes after this
    one. The seconds it took, or None when it failed (logged: a chart asked for later fails the same way
    and its text answer stands alone)."""
    from playbooks.fleet import GpuNode, NodesReport

    # One small chart through the same code as the real ones: every font size, a legend, red text, so
    # the glyphs and text layouts they need are cached too, not only the import.
    node = GpuNode(name="warm-up", nodepool=None, instance_type=None, zone=None, gpu_capacity=8,
                   gpu_allocatable=7, ready=False, gpu_allocated=4)
    started = time.perf_counter()
    try:
        nodes_chart(NodesReport(cluster="warm-up", nodes=[node], more=1))
    except Exception:  # noqa: BLE001 - an extra at start-up; the reason goes to the log with its traceback
        log.exception("charts: warm-up failed; charts will fail the same way, text answers are unaffected "
                      "(check that MPLCONFIGDIR names a writable directory)")
        return None
    took = time.perf_counter() - started
    log.info("charts: matplotlib ready in %.1f s", took)
    return took


def warm_up_in_background() -> threading.Thread:
    """``warm_up`` in a daemon thread: start-up never waits for it, and shutdown never waits either."""
    thread = threading.Thread(target=warm_up, name="charts-warm-up", daemon=True)
    thread.start()
    return thread


def gpu_usage_chart(usage: GpuUsage) -> bytes:
    """Two panels over the diagnosis' window, one line per GPU (the first ``MAX_GPU_LINES``):
    utilisation in percent above, framebuffer memory used in GiB below; minutes before the reading on
    the x axis, so the picture needs no clock to read."""
    gpus = usage.gpus[:MAX_GPU_LINES]
    fig = _new_figure(height=4.6)
    util, memory = fig.subplots(2, 1, sharex=True)
    for i, gpu in enumerate(gpus):
        colour = CODE_COLOURS[i % len(CODE_COLOURS)]
        util.plot([(t - usage.end) / 60 for t, _ in gpu.util], [v for _, v in gpu.util], color=colour,
                  linewidth=1.2, label=gpu.label)
        memory.plot([(t - usage.end) / 60 for t, _ in gpu.fb_used], [v / 1024 for _, v in gpu.fb_used], color=colour,
                    linewidth=1.2)
    util.set_ylim(0, 105)
    util.set_ylabel("GPU busy (%)")
    memory.set_ylabel("memory used (GiB)")
    memory.set_ylim(bottom=0)
    memory.set_xlim((usage.start - usage.end) / 60, 0)
    memory.set_xlabel("minutes before the diagnosis")
    for ax in (util, memory):
        ax.spines[["top", "right"]].set_visible(False)
    if gpus:
        util.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    more = len(usage.gpus) - len(gpus)
    _title(util, "GPU utilisation and memory over the last hour (DCGM exporter)", more, "GPUs")
    fig.subplots_adjust(left=0.09, right=0.72, top=0.92, bottom=0.1, hspace=0.15)
    return _png(fig)


# -- shared ------------------------------------------------------------------------------------

def _new_figure(*, height: float) -> Figure:
    import matplotlib
    from matplotlib.figure import Figure

    # Names on a chart come from outside (kubeconfig contexts, NodePools, nodes): text between two `$`
    # would otherwise be parsed as TeX math, and one unbalanced `$` would fail the whole chart.
    matplotlib.rcParams["text.parse_math"] = False
    return Figure(figsize=(WIDTH_IN, height), dpi=DPI)


def _figure(*, rows: int) -> tuple[Figure, Axes]:
    # Height grows with the rows so bars and labels stay readable, between 2 and 9.5 inches.
    fig = _new_figure(height=min(9.5, max(2.0, 0.9 + 0.38 * max(rows, 1))))
    ax = fig.add_subplot()
    ax.spines[["top", "right"]].set_visible(False)
    if rows == 0:
        ax.text(0.5, 0.5, "Nothing to show", transform=ax.transAxes, ha="center", va="center", color=GREY)
        ax.set_yticks([])
    return fig, ax


def _title(ax: Axes, text: str, more: int, what: str) -> None:
    # At the figure's left edge, not the axes': long row labels would push a long title off the right.
    fig = ax.get_figure()
    fig.text(0.01, 1 - 0.12 / fig.get_figheight(), text + (f" (and {more} more {what})" if more > 0 else ""),
             fontsize=10, ha="left", va="top")


def _margins(fig: Figure, *, labels: list[str], right: float = 0.97) -> None:
    """Room for the row labels, worked out from their length rather than measured (tight_layout draws
    the figure once more to measure: a third of the render time)."""
    longest = max((len(label) for label in labels), default=4)
    height = fig.get_figheight()
    fig.subplots_adjust(left=min(0.45, (0.25 + 0.075 * longest) / WIDTH_IN), right=right,
                        top=1 - 0.4 / height, bottom=0.6 / height)


def _png(fig: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI, metadata=_NO_METADATA)
    return out.getvalue()


def _short(name: str) -> str:
    for suffix in (".compute.internal", ".ec2.internal"):
        if name.endswith(suffix):
            return name.split(".", 1)[0]
    return name


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at.astimezone(timezone.utc)
