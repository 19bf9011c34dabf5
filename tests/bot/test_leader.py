"""Leader election against the simulated API server over HTTP: the Lease is read and written by the
official kubernetes client, with the sim's optimistic concurrency (409 on a stale resourceVersion),
its RBAC refusals (403) and its injected faults."""
from __future__ import annotations

import json
import logging
import re
import threading
import time
import urllib.request
import uuid

import pytest

from bot.gateway.lease import micro_time
from bot.leader import LeaderElector
from bot.settings import load_settings
from sim.serve import start_sim

DURATION, RENEW, RETRY = 2.0, 1.2, 0.2
NAMESPACE = "gpubot"
# A candidate polls every RETRY plus up to 1.2 x RETRY of jitter.
POLL = 2.2 * RETRY
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@pytest.fixture(scope="module")
def sim():
    with start_sim(scenarios=[], ec2=False) as handle:
        yield handle


@pytest.fixture
def lease_name(sim):
    yield f"gpubot-leader-{uuid.uuid4().hex[:8]}"
    sim.cluster.forbidden = ()
    _control(sim, "DELETE", "/sim/faults")


class Replica:
    """One elector and what its callbacks saw, timed on the same clock as the elector."""

    def __init__(self, sim, lease: str, identity: str) -> None:
        self.identity = identity
        self.started: list[float] = []
        self.stopped: list[float] = []
        self.leading = threading.Event()
        self.not_leading = threading.Event()
        settings = load_settings({
            "KUBECONFIG": str(sim.kubeconfig), "POD_NAME": identity, "GPUBOT_LEASE_NAME": lease,
            "GPUBOT_LEASE_NAMESPACE": NAMESPACE, "GPUBOT_LEASE_DURATION": str(DURATION),
            "GPUBOT_LEASE_RENEW_DEADLINE": str(RENEW), "GPUBOT_LEASE_RETRY_PERIOD": str(RETRY),
        })
        self.elector = LeaderElector.from_settings(settings, on_started_leading=self._started,
                                                   on_stopped_leading=self._stopped)

    def _started(self) -> None:
        self.started.append(time.monotonic())
        self.not_leading.clear()
        self.leading.set()

    def _stopped(self) -> None:
        self.stopped.append(time.monotonic())
        self.leading.clear()
        self.not_leading.set()


@pytest.fixture
def replicas(sim, lease_name):
    made: list[Replica] = []

    def make(identity: str, *, start: bool = True) -> Replica:
        replica = Replica(sim, lease_name, identity)
        made.append(replica)
        if start:
            replica.elector.start()
        return replica

    yield make
    for replica in made:
        replica.elector.stop(release=False)


def _control(sim, method: str, path: str, body: object = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{sim.url}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request).read() or b"{}")


def _lease(sim, name: str) -> dict:
    leases = sim.cluster.resolve(group="coordination.k8s.io", version="v1", plural="leases")
    return sim.cluster.get(leases, namespace=NAMESPACE, name=name)


def _first_leader(*replicas: Replica, timeout: float) -> Replica:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for replica in replicas:
            if replica.elector.is_leader:
                return replica
        time.sleep(0.01)
    raise AssertionError(f"nobody led within {timeout} s")


def test_of_two_replicas_exactly_one_leads_and_renews(sim, replicas, lease_name):
    a, b = replicas("replica-a"), replicas("replica-b")
    leader = _first_leader(a, b, timeout=2 * POLL + 1)
    follower = b if leader is a else a
    first = _lease(sim, lease_name)["spec"]
    # Watch for longer than a lease: the leader keeps it by renewing, the follower never leads.
    end = time.monotonic() + 1.5 * DURATION
    while time.monotonic() < end:
        assert leader.elector.is_leader and not follower.elector.is_leader
        time.sleep(0.05)
    spec = _lease(sim, lease_name)["spec"]
    assert spec["holderIdentity"] == leader.identity
    assert spec["leaseDurationSeconds"] == 2 and spec["leaseTransitions"] == 0
    assert spec["renewTime"] > first["renewTime"] and spec["acquireTime"] == first["acquireTime"]
    assert MICRO_TIME.match(spec["renewTime"]) and MICRO_TIME.match(spec["acquireTime"])
    assert leader.stopped == [] and follower.started == []
    assert follower.elector.leader == leader.identity


