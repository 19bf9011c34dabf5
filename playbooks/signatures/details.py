"""Detail paragraphs for findings built from text: the cause, what the numbers say, what to check next.

Each writer gets a ``View`` of one finding (its best signal's fields, the distinct values seen across
all its signals) and of the rest of the text (other codes present, Karpenter Nominated events), so a
paragraph can connect evidence: a vanished NCCL peer next to a Karpenter disruption, an
``Insufficient nvidia.com/gpu`` next to a GPU marked unhealthy.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from playbooks import hardware
from playbooks import linear
from playbooks.signatures import details_cluster, details_failures, details_gpu, details_history, details_volumes
from playbooks.signatures.details_training import NEXT_STEPS as training_next_steps
from playbooks.signatures.details_training import WRITERS as training_writers
from playbooks.signatures.log_time import ALIKE_SECONDS, first_failure

_SIZE = linear.compile(r"^\s*([\d.]+)\s*([KMGTP]?)(i?)B\s*$")
_POWER = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5}


@dataclass(frozen=True)
class View:
    code: str
    fields: Mapping[str, str]
    values: Mapping[str, tuple[str, ...]]
    count: int
    confidence: str
    codes: frozenset[str]
    related: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # best fields of other codes
    nominated: bool = False
    stamps: tuple[tuple[str, str], ...] = ()  # (host, time) of the signals that carried both (log_time.py)

    def get(self, name: str, default: str = "") -> str:
        return self.fields.get(name, default)

    def all(self, name: str) -> tuple[str, ...]:
        return self.values.get(name, ())


def size_bytes(text: str) -> float | None:
    """Bytes in "39.49 GiB" / "112.00 MiB" / "4 GB"; None when unparsable."""
    found = _SIZE.match(text or "")
    if found is None:
        return None
    base = 1024 if found.group(3) or found.group(2) == "" else 1000
    return float(found.group(1)) * base ** _POWER[found.group(2)]


def gib(value: float) -> str:
    return f"{value / 1024 ** 3:.1f} GiB"


def oom_split(fields: Mapping[str, str]) -> dict | None:
    """Who holds the GPU memory: this process or others (total - free - this process), and what the
    total says about the GPU (hardware.advice: bf16, bigger GPUs), for the detail and the fix. Without
    this process's figure only the GPU part; None without a total."""
    total, free = size_bytes(fields.get("total", "")), size_bytes(fields.get("free", ""))
    mine = size_bytes(fields.get("process") or fields.get("reserved_total", ""))
    if total is None or total <= 0:
        return None
    gpu = hardware.advice(hardware.gpu_from_capacity(total / 1024**3))
    if free is None or mine is None:
        return gpu  # the GPU is known, who holds its memory is not
    others = max(total - free - mine, 0.0)
    return {
        "total_gib": gib(total),
        "mine_gib": gib(mine),
        "others_gib": gib(others),
        "free_gib": gib(free),
        "holder": "others" if others > mine else "self",
        "others_pct": f"{100 * others / total:.0f}",
        "mine_pct": f"{100 * mine / total:.0f}",
        **gpu,
    }


def _list(values: tuple[str, ...], limit: int = 4) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def _times(view: View) -> str:
    return f" (seen {view.count} times)" if view.count > 1 else ""


def _prefix_hint(label: str) -> str:
    if label.startswith("karpenter.k8s.aws/"):
        suffix = label.removeprefix("karpenter.k8s.aws/")
        return (
            f" On EKS Auto Mode the NodePools label nodes eks.amazonaws.com/{suffix} instead of {label}: "
            "a selector written for open-source Karpenter selects nothing there."
        )
    if label.startswith("eks.amazonaws.com/"):
        suffix = label.removeprefix("eks.amazonaws.com/")
        return (
            f" The eks.amazonaws.com/ prefix only exists on EKS Auto Mode; open-source Karpenter on AWS uses "
            f"karpenter.k8s.aws/{suffix}."
        )
    return ""


def node_selector_mismatch(view: View) -> str:
    label, key = view.get("label"), view.get("key")
    if label and not key:
        hint = f" Karpenter suggests {view.get('suggestion')} (typo?)." if view.get("suggestion") else ""
        return (
            f"Karpenter cannot produce a node with label {label}: no NodePool defines values for it, so every "
            f"pod that requires it stays Pending.{hint}{_prefix_hint(label)} A custom label must be set in the "
            "NodePool's spec.template.metadata.labels (a common mistake is spec.template.spec) or allowed by a "
            "requirement with operator In."
        )
    if key:
        nodepool = view.get("nodepool", "the NodePool")
        return (
            f"The pod's nodeSelector / required node affinity on {key} is incompatible with NodePool {nodepool}"
            f" ({view.get('requirement', 'no overlap between the values')}). Make the pod ask for values the NodePool "
            f"allows, or widen the NodePool's requirement.{_prefix_hint(key)}"
        )
    nominated = (
        " A Karpenter Nominated event in the same text shows a node was on its way, so this part is expected."
        if view.nominated
        else " If Karpenter reports nothing for the pod, no NodePool matches it either."
    )
    return (
        f"Existing nodes do not match the pod's nodeSelector / required node affinity{_times(view)}. That is "
        f"normal while a GPU pod waits for Karpenter to launch a node of its NodePool.{nominated} Otherwise check "
        "that a NodePool can produce such a node: the label is in spec.template.metadata.labels or a requirement, "
        "and uses the right prefix (eks.amazonaws.com/ on EKS Auto Mode, karpenter.k8s.aws/ with open-source "
        "Karpenter)."
    )


def untolerated_taint(view: View) -> str:
    keys = view.all("key")
    if not keys:
        joining = (
            " A Karpenter Nominated event in the same text suggests it is the new node, which carries "
            "karpenter.sh/unregistered until it has joined: then this is transient."
            if view.nominated
            else ""
        )
        return (
            "Some nodes carry a taint the pod does not tolerate; since Kubernetes 1.34 the scheduler no longer "
            "prints the taint keys. List them with kubectl get nodes -o custom-columns=NAME:.metadata.name,"
            f"TAINTS:.spec.taints. A karpenter.sh/unregistered taint only means a new node is still joining.{joining}"
        )
    system = [k for k in keys if k in ("CriticalAddonsOnly", "node-role.kubernetes.io/control-plane")]
    real = [k for k in keys if k not in system]
    parts = []
    if real:
        where = f" on NodePool {_list(view.all('nodepool'))}" if view.all("nodepool") else ""
        parts.append(
            f"Nodes{where} carry taint(s) {_list(view.all('taint') or tuple(real))} and the pod has no matching "
            "toleration. GPU NodePools usually taint nvidia.com/gpu or a custom key such as gpu-workload: add a "
            "toleration with the same key and effect to the pod template (operator Exists matches any value)."
        )
    if system:
        parts.append(
            f"{_list(tuple(system))} marks system / add-on nodes (the EKS Auto Mode system pool, managed node "
            "groups for add-ons); GPU pods are not meant to land there, so this part is rarely the root cause: "
            "look at the other reasons in the same message."
        )
    return " ".join(parts)


