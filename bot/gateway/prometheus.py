"""The one place gpubot talks to Prometheus: the DCGM exporter's GPU series for a diagnosis' pods.

One ``POST /api/v1/query_range`` per diagnosis (Prometheus's HTTP API, "Range queries":
https://prometheus.io/docs/prometheus/latest/querying/api/), bounded by a timeout, never retried: the
metrics are an extra, and a diagnosis never waits on them longer than that. Whatever goes wrong
(unreachable, 4xx/5xx, a reply that is not the API's JSON) becomes one line in a
:class:`GpuMetricsUnavailable`, which the diagnosis shows as a note.

Series are matched by pod and namespace. NVIDIA/dcgm-exporter labels each GPU's series with ``gpu``,
``UUID``, ``device``, ``modelName`` and ``Hostname``, and, with its Kubernetes mapping on, the pod
holding it as ``pod``, ``namespace`` and ``container`` (internal/pkg/transformation/const.go). A
Prometheus that scrapes the exporter through a Service without ``honor_labels`` keeps its own target
labels under those names and renames the exporter's to ``exported_pod`` / ``exported_namespace``:
both spellings are asked for.

Pod and namespace names come from the cluster, which tenants write to: each is checked against the
Kubernetes name grammar before it goes into the query, so no text of theirs can change the query.
"""
from __future__ import annotations

import json
import logging
import re
import time
from typing import Callable, Sequence
from urllib.parse import urlencode

import urllib3

from playbooks.gpu_series import FB_FREE, FB_USED, METRICS, UTIL, GpuMetricsUnavailable, GpuSeries, GpuUsage

log = logging.getLogger(__name__)

WINDOW_S = 3600
STEP_S = 60
# k8s.io/apimachinery pkg/util/validation: a pod's name is a DNS-1123 subdomain (253 characters at
# most), a namespace's a DNS-1123 label (63).
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
LABEL_PAIRS = (("namespace", "pod"), ("exported_namespace", "exported_pod"))
MAX_ERROR = 200


def valid_pod(name: str) -> bool:
    return len(name) <= 253 and bool(_SUBDOMAIN.match(name))


def valid_namespace(name: str) -> bool:
    return len(name) <= 63 and bool(_LABEL.match(name))


def usage_query(pods: Sequence[tuple[str, str]]) -> str:
    """PromQL for the three DCGM series of ``pods`` ((namespace, pod) pairs), under either label spelling.

    A name outside the Kubernetes grammar raises ValueError: it never reaches the query. Valid names
    hold only ``[a-z0-9.-]``, so a dot is the one character the pod regex must escape."""
    by_namespace: dict[str, list[str]] = {}
    for namespace, pod in pods:
        if not valid_namespace(namespace) or not valid_pod(pod):
            raise ValueError(f"not a Kubernetes pod name: {namespace!r}/{pod!r}")
        by_namespace.setdefault(namespace, []).append(pod)
    names = "|".join(METRICS)
    selectors = []
    for namespace, names_here in sorted(by_namespace.items()):
        alternation = "|".join(sorted({p.replace(".", "\\\\.") for p in names_here}))
        for ns_label, pod_label in LABEL_PAIRS:
            selectors.append(f'{{__name__=~"{names}",{ns_label}="{namespace}",{pod_label}=~"{alternation}"}}')
    return " or ".join(selectors)


