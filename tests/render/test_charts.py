"""Charts: PNG bytes from the same reports the text renderers use, identical for identical data, and
showing what the data says (red where GPUs are unhealthy or a NodePool is at its limit)."""
from __future__ import annotations

import io
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import numpy as np
from matplotlib import image

from bot.render import charts
from playbooks.fleet import GpuNode, GpuNodePool, NodePoolsReport, NodesReport

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _pool(name: str, used: int, limit: int | None) -> GpuNodePool:
    return GpuNodePool(name=name, auto_mode=False, gpu_limit=limit, gpu_used=used, consolidation_policy="WhenEmpty",
                       consolidate_after="1h", budgets=(), ready=True, do_not_disrupt_risk=False)


def _node(name: str, *, capacity: int = 8, allocatable: int = 8, ready: bool = True, allocated: int = 0) -> GpuNode:
    return GpuNode(name=f"{name}.us-west-2.compute.internal", nodepool="gpu", instance_type="p5.48xlarge",
                   zone="us-west-2a", gpu_capacity=capacity, gpu_allocatable=allocatable, ready=ready,
                   gpu_allocated=allocated)


def _pixels(png: bytes) -> np.ndarray:
    return (image.imread(io.BytesIO(png), format="png")[..., :3] * 255).round().astype(int)


def _has_colour(png: bytes, hex_colour: str) -> bool:
    """At least a bar's worth of pixels in that colour (anti-aliased text edges pass through many greys)."""
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(_pixels(png) - rgb).sum(axis=-1) <= 6).sum()) >= 200


def test_nodepools_chart_is_a_deterministic_png_without_metadata():
    report = NodePoolsReport(cluster="prod", nodepools=[_pool("gpu-training-32", 32, 32), _pool("gpu-dev", 3, None)])
    first, second = charts.nodepools_chart(report), charts.nodepools_chart(report)
    assert first.startswith(PNG_MAGIC) and first == second
    assert b"tEXt" not in first and b"tIME" not in first  # no software version, no timestamp
    assert _pixels(first).shape[1] == int(charts.WIDTH_IN * charts.DPI)


def test_a_nodepool_at_its_limit_is_red_and_one_below_is_not():
    at_limit = charts.nodepools_chart(NodePoolsReport(cluster="c", nodepools=[_pool("full", 32, 32)]))
    roomy = charts.nodepools_chart(NodePoolsReport(cluster="c", nodepools=[_pool("roomy", 4, 32)]))
    assert _has_colour(at_limit, charts.RED) and not _has_colour(roomy, charts.RED)
    assert _has_colour(roomy, charts.BLUE)


def test_unhealthy_gpus_show_in_red_and_healthy_in_green():
    sick = charts.nodes_chart(NodesReport(cluster="c", nodes=[_node("ip-10-0-1-1", allocatable=6)]))
    well = charts.nodes_chart(NodesReport(cluster="c", nodes=[_node("ip-10-0-1-2")]))
    assert _has_colour(sick, charts.RED) and _has_colour(sick, charts.GREEN)
    assert _has_colour(well, charts.GREEN) and not _has_colour(well, charts.RED)


def test_gpus_requested_by_pods_show_in_blue_apart_from_free_ones():
    busy = charts.nodes_chart(NodesReport(cluster="c", nodes=[_node("ip-10-0-1-3", allocated=8)]))
    idle = charts.nodes_chart(NodesReport(cluster="c", nodes=[_node("ip-10-0-1-4")]))
    assert _has_colour(busy, charts.BLUE) and not _has_colour(busy, charts.GREEN)
    assert _has_colour(idle, charts.GREEN) and not _has_colour(idle, charts.BLUE)
    # a GPU that failed under a running pod: the bar stays within the node, red for the failed GPU
    failed_under_pod = charts.nodes_chart(NodesReport(cluster="c", nodes=[_node("ip-10-0-1-5", allocatable=7,
                                                                                    allocated=8)]))
    assert _has_colour(failed_under_pod, charts.BLUE) and _has_colour(failed_under_pod, charts.RED)


def test_warm_up_draws_a_chart_and_says_how_long_it_took():
    took = charts.warm_up()
    assert took is not None and took >= 0


def test_more_rows_than_fit_are_counted_not_drawn():
    nodes = [_node(f"ip-10-0-0-{i}") for i in range(charts.MAX_BARS + 5)]
    png = charts.nodes_chart(NodesReport(cluster="c", nodes=nodes, more=3))
    tall = _pixels(png).shape[0]
    assert tall <= 9.5 * charts.DPI  # bounded however large the cluster


def test_empty_reports_still_draw():
    assert charts.nodes_chart(NodesReport(cluster="c")).startswith(PNG_MAGIC)
    assert charts.nodepools_chart(NodePoolsReport(cluster="c")).startswith(PNG_MAGIC)
    assert charts.incidents_chart(charts.incidents_by_week([], now=datetime(2026, 11, 26, tzinfo=timezone.utc)))


def test_incidents_are_counted_into_weeks_from_monday():
    now = datetime(2026, 11, 26, 3, 0, tzinfo=timezone.utc)  # a Thursday
    opened = [(datetime(2026, 11, 23, 0, 0, tzinfo=timezone.utc), "gpu.xid_error"),       # this Monday
              (datetime(2026, 11, 22, 23, 59, tzinfo=timezone.utc), "gpu.xid_error"),     # last Sunday
              (datetime(2026, 11, 22, 12, 0), "karpenter.nodepool_limit_reached"),         # naive = UTC
              (now - timedelta(weeks=9), "gpu.xid_error"),                                 # too old
              (now + timedelta(days=1), "gpu.xid_error")]                                  # not yet
    weeks = charts.incidents_by_week(opened, now=now, weeks=3)
    assert [w.start.date().isoformat() for w in weeks] == ["2026-11-09", "2026-11-16", "2026-11-23"]
    assert [w.counts for w in weeks] == [{}, {"gpu.xid_error": 1, "karpenter.nodepool_limit_reached": 1},
                                         {"gpu.xid_error": 1}]


def test_codes_past_the_most_frequent_are_stacked_as_other():
    now = datetime(2026, 11, 26, tzinfo=timezone.utc)
    many = [(now - timedelta(hours=i), f"code.{i % (charts.MAX_CODES + 3)}") for i in range(60)]
    weeks = charts.incidents_by_week(many, now=now)
    png = charts.incidents_chart(weeks)
    assert _has_colour(png, charts.GREY)  # "other"
    few = charts.incidents_chart(charts.incidents_by_week(many[:3], now=now))
    assert not _has_colour(few, charts.GREY)


def test_importing_the_renderers_does_not_import_matplotlib():
    code = "import bot.render.charts, bot.render.blocks, bot.cli, sys; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_names_with_dollar_signs_are_drawn_as_text_not_parsed_as_math():
    # A kubeconfig context is free text: an unbalanced `$` would make matplotlib's math parser fail.
    png = charts.nodepools_chart(NodePoolsReport(cluster="prod$eu_$x^{2", nodepools=[_pool("gpu", 3, 8)]))
    assert png.startswith(b"\x89PNG")