def node_lifecycle_taint(view: View) -> str:
    if "unschedulable" in view.get("reason"):
        return (
            f"{view.get('nodes', 'Some')} node(s) are cordoned (spec.unschedulable): a drain, a Karpenter disruption or "
            "an operator's kubectl cordon. They take no new pods until uncordoned; if no other node fits, Karpenter "
            "should launch one, and its own event for the pod says whether it can."
        )
    keys = _list(view.all("key") or ("a lifecycle taint",))
    return (
        f"The candidate node(s) carry {keys}: a node that is still joining (karpenter.sh/unregistered, "
        "node.kubernetes.io/not-ready) or being removed (karpenter.sh/disrupted). This is transient: the scheduler "
        "retries once the taint is gone, so it is not a missing toleration. It matters only if it persists: a node "
        "stuck unregistered for more than ~15 minutes (check the NodeClaim's Registered and Initialized "
        "conditions), or pods repeatedly landing on nodes Karpenter is disrupting."
    )


def insufficient_gpu(view: View) -> str:
    text = f"{view.get('nodes', 'Some')} of {view.get('total', '?')} node(s) have no free nvidia.com/gpu{_times(view)}."
    if "gpu.unhealthy_device" in view.codes:
        text += (
            " The same text shows a GPU marked unhealthy: unhealthy GPUs stay in capacity but leave allocatable, "
            "so a GPU node reports Insufficient nvidia.com/gpu; fix the device first."
        )
    if view.nominated:
        return text + (
            " A Karpenter Nominated event shows a nodeclaim was launched for the pod, so new capacity was on its way: "
            "usually transient. If it "
            "persists after that node joined, compare the node's allocatable and capacity for nvidia.com/gpu."
        )
    return text + (
        " No Karpenter Nominated event in the text, so no new capacity is known to be coming: check Karpenter's "
        "FailedScheduling event or logs for the pod, the GPU NodePool's spec.limits, and which pods hold the GPUs "
        "(kubectl describe node, Allocated resources)."
    )


def pod_affinity_unsatisfiable(view: View) -> str:
    if "ports" in view.get("reason") or view.get("port") or "hostport" in view.get("reason").lower():
        return (
            "The pod asks for a hostPort that is already taken on the candidate node(s): a hostPort admits one such "
            "pod per node, so replicas behave as if they had required anti-affinity on kubernetes.io/hostname. "
            "Drop the hostPort (use a Service, or hostNetwork only where required) or give each replica its own node."
        )
    if view.get("constraint") == "pod anti-affinity" or "anti-affinity" in view.get("reason"):
        return (
            "Required pod anti-affinity needs a separate topology domain (host or zone) per replica. Karpenter can "
            "add nodes unless NodePool limits, zone lists or the instance types prevent it; consider "
            "preferredDuringScheduling or topologySpreadConstraints instead."
        )
    return (
        "The pods require affinity (requiredDuringSchedulingIgnoredDuringExecution) to pods of their own job on "
        f"{view.get('key', 'kubernetes.io/hostname')}. With no replica running yet, the first one has nothing to "
        "co-locate with, and all replicas on one host need a single node with room for all of them (N GPUs on one "
        "instance), which a NodePool of smaller GPU instances can never provide: a deadlock. Make it "
        "preferredDuringSchedulingIgnoredDuringExecution, drop it from the Master replica so the master lands "
        "first, or use a wider topology key (topology.kubernetes.io/zone) for locality."
    )


def volume_zone_conflict(view: View) -> str:
    if view.get("problem") == "unbound immediate PersistentVolumeClaims":
        return (
            "The pod's PersistentVolumeClaim is not bound yet and its StorageClass binds immediately (volumeBindingMode: "
            "Immediate), so the scheduler waits for the volume before placing the pod. Check kubectl describe pvc "
            "(no matching PV, a failing CSI provisioner such as the EBS CSI driver's IAM permissions, a missing "
            "StorageClass) and prefer volumeBindingMode: WaitForFirstConsumer so the volume follows the pod's zone."
        )
    return (
        "The pod's PersistentVolume is pinned to one Availability Zone (an EBS volume cannot leave its zone) and no "
        "node can be placed there: the NodePool or the pod excludes that zone, the EC2NodeClass has no subnet in it, "
        "or the GPU type has no offering there. Allow the volume's zone for this pod, or recreate the volume in the "
        "right zone (snapshot + restore); use a StorageClass with volumeBindingMode: WaitForFirstConsumer so new "
        "volumes follow the pod."
    )


def topology_spread(view: View) -> str:
    if view.get("missing_label"):
        return (
            "Some nodes lack the label the topologySpreadConstraint uses as topologyKey, so they never count as a "
            "domain and cannot take the pod. Use a key every candidate node carries (topology.kubernetes.io/zone, "
            "kubernetes.io/hostname) or add a nodeAffinity that keeps the pod to nodes that carry it."
        )
    return (
        f"topologySpreadConstraints on {view.get('key', 'a topology key')} with whenUnsatisfiable: DoNotSchedule "
        "cannot be met: a domain counted by the constraint cannot get a node (no GPU offering or subnet in that "
        "zone, or the NodePool excludes it). Use whenUnsatisfiable: ScheduleAnyway, restrict the spread with a "
        "nodeAffinity to zones the NodePool can produce, or drop the constraint for single-replica GPU pods."
    )


def no_instance_type(view: View) -> str:
    where = f" in NodePool {_list(view.all('nodepool'))}" if view.all("nodepool") else ""
    if view.get("nodes") and view.get("resource"):  # kube-scheduler "Insufficient cpu" and kin
        return (
            f"{view.get('nodes')} of {view.get('total', '?')} existing node(s) lack free {view.get('resource')} for the "
            f"pod's requests{_times(view)}. That alone is ordinary on an autoscaled cluster: a new node has to be "
            "launched, and Karpenter's own event for the pod (Nominated, or FailedScheduling with its reason) says "
            "whether one can hold the requests plus daemonset overhead. If Karpenter reports nothing, check the "
            f"pod's {view.get('resource')} request against the largest instance type its NodePools allow."
        )
    if view.get("condition") == "ValidationSucceeded":
        return (
            f"NodePool{where} failed validation ({view.get('reason', '?')}: {view.get('message', 'see its status')}). "
            "Karpenter ignores an invalid NodePool, so it launches nothing for any pod. Fix the spec (kubectl get "
            "nodepool -o yaml, status.conditions) and re-apply it."
        )
    if view.get("label") and not view.get("requirements"):
        return (
            f"NodePool{where} requires minValues distinct values of {view.get('label')}, but after the pod's own "
            "requirements and resources fewer instance types remain. Lower minValues, widen the NodePool's "
            "requirement (more families / sizes), or relax the pod's requests and selectors."
        )
    gpus = view.get("gpus")
    asks = f" The pod requests {gpus} nvidia.com/gpu; the largest AWS GPU instances have 8 per node." if gpus else ""
    requests = f" Requests: {view.get('resources')}." if view.get("resources") else ""
    typo = " Karpenter notes the CPU request is at least 1 million: an m vs M typo?" if view.get("typo") else ""
    asks += typo
    if view.confidence != "high":
        return (
            f"Karpenter found no instance type{where} that had enough resources and an available offering at the "
            "same time. Its message covers two different causes, so check both: (1) resources: no allowed type is "
            "big enough for the requests plus daemonset overhead (for example nvidia.com/gpu: 16 when the largest "
            "allowed type has 8, or vpc.amazonaws.com/efa on a type without EFA); (2) offering: the types that fit "
            "are not offered in the allowed zones / capacity types (a zone pin such as topology.kubernetes.io/zone, "
            f"spot only).{asks}{requests} Compare the pod's requests with kubectl get nodepool -o yaml and aws ec2 "
            "describe-instance-type-offerings."
        )
    return (
        f"No instance type allowed{where} fits the pod: either the requirements exclude every type (an empty "
        "intersection of instance family / category / GPU name / architecture between pod and NodePool), or none "
        f"has enough resources for the requests plus daemonset overhead.{asks}{requests} Compare the pod's requests "
        "and node selectors with the NodePool requirements (kubectl get nodepool -o yaml)."
    )


