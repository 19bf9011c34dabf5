"""The batch layers' own vocabulary: Kueue, Volcano, JobSet, the Kubeflow training operator (v1, PyTorchJob)
and Trainer (v2, TrainJob), LeaderWorkerSet: their condition types and reasons, the event reasons and
messages their controllers record, and the messages Kueue writes into a pending Workload's condition.

Read from source at the last patch tag of the newest minor series each mirror holds (TAGS below):
- condition types / reasons: the string constants of the API and constants files in CONSTS;
- events: every ``Event``/``Eventf``/``RecordPodGroupEvent`` call of the controller files in EVENTS whose
  reason and message are literal text or named constants;
- condition messages: the formats Kueue's flavor assigner builds (pkg/scheduler/flavorassigner), which
  become the QuotaReserved=False (reason Pending) message, and the few fixed sites in SITES.
"""
from __future__ import annotations

import re
from pathlib import Path

from scripts.cluster_tables.common import git, mirror, row, show
from scripts.cluster_tables.sources.gpu_stack import calls, letters, line_of, literal, merge

NAME = "batch"
MIRRORS = ("github:kubernetes-sigs/kueue", "github:volcano-sh/volcano", "github:kubernetes-sigs/jobset",
           "github:kubeflow/trainer", "github:kubernetes-sigs/lws")

# kubeflow/trainer holds both generations: v1.9 is the training operator (PyTorchJob), v2.x Trainer.
TAGS = {
    "kubernetes-sigs/kueue": ("v0.19.2", "v0.18.6", "v0.17.8"),
    "volcano-sh/volcano": ("v1.15.1", "v1.14.4", "v1.13.3"),
    "kubernetes-sigs/jobset": ("v0.12.0", "v0.11.1", "v0.10.1"),
    "kubeflow/trainer": ("v2.3.0", "v2.2.1", "v1.9.4"),
    "kubernetes-sigs/lws": ("v0.10.0", "v0.9.0", "v0.8.0"),
}

# (repo, component, path, constant-name regex, kind, reason prefix). The training operator v1 names its
# reasons NewReason(kind, reason) = kind + reason (pkg/util/status.go): PyTorchJob's are read here.
CONSTS = (
    ("kubernetes-sigs/kueue", "kueue", "apis/kueue/v1beta2/workload_types.go",
     r"^(Workload\w*|\w+Reason)$", "condition", ""),
    ("kubernetes-sigs/kueue", "kueue", "apis/kueue/v1beta1/workload_types.go",
     r"^(Workload\w*|\w+Reason)$", "condition", ""),
    ("kubernetes-sigs/jobset", "jobset", "pkg/constants/constants.go", r"Reason$", "condition", ""),
    ("kubernetes-sigs/jobset", "jobset", "api/jobset/v1alpha2/jobset_types.go", r"^JobSet\w+$", "condition", ""),
    ("kubeflow/trainer", "training-operator", "pkg/util/status.go", r"^Job\w+Reason$", "condition", "PyTorchJob"),
    ("kubeflow/trainer", "training-operator", "pkg/apis/kubeflow.org/v1/common_types.go", r"^Job[A-Z]\w*$",
     "condition", ""),
    ("kubeflow/trainer", "trainer", "pkg/constants/constants.go", r"^TrainJob\w*Reason$", "condition", ""),
    ("kubeflow/trainer", "trainer", "pkg/apis/trainer/v1alpha1/trainjob_types.go", r"^TrainJob\w+$", "condition", ""),
    ("kubernetes-sigs/lws", "lws", "api/leaderworkerset/v1/leaderworkerset_types.go",
     r"^(LeaderWorkerSet\w+|\w+Reason)$", "condition", ""),
)
# (repo, component, path regex) of controller files whose recorded events are read.
EVENTS = (
    ("kubernetes-sigs/kueue", "kueue",
     r"^pkg/(scheduler/scheduler|scheduler/preemption/preemption|controller/core/workload_controller"
     r"|controller/jobframework/reconciler|controller/admissionchecks/provisioning/controller)\.go$"),
    ("volcano-sh/volcano", "volcano",
     r"^pkg/(scheduler/(cache/cache|framework/session|plugins/[^/]+/[^/]+)|controllers/job/[^/]+"
     r"|controllers/podgroup/[^/]+)\.go$"),
    ("kubernetes-sigs/jobset", "jobset", r"^pkg/controllers/[^/]+\.go$"),
    ("kubeflow/trainer", "training-operator", r"^pkg/controller\.v1/(common|pytorch)/[^/]+\.go$"),
    ("kubeflow/trainer", "trainer", r"^pkg/(controller|runtime/framework/plugins/jobset)/[^/]+\.go$"),
    ("kubernetes-sigs/lws", "lws", r"^pkg/controllers/[^/]+\.go$"),
)
_EVENT = re.compile(r"(?<![\w])(?:[\w.]*[Rr]ecorder|[\w.]*[Rr]ecord|\w+)\.(Eventf|Event|RecordPodGroupEvent"
                    r"|recordPodGroupEvent)\(")
