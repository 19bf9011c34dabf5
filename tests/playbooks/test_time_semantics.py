"""Time decides what a message means: the same reporter's newest verdict replaces its older ones, a start-up
connect retry in a worker that has run for hours since is history, and a capacity error for one NodeClaim is
history while another NodeClaim launches for the pod. History is info and still quoted; the state now comes
first. Messages are upstream's own: kube-scheduler's FailedScheduling (pkg/scheduler/schedule_one.go),
PyTorch c10d's connect loop (torch/csrc/distributed/c10d/TCPStore.cpp, socket.cpp), Karpenter's launch
failure (kubernetes-sigs/karpenter lifecycle/launch.go with aws/karpenter-provider-aws's fleet error)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from playbooks.analyzers import evidence, history
from playbooks.analyzers.launches import claims_named, nominations
from playbooks.engine import analyze
from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from playbooks.registry import default_registry

TAINT = ("0/5 nodes are available: 2 node(s) had untolerated taint {nvidia.com/gpu: true}, 3 node(s) didn't match "
         "Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.")
CORDONED = ("0/5 nodes are available: 2 node(s) were unschedulable, 3 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.")


def _at(seconds_ago: float) -> datetime:
    return datetime.now(timezone.utc) - timedelta(seconds=seconds_ago)


def _ago(seconds: float) -> str:
    return _at(seconds).strftime("%Y-%m-%dT%H:%M:%SZ")


def _klog(seconds: float, level: str = "W") -> str:
    """c10 logging's stamp (c10/util/Logging.cpp): level, month without padding, day, time; no year."""
    when = _at(seconds)
    return f"[{level}{when.month}{when:%d %H:%M:%S}.{when.microsecond:06d}000"


def _event(reason: str, message: str, *, component: str, seconds_ago: float, new_shape: bool = False,
           type_: str = "Warning") -> dict:
    if new_shape:  # events.k8s.io/v1 read through core/v1: eventTime and a series, no lastTimestamp
        return {"reason": reason, "message": message, "type": type_, "reportingComponent": component,
                "eventTime": _ago(seconds_ago + 120), "series": {"count": 4, "lastObservedTime": _ago(seconds_ago)}}
    return {"reason": reason, "message": message, "type": type_, "source": {"component": component},
            "firstTimestamp": _ago(seconds_ago + 120), "lastTimestamp": _ago(seconds_ago), "count": 4}


def _pending(name: str = "whisper-ft-0") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "speech", "labels": {}},
            "spec": {"containers": [{"name": "trainer", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]},
            "status": {"phase": "Pending"}}


def _facts(pod: dict, events: list[dict], *, logs: dict | None = None) -> Facts:
    facts = Facts(target=Target(kind="pod", name=pod["metadata"]["name"], namespace=pod["metadata"]["namespace"]),
                  cluster="test")
    facts.pods.append(PodFacts(pod=pod, events=events, logs=logs or {}))
    return facts


def _findings(facts: Facts) -> list:
    return analyze(facts, registry=default_registry()).findings


# -- the newest verdict of one reporter decides ---------------------------------------------------------

def test_an_18_minute_old_failed_scheduling_is_superseded_by_the_newest():
    old = _event("FailedScheduling", TAINT, component="default-scheduler", seconds_ago=18 * 60)
    new = _event("FailedScheduling", CORDONED, component="default-scheduler", seconds_ago=40)
    findings = _findings(_facts(_pending(), [new, old]))  # list order is not time order
    assert findings[0].code == "scheduling.node_lifecycle_taint" and findings[0].severity == "warning"
    stale = next(f for f in findings if f.code == "scheduling.untolerated_taint")
    assert stale.severity == "info" and stale.confidence == "low" and "History" in stale.detail
    assert any("untolerated taint" in e.text for e in stale.evidence)  # still quoted


def test_without_a_newer_verdict_the_same_message_is_the_finding():
    only = _event("FailedScheduling", TAINT, component="default-scheduler", seconds_ago=18 * 60)
    findings = _findings(_facts(_pending(), [only]))
    assert findings[0].code == "scheduling.untolerated_taint" and findings[0].severity == "error"


def test_new_event_shape_times_are_compared_too():
    old = _event("FailedScheduling", TAINT, component="default-scheduler", seconds_ago=18 * 60, new_shape=True)
    new = _event("FailedScheduling", CORDONED, component="default-scheduler", seconds_ago=30, new_shape=True)
    assert evidence.superseded([new, old]) == [old]
    assert _findings(_facts(_pending(), [old, new]))[0].code == "scheduling.node_lifecycle_taint"