def nodepool_limit_reached(view: View) -> str:
    pools = _list(view.all("nodepool") or ("the NodePool",))
    resource = view.get("resource")
    which = (
        f"on {resource}" if resource
        else "on one of its resources (cpu, memory, nvidia.com/gpu or nodes: Karpenter's message does not say which)"
    )
    return (
        f"NodePool {pools} has reached its spec.limits {which}: every instance type that fits the pod would take "
        "the NodePool past a limit. Compare status.resources with spec.limits (kubectl get nodepool -o yaml). "
        "Karpenter launches nothing more there until usage drops or the limit is raised. Limits count node "
        "capacity, not pod requests: one p4d.24xlarge counts 8 GPUs, 96 vCPUs and 1152 GiB, so a cpu or memory "
        "limit below one node's capacity blocks every GPU launch as surely as a GPU limit."
    )


def insufficient_capacity(view: View) -> str:
    if view.get("problem") == "AsgInstanceLaunchFailures":  # nodes.py nodegroup.health_issue
        return (
            "The EKS managed node group's Auto Scaling group keeps failing to launch instances "
            "(AsgInstanceLaunchFailures). The issue code does not say why: the cause is in the Auto Scaling "
            "activities, so collect next: aws autoscaling describe-scaling-activities --auto-scaling-group-name "
            "<asg> (StatusMessage). For GPU types it is usually InsufficientInstanceCapacity, but a vCPU quota, an "
            "AMI or a launch template / KMS key problem fail the same way: read it before adding instance types "
            "or zones."
        )
    what = view.get("instance_type", "the chosen instance type")
    where = f" in {view.get('zone')}" if view.get("zone") else ""
    return (
        f"EC2 has no capacity for {what}{where} right now{_times(view)}. Karpenter marks the offering unavailable "
        "for 3 minutes and tries the other offerings the NodePool allows; with a single type, zone or capacity type "
        "it keeps failing. Allow more GPU types and zones, on-demand as a fallback for spot, or use an On-Demand "
        "Capacity Reservation / Capacity Block for ML."
    )


def offering_unavailable_in_zone(view: View) -> str:
    if not view.get("instance_type"):  # Karpenter's "no instance type has the required offering"
        where = f" in NodePool {_list(view.all('nodepool'))}" if view.all("nodepool") else ""
        allowed = "; ".join(
            part for part in (
                f"capacity type {view.get('capacity_type')}" if view.get("capacity_type") else "",
                f"zones {view.get('zones')}" if view.get("zones") else "",
            ) if part
        )
        allowed = f" The requirements allow {allowed}." if allowed else ""
        return (
            f"Karpenter found instance types{where} that fit the pod, but none with an available offering. An "
            "offering is a zone AND a capacity type (spot, on-demand, reserved): a spot-only NodePool whose types "
            "have no spot capacity, a reserved-only pool without a Capacity Reservation / Capacity Block, a zone "
            "pin (pod, NodePool, volume) where the type is not sold, or an EC2NodeClass without a subnet in the "
            f"allowed zones.{allowed} Karpenter also marks offerings unavailable for 3 minutes after an "
            "insufficient-capacity error. Allow on-demand as a fallback, more zones, or more instance types; check "
            "aws ec2 describe-instance-type-offerings --location-type availability-zone."
        )
    what = view.get("instance_type", "the instance type")
    suggested = f" EC2 suggests {view.get('alternatives')}." if view.get("alternatives") else ""
    return (
        f"{what} is not offered in the Availability Zone(s) or capacity type the pod and NodePool allow"
        f"{' (' + view.get('zone') + ')' if view.get('zone') else ''}: large GPU types exist only in some zones."
        f"{suggested} Check aws ec2 describe-instance-type-offerings --location-type availability-zone, then allow a "
        "zone where it is offered (the EC2NodeClass needs a subnet there) or remove the zone pin from the pod."
    )


def quota_exceeded(view: View) -> str:
    limit = f" (current limit {view.get('limit')} vCPUs)" if view.get("limit") else ""
    return (
        f"EC2 refused the launch: an account quota is exhausted ({view.get('error_code', 'quota')}){limit}. GPU "
        "instances count against the 'Running On-Demand P instances' / 'G and VT instances' vCPU quotas (spot has "
        "its own); a p4d.24xlarge needs 96 vCPUs. Request an increase in Service Quotas; Karpenter cannot work "
        "around it except with instance families under another quota."
    )


# EKS managed node group health issue codes about subnets (botocore eks NodegroupIssueCode; meanings from
# the EKS API reference, Issue.code).
_NODEGROUP_SUBNET_ISSUES = {
    "InsufficientFreeAddresses": (
        "A subnet of the EKS managed node group has no free IP addresses for new nodes "
        "(InsufficientFreeAddresses), so the node group cannot scale up. Free addresses or add subnets with room "
        "(a secondary CIDR), and lower the VPC CNI's warm pool (WARM_IP_TARGET / WARM_ENI_TARGET) so running "
        "nodes hold fewer spare IPs."
    ),
    "Ec2SubnetNotFound": (
        "A subnet the EKS managed node group launches into no longer exists (Ec2SubnetNotFound). The node group "
        "cannot launch there: update its subnets (a new node group, or the launch template's subnets) to ones "
        "that exist."
    ),
    "Ec2SubnetInvalidConfiguration": (
        "A subnet of the EKS managed node group does not auto-assign public IPv4 addresses to instances "
        "launched into it (Ec2SubnetInvalidConfiguration), which a node group in a public subnet needs to "
        "reach the cluster. Enable MapPublicIpOnLaunch on the subnet, or move the node group to private subnets "
        "with a NAT gateway or VPC endpoints."
    ),
}


