"""Leader election over a coordination.k8s.io/v1 Lease: of several replicas, only the leader sweeps.

The semantics are client-go's (kubernetes/client-go tools/leaderelection/leaderelection.go):

- A candidate reads the Lease every RetryPeriod (with up to 1.2 x RetryPeriod of jitter) and takes it
  when it is free (empty holder) or expired. Expiry is judged on this process's clock: the time at
  which it last *saw the record change*, plus the record's leaseDurationSeconds. The timestamps in the
  record come from another machine's clock and are never compared with ours.
- Every write carries the resourceVersion read, so of two candidates racing, the API server lets one
  write and answers the other 409: that one lost, and waits.
- A leader renews every RetryPeriod and steps down (on_stopped_leading) when it has not renewed for
  RenewDeadline. client-go counts that deadline from the start of each renewal round; here it counts
  from the moment the last successful renewal was *sent*, so LeaseDuration > RenewDeadline alone
  guarantees the old leader has stopped before any follower can see the Lease expire.
- leaseTransitions goes up by one whenever the holder changes; acquireTime is kept across renewals.
- Stopping with release writes an empty holder (client-go ReleaseOnCancel), so another replica takes
  over at its next retry instead of after a whole LeaseDuration.

Unlike client-go's Run, which returns for good once leadership is lost, a replica that steps down
becomes a candidate again: the bot keeps serving Slack, and only its sweeps pause.
"""
from __future__ import annotations

import logging
import math
import random
import secrets
import socket
import threading
import time
from dataclasses import replace
from datetime import datetime, timezone
from typing import Callable, Protocol

from bot.gateway.lease import (LeaderElectionRecord, LeaseConflict, LeaseError, LeaseRefused, LeaseUnavailable,
                               connect_lease)
from bot.settings import Settings

log = logging.getLogger(__name__)

# client-go leaderelection.JitterFactor: a candidate waits RetryPeriod plus up to 1.2 x RetryPeriod.
JITTER_FACTOR = 1.2


class Lock(Protocol):
    """What the elector needs of a lock (bot.gateway.lease.LeaseLock)."""

    def describe(self) -> str: ...

    def get(self, *, timeout: float) -> LeaderElectionRecord | None: ...

    def create(self, record: LeaderElectionRecord, *, timeout: float) -> None: ...

    def update(self, record: LeaderElectionRecord, *, timeout: float) -> None: ...

    def close(self) -> None: ...


def default_identity() -> str:
    """The host name (the pod name, in a pod) and a random suffix, as client-go's users build it:
    two processes on one host, or a pod restarted under the same name, never share an identity."""
    return f"{socket.gethostname()}_{secrets.token_hex(4)}"


