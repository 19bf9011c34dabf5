"""Pods held before scheduling on purpose: scheduling gates, Kueue admission, suspended jobs.

While a pod is held, no node or NodePool matters yet: these signals say who holds it.

Sources: kubernetes/kubernetes pkg/registry/core/pod/strategy.go (``PodScheduled=False``, reason
``SchedulingGated``, ``Scheduling is blocked due to non-empty scheduling gates``, 1.26+);
kubernetes-sigs/kueue pkg/scheduler/scheduler.go and flavorassigner (``couldn't assign flavors to pod
set <ps>: ...`` on the Workload's ``QuotaReserved=False`` condition, reason ``Pending``),
``ClusterQueue <cq> is inactive`` / ``... not found`` (reason ``Inadmissible``), pkg/controller/
jobframework/reconciler.go (``Not admitted by cluster queue``, job event ``Stopped``); kubeflow/
training-operator pkg/controller.v1/common (condition ``Suspended``, reason ``<Kind>Suspended``,
``<Kind> <name> is suspended.``); kubernetes/kubernetes pkg/controller/job (condition ``Suspended``,
reason ``JobSuspended``, ``Job suspended``; event ``Suspended``); kubeflow/trainer (TrainJob
``Suspended``).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule, Verdict


_ADMITTED = linear.compile(r"QuotaReserved\s+True|status=True")
_RESUMED = linear.compile(r"\bSuspended\s+False\b|status=False|\"status\":\s?\"False\"|Resumed")


def _kueue(fields: dict[str, str], text: str) -> Verdict | None:
    if _ADMITTED.search(text):
        return None
    hold = {"hold": "kueue"}
    if fields.get("resource"):
        return Verdict(title="Kueue holds the job: not enough quota for {resource}[ in flavor {flavor}]", fields=hold)
    if "inactive" in text or "not found" in text or "doesn't exist" in text:
        return Verdict(severity="error", title="Kueue cannot admit the job: its queue is inactive or missing[ ({queue})]", fields=hold)
    return Verdict(fields=hold)


def _suspended(fields: dict[str, str], text: str) -> Verdict | None:
    # A resumed job keeps a Suspended condition with status False (reason JobResumed / Resumed).
    if _RESUMED.search(text):
        return None
    return Verdict(fields={"hold": "suspended"})


RULES: tuple[Rule, ...] = (
    Rule(
        name="pod.scheduling_gated",
        code="scheduling.gated",
        severity="warning",
        confidence="high",
        title="Pod is held by schedulingGates[ ({gate})]: the scheduler ignores it until every gate is removed",
        keywords=("SchedulingGated", "non-empty scheduling gates"),
        extract=(linear.compile(r"(?:schedulingGates|Scheduling Gates):?\s*\[?\{?(?:\"?name\"?:\s*\"?)?(?P<gate>[a-z0-9][a-z0-9./-]{1,253})"),),
        refine=lambda f, t: Verdict(fields={"hold": "gates"}),
        fields_doc="hold (gates), gate (when the line names it)",
        example="PodScheduled  False  SchedulingGated  Scheduling is blocked due to non-empty scheduling gates",
    ),
    Rule(
        name="kueue.not_admitted",
        code="scheduling.gated",
        severity="warning",
        confidence="high",
        title="Kueue has not admitted the job's workload yet",
        keywords=("couldn't assign flavors", "Not admitted by cluster queue", "not admitted by cluster queue", "QuotaReserved", "Inadmissible"),
        pattern=linear.compile(r"couldn't assign flavors|[Nn]ot admitted by cluster queue|QuotaReserved\s+False|type=QuotaReserved|Inadmissible"),
        extract=(
            linear.compile(r"pod set (?P<podset>[a-z0-9][a-z0-9-]{0,62})"),
            linear.compile(r"quota for (?P<resource>[a-z0-9./-]{1,100}) in flavor (?P<flavor>[A-Za-z0-9._-]{1,253})"),
            linear.compile(r"limit for (?P<resource>[a-z0-9./-]{1,100}) in flavor (?P<flavor>[A-Za-z0-9._-]{1,253})"),
            linear.compile(r"(?P<queue>(?:ClusterQueue|LocalQueue) [a-z0-9][a-z0-9.-]{0,252})"),
        ),
        refine=_kueue,
        fields_doc="hold (kueue), podset, resource, flavor, queue",
        example="Message: couldn't assign flavors to pod set worker: insufficient unused quota for nvidia.com/gpu in flavor a100, 8 more needed",
    ),
    Rule(
        name="job.suspended",
        code="scheduling.gated",
        severity="warning",
        confidence="high",
        title="The job is suspended: its pods are not created until it is resumed",
        keywords=("JobSuspended", "is suspended.", "Job suspended", "Suspended"),
        pattern=linear.compile(r"(?:\w+)?JobSuspended|\w+ \S+ is suspended\.|Job suspended|Suspended\s+True|type=Suspended"),
        extract=(linear.compile(r"(?P<kind>[A-Z]\w{1,40}Job) (?P<job>[a-z0-9][a-z0-9./-]{0,252}) is suspended"),),
        refine=_suspended,
        fields_doc="hold (suspended), kind, job",
        example="Suspended  True  PyTorchJobSuspended  PyTorchJob default/llama-3-8b is suspended.",
    ),
)