def test_repeats_and_other_reporters_are_not_superseded():
    same_old = _event("FailedScheduling", TAINT, component="default-scheduler", seconds_ago=900)
    same_new = _event("FailedScheduling", TAINT, component="default-scheduler", seconds_ago=10)
    karpenter = _event("FailedScheduling", "Failed to schedule pod, all available instance types exceed limits for "
                       "nodepool (NodePool=g4dn-asr)", component="karpenter", seconds_ago=1200)
    # the kubelet's older "Failed to pull image" is the cause its newer "Error: ImagePullBackOff" repeats
    pull = _event("Failed", 'Failed to pull image "x": not found', component="kubelet", seconds_ago=600)
    backoff = _event("Failed", "Error: ImagePullBackOff", component="kubelet", seconds_ago=5)
    assert evidence.superseded([same_old, same_new, karpenter, pull, backoff]) == []


def test_karpenter_newest_failure_replaces_its_older_one():
    older = _event("FailedScheduling", "Failed to schedule pod, all available instance types exceed limits for "
                   "nodepool (NodePool=g4dn-asr)", component="karpenter", seconds_ago=1100)
    newer = _event("FailedScheduling", 'Failed to schedule pod, incompatible with nodepool "g4dn-asr", daemonset '
                   'overhead={"cpu":"210m"}, no instance type has the required offering', component="karpenter",
                   seconds_ago=60)
    findings = _findings(_facts(_pending(), [older, newer]))
    assert findings[0].code == "karpenter.offering_unavailable_in_zone" and findings[0].severity == "error"
    assert next(f for f in findings if f.code == "karpenter.nodepool_limit_reached").severity == "info"


def test_pending_analyzer_quotes_the_scheduler_newest_by_time():
    old = _event("FailedScheduling", TAINT, component="default-scheduler", seconds_ago=18 * 60)
    new = _event("FailedScheduling", CORDONED, component="default-scheduler", seconds_ago=40)
    assert evidence.newest([new, old]) is new and evidence.newest([]) is None


# -- a start-up retry in a worker that has run for hours since -------------------------------------------

def _worker(*, running_s: float, restarts: int = 0, log: str) -> Facts:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "gemma-sft-worker-1", "namespace": "sft", "labels": {}},
           "spec": {"nodeName": "ip-10-40-1-7.ca-central-1.compute.internal", "containers": [{"name": "pytorch"}]},
           "status": {"phase": "Running", "containerStatuses": [
               {"name": "pytorch", "ready": True, "restartCount": restarts,
                "state": {"running": {"startedAt": _ago(running_s)}}}]}}
    return _facts(pod, [], logs={("pytorch", False): log})


def _retries(seconds_ago: float) -> list[str]:
    host = "gemma-sft-master-0.gemma-sft.sft.svc"
    return [
        f"{_klog(seconds_ago, 'E')} socket.cpp:1019] [c10d] The client socket has timed out after 60000ms while trying "
        f"to connect to ({host}, 23456).",
        f"{_klog(seconds_ago - 1)} TCPStore.cpp:343] [c10d] TCP client failed to connect/validate to host {host}:23456 "
        f"- retrying (try=0, timeout=60000ms, delay=1312ms): The client socket has timed out after 60000ms while trying "
        f"to connect to ({host}, 23456).",
    ]


def _codes(facts: Facts) -> dict[str, str]:
    return {f.code: f.severity for f in _findings(facts)}


def test_start_up_retries_in_a_worker_up_for_three_hours_are_history():
    log = "\n".join(_retries(3 * 3600 - 90) + ["{'loss': 1.82, 'grad_norm': 0.41, 'epoch': 0.4}"] * 3) + "\n"
    facts = _worker(running_s=3 * 3600, log=log)
    findings = _findings(facts)
    assert not [f for f in findings if f.severity != "info"], [(f.code, f.severity) for f in findings]
    quoted = next(f for f in findings if f.code == "training.rendezvous_failed")
    assert "start-up retry" in quoted.detail


def test_the_same_retries_while_starting_are_the_finding():
    log = "\n".join(_retries(90)) + "\n"
    assert _codes(_worker(running_s=120, log=log)).get("training.rendezvous_failed") in ("error", "warning")