class LeaderElector:
    def __init__(
        self,
        lock: Lock,
        *,
        identity: str,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    ) -> None:
        # The checks of client-go's NewLeaderElector.
        if not lease_duration > renew_deadline > JITTER_FACTOR * retry_period > 0:
            raise ValueError(f"lease_duration ({lease_duration:g}) must exceed renew_deadline ({renew_deadline:g}), "
                             f"which must exceed {JITTER_FACTOR} x retry_period ({retry_period:g}) > 0")
        if not identity:
            raise ValueError("identity must not be empty: an empty holder means the Lease is free")
        self.lock = lock
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._clock = clock
        self._wall = wall
        self._observed: LeaderElectionRecord | None = None
        self._observed_at = 0.0  # our clock when the record last changed, as we saw it
        self._renewed_at = 0.0  # our clock when our last successful write was sent
        self._leading = False
        self._problem: str | None = None  # the failure last logged: one that repeats every round is logged once
        self._stop = threading.Event()
        self._release_on_stop = True
        self._thread: threading.Thread | None = None

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
        lock: Lock | None = None,
    ) -> "LeaderElector":
        """An elector for the Lease ``settings.lease_name`` in ``settings.lease_namespace`` (else
        ``settings.namespace``), through the gateway's client configuration. Raises ClusterConfigError
        when there is neither a kubeconfig nor an in-cluster service account."""
        namespace = settings.lease_namespace or settings.namespace
        if lock is None:
            lock = connect_lease(settings, namespace=namespace, name=settings.lease_name)
        return cls(lock, identity=settings.identity or default_identity(), lease_duration=settings.lease_duration,
                   renew_deadline=settings.lease_renew_deadline, retry_period=settings.lease_retry_period,
                   on_started_leading=on_started_leading, on_stopped_leading=on_stopped_leading)

    @property
    def is_leader(self) -> bool:
        """True between on_started_leading and on_stopped_leading."""
        return self._leading

    @property
    def leader(self) -> str:
        """The holder last seen in the Lease ("" when none): for logs and status pages only."""
        return self._observed.holder_identity if self._observed else ""

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("a LeaderElector runs once; build another to start again")
        self._thread = threading.Thread(target=self._run, name="gpubot-leader-election", daemon=True)
        self._thread.start()

    def stop(self, *, release: bool = True) -> None:
        """Stop campaigning: a leader calls on_stopped_leading first and then, with ``release``,
        empties the holder so another replica leads at once. Without ``release`` the Lease is left to
        expire, as when a replica dies."""
        self._release_on_stop = release
        self._stop.set()
        if self._thread is not None:
            # A request in flight is bounded by the renew deadline; the release by another.
            self._thread.join(timeout=2 * self.renew_deadline + self.retry_period)
            if self._thread.is_alive():
                log.warning("leader election on the Lease %s did not stop within %.1f s", self.lock.describe(),
                            2 * self.renew_deadline + self.retry_period)

    # -- the loop ------------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if not self._acquire():
                    return
                self._lead()
        finally:
            # Stop the work the Lease guards before giving the Lease away, so two replicas never
            # sweep at once (client-go's ReleaseOnCancel asks the same of its callers).
            self._step_down()
            if self._release_on_stop:
                self._release()
            self.lock.close()

    def _acquire(self) -> bool:
        """Retry until this replica holds the Lease (True) or stop() is called (False)."""
        log.info("leader election: %s is a candidate for the Lease %s", self.identity, self.lock.describe())
        while not self._stop.is_set():
            if self._try_acquire_or_renew(timeout=self.renew_deadline):
                return True
            jittered = self.retry_period * (1 + random.random() * JITTER_FACTOR)
            if self._stop.wait(jittered):
                break
        return False

    def _lead(self) -> None:
        """Leading: renew every RetryPeriod until a renewal misses the deadline, another holder
        shows up, or stop() is called."""
        self._leading = True
        record = self._observed
        log.info("leader election: %s now leads the Lease %s (transitions: %d)", self.identity,
                 self.lock.describe(), record.lease_transitions if record else 0)
        self._on_started()
        while not self._stop.wait(self.retry_period):
            if not self._renew():
                break
        self._step_down()

    def _renew(self) -> bool:
        deadline = self._renewed_at + self.renew_deadline
        while True:
            remaining = deadline - self._clock()
            if remaining <= 0:
                log.warning("leader election: %s could not renew the Lease %s within %g s; stepping down",
                            self.identity, self.lock.describe(), self.renew_deadline)
                return False
            if self._try_acquire_or_renew(timeout=remaining):
                return True
            if self._observed is not None and self._observed.holder_identity != self.identity:
                log.warning("leader election: %s lost the Lease %s to %s; stepping down", self.identity,
                            self.lock.describe(), self._observed.holder_identity or "nobody")
                return False
            if self._stop.wait(min(self.retry_period, max(deadline - self._clock(), 0))):
                return True  # stopping: _lead's loop ends and steps down

    def _step_down(self) -> None:
        if self._leading:
            self._leading = False
            log.info("leader election: %s stopped leading the Lease %s", self.identity, self.lock.describe())
            self._on_stopped()

    # -- one round (client-go tryAcquireOrRenew) ------------------------------------------------------

    def _try_acquire_or_renew(self, *, timeout: float) -> bool:
        sent_at = self._clock()
        deadline = sent_at + timeout
        now = self._wall()
        desired = LeaderElectionRecord(holder_identity=self.identity,
                                       # Whole seconds on the wire: round up, never let a follower wait less.
                                       lease_duration_seconds=math.ceil(self.lease_duration),
                                       acquire_time=now, renew_time=now)

        # 1. The leader's fast path: write over the object it last wrote, without reading it first.
        observed = self._observed
        if observed is not None and observed.holder_identity == self.identity and self._valid(sent_at):
            renewal = replace(desired, acquire_time=observed.acquire_time,
                              lease_transitions=observed.lease_transitions)
            try:
                self.lock.update(renewal, timeout=timeout)
            except LeaseError as exc:
                log.debug("leader election: renewing %s without a read failed (%s); reading it", self.lock.describe(),
                          exc)
            else:
                return self._wrote(renewal, sent_at)

        # 2. Read the Lease, or create it.
        try:
            current = self.lock.get(timeout=max(deadline - self._clock(), 0))
            if current is None:
                self.lock.create(desired, timeout=max(deadline - self._clock(), 0))
                return self._wrote(desired, sent_at)
        except LeaseError as exc:
            self._report(exc)
            return False

        # 3. A record that changed since the last round restarts its expiry on our clock.
        if current != self._observed:
            self._observe(current, at=self._clock())
        if current.holder_identity and current.holder_identity != self.identity and self._valid(sent_at):
            return False  # held by another replica, not expired

        # 4. Take it over (a new holder: one more transition) or renew it.
        if current.holder_identity == self.identity:
            desired = replace(desired, acquire_time=current.acquire_time,
                              lease_transitions=current.lease_transitions)
        else:
            desired = replace(desired, lease_transitions=current.lease_transitions + 1)
        try:
            self.lock.update(desired, timeout=max(deadline - self._clock(), 0))
        except LeaseError as exc:
            self._report(exc)
            return False
        return self._wrote(desired, sent_at)

    def _valid(self, now: float) -> bool:
        """client-go isLeaseValid: the observed record has not outlived its own leaseDurationSeconds."""
        return self._observed is not None and self._observed_at + self._observed.lease_duration_seconds > now

    def _observe(self, record: LeaderElectionRecord, *, at: float) -> None:
        if self._observed is None or record.holder_identity != self._observed.holder_identity:
            log.info("leader election: the Lease %s is held by %s", self.lock.describe(),
                     record.holder_identity or "nobody")
        self._observed = record
        self._observed_at = at

    def _wrote(self, record: LeaderElectionRecord, sent_at: float) -> bool:
        # Counted from when the write was sent, not answered: a follower may have seen it in between.
        self._observe(record, at=sent_at)
        self._renewed_at = sent_at
        if self._problem is not None:
            log.info("leader election: the Lease %s is writable again", self.lock.describe())
            self._problem = None
        return True

    def _report(self, exc: LeaseError) -> None:
        if isinstance(exc, LeaseConflict):
            log.info("leader election: %s", exc)  # someone else won this round: expected, never an error
            return
        message = str(exc)
        if message == self._problem:
            return
        self._problem = message
        if isinstance(exc, LeaseRefused):
            log.error("leader election: %s; this replica will not sweep until it can", message)
        elif isinstance(exc, LeaseUnavailable):
            log.warning("leader election: %s; retrying every %g s", message, self.retry_period)
        else:
            log.error("leader election: %s", message)

    # -- stepping aside ---------------------------------------------------------------------------------

    def _release(self) -> None:
        """Empty the holder (client-go tryRelease): leaseDurationSeconds 1, transitions kept. Retried
        on conflict, which a renewal still in flight when stop() came can cause."""
        deadline = self._clock() + self.renew_deadline
        while (remaining := deadline - self._clock()) > 0:
            try:
                current = self.lock.get(timeout=remaining)
                if current is None or current.holder_identity != self.identity:
                    return
                now = self._wall()
                released = LeaderElectionRecord(lease_duration_seconds=1, acquire_time=now, renew_time=now,
                                                lease_transitions=current.lease_transitions)
                self.lock.update(released, timeout=max(deadline - self._clock(), 0))
            except LeaseConflict:
                continue
            except LeaseError as exc:
                log.warning("leader election: could not release the Lease %s (%s); it expires in %d s",
                            self.lock.describe(), exc, math.ceil(self.lease_duration))
                return
            self._observe(released, at=self._clock())
            log.info("leader election: %s released the Lease %s", self.identity, self.lock.describe())
            return