def test_a_dead_leader_is_replaced_within_one_lease_duration(sim, replicas, lease_name):
    a = replicas("replica-a")
    a.leading.wait(2)
    b = replicas("replica-b")
    time.sleep(3 * POLL)  # b has seen a's renewals
    assert a.elector.is_leader and not b.elector.is_leader

    died = time.monotonic()
    a.elector.stop(release=False)  # no release: the Lease is left to expire, as when a pod is killed
    assert b.leading.wait(DURATION + 3 * POLL)
    took_over = b.started[0] - died
    # b waits out the lease from the last renewal it saw (at most one retry before the death) and
    # notices the expiry at its next poll.
    assert DURATION - RETRY - 0.25 <= took_over <= DURATION + 2 * POLL + 0.4, took_over
    assert len(a.stopped) == 1 and not a.elector.is_leader
    spec = _lease(sim, lease_name)["spec"]
    assert spec["holderIdentity"] == "replica-b" and spec["leaseTransitions"] == 1


def test_a_leader_that_stops_gracefully_hands_over_at_once(sim, replicas, lease_name):
    a = replicas("replica-a")
    a.leading.wait(2)
    b = replicas("replica-b")
    time.sleep(3 * POLL)
    first = _lease(sim, lease_name)["spec"]

    stopped = time.monotonic()
    a.elector.stop(release=True)
    # on_stopped_leading ran before the release, so the sweep had paused before b could start.
    assert a.stopped and a.stopped[0] <= time.monotonic()
    assert b.leading.wait(DURATION)
    assert b.started[0] - stopped < POLL + 0.6 < DURATION - RETRY
    assert a.stopped[0] < b.started[0]
    spec = _lease(sim, lease_name)["spec"]
    assert spec["holderIdentity"] == "replica-b" and spec["leaseTransitions"] == 1
    assert spec["acquireTime"] != first["acquireTime"]


def test_lease_transitions_count_changes_of_holder(sim, replicas, lease_name):
    a = replicas("replica-a")
    a.leading.wait(2)
    b, c = replicas("replica-b"), replicas("replica-c")
    holders = ["replica-a"]
    for _ in range(2):
        current = next(r for r in (a, b, c) if r.identity == holders[-1])
        time.sleep(2 * RETRY)  # renewals in between leave the count alone
        current.elector.stop(release=True)
        successor = _first_leader(*[r for r in (a, b, c) if r.identity not in holders], timeout=DURATION)
        holders.append(successor.identity)
        assert _lease(sim, lease_name)["spec"]["leaseTransitions"] == len(holders) - 1
    assert len(set(holders)) == 3


def test_a_conflicting_write_is_someone_else_winning_not_a_crash(sim, replicas, lease_name, caplog):
    caplog.set_level(logging.INFO, logger="bot.leader")
    a = replicas("replica-a")
    assert a.leading.wait(2)
    # Another writer takes the Lease with the resourceVersion it read: a's next renewal carries a
    # stale one and the API server answers 409.
    leases = sim.cluster.resolve(group="coordination.k8s.io", version="v1", plural="leases")
    lease = _lease(sim, lease_name)
    taken = {**lease, "spec": {**lease["spec"], "holderIdentity": "intruder", "leaseTransitions": 1}}
    sim.cluster.replace(leases, taken, namespace=NAMESPACE, name=lease_name)

    assert a.not_leading.wait(RENEW + RETRY)
    assert any(line.startswith("PUT") and line.endswith(" 409") for line in sim.request_log()
               if lease_name in line)
    assert any("lost the Lease" in r.getMessage() and "intruder" in r.getMessage() for r in caplog.records)
    # The intruder never renews: a takes the Lease back once it expires, counting a second transition.
    assert a.leading.wait(DURATION + 2 * POLL + 0.5)
    assert _lease(sim, lease_name)["spec"]["leaseTransitions"] == 2
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_conflicts_for_less_than_the_renew_deadline_do_not_end_leadership(sim, replicas, lease_name):
    a = replicas("replica-a")
    assert a.leading.wait(2)
    _control(sim, "POST", "/sim/faults", {"status": 409, "times": 3, "method": "PUT",
                                           "path_contains": f"/leases/{lease_name}"})
    time.sleep(RENEW + 3 * RETRY)
    assert a.elector.is_leader and a.stopped == []
    assert sum(1 for line in sim.request_log() if lease_name in line and line.endswith(" 409")) == 3


