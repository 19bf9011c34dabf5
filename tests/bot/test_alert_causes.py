"""One message per cause, against the fake Slack Web API over HTTP and a real store (SQLite and
PostgreSQL): pods of several jobs Pending on one full NodePool, the NodePool's own problem and
Alertmanager's alert about it are one message with counts; a sweep's GPU failure and DCGM's Xid alert
about the same node are one message; headlines are plain words, codes stay in the context line."""
from __future__ import annotations

import json
import os
from datetime import timedelta

import pytest

from bot.alerts.alertmanager import parse_webhook
from bot.alerts.causes import Cause, cause_of
from bot.alerts.sweep import pending_alert
from playbooks.analyzers.evidence import field
from playbooks.model import Diagnosis, Evidence, Finding, Remediation, Target
from playbooks.problems import Problem
from playbooks.sweep.nodepools import nodepool_problems
from playbooks.sweep.pods import PendingGroup
from tests.bot.alertmanager_payloads import alert, encode, webhook
from tests.bot.test_notifier import ALERTS, make, slack  # noqa: F401 - the fake Slack fixture
from tests.fakes.block_kit_limits import problems as block_problems
from tests.store.conftest import clock, engine  # noqa: F401 - fixtures: a migrated database per backend, a clock

POOL = "gpu-training-32"
NODE = "ip-10-0-12-34.us-west-2.compute.internal"


def full_nodepool() -> dict:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": POOL},
            "spec": {"limits": {"nvidia.com/gpu": "32"},
                     "template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-gpu-count",
                                                             "operator": "Gt", "values": ["0"]}]}}},
            "status": {"resources": {"nvidia.com/gpu": "32"}}}


def limit_diagnosis(job: Target) -> Diagnosis:
    """What the pending analyzer answers for a pod its NodePool's limit blocks (pending_findings._limit):
    the NodePool named by its evidence's object reference, never only in prose."""
    pool = full_nodepool()
    finding = Finding(
        code="karpenter.nodepool_limit_reached", severity="error", confidence="high",
        title=f"NodePool {POOL} is at its nvidia.com/gpu limit (32/32); a new node needs 8 more",
        detail="Raise spec.limits, free capacity, or let the pod use another NodePool.",
        evidence=[field(f"nodepool/{POOL}", "spec.limits", pool["spec"]["limits"]),
                  field(f"nodepool/{POOL}", "status.resources", pool["status"]["resources"])],
        labels={"nodepool": POOL, "resource_type": "nvidia.com/gpu", "used": "32", "limit": "32"})
    return Diagnosis(target=job, summary=finding.title, findings=[finding])


def pending(job: str, pods: int, *, kind: str = "pytorchjob", namespace: str = "llm") -> Problem:
    names = tuple(f"{job}-worker-{i}" for i in range(pods)) if kind != "pod" else (job,)
    group = PendingGroup(kind=kind, namespace=namespace, name=job, pods=names, pending_for=900.0)
    problem = pending_alert(group, limit_diagnosis(group.target), cluster="prod")
    assert problem is not None
    return problem


def storm(sizes: dict[str, int]) -> list[Problem]:
    return [pending(job, n) for job, n in sizes.items()] + nodepool_problems([full_nodepool()], cluster="prod")


def posts(slack) -> list:
    return [c for c in slack.calls("chat.postMessage") if c.response and c.response.get("ok")]


def test_the_cause_is_read_from_structured_fields():
    [pool_problem] = nodepool_problems([full_nodepool()], cluster="prod")
    assert cause_of(pool_problem) == Cause("limit", POOL)
    assert cause_of(pending("a", 2)) == Cause("limit", POOL)
    # The pod selects another NodePool, the finding's evidence names the one whose limit blocks.
    job = pending("b", 1)
    assert cause_of(Problem(**{**job.__dict__, "nodepool": "gpu-other"})) == Cause("limit", POOL)
    # A remediation's parameter names it where the evidence does not.
    bare = Problem(code="karpenter.nodepool_limit_reached", severity="error", target=Target("pod", "p", "ns"),
                   title="Pending", remediations=(Remediation("nodepool-consolidation", f"nodepool/{POOL}",
                                                              {"nodepool": POOL}),))
    assert cause_of(bare) == Cause("limit", POOL)
    # A title that names a NodePool is prose: with nothing structured, no cause.
    prose = Problem(code="karpenter.nodepool_limit_reached", severity="error", target=Target("pod", "p", "ns"),
                    title=f"NodePool {POOL} is full")
    assert cause_of(prose) is None
    xid = Problem(code="gpu.xid_error", severity="critical", target=Target("node", NODE), title="Xid 79")
    assert cause_of(xid) == Cause("gpu", NODE)
    nodeclass = Problem(code="karpenter.nodeclass_not_ready", severity="error", target=Target("pytorchjob", "j", "llm"),
                        title="not Ready", evidence=(Evidence("ec2nodeclass/gpu-al2023 status.conditions", "[]"),))
    assert cause_of(nodeclass) == Cause("nodeclass", "gpu-al2023")
    [ice] = parse_webhook(encode(webhook(alert({
        "alertname": "KarpenterProvisioningFailed", "reason": "insufficient_capacity", "nodepool": "gpu",
        "instance_type": "p5.48xlarge", "zone": "us-east-1a", "capacity_type": "spot"})))).alerts
    assert cause_of(ice.problem) == Cause("offering", "p5.48xlarge/us-east-1a/spot")


