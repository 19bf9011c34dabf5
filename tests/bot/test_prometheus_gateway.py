"""bot.gateway.prometheus against a real Prometheus (backfilled DCGM exporter series, tests/prometheus.py)
and, for the answers a healthy one never gives (5xx, 4xx, a hang, not its API), a loopback HTTP server."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bot.gateway.prometheus import PrometheusGpuMetrics, usage_query
from playbooks.gpu_series import GpuMetricsUnavailable
from tests.fakes.ports import refused_port
from tests.prometheus import Gpu, prometheus

NS, POD = "llm-zero3", "llama-3-8b-zero3-0"


@pytest.fixture(scope="module")
def prom(tmp_path_factory):
    gpus = [Gpu(NS, POD, i, util=0.0 if i == 3 else 93.0) for i in range(8)]
    gpus += [Gpu("other-team", POD, 0, util=50.0),  # same pod name, another namespace
             Gpu(NS, "relabelled-0", 0, util=40.0, exported=True),
             Gpu(NS, "a.b", 0, util=10.0), Gpu(NS, "axb", 0, util=20.0)]
    with prometheus(tmp_path_factory.mktemp("prometheus"), gpus) as url:
        yield url


def test_a_pods_gpus_come_back_one_series_each_with_the_exporters_labels(prom):
    usage = PrometheusGpuMetrics(prom, timeout=10).usage([(NS, POD)])
    assert [g.gpu for g in usage.gpus] == [str(i) for i in range(8)]
    assert {(g.namespace, g.pod) for g in usage.gpus} == {(NS, POD)}  # not other-team's pod of the same name
    idle = usage.gpus[3]
    assert idle.uuid == f"GPU-{POD}-3" and idle.model == "NVIDIA A100-SXM4-80GB"
    assert idle.node.startswith("ip-10-0-14-201")
    assert {v for _, v in idle.util} == {0.0}
    assert {v for _, v in usage.gpus[0].util} == {93.0}
    assert idle.fb_total == pytest.approx(81_559.0)
    # the backfilled hour is all there, near "now" included, at the 60 s step
    assert len(idle.util) >= 55 and usage.end - idle.util[-1][0] <= 120
    assert usage.end - usage.start == 3600


def test_exported_pod_labels_are_read_as_the_pod(prom):
    usage = PrometheusGpuMetrics(prom, timeout=10).usage([(NS, "relabelled-0")])
    [gpu] = usage.gpus
    assert (gpu.namespace, gpu.pod, {v for _, v in gpu.util}) == (NS, "relabelled-0", {40.0})


def test_a_dot_in_a_pod_name_matches_only_a_dot(prom):
    usage = PrometheusGpuMetrics(prom, timeout=10).usage([(NS, "a.b")])
    assert [(g.pod, g.util[0][1]) for g in usage.gpus] == [("a.b", 10.0)]


def test_a_pod_with_no_series_gives_no_gpus(prom):
    assert PrometheusGpuMetrics(prom, timeout=10).usage([(NS, "never-scraped-0")]).gpus == []


@pytest.mark.parametrize("name", ['x"} or up{', "x|.*", "X-upper", "a..b", "-a", "a" * 254])
def test_a_name_outside_the_kubernetes_grammar_never_reaches_a_query(name):
    with pytest.raises(ValueError):
        usage_query([(NS, name)])
    with refused_port() as port:  # nothing is asked: a query would fail on the refused port
        usage = PrometheusGpuMetrics(f"http://127.0.0.1:{port}", timeout=1).usage([(NS, name)])
    assert usage.gpus == [] and usage.pods == ()


def test_unreachable_prometheus_is_one_line():
    with refused_port() as port:
        with pytest.raises(GpuMetricsUnavailable) as err:
            PrometheusGpuMetrics(f"http://127.0.0.1:{port}", timeout=2).usage([(NS, POD)])
    assert str(err.value) == "Prometheus cannot be reached (connection refused)"


class _Answers(BaseHTTPRequestHandler):
    status, body, delay = 200, b"{}", 0.0
    seen: list[str] = []

    def do_POST(self):
        self.seen.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
        time.sleep(self.delay)
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def answers():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()
    _Answers.status, _Answers.body, _Answers.delay = 200, b"{}", 0.0


@pytest.mark.parametrize("status, body, message", [
    (503, b'{"status":"error","errorType":"unavailable","error":"TSDB not ready\\nretry"}',
     "Prometheus answered HTTP 503: unavailable: TSDB not ready retry"),
    (400, b'{"status":"error","errorType":"bad_data","error":"invalid parameter \\"query\\""}',
     'Prometheus answered HTTP 400: bad_data: invalid parameter "query"'),
    (502, b"<html>Bad Gateway</html>", "Prometheus answered HTTP 502"),
    (200, b"<html>a login page</html>", "Prometheus answered HTTP 200: not Prometheus's query API JSON"),
    (200, b'{"status":"success","data":{"resultType":"vector","result":[]}}',
     "Prometheus answered without a range of series (resultType is not matrix)"),
])
def test_what_prometheus_refuses_is_one_line(answers, status, body, message):
    _Answers.status, _Answers.body = status, body
    url = f"http://127.0.0.1:{answers.server_address[1]}"
    with pytest.raises(GpuMetricsUnavailable) as err:
        PrometheusGpuMetrics(url, timeout=5).usage([(NS, POD)])
    assert str(err.value) == message


def test_a_hung_prometheus_is_given_up_after_the_timeout(answers):
    _Answers.delay = 3.0
    url = f"http://127.0.0.1:{answers.server_address[1]}"
    started = time.monotonic()
    with pytest.raises(GpuMetricsUnavailable) as err:
        PrometheusGpuMetrics(url, timeout=0.5).usage([(NS, POD)])
    assert time.monotonic() - started < 2.5
    assert str(err.value) == "Prometheus did not answer within 0.5 s"


def test_the_query_asks_for_both_label_spellings_and_a_bounded_range(answers):
    _Answers.body = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}}).encode()
    url = f"http://127.0.0.1:{answers.server_address[1]}/prometheus/"  # a path prefix is kept
    usage = PrometheusGpuMetrics(url, timeout=5, clock=lambda: 1_800_000_000.5).usage([(NS, POD)])
    from urllib.parse import parse_qs

    [form] = [parse_qs(s) for s in _Answers.seen[-1:]]
    assert form["start"] == ["1799996400"] and form["end"] == ["1800000000"] and form["step"] == ["60s"]
    query = form["query"][0]
    assert f'namespace="{NS}",pod=~"{POD}"' in query and f'exported_namespace="{NS}",exported_pod=~"{POD}"' in query
    assert usage.gpus == []
