"""The GPU and network stack's own vocabulary: what the NVIDIA device plugin (and GPU Feature Discovery, in
the same repository), the GPU Operator's validator and controllers, the MIG manager, the DCGM exporter, the
NVIDIA container runtime, the EKS node monitoring agent and the AWS OFI NCCL plugin write.

Read from source at the last patch tag of the newest minor series each mirror holds (TAGS below). Log
lines come from the logging calls of the files named in SCANS (klog, logrus, logr, slog, NCCL_OFI_WARN),
errors from the ``fmt.Errorf`` formats of the files whose errors end in a log line or a refused
allocation; the node monitoring agent's conditions from pkg/reasons/reasons.yaml (the file its reasons are
generated from) and the ``.Message(...)`` each monitor builds for them.

aws/aws-efa-k8s-device-plugin has no snapshot here and aws/eks-charts holds only its Helm chart (no
message the plugin writes), so the EFA device plugin's own log lines are not in this table.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from scripts.cluster_tables.common import git, mirror, row, show

NAME = "gpu_stack"
MIRRORS = ("github:NVIDIA/k8s-device-plugin", "github:NVIDIA/gpu-operator", "github:NVIDIA/mig-parted",
           "github:NVIDIA/dcgm-exporter", "github:NVIDIA/nvidia-container-toolkit",
           "github:aws/eks-node-monitoring-agent", "github:aws/aws-ofi-nccl")

# The last patch tag of each of the newest minor series in the mirrors (dcgm-exporter tags are
# <DCGM version>-<exporter version>: exporter 4.8, 4.7 and 4.6; the node monitoring agent has two series).
TAGS = {
    "NVIDIA/k8s-device-plugin": ("v0.20.0", "v0.19.3", "v0.18.2"),
    "NVIDIA/gpu-operator": ("v26.7.0", "v26.3.3", "v25.10.1"),
    "NVIDIA/mig-parted": ("v0.15.0", "v0.14.5", "v0.13.1"),
    "NVIDIA/dcgm-exporter": ("4.5.3-4.8.2", "4.4.2-4.7.1", "4.4.1-4.6.0"),
    "NVIDIA/nvidia-container-toolkit": ("v1.20.0", "v1.19.1", "v1.18.2"),
    "aws/eks-node-monitoring-agent": ("v1.7.0", "v1.6.7"),
    "aws/aws-ofi-nccl": ("v1.21.1", "v1.20.0", "v1.19.2"),
}

# ------------------------------------------------------------------------------------- Go source scanning
# Tokens of Go (and C) source: string literals, runes, comments, brackets, commas, the rest.
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|`[^`]*`|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/|[()\[\]{},]'
                    r'|[^"`\'()\[\]{},/]+|/', re.S)
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`([^`]*)`')
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
# C's <inttypes.h> macros spliced between literals ("%" PRIu64): the conversion they expand to.
_PRI = {"PRIu64": "lu", "PRId64": "ld", "PRIx64": "lx", "PRIi64": "ld", "PRIu32": "u", "PRId32": "d",
        "PRIx32": "x", "PRIu16": "u", "PRIu8": "u"}
_WRAPPER = re.compile(r"^[\w.]+\((.*)\)$", re.S)
# Go's escapes that a JSON string does not take.
_GO_ESCAPE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
              '"': '"', "'": "'"}


def call_args(src: str, open_paren: int) -> list[str]:
    """The top-level arguments (raw text) of the call whose "(" is at ``open_paren``."""
    depth, out, cur = 0, [], []
    for m in _TOKEN.finditer(src, open_paren):
        t = m.group()
        if t.startswith("//") or t.startswith("/*"):
            continue
        if t in "([{":
            depth += 1
            if depth == 1:
                continue
        elif t in ")]}":
            depth -= 1
            if depth == 0:
                out.append("".join(cur).strip())
                return out
        elif t == "," and depth == 1:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(t)
    return out


def _unquote(body: str) -> str:
    return re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)",
                  lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) > 1 else _GO_ESCAPE.get(m.group(1), m.group(1)),
                  body)


def literal(expr: str, consts: dict[str, str] | None = None) -> str | None:
    """The text of a string expression: literals joined by ``+`` (Go) or side by side (C), named constants
    from ``consts``, C's PRI macros; a wrapper call (fmt.Sprintf, TruncateEventMessage) is read through to
    its first argument. None when any part is not known text."""
    expr = expr.strip()
    wrapped = _WRAPPER.match(expr)
    if wrapped and not expr.startswith(('"', "`")):
        args = call_args(expr, expr.index("("))
        return literal(args[0], consts) if args and args[0] else None
    parts, pos = [], 0
    while pos < len(expr):
        while pos < len(expr) and expr[pos] in " \t\n+\\":
            pos += 1
        if pos >= len(expr):
            break
        m = _STRING.match(expr, pos)
        if m:
            parts.append(_unquote(m.group(1)) if m.group(1) is not None else m.group(2))
            pos = m.end()
            continue
        m = _IDENT.match(expr, pos)
        if not m:
            return None
        name = m.group()
        if name in _PRI:
            parts.append(_PRI[name])
        elif consts is not None and name.split(".")[-1] in consts:
            parts.append(consts[name.split(".")[-1]])
        else:
            return None
        pos = m.end()
    return "".join(parts) if parts else None


def calls(src: str, callee: re.Pattern) -> list[tuple[int, re.Match, list[str]]]:
    """(line, match, arguments) of each call ``callee`` matches (its match ends at the "(")."""
    found = []
    for m in callee.finditer(src):
        found.append((src.count("\n", 0, m.start()) + 1, m, call_args(src, m.end() - 1)))
    return found


def go_consts(src: str) -> dict[str, str]:
    """Name = "value" declarations of a Go file (const blocks and single consts)."""
    return {m.group(1): _unquote(m.group(2))
            for m in re.finditer(r'^\s*(?:const\s+)?([A-Z]\w*)(?:\s+[\w.]+)?\s*=\s*"((?:[^"\\\n]|\\.)*)"', src, re.M)}


def line_of(src: str, needle: str) -> int | None:
    at = src.find(needle)
    return None if at < 0 else src.count("\n", 0, at) + 1


def letters(fmt: str) -> int:
    return sum(c.isalpha() for c in re.sub(r"%[-+ #0-9.*]*[a-zA-Z]", "", fmt))


def clean(message: str) -> str:
    """A log format as the line shows it: the trailing newline a Printf-style call adds is not part of it."""
    return message.rstrip("\n").rstrip() if message.endswith("\n") else message


def merge(items: list[dict]) -> list[dict]:
    """One item per (component, kind, reason, type, message), ``where`` merged across tags and files."""
    merged: dict[tuple, dict] = {}
    for item in items:
        key = (item["component"], item["kind"], item["reason"], item.get("type", ""), item["message"])
        if key in merged:
            merged[key]["where"] = sorted(set(merged[key]["where"]) | set(item["where"]))
            for k, v in item.items():
                merged[key].setdefault(k, v)
        else:
            merged[key] = dict(item, where=sorted(set(item["where"])))
    return sorted(merged.values(), key=lambda i: (i["component"], i["kind"], i["reason"], i["message"]))


# ------------------------------------------------------------------------------------------ what is read
# Loggers and the level each method logs at (klog: k8s.io/klog/v2; logrus: github.com/sirupsen/logrus;
# logr: github.com/go-logr/logr, Error(err, msg); slog: log/slog). Verbose klog.V(n) and logr V(n) lines
# are left out: they are debugging output, off by default.
_LEVEL = {"Info": "normal", "Infof": "normal", "Infoln": "normal", "InfoS": "normal", "Print": "normal",
          "Printf": "normal", "Println": "normal", "Warn": "warning", "Warnf": "warning", "Warning": "warning",
          "Warningf": "warning", "Warnln": "warning", "Error": "error", "Errorf": "error", "ErrorS": "error",
          "Errorln": "error", "Fatal": "error", "Fatalf": "error", "Fatalln": "error", "Exit": "error",
          "Exitf": "error", "Panic": "error", "Panicf": "error", "Panicln": "error"}
KLOG = re.compile(r"\bklog\.(Info|Infof|InfoS|Warning|Warningf|Error|Errorf|ErrorS|Fatal|Fatalf|Exit|Exitf)\(")
LOGRUS = re.compile(r"(?<![\w.])(?:log|logger|\w+\.logger|\w+\.log)\.(Info|Infof|Warn|Warnf|Warning|Warningf|Error|Errorf"
                    r"|Fatal|Fatalf|Panic|Panicf|Panicln|Printf|Println)\(")
LOGR = re.compile(r"(?<![\w.])(?:logger|log|reqLogger|\w+\.log|\w+\.logger|r\.Log)\.(Info|Error)\(")
SLOG = re.compile(r"\bslog\.(Info|Warn|Error)\(")
ERRORF = re.compile(r"\bfmt\.Errorf\(")
OFI_WARN = re.compile(r"\bNCCL_OFI_WARN\(")
CONDITION_SET = re.compile(r"\.SetConditions(Error|Ready)\(")

# (repo, component, files (a path regex), scanner, kind)
SCANS = (
    ("NVIDIA/k8s-device-plugin", "nvidia-device-plugin",
     r"^(cmd/nvidia-device-plugin/[^/]+|internal/plugin/[^/]+|internal/rm/[^/]+|internal/resource/factory)\.go$",
     KLOG, "log"),
    # Errors of start-up and of Allocate: main logs them before exiting, kubelet quotes Allocate's in
    # UnexpectedAdmissionError.
    ("NVIDIA/k8s-device-plugin", "nvidia-device-plugin",
     r"^(cmd/nvidia-device-plugin/main|internal/plugin/(server|factory)|internal/rm/(health|rm|nvml_manager))\.go$",
     ERRORF, "error"),
    ("NVIDIA/k8s-device-plugin", "gpu-feature-discovery",
     r"^(cmd/gpu-feature-discovery/main|internal/lm/[^/]+)\.go$", KLOG, "log"),
    ("NVIDIA/gpu-operator", "nvidia-operator-validator", r"^cmd/nvidia-validator/(main|driver)\.go$", LOGRUS, "log"),
    # The validator's errors end in its "Error: %v" line and a failed init container.
    ("NVIDIA/gpu-operator", "nvidia-operator-validator", r"^cmd/nvidia-validator/(main|driver)\.go$", ERRORF, "error"),
    ("NVIDIA/gpu-operator", "gpu-operator", r"^controllers/(clusterpolicy_controller|nvidiadriver_controller)\.go$",
     CONDITION_SET, "condition"),
    ("NVIDIA/mig-parted", "nvidia-mig-manager",
     r"^(cmd/nvidia-mig-manager/[^/]+|pkg/mig/reconfigure/[^/]+)\.go$", LOGRUS, "log"),
    ("NVIDIA/dcgm-exporter", "dcgm-exporter",
     r"^(pkg/cmd/app|internal/pkg/dcgmprovider/[^/]+|internal/pkg/server/server|internal/pkg/transformation/kubernetes"
     r"|internal/pkg/nvmlprovider/provider|internal/pkg/devicewatcher/device_watcher)\.go$", SLOG, "log"),
    ("NVIDIA/nvidia-container-toolkit", "nvidia-container-runtime",
     r"^(cmd/nvidia-container-runtime/[^/]+|cmd/nvidia-container-runtime-hook/[^/]+|internal/runtime/[^/]+"
     r"|internal/modifier/[^/]+)\.go$", LOGRUS, "log"),
    # Errors of the runtime and its modifiers abort the container's creation: the kubelet event quotes
    # them after "OCI runtime create failed".
    ("NVIDIA/nvidia-container-toolkit", "nvidia-container-runtime",
     r"^(internal/runtime/[^/]+|internal/modifier/[^/]+|cmd/nvidia-container-runtime-hook/main)\.go$", ERRORF, "error"),
    ("aws/aws-ofi-nccl", "aws-ofi-nccl",
     r"^src/(nccl_ofi_net|nccl_ofi_ofiutils|platform-aws|nccl_ofi_api|nccl_ofi_rdma|nccl_ofi_sendrecv"
     r"|nccl_ofi_topo|nccl_ofi_cuda|nccl_ofi_mr|nccl_ofi_system|cm/[^/]+)\.cpp$", OFI_WARN, "log"),
)
# Formats with fewer letters than this outside their verbs ("%v", "Error: %v") name nothing.
MIN_LETTERS = 8


def _scan(repo: str, gitdir: Path, tag: str, component: str, files_re: str, callee: re.Pattern,
          kind: str, listing: list[str]) -> list[dict]:
    items = []
    for path in listing:
        if not re.search(files_re, path) or path.endswith("_test.go"):
            continue
        src = show(gitdir, tag, path) or ""
        consts = go_consts(src)
        for line, m, args in calls(src, callee):
            item = {"component": component, "kind": kind, "reason": "", "type": "", "where": [f"{tag}:{path}:{line}"]}
            if callee is ERRORF:
                message, item["level"] = (literal(args[0]) if args else None), "error"
            elif callee is OFI_WARN:
                message, item["level"] = (literal(args[0]) if args else None), "error"
            elif callee is CONDITION_SET:
                if len(args) < 4:
                    continue
                # A reason held in a variable is not upstream's fixed vocabulary: left out.
                reason = literal(args[2], consts) or (args[2].split(".")[-1] if "." in args[2] else None)
                if not reason:
                    continue
                message = literal(args[3], consts) or ""
                item.update(reason=reason, type="Ready" if m.group(1) == "Ready" else "Error",
                            level="error" if m.group(1) == "Error" else "normal")
                if message and letters(message) < MIN_LETTERS:
                    message = ""
                item["message"] = message
                items.append(item)
                continue
            else:
                method = m.group(1)
                index = 1 if (callee is LOGR and method == "Error") or method == "ErrorS" else 0
                message = literal(args[index]) if len(args) > index else None
                item["level"] = _LEVEL[method]
            if message is None:
                continue
            message = clean(message)
            # Multi-line dumps (a config printed under a heading) are not a message a line can carry.
            if letters(message) < MIN_LETTERS or "\n" in message.strip():
                continue
            item["message"] = message
            items.append(item)
    return items


# The node monitoring agent: the condition it sets, its reasons.yaml and the monitors building messages.
NMA = "aws/eks-node-monitoring-agent"
NMA_CONDITION = "AcceleratedHardwareReady"
_REASON_USE = re.compile(r"reasons\.(\w+)\b")
_MESSAGE = re.compile(r"\.\s*Message\(")


def _reasons_yaml(text: str) -> dict[str, dict[str, dict]]:
    """reasons.yaml: condition type -> reason name -> {Template, DefaultSeverity, Description}; a small
    reader for its fixed shape (two-space nesting, ``>-`` folded descriptions)."""
    out: dict[str, dict[str, dict]] = {}
    cond = name = None
    folding = False
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip())
        line = raw.strip()
        if indent == 0:
            cond = line.rstrip(":")
            out[cond] = {}
            folding = False
        elif indent == 2:
            name = line.rstrip(":")
            out[cond][name] = {}
            folding = False
        elif indent == 4:
            key, _, value = line.partition(":")
            value = value.strip()
            if value == ">-":
                out[cond][name][key] = ""
                folding = key
            else:
                out[cond][name][key] = value.strip("'\"")
                folding = False
        elif folding:
            prev = out[cond][name][folding]
            out[cond][name][folding] = (prev + " " + line).strip()
    return out


def _nma(gitdir: Path, tag: str) -> list[dict]:
    reasons = _reasons_yaml(show(gitdir, tag, "pkg/reasons/reasons.yaml") or "")
    accelerated = reasons.get(NMA_CONDITION, {})
    yaml_line = {name: line_of(show(gitdir, tag, "pkg/reasons/reasons.yaml") or "", f"  {name}:") for name in accelerated}
    # The messages each monitor gives a reason: the .Message(...) of the builder chain that names it.
    messages: dict[str, list[tuple[str, str]]] = {}
    well_known: list[int] = []
    for path in sorted(p for p in git(gitdir, "ls-tree", "-r", "--name-only", tag, "monitors/nvidia").split()
                       if p.endswith(".go") and not p.endswith("_test.go") and "/fake/" not in p):
        src = show(gitdir, tag, path) or ""
        found = re.search(r"WellKnownXidCodes\s*=\s*\[\]\w+\{([^}]*)\}", src)
        if found:
            well_known = [int(x) for x in re.findall(r"\d+", found.group(1))]
        for line, m, args in calls(src, _MESSAGE):
            message = literal(args[0]) if args else None
            if not message:
                continue
            # The builder chain starts at the last reasons.X (or a variable holding one) before .Message(.
            before = src[max(0, m.start() - 600):m.start()]
            uses = _REASON_USE.findall(before)
            if not uses:
                continue
            messages.setdefault(uses[-1], []).append((message, f"{tag}:{path}:{line}"))
    items = []
    for name, spec in accelerated.items():
        # DCGMHealthCodeFatal is DCGMHealthCode's template with a fatal severity: dcgm_healthcheck.go builds
        # both from reasons.DCGMHealthCode and sets the severity from the health result.
        if name == "DCGMHealthCodeFatal":
            continue
        where = [f"{tag}:pkg/reasons/reasons.yaml:{yaml_line[name]}"]
        base = {"component": "eks-node-monitoring-agent", "kind": "condition", "type": NMA_CONDITION,
                "severity": spec.get("DefaultSeverity", ""), "description": spec.get("Description", ""),
                "level": "error" if spec.get("DefaultSeverity") == "Fatal" else "warning"}
        template = spec.get("Template", name)
        reasons_of = [template]
        # NvidiaXID%dError is set for the XIDs the agent calls well known (dcgm_policies.go), each its
        # own reason on the node: one entry per XID, so the reason on the node finds it.
        if template == "NvidiaXID%dError" and well_known:
            reasons_of = [f"NvidiaXID{x}Error" for x in well_known]
        for reason in reasons_of:
            for message, at in messages.get(name, [("", "")]):
                items.append(dict(base, reason=reason, message=message, template=template,
                                  where=where + ([at] if at else [])))
    return items


def refresh(mirrors: Path) -> dict:
    gitdirs = {repo: mirror(mirrors, repo) for repo in TAGS}
    items: list[dict] = []
    commits = {}
    for repo, tags in TAGS.items():
        for tag in tags:
            commits[f"{repo}@{tag}"] = git(gitdirs[repo], "rev-parse", f"{tag}^{{commit}}").strip()
            if repo == NMA:
                items.extend(_nma(gitdirs[repo], tag))
                continue
            listing = git(gitdirs[repo], "ls-tree", "-r", "--name-only", tag).split()
            for scan_repo, component, files_re, callee, kind in SCANS:
                if scan_repo == repo:
                    items.extend(_scan(repo, gitdirs[repo], tag, component, files_re, callee, kind, listing))
    tagged = "; ".join(f"{repo} {', '.join(tags)}" for repo, tags in TAGS.items())
    return {"source": f"upstream source at {tagged}", "commits": commits, "items": merge(items)}


# ------------------------------------------------------------------------------------------------ classing
# (component regex, message-or-reason regex, fields). First match wins; fields: level (overrides the
# logged level), owner, meaning, next, upgrade, code.
_PLUGIN_LOGS = "kubectl -n <ns> logs <nvidia-device-plugin pod on the node> (--previous when it restarted)"
_UNHEALTHY = dict(level="error", owner="hardware", code="gpu.unhealthy_device",
                  meaning="The device plugin withdrew a GPU from the node's allocatable nvidia.com/gpu: the "
                          "driver reported it faulty or lost.",
                  next="Compare the node's capacity and allocatable nvidia.com/gpu, read dmesg for the Xid, drain "
                       "the node and replace the instance if the Xid is a hardware one (48, 63, 64, 74, 79, 94, 95).",
                  upgrade="The matching NVRM Xid line in dmesg, nvidia-smi -q (Remapped Rows, ECC), the node's "
                          "AcceleratedHardwareReady condition.")
_XID_NODE = dict(level="error", owner="hardware", code="gpu.xid_error",
                 meaning="The node monitoring agent saw a GPU Xid it treats as critical and set "
                         "AcceleratedHardwareReady=False; node auto repair replaces or reboots the node.",
                 next="Drain the node (node auto repair does it after 10 minutes when enabled), restart the job "
                      "from its last checkpoint elsewhere, and look the Xid up in NVIDIA's catalogue.",
                 upgrade="The NVRM Xid line in the node's kernel log (journalctl -k) with the PCI address.")
RULES: tuple[tuple[str, str, dict], ...] = (
    # --- NVIDIA device plugin: internal/rm/health.go marks devices unhealthy (it logs at Info, but the
    # device is then withdrawn from kubelet: a GPU the pod asked for can no longer be allocated).
    ("nvidia-device-plugin", r"(?i)\bunhealthy\b", _UNHEALTHY),
    ("nvidia-device-plugin", r"^Ignoring the following XIDs|^Skipping |^Processing event|^Ignoring event for unexpected"
                             r"|^Event for mig device|^Ignoring malformed Xid",
     dict(level="normal", owner="benign", code=None,
          meaning="The device plugin's health check reporting what it watches or skips: routine.",
          next="Nothing to do; look for a later 'marking ... unhealthy' line if GPUs went missing.", upgrade="")),
    ("nvidia-device-plugin", r"(?i)failed to initialize NVML|nvml init failed|Incompatible strategy detected"
                             r"|No devices found|invalid device discovery strategy|If this is (not )?a GPU node"
                             r"|^You can (check|learn)",
     dict(level="error", owner="platform", code="gpu.device_plugin_missing",
          meaning="The device plugin found no usable NVIDIA driver or GPU on the node, so it advertises no "
                  "nvidia.com/gpu: the driver is not loaded, the container runtime is not the nvidia one, or "
                  "the plugin runs on a node without GPUs.",
          next="On the node check the driver (nvidia-smi, lsmod | grep nvidia) and that containerd's default "
               "runtime is nvidia (or CDI is set up); on EKS use the accelerated AMI for GPU nodes; keep the "
               "plugin's nodeSelector to GPU nodes.",
          upgrade=_PLUGIN_LOGS + "; the node's capacity (kubectl get node -o jsonpath='{.status.capacity}').")),
    ("nvidia-device-plugin", r"(?i)could not (start|register) device plugin|GRPC server .* repeatedly crashed"
                             r"|error starting plugins|failed to create FS watcher|unable to load config"
                             r"|unable to validate flags|error getting plugins",
     dict(level="error", owner="platform", code="gpu.device_plugin_missing",
          meaning="The device plugin could not start or register with kubelet, so the node advertises no "
                  "nvidia.com/gpu.",
          next="Read the plugin pod's log and restart it; check that /var/lib/kubelet/device-plugins is mounted "
               "and that its configuration (flags, ConfigMap) is valid.",
          upgrade=_PLUGIN_LOGS + "; kubelet's log for the registration.")),
    ("nvidia-device-plugin", r"(?i)allocat",
     dict(level="error", owner="platform", code=None,
          meaning="The device plugin refused a GPU allocation request from kubelet: the pod fails admission "
                  "(UnexpectedAdmissionError) on this node.",
          next="Read the pod's events and the plugin's log; delete the pod so it is placed again, and check the "
               "plugin's sharing / MIG configuration against what the pod asks.",
          upgrade="The pod's UnexpectedAdmissionError event and the plugin log at that time.")),
    ("nvidia-device-plugin", r"Failed to start one or more plugins|GRPC server for .* crashed with error",
     dict(level="warning", owner="transient", code=None,
          meaning="The device plugin failed to start or its gRPC server crashed, and it retries: the node's "
                  "nvidia.com/gpu may be missing until it succeeds.",
          next="Watch whether it recovers; if the line repeats, read the error before it in the plugin's log.",
          upgrade=_PLUGIN_LOGS + ".")),
    ("nvidia-device-plugin", r"^(Starting|Registered|Stopping|Starting GRPC|Retreiving|Retrieving|Loading|Label|"
                             r"Updating|Detected|Using|Running|Starting FS|Starting OS|Inotify|Received signal)",
     dict(level="normal", owner="benign", code=None,
          meaning="The device plugin starting, registering with kubelet or listing devices: routine.",
          next="Nothing to do.", upgrade="")),
    # --- GPU Feature Discovery
    ("gpu-feature-discovery", r"(?i)NVML|no devices|failed",
     dict(owner="platform", code=None,
          meaning="GPU Feature Discovery could not read the GPUs, so the node's nvidia.com/gpu.* labels are "
                  "missing or stale (selectors on them match nothing).",
          next="Check the driver on the node and the GFD pod's log; compare the node's nvidia.com/* labels with "
               "the pod's nodeSelector.",
          upgrade="kubectl get node --show-labels | grep nvidia.com; the GFD pod log.")),
    # --- GPU Operator validator (cmd/nvidia-validator/main.go)
    ("nvidia-operator-validator", r"GPU resources are not discovered by the node|unable to find any allocatable GPU",
     dict(level="error", owner="platform", code="gpu.device_plugin_missing",
          meaning="The GPU Operator's plugin validation found no nvidia.com/gpu on the node: the device plugin "
                  "is not running or not registered there.",
          next="Look at the nvidia-device-plugin-daemonset pod on that node (logs, restarts) and at the driver "
               "and toolkit validations before it.",
          upgrade="kubectl -n gpu-operator get pods -o wide on the node; the device plugin's log.")),
    ("nvidia-operator-validator", r"(?i)GPU resources are not yet discovered",
     dict(level="warning", owner="transient", code=None,
          meaning="The validator is still waiting for the device plugin to advertise GPUs: normal for a few "
                  "minutes after the node joins.",
          next="Wait; if it keeps retrying, look at the device plugin pod on the node.", upgrade="")),
    ("nvidia-operator-validator", r"(?i)driver|nvidia-smi|kernel module",
     dict(owner="platform", code=None,
          meaning="The GPU Operator could not validate the NVIDIA driver on the node: the driver container has "
                  "not finished (or failed) installing, or a pre-installed driver is broken; every GPU operand "
                  "waits on it.",
          next="Read the nvidia-driver-daemonset pod's log on the node (build or load errors), or nvidia-smi on "
               "the host when the driver comes with the AMI (then set driver.enabled=false).",
          upgrade="The driver pod's log, dmesg for NVRM lines, nvidia-smi output on the node.")),
    ("nvidia-operator-validator", r"(?i)toolkit|runtime",
     dict(owner="platform", code=None,
          meaning="The GPU Operator could not validate the NVIDIA container toolkit: containers cannot be given "
                  "GPUs on the node yet.",
          next="Read the nvidia-container-toolkit-daemonset pod's log and containerd's configuration on the node.",
          upgrade="The toolkit pod's log; /etc/containerd/config.toml on the node.")),
    ("nvidia-operator-validator", r"(?i)cuda",
     dict(owner="platform", code=None,
          meaning="The GPU Operator's CUDA workload validation failed: a CUDA sample pod could not run on the node.",
          next="Read the cuda-validation pod's log and events (image pull, driver mismatch, GPU not allocatable).",
          upgrade="The cuda-validation pod's log and events.")),
    ("nvidia-operator-validator", r"(?i)plugin",
     dict(owner="platform", code=None,
          meaning="The GPU Operator's device plugin validation failed on the node.",
          next="Read the plugin-validation pod's events and the device plugin's log on the node.",
          upgrade="The plugin-validation pod's events.")),
    ("nvidia-operator-validator", r"(?i)completed successfully|have run successfully|^version|Detected a pre-installed"
                                  r"|^Validating|^Attempting|^creating symlinks|already loaded|workload config"
                                  r"|GPU workload configuration",
     dict(level="normal", owner="benign", code=None,
          meaning="The GPU Operator's validator progressing through its checks: routine.",
          next="Nothing to do.", upgrade="")),
    # --- GPU Operator ClusterPolicy / NVIDIADriver conditions (internal/conditions/consts.go)
    ("gpu-operator", r"^(DriverNotReady|OperandNotReady)$",
     dict(level="warning", owner="platform", code=None,
          meaning="The GPU Operator is waiting for its operand pods (driver, toolkit, device plugin, validator) "
               "to become ready on the GPU nodes; until then no GPU can be allocated there.",
          next="kubectl -n gpu-operator get pods -o wide: read the log of the first operand not Ready on the "
               "node (usually the driver).",
          upgrade="The operand pods' status and logs on the affected node.")),
    ("gpu-operator", r"^ReconcileFailed$",
     dict(level="error", owner="platform", code=None,
          meaning="The GPU Operator failed to apply its ClusterPolicy / NVIDIADriver: an operand's objects could "
               "not be created or a state failed.",
          next="Read the condition's message and the gpu-operator pod's log; fix the ClusterPolicy field or the "
               "permission it names.",
          upgrade="kubectl get clusterpolicy -o yaml (status.conditions); the operator's log.")),
    ("gpu-operator", r"^(NFDLabelsMissing|NoGPUNodes)$",
     dict(level="warning", owner="platform", code="gpu.device_plugin_missing",
          meaning="The GPU Operator sees no GPU node (no NFD pci-10de label): it deploys no driver or device "
                  "plugin anywhere, so no node advertises nvidia.com/gpu.",
          next="Check that Node Feature Discovery runs on the GPU nodes (or that the nodes carry "
               "feature.node.kubernetes.io/pci-10de.present=true) and that GPU nodes exist at all.",
          upgrade="kubectl get nodes -l feature.node.kubernetes.io/pci-10de.present=true.")),
    ("gpu-operator", r"^Reconciled$",
     dict(level="normal", owner="benign", code=None, meaning="The GPU Operator applied its configuration: routine.",
          next="Nothing to do.", upgrade="")),
    # --- MIG manager (mig-parted's reconfigure port of reconfigure-mig.sh)
    # reconfigure.go logs its failures at Info and then returns the error ("Error: %s" in main.go).
    ("nvidia-mig-manager", r"(?i)error|fail|unable|cannot|invalid",
     dict(level="warning", owner="platform", code=None,
          meaning="The MIG manager could not apply the MIG configuration the node's nvidia.com/mig.config label "
                  "asks for (nvidia.com/mig.config.state=failed): the node's MIG devices are not what pods request.",
          next="Read the nvidia-mig-manager pod's log; check the label names a profile of its ConfigMap for this "
               "GPU model, and that no process holds the GPUs while it reconfigures.",
          upgrade="kubectl get node -L nvidia.com/mig.config,nvidia.com/mig.config.state; nvidia-smi mig -lgi.")),
    # --- DCGM exporter
    ("dcgm-exporter", r"(?i)kubernetes|pod|kubelet|pod-resources",
     dict(owner="platform", code=None,
          meaning="The DCGM exporter could not map GPUs to pods (kubelet pod-resources socket): metrics lose "
                  "their pod labels.",
          next="Check that the exporter mounts /var/lib/kubelet/pod-resources and runs with the permissions to "
               "read it.",
          upgrade="The dcgm-exporter pod's log and mounts.")),
    ("dcgm-exporter", r"(?i)dcgm|nvml|hostengine|init",
     dict(owner="platform", code=None,
          meaning="The DCGM exporter could not reach DCGM or NVML: no GPU metrics from this node (gpu.idle and "
                  "other metric-based checks go blind).",
          next="Read the dcgm-exporter pod's log; check the driver on the node and, when a standalone "
               "nv-hostengine is used, that it runs and its address is right.",
          upgrade="The dcgm-exporter pod's log; nvidia-smi on the node.")),
    # --- NVIDIA container runtime / hook
    ("nvidia-container-runtime", r"(?i)unresolvable CDI devices|CDI",
     dict(owner="platform", code=None,
          meaning="The NVIDIA container runtime could not inject the GPUs the container asked for through CDI: "
                  "the container is not created.",
          next="Regenerate the node's CDI specification (nvidia-ctk cdi generate) or check the device plugin's "
               "CDI settings match the toolkit's; read the kubelet event's full message.",
          upgrade="The pod's FailedCreatePodSandBox / Failed event; /etc/cdi or /var/run/cdi on the node.")),
    # --- node monitoring agent (pkg/reasons/reasons.yaml AcceleratedHardwareReady)
    ("eks-node-monitoring-agent", r"^NvidiaXID\d+Error$", _XID_NODE),
    ("eks-node-monitoring-agent", r"^NvidiaXID%dError$", _XID_NODE),
    ("eks-node-monitoring-agent", r"^NvidiaXID%dWarning$",
     dict(level="warning", owner="hardware", code="gpu.xid_error",
          meaning="The node monitoring agent saw a GPU Xid it does not treat as critical: an event, no node "
                  "condition; often an application fault (Xid 13, 31, 43) rather than the hardware.",
          next="Look the Xid up in NVIDIA's catalogue; if it is an application Xid, read the job's own error; "
               "if it repeats on one GPU, drain the node.",
          upgrade="The NVRM Xid line in the kernel log and the job's error at the same time.")),
    ("eks-node-monitoring-agent", r"^(NvidiaNVLinkError|NvidiaDoubleBitError|NvidiaDeviceCountMismatch"
                                  r"|NvidiaFabricError|FabricManagerNotRunning|DCGMDiagnosticFailure)$",
     dict(level="error", owner="hardware", code="gpu.unhealthy_device",
          meaning="The node monitoring agent found a fatal GPU fault on the node (NVLink, double-bit ECC, a GPU "
                  "missing, NVSwitch fabric, failed DCGM diagnostic) and set AcceleratedHardwareReady=False.",
          next="Drain the node and replace the instance (node auto repair does it when enabled); restart the job "
               "from its last checkpoint on other nodes.",
          upgrade="The node's AcceleratedHardwareReady condition message, nvidia-smi -q, dmesg Xid lines.")),
    ("eks-node-monitoring-agent", r"^DCGMHealthCode",
     dict(owner="hardware", code="gpu.unhealthy_device",
          meaning="DCGM's health watch reported a GPU problem (the code is a DCGM_FR_* error of dcgm_errors.h); "
                  "fatal when the health result is FAIL, else a warning.",
          next="Look the code up in DCGM's dcgm_errors.h (DCGM_FR_*); run dcgmi diag -r 2 on the drained node; "
               "replace the instance if it repeats.",
          upgrade="The condition's code and status (True/False), dcgmi health -c output.")),
    ("eks-node-monitoring-agent", r"^(NvidiaPageRetirement|NvidiaPCIeError|NvidiaPowerError|NvidiaThermalError"
                                  r"|DCGMFieldError%d)$",
     dict(level="warning", owner="hardware", code=None,
          meaning="The node monitoring agent saw GPU degradation that does not stop the node yet (page "
                  "retirement, PCIe replays, power or thermal limits, a DCGM field).",
          next="Watch whether it repeats on the same GPU; if jobs on the node slow down or fail, drain it and "
               "replace the instance.",
          upgrade="nvidia-smi -q (retired pages, PCIe, clocks throttle reasons) on the node.")),
    ("eks-node-monitoring-agent", r"^NvidiaNCCLError$",
     dict(level="warning", owner="spec", code=None,
          meaning="A process on the node segfaulted inside libnccl: usually the job's NCCL (version, "
                  "configuration), not the node.",
          next="Read the job's own log around the segfault (NCCL_DEBUG=INFO) and check the NCCL / aws-ofi-nccl "
               "versions in the image.",
          upgrade="The job's log with NCCL_DEBUG=INFO; the kernel log's segfault line.")),
    ("eks-node-monitoring-agent", r"^DCGMError$",
     dict(level="error", owner="platform", code=None,
          meaning="The node monitoring agent lost (or never had) its connection to DCGM: GPU health on the "
                  "node is not watched.",
          next="Check the agent's DCGM daemonset (dcgm-server) on the node and the driver.",
          upgrade="The agent's and the DCGM pod's logs on the node.")),
    ("eks-node-monitoring-agent", r"^Neuron",
     dict(level="error", owner="hardware", code=None,
          meaning="The node monitoring agent found a fatal AWS Neuron device fault and set "
                  "AcceleratedHardwareReady=False.",
          next="Drain the node and replace the instance.", upgrade="neuron-top / neuron-monitor on the node.")),
)

# aws-ofi-nccl's NCCL_OFI_WARN (NCCL's WARN level, the plugin's highest: it precedes the error code the
# plugin returns to NCCL). (words, level, owner, code, meaning, next)
_OFI_RULES: tuple[tuple[tuple[str, ...], str, str, str | None, str, str], ...] = (
    (("fi_getinfo() call failed", "couldn't open a fabric provider", "efa provider requires",
      "provider does not support", "does not provide enough tag bits", "querying provider capabilities failed",
      "supports mr key size"),
     "error", "platform", "nccl.network_config",
     "The OFI plugin could not open a usable libfabric provider (EFA) in the pod: no EFA device was given to "
     "the pod, the image's libfabric is too old or lacks the efa provider, or FI_PROVIDER names another.",
     "Give the pod vpc.amazonaws.com/efa (the EFA device plugin must run on the node), use an image with the "
     "EFA installer's libfabric, and check FI_PROVIDER / FI_EFA_* variables."),
    # An error completion: the provider's own text (fi_cq_strerror) tells a vanished peer ("Unresponsive
    # receiver ... handshake failed", nccl.peer_unresponsive) from a network that drops the traffic.
    (("completed with error", "fi_cq_readerr", "unable to retrieve completion queue entries"),
     "error", "platform", None,
     "A libfabric (EFA) transfer completed with an error: either a peer rank went away or traffic between "
     "the nodes is blocked; the provider error quoted in the line tells which.",
     "Read the quoted provider error: 'Unresponsive receiver' means another rank died first (look at the "
     "other pods); otherwise check that the security group allows all traffic to and from itself."),
    (("cuda", "gdr", "dmabuf", "gpudirect"),
     "error", "platform", None,
     "The OFI plugin could not use the GPU memory path (CUDA, GPUDirect RDMA, dmabuf) it needs.",
     "Check the driver, that the instance type supports GPUDirect RDMA, and the image's CUDA / aws-ofi-nccl "
     "versions; read the first NET/OFI line of the failing rank."),
    (("topology", "hwloc", "pcipath"),
     "error", "platform", None,
     "The OFI plugin could not build the node's GPU / NIC topology.",
     "Check the instance type is one the plugin knows, and that /sys is visible in the container."),
)
_OFI_SOFT = ("deprecat", "ignoring", "falling back", "defaulting", "not configuring")


def _ofi_class(message: str) -> dict:
    low = message.lower()
    for words, level, owner, code, meaning, nxt in _OFI_RULES:
        if any(w in low for w in words):
            break
    else:
        level, owner, code = "error", "platform", None
        meaning = ("The AWS OFI NCCL plugin failed an operation and returns an error to NCCL; the job's "
                   "collective fails with it.")
        nxt = ("Read the first NET/OFI warning of the first failing rank (NCCL_DEBUG=INFO), and the libfabric "
               "error it quotes.")
    if any(w in low for w in _OFI_SOFT):
        level, code = "warning", None
        owner = "platform"
        meaning = "The AWS OFI NCCL plugin worked around a setting or capability it could not use; the job goes on."
        nxt = "Nothing stops; fix the variable or setting it names if performance matters."
    return dict(level=level, owner=owner, code=code, meaning=meaning, next=nxt,
                upgrade="The rank's log with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and FI_LOG_LEVEL=warn; "
                        "fi_info -p efa in the pod.")


_WHO = {
    "nvidia-device-plugin": "The NVIDIA device plugin",
    "gpu-feature-discovery": "GPU Feature Discovery",
    "nvidia-operator-validator": "The GPU Operator's validator",
    "gpu-operator": "The GPU Operator",
    "nvidia-mig-manager": "The MIG manager",
    "dcgm-exporter": "The DCGM exporter",
    "nvidia-container-runtime": "The NVIDIA container runtime",
    "eks-node-monitoring-agent": "The EKS node monitoring agent",
}


def _default(item: dict) -> dict:
    who = _WHO.get(item["component"], item["component"])
    level = item.get("level", "normal")
    if level == "normal":
        return dict(level="normal", owner="benign", code=None, meaning=f"{who} reporting progress: routine.",
                    next="Nothing to do.", upgrade="")
    if level == "warning":
        return dict(level="warning", owner="platform", code=None,
                    meaning=f"{who} reports a problem it works around; nothing has stopped yet.",
                    next=f"Read the log of {who.lower().removeprefix('the ')} on the node around this line; act "
                         "if GPUs go missing or pods fail on the node.",
                    upgrade="The component's pod log and the node's GPU capacity and allocatable.")
    return dict(level="error", owner="platform", code=None,
                meaning=f"{who} failed an operation; what depends on it on this node (GPU allocation, labels, "
                        "metrics, container start) is blocked until it succeeds.",
                next=f"Read the log of {who.lower().removeprefix('the ')} on the node around this line, fix what it "
                     "names, and restart its pod.",
                upgrade="The component's pod log (--previous after a restart) and its pod's events.")


def classify_item(item: dict) -> dict:
    if item["component"] == "aws-ofi-nccl":
        return _ofi_class(item["message"])
    key = item["reason"] if item["component"] in ("eks-node-monitoring-agent", "gpu-operator") else item["message"]
    if item["component"] == "eks-node-monitoring-agent":
        key = item.get("template", key) if not re.fullmatch(r"NvidiaXID\d+Error", item["reason"]) else item["reason"]
    for component, pattern, fields in RULES:
        if component == item["component"] and re.search(pattern, key):
            if "level" not in fields and item.get("level") == "normal":
                continue  # a rule about a failure does not class the component's routine lines
            if fields.get("level") == "normal" and item.get("level") != "normal":
                continue  # nor does a rule about routine lines demote what upstream logs as a problem
            out = _default(item)
            out.update(fields)
            if "level" not in fields:
                out["level"] = item.get("level", out["level"])
            if out["level"] == "normal":
                out["code"] = None
            return out
    return _default(item)


def classify(snapshot: dict) -> list[dict]:
    rows = []
    for item in snapshot["items"]:
        c = classify_item(item)
        meaning = c["meaning"]
        if item["component"] == "eks-node-monitoring-agent" and item.get("description"):
            meaning = f"{meaning} (reasons.yaml: {item['description']})"
        rows.append(row(component=item["component"], kind=item["kind"], reason=item["reason"], level=c["level"],
                        message=item["message"], owner=c["owner"], meaning=meaning, next_step=c["next"],
                        upgrade=c["upgrade"], code=c["code"], where=item["where"]))
    return rows


if __name__ == "__main__":  # a look at what a refresh reads, without writing anything
    print(json.dumps(refresh(Path("/work/.mirror")), indent=1)[:4000])
