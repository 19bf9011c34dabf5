"""gpubot's Prometheus metrics, all in one registry of their own, served on the probe port at /metrics.

Every label value comes from a set known here (a command's action, a finding's code, a Slack method, a
proposal's state): a name a person typed never becomes a label, so no request can grow the series.

Diagnoses run in worker processes (bot.workers), and they post their answers to Slack themselves, so
what they count happens outside the serving process. The workers therefore use prometheus_client's
multiprocess mode (https://prometheus.github.io/client_python/multiprocess/): each writes its samples
to files in a directory under /tmp that the serving process makes for them; /metrics adds those files to
the serving process's own (in-memory) samples. Gauges read from the serving process (queue depth,
leader, readiness) are callbacks evaluated at scrape time; every gauge sums over processes ("livesum"),
so the workers' zeros add nothing to them.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from typing import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client import multiprocess
from prometheus_client.core import Metric

from bot.delivery.limits import METHOD_LIMITS
from playbooks.codes import CODE_SET

# The _created series double every counter's series for a value nobody graphs; multiprocess mode has none.
disable_created_metrics()

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
OTHER = "other"

SLACK_METHODS = frozenset(METHOD_LIMITS) | {
    "auth.test", "chat.postMessage", "chat.getPermalink", "conversations.history", "conversations.replies",
    "conversations.members", "files.uploadV2", "files.getUploadURLExternal", "files.completeUploadExternal",
    "reactions.add", "users.lookupByEmail", "apps.connections.open", "team.info", "bots.info",
}
# A diagnosis takes from well under a second (a pod) to minutes (a 5,000-node cluster's NodePools).
DIAGNOSIS_BUCKETS = (0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)
SWEEP_BUCKETS = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600)

COMMANDS = Counter("gpubot_commands", "Slash commands and mentions handled, by /gpu action and outcome",
                   ["kind", "outcome"], registry=REGISTRY)
CLICKS = Counter("gpubot_clicks", "Buttons and form submissions handled, by listener and outcome",
                 ["action", "outcome"], registry=REGISTRY)
DIAGNOSIS_SECONDS = Histogram("gpubot_diagnosis_duration_seconds", "Time to a diagnosis, by outcome",
                              ["outcome"], buckets=DIAGNOSIS_BUCKETS, registry=REGISTRY)
FINDINGS = Counter("gpubot_findings", "Findings in the diagnoses made, by code", ["code"], registry=REGISTRY)
SLACK_CALLS = Counter("gpubot_slack_api_calls", "Slack Web API calls made, by method and HTTP status "
                      "(429: rate limited; 'connection': no answer)", ["method", "status"], registry=REGISTRY)
PACER_WAITING = Gauge("gpubot_pacer_waiting", "Slack calls waiting for a slot in the pacer",
                      registry=REGISTRY, multiprocess_mode="livesum")
WORK_QUEUE = Gauge("gpubot_work_queue_depth", "Diagnoses and other slow work accepted and not yet finished",
                   registry=REGISTRY, multiprocess_mode="livesum")
WORKERS_ALIVE = Gauge("gpubot_workers_alive", "1 while the diagnosis workers (processes or threads) run",
                      registry=REGISTRY, multiprocess_mode="livesum")
SWEEP_SECONDS = Histogram("gpubot_sweep_duration_seconds", "Time a cluster sweep took", buckets=SWEEP_BUCKETS,
                          registry=REGISTRY)
SWEEP_PROBLEMS = Gauge("gpubot_sweep_problems", "Problems found by the last sweep", registry=REGISTRY, multiprocess_mode="livesum")
SWEEPS = Counter("gpubot_sweeps", "Cluster sweeps run", registry=REGISTRY)
ALERTS = Counter("gpubot_alerts", "Alert messages in Slack, by event (posted, updated, resolved)", ["event"],
                 registry=REGISTRY)
WEBHOOKS = Counter("gpubot_alertmanager_webhooks", "Alertmanager webhook requests, by outcome", ["outcome"],
                   registry=REGISTRY)
WEBHOOKS_DEFERRED = Counter("gpubot_alertmanager_deferred", "Alertmanager webhook requests answered 429 with "
                            "Retry-After, by reason (rate_limited: over GPUBOT_ALERTMANAGER_RATE; inbox_full: "
                            "the unhandled bodies at their cap)", ["reason"], registry=REGISTRY)
REMEDIATIONS = Counter("gpubot_remediations", "Remediation proposals moved to a state", ["state"],
                       registry=REGISTRY)
DATABASE_ERRORS = Counter("gpubot_database_errors", "Database errors (transient: retried; unavailable: given "
                          "up)", ["kind"], registry=REGISTRY)
LEADER = Gauge("gpubot_leader", "1 while this replica leads (sweeps), else 0", registry=REGISTRY, multiprocess_mode="livesum")
ELECTING = Gauge("gpubot_leader_election", "1 while this replica campaigns for the sweep's Lease (alerts on)",
                 registry=REGISTRY, multiprocess_mode="livesum")
READY = Gauge("gpubot_ready", "1 while /readyz answers 200", registry=REGISTRY, multiprocess_mode="livesum")

ALERT_EVENTS = frozenset({"posted", "updated", "resolved"})
WEBHOOK_OUTCOMES = frozenset({"accepted", "unauthorized", "invalid", "refused", "error"})
DATABASE_ERROR_KINDS = frozenset({"transient", "unavailable"})
DEFERRED_REASONS = frozenset({"rate_limited", "inbox_full"})


def known(value: str | None, allowed: Iterable[str]) -> str:
    """``value`` if it is one of ``allowed``, else "other": labels never carry what a request brought."""
    return value if value is not None and value in allowed else OTHER


def command_kind(action: str | None) -> str:
    from bot.commands import SUBCOMMANDS  # here, not at the top: the stores and commands import this module

    return known(action, (*SUBCOMMANDS, "mention", "invalid"))


def finding_code(code: str) -> str:
    return known(code, CODE_SET)


def slack_method(method: str) -> str:
    return known(method, SLACK_METHODS)


def http_status(status: int | None) -> str:
    if status is None:
        return "connection"
    if status in (200, 429):
        return str(status)
    return f"{status // 100}xx" if 100 <= status < 600 else OTHER


def count_slack_call(method: str, status: int | None) -> None:
    SLACK_CALLS.labels(method=slack_method(method), status=http_status(status)).inc()


def count_findings(codes: Iterable[str]) -> None:
    for code in codes:
        FINDINGS.labels(code=finding_code(code)).inc()


def count_alert(event: str, n: int = 1) -> None:
    if n:
        ALERTS.labels(event=known(event, ALERT_EVENTS)).inc(n)


def count_webhook(status: int) -> None:
    outcome = ("accepted" if status < 300 else "unauthorized" if status in (401, 403) else
               "invalid" if status in (400, 413, 415, 422) else "refused" if status < 500 else "error")
    WEBHOOKS.labels(outcome=outcome).inc()


def count_deferred(reason: str) -> None:
    WEBHOOKS_DEFERRED.labels(reason=known(reason, DEFERRED_REASONS)).inc()


def count_remediation(state: str) -> None:
    from bot.store.models import PROPOSAL_STATES

    REMEDIATIONS.labels(state=known(state, PROPOSAL_STATES)).inc()


def count_database_error(kind: str) -> None:
    DATABASE_ERRORS.labels(kind=known(kind, DATABASE_ERROR_KINDS)).inc()


@contextlib.contextmanager
def pacer_wait() -> Iterator[None]:
    PACER_WAITING.inc()
    try:
        yield
    finally:
        PACER_WAITING.dec()


def watch(gauge: Gauge, read: Callable[[], float]) -> None:
    """``gauge`` reads ``read()`` at every scrape (the serving process's own state: queue depth, leader)."""
    gauge.set_function(lambda: float(read()))


# -- worker processes -------------------------------------------------------------------------------
_worker_dirs: set[str] = set()
_dirs_lock = threading.Lock()


class WorkerMetrics:
    """The directory a pool's worker processes write their samples to, read at every scrape."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="gpubot-metrics-")
        with _dirs_lock:
            _worker_dirs.add(self.path)

    @contextlib.contextmanager
    def spawning(self) -> Iterator[None]:
        """Start a worker inside this: it is started in multiprocess mode, writing to ``path``.

        The variable is set only while the process is made (a spawned child copies the environment at
        start), so nothing else this process starts later writes there."""
        before = os.environ.get(MULTIPROC_ENV)
        os.environ[MULTIPROC_ENV] = self.path
        try:
            yield
        finally:
            if before is None:
                os.environ.pop(MULTIPROC_ENV, None)
            else:
                os.environ[MULTIPROC_ENV] = before

    def process_died(self, pid: int | None) -> None:
        # Its counters stay (they were counted); its share of the live gauges goes.
        if pid is not None:
            multiprocess.mark_process_dead(pid, self.path)

    def close(self) -> None:
        with _dirs_lock:
            _worker_dirs.discard(self.path)
        shutil.rmtree(self.path, ignore_errors=True)


class _Merged:
    """This process's samples plus every worker pool's, summed series by series."""

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        values: dict[str, dict[tuple, float]] = {}
        with _dirs_lock:
            dirs = sorted(_worker_dirs)
        sources = [REGISTRY.collect()] + [multiprocess.MultiProcessCollector(None, path=d).collect() for d in dirs]
        for source in sources:
            for family in source:
                if family.name not in families:
                    families[family.name] = Metric(family.name, family.documentation, family.type, family.unit)
                    values[family.name] = {}
                series = values[family.name]
                for sample in family.samples:
                    key = (sample.name, tuple(sorted(sample.labels.items())))
                    series[key] = series.get(key, 0.0) + sample.value
        for name, family in families.items():
            for (sample_name, labels), value in values[name].items():
                family.add_sample(sample_name, dict(labels), value)
            yield family


_EXPOSED = CollectorRegistry(auto_describe=False)
_EXPOSED.register(_Merged())


def exposition() -> bytes:
    """The text /metrics answers with."""
    return generate_latest(_EXPOSED)


def in_worker_process() -> bool:
    return bool(os.environ.get(MULTIPROC_ENV))
