"""The diagnosis engine: resolve a target, gather facts, run analyzers, order findings."""
from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Callable, Protocol

from playbooks.analyzers import unrecognised
from playbooks.analyzers.owners import OWNER_KINDS
from playbooks.codes import precedence
from playbooks.consequences import follow_causes
from playbooks.facts import Facts
from playbooks.gather import Catalog, Gateway, Limits, ReadFailed, gather
from playbooks.gpu_series import GpuMetrics
from playbooks.model import Diagnosis, Evidence, Finding, Target
from playbooks.redact import redact_diagnosis
from playbooks.registry import Registry

MAX_EVIDENCE = 8
# The summary's opening when nothing was found (renderers say it in their own words).
NOTHING_FOUND = "No known problem found"
# Workload kinds read through the custom objects API by their key (gateway.get_workload).
CUSTOM_OWNERS = ("trainjob", "tfjob", "mpijob", "jobset")


class TargetNotFound(LookupError):
    """The named object does not exist; carries close names to suggest."""

    def __init__(self, message: str, *, suggestions: list[str]) -> None:
        super().__init__(message)
        self.suggestions = suggestions


class NamespaceNotFound(LookupError):
    pass


class ResolvingGateway(Gateway, Protocol):
    def find_named(self, name: str) -> dict[str, list[str]]: ...
    def namespace_exists(self, namespace: str) -> bool: ...
    def names_in_namespace(self, namespace: str) -> list[str]: ...
    def pending_pods(self, namespace: str, *, max_items: int = 50) -> list[dict]: ...


Progress = Callable[[str], None]


NamespaceFilter = Callable[[str], bool]


def diagnose(target: Target, *, gateway: ResolvingGateway, catalog: Catalog | None, registry: Registry,
             limits: Limits = Limits(), on_resolved: Callable[[Target], None] | None = None,
             progress: Progress | None = None, namespace_allowed: NamespaceFilter | None = None,
             gpu_metrics: GpuMetrics | None = None, trusted_node_reporters: frozenset[str] = frozenset()) -> Diagnosis:
    """``on_resolved`` hears the target once it is known to exist (kind resolved); ``progress`` hears
    each gathering step, so a chat surface can say what is happening during a long diagnosis.
    ``namespace_allowed``: the namespaces the asker may read (None: all); no lookup or read of pods
    crosses into another one."""
    target, obj = resolve(target, gateway=gateway, namespace_allowed=namespace_allowed)
    if on_resolved is not None:
        on_resolved(target)
    facts = gather(
        target,
        owner=obj if target.kind in OWNER_KINDS else None,
        pod=obj if target.kind == "pod" else None,
        node=obj if target.kind == "node" else None,
        nodepool=obj if target.kind == "nodepool" else None,
        gateway=gateway, catalog=catalog, limits=limits, progress=progress, namespace_allowed=namespace_allowed,
        gpu_metrics=gpu_metrics,
    )
    facts.trusted_node_reporters = frozenset(trusted_node_reporters)
    if progress is not None:
        progress("analyzing")
    return analyze(facts, registry=registry)


def analyze(facts: Facts, *, registry: Registry) -> Diagnosis:
    # Consequences are told apart before findings of one code merge: one rank's OOM kill is the cause and
    # the other ranks' SIGTERMs (the same code) follow it.
    raw = [f for analyzer in registry.analyzers.values() for f in analyzer(facts)]
    # The floor: what the cluster said about the target that no analyzer explained (docs/findings.md).
    raw += unrecognised.floor(facts, raw)
    findings = order(merge(follow_causes(raw, facts=facts)))
    # the one redaction step: nothing gathered leaves the engine with a secret in it
    return redact_diagnosis(Diagnosis(
        target=facts.target, summary=summarize(facts, findings), findings=findings,
        gaps=list(dict.fromkeys(facts.gaps)), cluster=facts.cluster, gpu_usage=facts.gpu_usage,
    ))


def merge(findings) -> list[Finding]:
    """One finding per code (and per cause it follows): the first analyzer's wording wins unless a later
    one is more severe, later evidence is added to it."""
    by_code: dict[tuple[str, str | None], Finding] = {}
    for finding in findings:
        key = (finding.code, finding.consequence_of)  # what follows a cause never merges into one
        kept = by_code.get(key)
        if kept is None:
            by_code[key] = replace(finding, evidence=_dedupe(finding.evidence))
            continue
        kept.evidence = _dedupe(kept.evidence + finding.evidence)
        if finding.severity_rank < kept.severity_rank:
            # the wording goes with the severity: an error must not keep a warning's "rarely the cause"
            kept.severity, kept.title, kept.detail = finding.severity, finding.title, finding.detail
        if finding.confidence_rank < kept.confidence_rank:
            kept.confidence = finding.confidence
        if kept.fix is None:
            kept.fix = finding.fix
        for rem in finding.remediations:
            if rem not in kept.remediations:
                kept.remediations.append(rem)
    return list(by_code.values())


