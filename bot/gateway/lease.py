"""The leader-election Lease (coordination.k8s.io/v1): the only code that reads or writes it.

The Python client has no resource lock, so this is client-go's ``LeaseLock``
(kubernetes/client-go tools/leaderelection/resourcelock/leaselock.go): ``get`` reads the Lease and keeps
the object, ``update`` sends that object back with a new spec, so the API server refuses the write
(409 Conflict) when anyone wrote in between: optimistic concurrency on ``metadata.resourceVersion``.
The record is the Lease spec as ``LeaseSpecToLeaderElectionRecord`` reads it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from bot.gateway.kube import connect
from bot.settings import Settings


@dataclass(frozen=True)
class LeaderElectionRecord:
    """client-go resourcelock.LeaderElectionRecord, as a Lease spec holds it. An empty holder means
    nobody leads (a leader that stepped down writes one), so any candidate may take it at once."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    lease_transitions: int = 0


class LeaseError(Exception):
    """A read or write of the Lease that did not happen; ``str()`` is one line for the log."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class LeaseConflict(LeaseError):
    """409 (or the Lease vanished under an update): someone else wrote first. Not a failure: the
    next round reads the Lease again and sees who holds it."""


class LeaseRefused(LeaseError):
    """403/401, or 404 for an API or namespace the cluster does not have: retrying will not help
    until someone changes RBAC or the settings, and the message says which."""


class LeaseUnavailable(LeaseError):
    """No answer, a timeout or a 5xx: the next round tries again."""


class _LeaseMissing(LeaseError):
    """404 naming the Lease itself: it does not exist (yet, or any more)."""


class LeaseLock:
    """One Lease, read and written through ``CoordinationV1Api``; not thread-safe (one elector
    thread owns it)."""

    def __init__(self, api: client.CoordinationV1Api, *, namespace: str, name: str, cluster: str = "",
                 close: Callable[[], None] | None = None) -> None:
        self._api = api
        self.namespace = namespace
        self.name = name
        self.cluster = cluster
        self._close = close
        self._lease: dict[str, Any] | None = None  # the object last read or written, with its resourceVersion

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def close(self) -> None:
        if self._close is not None:
            self._close()

    def get(self, *, timeout: float) -> LeaderElectionRecord | None:
        """The record in the Lease, or None when the Lease does not exist yet."""
        try:
            lease = self._send("get", self._api.read_namespaced_lease, self.name, self.namespace, timeout=timeout)
        except _LeaseMissing:
            self._lease = None
            return None
        self._lease = lease
        return record_from_spec(lease.get("spec") or {})

    def create(self, record: LeaderElectionRecord, *, timeout: float) -> None:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec_from_record(record)}
        self._lease = self._send("create", self._api.create_namespaced_lease, self.namespace, body, timeout=timeout)

    def update(self, record: LeaderElectionRecord, *, timeout: float) -> None:
        """Write ``record`` over the Lease last read or written; LeaseConflict if it changed since."""
        if self._lease is None:
            raise LeaseConflict(f"the Lease {self.describe()} was not read before an update")
        body = {**self._lease, "spec": spec_from_record(record)}
        try:
            self._lease = self._send("update", self._api.replace_namespaced_lease, self.name, self.namespace, body,
                                     timeout=timeout)
        except _LeaseMissing:
            self._lease = None
            raise LeaseConflict(f"the Lease {self.describe()} was deleted since it was read", status=404) from None

    def _send(self, verb: str, fn: Callable[..., Any], *args: Any, timeout: float) -> dict[str, Any]:
        # One attempt, bounded by the caller's deadline: the elector's own rounds are the retries
        # (the gateway's backoff would carry a leader past its renew deadline).
        try:
            response = fn(*args, _request_timeout=max(timeout, 0.05), _preload_content=False)
        except ApiException as exc:
            raise self._error(verb, exc) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise LeaseUnavailable(f"cannot {verb} the Lease {self.describe()}: no answer from the cluster "
                                   f"({type(exc).__name__})") from None
        return json.loads(response.data or b"{}")

    def _error(self, verb: str, exc: ApiException) -> LeaseError:
        what = f"the Lease {self.describe()}"
        detail = _status_message(exc)
        if exc.status == 409:
            return LeaseConflict(f"{what} changed under a {verb} ({detail}): another replica wrote first",
                                 status=409)
        if exc.status in (401, 403):
            reason = "forbidden" if exc.status == 403 else "unauthorized"
            return LeaseRefused(f"cannot take {what}: {reason} to {verb} it ({detail}); grant leases "
                                f"get/create/update in namespace {self.namespace} to gpubot's service account "
                                "(the Helm chart's Role gpubot-leader-election)", status=exc.status)
        if exc.status == 404:
            kind, name = _named(exc)
            if name == self.name and kind in ("leases", ""):
                return _LeaseMissing(f"{what} does not exist", status=404)
            if name:  # the namespace, on create: a real server answers namespaces "x" not found
                return LeaseRefused(f"cannot take {what}: {detail}; set GPUBOT_LEASE_NAMESPACE to a namespace "
                                    "that exists", status=404)
            return LeaseRefused(f"cannot take {what}: the cluster does not serve coordination.k8s.io/v1 leases "
                                "(Kubernetes 1.14 or later does)", status=404)
        if exc.status in (429,) or (exc.status or 0) >= 500:
            return LeaseUnavailable(f"cannot {verb} {what}: the cluster answered {exc.status} ({detail})",
                                    status=exc.status)
        return LeaseError(f"cannot {verb} {what}: the cluster answered {exc.status} ({detail})", status=exc.status)


def connect_lease(settings: Settings, *, namespace: str, name: str) -> LeaseLock:
    """A lock on ``namespace/name`` through the same client configuration as the gateway (kubeconfig
    context, or in-cluster); raises ClusterConfigError when there is neither."""
    gateway = connect(settings)
    api = client.CoordinationV1Api(gateway.custom.api_client)
    return LeaseLock(api, namespace=namespace, name=name, cluster=gateway.name, close=gateway.close)


# -- the record as the Lease spec holds it (client-go LeaseSpecToLeaderElectionRecord and back) ----------

def record_from_spec(spec: dict[str, Any]) -> LeaderElectionRecord:
    return LeaderElectionRecord(
        holder_identity=str(spec.get("holderIdentity") or ""),
        lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
        acquire_time=parse_micro_time(spec.get("acquireTime")),
        renew_time=parse_micro_time(spec.get("renewTime")),
        lease_transitions=int(spec.get("leaseTransitions") or 0),
    )


def spec_from_record(record: LeaderElectionRecord) -> dict[str, Any]:
    return {
        "holderIdentity": record.holder_identity,
        "leaseDurationSeconds": record.lease_duration_seconds,
        "acquireTime": micro_time(record.acquire_time),
        "renewTime": micro_time(record.renew_time),
        "leaseTransitions": record.lease_transitions,
    }


def micro_time(value: datetime | None) -> str | None:
    """metav1.MicroTime's wire form, RFC3339Micro ("2006-01-02T15:04:05.000000Z07:00"): always six
    fraction digits, which ``datetime.isoformat`` drops when the microseconds are zero and which the
    API server's parser (``time.Parse`` with that layout) requires."""
    if value is None:
        return None
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None  # informational only: expiry is judged on the local clock, never on these


def _body(exc: ApiException) -> dict[str, Any]:
    try:
        body = json.loads(exc.body)
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _named(exc: ApiException) -> tuple[str, str]:
    """The kind and name a 404 Status names (``leases.coordination.k8s.io "x" not found``; on create,
    ``namespaces "x" not found``); empty for a path the server does not serve (``404 page not found``)."""
    details = _body(exc).get("details") or {}
    return str(details.get("kind") or ""), str(details.get("name") or "")


def _status_message(exc: ApiException) -> str:
    """The Status message, on one line: it ends up in a one-line log."""
    message = _body(exc).get("message") or (exc.body if isinstance(exc.body, str) else "") or exc.reason or ""
    return " ".join(str(message).split())[:300]