class PrometheusGpuMetrics:
    """A playbooks.gpu_series.GpuMetrics reading Prometheus at ``url`` (its base, without /api/v1)."""

    def __init__(self, url: str, *, timeout: float, clock: Callable[[], float] = time.time,
                 window_s: int = WINDOW_S, step_s: int = STEP_S) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.clock = clock
        self.window_s, self.step_s = window_s, step_s
        self._http = urllib3.PoolManager(timeout=urllib3.Timeout(total=timeout), retries=False)

    def usage(self, pods: Sequence[tuple[str, str]]) -> GpuUsage:
        asked = tuple((ns, pod) for ns, pod in pods if valid_namespace(ns) and valid_pod(pod))
        end = float(int(self.clock()))
        usage = GpuUsage(start=end - self.window_s, end=end, pods=asked)
        if not asked:
            return usage
        result = self._query_range(usage_query(asked), start=usage.start, end=end)
        usage.gpus = gpu_series(result, asked=set(asked))
        return usage

    def _query_range(self, query: str, *, start: float, end: float) -> list[dict]:
        body = urlencode({"query": query, "start": f"{start:.0f}", "end": f"{end:.0f}", "step": f"{self.step_s}s",
                          "timeout": f"{self.timeout:g}s"})
        try:
            reply = self._http.request("POST", f"{self.url}/api/v1/query_range", body=body,
                                       headers={"Content-Type": "application/x-www-form-urlencoded"})
        except urllib3.exceptions.NewConnectionError as exc:  # a subclass of the timeout error, in urllib3 2
            raise self._failed(f"Prometheus cannot be reached ({_reason(exc)})") from None
        except urllib3.exceptions.TimeoutError:
            raise self._failed(f"Prometheus did not answer within {self.timeout:g} s") from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._failed(f"Prometheus cannot be reached ({_reason(exc)})") from None
        try:
            payload = json.loads(reply.data)
        except ValueError:
            payload = None
        if reply.status != 200 or not isinstance(payload, dict) or payload.get("status") != "success":
            said = ""
            if isinstance(payload, dict) and payload.get("error"):
                said = f": {payload.get('errorType', 'error')}: {_one_line(str(payload['error']))}"
            elif reply.status == 200:
                said = ": not Prometheus's query API JSON"
            raise self._failed(f"Prometheus answered HTTP {reply.status}{said}")
        data = payload.get("data") or {}
        if data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
            raise self._failed("Prometheus answered without a range of series (resultType is not matrix)")
        return data["result"]

    def _failed(self, message: str) -> GpuMetricsUnavailable:
        log.warning("GPU metrics not read from %s: %s; check GPUBOT_PROMETHEUS_URL", self.url, message)
        return GpuMetricsUnavailable(message)

    def close(self) -> None:
        self._http.clear()


def gpu_series(result: list[dict], *, asked: set[tuple[str, str]]) -> list[GpuSeries]:
    """One GpuSeries per GPU of an asked pod, from a query_range matrix (a GPU reported under both
    label spellings counts once)."""
    found: dict[tuple[str, str, str], dict] = {}
    for item in result:
        labels = item.get("metric") or {}
        owner = _owner(labels, asked)
        metric = labels.get("__name__")
        if owner is None or metric not in METRICS:
            continue
        key = (*owner, labels.get("UUID") or labels.get("gpu") or "")
        gpu = found.setdefault(key, {"labels": labels, "owner": owner})
        gpu.setdefault(metric, _samples(item.get("values") or []))
    out = [GpuSeries(namespace=g["owner"][0], pod=g["owner"][1], gpu=str(g["labels"].get("gpu", "?")),
                     uuid=g["labels"].get("UUID", ""), model=g["labels"].get("modelName", ""),
                     node=g["labels"].get("Hostname", ""), util=g.get(UTIL, ()), fb_used=g.get(FB_USED, ()),
                     fb_free=g.get(FB_FREE, ()))
           for g in found.values()]
    return sorted(out, key=lambda g: (g.namespace, g.pod, int(g.gpu) if g.gpu.isdigit() else 1 << 16, g.gpu))


def _owner(labels: dict, asked: set[tuple[str, str]]) -> tuple[str, str] | None:
    for ns_label, pod_label in LABEL_PAIRS:
        owner = (labels.get(ns_label, ""), labels.get(pod_label, ""))
        if owner in asked:
            return owner
    return None


def _samples(values: list) -> tuple[tuple[float, float], ...]:
    out = []
    for pair in values:
        try:
            at, value = float(pair[0]), float(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        if value == value:  # NaN: a gap, not a reading
            out.append((at, value))
    return tuple(out)


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "reason", None) or exc
    if isinstance(exc, urllib3.exceptions.ProtocolError):
        return "the connection was closed without an answer"
    text = str(inner)
    if "Connection refused" in text:
        return "connection refused"
    if "Name or service not known" in text or "nodename nor servname" in text or "Temporary failure in name" in text:
        return "its host name does not resolve"
    return _one_line(type(inner).__name__)


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_ERROR else line[: MAX_ERROR - 1] + "…"