def test_a_retry_loop_still_going_is_not_history():
    lines = _retries(3 * 3600 - 90) + ["{'loss': 1.82}"] + _retries(300)  # retrying again five minutes ago
    assert _codes(_worker(running_s=3 * 3600, log="\n".join(lines))).get("training.rendezvous_failed") != "info"
    unstamped = [line.split("] ", 1)[1] for line in _retries(0)]  # no stamps, nothing after the retries
    assert _codes(_worker(running_s=3 * 3600, log="\n".join(unstamped))).get("training.rendezvous_failed") != "info"


def test_the_final_give_up_is_never_history():
    final = (f"{_klog(3 * 3600 - 60, 'E')} TCPStore.cpp:390] [c10d] TCP client failed to connect/validate to host "
             f"gemma-sft-master-0:23456 - timed out (try=0, timeout=60000ms): The client socket has timed out after "
             f"60000ms while trying to connect to (gemma-sft-master-0, 23456).")
    assert not history.is_retry(final)
    assert _codes(_worker(running_s=3 * 3600, log=final + "\nstep 10\n")).get("training.rendezvous_failed") == "error"


# -- a capacity error while another NodeClaim launches for the pod ---------------------------------------

ICE = ('{"level":"ERROR","time":"%s","logger":"controller","message":"failed launching nodeclaim","commit":"a2875e3",'
       '"controller":"nodeclaim.lifecycle","controllerGroup":"karpenter.sh","controllerKind":"NodeClaim",'
       '"NodeClaim":{"name":"gpu-primary-abcde"},"namespace":"","name":"gpu-primary-abcde","reconcileID":'
       '"0f0b5a4e-6d3e-4a3e-9f57-1b8f1c2d3e4f","error":"creating instance, insufficient capacity, with fleet error(s), '
       'InsufficientInstanceCapacity: We currently do not have sufficient g5.12xlarge capacity in the Availability Zone '
       'you requested (eu-central-1a). Our system will be working on provisioning additional capacity. You can currently '
       'get g5.12xlarge capacity by not specifying an Availability Zone in your request or choosing eu-central-1b."}')


def _claim(name: str, nodepool: str, *, seconds_old: float, launched: str = "Unknown") -> dict:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "creationTimestamp": _ago(seconds_old),
                         "labels": {"karpenter.sh/nodepool": nodepool, "node.kubernetes.io/instance-type": "g5.12xlarge"}},
            "status": {"conditions": [{"type": "Launched", "status": launched},
                                      {"type": "Registered", "status": "Unknown"},
                                      {"type": "Initialized", "status": "Unknown"}]}}


def _ice_facts(*, fallback: dict | None) -> Facts:
    events = [
        _event("Nominated", "Pod should schedule on: nodeclaim/gpu-primary-abcde", component="karpenter",
               seconds_ago=300, type_="Normal"),
        _event("Nominated", "Pod should schedule on: nodeclaim/gpu-fallback-fghij", component="karpenter",
               seconds_ago=60, type_="Normal"),
    ]
    facts = _facts(_pending(), events)
    facts.karpenter_log = [ICE % _ago(250)]
    facts.karpenter_source = "karpenter log kube-system/karpenter-7d9c5b7f5-x2x9q"
    if fallback is not None:
        facts.nodeclaims[fallback["metadata"]["name"]] = fallback
    return facts


def test_the_log_line_names_the_claim_and_the_nomination_names_the_pod():
    assert claims_named(ICE % "t") == frozenset({"gpu-primary-abcde"})
    assert nominations(_ice_facts(fallback=None).pods[0]) == ["gpu-fallback-fghij", "gpu-primary-abcde"]


def test_ice_on_the_primary_is_history_while_the_fallback_launches():
    facts = _ice_facts(fallback=_claim("gpu-fallback-fghij", "gpu-fallback", seconds_old=60))
    findings = _findings(facts)
    assert findings[0].code == "karpenter.provisioning" and findings[0].severity == "info"
    ice = next(f for f in findings if f.code == "karpenter.insufficient_capacity")
    assert ice.severity == "info" and "gpu-fallback-fghij" in ice.detail and "NodePool gpu-fallback" in ice.detail
    assert any("InsufficientInstanceCapacity" in e.text for e in ice.evidence)


def test_ice_stays_the_finding_without_a_claim_launching_elsewhere():
    gone = _findings(_ice_facts(fallback=None))
    assert gone[0].code == "karpenter.insufficient_capacity" and gone[0].severity == "error"
    failed = _findings(_ice_facts(fallback=_claim("gpu-fallback-fghij", "gpu-fallback", seconds_old=60,
                                                  launched="False")))
    assert failed[0].code == "karpenter.insufficient_capacity" and failed[0].severity == "error"