def subnet_problem(view: View) -> str:
    problem = view.get("problem")
    if problem == "no pod IP address":  # nodes.py cni.pod_ip_unavailable (aws/amazon-vpc-cni-k8s)
        return (
            "The VPC CNI (aws-node / ipamd) could not assign the pod an IP address, so its sandbox is never created "
            "and it stays ContainerCreating. Either the subnet has no free IPs left, or the node's own pool is used "
            "up: each ENI holds a fixed number of addresses (the instance type's ENI limits) unless prefix "
            "delegation (ENABLE_PREFIX_DELEGATION=true) gives /28 prefixes instead. Warm pools (WARM_IP_TARGET, "
            "WARM_ENI_TARGET, MINIMUM_IP_TARGET on the aws-node DaemonSet) decide how many spare IPs each node "
            "holds. To tell which, collect next: the subnets' free addresses (aws ec2 describe-subnets, "
            "AvailableIpAddressCount) and ipamd's log on the node (/var/log/aws-routed-eni/ipamd.log)."
        )
    if problem in _NODEGROUP_SUBNET_ISSUES:  # nodes.py nodegroup.health_issue (EKS NodegroupIssueCode)
        return _NODEGROUP_SUBNET_ISSUES[problem]
    if "no subnets" in problem:
        return (
            "The EC2NodeClass subnetSelectorTerms match no subnet (usually a missing karpenter.sh/discovery tag), so "
            "Karpenter cannot launch anything. Tag the private subnets or fix the selector; kubectl get "
            "ec2nodeclass -o yaml shows status.subnets."
        )
    return (
        f"Subnet {view.get('subnet', '')} has no free IP addresses. GPU nodes take many addresses (EFA interfaces, "
        "VPC CNI warm pools). Add subnets (a secondary CIDR) to the EC2NodeClass, or lower WARM_IP_TARGET / "
        "WARM_ENI_TARGET on aws-node."
    )


def node_registration_failed(view: View) -> str:
    condition, reason, message = view.get("condition"), view.get("reason"), view.get("message")
    said = f" ({message})" if message else ""
    if condition in ("Launched", "MachineLaunched") or reason == "LaunchFailed":
        return (
            f"Karpenter could not launch the NodeClaim: {reason or 'launch failed'}{said}. Nothing was created, so "
            "the pod keeps waiting; Karpenter retries and, after repeated failures, sets NodeRegistrationHealthy="
            "False on the NodePool. Usual causes: the EC2NodeClass (AMI selector, instance profile / IAM role, "
            "security groups, launch template), or EC2 refusing the request; the message above is EC2's or the "
            "provider's own."
        )
    if condition == "NodeClassReady" or reason.startswith("NodeClass"):
        return (
            f"The NodePool's NodeClass is not ready ({reason or 'not ready'}){said}: Karpenter launches nothing for "
            "this NodePool until it is. kubectl get ec2nodeclass -o yaml (or nodeclass on EKS Auto Mode) shows which "
            "condition is False: SubnetsReady, SecurityGroupsReady, AMIsReady, InstanceProfileReady."
        )
    if condition in ("Initialized", "MachineInitialized") or reason in ("StartupTaintsExist", "KnownEphemeralTaintsExist", "NodeNotReady"):
        taint = view.get("taint")
        if taint or reason == "StartupTaintsExist":
            return (
                f"The node registered but startup taint {taint or '(see the NodeClaim)'} is still there, so Karpenter "
                "does not consider it initialized and pods that do not tolerate it cannot land. A startup taint must "
                "be removed by the agent it waits for (a CNI, the GPU operator, a driver installer DaemonSet): check "
                "that this DaemonSet runs on the node and tolerates the node's taints."
            )
        return (
            f"The node registered but is not initialized yet ({reason}){said}: the kubelet has not reported Ready, "
            "or a well-known taint such as node.kubernetes.io/not-ready is still there. For a few minutes this is "
            "normal; if it persists, look at the node's conditions and the aws-node / kube-proxy pods on it."
        )
    base = (
        "The instance launched but its Node never registered with the cluster. Usual causes: the node IAM role is "
        "not mapped (aws-auth or an EKS access entry; kubelet logs 'Unauthorized'), bootstrap / user data failing on "
        "a custom AMI, or no route from the subnet to the API endpoint. Karpenter deletes a NodeClaim that has not "
        "registered within 15 minutes and sets NodeRegistrationHealthy=False on the NodePool."
    )
    if view.confidence != "high":
        base += (
            " 'Node not registered with cluster' alone is normal for the first minutes after a launch: collect the "
            "NodeClaim's age and conditions (kubectl get nodeclaim -o wide) and the instance's console output."
        )
    return base


def resource_not_registered(view: View) -> str:
    resource = view.get("resource", "an extended resource")
    plugin = "aws-efa-k8s-device-plugin" if "efa" in resource else "NVIDIA device plugin"
    extra = " It never runs on EKS Auto Mode nodes." if "efa" in resource else ""
    return (
        f"The node came up but never advertised {resource}, so pods requesting it cannot start. The {plugin} "
        "DaemonSet is missing on the node, crashing, or does not tolerate the node's taints (GPU NodePools taint "
        f"nvidia.com/gpu; the EFA plugin's default tolerations do not include it).{extra} Check the DaemonSet's "
        "pods on that node and their tolerations."
    )


def disruption(view: View) -> str:
    reasons = _list(view.all("reason") or ("disruption",))
    text = (
        f"Karpenter disrupted node(s) ({reasons}){_times(view)}. Voluntary disruption (consolidation: "
        "Underutilized / Empty, Drifted, Expired) drains the node: training pods get SIGTERM and the job's other "
        "ranks lose a peer. Protect running jobs with the pod annotation karpenter.sh/do-not-disrupt: \"true\"; "
        "for training NodePools use consolidationPolicy: WhenEmpty with a consolidateAfter, or a disruption budget."
    )
    if view.all("blocker") and {"Eviction"} & set(view.all("reason")):
        text += (
            " Karpenter also reported the disruption as blocked, yet a pod was evicted: expiry with a "
            "terminationGracePeriod, a spot interruption or a manual drain bypasses do-not-disrupt."
        )
    if "SpotInterrupted" in view.all("reason"):
        text += " A spot interruption cannot be blocked: use on-demand or reserved capacity for multi-node jobs, or checkpoint often."
    if {"training.terminated", "nccl.peer_unresponsive"} & view.codes:
        text += " The same text shows the training process terminated / a peer lost, consistent with this disruption killing the job."
    return text


XID_MEANINGS = {
    "13": "graphics engine exception (usually an application bug)",
    "31": "GPU memory page fault (usually an application bug)",
    "43": "GPU stopped processing (application fault)",
    "45": "preemptive cleanup after an earlier error",
    "48": "double-bit ECC error",
    "63": "ECC page retirement / row remapping event",
    "64": "ECC page retirement / row remapping failure",
    "74": "NVLink error",
    "79": "GPU has fallen off the bus",
    "92": "high single-bit ECC error rate",
    "94": "contained ECC error",
    "95": "uncontained ECC error",
    "119": "GSP RPC timeout",
    "120": "GSP error",
}


