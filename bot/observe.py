"""Where a request, a diagnosis, a sweep or a webhook is observed: its metrics and its log fields.

Wrappers, so the code they observe stays as it reads: a listener is wrapped by ``handlers.guard``,
the engine's ``diagnose`` by the service, the sweep and the webhook by the alerts runtime and serve.
"""
from __future__ import annotations

import functools
import logging
import time
import uuid
from typing import Any, Callable, TypeVar

from bot import metrics
from bot.logs import request_fields, set_request_field

log = logging.getLogger("gpubot.requests")
T = TypeVar("T")
_FAILED = "outcome"


def _describe(listener: str, kwargs: dict) -> tuple[str, str, dict[str, Any]]:
    """(counter, kind, log fields) of a listener's request, from what Bolt passed it."""
    body = kwargs.get("body") or {}
    command = kwargs.get("command")
    if command is not None:
        from bot.commands import parse_command
        from bot.errors import UserError

        try:
            parsed = parse_command(command.get("text", ""))
            kind, target = parsed.action, getattr(parsed, "target", None)
        except UserError:
            kind, target = "invalid", None
        return "command", metrics.command_kind(kind), {"channel": command.get("channel_id"),
                                                        "user": command.get("user_id"), "target": target}
    event = kwargs.get("event") or body.get("event")
    if event is not None and "actions" not in body and "view" not in body:
        return "command", metrics.command_kind("mention"), {"channel": event.get("channel"), "user": event.get("user")}
    container = body.get("container") or {}
    return "click", listener, {"channel": container.get("channel_id") or (body.get("channel") or {}).get("id"),
                               "user": (body.get("user") or {}).get("id")}


def observed(listener: str, fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` (a Bolt listener, called with keyword arguments) counted and logged with its request's
    fields; ``failed()`` inside it marks the outcome an error. Bolt reads the listener's parameters
    through ``__wrapped__`` (functools.wraps), so the wrapper is passed what ``fn`` asks for."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> T:
        counter, kind, fields = _describe(listener, kwargs)
        started = time.monotonic()
        with request_fields(request_id=uuid.uuid4().hex[:12], **fields) as current:
            try:
                return fn(*args, **kwargs)
            except BaseException:
                current[_FAILED] = "error"
                raise
            finally:
                outcome = current.pop(_FAILED, "ok")
                current["duration_ms"] = round((time.monotonic() - started) * 1000)
                if counter == "command":
                    metrics.COMMANDS.labels(kind=kind, outcome=outcome).inc()
                else:
                    metrics.CLICKS.labels(action=kind, outcome=outcome).inc()
                log.info("%s %s handled: %s", counter, kind, outcome)
    return run


def failed() -> None:
    """The request being handled failed (a bug, already told to the person)."""
    set_request_field(_FAILED, "error")


def timed_diagnosis(diagnose: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``diagnose(...)`` with its duration observed by outcome and its findings counted by code."""
    started = time.monotonic()
    outcome = "error"
    try:
        diagnosis = diagnose(*args, **kwargs)
        outcome = "ok"
        metrics.count_findings(f.code for f in getattr(diagnosis, "findings", ()))
        return diagnosis
    except LookupError:
        outcome = "not_found"
        raise
    finally:
        metrics.DIAGNOSIS_SECONDS.labels(outcome=outcome).observe(time.monotonic() - started)


def timed_sweep(sweep: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    with metrics.SWEEP_SECONDS.time():
        result = sweep(*args, **kwargs)
    metrics.SWEEPS.inc()
    metrics.SWEEP_PROBLEMS.set(len(getattr(result, "problems", ())))
    return result


def counted_alerts(summary: T) -> T:
    """A notifier's Summary, its posts, updates and resolutions counted."""
    metrics.count_alert("posted", getattr(summary, "posted", 0) + getattr(summary, "digests", 0))
    metrics.count_alert("updated", getattr(summary, "updated", 0))
    metrics.count_alert("resolved", getattr(summary, "resolved", 0))
    return summary


def counted_webhook(route: Callable[[str, Any, bytes], "tuple[int, dict]"]) -> Callable[[str, Any, bytes], "tuple[int, dict]"]:
    def handle(method: str, headers: Any, body: bytes) -> "tuple[int, dict]":
        try:
            status, answer = route(method, headers, body)
        except BaseException:
            metrics.count_webhook(500)
            raise
        metrics.count_webhook(status)
        return status, answer
    return handle


def watch_serving(*, alerts: Any, pool: Any, workers_alive: Callable[[], bool] | None) -> None:
    """The gauges read from the serving process at every scrape."""
    metrics.watch(metrics.WORK_QUEUE, lambda: pool.unfinished)
    metrics.watch(metrics.WORKERS_ALIVE, workers_alive or (lambda: True))
    metrics.watch(metrics.LEADER, lambda: alerts.elector is not None and alerts.elector.is_leader)
    metrics.watch(metrics.ELECTING, lambda: alerts.elector is not None)


def serving_readiness(*, server: Any, app: Any, deps: Any, alerts: Any, workers: Any) -> Any:
    """``gpubot serve``'s /readyz checks (edge accepting, database, Slack token, workers) and the gauges
    read from the serving process."""
    from bot.app import work_pool
    from bot.edge.readiness import Readiness
    from bot.slack_client import with_deadline

    pool = workers if workers is not None else work_pool(app)
    alive = (lambda: workers.alive) if workers is not None else None
    watch_serving(alerts=alerts, pool=pool, workers_alive=alive)
    return Readiness(accepting=lambda: server.serving, database=deps.store.engine,
                     slack_client=with_deadline(app.client, 5.0), workers_alive=alive)
