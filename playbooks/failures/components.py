"""Error lines of every component on a GPU node, read by the structure of their log format.

``lines.py`` reads what a training process prints; this reader knows how the other components write an
error: the log formats of the stack, each from its upstream definition, and the rows of ``kubectl``'s event
listings. A line whose format marks it as an error (or a Warning event row, whatever its reason) is looked up
in the cluster's vocabulary (``playbooks/vocabulary``: Kubernetes, Karpenter, EC2, the GPU stack and the batch
layers, generated from their source) with the component that wrote it; what no entry and no rule explains is
still a finding, ``cluster.unrecognised``, quoting the line and naming its writer (docs/findings.md: no
silence on a failure, from any component).

=================================  ==========================================================  ===============
format                             example                                                     error when
=================================  ==========================================================  ===============
klog / glog header                 ``E0912 22:47:27.562891 1849 kubelet.go:2451] "msg" k=v``   ``E``, ``F``
zap console (tabs or spaces)       ``2024-02-01T10:00:00.000Z  ERROR  controller.provisioner  msg``  ERROR ...
zap / logr / logrus JSON           ``{"level":"ERROR","logger":"controller",...}``             error, dpanic,
                                                                                               panic, fatal
logfmt                             ``time=... level=error msg="..." err="..."``                error, fatal
Go runtime                         ``panic: ...``, ``fatal error: ...``                        always
Python logging                     ``2024-01-01 10:00:00,123 - x - ERROR - msg``, ``ERROR:x:``  ERROR, CRITICAL
syslog / journald                  ``Nov 12 10:00:00 ip-10-0-1-2 kubelet[1849]: E1112 ...``    the inner line
kernel ring buffer                 ``[ 123.456] NVRM: ...``, ``mlx5_core 0000:...: ... err``    an error word
kubectl get events                 ``5m  Warning  FailedMount  pod/x  MountVolume.SetUp ...``  ``Warning``
kubectl describe Events            ``  Warning  FailedMount  3m (x5 over 10m)  kubelet  ...``    ``Warning``
Go standard log                    ``2017/11/24 09:06:29 Could not register device plugin``    a failure opens it
bracketed level                    ``2018/09/06 13:02:45 [FATAL] plugin/loop: ...``            ERROR, FATAL, ...
API server refusal                 ``Error from server (Forbidden): ...``, ``... is invalid:``  always
AWS error                          ``AccessDenied: User: arn:... is not authorized to perform``  always
mount(8), CLI                      ``mount.nfs4: access denied ...``, ``Error: failed to ...``  always
status field                       ``reason: BackoffLimitExceeded``                            the vocabulary's
                                                                                               level
launchers                          ``srun: error: node: task 3: Exited with exit code 1``      always
                                   ``mpirun noticed that process rank 3 ... exited on signal``
                                   DeepSpeed ``... exits with return code = 1``, Ray's
                                   ``Worker exit type: SYSTEM_ERROR``, bash's ``line 18: 36 Killed``
=================================  ==========================================================  ===============

Sources: kubernetes/klog klog.go ``formatHeader`` (``Lmmdd hh:mm:ss.uuuuuu threadid file:line]``) and
textlogger; go.uber.org/zap zapcore/level.go (``debug info warn error dpanic panic fatal``);
go-logr/zapr (Karpenter and the AWS controllers log through it: ``"level":"ERROR"``, ``logger``,
``controller``); sirupsen/logrus text_formatter.go (``level=error``); Go runtime/panic.go (``panic: ``) and
runtime/error.go (``fatal error: ``); CPython Lib/logging/__init__.py (``%(levelname)s``); RFC 3164 / 5424
(syslog's ``MMM dd hh:mm:ss host tag[pid]:`` and ``<PRI>``); Linux printk (``[seconds.micros]``);
kubectl pkg/cmd/get (event columns) and pkg/describe/describe.go ``DescribeEvents`` (``Type Reason Age From
Message``); SchedMD slurm src/srun ``srun: error: %s: task %d: Exited with exit code %d``; Open MPI
orte/mca/errmgr help text (``mpirun noticed that process rank %d with PID %d on node %s exited on signal``);
Go log (``log.LstdFlags``); apimachinery pkg/api/errors and k8s.io/kubectl helpers.go (``Error from server``);
the IAM user guide's access-denied message; util-linux mount; spf13/cobra (``Error: ``); deepspeed
launcher/launch.py; ray src/ray/protobuf/common.proto ``WorkerExitType``. The line comments beside each
pattern below say more.

A warning-level line is not a failure; a normal-level vocabulary entry is routine whatever its level word.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache

from playbooks import linear, vocabulary
from playbooks.signatures.model import Hit

CODE = "cluster.unrecognised"
TRAINING = "training.failed"

# Words whose presence lets a line reach this reader (the catalogue's substring gate). Each format above
# holds one of them.
KEYWORDS: tuple[str, ...] = (
    ".go:", '"level"', "level=", "\tERROR\t", "\tDPANIC\t", "\tPANIC\t", "\tFATAL\t", "panic: ", "fatal error: ", "ERROR", "CRITICAL", "FATAL", "Warning",
    "NVRM:", "mlx5", "efa ", "efa:", "srun: error", "mpirun noticed", "non-zero exit", "lvl=",
    '"severity"', "Error from server", "Internal error occurred", "is invalid: ", "is forbidden: ",
    "failed calling webhook", "denied the request", "not authorized to perform", "AccessDenied", "status code: ",
    "api error ", "oom-killer", " Killed ", "xit code", "exit status", "reason: ", "Reason: ", "error: ",
    "[FATAL]", "[ERROR]", "[CRITICAL]", "[PANIC]", "Primary job", "mount", "│",
    *(f"{year}/" for year in range(2010, 2041)),  # Go's standard log timestamp
    "  Unable to", "  Error ", "  Failed", "Error: ", "Exception: ", "exits with return code", "Worker exit type: ",
)

_KLOG = linear.compile(
    r"^(?P<level>[IWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d{1,9}\s{1,12}\d{1,10} (?P<file>[\w./-]{1,200}):\d{1,7}\] ?(?P<message>.*)$")
_SYSLOG = linear.compile(
    r"^(?:<(?P<pri>\d{1,3})>)?(?:[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}T[\d:.]{8,20}(?:Z|[+-]\d{2}:?\d{2})?) "
    r"(?P<host>[\w.-]{1,253}) (?P<tag>[\w./@-]{1,64})(?:\[\d{1,10}\])?: (?P<message>.*)$")
# printk's own stamp (seconds since boot) or dmesg -T's ("[Tue Mar 12 10:00:01 2024]").
_PRINTK = linear.compile(
    r"^(?:<\d>)?\[(?:\s{0,12}\d{1,10}\.\d{1,9}|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})\] (?P<message>.*)$")
_KERNEL_SOURCE = linear.compile(r"^(?P<who>NVRM|mlx5_core|mlx5_ib|efa|nvidia(?:-[a-z]+)?|ib_core|nvme\d*|EDAC)\b")
_KERNEL_ERROR = linear.compile(
    r"(?i)\b(?:error|err|fail(?:ed|ure)?|fault|timeout|timed out|unrecoverable|fatal|xid|abort|cannot|unable|lost|down|reset|not supported|unsupported)\b")
# zap's console encoder (Karpenter before v0.33 and other zap users): time, LEVEL, logger, message, fields as JSON,
# separated by tabs (go.uber.org/zap zapcore/console_encoder.go).
_ZAP_CONSOLE = linear.compile(
    r"^\S{8,40}\t(?P<level>DEBUG|INFO|WARN|ERROR|DPANIC|PANIC|FATAL)\t(?:(?P<logger>[\w./-]{1,120})\t)?(?:(?P<caller>[\w./-]{1,200}:\d{1,6})\t)?(?P<message>[^\t]*)(?:\t.*)?$")
# zap's console output pasted where tabs became spaces (a GitHub comment, a terminal copy).
_ZAP_SPACED = linear.compile(
    r"^\d{2,4}-\d{2}-\d{2}T[\d:.]{8,18}(?:Z|[+-]\d{2}:?\d{2})\s{1,12}(?P<level>ERROR|DPANIC|PANIC|FATAL)\s{1,12}(?P<message>.+)$")
# Go's standard log timestamp (log.LstdFlags: 2006/01/02 15:04:05) or any ISO one, then a bracketed level
# (CoreDNS plugin/pkg/log, many Go and Python programs).
_BRACKET_LEVEL = linear.compile(
    r"^(?:\[?\d{4}[-/]\d{2}[-/]\d{2}[ T][\d:.,]{8,18}(?:Z|[+-]\d{2}:?\d{2})?\]?\s{1,4})?\[(?P<level>ERROR|FATAL|CRITICAL|PANIC)\]\s{0,4}(?P<message>.+)$")
# Refusals of the API server as clients print them: kubectl's "Error from server (Reason): ..." (k8s.io/kubectl
# pkg/cmd/util/helpers.go StandardErrorMessage), apimachinery's StatusError messages (pkg/api/errors/errors.go
# NewInvalid "%s %q is invalid: %v", NewForbidden "%s %q is forbidden: %v", NewInternalError "Internal error
# occurred: %v") and the webhook dispatcher's (apiserver pkg/admission/plugin/webhook/errors: "admission webhook
# %q denied the request", "failed calling webhook %q").
_API_REFUSAL = linear.compile(
    r"(?:Error from server \((?P<reason>[A-Za-z]{2,40})\): (?P<m1>.+)|Internal error occurred: (?P<m2>.+)"
    r"|(?P<m3>\S+ \\?\"[^\"\\]+\\?\" is (?:invalid|forbidden): .+)|(?P<m4>[\w.-]{1,80} is forbidden: User \".+)"
    r"|(?P<m5>admission webhook \"[^\"]+\" denied the request.*)|(?P<m6>failed calling webhook \"[^\"]+\".*))")
# AWS's own error shapes: an IAM denial ("User: ARN is not authorized to perform: ACTION on resource: ARN", IAM
# user guide, troubleshoot access denied), aws-sdk-go's "Code: message\n\tstatus code: N, request id: ..."
# and aws-sdk-go-v2's "operation error SERVICE: OP, https response error StatusCode: N, RequestID: ..., api error
# CODE: message" (smithy-go).
_IAM_DENIAL = linear.compile(r"is not authorized to perform: (?P<action>[a-z0-9-]{2,40}:[A-Za-z0-9*]{2,80})")
_AWS_ERROR = linear.compile(
    r"(?:api error |^|[\s:,])(?P<code>[A-Z][A-Za-z]{2,60}(?:\.[A-Za-z]{2,60})?): (?P<message>[^\n]{3,})")
_AWS_CODE_ENDINGS = ("Exception", "Denied", "Unauthorized", "NotFound", "Exceeded", "Invalid", "Malformed",
                     "Limit", "Operation", "Capacity", "Unsupported", "Throttling")
# Words that say a "Code: message" line is an AWS API's answer and not a program's own exception.
_AWS_MARKERS = ("status code:", "request id", "RequestID", "api error ", "operation error ", "arn:aws", "Request ID")
# The kernel's OOM killer announcing itself (mm/oom_kill.c dump_header: "%s invoked oom-killer: gfp_mask=...").
_OOM_INVOKED = linear.compile(r"(?P<process>[\w./:-]{1,64}) invoked oom-killer: ")
# bash's report of a job a signal ended ("script: line N:  PID Killed  command", execute_cmd.c / jobs.c).
_SHELL_SIGNAL = linear.compile(
    r": line \d{1,7}: {1,12}\d{1,10} (?P<signal>Killed|Segmentation fault|Aborted|Bus error|Terminated)(?: \(core dumped\))? {2,}\S")
# A non-zero exit code said in words: "Exit code: 137", "exited with code 1", "exit status 2".
_EXIT_WORDS = linear.compile(
    r"(?i)\bexit(?:ed)?(?: with)?(?: exit)? (?:code|status)(?::|=)? ?(?P<code>[1-9]\d{0,2})\b")
# A YAML or describe field naming a reason: looked up in the vocabulary (a Job's Failed condition, a
# container's waiting reason, a Kueue Workload's condition).
_REASON_FIELD = linear.compile(r"^\s{0,40}-?\s{0,4}[Rr]eason:\s{1,30}\"?(?P<reason>[A-Z][A-Za-z]{2,80})\"?\s*$")
# A terminated container's bare reason (containerd internal/cri/server/container_status.go: "Error" for a
# non-zero exit) and a condition's bare "Failed": no more than the exit code beside them says.
_GENERIC_REASONS = ("Error", "Completed", "Failed")
# kubectl's own error line ("error: %v", k8s.io/kubectl pkg/cmd/util/helpers.go fatal).
_KUBECTL_ERROR = linear.compile(r"^error: (?P<message>\S.{2,})$")
# A command-line tool's own failure line: Go programs built on spf13/cobra (command.go ExecuteC: "Error: " + err:
# helm, eksctl, kubectl plugins) and package managers (dnf's "Error: Unable to find a match").
_CLI_ERROR = linear.compile(r"^Error: (?P<message>\S.{2,})$")
# Go's standard logger has no levels (log.LstdFlags: "2006/01/02 15:04:05 message"): a message that opens with a
# failure is that program's error (the NVIDIA and EFA device plugins log this way).
_GO_STDLOG = linear.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})? (?P<message>.+)$")
_FAILURE_OPENING = linear.compile(
    r"^(?i:error|failed|failure|fatal|panic|could not|couldn't|unable to|cannot|can't)\b")
# mount(8)'s own error line (util-linux and nfs-utils: "mount.nfs4: access denied by server while mounting ..."),
# as the CSI node plugins pass it on.
_MOUNT_ERROR = linear.compile(r"^(?:b['\"])?(?P<message>mount(?:\.[a-z0-9]{2,12})?: .+)$")
# An event row of kubectl's oldest describe layout (Reason, Message; no Type column), whose reason the
# vocabulary knows as a failure.
_BARE_EVENT = linear.compile(r"^(?P<reason>[A-Z][A-Za-z]{3,60})\s{2,}(?P<message>\S.+)$")
_LEVEL_FIELD = linear.compile(r'"(?:level|severity)"\s{0,2}:\s{0,2}"(?P<level>[A-Za-z]{3,9})"')
_MSG_FIELD = linear.compile(r'"(?:msg|message|error|err)"\s{0,2}:\s{0,2}"(?P<value>(?:[^"\\]|\\.)+)"')
_LOGFMT_LEVEL = linear.compile(r'(?:^|\s)(?:level|lvl)=(?P<level>"?[A-Za-z]{3,9}"?)(?:\s|$)')
_LOGFMT_FIELD = linear.compile(r'(?:^|\s)(?P<key>msg|message|err|error|caller|logger|component|controller)=(?P<value>"(?:[^"\\]|\\.)*"|\S+)')
_PANIC = linear.compile(r"^(?P<kind>panic|fatal error): (?P<message>.+)$")
_PY_LOGGING = linear.compile(
    r"^(?:\[?\d{4}-\d{2}-\d{2}[ T][\d:,.]{8,15}\]?\s{1,4}(?:-\s{1,4})?)?(?:\[?(?P<logger>[\w.-]{1,80})\]?\s{1,4}(?:-\s{1,4})?)?"
    r"\[?(?P<level>ERROR|CRITICAL|FATAL)\]?(?:\s{1,4}-\s{1,4}|:[\w.-]{1,80}:|\s{1,4})(?P<message>.+)$")
_EVENT_ROW = linear.compile(
    r"(?:^|\s)Warning\s{1,40}(?P<reason>[A-Z][A-Za-z]{2,80})\s{1,40}(?P<object>[a-z][\w.-]{0,80}/[\w.:-]{1,253})\s{1,40}(?P<message>\S.*)$")
_DESCRIBE_EVENT = linear.compile(r"^\s{0,8}Warning\s{2,40}(?P<rest>[A-Z]\S{2,80}\s{2,}.+)$")
_COLUMNS = linear.compile(r"\s{2,}")
_SRUN = linear.compile(r"srun: error: (?P<host>[\w.-]+): tasks? (?P<task>[\d,-]{1,40}): (?P<message>.+)$")
_MPIRUN = linear.compile(
    r"mpirun noticed that process rank (?P<rank>\d{1,6}) with PID (?P<pid>\d{1,10}) on node (?P<host>\S+) exited on signal (?P<signal>\d{1,3})(?: \((?P<name>[^)]{1,40})\))?")
# DeepSpeed's launcher when a local rank ends (deepspeed/launcher/launch.py sigkill_handler: "{cmd} exits with
# return code = {returncode}"); a negative code is the signal that ended it.
_DEEPSPEED_EXIT = linear.compile(r"exits with return code = (?P<code>-?\d{1,3})\b")
# Ray's report of a worker that died (src/ray/protobuf/common.proto WorkerExitType, printed by the raylet as
# "Worker exit type: SYSTEM_ERROR Worker exit detail: ...").
_RAY_WORKER_EXIT = linear.compile(r"Worker exit type: (?P<type>SYSTEM_ERROR|USER_ERROR|NODE_OUT_OF_MEMORY)\b(?: Worker exit detail: (?P<detail>.{0,300}))?")
_MPI_EXIT = linear.compile(r"Primary job\s{1,4}terminated normally, but (?P<count>\d{1,6}) process(?:es)? returned")
# An AWS API error code in a message: ``UnauthorizedOperation: ...``, ``(InsufficientInstanceCapacity)``,
# ``api error InvalidParameterValue:``, ``Code: VcpuLimitExceeded`` (aws-sdk-go-v2 smithy's ``api error %s: %s``).
_AWS_CODE = linear.compile(r"(?:^|[\s\"'(:,=])(?P<code>[A-Z][a-z]{1,30}(?:[A-Z][a-z0-9]{1,30}){1,8}(?:\.[A-Z][A-Za-z]{1,40}){0,2})\b")

_ERROR_LEVELS = frozenset(("error", "err", "dpanic", "panic", "fatal", "critical", "crit", "alert", "emerg", "emergency"))
_WARNING_LEVELS = frozenset(("warn", "warning"))
_JSON_MESSAGE = ("msg", "message", "MESSAGE")
_JSON_ERROR = ("error", "err", "stacktrace_first")
_JSON_WRITER = ("logger", "controller", "component", "caller", "source", "name", "SYSLOG_IDENTIFIER", "_COMM")
# klog's file names that say which component wrote the line (kubernetes/kubernetes pkg/kubelet, pkg/scheduler ...).
_KLOG_FILES = (
    ("kubelet", "kubelet"), ("kuberuntime", "kubelet"), ("eviction", "kubelet"), ("volume", "kubelet"),
    ("csi", "kubelet"), ("cri", "kubelet"), ("schedule", "kube-scheduler"), ("framework", "kube-scheduler"),
    ("reflector", "client-go"), ("leaderelection", "client-go"), ("plugin", "device plugin"),
)


def _writer_of_klog(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    for part, who in _KLOG_FILES:
        if part in name or part in path.lower():
            return who
    return name.rsplit(".", 1)[0]


class _Line:
    __slots__ = ("level", "message", "writer", "format", "reason", "obj", "fields")

    def __init__(self, level: str, message: str, writer: str, fmt: str, reason: str = "", obj: str = "",
                 fields: dict[str, str] | None = None) -> None:
        self.level, self.message, self.writer, self.format = level, message, writer, fmt
        self.reason, self.obj, self.fields = reason, obj, fields or {}


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            return json.loads(value)
        except ValueError:
            return value[1:-1]
    return value


def _json(text: str) -> _Line | None:
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    level = ""
    for key in ("level", "severity", "lvl", "levelname", "PRIORITY"):
        value = record.get(key)
        if isinstance(value, str) and value:
            level = value.lower()
            break
        if key == "PRIORITY" and isinstance(value, int):
            level = "error" if value <= 3 else "info"
    if level.isdigit():
        level = "error" if int(level) <= 3 else "info"
    parts = [str(record[k]) for k in _JSON_MESSAGE if record.get(k)]
    parts += [str(record[k]) for k in _JSON_ERROR if record.get(k) and str(record[k]) not in parts]
    writer = " ".join(str(record[k]) for k in _JSON_WRITER if isinstance(record.get(k), str))
    return _Line(level, ": ".join(parts), writer, "json")


def _logfmt(text: str) -> _Line | None:
    found = _LOGFMT_LEVEL.search(text)
    if found is None:
        return None
    fields = {m.group("key"): _unquote(m.group("value")) for m in _LOGFMT_FIELD.finditer(text)}
    parts = [fields[k] for k in ("msg", "message", "err", "error") if fields.get(k)]
    writer = " ".join(fields[k] for k in ("logger", "component", "controller", "caller") if fields.get(k))
    return _Line(found.group("level").strip('"').lower(), ": ".join(parts) or text, writer, "logfmt")


def read(text: str, depth: int = 0) -> _Line | None:
    """The level, message and writer of one line in a known format, or None."""
    text = text.strip().strip("│").strip().strip("*").strip()  # k9s draws its log pane in a box; markdown bold
    while text.startswith(">"):  # a GitHub or e-mail quote around a pasted log
        text = text[1:].strip()
    if not text or depth > 3:
        return None
    if text.startswith("{"):
        found = _LEVEL_FIELD.search(text)
        if found is not None and found.group("level").lower() not in _ERROR_LEVELS:
            return _Line(found.group("level").lower(), "", "", "json")  # routine: not worth parsing
        line = _json(text)
        if line is not None:
            return line
    if '"level"' in text or '"severity"' in text:
        line = _json_fragment(text)
        if line is not None:
            return line
    if "\t" in text:
        found = _ZAP_CONSOLE.match(text)
        if found is not None:
            message = found.group("message")
            fields_at = text.find("\t{")
            if fields_at > 0:  # zap's fields as JSON after the message: their error says what failed
                error = _MSG_FIELD.search(text, fields_at)
                if error is not None and error.group("value") not in message:
                    message = f"{message}: {error.group('value')}"
            return _Line(found.group("level").lower(), message,
                         " ".join(g for g in (found.group("logger"), found.group("caller")) if g), "zap console")
    found = _KLOG.match(text)
    if found is not None:
        if not found.group("file").endswith(".go"):
            return None  # glog from C++ or Python (PyTorch's c10 logging, torch elastic): lines.py reads those
        return _Line({"E": "error", "F": "fatal", "W": "warning", "I": "info"}[found.group("level")],
                     found.group("message"), _writer_of_klog(found.group("file")), "klog")
    found = _SYSLOG.match(text)
    if found is not None:
        inner = read(found.group("message"), depth + 1)
        tag = found.group("tag")
        if inner is not None:
            inner.writer = inner.writer or tag
            return inner
        pri = found.group("pri")
        if pri is not None and int(pri) % 8 <= 3:
            return _Line("error", found.group("message"), tag, "syslog")
        if tag == "kernel":
            return _kernel(found.group("message"))
        return None
    found = _PRINTK.match(text)
    if found is not None:
        return _kernel(found.group("message"))
    if text.startswith("kernel: "):
        return _kernel(text[8:])
    found = _PANIC.match(text)
    if found is not None:
        return _Line("fatal", text, "", "go runtime")
    found = _DESCRIBE_EVENT.match(text)
    if found is not None:
        columns = _COLUMNS.split(found.group("rest"), 3)  # Reason, Age, From, Message (describe.go DescribeEvents)
        if len(columns) == 4:
            return _Line("warning-event", columns[3], columns[2], "describe", reason=columns[0])
    if "Warning" in text:
        found = _EVENT_ROW.search(text)
        if found is not None:
            return _Line("warning-event", found.group("message"), "", "events", reason=found.group("reason"),
                         obj=found.group("object"))
    if "level=" in text or "lvl=" in text:
        line = _logfmt(text)
        if line is not None:
            return line
    found = _PY_LOGGING.match(text)
    if found is not None:
        return _Line(found.group("level").lower(), found.group("message"), found.group("logger") or "", "python logging")
    found = _ZAP_SPACED.match(text)
    if found is not None:
        return _Line(found.group("level").lower(), found.group("message"), "", "zap console")
    found = _BRACKET_LEVEL.match(text)
    if found is not None:
        return _Line(found.group("level").lower(), found.group("message"), "", "bracketed level")
    found = _GO_STDLOG.match(text)
    if found is not None:
        message = found.group("message")
        return _Line("error" if _FAILURE_OPENING.match(message) else "info", message, "", "go log")
    found = _MOUNT_ERROR.match(text)
    if found is not None:
        return _Line("error", found.group("message").rstrip("'\""), "mount", "mount")
    found = _BARE_EVENT.match(text)
    if found is not None:
        entry = vocabulary.by_reason(found.group("reason"), found.group("message"))
        if entry is not None and entry.level != "normal" and entry.kind == "event":
            return _Line("warning-event", found.group("message"), "", "describe", reason=found.group("reason"))
    return _refusal(text)


def _json_fragment(text: str) -> _Line | None:
    """A JSON log record cut or wrapped by a paste: its level and message read by their keys."""
    found = _LEVEL_FIELD.search(text)
    if found is None:
        return None
    message = ": ".join(m.group("value") for m in _MSG_FIELD.finditer(text))
    return _Line(found.group("level").lower(), message or text, "", "json")


def _refusal(text: str) -> _Line | None:
    """A refusal in the API server's or AWS's own shape, whatever wrote it to the log."""
    found = _API_REFUSAL.search(text)
    if found is not None:
        groups = found.groupdict()
        message = next(groups[k] for k in ("m1", "m2", "m3", "m4", "m5", "m6") if groups.get(k))
        return _Line("error", message, "kube-apiserver", "api refusal", reason=groups.get("reason") or "")
    found = _IAM_DENIAL.search(text)
    if found is not None:
        return _Line("error", text, "", "aws error", fields={"action": found.group("action")})
    if any(ending in text for ending in _AWS_CODE_ENDINGS) or any(marker in text for marker in _AWS_MARKERS):
        marked = any(marker in text for marker in _AWS_MARKERS)
        for found in _AWS_ERROR.finditer(text):
            code = found.group("code")
            if vocabulary.code_entry(code) is not None or (code.endswith(_AWS_CODE_ENDINGS) and (
                    marked or code.endswith(("Exception", "Denied", "Unauthorized", "Exceeded")))):
                return _Line("error", text, "", "aws error", reason=code)
    found = _KUBECTL_ERROR.match(text)
    if found is not None:
        return _Line("error", found.group("message"), "kubectl", "kubectl")
    found = _CLI_ERROR.match(text)
    if found is not None:
        return _Line("error", found.group("message"), "", "cli error")
    return None


def _kernel(message: str) -> _Line | None:
    stamped = _PRINTK.match(message)
    if stamped is not None:
        message = stamped.group("message")
    found = _OOM_INVOKED.search(message)
    if found is not None:
        return _Line("error", message, "kernel oom-killer", "kernel", fields={"process": found.group("process")})
    found = _KERNEL_SOURCE.match(message)
    if found is None or _KERNEL_ERROR.search(message) is None:
        return None
    return _Line("error", message, f"kernel {found.group('who')}", "kernel")


def scan(text: str, base: dict[str, str]) -> Iterator[Hit]:
    """The catalogue's unit: at most one Hit for a component's error line (the floor under every rule)."""
    launcher = _launcher(text)
    if launcher is not None:
        yield Hit(launcher.code, launcher.severity, launcher.confidence, launcher.title, {**base, **launcher.fields})
        return
    line = read(text)
    if line is None:
        other = _exit_words(text) or _reason_field(text)
        if other is not None:
            yield Hit(other.code, other.severity, other.confidence, other.title, {**base, **other.fields})
        return
    if line.level in _WARNING_LEVELS or not (line.level in _ERROR_LEVELS or line.level == "warning-event"):
        return
    hit = classify(line)
    if hit is not None:
        yield Hit(hit.code, hit.severity, hit.confidence, hit.title, {**base, **hit.fields})


def classify(line: _Line) -> Hit | None:
    """What an error line (or Warning event) says, by the vocabulary; the floor when no entry explains it."""
    message = line.message.strip()
    if not message:
        return None
    if line.writer == "kernel oom-killer":
        process = line.fields.get("process", "")
        return Hit("training.terminated", "error", "high",
                   f"The kernel's OOM killer was invoked by {process}: a process of the node or its cgroup ran out of memory",
                   {"signal": "SIGKILL", "reason": "OOMKilled", "process": process, "message": _quote(message)})
    writer = line.writer or line.obj.split("/", 1)[0]
    entry = None
    if line.reason:
        entry = vocabulary.by_reason(line.reason, message, component=writer or None)
    if entry is None:
        entry = vocabulary.by_message(message, component=writer or None)
    aws = _aws_code(message, writer)
    if aws is not None and (entry is None or entry.code is None):
        entry = aws
    if entry is None and line.fields.get("action"):
        action = line.fields["action"]
        return Hit(CODE, "error", "medium",
                   f"AWS IAM denied {action}: the role named in the message lacks that permission",
                   {"message": _quote(message), "writer": writer or "", "format": line.format, "action": action,
                    "meaning": f"An IAM policy (or an SCP or permissions boundary) denies {action} to the role the "
                               "message names; whoever runs as that role (a controller, the node) cannot do its work.",
                    "next": f"Find the role in the message (assumed-role/NAME) and grant {action} in its policy, or lift "
                            "the explicit deny the message names (SCP, boundary); then watch the writer's log retry.",
                    "owner": "platform"})
    fields = {"message": _quote(message), "writer": writer or "", "format": line.format}
    if line.reason:
        fields["reason"] = line.reason
    if line.obj:
        fields["object"] = line.obj
    fatal = line.level in ("fatal", "panic", "dpanic", "critical", "crit", "alert", "emerg", "emergency")
    who = _who(writer, line)
    if entry is not None:
        if entry.level == "normal":
            return None
        fields.update({"meaning": entry.meaning, "next": entry.next, "owner": entry.owner,
                       "upgrade": entry.upgrade, "entry_component": entry.component, "table": entry.table})
        if entry.reason:
            fields.setdefault("reason", entry.reason)
        if entry.code and entry.code != CODE:
            severity = "error" if entry.level == "error" else "warning"
            return Hit(entry.code, severity, "medium" if entry.owner != "transient" else "low",
                       f"{who} says: {_quote(message, 160)} ({entry.meaning})", fields)
        severity = "error" if (entry.level == "error" and line.level != "warning-event") or fatal else "warning"
        if line.level == "warning-event" and entry.level == "error":
            severity = "error"
        return Hit(CODE, severity, "low", f"{who} reported {entry.reason or 'an error'}: {entry.meaning}", fields)
    severity = "error" if fatal else "warning"
    what = f"a Warning event {line.reason}" if line.reason else f"{'an' if line.level[:1] in 'aeiou' else 'a'} {line.level}-level line"
    return Hit(CODE, severity, "low", f"{who} wrote {what} no rule explains: {_quote(message, 160)}", fields)


def _who(writer: str, line: _Line) -> str:
    if writer:
        return writer.split()[0] if line.format == "json" and " " in writer else writer
    return {"events": "The cluster", "describe": "The cluster", "kernel": "The kernel", "go runtime": "A Go program"}.get(
        line.format, "A component")


@lru_cache(maxsize=1)
def _aws_codes() -> tuple[str, ...]:
    """The error codes the vocabulary holds (EC2's and the AWS APIs' Karpenter passes through)."""
    return tuple(sorted({e.reason for e in vocabulary.entries() if e.kind == "ec2_code" and e.reason}))


def _aws_code(message: str, writer: str) -> vocabulary.Entry | None:
    """The AWS error code a message passes through, as its vocabulary entry (the writer's own first)."""
    if not any(code in message for code in _aws_codes()):
        return None
    for found in _AWS_CODE.finditer(message):
        entry = vocabulary.code_entry(found.group("code"), component=writer or None)
        if entry is not None:
            return entry
    return None


def _quote(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _launcher(text: str) -> Hit | None:
    """A launcher's own report that a task failed: the floor for training text (the task's output says why)."""
    found = _SRUN.search(text)
    if found is not None:
        return Hit(TRAINING, "error", "low",
                   f"srun: task {found.group('task')} on {found.group('host')} failed ({_quote(found.group('message'), 120)}): its own output before this names the error",
                   {"host": found.group("host"), "message": _quote(text), "kind": "exit", "launcher": "srun"})
    found = _MPIRUN.search(text)
    if found is not None:
        signal = found.group("name") or f"signal {found.group('signal')}"
        code, confidence = ("training.terminated", "medium") if found.group("signal") in ("9", "15") else (TRAINING, "low")
        return Hit(code, "error", confidence,
                   f"mpirun: rank {found.group('rank')} on {found.group('host')} was ended by {signal}",
                   {"rank": found.group("rank"), "host": found.group("host"), "signal": {"9": "SIGKILL", "15": "SIGTERM"}.get(found.group("signal"), signal),
                    "message": _quote(text), "launcher": "mpirun"})
    found = _SHELL_SIGNAL.search(text)
    if found is not None:
        name = {"Killed": "SIGKILL", "Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
                "Terminated": "SIGTERM"}[found.group("signal")]
        return Hit("training.terminated" if name in ("SIGKILL", "SIGTERM") else TRAINING, "error",
                   "medium" if name == "SIGKILL" else "low",
                   f"The shell reports the command was ended by {name} ({found.group('signal')})",
                   {"signal": name, "message": _quote(text), "kind": "process end"})
    return _mpi(text)


def _exit_words(text: str) -> Hit | None:
    """A non-zero exit code said in words, in a line no log format claims."""
    found = _EXIT_WORDS.search(text)
    if found is not None:
        code = int(found.group("code"))
        if code in (137, 143):
            return Hit("training.terminated", "error", "low",
                       f"The process exited with code {code}: killed by {'SIGKILL (often the OOM killer)' if code == 137 else 'SIGTERM'}",
                       {"exit_code": str(code), "signal": "SIGKILL" if code == 137 else "SIGTERM", "message": _quote(text)})
        return Hit(TRAINING, "error", "low", f"The process exited with code {code}: its own output before this names the error",
                   {"exit_code": str(code), "message": _quote(text), "kind": "exit"})
    return None


def _mpi(text: str) -> Hit | None:
    found = _DEEPSPEED_EXIT.search(text)
    if found is not None and found.group("code") != "0":
        code = int(found.group("code"))
        if code in (-9, -15, 137, 143):
            signal = "SIGKILL" if code in (-9, 137) else "SIGTERM"
            return Hit("training.terminated", "error", "medium", f"DeepSpeed's launcher: a rank was ended by {signal}",
                       {"exit_code": str(code), "signal": signal, "message": _quote(text), "launcher": "deepspeed"})
        return Hit(TRAINING, "error", "low",
                   f"DeepSpeed's launcher: a rank exited with code {code}: its own output before this names the error",
                   {"exit_code": str(code), "message": _quote(text), "kind": "exit", "launcher": "deepspeed"})
    found = _RAY_WORKER_EXIT.search(text)
    if found is not None:
        kind = found.group("type")
        if kind == "NODE_OUT_OF_MEMORY":
            return Hit("training.terminated", "error", "high",
                       "Ray killed a worker because its node ran out of host memory (NODE_OUT_OF_MEMORY)",
                       {"signal": "SIGKILL", "reason": "OOMKilled", "message": _quote(text), "launcher": "ray"})
        return Hit(TRAINING, "error", "low",
                   f"A Ray worker died ({kind}): {_quote(found.group('detail') or 'its own log says why', 160)}",
                   {"message": _quote(text), "kind": "exit", "launcher": "ray"})
    found = _MPI_EXIT.search(text)
    if found is not None:
        return Hit(TRAINING, "error", "low",
                   f"mpirun: {found.group('count')} process(es) returned a non-zero exit code: their own output names the error",
                   {"message": _quote(text), "kind": "exit", "launcher": "mpirun"})
    return None


def _reason_field(text: str) -> Hit | None:
    """``reason: BackoffLimitExceeded`` in a YAML status or ``Reason: CrashLoopBackOff`` in describe output: the
    reason is looked up in the vocabulary, and only an error- or warning-level entry is a finding."""
    found = _REASON_FIELD.match(text)
    if found is None:
        return None
    if found.group("reason") in _GENERIC_REASONS:
        return None  # says only that it failed: the exit code and the log lines beside it say why
    entry = vocabulary.by_reason(found.group("reason"))
    if entry is None or entry.level == "normal":
        return None
    fields = {"reason": entry.reason, "message": _quote(text), "meaning": entry.meaning, "next": entry.next,
              "owner": entry.owner, "upgrade": entry.upgrade, "writer": entry.component, "format": "status field"}
    severity = "error" if entry.level == "error" else "warning"
    if entry.code and entry.code != CODE:
        return Hit(entry.code, severity, "low", f"{entry.component} reports {entry.reason}: {entry.meaning}", fields)
    return Hit(CODE, severity, "low", f"{entry.component} reports {entry.reason}: {entry.meaning}", fields)
