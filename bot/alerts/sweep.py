"""One sweep of the cluster: the bounded reads of bot/gateway/sweep_reads.py, the pure detectors of
playbooks/sweep, and the diagnosis engine for GPU pods Pending too long. Posts nothing; returns the
problems and what could not be checked, for `gpubot sweep --once` and the leader's sweep timer.

Every read may fail alone (403, Karpenter absent or at another version): the sweep goes on without it
and says "not checked: <what> (<why>)". So may every detector, on objects it cannot read (a hostile
Event, a malformed field): the detectors turn one bad item into a gap themselves, and a detector that
still fails is a gap, not the end of the sweep. A cluster that does not answer at all raises
ClusterUnreachable.
"""
from __future__ import annotations

import dataclasses
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, TypeVar

from bot.errors import ClusterUnreachable, GpubotError
from bot.gateway.sweep_reads import SweepReads
from bot.settings import Settings
from playbooks.fleet import is_gpu_nodepool
from playbooks.gather import Listed, ReadFailed
from playbooks.model import SEVERITIES
from playbooks.problems import Problem
from playbooks.sweep.exposure import consolidation_exposure, exposure_problems
from playbooks.sweep.merge import merge
from playbooks.sweep.nodeclaims import nodeclaim_problems
from playbooks.sweep.nodepools import nodepool_problems
from playbooks.sweep.nodes import node_problems
from playbooks.sweep.objects import labels_of, name_of
from playbooks.sweep.pods import PendingGroup, pending_groups, pending_problem

if TYPE_CHECKING:
    from bot.service import DiagnosisService

log = logging.getLogger(__name__)
T = TypeVar("T")

# Pending jobs diagnosed per sweep (a diagnosis costs tens of requests); the oldest first, so the same
# ones every sweep, the rest named as not diagnosed.
MAX_DIAGNOSES_PER_SWEEP = 8
# Nodes whose running pods are read for consolidation exposure (one request each) per sweep.
MAX_EXPOSURE_NODES = 100
# Caps on the listed objects (pagination stops there and says so).
MAX_GPU_NODES = 10000
MAX_NODE_WARNINGS = 5000
MAX_PENDING_PODS = 5000
MAX_NODEPOOLS = 500
MAX_NODECLAIMS = 10000
MAX_PODS_PER_NODE = 250
PARALLEL_READS = 4
NODEPOOL_LABELS = ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name")


@dataclass
class SweepResult:
    problems: list[Problem] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)  # "not checked: <what> (<why>)"
    requests: int = 0  # list requests of the sweep's own reads (diagnoses of pending pods not counted)
    diagnosed: int = 0  # pending jobs diagnosed this sweep
    cluster: str = ""


def sweep(service: "DiagnosisService", settings: Settings, *, context: str | None = None,
          now: datetime | None = None, max_diagnoses: int = MAX_DIAGNOSES_PER_SWEEP) -> SweepResult:
    """One sweep of the cluster of ``context`` (None: the current one, or in-cluster)."""
    now = now or datetime.now(timezone.utc)
    gateway = service.gateway(context)
    reads = SweepReads(gateway)
    result = SweepResult(cluster=gateway.name)
    cluster = gateway.name

    def attempt(what: str, fn: Callable[[], T], default: T) -> T:
        try:
            value = fn()
        except (ReadFailed, GpubotError) as exc:
            if isinstance(exc, ClusterUnreachable):
                raise
            result.not_checked.append(f"not checked: {what} ({_why(exc)})")
            return default
        if isinstance(value, Listed) and value.more:
            result.not_checked.append(f"not checked: {value.more} more {what} (over the sweep's cap of {len(value)})")
        return value

    def detect(what: str, fn: Callable[[], list[Problem]]) -> list[Problem]:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - a detector's bug or a hostile object: a gap, logged in full
            log.exception("sweep detector for %s failed", what)
            result.not_checked.append(f"not checked: {what} (could not read them: {type(exc).__name__}: "
                                      f"{str(exc)[:200]})")
            return []

    problems: list[Problem] = []
    nodes = attempt("GPU nodes", lambda: reads.gpu_nodes(max_items=MAX_GPU_NODES), Listed())
    warnings = attempt("warning events of GPU nodes", lambda: reads.node_warnings(max_items=MAX_NODE_WARNINGS),
                       Listed())
    problems += detect("GPU nodes", lambda: node_problems(list(nodes), list(warnings), cluster=cluster, now=now,
                                                          gaps=result.not_checked))

    nodepools = attempt("NodePools", lambda: reads.nodepools(max_items=MAX_NODEPOOLS), None)
    if nodepools is None:
        result.not_checked.append("not checked: NodeClaims and consolidation of training pods (NodePools unread)")
    else:
        gpu_pools = {name_of(np): np for np in nodepools if is_gpu_nodepool(np)}
        problems += detect("NodePools", lambda: nodepool_problems(list(gpu_pools.values()), cluster=cluster))
        claims = attempt("NodeClaims", lambda: reads.nodeclaims(sorted(gpu_pools), max_items=MAX_NODECLAIMS), Listed())
        problems += detect("NodeClaims", lambda: nodeclaim_problems(list(claims), cluster=cluster, now=now))
        problems += _exposure(reads, nodes, gpu_pools, cluster=cluster, result=result)

    pending = attempt("pending pods", lambda: reads.pending_pods(max_items=MAX_PENDING_PODS), Listed())
    groups = pending_groups(list(pending), now=now, pending_after=settings.sweep_pending_after)
    problems += _diagnose_pending(service, groups, context=context, cluster=cluster, result=result,
                                  max_diagnoses=max_diagnoses)

    result.problems = sorted(merge(problems), key=lambda p: (SEVERITIES.index(p.severity), p.code, str(p.target)))
    result.requests = reads.requests
    return result