_EVENT_TYPE = re.compile(r"EventType(Warning|Normal)$")
# Kueue's flavor assigner: the formats that end in the Workload's QuotaReserved=False message, whose
# reason is Pending (WorkloadPending, workload_types.go).
FLAVOR_FILE = "pkg/scheduler/flavorassigner/flavorassigner.go"
_FLAVOR_MESSAGE = re.compile(r"\b(?:fmt\.Sprintf|fmt\.Errorf|NewStatus|WriteString|appendf|append)\(")
# Fixed sites whose message is built apart from its reason: (repo, component, kind, reason, type, path,
# the format as in source, literal) — each is looked for at every tag, and kept where found.
SITES = (
    # gang.go: msg := fmt.Sprintf(...) set as the PodGroup condition Unschedulable, reason NotEnoughResources.
    ("volcano-sh/volcano", "volcano", "condition", "NotEnoughResources", "Unschedulable",
     "pkg/scheduler/plugins/gang/gang.go", "%v/%v tasks in gang unschedulable: %v", False),
    ("kubernetes-sigs/kueue", "kueue", "condition", "Pending", "QuotaReserved", FLAVOR_FILE,
     "couldn't assign flavors to pod set ", True),
    ("kubernetes-sigs/kueue", "kueue", "event", "QuotaReserved", "Normal", "pkg/scheduler/scheduler.go",
     "Quota reserved in ClusterQueue %s, wait time since queued was %.0fs", False),
    # failure_policy.go: setJobSetFailedCondition(js, constants.XReason, messageWithFirstFailedJob(XMessage...)).
    ("kubernetes-sigs/jobset", "jobset", "condition", "FailedJobs", "Failed", "pkg/constants/constants.go",
     "jobset failed due to one or more job failures", False),
    ("kubernetes-sigs/jobset", "jobset", "condition", "ReachedMaxRestarts", "Failed", "pkg/constants/constants.go",
     "jobset failed due to reaching max number of restarts", False),
)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _repo_consts(gitdir: Path, tag: str) -> dict[str, str]:
    """Every exported Name = "value" string constant under the repository's Go trees: what an event's
    reason names (commonutil.JobFailedReason, constants.FailedJobsReason). First definition wins."""
    out: dict[str, str] = {}
    text = git(gitdir, "grep", "-h", "-E", r'^\s*(const\s+)?[A-Z]\w*(\s+[A-Za-z.]+)?\s*=\s*"', tag, "--",
               "*.go", ":!*_test.go", ":!vendor")
    for m in re.finditer(r'^\s*(?:const\s+)?([A-Z]\w*)(?:\s+[\w.]+)?\s*=\s*"((?:[^"\\\n]|\\.)*)"', text, re.M):
        out.setdefault(m.group(1), m.group(2))
    return out


