"""Karpenter's own vocabulary: the events, NodeClaim / NodePool / EC2NodeClass condition reasons, the errors
the launch and registration paths wrap, the controller log lines and the node repair policies of
kubernetes-sigs/karpenter (core) and aws/karpenter-provider-aws, v1.0 to v1.14 (the last patch tag of each
minor series).

The refresh reads Go source, not prose: every ``events.Event{...}`` literal (Type, Reason, Message) under
pkg/, the messages passed to the event constructors whose text comes from the caller (disruption's
``Blocked`` / ``Unconsolidatable``, node health's ``NodeRepairBlocked``), every ``SetFalse`` /
``SetUnknownWithReason`` / ``SetTrueWithReason`` condition call, ``cloudprovider.NewCreateError``'s reason
and message, the reason / message pairs of the provider's ``ToReasonMessage`` (pkg/errors/errors.go), the
``RepairPolicies`` of the provider's pkg/cloudprovider/cloudprovider.go, and the ``fmt.Errorf`` /
``errors.New`` / ``fmt.Sprintf`` formats and ``log.Info`` / ``log.Error`` messages of the files in
ERROR_FILES and LOG_FILES. Constants (``events.DisruptionBlocked``, ``v1.ConditionTypeLaunched``) are resolved
from the same tag's source. Classing rules are in RULES at the end of this file.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from scripts.cluster_tables import common

NAME = "karpenter"
MIRRORS = ("github:kubernetes-sigs/karpenter", "github:aws/karpenter-provider-aws")
CORE = "kubernetes-sigs/karpenter"
AWS = "aws/karpenter-provider-aws"
MINORS = range(0, 15)  # v1.0 .. v1.14
COMPONENT = "karpenter"

# The files whose error formats are the launch, registration and scheduling vocabulary (the text an
# InsufficientCapacityError / NodeClassNotReady event, a Launched=False condition or a FailedScheduling
# event carries). Regexes over paths; test files and pkg/test are never read.
ERROR_FILES = {
    CORE: re.compile(
        r"^pkg/(controllers/nodeclaim/lifecycle/(launch|registration|initialization|liveness)\.go"
        r"|controllers/provisioning/(provisioner\.go|scheduling/[^/]+\.go)"
        r"|controllers/state/statenode\.go"              # disruption-blocking reasons (DisruptionBlocked)
        r"|controllers/nodeclaim/consistency/[^/]+\.go"  # FailedConsistencyCheck issues
        r"|scheduling/(requirements?|taints?|volumeusage|hostportusage)\.go"
        r"|cloudprovider/types\.go)$"),
    AWS: re.compile(
        r"^pkg/(providers/(instance|launchtemplate|amifamily|subnet|securitygroup|instanceprofile)/.+\.go"
        r"|cloudprovider/cloudprovider\.go)$"),
}
LOG_FILES = {
    CORE: re.compile(
        r"^pkg/controllers/(nodeclaim/lifecycle|provisioning|disruption|node/termination|node/health)/.+\.go$"),
    AWS: re.compile(r"^pkg/(controllers/(interruption|nodeclass)/.+\.go|providers/instance/.+\.go"
                    r"|cloudprovider/cloudprovider\.go)$"),
}
# Event constructors whose message is the caller's text (core pkg/controllers/disruption/events/events.go,
# pkg/controllers/node/health/events.go): the call sites give the formats.
DYNAMIC_CONSTRUCTORS = {
    "Unconsolidatable": ("Unconsolidatable", "Normal"),
    "Blocked": ("DisruptionBlocked", "Normal"),
    "NodeRepairBlocked": ("NodeRepairBlocked", "Warning"),
}


# ------------------------------------------------------------------------------------------ reading git
class Repo:
    """A bare mirror read at several tags; blobs are read once (most files do not change between tags)."""

    def __init__(self, mirrors: Path, name: str):
        self.name = name
        self.gitdir = common.mirror(mirrors, name)
        self._blobs: dict[str, str] = {}

    def release_tags(self) -> list[str]:
        found: dict[int, tuple[int, str]] = {}
        for tag in common.tags(self.gitdir):
            m = re.fullmatch(r"v1\.(\d+)\.(\d+)", tag)
            if m and int(m.group(1)) in MINORS:
                minor, patch = int(m.group(1)), int(m.group(2))
                if minor not in found or patch > found[minor][0]:
                    found[minor] = (patch, tag)
        return [found[m][1] for m in sorted(found)]

    def tree(self, tag: str) -> dict[str, str]:
        out = common.git(self.gitdir, "ls-tree", "-r", tag, "pkg")
        tree = {}
        for line in out.splitlines():
            meta, path = line.split("\t", 1)
            if path.endswith(".go") and not path.endswith("_test.go") and not path.startswith("pkg/test/"):
                tree[path] = meta.split()[2]
        return tree

    def read(self, shas: list[str]) -> None:
        todo = [s for s in dict.fromkeys(shas) if s not in self._blobs]
        if not todo:
            return
        out = subprocess.run(["git", f"--git-dir={self.gitdir}", "cat-file", "--batch"], input=("\n".join(todo) + "\n").encode(),
                             capture_output=True, check=True).stdout
        pos = 0
        for sha in todo:
            header_end = out.index(b"\n", pos)
            size = int(out[pos:header_end].split()[2])
            self._blobs[sha] = out[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
            pos = header_end + 1 + size + 1

    def text(self, sha: str) -> str:
        return self._blobs[sha]


# ------------------------------------------------------------------------------------------ Go, lightly
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a", "b": "\b", "f": "\f",
            "v": "\v"}


def _unquote(lit: str) -> str:
    if lit.startswith("`"):
        return lit[1:-1]
    body, out, i = lit[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n in _ESCAPES:
            out.append(_ESCAPES[n])
            i += 2
        elif n in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[n]
            out.append(chr(int(body[i + 2:i + 2 + width], 16)))
            i += 2 + width
        else:
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
    return "".join(out)


_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|`[^`]*`|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/|[()\[\]{},]', re.S)


def _close(src: str, open_at: int) -> int:
    """Index just past the bracket that closes the one at ``open_at``."""
    depth = 0
    for m in _TOKEN.finditer(src, open_at):
        t = m.group()
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
            if depth == 0:
                return m.end()
    return len(src)


def _args(src: str, open_at: int) -> list[str]:
    """The top-level comma-separated arguments of the call whose ``(`` is at ``open_at``."""
    end = _close(src, open_at)
    inner, parts, depth, start = src[open_at + 1:end - 1], [], 0, 0
    for m in _TOKEN.finditer(inner):
        t = m.group()
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif t == "," and depth == 0:
            parts.append(inner[start:m.start()])
            start = m.end()
    parts.append(inner[start:])
    return [p.strip() for p in parts if p.strip()]


_STRING = re.compile(r'^("(?:[^"\\\n]|\\.)*"|`[^`]*`)$', re.S)
_CALL = re.compile(r"^([\w.]+)\s*\(", re.S)


def formats(expr: str, consts: dict[str, str], src: str = "") -> list[str] | None:
    """The text an expression prints, as format strings (None when it is the caller's or an error's text).
    ``src``, the file's text, resolves a call to a function of the same file by its return statements."""
    expr = expr.strip()
    if _STRING.match(expr):
        return [_unquote(expr)]
    call = _CALL.match(expr)
    if call and _close(expr, call.end() - 1) == len(expr):
        name, args = call.group(1), _args(expr, call.end() - 1)
        short = name.rsplit(".", 1)[-1]
        if short in ("Sprintf", "Errorf", "New", "Sentence", "truncateMessage", "Wrap") and args:
            return formats(args[0], consts)
        if short == "Ternary" and len(args) == 3:
            a, b = formats(args[1], consts), formats(args[2], consts)
            return (a or []) + (b or []) or None
        local = re.search(rf"^func {re.escape(name)}\(", src, re.M) if src and "." not in name else None
        if local:
            body_start = src.index("{", local.end())
            body = src[body_start:_close(src, body_start)]
            returned = [formats(body[r.end():_field_end(body, r.end(), stop_newline=True)], consts)
                        for r in re.finditer(r"\breturn\s+", body)]
            return [f for r in returned if r for f in r] or None
        return None
    # "literal " + value: the value printed as %s
    pieces = _split_plus(expr)
    if len(pieces) > 1 and any(_STRING.match(p) for p in pieces):
        out = ""
        for p in pieces:
            if _STRING.match(p):
                out += _unquote(p)
            elif p.rsplit(".", 1)[-1] in consts:
                out += consts[p.rsplit(".", 1)[-1]]
            else:
                out += "%s"
        return [out]
    if re.fullmatch(r"[\w.]+", expr) and expr.rsplit(".", 1)[-1] in consts and "." in expr:
        return [consts[expr.rsplit(".", 1)[-1]]]
    return None


def _split_plus(expr: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|`[^`]*`|[()\[\]{}+]', expr):
        t = m.group()
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif t == "+" and depth == 0:
            parts.append(expr[start:m.start()].strip())
            start = m.end()
    parts.append(expr[start:].strip())
    return parts


def resolve(expr: str, consts: dict[str, str]) -> str | None:
    """A reason or condition type: a literal, a known constant, or string(constant)."""
    expr = expr.strip()
    m = re.fullmatch(r"string\((.+)\)", expr)
    if m:
        expr = m.group(1)
    if _STRING.match(expr):
        return _unquote(expr)
    if re.fullmatch(r"[\w.]+", expr):
        return consts.get(expr.rsplit(".", 1)[-1])
    return None


_CONST = re.compile(r'^\s*([A-Z]\w*)\s*(?:[\w.]+\s*)?=\s*("(?:[^"\\\n]|\\.)*")', re.M)
_K8S_CONSTS = {"NodeReady": "Ready", "EventTypeNormal": "Normal", "EventTypeWarning": "Warning",
               "ConditionFalse": "False", "ConditionUnknown": "Unknown", "ConditionTrue": "True",
               "LabelInstanceTypeStable": "node.kubernetes.io/instance-type",
               "LabelTopologyZone": "topology.kubernetes.io/zone"}


def constants(texts: list[str]) -> dict[str, str]:
    consts = dict(_K8S_CONSTS)
    for text in texts:
        for name, lit in _CONST.findall(text):
            consts.setdefault(name, _unquote(lit))
    return consts


def _line(src: str, pos: int) -> int:
    return src.count("\n", 0, pos) + 1


def _func_before(src: str, pos: int) -> tuple[int, str]:
    start = src.rfind("\nfunc ", 0, pos)
    return start, src[start:pos]


# ------------------------------------------------------------------------------------------ extractors
def _events(src: str, consts: dict[str, str]) -> list[tuple[dict, int]]:
    found = []
    blocks = []
    for m in re.finditer(r"(\[\])?events\.Event\s*\{", src):
        if m.group(1):  # a slice literal: each element is an Event
            list_end = _close(src, m.end() - 1)
            depth = 0
            for t in _TOKEN.finditer(src[:list_end - 1], m.end()):
                if t.group() in "([{":
                    if depth == 0 and t.group() == "{":
                        blocks.append((m, t.end()))
                    depth += 1
                elif t.group() in ")]}":
                    depth -= 1
        elif not src[max(0, m.start() - 2):m.start()].endswith("[]"):
            blocks.append((m, m.end()))
    for m, open_end in blocks:
        body_end = _close(src, open_end - 1)
        body = src[open_end:body_end - 1]
        fields = {}
        for f in re.finditer(r"^\s*(Type|Reason|Message)\s*:\s*", body, re.M):
            value_end = _field_end(body, f.end())
            fields[f.group(1)] = body[f.end():value_end]
        etype = resolve(fields.get("Type", ""), consts) or ""
        reason = resolve(fields.get("Reason", ""), consts) or ""
        message_expr = fields.get("Message", "")
        msgs = formats(message_expr, consts)
        if msgs is None and re.fullmatch(r"\w+", message_expr.strip()):
            # a local variable: its assignment in the same function, else the caller's text
            fstart, before = _func_before(src, m.start())
            assign = list(re.finditer(rf"\b{message_expr.strip()}\s*:?=\s*", before))
            if assign:
                expr_start = assign[-1].end()
                msgs = formats(before[expr_start:_field_end(before, expr_start, stop_newline=True)], consts, src)
        for msg in msgs or ["%s"]:
            found.append(({"kind": "event", "reason": reason, "type": etype, "message": msg,
                           "dynamic": msgs is None}, _line(src, m.start())))
    return found


def _field_end(body: str, start: int, stop_newline: bool = False) -> int:
    depth = 0
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|`[^`]*`|[()\[\]{},\n]', body[start:]):
        t = m.group()
        if t in "([{":
            depth += 1
        elif t in ")]}":
            if depth == 0:
                return start + m.start()
            depth -= 1
        elif depth == 0 and (t == "," or (t == "\n" and stop_newline)):
            return start + m.start()
    return len(body)


def _dynamic_calls(src: str, consts: dict[str, str]) -> list[tuple[dict, int]]:
    found = []
    for name, (reason, etype) in DYNAMIC_CONSTRUCTORS.items():
        for m in re.finditer(rf"(?<![\w]){name}\s*\(", src):
            if src[max(0, m.start() - 5):m.start()].endswith("func "):
                continue
            args = _args(src, m.end() - 1)
            if not args:
                continue
            msgs = formats(args[-1], consts)
            for msg in msgs or []:
                found.append(({"kind": "event", "reason": reason, "type": etype, "message": msg}, _line(src, m.start())))
    return found


_SETTERS = re.compile(r"\.(SetFalse|SetUnknownWithReason|SetTrueWithReason)\s*\(")
_STATUS = {"SetFalse": "False", "SetUnknownWithReason": "Unknown", "SetTrueWithReason": "True"}


def _conditions(src: str, consts: dict[str, str]) -> list[tuple[dict, int]]:
    found = []
    for m in _SETTERS.finditer(src):
        args = _args(src, m.end() - 1)
        if len(args) != 3:
            continue
        ctype, reason = resolve(args[0], consts), resolve(args[1], consts)
        if not ctype or not reason:
            continue
        msgs = formats(args[2], consts)
        for msg in msgs or [""]:
            found.append(({"kind": "condition", "reason": reason, "type": ctype, "status": _STATUS[m.group(1)],
                           "message": msg}, _line(src, m.start())))
    # cloudprovider.NewCreateError(err, reason, message) sets Launched=Unknown with that reason (core
    # pkg/controllers/nodeclaim/lifecycle/launch.go)
    for m in re.finditer(r"NewCreateError\s*\(", src):
        if src[max(0, m.start() - 5):m.start()].endswith("func "):
            continue
        args = _args(src, m.end() - 1)
        if len(args) != 3:
            continue
        reason = resolve(args[1], consts)
        msgs = formats(args[2], consts)
        if reason:
            for msg in msgs or [""]:
                found.append(({"kind": "condition", "reason": reason, "type": "Launched", "status": "Unknown",
                               "message": msg}, _line(src, m.start())))
    return found


def _reason_messages(src: str) -> list[tuple[dict, int]]:
    """aws pkg/errors/errors.go ToReasonMessage: the Launched condition's reason and message per EC2 error."""
    found = []
    start = src.find("func ToReasonMessage(")
    if start < 0:
        return found
    end = _close(src, src.index("{", src.index(")", src.index(")", start) + 1)))
    for m in re.finditer(r'return\s+"(\w+)",\s*("(?:[^"\\\n]|\\.)*")', src[start:end]):
        found.append(({"kind": "condition", "reason": m.group(1), "type": "Launched", "status": "Unknown",
                       "message": _unquote(m.group(2))}, _line(src, start + m.start())))
    return found


def _repair_policies(src: str, consts: dict[str, str]) -> list[tuple[dict, int]]:
    found = []
    start = src.find("RepairPolicies()")
    if start < 0:
        return found
    end = _close(src, src.index("{", start))
    for m in re.finditer(r"ConditionType:\s*([^,\n]+),\s*ConditionStatus:\s*([^,\n]+),\s*TolerationDuration:\s*([^,\n]+),",
                         src[start:end]):
        ctype, status = resolve(m.group(1), consts), resolve(m.group(2), consts)
        if ctype and status:
            found.append(({"kind": "condition", "reason": ctype, "type": "node repair", "status": status,
                           "message": "", "toleration": m.group(3).replace(" ", "")}, _line(src, start + m.start())))
    return found


_ERROR_CALLS = re.compile(r"(?<![\w.])(fmt\.Errorf|errors\.New|fmt\.Sprintf|stderrors\.New)\s*\(")
_WRAPPERS = re.compile(r"(New(?:InsufficientCapacity|NodeClassNotReady|Create|NodeClaimNotFound)Error)\s*\(\s*$")


def _errors(src: str, consts: dict[str, str]) -> list[tuple[dict, int]]:
    found = []
    for m in _ERROR_CALLS.finditer(src):
        if m.group(1) == "fmt.Sprintf" and not re.search(r"\) Error\(\) string \{[^\n]*$", _func_before(src, m.start())[1].split("\n", 2)[1]):
            continue  # Sprintf builds names and paths too; only an error type's Error() text is vocabulary
        args = _args(src, m.end() - 1)
        if not args:
            continue
        msgs = formats(args[0], consts)
        if not msgs:
            continue
        wrapper = _WRAPPERS.search(src[max(0, m.start() - 80):m.start()])
        for msg in msgs:
            literal = re.sub(r"%[-+ #0]*\d*(?:\.\d+)?[a-zA-Z%]", "", msg)
            if not re.search(r"[A-Za-z]{2,} [A-Za-z]{2,}", literal):
                continue  # "%s: %w", "subnets/%s" and the like carry no words of their own
            item = {"kind": "error", "reason": "", "type": "", "message": msg}
            if wrapper:
                item["wrapped_as"] = wrapper.group(1)[3:]
            found.append((item, _line(src, m.start())))
    return found


_LOGS = re.compile(r'\.\s*(Info|Error)\(\s*(?:(?:[\w.]+(?:\([^()]*\))?|nil)\s*,\s*)?("(?:[^"\\\n]|\\.)*")')


def _logs(src: str) -> list[tuple[dict, int]]:
    found = []
    for m in _LOGS.finditer(src):
        if m.group(2) == '""':
            continue
        if m.group(1) == "Info" and re.match(r"\.Info\(\s*[\w.]", m.group()):
            continue  # Info's first argument is the message
        found.append(({"kind": "log", "reason": "", "type": m.group(1).upper(), "message": _unquote(m.group(2))},
                      _line(src, m.start())))
    return found


def _extract(repo: str, path: str, src: str, consts: dict[str, str]) -> list[tuple[dict, int]]:
    found: list[tuple[dict, int]] = []
    if "events.Event" in src:
        found += _events(src, consts)
    if path.startswith("pkg/controllers/"):
        found += _dynamic_calls(src, consts)
    found += _conditions(src, consts)
    if repo == AWS and path == "pkg/errors/errors.go":
        found += _reason_messages(src)
    if repo == AWS and path == "pkg/cloudprovider/cloudprovider.go":
        found += _repair_policies(src, consts)
    if ERROR_FILES[repo].match(path):
        found += _errors(src, consts)
    if LOG_FILES[repo].match(path):
        found += _logs(src)
    return found


_KEY_FIELDS = ("repo", "kind", "reason", "type", "status", "message")


def refresh(mirrors: Path) -> dict:
    repos = [Repo(mirrors, CORE), Repo(mirrors, AWS)]
    merged: dict[tuple, dict] = {}
    read_tags = {}
    core_consts_by_tag: dict[str, dict[str, str]] = {}
    for repo in repos:
        read_tags[repo.name] = repo.release_tags()
        for tag in read_tags[repo.name]:
            tree = repo.tree(tag)
            repo.read(list(tree.values()))
            consts = constants([repo.text(sha) for sha in tree.values()])
            if repo.name == CORE:
                core_consts_by_tag[tag] = consts
            else:
                # the provider uses core's constants (events.*, v1.ConditionType*) too
                core = core_consts_by_tag.get(tag) or core_consts_by_tag[max(core_consts_by_tag, key=_version)]
                consts = {**core, **consts}
            for path, sha in sorted(tree.items()):
                for item, line in _extract(repo.name, path, repo.text(sha), consts):
                    item = {"repo": repo.name, **item}
                    key = tuple(item.get(k, "") for k in _KEY_FIELDS)
                    slot = merged.setdefault(key, {**item, "where": []})
                    slot["where"].append(f"{tag}:{path}:{line}")
    items = []
    for item in merged.values():
        item["where"] = sorted(set(item["where"]), key=_where_order)
        items.append(item)
    items.sort(key=lambda i: tuple(str(i.get(k, "")) for k in _KEY_FIELDS))
    return {"source": f"{CORE} {', '.join(read_tags[CORE])}; {AWS} {', '.join(read_tags[AWS])}",
            "tags": read_tags, "items": items}


def _version(tag: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", tag))


def _where_order(where: str) -> tuple:
    tag, rest = where.split(":", 1)
    return (_version(tag), rest)


# ------------------------------------------------------------------------------------------ classing
# Each rule: (kinds, reason regex, message regex) -> (level, owner, code, meaning, next step, upgrade). The
# first rule that matches an item decides; regexes are searched case-insensitively. Facts the rules rest on:
# core pkg/controllers/nodeclaim/lifecycle/liveness.go (launch 5 min, registration 15 min, then the
# NodeClaim is deleted), pkg/controllers/provisioning/scheduling/scheduler.go and nodeclaim.go (the
# FailedScheduling texts), the provider's pkg/errors/errors.go (ToReasonMessage), pkg/cloudprovider/
# cloudprovider.go (RepairPolicies) and pkg/controllers/interruption (the interruption events).
_NC = "kubectl get nodeclaims -o wide; kubectl describe nodeclaim <name> (status.conditions)"
_NP = "kubectl describe nodepool <name> (spec.template.spec.requirements, spec.limits, status.conditions)"
_ENC = "kubectl describe ec2nodeclass <name> (status.conditions, status.subnets/securityGroups/amis)"
_LOG = "the Karpenter controller log of the leader: kubectl logs -n kube-system -l app.kubernetes.io/name=karpenter"
_POD = "kubectl describe pod <pod> (its events and spec.nodeSelector / affinity / tolerations / resources)"

# The EC2NodeClass's condition types (aws pkg/apis/v1/ec2nodeclass_status.go).
NODECLASS_CONDITIONS = ("AMIsReady", "SubnetsReady", "SecurityGroupsReady", "InstanceProfileReady",
                        "PlacementGroupReady", "CapacityReservationsReady", "ValidationSucceeded")
Rule = tuple  # (kinds, reason_re, message_re, level, owner, code, meaning, next_step, upgrade)
RULES: list[Rule] = [
    # ---- node repair policies (aws pkg/cloudprovider/cloudprovider.go RepairPolicies)
    (("condition",), r"^AcceleratedHardwareReady$", r"", "error", "hardware", "gpu.unhealthy_device",
     "The node's accelerated hardware (GPU, Neuron) is reported unhealthy by the EKS node monitoring agent; "
     "with node repair enabled Karpenter replaces the node once the condition has stayed False for the toleration.",
     "kubectl describe node <node> (condition AcceleratedHardwareReady: reason such as NvidiaXID79Error, "
     "DCGMHealthCode); drain and replace the node, or let node repair do it.",
     "the node monitoring agent's event for the same node, dmesg Xid lines, nvidia-smi -q"),
    (("condition",), r"^Ready$", r"^$", "error", "platform", "node.not_ready",
     "The node's Ready condition is False or Unknown; with node repair enabled Karpenter replaces it after the "
     "toleration (30 minutes).",
     "kubectl describe node <node> (conditions, kubelet and CNI messages); journalctl -u kubelet on the node.",
     "the node's other conditions and the kubelet log"),
    (("condition",), r"^(KernelReady|NetworkingReady|StorageReady|ContainerRuntimeReady)$", r"^$", "error", "hardware",
     None,
     "The EKS node monitoring agent reports a node subsystem (kernel, networking, storage or container runtime) "
     "unhealthy; with node repair enabled Karpenter replaces the node after the toleration.",
     "kubectl describe node <node> (the condition's reason and message); kubectl get events "
     "--field-selector involvedObject.name=<node>.",
     "the node monitoring agent's events on the node"),
    # ---- EC2NodeClass conditions (aws pkg/controllers/nodeclass/*.go), before the Launched reasons they share
    (("condition",), r"^EC2NodeClass/", r"", "error", "platform", "karpenter.nodeclass_not_ready",
     "The EC2NodeClass is not Ready (an AMI, subnet, security group, instance profile, placement group or "
     "validation step did not resolve), so no node is launched from it.",
     _ENC + "; fix the selector, alias or IAM permission the condition names (for AMIs, an alias that exists "
     "for this Kubernetes version, e.g. al2023@latest).", "NodePool NodeClassReady=False for the same NodeClass"),
    # ---- NodeClaim Launched (aws pkg/errors/errors.go ToReasonMessage, NewCreateError reasons)
    (("condition",), r"^(VCPULimitExceeded|SpotQuotaExceeded|FleetQuotaExceeded)$", r"", "error", "capacity",
     "karpenter.quota_exceeded", "EC2 refused the launch because an account quota (vCPUs, spot instances or "
     "fleets) would be exceeded.",
     "Service Quotas in the account and region (EC2 'Running On-Demand ... instances' vCPU quota for the family, "
     "'All ... Spot Instance Requests'); request an increase or allow other instance families.",
     "the NodeClaim's Launched condition and the CreateFleet error code in the controller log"),
    (("condition",), r"^InsufficientFreeAddressesInSubnet$", r"", "error", "platform", "karpenter.subnet_problem",
     "The subnet chosen for the launch has no free IP addresses left.",
     "aws ec2 describe-subnets (AvailableIpAddressCount) for the EC2NodeClass's subnets; add subnets to "
     "spec.subnetSelectorTerms or free addresses (prefix delegation, fewer warm IPs).",
     "status.subnets of the EC2NodeClass and the subnet's AvailableIpAddressCount"),
    (("condition",), r"^(Unauthorized|AMIAuthorizationFailure|SpotSLRCreationFailed)$", r"", "error", "platform", None,
     "The Karpenter controller's IAM role is not allowed to make the launch call (an identity policy, "
     "permission boundary or SCP denies it, or the AMI or spot service-linked role is not permitted).",
     "the controller role's IAM policy: allow ec2:CreateFleet, ec2:RunInstances, ec2:CreateLaunchTemplate, "
     "iam:PassRole and (for spot) iam:CreateServiceLinkedRole; decode the message with "
     "aws sts decode-authorization-message.",
     "the UnauthorizedOperation text in the controller log and CloudTrail"),
    (("condition",), r"^(SecurityGroupSubnetVPCMismatch)$", r"", "error", "platform", None,
     "The EC2NodeClass selects security groups and subnets in different VPCs, so EC2 refuses the launch.",
     _ENC + "; make spec.securityGroupSelectorTerms and spec.subnetSelectorTerms select the cluster's VPC.",
     "aws ec2 describe-security-groups / describe-subnets VpcId"),
    (("condition",), r"^(InstanceProfileNameInvalid|LaunchTemplateNotFound|UserDataSizeLimitExceeded|InvalidAMIID|"
     r"AMINotFound|AccountPendingVerification|FreeTierIneligible)$", r"", "error", "platform", None,
     "EC2 refused the launch because of the EC2NodeClass's configuration (instance profile, launch template, "
     "user data, AMI) or the account's state.",
     _ENC + "; fix the field the condition message names, then watch a new NodeClaim launch.",
     "the controller log line 'failed launching nodeclaim' with the EC2 error"),
    (("condition",), r"^(RequestLimitExceeded|InternalError)$", r"", "warning", "transient", None,
     "The EC2 API throttled the request or failed internally; Karpenter retries the launch.",
     "Nothing if it clears; if it persists, " + _LOG + " and look for other callers throttling EC2 in the account.",
     "repeated Launched=Unknown with the same reason over several minutes"),
    (("condition",), r"^(NodeClassReadinessUnknown)$", r"", "error", "platform", "karpenter.nodeclass_not_ready",
     "The launch waited because the NodeClass's readiness is not known yet.", _ENC,
     "the EC2NodeClass's Ready condition a minute later"),
    (("condition",), r"^SubnetResolutionFailed$", r"", "error", "platform", "karpenter.subnet_problem",
     "Karpenter could not resolve subnets for the launch.", _ENC + "; check spec.subnetSelectorTerms.",
     "status.subnets of the EC2NodeClass"),
    (("condition",), r"^(InstanceTypeResolutionFailed|InstanceTypeFilteringFailed|CreateFleetRequestConstructionFailed)$",
     r"", "error", "spec", "karpenter.no_instance_type",
     "Karpenter could not build a launch from the instance types the NodeClaim allows (requirements or minValues "
     "leave none).", _NC + "; " + _NP + " (minValues).", "the NodeClaim's requirements"),
    (("condition",), r"^LaunchFailed$", r"", "error", "platform", None,
     "The instance launch failed for a reason Karpenter does not class; the condition message carries EC2's error.",
     _NC + "; " + _LOG + " ('failed launching nodeclaim').", "the EC2 error code in the message"),
    # ---- NodeClaim Registered / Initialized, NodePool registration health (core lifecycle)
    (("condition",), r"^ResourceNotRegistered$", r"", "error", "platform", "karpenter.resource_not_registered",
     "The node came up but never advertised an extended resource the NodeClaim expects (nvidia.com/gpu, "
     "vpc.amazonaws.com/efa): the device plugin is missing, crashing or does not tolerate the node's taints.",
     "kubectl get pods -A -o wide | grep <node> for the device plugin DaemonSet pod; kubectl describe node <node> "
     "(capacity vs allocatable); check the plugin's tolerations against the NodePool taints.",
     "the device plugin pod's log on that node"),
    (("condition",), r"^(NodeNotFound|NodeNotReady|StartupTaintsExist|KnownEphemeralTaintsExist|MultipleNodesFound|"
     r"RegistrationFailed|RegistrationHookPending)$", r"", "error", "platform", "karpenter.node_registration_failed",
     "The instance was launched but its node has not registered or initialized (no Node object, NotReady, or "
     "taints still present); after 15 minutes Karpenter deletes the NodeClaim.",
     _NC + "; the instance's console output (aws ec2 get-console-output) and the node's kubelet log; check the "
     "node role's aws-auth / access entry and the user data.",
     "the NodeClaim's age against the 15-minute registration timeout, NodePool NodeRegistrationHealthy"),
    (("condition",), r"^DRADriverPoolsNotPublished$", r"", "warning", "platform", None,
     "The node has not published a complete resource pool for a DRA driver the NodeClaim needs.",
     "kubectl get resourceslices -o wide for the node; the DRA driver's pods on the node.", "the DRA driver log"),
    (("condition",), r"^(NodeClassNotFound|NodeClassTerminating|NodeClassReadinessUnknown)$", r"", "error",
     "platform", "karpenter.nodeclass_not_ready",
     "The NodePool's NodeClass is missing, terminating or not Ready, so Karpenter launches nothing from it.",
     _NP + "; " + _ENC, "the EC2NodeClass's own conditions"),
    (("condition",), r"^(NodePoolValidationFailed)$", r"", "error", "platform", None,
     "The NodePool failed validation, so Karpenter does not provision from it.", _NP,
     "the validation message in the condition"),
    (("condition",), r"^(RuntimeValidation|Conflict)$", r"", "warning", "platform", None,
     "A NodeOverlay failed validation or conflicts with another overlay, so it is not applied.",
     "kubectl describe nodeoverlay <name> (status.conditions).", "the other overlay's selector and weight"),
    (("condition",), r"^ConsistencyCheckFailed$", r"", "warning", "hardware", None,
     "The node Karpenter launched does not match what the NodeClaim expected (resources, taints).",
     "kubectl describe nodeclaim <name> and kubectl get events for FailedConsistencyCheck on it.",
     "node capacity against the instance type's published resources"),
    (("condition",), r"^TerminationGracePeriodElapsed$", r"", "warning", "platform", "karpenter.disruption",
     "The node's terminationGracePeriod elapsed while volumes were still attached; termination went ahead.",
     _NP + " (spec.template.spec.terminationGracePeriod).", "the NodeClaim's deletion timestamp"),
    (("condition",), r"^(Draining|AwaitingVolumeDetachment|DisruptionReason|Drifted|Underutilized|Empty)$", r"",
     "normal", "benign", None, "A routine step of Karpenter's node termination or disruption bookkeeping.",
     "Nothing to do.", ""),
    # ---- EC2NodeClass (aws pkg/controllers/nodeclass)
    # ---- events (core pkg/controllers/**/events.go, aws pkg/controllers/interruption/events)
    (("event",), r"^Nominated$", r"", "normal", "benign", "karpenter.provisioning",
     "Karpenter has nominated a NodeClaim (or an existing node) for the pod: a node is on its way.",
     "Nothing yet; if the pod stays Pending, " + _NC + " and compare its age with the launch (5 min) and "
     "registration (15 min) timeouts.", "the NodeClaim's Launched / Registered conditions"),
    (("event",), r"^FailedScheduling$", r"", "error", "spec", None,
     "Karpenter could not find or create a node for the pod; the text after the comma says why, per NodePool.",
     _POD + "; " + _NP + ".", "the per-NodePool reason in the message"),
    (("event",), r"^InsufficientCapacityError$", r"", "error", "capacity", "karpenter.insufficient_capacity",
     "The NodeClaim's launch failed because EC2 had no capacity for any allowed offering.",
     "Allow more instance types, zones or capacity types in the NodePool, or retry later; " + _NC,
     "the CreateFleet error codes in the message (InsufficientInstanceCapacity, ...)"),
    (("event",), r"^NodeClassNotReady$", r"", "error", "platform", "karpenter.nodeclass_not_ready",
     "The NodeClaim's launch failed because its NodeClass is not Ready.", _ENC,
     "NodePool NodeClassReady=False"),
    (("event",), r"^UnregisteredTaintMissing$", r"", "error", "platform", "karpenter.node_registration_failed",
     "The node registered without the karpenter.sh/unregistered taint (custom user data or an old AMI "
     "dropped it), so Karpenter will not take it over.",
     "the EC2NodeClass user data and kubelet --register-with-taints; " + _ENC, "the node's taints at registration"),
    (("event",), r"^NoCompatibleInstanceTypes$", r"", "error", "spec", "karpenter.no_instance_type",
     "The NodePool's requirements filter out every instance type available to it.",
     _NP + "; widen the requirements or lower minValues.", "the NodePool's requirements against the instance types"),
    # DisruptionBlocked is a Normal event (core pkg/controllers/disruption/events/events.go): Karpenter keeping
    # its own rules (budgets, do-not-disrupt, PDBs), routine news, never a failure.
    (("event",), r"^DisruptionBlocked$", r"budget", "normal", "benign", None,
     "Karpenter may not disrupt nodes of this NodePool now because a disruption budget allows none.",
     _NP + " (spec.disruption.budgets).", "the budget's schedule and duration"),
    (("event",), r"^DisruptionBlocked$", r"", "normal", "benign", None,
     "Karpenter will not disrupt this node: a pod's karpenter.sh/do-not-disrupt annotation, a PDB or the "
     "node's state blocks it.",
     "kubectl describe node <node> and the pod the message names (annotations, PodDisruptionBudgets).",
     "the pod and PDB named in the message"),
    (("event",), r"^(DisruptionTerminating|Disrupted|TerminationGracePeriodExpiring)$", r"", "warning", "platform",
     "karpenter.disruption",
     "Karpenter is removing this node (consolidation, drift, expiry) and the pods on it will be deleted.",
     _NP + " (spec.disruption, expireAfter, terminationGracePeriod); protect training pods with "
     "karpenter.sh/do-not-disrupt: \"true\".", "the pod's termination (exit 143) at the same time"),
    (("event",), r"^Evicted$", r"", "warning", "platform", "karpenter.disruption",
     "Karpenter evicted the pod while draining its node.",
     "kubectl get events --field-selector involvedObject.kind=Node for the node's DisruptionTerminating event; "
     + _NP + " (spec.disruption).", "the node's disruption reason"),
    (("event",), r"^FailedDraining$", r"", "warning", "platform", None,
     "Karpenter could not drain the node it is terminating (an eviction failed or a PDB blocks it).",
     "kubectl get pdb -A; kubectl describe node <node>.", "the pods still on the node"),
    (("event",), r"^NodeRepairBlocked$", r"", "warning", "platform", None,
     "Karpenter's node repair will not replace an unhealthy node because too many nodes of the NodePool are "
     "unhealthy at once (or the NodeClaim is not managed).",
     "kubectl get nodes -l karpenter.sh/nodepool=<pool> and their conditions; repair or cordon by hand.",
     "the unhealthy condition on each node"),
    (("event",), r"^FailedConsistencyCheck$", r"", "warning", "hardware", None,
     "The node does not match what the NodeClaim expected (missing resources, a PDB blocking drain).",
     "kubectl describe node <node> (capacity vs allocatable); kubectl describe nodeclaim <name>.",
     "the instance type's published resources"),
    (("event",), r"^InvalidDoNotDisruptAnnotation$", r"", "warning", "spec", None,
     "The pod's karpenter.sh/do-not-disrupt annotation value is invalid and is ignored.",
     "Set karpenter.sh/do-not-disrupt to \"true\" or a duration (v1.12+) in the pod template.", ""),
    (("event",), r"^(SpotInterrupted|InstanceStopping|InstanceTerminating|TerminatingOnInterruption|"
     r"CapacityReservationInstanceInterrupted)$", r"", "warning", "capacity", "karpenter.interruption",
     "EC2 is taking the instance away (spot interruption, capacity reservation end, stop or termination) and "
     "Karpenter drains the node.",
     "kubectl get events -A --field-selector reason=<reason>; the job's restart policy; use on-demand or "
     "checkpoint more often for long training.", "the interruption queue's message in the controller log"),
    (("event",), r"^InstanceUnhealthy$", r"", "warning", "hardware", "karpenter.interruption",
     "EC2 reported the instance unhealthy (scheduled maintenance or a failed status check) and Karpenter will "
     "replace it.", "aws ec2 describe-instance-status --instance-ids <id>; kubectl describe node <node>.",
     "the instance status checks"),
    (("event",), r"^ZonalShiftActive$", r"", "warning", "capacity", "karpenter.offering_unavailable_in_zone",
     "An ARC zonal shift is active, so Karpenter does not launch into that zone for this NodePool.",
     "aws arc-zonal-shift list-zonal-shifts; allow other zones in the NodePool.", ""),
    (("event",), r"^$", r"Failed resolving NodeClass", "error", "platform", "karpenter.nodeclass_not_ready",
     "Karpenter could not resolve the NodeClass the NodePool or NodeClaim references.",
     _NP + " (spec.template.spec.nodeClassRef); kubectl get ec2nodeclasses.", ""),
    (("event",), r"^$", r"spot instance", "error", "platform", None,
     "A spot launch failed because the spot service-linked role does not exist and Karpenter may not create it.",
     "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com, or allow "
     "iam:CreateServiceLinkedRole to the controller role.", ""),
    (("event",), r"", r"", "normal", "benign", None,
     "A routine Karpenter event (launching, consolidation bookkeeping, a cleared zonal shift).", "Nothing to do.", ""),
    # ---- errors and logs, by text
    (("error", "log"), r"", r"insufficient capacity|with fleet error|instance types were unavailable during launch|"
     r"no capacity offerings are currently available|spread placement group availability zone limit",
     "error", "capacity", "karpenter.insufficient_capacity",
     "EC2 had no capacity for the offerings Karpenter tried.",
     "Allow more instance types, zones or capacity types in the NodePool, or retry later; " + _NC,
     "the fleet error codes in the message"),
    (("error", "log"), r"", r"exceed limits for nodepool|node limits have been exhausted|would breach limits",
     "error", "capacity", "karpenter.nodepool_limit_reached",
     "The NodePool's spec.limits are used up, so Karpenter launches no more nodes from it.",
     _NP + " (spec.limits vs status.resources); raise the limit or free capacity.", "status.resources"),
    (("error", "log"), r"", r"no instance type has the required offering", "error", "capacity",
     "karpenter.offering_unavailable_in_zone",
     "No allowed instance type is offered in the zones and capacity types the pod and NodePool allow.",
     _NP + "; aws ec2 describe-instance-type-offerings --location-type availability-zone.",
     "the offerings of the wanted type per zone"),
    (("error", "log"), r"", r"no instance type|filtered out all (available |compatible )?instance types|minvalues|"
     r"no amis exist|satisfy requirements of amis", "error", "spec", "karpenter.no_instance_type",
     "No instance type satisfies the pod's requests together with the NodePool's requirements.",
     _POD + "; " + _NP + "; compare the requests (nvidia.com/gpu, memory) with the largest allowed type.",
     "the requirements and resources in the message"),
    (("error",), r"", r"storage class|\bpvc\b|persistentvolume", "error", "spec", "storage.provisioning_failed",
     "Karpenter cannot place the pod because of its PersistentVolumeClaim (unbound, no storage class, "
     "unsupported provisioner).", "kubectl describe pvc <claim>; kubectl get storageclass.", ""),
    (("error",), r"", r"incompatible requirements|does not have known values|not in %s|typo of|not supported$",
     "error", "spec", "scheduling.node_selector_mismatch",
     "The pod's node selector or affinity asks for a label value no NodePool can produce.",
     _POD + "; " + _NP + " (requirements and template labels).", "the key named in the message"),
    (("error",), r"", r"did not tolerate", "error", "spec", "scheduling.untolerated_taint",
     "The NodePool's taints are not tolerated by the pod.", _POD + "; " + _NP + " (spec.template.spec.taints).",
     "the taint named in the message"),
    (("error",), r"", r"topology constraint", "error", "spec", "scheduling.topology_spread",
     "The pod's topology spread constraint cannot be met.", _POD + " (topologySpreadConstraints).", ""),
    (("error", "log"), r"", r"nodeclassref not ready|nodeclass status has not been reconciled|resolving cluster cidr|"
     r"discover (any )?amis|al2 aliases|windows server 2025|no security groups are present|incompatible with "
     r"karpenter v1|nodepool not ready|not ready$|tag validation|ready=unknown", "error", "platform", "karpenter.nodeclass_not_ready",
     "The NodeClass Karpenter would launch from is not ready (AMI, security groups or cluster settings not "
     "resolved).", _ENC, "NodePool NodeClassReady=False"),
    (("error",), r"", r"no subnets|subnets", "error", "platform", "karpenter.subnet_problem",
     "Karpenter could not resolve a subnet for the launch (no subnet matched the selector or the lookup failed).",
     _ENC + "; check spec.subnetSelectorTerms tags against aws ec2 describe-subnets.", "status.subnets"),
    (("error",), r"", r"instance profile|role", "error", "platform", "karpenter.nodeclass_not_ready",
     "Karpenter could not create or update the EC2NodeClass's instance profile (IAM).",
     _ENC + " (InstanceProfileReady); allow iam:*InstanceProfile* and iam:PassRole on the node role to the "
     "controller role.", "the IAM error in the controller log"),
    (("log",), r"^ERROR$", r"registration error", "error", "platform", "karpenter.node_registration_failed",
     "Karpenter failed to register a launched node with its NodeClaim.",
     _NC + "; the log line's error field.", "the NodeClaim's Registered condition"),
    (("error",), r"", r"missing .*taint|registration|register", "error", "platform",
     "karpenter.node_registration_failed",
     "The launched node did not register with the cluster as Karpenter expects.",
     _NC + "; the node's kubelet log and the instance console output.", "the NodeClaim's Registered condition"),
    (("log",), r"", r"terminating due to (registration ttl|timeout)", "error", "platform",
     "karpenter.node_registration_failed",
     "Karpenter deleted a NodeClaim that did not launch (5 min) or register (15 min) in time.",
     _NC + "; the NodePool's NodeRegistrationHealthy condition.", "the NodeClaim's last conditions"),
    # The reasons a node cannot be disrupted (core pkg/controllers/state/statenode.go ValidatePodsDisruptable):
    # Karpenter honouring a PDB or do-not-disrupt, reported as a Normal DisruptionBlocked event; the job is
    # protected, which is no failure.
    (("error",), r"", r"do-not-disrupt|pdb|disruption is blocked", "normal", "benign", None,
     "Voluntary disruption of this node is blocked by a pod annotation, a node annotation or a PDB.",
     "The pod or PDB the message names: kubectl get pdb -A; kubectl get pod -o yaml (annotations).", ""),
    (("error",), r"", r"user ?data|content-type|multipart|mime|nodeconfig|toml", "error", "platform", None,
     "Karpenter could not render the EC2NodeClass's user data.", _ENC + " (spec.userData format for the AMI family).",
     "the user data in the EC2NodeClass"),
    (("error",), r"", r"dynamic resource", "error", "spec", None,
     "The pod uses Dynamic Resource Allocation, which this Karpenter does not schedule.",
     "Use extended resources (nvidia.com/gpu) instead, or a Karpenter release with DRA support.", ""),
    (("error",), r"", r"hostport|volume limit|exceeds node resources", "warning", "spec", None,
     "The pod does not fit an existing or in-flight node (host port, volume limit or resources).", _POD, ""),
    (("error",), r"", r"incompatible with nodepool|incompatible volume requirements|failed scheduling pod to",
     "error", "spec", None,
     "The pod does not fit a NodePool or an existing node; the wrapped error says which requirement fails.",
     _POD + "; " + _NP + ".", "the wrapped error at the end of the message"),
    (("error",), r"", r"reserv", "warning", "capacity", None,
     "Karpenter could not use a capacity reservation offering for the pod and falls back or retries.",
     _NP + " (karpenter.sh/capacity-type reserved); " + _ENC + " (status.capacityReservations).",
     "aws ec2 describe-capacity-reservations"),
    (("error",), r"", r"creating node claim|creating nodeclaim|launching nodeclaim|creating instance|creating fleet|launch template|"
     r"failed to construct createfleet", "error", "platform", None,
     "A NodeClaim launch failed; the wrapped error names the EC2 call and its code.",
     _NC + "; " + _LOG + " ('failed launching nodeclaim').", "the EC2 error code at the end of the message"),
    (("error",), r"", r"nodeclaim not found|instance not found|already terminated", "warning", "transient", None,
     "The instance behind a NodeClaim no longer exists (terminated outside Karpenter or interrupted).",
     _NC + "; CloudTrail TerminateInstances for the instance.", "an interruption event for the node"),
    (("error",), r"", r"zonally shifted", "warning", "capacity", "karpenter.offering_unavailable_in_zone",
     "The instance is in an availability zone under an ARC zonal shift.", "aws arc-zonal-shift list-zonal-shifts.",
     ""),
    (("error",), r"", r"nominated|isn't initialized|not managed by karpenter|isn't managed|marked for deletion|"
     r"deleting or marked|doesn't have required label|does not have an associated node|doesn't contain both|"
     r"awaiting evaluation|not to run on|configured to not run", "normal", "benign", None,
     "A reason Karpenter skips a node or pod in its own bookkeeping; nothing failed.", "Nothing to do.", ""),
    (("log",), r"", r"initiating delete from interruption|detected unhealthy instance", "warning", "capacity",
     "karpenter.interruption",
     "Karpenter received an EC2 interruption or health notice for an instance and is deleting its node.",
     "kubectl get events -A for SpotInterrupted / InstanceTerminating / InstanceUnhealthy around that time.",
     "the interruption events on the node and NodeClaim"),
    (("log",), r"", r"disrupting node|deleting unhealthy node", "warning", "platform", "karpenter.disruption",
     "Karpenter started removing node(s) (consolidation, drift, expiry or node repair).",
     _NP + " (spec.disruption); the log line's reason and NodeClaim names.", "DisruptionTerminating events"),
    (("log",), r"", r"unauthorized to call|permission is not allowed", "error", "platform", None,
     "The Karpenter controller role lacks an IAM permission it needs.",
     "Add the EC2 action the line names to the controller role's policy and restart Karpenter.",
     "CloudTrail AccessDenied for the controller role"),
    (("log",), r"", r"could not schedule pod|failed launching nodeclaim|ignoring nodepool", "error", "spec", None,
     "Karpenter failed to schedule a pod or to launch a NodeClaim; the log line's error field says why.",
     _LOG + "; read the 'error' field of the line.", "the matching FailedScheduling or Launched condition"),
    (("log",), r"^ERROR$", r"", "warning", "transient", None,
     "A Karpenter controller reported an error it retries.", _LOG, "the same line repeating"),
    (("log",), r"", r"", "normal", "benign", None,
     "A routine Karpenter controller log line (launched, registered, initialized, computed, found pods).",
     "Nothing to do.", ""),
    (("error",), r"", r"", "warning", "transient", None,
     "A Karpenter controller call failed (an API list, get, patch or cloud lookup) and is retried.",
     _LOG + "; if it repeats, read the wrapped error.", "the same error repeating"),
]


# The error type a launch error is wrapped in (core pkg/cloudprovider/types.go) decides before its words.
_WRAPPED = {"InsufficientCapacityError": "karpenter.insufficient_capacity",
            "NodeClassNotReadyError": "karpenter.nodeclass_not_ready"}


def _rule(item: dict) -> Rule:
    wrapped = _WRAPPED.get(item.get("wrapped_as", ""))
    if wrapped:
        return next(r for r in RULES if r[0] == ("error", "log") and r[5] == wrapped)
    for rule in RULES:
        kinds, reason_re, message_re = rule[:3]
        if item["kind"] not in kinds:
            continue
        reason_field = item["type"] if item["kind"] == "log" else item["reason"]
        if item["kind"] == "condition" and item["repo"] == AWS and item["type"] in NODECLASS_CONDITIONS:
            reason_field = "EC2NodeClass/" + item["reason"]
        if reason_re and not re.search(reason_re, reason_field, re.I):
            continue
        if message_re and not re.search(message_re, item["message"], re.I):
            continue
        return rule
    raise ValueError(f"no rule for {item}")


def classify(snapshot: dict) -> list[dict]:
    specific = {(i["kind"], i["reason"]) for i in snapshot["items"] if i["message"] not in ("%s", "")}
    rows = []
    for item in snapshot["items"]:
        if item.get("dynamic") and (item["kind"], item["reason"]) in specific:
            continue  # the caller's text: the reason's own formats are listed, a catch-all would shadow them
        _, _, _, level, owner, code, meaning, next_step, upgrade = _rule(item)
        if item["kind"] == "event" and item["type"] == "Normal" and level == "error":
            level = "warning"
        rows.append(common.row(component=COMPONENT, kind=item["kind"], reason=item["reason"], level=level,
                               message=item["message"], owner=owner, meaning=meaning, next_step=next_step,
                               upgrade=upgrade, code=code, where=item["where"], literal=item["kind"] == "log"))
    return rows
