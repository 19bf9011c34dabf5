"""Diagnose pasted text (logs, ``kubectl describe`` output, events) from known problem signatures.

Signals are grouped into one Finding per code. Memory stays bounded whatever the input size: per
code we keep a count, the first few distinct evidence lines, the strongest signal and a few distinct
values per field. A handful of context markers (a Karpenter ``Nominated`` event, torch.distributed
set-up lines, a required pod affinity in a pod spec) let findings be connected to each other.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from playbooks import documents, linear
from playbooks.codes import CRASH_CAUSES, precedence
from playbooks.failures import structure, wrapped
from playbooks.fixes import TEMPLATE_DIR, render_fix
from playbooks.model import CONFIDENCES, SEVERITIES, Diagnosis, Evidence, Finding, Target
from playbooks.redact import redact_diagnosis
from playbooks.signatures import Signal, scan_line
from playbooks.signatures.catalogue import KEYWORDS, MAX_LINE_CHARS
from playbooks.signatures.prefilter import Prefilter, normalise
from playbooks.signatures.details import View, describe, oom_split

MAX_EVIDENCE = 5
MAX_VALUES = 8
MAX_STAMPED_HOSTS = 64  # (host, time) pairs kept per code, for which host reported first (log_time.py)
_NOMINATED = "Pod should schedule on"
_DIST_CONTEXT = ("init_process_group", "TCPStore", "rendezvous", "MASTER_ADDR", "c10d")
_FAILED_SCHEDULING = ("FailedScheduling", "Unschedulable", "nodes are available")
# torchrun's agent stopping the other workers after one failed (pytorch/pytorch torch/distributed/elastic/
# multiprocessing/api.py ``_close``: ``Sending process %s closing signal %s``), and the agent itself told to
# stop from outside (agent/server/api.py ``Received %s death signal, shutting down workers``; api.py
# ``SignalException``: ``Process %d got signal: %d``). Only in the first case are the workers' SIGTERMs a
# consequence of another failure rather than its cause.
_AGENT_CLOSING = "closing signal SIGTERM"
_AGENT_SIGNALLED = ("death signal", "got signal: ")
_CONTEXT_AGENT = frozenset((_AGENT_CLOSING, *_AGENT_SIGNALLED))
_CONTEXT = frozenset((*structure.MARKERS, *_CONTEXT_AGENT, *documents.MARKERS))


@lru_cache(maxsize=1)
def _prefilter() -> Prefilter:
    return Prefilter((*KEYWORDS, _NOMINATED, *_DIST_CONTEXT, *_FAILED_SCHEDULING, *_AffinitySpec.MARKERS,
                      *structure.MARKERS, _AGENT_CLOSING, *_AGENT_SIGNALLED, *documents.MARKERS))


def _names_its_rank(signal: Signal) -> bool:
    return "rank" in signal.fields and "host" in signal.fields


def _any_in(markers: tuple[str, ...], line: str) -> bool:
    for marker in markers:
        if marker in line:
            return True
    return False


@dataclass
class _Group:
    best: Signal
    severity: str
    confidence: str
    count: int = 0
    evidence: list[Signal] = field(default_factory=list)
    values: dict[str, list[str]] = field(default_factory=dict)
    stamps: dict[str, list[str]] = field(default_factory=dict)  # host -> first few times it reported

    def add(self, signal: Signal) -> None:
        self.count += 1
        if signal.rank < self.best.rank or (signal.rank == self.best.rank and _names_its_rank(signal)
                                            and not _names_its_rank(self.best)):
            self.best = signal  # on a tie, the signal that says which rank on which host (a whole document)
        host, when = signal.fields.get("host"), signal.fields.get("time")
        if host and when and (host in self.stamps or len(self.stamps) < MAX_STAMPED_HOSTS):
            times = self.stamps.setdefault(host, [])
            if len(times) < 4:
                times.append(when)
        self.severity = min(self.severity, signal.severity, key=SEVERITIES.index)
        self.confidence = min(self.confidence, signal.confidence, key=CONFIDENCES.index)
        if len(self.evidence) < MAX_EVIDENCE and all(e.line != signal.line for e in self.evidence):
            self.evidence.append(signal)
        for name, value in signal.fields.items():
            seen = self.values.setdefault(name, [])
            if len(seen) < MAX_VALUES and value not in seen:
                seen.append(value)


@dataclass
class _AffinitySpec:
    """A required pod affinity on kubernetes.io/hostname in a pod spec (describe output or YAML)."""

    lines: list[tuple[int, str]] = field(default_factory=list)
    stage: int = 0  # 0: nothing, 1: "Pod Affinity:" seen, 2: "Required During Scheduling" seen, 3: hostname key
    last: int = 0

    # Every line this state machine reads holds one of these ("ffinity" gates it in _Scan.feed).
    MARKERS = ("ffinity", "Pod Affinity:", "podAffinity:", "Required During Scheduling", "requiredDuringScheduling",
               "kubernetes.io/hostname")

    def feed(self, lineno: int, line: str) -> None:
        if self.stage == 3:
            return
        if "Pod Affinity:" in line or "podAffinity:" in line:
            self.stage, self.last, self.lines = 1, lineno, [(lineno, line.strip())]
        elif self.stage and lineno - self.last > 12:
            self.stage, self.lines = 0, []
        elif self.stage == 1 and ("Required During Scheduling" in line or "requiredDuringScheduling" in line):
            self.stage, self.last = 2, lineno
            self.lines.append((lineno, line.strip()))
        elif self.stage == 2 and "kubernetes.io/hostname" in line and ("Topology Key" in line or "topologyKey" in line):
            self.stage = 3
            self.lines.append((lineno, line.strip()))

    @property
    def found(self) -> bool:
        return self.stage == 3


@dataclass
class _Scan:
    source: str
    lines: int = 0
    groups: dict[str, _Group] = field(default_factory=dict)
    nominated: bool = False
    dist_context: bool = False
    failed_scheduling: bool = False
    affinity: _AffinitySpec = field(default_factory=_AffinitySpec)
    consequences: int = 0  # workers' SIGTERMs that followed the failure
    root: Signal | None = None
    exits: list[Signal] = field(default_factory=list)
    context_words: set[str] = field(default_factory=set)
    marks: list[structure.Mark] = field(default_factory=list)  # lines whose next line holds the detail
    agent_closing: bool = False
    agent_signalled: bool = False
    # Workers' SIGTERMs, held until the whole text says whether they are the failure or what followed it.
    sigterms: list[Signal] = field(default_factory=list)

    def feed(self, lineno: int, line: str, keywords: tuple[str, ...] | None = None) -> None:
        line = line[:MAX_LINE_CHARS]
        self.lines = lineno
        # Context words (the failure reader's, the documents' markers): looked for only among the words the
        # prefilter found in the line.
        context = _CONTEXT.intersection(keywords) if keywords is not None else {w for w in _CONTEXT if w in line}
        if context:
            self.context_words |= context
            context -= documents.MARKERS
        if context:
            if len(self.marks) < structure.MAX_MARKS and not _CONTEXT_AGENT.issuperset(context):
                self.marks.append(structure.Mark(lineno, line))
            if _AGENT_CLOSING in context:
                self.agent_closing = True
            if not _CONTEXT_AGENT.isdisjoint(context) and _AGENT_CLOSING not in context:
                self.agent_signalled = True
        if _NOMINATED in line:
            self.nominated = True
        if not self.dist_context and _any_in(_DIST_CONTEXT, line):
            self.dist_context = True
        if self.affinity.stage or "ffinity" in line:
            self.affinity.feed(lineno, line)
        if not self.failed_scheduling and _any_in(_FAILED_SCHEDULING, line):
            self.failed_scheduling = True
        for signal in scan_line(line, source=self.source, lineno=lineno, keywords=keywords):
            self.add(signal)

    def add(self, signal: Signal) -> None:
        if self.root is None and signal.fields.get("root_cause") == "yes":
            self.root = signal  # torchrun's first observed failure (documents/child_failed.py)
        if signal.code == "training.terminated" and signal.fields.get("signal") == "SIGTERM":
            self.sigterms.append(signal)
            return
        if signal.code == "training.failed" and signal.fields.get("kind") == "exit":
            self.exits.append(signal)  # a bare exit code: the floor only if nothing says why
            return
        self.place(signal)

    def place(self, signal: Signal) -> None:
        group = self.groups.get(signal.code)
        if group is None:
            group = self.groups[signal.code] = _Group(signal, signal.severity, signal.confidence)
        group.add(signal)


def explain_text(text: str, *, source: str = "pasted text") -> Diagnosis:
    """One Finding per problem code found in text, most likely root cause first."""
    scan = _Scan(source)
    text = normalise(text)
    # Only lines holding a keyword of some rule or context marker can change the outcome: one pass
    # over the whole buffer finds them (playbooks/signatures/prefilter.py).
    for lineno, line, words in _prefilter().lines(text):
        scan.feed(lineno, line, words)
    scan.lines = _prefilter().line_count(text)
    for signal in documents.signals(text, source=source, present=frozenset(scan.context_words)):
        scan.add(signal)
    for signal in structure.read(text, scan.marks, source=source):
        scan.add(signal)
    _rejoin(text, scan)
    return _diagnosis(scan)


def _rejoin(text: str, scan: _Scan) -> None:
    """Messages a terminal or a form wrapped over lines: what the joined line (or a document read with its
    lines joined) says and no piece said."""
    found = set(scan.groups)
    readings = wrapped.unwrap(text)
    if not readings:
        return
    for reading in readings:
        for signal in documents.signals(reading, source=scan.source):
            if signal.code not in found and signal.code != "training.failed":
                scan.add(signal)
    for lineno, joined in wrapped.logical_lines(text):
        for signal in scan_line(joined, source=scan.source, lineno=lineno):
            # The generic floor from a joined line would only restate what a piece already said.
            if signal.code not in found and signal.code != "training.failed":
                scan.add(signal)


def explain_lines(lines: Iterable[str], *, source: str = "pasted text") -> Diagnosis:
    scan = _Scan(source)
    for lineno, line in enumerate(lines, start=1):
        scan.feed(lineno, line)
    return _diagnosis(scan)


def _settle_sigterms(scan: _Scan) -> None:
    """A worker's SIGTERM is the failure unless torchrun sent it because another worker failed first:
    the ChildFailedError's root cause is another failure, or (without that table) the agent closed the
    workers without being signalled itself while another failure shows. Then the SIGTERMs are what
    followed, counted on the cause and never blamed."""
    if not scan.sigterms:
        return
    if scan.root is not None:
        consequence = scan.root.fields.get("signal") != "SIGTERM"
    else:
        consequence = scan.agent_closing and not scan.agent_signalled and bool(_failure_codes(scan))
    if consequence:
        scan.consequences = len(scan.sigterms)
        return
    for signal in scan.sigterms:
        scan.place(signal)


def _failure_codes(scan: _Scan) -> list[str]:
    return [code for code in scan.groups if code.startswith(_FAILURES) and code not in _NOT_CAUSES]


# Codes that name why a process failed, and those among them that only follow another failure.
_FAILURES = ("training.", "nccl.", "gpu.", "storage.", "efa.", "image.", "container.")
_NOT_CAUSES = ("training.crash_loop", "training.memory_pressure")


def _attribute_root(scan: _Scan) -> None:
    """Bare exits (torchrun's root cause with exit code 1 and no error file, a worker's ``exitcode: 1``, a
    container's ``Exit Code: 1``) say only that something failed. When the text shows an error, that error
    is the failure, said of the root-cause rank; otherwise the exits are the finding (never silence)."""
    named = [(code, group) for code, group in scan.groups.items() if code.startswith(_FAILURES) and code not in _NOT_CAUSES]
    if not named:
        if "training.crash_loop" not in scan.groups:  # a crash loop's finding already quotes its exit code
            for signal in scan.exits:
                scan.place(signal)
        return
    root = scan.root
    if root is None or root.fields.get("kind") != "exit":
        return
    rank = root.fields.get("rank", "")
    own = [(c, g) for c, g in named if rank and rank in g.values.get("rank", ())]
    code, group = min(own or named, key=lambda item: (item[1].best.rank, precedence(item[0])))
    who = f"Rank {rank}" + (f" on {root.fields['host']}" if root.fields.get("host") else "")
    title = f"{who} failed first (exitcode {root.fields.get('exit_code', '?')}): {group.best.title}"
    group.best = Signal(code=group.best.code, severity=group.best.severity, confidence=group.best.confidence, title=title,
                        line=group.best.line, source=group.best.source, lineno=group.best.lineno,
                        fields={**group.best.fields, "root_rank": rank})


def _diagnosis(scan: _Scan) -> Diagnosis:
    _settle_sigterms(scan)
    _attribute_root(scan)
    findings = _findings(scan)
    if findings:
        more = f"; {len(findings) - 1} more finding(s)" if len(findings) > 1 else ""
        summary = f"{findings[0].title} ({findings[0].code}){more}."
    else:
        summary = f"No known problem signatures found in {scan.lines} lines."
    return redact_diagnosis(Diagnosis(target=Target(kind="text", name=scan.source), summary=summary, findings=findings))


def _adjust(code: str, group: _Group, scan: _Scan, codes: frozenset[str]) -> None:
    """Context that changes how much a signal means."""
    if code == "scheduling.insufficient_gpu" and scan.nominated:
        group.severity, group.confidence = "warning", "low"  # Karpenter has capacity on its way
    elif code == "karpenter.disruption" and {"training.terminated", "nccl.peer_unresponsive"} & codes:
        group.severity, group.confidence = "error", "high"  # the disruption hit a running job
    elif code == "training.crash_loop" and any(other.startswith(CRASH_CAUSES) for other in codes):
        group.severity = "info"  # the text says why it crashes: that finding explains the restarts
    elif (code == "nccl.invalid_usage" and set(group.values.get("problem", ())) == {"unhandled cuda error"}
          and ("training.cuda_oom" in codes or _cuda_read(scan))):
        # ncclUnhandledCudaError echoing a CUDA error that was read (an OOM, an ECC error, a bad ordinal):
        # the CUDA error's own finding is the answer, not a rank-count mistake.
        group.severity = "info"
    elif (code == "nccl.invalid_usage" and "nccl.network_config" in codes
          and "duplicate GPU" not in group.values.get("problem", ())):
        group.severity = "info"  # the ncclInvalidUsage wrapping NCCL's network set-up failure: that finding is the answer
    elif code == "training.rendezvous_failed" and scan.dist_context and group.confidence == "low":
        group.severity, group.confidence = "error", "medium"  # a resolver / connect error inside distributed set-up


def _benign_error(group: _Group) -> bool:
    """An error the taxonomies class as benign: shown as an info finding that says why (never silence)."""
    return group.best.fields.get("error_class") == "benign" and len(group.values.get("error_class", ())) == 1


def _cuda_read(scan: _Scan) -> bool:
    """Whether some finding rests on a CUDA error classed by the CUDA tables (playbooks/failures/)."""
    return any("CUDA error" in group.values.get("kind", ()) for group in scan.groups.values())


def _findings(scan: _Scan) -> list[Finding]:
    codes = frozenset(scan.groups)
    related = {code: dict(group.best.fields) for code, group in scan.groups.items()}
    findings = []
    for code, group in scan.groups.items():
        _adjust(code, group, scan, codes)
        if group.severity == "info" and not _benign_error(group):
            continue
        findings.append(_finding(code, group, scan, codes, related))
    if scan.affinity.found and scan.failed_scheduling and "scheduling.pod_affinity_unsatisfiable" not in codes:
        findings.append(_affinity_finding(scan, codes))
    findings = _follow_failed_rank(findings, scan)
    findings.sort(key=lambda f: (f.severity_rank, f.confidence_rank, precedence(f.code)))
    return findings


# A rank that failed for a reason of its own (CUDA out of memory, its container OOM-killed) and what its
# peers then report: NCCL's survivors read "remote process exited or there was a network error" or time out
# in the watchdog (NVIDIA/nccl src/transport/net_socket.cc, src/proxy.cc). In pasted text only the ranks
# the lines name tell peers apart: both sides must name theirs, and they must differ.
_RANK_CAUSES = ("training.cuda_oom", "training.terminated")
_PEER_ERRORS = ("nccl.timeout", "nccl.peer_unresponsive")
_RANK_PREFIX = linear.compile(r"\[(?:rank|Rank )(?P<rank>\d{1,6})\]")


def _ranks(code: str, scan: _Scan) -> set[str]:
    group = scan.groups[code]
    named = set(group.values.get("rank", ()))
    for signal in group.evidence:
        named |= {m.group("rank") for m in _RANK_PREFIX.finditer(signal.line)}
    return named


def _follow_failed_rank(findings: list[Finding], scan: _Scan) -> list[Finding]:
    """The peers' NCCL errors marked as following the rank that failed for its own reason (never when a
    line does not say which rank it is from: an NCCL error of unknown origin keeps its standing)."""
    for cause in findings:
        if cause.code not in _RANK_CAUSES or cause.severity not in ("critical", "error") or cause.code not in scan.groups:
            continue
        if cause.code == "training.terminated" and "OOMKilled" not in scan.groups[cause.code].values.get("reason", ()):
            continue
        failed = _ranks(cause.code, scan)
        if not failed:
            continue
        peers = [f for f in findings if f.code in _PEER_ERRORS and f.code in scan.groups
                 and (ranks := _ranks(f.code, scan)) and not ranks & failed]
        if peers:
            return [replace(f, severity="info", consequence_of=cause.code) if any(f is p for p in peers) else f
                    for f in findings]
    return findings


def _finding(code: str, group: _Group, scan: _Scan, codes: frozenset[str], related: dict[str, dict[str, str]]) -> Finding:
    view = View(
        code=code,
        fields=dict(group.best.fields),
        values={k: tuple(v) for k, v in group.values.items()},
        count=group.count,
        confidence=group.confidence,
        codes=codes,
        related=related,
        nominated=scan.nominated,
        stamps=tuple((host, when) for host, times in group.stamps.items() for when in times),
    )
    return Finding(
        code=code,
        severity=group.severity,
        confidence=group.confidence,
        title=group.best.title,
        detail=describe(view),
        evidence=[Evidence(source=f"{s.source} line {s.lineno}", text=s.line) for s in group.evidence],
        fix=render_fix(template_for(code), **fix_context(code, group.best.fields)),
    )


def _affinity_finding(scan: _Scan, codes: frozenset[str]) -> Finding:
    code = "scheduling.pod_affinity_unsatisfiable"
    view = View(code=code, fields={"key": "kubernetes.io/hostname"}, values={}, count=1, confidence="medium", codes=codes)
    return Finding(
        code=code,
        severity="error",
        confidence="medium",
        title="Pods require co-location on kubernetes.io/hostname (required pod affinity) and cannot be scheduled",
        detail=describe(view),
        evidence=[Evidence(source=f"{scan.source} line {n}", text=text) for n, text in scan.affinity.lines],
        fix=render_fix(template_for(code), key="kubernetes.io/hostname"),
    )


@lru_cache(maxsize=None)
def template_for(code: str) -> str:
    """The generic fix template of a code: ``generic/<code>.<language>.j2``."""
    matches = sorted(p.name for p in (TEMPLATE_DIR / "generic").glob(f"{code}.*.j2"))
    if len(matches) != 1:
        raise LookupError(f"expected one generic template for {code}, found {matches}")
    return f"generic/{matches[0]}"


def fix_context(code: str, fields: Any) -> dict[str, str]:
    """Template variables: the signal's fields plus figures derived from them."""
    context = dict(fields)
    if code == "training.cuda_oom":
        context.update(oom_split(fields) or {})
    return context