# EKS node monitoring agent (aws/eks-node-monitoring-agent pkg/reasons/reasons.yaml): a Fatal reason sets
# AcceleratedHardwareReady=False, a Warning one only records an event. Karpenter's node repair
# (kubernetes-sigs/karpenter pkg/controllers/node/health/controller.go, feature gate NodeRepair, alpha
# since v1.1 and off by default; on in EKS Auto Mode) deletes the NodeClaim once a condition of the cloud
# provider's RepairPolicies has held for its toleration: aws/karpenter-provider-aws
# pkg/cloudprovider/cloudprovider.go RepairPolicies gives AcceleratedHardwareReady=False 10 minutes. It
# holds back while more than 20% of the NodePool's nodes are unhealthy (allowedUnhealthyPercent).
REPAIR_NOTE = (
    " When the agent sets AcceleratedHardwareReady=False (a Fatal reason; Warning reasons only record an "
    "event), Karpenter's node repair (feature gate NodeRepair, Karpenter v1.1+, on by default in EKS Auto Mode) "
    "replaces the node once the condition has been False for 10 minutes, unless more than 20% of the NodePool's "
    "nodes are unhealthy. Without node repair nothing replaces it: cordon, drain and delete the node yourself."
)
# The agent's reasons that stand for an Xid (reasons.yaml): the double-bit ECC reason is Xid 48's.
_AGENT_XIDS = {"NvidiaDoubleBitError": "48"}
# nvidia-smi -q keys (documents/nvidia_smi_q.py) whose fix is a GPU reset, not a new node: NVIDIA's GPU
# memory error management guide (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt) applies a pending row
# remap or page retirement at the next GPU reset.
_RESET_KEYS = frozenset({"Pending", "Pending Page Blacklist", "Pending Page Retirement"})
_XID_NEXT = (" What to collect next: dmesg | grep -i xid on the node (kubectl debug node/<node> -it "
             "--image=public.ecr.aws/amazonlinux/amazonlinux:2023 -- chroot /host), for the Xid behind it.")


def _from_agent(view: View) -> bool:
    """Signals of the EKS node monitoring agent carry a reason, a DCGM code or an Xid level."""
    return bool(view.all("reason") or view.all("dcgm_code") or view.all("level"))


def _from_nvidia_smi(view: View) -> bool:
    """nvidia-smi -q (documents/nvidia_smi_q.py: bus, key) or nvidia-smi's table and errors (pci)."""
    return bool(view.all("bus") or view.all("pci"))


def _agent_lead(view: View) -> str:
    dcgm = f" (DCGM health error code {_list(view.all('dcgm_code'))})" if view.all("dcgm_code") else ""
    return (
        f"The EKS node monitoring agent reported {_list(view.all('reason'))}{dcgm} for the node's GPUs. A job "
        "placed on a GPU in this state fails or slows down; drain the node before restarting the job."
    )


def _smi_lead(view: View) -> str:
    keys, gpu = view.all("key"), _list(view.all("bus") or view.all("pci"))
    if _RESET_KEYS & set(keys):
        return (
            f"nvidia-smi -q shows a memory repair pending on GPU {gpu} ({_list(keys)}): the GPU found uncorrectable "
            "memory errors and set spare rows (or a page retirement) aside, which take effect only at the next GPU "
            "reset. Drain the node; a GPU reset (nvidia-smi -r -i <index>, no process on the GPU) or a reboot then "
            "applies the remap, and replacing the node works as well. If 'Remapping Failure Occurred' says Yes, or "
            "a remap is pending again after the reset, the GPU has no spare rows left: replace the node."
        )
    if keys:
        return (
            f"nvidia-smi -q reports {_list(keys)} on GPU {gpu}. Drain the node: reset the GPU (or reboot) and "
            "replace the node if the errors come back."
        )
    return (
        f"nvidia-smi cannot use GPU {gpu} or counts uncorrectable errors on it: the driver lost the GPU or its "
        "memory is failing. Drain the node and replace the instance (Karpenter launches a new one)."
    )


def unhealthy_device(view: View) -> str:
    if view.get("bus") or view.get("pci"):
        text = _smi_lead(view)
    elif view.get("reason") or view.get("dcgm_code"):
        text = _agent_lead(view)
    else:
        xid = f" after Xid {view.get('xid')} ({XID_MEANINGS.get(view.get('xid'), 'see NVIDIA Xid catalogue')})" if view.get("xid") else ""
        text = (
            f"The NVIDIA device plugin marked GPU(s) unhealthy{xid}. Unhealthy GPUs stay in the node's capacity but "
            "leave allocatable; a pod bound there fails admission (UnexpectedAdmissionError, 'Allocate failed due to no "
            "healthy devices present') and ends Failed. The plugin does not mark a GPU healthy again by itself: check "
            "dmesg on the node for Xid errors, then cordon and drain the node and replace the instance (Karpenter "
            "launches a new one); restarting the plugin only helps after a transient fault."
        )
        if _RESET_KEYS & set(view.all("key")):
            text += " nvidia-smi -q also shows a row remap pending: a GPU reset or a reboot applies it."
    if _from_agent(view):
        text += REPAIR_NOTE
    if _from_nvidia_smi(view):
        text += _XID_NEXT
    return text


def device_plugin_missing(view: View) -> str:
    error = view.get("nvml_error")
    if "version mismatch" in error.lower().replace("_", " "):
        return (
            f"NVML failed with '{error}': the NVIDIA kernel module loaded on the node and the user-space driver "
            "libraries differ, which happens when the driver is upgraded (a package update, a GPU Operator driver "
            "rollout) without a reboot. No GPU on the node works until it reboots; containerd and device plugin "
            "settings do not matter here. Cordon and drain the node, then reboot it or replace it (delete the node "
            "and Karpenter launches a fresh one), and keep driver upgrades out of running nodes (pin the AMI)."
        )
    if view.get("gpu_evidence"):  # documents/describe_node.py: a GPU instance without nvidia.com/gpu
        node = f"Node {view.get('node')}" if view.get("node") else "The node"
        return (
            f"{node} is a GPU instance ({view.get('gpu_evidence')}) but advertises no "
            "nvidia.com/gpu, so GPU pods stay Pending. No NVIDIA device plugin has registered with its kubelet: the "
            "plugin DaemonSet is not scheduled there (nodeSelector, or no toleration for the node's taints), is "
            "crashing (its log names NVML errors), or the node uses a non-GPU AMI (AL2023 / Bottlerocket need "
            "their NVIDIA variants)."
        )
    return (
        f"The NVIDIA device plugin runs but cannot see any GPU ({view.get('detail') or error or 'NVML unavailable'}), so "
        "the node advertises no nvidia.com/gpu and GPU pods stay Pending. Usual causes: the container runtime is not "
        "configured with the NVIDIA runtime (nvidia-ctk runtime configure), a non-GPU AMI (AL2023 / Bottlerocket "
        "need their NVIDIA variants), or the plugin scheduled on a non-GPU node."
    )