def test_a_forbidden_lease_is_logged_once_and_the_replica_never_leads(sim, replicas, lease_name, caplog):
    caplog.set_level(logging.INFO, logger="bot.leader")
    sim.cluster.forbid([f"namespaces/{NAMESPACE}/coordination.k8s.io/leases"])
    a = replicas("replica-a")
    time.sleep(RENEW + 4 * POLL)
    assert not a.elector.is_leader and a.started == []
    refused = [line for line in sim.request_log() if lease_name in line and line.endswith(" 403")]
    assert len(refused) >= 3  # it kept asking (RBAC may be granted while it runs) ...
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, errors  # ... and said so once
    assert f"cannot take the Lease {NAMESPACE}/{lease_name}: forbidden to get it" in errors[0]
    assert "grant leases get/create/update" in errors[0] and "\n" not in errors[0]


def test_a_leader_that_cannot_renew_within_the_deadline_stops_leading(sim, replicas, lease_name, caplog):
    caplog.set_level(logging.INFO, logger="bot.leader")
    a = replicas("replica-a")
    assert a.leading.wait(2)
    time.sleep(2 * RETRY)
    sim.cluster.forbid([f"update namespaces/{NAMESPACE}/coordination.k8s.io/leases"])
    refused = time.monotonic()
    assert a.not_leading.wait(RENEW + RETRY + 0.5)
    gave_up = a.stopped[0] - refused
    # It retried until the deadline (counted from its last renewal, at most one retry before the
    # refusal), not one failure.
    assert RENEW - RETRY - 0.25 <= gave_up <= RENEW + 0.5, gave_up
    assert not a.elector.is_leader
    assert any("could not renew" in r.getMessage() for r in caplog.records)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR][0].startswith(
        f"leader election: cannot take the Lease {NAMESPACE}/{lease_name}: forbidden to update it")


def test_a_cluster_without_the_lease_api_is_one_clear_line(caplog):
    caplog.set_level(logging.INFO, logger="bot.leader")
    with start_sim(scenarios=[], ec2=False) as bare:
        bare.cluster.serve_only(group="coordination.k8s.io", version="v1beta1")
        replica = Replica(bare, "gpubot-leader", "replica-a")
        replica.elector.start()
        time.sleep(3 * POLL)
        replica.elector.stop()
    assert replica.started == []
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == ["leader election: cannot take the Lease gpubot/gpubot-leader: the cluster does not serve "
                      "coordination.k8s.io/v1 leases (Kubernetes 1.14 or later does); this replica will not "
                      "sweep until it can"]


def test_timings_are_checked_as_client_go_checks_them():
    callbacks = {"on_started_leading": lambda: None, "on_stopped_leading": lambda: None}
    with pytest.raises(ValueError, match="renew_deadline"):
        LeaderElector(None, identity="a", lease_duration=2, renew_deadline=2, retry_period=0.2, **callbacks)
    with pytest.raises(ValueError, match="retry_period"):
        LeaderElector(None, identity="a", lease_duration=2, renew_deadline=1, retry_period=1, **callbacks)
    with pytest.raises(ValueError, match="identity"):
        LeaderElector(None, identity="", lease_duration=2, renew_deadline=1, retry_period=0.2, **callbacks)


def test_micro_time_always_has_six_fraction_digits():
    from datetime import datetime, timezone

    assert micro_time(datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)) == "2024-05-01T12:00:00.000000Z"