def _consts(repo, component, gitdir, tag, path, name_re, kind, prefix) -> list[dict]:
    src = show(gitdir, tag, path)
    if src is None:
        return []
    items = []
    lines = src.splitlines()
    for i, text in enumerate(lines):
        m = re.match(r'^\s*(?:const\s+)?([A-Z]\w*)(?:\s+[\w.]+)?\s*=\s*"((?:[^"\\\n]|\\.)*)"', text)
        if not m or not re.search(name_re, m.group(1)) or m.group(1).endswith(("Message", "Kind")):
            continue
        doc = []
        j = i - 1
        while j >= 0 and lines[j].strip().startswith("//"):
            doc.insert(0, lines[j].strip()[2:].strip())
            j -= 1
        value = m.group(2)
        if not value or not re.fullmatch(r"[A-Za-z][\w-]*", value):
            continue  # labels, annotations, paths: not a reason
        items.append({"component": component, "kind": kind, "reason": prefix + value, "type": "",
                      "message": "", "name": m.group(1), "doc": " ".join(d for d in doc if not d.startswith("+")),
                      "where": [f"{tag}:{path}:{i + 1}"]})
    return items


def _events(component, gitdir, tag, files_re, listing, consts) -> list[dict]:
    items = []
    for path in listing:
        if not re.search(files_re, path) or path.endswith("_test.go"):
            continue
        src = show(gitdir, tag, path) or ""
        for line, m, args in calls(src, _EVENT):
            ti = next((i for i, a in enumerate(args) if _EVENT_TYPE.search(a)), None)
            if ti is None or ti + 2 >= len(args):
                continue
            etype = _EVENT_TYPE.search(args[ti]).group(1)
            reason_expr = args[ti + 1]
            # commonutil.NewReason(kind, reason) = kind + reason (training operator pkg/util/status.go).
            nr = re.match(r"^[\w.]*NewReason\((.*),\s*([\w.]+)\)$", reason_expr, re.S)
            if nr:
                kind_expr, reason_name = nr.group(1).strip(), nr.group(2)
                base = literal(reason_name, consts)
                if base is None:
                    continue
                kind_name = "PyTorchJob" if kind_expr in ("jobKind", "kubeflowv1.PyTorchJobKind") else None
                if kind_name is None:
                    continue
                reason = kind_name + base
            else:
                reason = literal(reason_expr, consts)
            if not reason or not re.fullmatch(r"[A-Za-z][\w-]*", reason):
                continue
            # events/v1 (regarding, related, type, reason, action, note, ...) vs core (obj, type, reason, msg).
            mi = ti + 3 if ti == 2 else ti + 2
            message = literal(args[mi], consts) if mi < len(args) else None
            if message is None or letters(message) < 8 or message == "%s" or "\n" in message.strip():
                message = ""
            items.append({"component": component, "kind": "event", "reason": reason, "type": etype,
                          "message": message, "where": [f"{tag}:{path}:{line}"]})
    return items


def _flavor(gitdir, tag) -> list[dict]:
    src = show(gitdir, tag, FLAVOR_FILE) or ""
    items = []
    for line, m, args in calls(src, _FLAVOR_MESSAGE):
        message = literal(args[0]) if args else None
        if not message or letters(message) < 8 or message.startswith(("illegal", "couldn't assign flavors")):
            continue
        items.append({"component": "kueue", "kind": "condition", "reason": "Pending", "type": "QuotaReserved",
                      "message": message, "where": [f"{tag}:{FLAVOR_FILE}:{line}"]})
    return items