def efa_resource_unavailable(view: View) -> str:
    if view.get("problem") or view.get("devices"):  # efa.py efa.no_provider: seen from inside the container
        return (
            f"The container sees no usable EFA device ({view.get('problem') or 'total_device_cnt=' + view.get('devices')}), "
            "so libfabric offers no efa provider and NCCL falls back to TCP sockets: the job runs, many times "
            "slower between nodes. Request vpc.amazonaws.com/efa in the pod's resources (EFA devices are only "
            "mounted into containers that request them), check that the aws-efa-k8s-device-plugin runs on the "
            "node and advertises vpc.amazonaws.com/efa, and that the instance type has EFA (p4d, p5, large g6e / "
            "trn sizes ...)."
        )
    return (
        "Pods request vpc.amazonaws.com/efa but no node offers it. The aws-efa-k8s-device-plugin DaemonSet must run "
        "on the GPU nodes (its default tolerations do not include GPU taints such as nvidia.com/gpu), the instance "
        "type must support EFA (p4d, p5, g6e.*xlarge large sizes ...), and EKS Auto Mode does not run the EFA plugin "
        "at all. Without EFA, drop the request and let NCCL use TCP."
    )


# efa_errno.h (ofiwg/libfabric prov/efa/src): 4105 Out of memory, 4108 RX entries exhausted, 4109 TX
# entries exhausted: the local provider ran out of buffers, nothing was dropped on the network.
_EFA_EXHAUSTED = frozenset({"4105", "4108", "4109"})


def network_unreachable(view: View) -> str:
    error = view.get("ofi_error")
    if error in _EFA_EXHAUSTED and not view.get("peer_meaning"):
        return (
            f"libfabric reported error {error} ({view.get('ofi_message', 'resource exhaustion')}): the EFA provider "
            "on this host ran out of its own memory or request entries. That is resource exhaustion, not a security "
            "group or a lost peer: too many transfers in flight for the provider's pools, or memory it could not "
            "register or allocate (the container's memory limit, huge pages). Check the container's memory and "
            "huge pages, update the EFA installer / libfabric and aws-ofi-nccl; collect next: a rerun with "
            "FI_LOG_LEVEL=warn and NCCL_DEBUG=INFO, whose provider warnings name the pool that ran dry."
        )
    what = f"libfabric reported error {error} ({view.get('ofi_message')})" if error else f"NCCL could not reach a peer ({view.get('problem', 'network error')})"
    return (
        f"{what}. 'Unreachable remote' (15) is most often security groups or subnets: the node security group must "
        "allow all inbound and outbound traffic to and from itself (EFA traffic is not IP-routed), and the "
        "instances should sit in the same subnet / AZ. Other OFI errors point at the EFA setup (device plugin, "
        "huge pages, aws-ofi-nccl version) rather than at a dead peer."
    )


def peer_unresponsive(view: View) -> str:
    text = _system_error() if view.get("problem") == "ncclSystemError" else (
        "Another rank stopped answering: EFA error 4126 'Unresponsive receiver (reachable by EFA device but "
        "handshake failed)' or ncclRemoteError means the peer process is most likely no longer there. This rank is a "
        "victim; the cause is on the peer: look at the other pods' logs and events around the same time (OOM, "
        "eviction, Karpenter disruption, node NotReady)."
    )
    if view.get("peer_host_id") == "N/A":
        text += " 'Peer host id: N/A' means the handshake never completed, so the peer's identity is unknown from this side."
    if "karpenter.disruption" in view.codes:
        reason = view.related.get("karpenter.disruption", {}).get("reason", "")
        text += f" This text also shows Karpenter disrupting a node{' (' + reason + ')' if reason else ''}: the peer most likely died in that disruption."
    if "training.terminated" in view.codes:
        signal = view.related.get("training.terminated", {}).get("signal", "a signal")
        text += f" It also shows a training process terminated ({signal}): the peer was likely killed from outside rather than crashing."
    if "node.not_ready" in view.codes:
        text += " A node went NotReady in the same text: its pods' ranks would vanish exactly like this."
    if "training.cuda_oom" in view.codes:
        text += " A CUDA OOM appears in the same text: the rank that ran out of memory exits and its peers report exactly this error."
    return text + _order_of_reports(view)


def _order_of_reports(view: View) -> str:
    """Which host reported first, from the log's own timestamps. The reporters are the survivors: the
    rank that died or hung is the one whose host reported nothing, or reported later and differently."""
    hosts = {host for host, _ in view.stamps}
    found = first_failure(list(view.stamps)) if len(hosts) > 1 else None
    if found is None:
        return ""
    host, alike = found
    if alike:
        return (f" {len(hosts)} hosts reported this, the first two within {ALIKE_SECONDS:g} s of each other: the "
                "text cannot say which rank failed first; the rank that failed is likely on a host that reported "
                "nothing.")
    first = min(t for h, t in view.stamps if h == host)
    return (f" {host} reported it first ({first}), more than {ALIKE_SECONDS:g} s before any other host: start with "
            f"the ranks {host} talks to and what happened to their pods just before.")


def _system_error() -> str:
    # nccl.system_error (signatures/nccl.py): ncclSystemError from NVIDIA/nccl src/init.cc ncclGetErrorString;
    # ncclRemoteError, which names a vanished peer, exists only from NCCL 2.13 on.
    return (
        "A system call inside NCCL failed on this host: a socket (peer gone, firewall or security group), "
        "/dev/shm, or a device call. Before NCCL 2.13 a peer that exited also read this way. Rerun with "
        "NCCL_DEBUG=INFO: the WARN line before the error names the call."
    )


def nccl_timeout(view: View) -> str:
    op = view.get("op", "a collective")
    timeout = f" within {int(view.get('timeout_ms')) // 1000} s" if view.get("timeout_ms", "").isdigit() else ""
    text = (
        f"{op} did not complete{timeout} on rank {view.get('rank', '?')}: the NCCL watchdog aborted it. A timeout "
        "alone does not say why: a straggler or hung rank (data loading, checkpointing, a Python exception on one "
        "rank), a rank that died without the others noticing, or a faulty GPU / NIC."
    )
    if {"gpu.xid_error", "gpu.unhealthy_device"} & view.codes:
        text += " A GPU fault appears in the same text and would explain a hung rank."
    text += _order_of_reports(view)
    if view.confidence == "low":
        text += (
            " Evidence is thin; collect next: the logs of all ranks around the timeout (which rank never entered "
            "the collective), a run with TORCH_NCCL_DESYNC_DEBUG=1 and NCCL_DEBUG=INFO, kubectl get events for the "
            "job's pods and nodes (evictions, NotReady, Karpenter disruption), and dmesg on the nodes for Xid errors."
        )
    return text