def _dedupe(evidence: list[Evidence]) -> list[Evidence]:
    seen: set[str] = set()
    out = []
    for item in evidence:
        if item.text not in seen:
            seen.add(item.text)
            out.append(item)
    return out[:MAX_EVIDENCE]


def order(findings: list[Finding]) -> list[Finding]:
    """Most likely root cause first: severity, then confidence, then the codes' root-cause order."""
    return sorted(findings, key=lambda f: (f.severity_rank, f.confidence_rank, precedence(f.code)))


def summarize(facts: Facts, findings: list[Finding]) -> str:
    serious = [f for f in findings if f.severity != "info"]
    waiting = [f for f in findings if f.code == "karpenter.provisioning"]
    if not serious and waiting:
        return waiting[0].title  # not a problem, but the answer to "why is it pending?"
    if not serious:
        state = _state(facts)
        return f"{NOTHING_FOUND}{': ' + state if state else ''}."
    more = len(serious) - 1
    return serious[0].title + (f" (+{more} more finding{'s' if more > 1 else ''})" if more else "")


def _state(facts: Facts) -> str:
    if not facts.pods:
        return ""
    phases: dict[str, int] = {}
    for pod in facts.pods:
        phases[pod.phase or "Unknown"] = phases.get(pod.phase or "Unknown", 0) + 1
    return ", ".join(f"{n} pod{'s' if n > 1 else ''} {phase}" for phase, n in sorted(phases.items()))


# -- resolving what the user named ----------------------------------------------------------------

def resolve(target: Target, *, gateway: ResolvingGateway,
            namespace_allowed: NamespaceFilter | None = None) -> tuple[Target, dict]:
    """Fetch the named object; a bare name is tried as PyTorchJob, TrainJob, TFJob, MPIJob, JobSet, Job,
    pod, node, NodePool (a TrainJob before the JobSet of the same name it creates).

    With ``namespace_allowed``, a namespace the asker may not read is neither read nor searched, and
    no message names an object in one: the answer is the same whether or not it exists there."""
    allowed = namespace_allowed or (lambda namespace: True)
    ns = target.namespace
    ns_open = ns is not None and allowed(ns)
    getters = {
        "pytorchjob": lambda: gateway.get_pytorchjob(ns or "default", target.name),
        **{key: (lambda key=key: gateway.get_workload(key, ns or "default", target.name)) for key in CUSTOM_OWNERS},
        "job": lambda: gateway.get_job(ns or "default", target.name),
        "pod": lambda: gateway.get_pod(ns or "default", target.name),
        "node": lambda: gateway.get_node(target.name),
        "nodepool": lambda: gateway.get_nodepool(target.name),
    }
    kinds = list(getters) if target.kind == "auto" else [target.kind]
    if not ns_open:  # the service refuses a named kind in a closed namespace; a bare name skips it
        kinds = [k for k in kinds if k in ("node", "nodepool")]
    refused: ReadFailed | None = None  # a bare name: one kind we may not read must not hide the others
    for kind in kinds:
        try:
            obj = getters[kind]()
        except ReadFailed as exc:
            if target.kind != "auto":
                raise
            # no such API: no object of that kind; the newer workload kinds that the base RBAC role may
            # not grant are skipped quietly, or every unknown name would read as "forbidden"
            if exc.reason not in ("not installed", "not served") and kind not in CUSTOM_OWNERS:
                refused = refused or exc
            continue
        if obj is not None:
            namespace = (obj.get("metadata") or {}).get("namespace")
            return Target(kind=kind, name=target.name, namespace=namespace), obj
    if target.kind in ("auto", *OWNER_KINDS, "pod"):
        elsewhere = gateway.find_named(target.name)
        wanted = elsewhere if target.kind == "auto" else {target.kind: elsewhere.get(target.kind, [])}
        places = [(kind, n) for kind, nss in wanted.items() for n in nss if allowed(n)]
        if len(places) == 1:
            kind, namespace = places[0]
            return resolve(Target(kind=kind, name=target.name, namespace=namespace), gateway=gateway,
                           namespace_allowed=namespace_allowed)
        if places:
            where = ", ".join(f"{kind}/{target.name} -n {n}" for kind, n in places)
            raise TargetNotFound(f"{target.name} is ambiguous: found {where}. Name the kind and namespace.",
                                 suggestions=[])
    if refused is not None:
        raise refused
    namespaced = ns_open and target.kind not in ("node", "nodepool")
    if namespaced and not gateway.namespace_exists(ns):
        raise NamespaceNotFound(f"namespace {ns} does not exist in this cluster.")
    what = "anything" if target.kind == "auto" else target.kind
    where = f" in namespace {ns}" if namespaced else (" in the namespaces open here" if namespace_allowed else "")
    suggestions = []
    if namespaced:
        suggestions = difflib.get_close_matches(target.name, gateway.names_in_namespace(ns), n=5, cutoff=0.5)
    raise TargetNotFound(f"found no {what} named {target.name}{where}.", suggestions=suggestions)
