"""The signature catalogue and the line scanner.

Every line goes through one cheap, case-sensitive substring prefilter (a few anchors covering the
keywords of all rules, then those keywords); only the rules whose keywords occur in the line run
their regexes, so scanning is linear in the input. Lines are cut at 64 KiB first. JSON log lines (Karpenter, ipamd) are unwrapped: their
``message``/``msg``, ``error``/``err`` and disruption ``reason``/``command`` values are scanned, and
``Pod``, ``NodeClaim``, ``NodePool`` and ``Node`` names become fields of every Signal of the line.

Fields per rule (every Signal from a JSON line may also carry pod, nodeclaim, nodepool, node):

==========================================  ======================================  =======================================================
rule                                        code                                    fields
==========================================  ======================================  =======================================================
scheduler.insufficient                      scheduling.insufficient_gpu             nodes, total, avail, reason, resource
                                            (efa.resource_unavailable for EFA;      
                                            karpenter.no_instance_type for cpu ...) 
scheduler.taint                             scheduling.untolerated_taint            nodes, total, avail, reason, key, value, taint
                                            (scheduling.node_lifecycle_taint)       
scheduler.node_affinity                     scheduling.node_selector_mismatch       nodes, total, avail, reason
scheduler.pod_affinity                      scheduling.pod_affinity_unsatisfiable   nodes, total, avail, reason
scheduler.volume                            scheduling.volume_zone_conflict         nodes, total, avail, reason
scheduler.topology_spread                   scheduling.topology_spread              nodes, total, avail, reason, missing_label
scheduler.host_ports                        scheduling.pod_affinity_unsatisfiable   nodes, total, avail, reason
scheduler.unschedulable                     scheduling.node_lifecycle_taint         nodes, total, avail, reason, key
scheduler.unbound_pvc                       scheduling.volume_zone_conflict         problem
pod.scheduling_gated                        scheduling.gated                        hold, gate
kueue.not_admitted                          scheduling.gated                        hold, podset, resource, flavor, queue
job.suspended                               scheduling.gated                        hold, kind, job
karpenter.limits                            karpenter.nodepool_limit_reached        nodepool, resource, usage, limit
karpenter.no_offering                       karpenter.offering_unavailable_in_zone  nodepool, resources, gpus, requirements, capacity_type,
                                                                                    zones, typo
karpenter.no_type_ambiguous                 karpenter.no_instance_type              (same as karpenter.no_offering)
karpenter.min_values                        karpenter.no_instance_type              nodepool, label
karpenter.no_type                           karpenter.no_instance_type              (same as karpenter.no_offering)
karpenter.unknown_label                     scheduling.node_selector_mismatch       nodepool, label, suggestion
karpenter.incompatible_key                  scheduling.node_selector_mismatch       nodepool, key, label, requirement
karpenter.taint                             scheduling.untolerated_taint            nodepool, taint, key, effect
                                            (scheduling.node_lifecycle_taint)       
karpenter.topology                          scheduling.pod_affinity_unsatisfiable   nodepool, constraint, key
                                            (scheduling.topology_spread)            
karpenter.anti_affinity_unsupported         scheduling.pod_affinity_unsatisfiable   nodepool
karpenter.volume                            scheduling.volume_zone_conflict         nodepool, pvc
karpenter.hostport                          scheduling.pod_affinity_unsatisfiable   nodepool, port
karpenter.nominated                         karpenter.provisioning (info)           nodeclaim, node
karpenter.launched                          karpenter.provisioning (info)           instance_type, zone
karpenter.condition                         karpenter.node_registration_failed      condition, reason, message, taint
nodeclass.subnets                           karpenter.subnet_problem                condition, status, reason, message
nodeclass.not_ready                         karpenter.node_registration_failed      condition, status, reason, message
                                            (karpenter.provisioning, insufficient_  
                                            capacity, subnet_problem, no_instance_type)
ec2.insufficient_capacity                   karpenter.insufficient_capacity         error_code, instance_type, zone, nodeclaim
ec2.unsupported_zone                        karpenter.offering_unavailable_in_zone  instance_type, zone, alternatives
ec2.quota                                   karpenter.quota_exceeded                error_code, limit
ec2.subnet                                  karpenter.subnet_problem                problem, subnet
ec2.volume_zone                             scheduling.volume_zone_conflict         volume
nodeclaim.registration                      karpenter.node_registration_failed      error
nodeclaim.resource_not_registered           karpenter.resource_not_registered       resource
kubelet.out_of_resource                     karpenter.resource_not_registered       resource, requested, used, capacity
karpenter.disrupting                        karpenter.disruption                    reason, method, node
karpenter.interrupted                       karpenter.interruption                  interruption
karpenter.interruption_delete               karpenter.interruption                  interruption, nodeclaim, node
karpenter.rebalance                         karpenter.interruption (info)           interruption
karpenter.forced_termination                karpenter.disruption                    reason
karpenter.evicted_reason                    karpenter.disruption                    reason
karpenter.capacity_block_expiration         karpenter.interruption                  interruption (CapacityBlockExpiring), nodeclaim
karpenter.repair                            karpenter.disruption                    reason (Unhealthy), nodeclaim, node
karpenter.repair_blocked                    karpenter.disruption                    reason (RepairBlocked), threshold, scope
karpenter.expired                           karpenter.disruption                    reason, nodeclaim, node
karpenter.evicted                           karpenter.disruption                    reason
karpenter.blocked                           karpenter.disruption (info)             blocker, blocker_kind, pod, pdb, budget_reason
kubelet.no_healthy_devices                  gpu.unhealthy_device                    resource
device_plugin.xid_unhealthy                 gpu.unhealthy_device                    xid, device, resource
nvrm.xid                                    gpu.xid_error                           xid, pci, pid, description
                                            (training.code_error for Xid 13/31/43)  
device_plugin.no_nvml                       gpu.device_plugin_missing               detail
ofi.request_error                           nccl.peer_unresponsive /                ofi_error, fi_errno, ofi_message, host_id, peer_addr,
                                                                                    peer_host_id, time, host
                                            efa.network_unreachable
ofi.message_only                            nccl.peer_unresponsive /                time, host
                                            efa.network_unreachable
nccl.remote_error                           nccl.peer_unresponsive                  nccl_version, time, host
nccl.watchdog_timeout                       nccl.timeout                            rank, seq, op, timeout_ms, ran_ms, time, host
nccl.socket_error                           efa.network_unreachable /               problem, time, host
                                            nccl.peer_unresponsive
nccl.invalid_usage                          nccl.invalid_usage                      rank, other_rank, bus_id, problem, nccl_version
torch.cuda_oom                              training.cuda_oom                       tried, gpu, total, free, process, allocated,
                                                                                    reserved_unallocated, reserved_total, other_processes
cuda.error_oom                              training.cuda_oom                       (none)
deepspeed.cache_flushes                     training.memory_pressure                flushes
torch.rendezvous_error                      training.rendezvous_failed              error, joined, world
torch.socket_connect                        training.rendezvous_failed              host, port, problem
dns.name_resolution                         training.rendezvous_failed              problem
elastic.exitcode                            training.terminated                     exit_code, signal, local_rank, pid
process.signal_received                     training.terminated                     signal
container.exit_code                         training.terminated                     exit_code, signal
container.oomkilled                         training.terminated                     reason, signal
kubelet.eviction                            training.terminated                     resource, reason
cuda.kernel_assertion                       training.code_error                     kernel, assertion, meaning
cuda.device_assert                          training.code_error                     (none)
torch.index_error                           training.code_error                     target
torch.shape_mismatch                        training.code_error                     shapes
dataloader.shm_bus_error                    training.shm_exhausted                  pid
torch.shm_file                              training.shm_exhausted                  segment, problem
nccl.shm_segment                            training.shm_exhausted                  segment, size
kubelet.crash_loop                          training.crash_loop                     container, backoff
kubelet.image_pulled                        image.slow_pull                         image, pulled_in, including_waiting, image_size,
                                                                                    pull_seconds, wait_seconds, image_size_gb
ipamd.unauthorized                          node.not_ready                          problem, operation
kubelet.cni_not_ready                       node.not_ready                          problem
node.condition                              node.not_ready                          condition, node
kubelet.error_getting_node                  node.not_ready (info)                   (none)
==========================================  ======================================  =======================================================

Rules of the newer families are tabled in their own modules' docstrings: cuda_oom.py (CUDA, cuBLAS,
cuDNN and NCCL out-of-memory spellings), elastic.py (torchrun), efa.py, gpu_health.py (EKS node monitoring
agent), nvidia_smi.py, and the whole-document readers in playbooks/documents/. ``time`` and ``host`` on
the peer rules come from the line's own timestamp and NCCL's host:pid:tid prefix (log_time.py).

Capture names stay the same across versions of a message: ``nodepool`` whether Karpenter says
``provisioner "x"``, ``nodepool "x"`` or ``(NodePool=x)``; ``taint``/``key`` for ``{k: v}``,
``k=v:Effect`` and ``(taint=k:Effect)``; ``exit_code`` for torchrun ``exitcode: -15`` and
container ``Exit Code: 143``.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from playbooks.failures import components as component_lines
from playbooks.failures import lines as failure_lines
from playbooks.fix_values import is_dns1123_label, is_dns1123_subdomain
from playbooks.signatures import (
    containers, crash_loop, cuda_oom, dcgm, efa, elastic, gating, gpu, gpu_health, images, karpenter, karpenter_interruption,
    nccl, nccl_usage,
    nodes, nvidia_smi, scheduling, shm, storage, training, training_code, volumes,
)
from playbooks.signatures.model import Hit, Rule, Signal, trim
from playbooks.signatures.prefilter import anchors

MAX_LINE_CHARS = 64 * 1024

LINE_RULES: tuple[Rule, ...] = (
    *gating.RULES,
    *scheduling.LINE_RULES,
    *karpenter.LINE_RULES,
    *karpenter_interruption.RULES,
    *gpu.RULES,
    *gpu_health.RULES,
    *nvidia_smi.RULES,
    *dcgm.RULES,
    *efa.RULES,
    *nccl.RULES,
    *nccl_usage.RULES,
    *cuda_oom.RULES,
    *elastic.RULES,
    *training.RULES,
    *training_code.RULES,
    *shm.RULES,
    *crash_loop.RULES,
    *nodes.RULES,
    *images.RULES,
    *containers.RULES,
    *storage.RULES,
    *volumes.RULES,
)
# Rules that run on a part of a line rather than the whole line (documentation and tests).
PART_RULES: tuple[Rule, ...] = (*scheduling.REASONS, *karpenter.SEGMENT_RULES)
ALL_RULES: tuple[Rule, ...] = (*PART_RULES, *LINE_RULES)


@dataclass(frozen=True)
class _Unit:
    keywords: tuple[str, ...]
    scan: Callable[[str, dict[str, str]], Iterable[Hit]]


def _rule_unit(rule: Rule) -> _Unit:
    def scan(text: str, base: dict[str, str]) -> Iterable[Hit]:
        hit = rule.match(text, base)
        return (hit,) if hit is not None else ()

    return _Unit(rule.keywords, scan)


def _scheduler_scan(text: str, base: dict[str, str]) -> Iterable[Hit]:
    for hit in scheduling.scan(text):
        yield Hit(hit.code, hit.severity, hit.confidence, hit.title, {**base, **hit.fields})


_UNITS: tuple[_Unit, ...] = (
    _Unit((scheduling.GATE,), _scheduler_scan),
    _Unit(karpenter.SEGMENT_GATES, karpenter.scan_segments),
    *(_rule_unit(rule) for rule in LINE_RULES),
    # Last: failures read by their structure and upstream's tables (playbooks/failures/lines.py), the
    # floor under every rule; then any component's error line or Warning event row, read by its log format
    # and the cluster's vocabulary (playbooks/failures/components.py), the floor under that.
    _Unit(failure_lines.KEYWORDS, failure_lines.scan),
    _Unit(component_lines.KEYWORDS, component_lines.scan),
)


def _index(units: tuple[_Unit, ...]) -> tuple[tuple[str, ...], dict[str, tuple[int, ...]]]:
    owners: dict[str, list[int]] = {}
    for i, unit in enumerate(units):
        for keyword in unit.keywords:
            owners.setdefault(keyword, []).append(i)
    return tuple(owners), {k: tuple(v) for k, v in owners.items()}


KEYWORDS, _OWNERS = _index(_UNITS)
_FAILURE_UNIT = len(_UNITS) - 2
_COMPONENT_UNIT = len(_UNITS) - 1


@lru_cache(maxsize=1)
def _anchors() -> tuple[tuple[str, tuple[str, ...]], ...]:
    return anchors(KEYWORDS)  # on first use: explain's prefilter hands over the keywords it found


def _units_for(text: str, candidates: Iterable[str] | None = None) -> list[int]:
    if candidates is None:
        present = [k for anchor, keywords in _anchors() if anchor in text for k in keywords if k in text]
    else:  # a prefilter already found these in the line: only those of our keywords still in the cut text count
        present = [k for k in candidates if k in _OWNERS and k in text]
    if not present:
        return []
    if len(present) == 1:
        return list(_OWNERS[present[0]])
    return sorted({i for k in present for i in _OWNERS[k]})


def _name(value: object) -> str | None:
    """NAME or NAMESPACE/NAME, or None when either is not a valid Kubernetes name: a log record is tenant
    text, and the name may reach a fix snippet."""
    if isinstance(value, dict):
        name, namespace = value.get("name"), value.get("namespace")
        if isinstance(name, str):
            value = f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name
    if not isinstance(value, str) or not value:
        return None
    namespace, _, name = value.rpartition("/")
    if not is_dns1123_subdomain(name) or (namespace and not is_dns1123_label(namespace)):
        return None
    return value


_JSON_NAMES = (("pod", ("Pod", "pod")), ("nodeclaim", ("NodeClaim", "nodeclaim")), ("nodepool", ("NodePool", "nodepool")), ("node", ("Node", "node")))


def _unwrap_json(text: str) -> tuple[str, dict[str, str]]:
    """For a JSON log line: the text worth scanning and the object names it carries."""
    try:
        record = json.loads(text)
    except ValueError:
        return text, {}
    if not isinstance(record, dict):
        return text, {}
    parts = [str(record[k]) for k in ("message", "msg", "error", "err") if record.get(k)]
    if not parts:
        return text, {}
    # reason/command: disruption logs; type/status: a condition object (NodeClaim, Workload, Job);
    # instance-type/zone: Karpenter's "launched nodeclaim".
    parts += [
        f"{k}={record[k]}" for k in ("reason", "command", "type", "status", "instance-type", "zone", "messageKind")
        if isinstance(record.get(k), str)
    ]
    base = {}
    # Who wrote the record (zapr's logger, controller-runtime's controller, zap's caller): a rule for one
    # component's message must not take another component's line that shares a word with it.
    writer = " ".join(str(record[k]) for k in ("logger", "controller", "caller") if isinstance(record.get(k), str))[:200]
    if writer:
        base["writer"] = writer
    for field_name, keys in _JSON_NAMES:
        for key in keys:
            name = _name(record.get(key))
            if name:
                base[field_name] = name
                break
    return ", ".join(parts), base


def scan_line(line: str, *, source: str, lineno: int | None = None, keywords: Iterable[str] | None = None) -> list[Signal]:
    """Signals for one line: an event message, a condition message, a container status, a log line.

    ``keywords``: the words a prefilter found in the line (playbooks/signatures/prefilter.py), so they
    are not looked for again."""
    text = line[:MAX_LINE_CHARS].strip()
    units = _units_for(text, keywords)
    if not units:
        return []
    payload, base = (_unwrap_json(text) if text.startswith("{") else (text, {}))
    evidence = trim(text)
    seen: set[tuple[object, ...]] = set()
    signals: list[Signal] = []
    for i in units:
        if i == _COMPONENT_UNIT and signals and _component_shaped(signals):
            # The training floor took a line shaped like a component's or AWS's error for an exception it could
            # not class ("InvalidParameterException: ...", a CLI's "Error: ..."): the component reader decides.
            own = list(_UNITS[i].scan(text, base))
            if own:
                signals.clear()
                seen.clear()
                for hit in own:
                    signals.append(_signal(hit, evidence, source, lineno))
            break
        if i >= _FAILURE_UNIT and signals:
            break  # a rule above read this line: the structural readers are only the floor under the rules
        # The component reader reads a JSON line whole: its level and writer are fields of the record.
        for hit in _UNITS[i].scan(text if i == _COMPONENT_UNIT else payload, base):
            key = (hit.code, tuple(sorted(hit.fields.items())))
            if key in seen:
                continue
            seen.add(key)
            signals.append(_signal(hit, evidence, source, lineno))
    return signals


def _signal(hit: Hit, evidence: str, source: str, lineno: int | None) -> Signal:
    return Signal(code=hit.code, severity=hit.severity, confidence=hit.confidence, title=hit.title, line=evidence,
                  source=source, lineno=lineno, fields=MappingProxyType(dict(hit.fields)))


def _component_shaped(signals: list[Signal]) -> bool:
    """Only the training floor's unclassed exception read the line, and its type is no Python name: a bare
    ``Error`` or an undotted ``...Exception`` that AWS APIs return."""
    if len(signals) != 1 or signals[0].code != failure_lines.GENERIC:
        return False
    fields = signals[0].fields
    exc_type = fields.get("exc_type", "")
    return fields.get("error_class") == "unknown" and "." not in exc_type and (
        exc_type == "Error" or exc_type.endswith("Exception"))


def scan_lines(lines: Iterable[str], *, source: str) -> Iterator[Signal]:
    """Signals for each line, numbered from 1."""
    for lineno, line in enumerate(lines, start=1):
        if line:
            yield from scan_line(line, source=source, lineno=lineno)


def iter_lines(text: str) -> Iterator[str]:
    """Lines of text without copying it or building a list (a trailing \\r is left for strip())."""
    if "\n" not in text and "\r" in text:  # classic Mac line ends
        text = text.replace("\r", "\n")
    start, size, find = 0, len(text), text.find
    while start < size:
        end = find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def scan_text(text: str, *, source: str) -> list[Signal]:
    return list(scan_lines(iter_lines(text), source=source))