def cuda_oom(view: View) -> str:
    tried = view.get("tried", "memory")
    split = oom_split(view.fields)
    if split is None or "holder" not in split:
        bigger = (oom_bigger_gpus(split) if split else ", or GPUs with more memory per GPU than the node's (its "
                  "karpenter.k8s.aws/instance-gpu-memory label)")
        return (
            f"CUDA ran out of GPU memory while allocating {tried}. The message does not say how much this process "
            "holds; run nvidia-smi on the node to see which processes hold the GPU, then reduce the per-GPU "
            f"footprint (smaller micro-batch, activation checkpointing, ZeRO-3 with CPU offload){bigger}."
        )
    mine = view.get("process") or f"{view.get('reserved_total')} (reserved by PyTorch)"
    head = (
        f"GPU {view.get('gpu', '?')} has {view.get('total')} in total and only {view.get('free')} was free when "
        f"{tried} was requested; this process held {mine}, {split['mine_pct']}% of the GPU."
    )
    bigger = oom_bigger_gpus(split)
    if split["holder"] == "others":
        others = f" ({view.get('other_processes')})" if view.get("other_processes") else ""
        return head + (
            f" That leaves ~{split['others_gib']} ({split['others_pct']}%) held by other processes on this GPU"
            f"{others}: the model is not simply too big for this process. Check that ranks do not share one GPU "
            "(nproc_per_node vs the GPUs the pod requested, CUDA_VISIBLE_DEVICES, LOCAL_RANK used for "
            "torch.cuda.set_device) and that no leftover process from a previous attempt still runs. Then lower the "
            f"peak: ZeRO-3 with CPU offload of parameters and optimizer, a smaller micro-batch, activation "
            f"checkpointing{bigger}."
        )
    return head + (
        " This process holds most of the memory: the model, optimizer state and activations do not fit this GPU. "
        "Use ZeRO-3 with CPU offload of parameters and optimizer, a smaller micro-batch with gradient accumulation, "
        "activation checkpointing, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation"
        f"{bigger}."
    )


def oom_bigger_gpus(advice: Mapping) -> str:
    """", or GPUs with more memory each: ..." for the GPU the job has; never that GPU again, and nothing
    at the top of the range, where sharding and offload are the only way."""
    steps = list(advice.get("bigger") or ())
    here = f" than this {advice['gpu_label']}" if advice.get("gpu_label") else ""
    if not steps:
        return (f"; no AWS GPU has more memory{here}, so shard the model (ZeRO-3 / FSDP across more GPUs, tensor "
                "or pipeline parallelism) or offload")
    return f", or GPUs with more memory each{here}: {' or '.join(steps)}"


def memory_pressure(view: View) -> str:
    return (
        f"DeepSpeed ZeRO-3 flushed the PyTorch allocator cache {view.get('flushes', 'several')} time(s) in one step"
        f"{_times(view)}: GPU memory is nearly full and fragmentation forces it to free and re-allocate, which slows "
        "training and is one step away from an OOM. Lower stage3_max_live_parameters / stage3_prefetch_bucket_size, "
        "the micro-batch, enable activation checkpointing or CPU offload, or set "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. A rare flush is harmless; one every step is not."
    )


def rendezvous_failed(view: View) -> str:
    target = f" {view.get('host')}:{view.get('port')}" if view.get("host") else ""
    problem = f" ({view.get('problem') or view.get('error')})" if (view.get("problem") or view.get("error")) else ""
    text = (
        f"Workers could not reach the rendezvous master{target}{problem}. In a PyTorchJob MASTER_ADDR is the master "
        "pod's Service (<job>-master-0); its DNS name resolves once the Service exists, and connections are refused "
        "until the master process listens. Refusals while the master starts are normal for a while (the client "
        "retries); if they persist the master pod is Pending (often waiting for a GPU node), crashed, or "
        "MASTER_ADDR / MASTER_PORT are wrong."
    )
    if view.confidence == "low":
        text += (
            " Evidence is thin (a retry warning or a bare resolver error); collect next: the master pod's status "
            "and log, kubectl get svc,endpoints for the job, and the worker's MASTER_ADDR / MASTER_PORT."
        )
    return text


def terminated(view: View) -> str:
    if view.get("reason") == "OOMKilled":
        return (
            "The kernel OOM killer ended the container: it exceeded its memory limit (host RAM, not GPU memory). "
            "Data loader workers, pinned memory and CPU offload (ZeRO-Offload) all use host memory: raise the "
            "container's memory request/limit or reduce them."
        )
    signal = view.get("signal", "a signal")
    text = (
        f"The training process was killed from outside ({signal}{', exit ' + view.get('exit_code') if view.get('exit_code') else ''})"
        f"{_times(view)}. SIGTERM comes from the kubelet when the pod is deleted or evicted: Karpenter disruption, a "
        "node drain or NotReady, a spot interruption, preemption, or the operator restarting the job; SIGKILL / 137 "
        "from the kernel OOM killer or the end of the grace period. It is rarely the root cause: find who deleted "
        "the pod (events on the pod and its node: Killing, Evicted, DisruptionTerminating, NodeNotReady)."
    )
    if "karpenter.disruption" in view.codes:
        text += " Karpenter disrupted a node in the same text: that is the likely sender."
    return text


def not_ready(view: View) -> str:
    if view.get("problem") == "UnauthorizedOperation":
        return (
            f"The VPC CNI (aws-node / ipamd) is not authorized to call EC2{' ' + view.get('operation') if view.get('operation') else ''}, "
            "so it cannot assign pod IPs and the node stays NotReady ('cni plugin not initialized'). Attach "
            "AmazonEKS_CNI_Policy to the node role (or the aws-node IRSA / Pod Identity role)."
        )
    condition = view.get("condition", "")
    if condition:
        return (
            f"Node {view.get('node', '')} reported {condition}{_times(view)}. While a node is NotReady or under "
            "pressure its pods are evicted or lose their network; training ranks on it vanish and the others fail. "
            "Check kubectl describe node (conditions, kubelet messages), the aws-node and kube-proxy pods, and disk "
            "usage (large images fill the root volume)."
        )
    return (
        "The container network on a node is not ready (CNI not initialised). For a minute after start-up this is "
        "normal; if it persists, the aws-node pod on the node is failing (IAM permissions, IP exhaustion)."
    )


def slow_pull(view: View) -> str:
    size = f" ({view.get('image_size_gb')} GB)" if view.get("image_size_gb") else ""
    waited = (
        f", {view.get('including_waiting')} including waiting for other pulls"
        if view.get("including_waiting") and view.get("including_waiting") != view.get("pulled_in")
        else ""
    )
    return (
        f"Pulling {view.get('image', 'the image')}{size} took {view.get('pulled_in', 'minutes')}{waited}: start-up "
        "time is dominated by the image, and every new GPU node pays it again. Give the EC2NodeClass a faster root "
        "volume (gp3 with more throughput and IOPS), pre-pull or cache the image (a custom AMI or a Bottlerocket "
        "data-volume snapshot), use SOCI lazy loading, or slim the image."
    )


def provisioning(view: View) -> str:
    claim = view.get("nodeclaim") or view.get("node")
    what = f"NodeClaim {claim}" if claim else "a NodeClaim"
    instance = f" ({view.get('instance_type')}{' in ' + view.get('zone') if view.get('zone') else ''})" if view.get("instance_type") else ""
    return (
        f"Karpenter is bringing up {what}{instance} for the pod: a node is on its way, nothing is wrong yet. "
        "Karpenter gives a launch 5 minutes and a registration 15 minutes; after that it deletes the NodeClaim and "
        "tries again (and sets NodeRegistrationHealthy=False on the NodePool). Scheduler messages about existing "
        "nodes while it comes up are expected."
    )