def refresh(mirrors: Path) -> dict:
    gitdirs = {repo: mirror(mirrors, repo) for repo in TAGS}
    items: list[dict] = []
    commits = {}
    for repo, tags in TAGS.items():
        gitdir = gitdirs[repo]
        for tag in tags:
            commits[f"{repo}@{tag}"] = git(gitdir, "rev-parse", f"{tag}^{{commit}}").strip()
            v1 = repo == "kubeflow/trainer" and tag.startswith("v1.")
            listing = git(gitdir, "ls-tree", "-r", "--name-only", tag).split()
            consts = _repo_consts(gitdir, tag)
            for c_repo, component, path, name_re, kind, prefix in CONSTS:
                if c_repo == repo and (repo != "kubeflow/trainer" or (component == "training-operator") == v1):
                    items.extend(_consts(repo, component, gitdir, tag, path, name_re, kind, prefix))
            for e_repo, component, files_re in EVENTS:
                if e_repo == repo and (repo != "kubeflow/trainer" or (component == "training-operator") == v1):
                    items.extend(_events(component, gitdir, tag, files_re, listing, consts))
            if repo == "kubernetes-sigs/kueue":
                items.extend(_flavor(gitdir, tag))
            for s_repo, component, kind, reason, typ, path, message, is_literal in SITES:
                if s_repo != repo:
                    continue
                src = show(gitdir, tag, path) or ""
                line = line_of(src, _quoted(message))
                if line is not None:
                    items.append({"component": component, "kind": kind, "reason": reason, "type": typ,
                                  "message": message, "literal": is_literal, "where": [f"{tag}:{path}:{line}"]})
    tagged = "; ".join(f"{repo} {', '.join(tags)}" for repo, tags in TAGS.items())
    return {"source": f"upstream source at {tagged}", "commits": commits, "items": merge(items)}


# ------------------------------------------------------------------------------------------------ classing
_GATED = "scheduling.gated"
_KUEUE_UPGRADE = ("kubectl get workload -n <ns> -o yaml (status.conditions, status.admission); kubectl describe "
                  "clusterqueue <cq> (pending workloads, usage against nominal quota).")