def _why(exc: Exception) -> str:
    if isinstance(exc, ReadFailed):
        return f"{exc.reason}: {exc.detail}" if exc.detail else exc.reason
    return str(exc)


def _exposure(reads: SweepReads, nodes: list[dict], gpu_pools: dict[str, dict], *, cluster: str,
              result: SweepResult) -> list[Problem]:
    """Running training pods on the nodes of GPU NodePools whose consolidation can disrupt them: one
    request per such node, at most MAX_EXPOSURE_NODES a sweep."""
    exposed = {name for name, np in gpu_pools.items() if consolidation_exposure(np) is not None}
    pool_of = {name_of(n): pool for n in nodes
               if (pool := next((labels_of(n)[k] for k in NODEPOOL_LABELS if labels_of(n).get(k)), None)) in exposed}
    names = sorted(pool_of)
    if len(names) > MAX_EXPOSURE_NODES:
        result.not_checked.append(f"not checked: training pods on {len(names) - MAX_EXPOSURE_NODES} more nodes of "
                                  f"consolidating NodePools (at most {MAX_EXPOSURE_NODES} nodes a sweep)")
        names = names[:MAX_EXPOSURE_NODES]
    if not names:
        return []
    refused: list[str] = []

    def read(node: str) -> list[dict]:
        try:
            return list(reads.running_pods_on(node, max_items=MAX_PODS_PER_NODE))
        except ReadFailed as exc:
            refused.append(_why(exc))
            return []

    with ThreadPoolExecutor(max_workers=PARALLEL_READS) as pool:
        pods = [p for listed in pool.map(read, names) for p in listed]
    if refused:
        result.not_checked.append(f"not checked: running pods on {len(refused)} node(s) of consolidating NodePools "
                                  f"({refused[0]})")
    return exposure_problems(pods, nodepool_of_node=pool_of, nodepools=gpu_pools, cluster=cluster)


def _diagnose_pending(service: "DiagnosisService", groups: list[PendingGroup], *, context: str | None, cluster: str,
                      result: SweepResult, max_diagnoses: int) -> list[Problem]:
    chosen, left = groups[:max(max_diagnoses, 0)], groups[max(max_diagnoses, 0):]
    if left:
        named = ", ".join(f"{g.kind}/{g.namespace}/{g.name}" for g in left[:5]) + (" ..." if len(left) > 5 else "")
        result.not_checked.append(f"not checked: {len(left)} more pending GPU job(s) not diagnosed this sweep "
                                  f"(at most {max_diagnoses} a sweep): {named}")

    def diagnose(group: PendingGroup):
        try:
            return group, service.diagnose(group.diagnose_target, namespace=group.namespace, context=context), None
        except ClusterUnreachable:
            raise
        except (ReadFailed, GpubotError) as exc:
            return group, None, _why(exc)
        except Exception as exc:  # noqa: BLE001 - one job's diagnosis failing is its gap, logged in full
            log.exception("sweep diagnosis of %s failed", group.describe())
            return group, None, f"{type(exc).__name__}: {str(exc)[:200]}"

    problems = []
    with ThreadPoolExecutor(max_workers=PARALLEL_READS) as pool:
        for group, diagnosis, failed in pool.map(diagnose, chosen):
            if diagnosis is None:
                result.not_checked.append(f"not checked: why {group.describe()} is Pending "
                                          f"(diagnosis failed: {failed})")
                continue
            result.diagnosed += 1
            problem = pending_alert(group, diagnosis, cluster=cluster)
            if problem is None:
                result.not_checked.append(f"not checked: why {group.describe()} is Pending (the diagnosis found "
                                          "no cause; gpubot diagnose it for the details)")
            else:
                problems.append(problem)
    return problems


def pending_alert(group: PendingGroup, diagnosis, *, cluster: str) -> Problem | None:
    """The problem a Pending group is, with its pods counted: a message about its cause says how many
    pods wait on it ("16 pods of 3 jobs")."""
    problem = pending_problem(group, diagnosis, cluster=cluster)
    return dataclasses.replace(problem, pods=len(group.pods)) if problem is not None else None