def gated(view: View) -> str:
    hold = view.get("hold")
    if hold == "gates":
        gate = f" ({view.get('gate')})" if view.get("gate") else ""
        text = (
            f"The pod carries schedulingGates{gate}: kube-scheduler does not look at it until the controller that "
            "added each gate removes it, so no node, taint or NodePool matters yet."
        )
        if not view.get("gate") or "kueue" in view.get("gate"):
            text += " Kueue gates pods this way (kueue.x-k8s.io/admission) until their workload is admitted."
        return text
    if hold == "suspended":
        return (
            f"{view.get('kind', 'The job')} {view.get('job', '')} is suspended (runPolicy.suspend / spec.suspend): its "
            "pods are not created or are deleted until it is resumed. With Kueue this is how a job waits for "
            "admission; otherwise someone suspended it on purpose."
        ).replace("  ", " ")
    quota = (
        f" It lacks quota for {view.get('resource')} in flavor {view.get('flavor', '?')}." if view.get("resource") else ""
    )
    return (
        f"Kueue has not admitted the job's workload, so the job stays suspended and its pods wait.{quota} Admission "
        "needs unused quota in the ClusterQueue (or borrowable quota in its cohort) for every pod set; check "
        "kubectl get workloads -n NAMESPACE (QuotaReserved / Admitted conditions) and kubectl describe "
        "clusterqueue for nominalQuota and usage."
    )


WRITERS: dict[str, Callable[[View], str]] = {
    "scheduling.node_selector_mismatch": node_selector_mismatch,
    "scheduling.untolerated_taint": untolerated_taint,
    "scheduling.node_lifecycle_taint": node_lifecycle_taint,
    "scheduling.insufficient_gpu": insufficient_gpu,
    "scheduling.pod_affinity_unsatisfiable": pod_affinity_unsatisfiable,
    "scheduling.volume_zone_conflict": volume_zone_conflict,
    "scheduling.topology_spread": topology_spread,
    "karpenter.no_instance_type": no_instance_type,
    "karpenter.nodepool_limit_reached": nodepool_limit_reached,
    "karpenter.insufficient_capacity": insufficient_capacity,
    "karpenter.offering_unavailable_in_zone": offering_unavailable_in_zone,
    "karpenter.quota_exceeded": quota_exceeded,
    "karpenter.subnet_problem": subnet_problem,
    "karpenter.node_registration_failed": node_registration_failed,
    "karpenter.resource_not_registered": resource_not_registered,
    "karpenter.disruption": disruption,
    "gpu.unhealthy_device": unhealthy_device,
    "gpu.device_plugin_missing": device_plugin_missing,
    "efa.resource_unavailable": efa_resource_unavailable,
    "efa.network_unreachable": network_unreachable,
    "nccl.peer_unresponsive": peer_unresponsive,
    "nccl.timeout": nccl_timeout,
    "training.cuda_oom": cuda_oom,
    "training.memory_pressure": memory_pressure,
    "training.rendezvous_failed": rendezvous_failed,
    "training.terminated": terminated,
    "node.not_ready": not_ready,
    "image.slow_pull": slow_pull,
    "karpenter.provisioning": provisioning,
    "scheduling.gated": gated,
}


# What to collect when a finding rests on thin evidence (confidence low).
NEXT_STEPS: dict[str, str] = {
    "scheduling.node_selector_mismatch": "the pod's nodeSelector / affinity (kubectl get pod -o yaml), the NodePools' requirements and template labels, and Karpenter's own FailedScheduling event for the pod",
    "scheduling.untolerated_taint": "the taints of the candidate nodes (kubectl get nodes -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints) and the pod's tolerations",
    "scheduling.node_lifecycle_taint": "the NodeClaims' age and conditions (kubectl get nodeclaims -o wide) a few minutes later",
    "scheduling.insufficient_gpu": "kubectl describe node for the GPU nodes (capacity vs allocatable, allocated resources) and Karpenter's events for the pod",
    "scheduling.pod_affinity_unsatisfiable": "the pod's affinity section and the labels of the pods it must co-locate with",
    "scheduling.volume_zone_conflict": "the PersistentVolume's nodeAffinity zone and the zones the NodePool and EC2NodeClass subnets allow",
    "scheduling.topology_spread": "the pod's topologySpreadConstraints and the zones Karpenter can launch GPU nodes in",
    "karpenter.no_instance_type": "the pod's resource requests and the NodePool requirements (kubectl get nodepool -o yaml)",
    "karpenter.nodepool_limit_reached": "the NodePool's spec.limits and status.resources",
    "karpenter.insufficient_capacity": "Karpenter's launch errors over the last minutes for other offerings",
    "karpenter.offering_unavailable_in_zone": "aws ec2 describe-instance-type-offerings for the instance type",
    "karpenter.quota_exceeded": "the EC2 Service Quotas for the instance family",
    "karpenter.subnet_problem": "the EC2NodeClass status.subnets and the subnets' free addresses",
    "karpenter.node_registration_failed": "the NodeClaim's conditions and age, and the instance's console output",
    "karpenter.resource_not_registered": "the device plugin DaemonSet's pods on the node and their logs",
    "karpenter.disruption": "Karpenter's disruption logs and the nodes the job's pods ran on",
    "gpu.unhealthy_device": "dmesg on the node (Xid errors) and the device plugin's log",
    "gpu.xid_error": "dmesg on the node and nvidia-smi -q for the GPU",
    "gpu.device_plugin_missing": "the device plugin's log and the node's capacity",
    "efa.resource_unavailable": "the EFA device plugin's pods and the instance type's EFA support",
    "efa.network_unreachable": "the node security group rules and the nodes' subnets",
    "nccl.peer_unresponsive": "the logs and events of the job's other pods around the same time",
    "nccl.timeout": "the logs of all ranks around the timeout and the events of the job's pods and nodes",
    "training.cuda_oom": "nvidia-smi on the node while the job runs",
    "training.memory_pressure": "how often the flushes repeat (every step or rarely)",
    "training.rendezvous_failed": "the master pod's status and log, and the worker's MASTER_ADDR / MASTER_PORT",
    "training.terminated": "the pod's and node's events around the termination",
    "node.not_ready": "kubectl describe node (conditions) and the aws-node pod's log on the node",
    "image.slow_pull": "the kubelet events of a few pods on fresh nodes",
    "karpenter.provisioning": "the NodeClaim's age and Launched / Registered / Initialized conditions (kubectl get nodeclaim -o wide)",
    "scheduling.gated": "the pod's spec.schedulingGates, the job's suspend flag and its Kueue Workload conditions",
}


WRITERS.update(training_writers)
NEXT_STEPS.update(training_next_steps)
for _module in (details_gpu, details_cluster, details_failures, details_volumes, details_history):
    WRITERS.update(_module.WRITERS)
    NEXT_STEPS.update(_module.NEXT_STEPS)


def describe(view: View) -> str:
    text = WRITERS[view.code](view)
    if view.confidence == "low" and "collect next" not in text:
        text += f" Evidence is thin (low confidence); collect next: {NEXT_STEPS[view.code]}."
    return text