# (component regex, reason regex, message regex, fields). First match wins.
RULES: tuple[tuple[str, str, str, dict], ...] = (
    # --- Kueue (apis/kueue/v1beta2/workload_types.go, pkg/scheduler/flavorassigner)
    ("kueue", r"^(Pending|WaitingForQuota|NoMatchingFlavor|ExceedsMaxQuota|Inadmissible)$",
     r"(?i)insufficient|unavailable|exceed|quota|more needed",
     dict(level="warning", owner="capacity", code=_GATED,
          meaning="Kueue keeps the workload suspended: its ClusterQueue has no flavor with enough free quota "
                  "for the pod set's requests (nvidia.com/gpu most often), so the job's pods are not created.",
          next="Compare the pod set's requests with the ClusterQueue's nominalQuota per flavor (kubectl describe "
               "clusterqueue); lower the request, raise the quota or borrowing limit, or wait for running "
               "workloads to finish.",
          upgrade=_KUEUE_UPGRADE)),
    ("kueue", r"^Pending$", r"(?i)node affinity|taint|not found|doesn't match|annotation|nomination",
     dict(level="warning", owner="spec", code=_GATED,
          meaning="Kueue skipped a ResourceFlavor for the pod set: the flavor's node labels or taints do not "
                  "fit the job's nodeSelector / affinity / tolerations, so the workload waits.",
          next="Compare the pod set's nodeSelector and tolerations with the ResourceFlavors of the "
               "ClusterQueue (kubectl get resourceflavor -o yaml).",
          upgrade=_KUEUE_UPGRADE)),
    ("kueue", r"^(ExceedsMaxQuota|Misconfigured|NoMatchingFlavor|TopologyPlacementFailed|Inadmissible)$", r"",
     dict(level="error", owner="spec", code=_GATED,
          meaning="Kueue cannot admit the workload as configured: it asks more than the ClusterQueue can ever "
                  "give, no flavor matches its node selectors / tolerations, or its queue is misconfigured.",
          next="Read the condition's message; fix the job's requests or selectors, or the ClusterQueue / "
               "ResourceFlavor / LocalQueue it names.",
          upgrade=_KUEUE_UPGRADE)),
    # The condition types themselves (QuotaReserved, Admitted): routine when True; their False reasons
    # (Pending, NoReservation ...) carry the class. The QuotaReserved event says quota was reserved.
    ("kueue", r"^(QuotaReserved|Admitted)$", r"",
     dict(level="normal", owner="benign", code=None,
          meaning="Kueue reserved quota for the workload or admitted it: its pods are being created.",
          next="Nothing to do.", upgrade="")),
    ("kueue", r"^(Pending|WaitingForQuota|WaitingForPreemptedWorkloads|PendingEvaluation|WaitingForPodsReady"
              r"|NoReservation|UnsatisfiedAdmissionChecks|PendingDelayedTopologyRequests|AdmissionGated|OnHold"
              r"|Waiting|BlockedOnPreemptionGates|Suspended|QuotaReserved)$", r"",
     dict(level="warning", owner="capacity", code=_GATED,
          meaning="Kueue has not admitted the workload yet (no quota reserved, admission checks pending or "
                  "waiting for preempted workloads): the job stays suspended on purpose.",
          next="Read the Workload's QuotaReserved / Admitted condition message; wait, or free or raise quota "
               "in the ClusterQueue.",
          upgrade=_KUEUE_UPGRADE)),
    ("kueue", r"^(Evicted|Preempted|PodsReadyTimeout|ClusterQueueStopped|LocalQueueStopped|NodeFailures"
              r"|AdmissionCheck|InClusterQueue|InCohortReclamation|InCohortFairSharing|InCohortReclaimWhileBorrowing"
              r"|FlavorMigration|EvictedOnManagerCluster|Requeued|Deactivated|DeactivationTarget"
              r"|RequeuingLimitExceeded|MaximumExecutionTimeExceeded|AdmissionCheckRejected|SecondPassFailed)$", r"",
     dict(level="error", owner="capacity", code=None,
          meaning="Kueue evicted or deactivated the admitted workload (preempted by a higher-priority or "
                  "reclaiming workload, pods not ready in time, queue stopped, node failures, execution time "
                  "limit): its pods were deleted and the job is suspended again.",
          next="Read the Evicted condition's reason and message; for preemption check priorities and cohort "
               "borrowing, for PodsReadyTimeout why the pods did not start (image pull, scheduling).",
          upgrade=_KUEUE_UPGRADE + " Events of the Workload.")),
    ("kueue", r"^(Admitted|QuotaReserved|Started|Finished|Succeeded|PodsReady|CreatedWorkload|UpdatedWorkload"
              r"|FinishedWorkload|DeletedWorkload|Deleted|Stopped|Suspended|Resumed|Reactivated|BackoffFinished"
              r"|Recovered|UpdatedAdmissionCheck|AdmissionGateCleared|ProvisioningRequestCreated|PreemptedWorkload"
              r"|ClusterQueueRestarted|LocalQueueRestarted|WorkloadSliceReplaced|WaitForStart|WaitForRecovery"
              r"|OutOfSync|OwnerNotFound)$", r"",
     dict(level="normal", owner="benign", code=None,
          meaning="Kueue's routine bookkeeping: the workload created, admitted, started, finished or updated.",
          next="Nothing to do.", upgrade="")),
    ("kueue", r"^(Failed|FailedCreate|ErrWorkloadCompose|JobNestingTooDeep|WorkloadNameConflict)$", r"",
     dict(level="error", owner="spec", code=None,
          meaning="Kueue could not manage the job (workload not composed, provisioning request not created) or "
                  "the workload finished failed.",
          next="Read the event's message and the job's own failure; fix the job spec it names.",
          upgrade=_KUEUE_UPGRADE)),
    # --- Volcano (scheduler gang plugin, cache, job controller)
    ("volcano", r"^(NotEnoughResources|Unschedulable|FailedScheduling|PodGroupPending)$", r"",
     dict(level="warning", owner="capacity", code=None,
          meaning="Volcano cannot place the whole gang: fewer than minAvailable tasks fit the free resources "
                  "(or the queue's quota), so none of the job's pods start.",
          next="Read the message's fit errors (per node: Insufficient nvidia.com/gpu, taints, selectors); lower "
               "minAvailable or the requests, raise the queue's capability, or add nodes.",
          upgrade="kubectl get podgroup -n <ns> -o yaml (status.conditions); kubectl get queue -o yaml.")),
    ("volcano", r"(?i)fail|error|evict|abort|kill|restart|OOM|Unhealthy", r"",
     dict(level="error", owner="spec", code=None,
          meaning="Volcano's job controller took a failure action on the job (a pod failed, was evicted or the "
                  "job was aborted / restarted by its policies).",
          next="Read the failed pod's last state and logs; check the job's policies (PodFailed / PodEvicted "
               "actions, maxRetry).",
          upgrade="kubectl get vcjob -n <ns> -o yaml (status.state, conditions); the failed pod's describe.")),
    # --- JobSet (pkg/constants/constants.go)
    ("jobset", r"^ExclusivePlacementViolation$", r"",
     dict(level="warning", owner="platform", code=None,
          meaning="A child Job's pods landed outside the topology domain exclusive placement asked for; JobSet "
                  "restarts the JobSet to place them again.",
          next="Check the exclusive-topology annotation against the nodes' topology labels and free capacity "
               "per domain.",
          upgrade="kubectl get jobset -o yaml (status.restarts, conditions); the pods' nodes and their labels.")),
    ("jobset", r"^(FailedJobs|ReachedMaxRestarts|FailurePolicyRuleAction\w*|\w*Failed\w*)$", r"",
     dict(level="error", owner="spec", code=None,
          meaning="The JobSet failed: one of its child Jobs failed and its failure policy does not restart it "
                  "(or restarts are exhausted).",
          next="Find the first failed child Job named in the message and read its failed pod's logs and exit "
               "code; raise failurePolicy.maxRestarts only when the failure is transient.",
          upgrade="kubectl get jobset -o yaml (status.conditions, restarts); the first failed pod's logs.")),
    ("jobset", r"(?i)suspend|resum|complete|succeed|restart|startup|inorder|coordinat|create|delete", r"",
     dict(level="normal", owner="benign", code=None,
          meaning="The JobSet's routine progress (created, suspended, resumed, completed, restarting by policy).",
          next="Nothing to do.", upgrade="")),
    # --- training operator v1 (pkg/util/status.go, PyTorchJob)
    ("training-operator", r"^(PyTorchJobFailed|Failed|ExitedWithCode|PyTorchJobFailedValidation|FailedValidation"
                          r"|FailedDelete\w*|FailedCreate\w*|SetPodTemplate\w+)$", r"",
     dict(level="error", owner="spec", code=None,
          meaning="The training operator marked the PyTorchJob failed: a replica's pod failed beyond its "
                  "restart policy / backoffLimit, or the spec failed validation.",
          next="Read the failed replica's pod logs and exit code (kubectl logs <job>-master-0 --previous); "
               "fix the spec for FailedValidation.",
          upgrade="kubectl get pytorchjob -o yaml (status.conditions, replicaStatuses); the first failed pod.")),
    ("training-operator", r"^(PyTorchJobSuspended|Suspended)$", r"",
     dict(level="warning", owner="spec", code=_GATED,
          meaning="The PyTorchJob is suspended (runPolicy.suspend, or Kueue holding it): its pods are not "
                  "created until it is resumed.",
          next="If Kueue manages it, read the Workload's conditions; otherwise set runPolicy.suspend=false.",
          upgrade="kubectl get pytorchjob -o jsonpath='{.spec.runPolicy.suspend}'; the job's Workload.")),
    ("training-operator", r"^(PyTorchJobRestarting|Restarting)$", r"",
     dict(level="warning", owner="transient", code=None,
          meaning="A replica of the PyTorchJob failed and is being restarted by its restart policy.",
          next="Read the previous container's log of the restarting replica; watch whether it keeps restarting.",
          upgrade="The replica's restartCount and --previous logs.")),
    ("training-operator", r"", r"",
     dict(level="normal", owner="benign", code=None,
          meaning="The training operator's routine bookkeeping (job created, running, succeeded, resumed).",
          next="Nothing to do.", upgrade="")),
    # --- Trainer v2 (pkg/constants/constants.go, trainjob_types.go)
    ("trainer", r"(?i)Suspended", r"",
     dict(level="warning", owner="spec", code=_GATED,
          meaning="The TrainJob is suspended (spec.suspend, or Kueue holding it): its JobSet is not running.",
          next="If Kueue manages it, read the Workload's conditions; otherwise set spec.suspend=false.",
          upgrade="kubectl get trainjob -o yaml (status.conditions).")),
    ("trainer", r"(?i)Failed|DeadlineExceeded|Error|NotSupported", r"",
     dict(level="error", owner="spec", code=None,
          meaning="The TrainJob failed (its JobSet failed, its active deadline passed, or its runtime could "
                  "not be built).",
          next="Read the TrainJob's Failed condition message and the first failed pod's logs.",
          upgrade="kubectl get trainjob -o yaml; kubectl get jobset -o yaml of the same name.")),
    ("trainer", r"", r"",
     dict(level="normal", owner="benign", code=None, meaning="The TrainJob's routine progress.",
          next="Nothing to do.", upgrade="")),
    # --- LeaderWorkerSet
    ("lws", r"(?i)fail|error|conflict", r"",
     dict(level="error", owner="platform", code=None,
          meaning="The LeaderWorkerSet controller could not create or update a group's objects (leader "
                  "StatefulSet, revision, worker pods).",
          next="Read the event's message and the lws-controller-manager log.",
          upgrade="kubectl get lws -o yaml (status.conditions); the controller's log.")),
)