@pytest.mark.parametrize("sizes", [{"llama-70b": 8, "mixtral": 8, "bert": 4}, {f"pod-{i}": 1 for i in range(20)}],
                         ids=["3 jobs", "20 bare pods"])
def test_a_storm_of_20_pods_on_one_nodepool_limit_is_one_message(engine, slack, clock, sizes):
    notifier = make(engine, slack, clock, digest_after=10)
    problems = storm(sizes) if "llama-70b" in sizes else (
        [pending(name, 1, kind="pod") for name in sizes] + nodepool_problems([full_nodepool()], cluster="prod"))
    summary = notifier.sweep_seen(problems, "prod")
    assert (summary.posted, summary.digests) == (1, 0)
    [post] = posts(slack)
    jobs = "3 jobs" if "llama-70b" in sizes else None
    expected = f"NodePool {POOL} has used all 32 of its GPUs: 20 pods of {jobs} wait on it" if jobs else (
        f"NodePool {POOL} has used all 32 of its GPUs: 20 pods wait on it")
    assert post.args["text"] == f"[error] {expected}"
    blocks = post.args["blocks"]
    assert expected in blocks[0]["text"]["text"]
    assert block_problems(blocks) == []
    # No code name, fingerprint or storm key in the headline; the codes are in the context line.
    assert "karpenter." not in blocks[0]["text"]["text"] and "@" not in post.args["text"]
    assert "`karpenter.nodepool_limit_reached`" in json.dumps(blocks[2])
    if jobs and os.environ.get("GPUBOT_PRINT_BLOCKS"):
        print(json.dumps(blocks, indent=1))

    # Four more pods of one job wait: the one message is updated in place, nothing else is posted.
    slack.reset()
    clock.now += timedelta(minutes=1)
    grown = dict(sizes)
    if jobs:
        grown[next(iter(grown))] += 4
    else:
        grown.update({f"pod-{i}": 1 for i in range(20, 24)})
    problems = storm(grown) if jobs else (
        [pending(name, 1, kind="pod") for name in grown] + nodepool_problems([full_nodepool()], cluster="prod"))
    notifier.sweep_seen(problems, "prod")
    assert posts(slack) == []
    [update] = slack.calls("chat.update")
    assert update.args["ts"] == post.response["ts"] and "24 pods" in update.args["text"]


def test_a_sweep_finding_and_an_alertmanager_alert_about_one_nodepool_are_one_message(engine, slack, clock):
    notifier = make(engine, slack, clock)
    notifier.sweep_seen(storm({"llama-70b": 16}), "prod")
    [post] = posts(slack)
    slack.reset()
    # Karpenter's limit alert, scraped from the controller's pod: its target is that pod, its cause the NodePool.
    body = encode(webhook(alert({"alertname": "GPUNodePoolNearLimit", "nodepool": POOL, "severity": "warning",
                                 "namespace": "kube-system", "pod": "karpenter-7d9f8-abcde"},
                                annotations={"summary": f"NodePool {POOL} uses 100% of its nvidia.com/gpu limit"})))
    batch = parse_webhook(body, cluster="prod")
    notifier.alertmanager([(a.problem, a.status) for a in batch.by_problem()])
    assert posts(slack) == []
    [update] = slack.calls("chat.update")
    assert update.args["ts"] == post.response["ts"]
    assert update.args["text"] == f"[error] NodePool {POOL} has used all 32 of its GPUs: 16 pods of 1 job wait on it"
    assert "karpenter-7d9f8-abcde" in json.dumps(update.args["blocks"])  # the alert is listed in the one message


def test_a_sweeps_gpu_failure_and_dcgms_xid_alert_about_one_node_are_one_message(engine, slack, clock):
    notifier = make(engine, slack, clock)
    sweep_xid = Problem(code="gpu.unhealthy_device", severity="error", target=Target("node", NODE), cluster="prod",
                        title=f"Node {NODE} reports 7 of 8 GPUs", group=f"node/{NODE}",
                        evidence=(field(f"node/{NODE}", "status.allocatable", {"nvidia.com/gpu": "7"}),))
    notifier.sweep_seen([sweep_xid], "prod")
    [post] = posts(slack)
    slack.reset()
    body = encode(webhook(alert({"alertname": "GPUXidError", "Hostname": NODE, "gpu": "3", "severity": "critical"},
                                annotations={"summary": f"GPU 3 on {NODE} reported Xid 79"})))
    batch = parse_webhook(body, cluster="prod")
    notifier.alertmanager([(a.problem, a.status) for a in batch.by_problem()])
    assert posts(slack) == []
    [update] = slack.calls("chat.update")
    assert update.args["ts"] == post.response["ts"]
    assert update.args["text"] == f"[critical] Node {NODE} has a failing GPU (2 problems)"