def classify_item(item: dict) -> dict:
    component = item["component"]
    for rc, reason_re, message_re, fields in RULES:
        if rc != component:
            continue
        if reason_re and not re.search(reason_re, item["reason"]):
            continue
        if message_re and not re.search(message_re, item["message"] or ""):
            continue
        out = dict(fields)
        # A Warning event is never routine, whatever its reason says.
        if out["level"] == "normal" and item.get("type") == "Warning":
            break
        return out
    who = {"kueue": "Kueue", "volcano": "Volcano", "jobset": "JobSet", "training-operator": "The training operator",
           "trainer": "Trainer", "lws": "The LeaderWorkerSet controller"}.get(component, component)
    if item.get("type") == "Warning":
        return dict(level="warning", owner="platform", code=None,
                    meaning=f"{who} recorded a warning about the object: something it manages did not go as "
                            "planned, nothing stopped yet.",
                    next="Read the event's message and the object's status conditions.",
                    upgrade="kubectl describe on the object; its controller's log.")
    return dict(level="normal", owner="benign", code=None,
                meaning=f"{who}'s routine status or bookkeeping.", next="Nothing to do.", upgrade="")


def classify(snapshot: dict) -> list[dict]:
    rows = []
    for item in snapshot["items"]:
        c = classify_item(item)
        meaning = c["meaning"]
        if item.get("doc"):
            meaning = f"{meaning} (upstream: {item['doc']})"
        rows.append(row(component=item["component"], kind=item["kind"], reason=item["reason"], level=c["level"],
                        message=item["message"], owner=c["owner"], meaning=meaning, next_step=c["next"],
                        upgrade=c["upgrade"], code=c["code"], where=item["where"],
                        literal=bool(item.get("literal"))))
    return rows
