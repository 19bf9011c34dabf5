"""Nodes and EC2 launch text: kubelet registration and status, VPC CNI IP exhaustion, EC2 launch errors in
the spellings of the EC2 API, the AWS CLI, Karpenter, Auto Scaling and EKS managed node groups.

Each line cites where it comes from: an upstream format string (kubernetes/kubernetes
pkg/kubelet/kubelet_node_status.go, aws/amazon-vpc-cni-k8s, aws/karpenter-provider-aws, botocore's EKS
model) or a public report quoted verbatim.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from playbooks.explain import explain_text
from playbooks.signatures import scan_line

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"


def found(line: str) -> list[tuple[str, str, str]]:
    return sorted((s.code, s.severity, s.confidence) for s in scan_line(line, source="test") if s.severity != "info")


def fields(line: str, code: str) -> dict[str, str]:
    merged: dict[str, str] = {}
    for signal in scan_line(line, source="test"):
        if signal.code == code:
            merged.update(signal.fields)
    return merged


CASES = [
    # --- kubelet (kubelet_node_status.go) ---
    # verbatim from a public Rancher report of a node losing its API server
    ('E0429 12:22:18.192118  155021 kubelet_node_status.go:527] "Unable to update node status" err="update node status exceeds retry count"',
     [("node.not_ready", "warning", "medium")], {"error": "update node status exceeds retry count"}),
    # registerWithAPIServer's klog line with a dial error (endpoint not reachable from the node)
    ('E0101 12:01:07.300000 2201 kubelet_node_status.go:99] "Unable to register node with API server" err="Post \\"https://0123ABCD.gr7.us-east-1.eks.amazonaws.com/api/v1/nodes\\": dial tcp 10.0.12.34:443: i/o timeout" node="ip-10-0-5-89.ec2.internal"',
     [("karpenter.node_registration_failed", "error", "medium")], {}),
    # --- VPC CNI (amazon-vpc-cni-k8s cmd/routed-eni-cni-plugin "add cmd: failed to assign an IP address to
    # container"; ipamd datastore "DataStore has no available IP/Prefix addresses"), verbatim from public reports
    ('  Warning  FailedCreatePodSandBox  23m  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "14bffa7734d01abd808dead23744386135518961ab240ba48b88a9e269398126": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container',
     [("karpenter.subnet_problem", "error", "low")], {"problem": "no pod IP address"}),
    ('{"level":"error","ts":"2024-10-30T21:32:54.531Z","caller":"datastore/data_store.go:607","msg":"DataStore has no available IP/Prefix addresses"}',
     [("karpenter.subnet_problem", "error", "low")], {}),
    # --- EC2 launch errors ---
    # the EC2 message Karpenter wraps (the brief's example; EC2 API error "Unsupported")
    ("Unsupported: Your requested instance type (p5.48xlarge) is not supported in your requested Availability Zone (us-east-1e). Please retry your request by not specifying an Availability Zone or choosing us-east-1a, us-east-1b, us-east-1c, us-east-1d, us-east-1f.",
     [("karpenter.offering_unavailable_in_zone", "error", "high")], {"instance_type": "p5.48xlarge", "zone": "us-east-1e"}),
    # Karpenter v1 InsufficientCapacityError event with operatorpkg structured suffix (public EKS p5/EFA walkthrough)
    ("3m7s        Warning   InsufficientCapacityError        nodeclaim/spot-p-d8rwv     NodeClaim spot-p-d8rwv event: creating nodeclaim, creating instance, insufficient capacity, with fleet error(s), UnfulfillableCapacity: Unable to fulfill capacity due to your request configuration. Please adjust your request and try again. (aws-error-code=UnfulfillableCapacity, aws-operation-name=CreateFleet, aws-request-id=49c1...",
     [("karpenter.insufficient_capacity", "error", "high")], {"error_code": "UnfulfillableCapacity", "nodeclaim": "spot-p-d8rwv"}),
    # Karpenter v0.5 log quoted in the AWS Containers blog "Using Amazon EC2 Spot Instances with Karpenter":
    # the spot quota is the cause, UnfulfillableCapacity its consequence
    ('2021-12-03T23:45:29.257Z        ERROR   controller.provisioning Provisioning failed, launching capacity, launching instances, with fleet error(s), UnfulfillableCapacity: Unable to fulfill capacity due to your request configuration. Please adjust your request and try again.; MaxSpotInstanceCountExceeded: Max spot instance count exceeded; launching instances, with fleet error(s), MaxSpotInstanceCountExceeded: Max spot instance count exceeded   {"commit": "6984094", "provisioner": "default"}',
     [("karpenter.insufficient_capacity", "error", "high"), ("karpenter.quota_exceeded", "error", "high")],
     {"error_code": "MaxSpotInstanceCountExceeded"}),
    # AWS CLI spelling of the same EC2 code (public EKS p5 walkthrough, create-capacity-reservation)
    ("An error occurred (InsufficientInstanceCapacity) when calling the CreateCapacityReservation operation (reached max retries: 2): Insufficient capacity.",
     [("karpenter.insufficient_capacity", "error", "high")], {"error_code": "InsufficientInstanceCapacity"}),
    # Auto Scaling activity (AWS Batch / ASG reports): "Could not launch On-Demand Instances. <Code> - <message>"
    ('"Could not launch On-Demand Instances. InsufficientInstanceCapacity - We currently do not have sufficient p3dn.24xlarge capacity in the Availability Zone you requested (ap-southeast-1c). Our system will be working on provisioning additional capacity."',
     [("karpenter.insufficient_capacity", "error", "high")], {"instance_type": "p3dn.24xlarge", "zone": "ap-southeast-1c"}),
    # EC2 InstanceLimitExceeded as Ansible printed it (apache/metron docs) and as an ASG activity prints it
    ('fatal: [localhost]: FAILED! => {"changed": false, "failed": true, "msg": "Instance creation failed => InstanceLimitExceeded: You have requested more instances (11) than your current instance limit of 10 allows for the specified instance type. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit."}',
     [("karpenter.quota_exceeded", "error", "high")], {"error_code": "InstanceLimitExceeded", "instance_limit": "10"}),
    ("Description:DescriptionLaunching a new EC2 instance. Status Reason: You have requested more instances (1) than your current instance limit of 0 allows for the specified instance type. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit. Launching EC2 instance failed.",
     [("karpenter.quota_exceeded", "error", "high")], {"error_code": "InstanceLimitExceeded", "instance_limit": "0"}),
    ("creating instance, insufficient capacity, with fleet error(s), VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 0 allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit.",
     [("karpenter.quota_exceeded", "error", "high")], {"error_code": "VcpuLimitExceeded", "limit": "0"}),
    # Auto Scaling activity with the subnet code (public scale-test write-up)
    ("Could not launch On-Demand Instances. InsufficientFreeAddressesInSubnet - There are not enough free addresses in subnet 'subnet-0a1b2c3d4e5f67890' to satisfy the requested number of instances.",
     [("karpenter.subnet_problem", "error", "high")], {"problem": "InsufficientFreeAddressesInSubnet", "subnet": "subnet-0a1b2c3d4e5f67890"}),
    # --- EKS managed node group health issues (botocore eks NodegroupIssueCode) ---
    ('                    "code": "InsufficientFreeAddresses",', [("karpenter.subnet_problem", "error", "high")],
     {"issue": "InsufficientFreeAddresses"}),
    ('                    "code": "NodeCreationFailure",', [("karpenter.node_registration_failed", "error", "medium")], {}),
    ('                    "code": "Ec2SubnetNotFound",', [("karpenter.subnet_problem", "error", "high")], {}),
    # alone the launch-failure code does not say why (the public KMS example below fails the same way)
    ('                    "code": "AsgInstanceLaunchFailures",', [("karpenter.insufficient_capacity", "warning", "low")],
     {"issue": "AsgInstanceLaunchFailures"}),
    # ... with the EC2 reason in the same line the ec2.* rule names it, once
    ("AsgInstanceLaunchFailures: Could not launch On-Demand Instances. InsufficientInstanceCapacity - We currently do not have sufficient g5.12xlarge capacity in the Availability Zone you requested (us-east-1b).",
     [("karpenter.insufficient_capacity", "error", "high")], {"instance_type": "g5.12xlarge", "zone": "us-east-1b"}),
]


@pytest.mark.parametrize(("line", "expected", "want"), CASES, ids=[f"{c[1][0][0]}-{i}" for i, c in enumerate(CASES)])
def test_node_and_ec2_line(line: str, expected: list[tuple[str, str, str]], want: dict[str, str]) -> None:
    assert found(line) == sorted(expected), [(s.code, s.title) for s in scan_line(line, source="t")]
    got = fields(line, expected[-1][0]) if len(expected) > 1 else fields(line, expected[0][0])
    assert all(got.get(k) == v for k, v in want.items()), got


@pytest.mark.parametrize(
    "line",
    [
        # healthy kubelet start-up (kubelet_node_status.go) and a transient status retry
        'I0101 12:01:07.300000    2201 kubelet_node_status.go:75] "Attempting to register node" node="ip-10-0-5-89.ec2.internal"',
        'I0101 12:01:07.400000    2201 kubelet_node_status.go:78] "Successfully registered node" node="ip-10-0-5-89.ec2.internal"',
        'E0101 12:01:06.200000    2201 kubelet_node_status.go:96] "Error getting node" err="node \\"ip-10-0-5-89.ec2.internal\\" not found"',
        'E0101 12:05:00.000000    2201 kubelet_node_status.go:535] "Error updating node status, will retry" err="error getting node \\"ip-10-0-5-89.ec2.internal\\": Get \\"https://0123ABCD.gr7.us-east-1.eks.amazonaws.com/api/v1/nodes/ip-10-0-5-89.ec2.internal?timeout=10s\\": context deadline exceeded"',
        # a successful Auto Scaling activity, a healthy node group, ipamd debug lines
        "Successful  Launching a new EC2 instance: i-0a1b2c3d4e5f60718",
        '        "health": {"issues": []},',
        '{"level":"debug","ts":"2024-10-30T21:32:54.564Z","caller":"datastore/data_store.go:607","msg":"AssignPodIPv4Address: IP address pool stats: total 0, assigned 0"}',
        # the subnet-level EC2 code is not the node group's issue code read twice
        "There are not enough free addresses in subnet to satisfy the requested number of instances. (InsufficientFreeAddressesInSubnet)",
    ],
)
def test_healthy_or_owned_lines(line: str) -> None:
    codes = [c for c, _, _ in found(line)]
    if "InsufficientFreeAddressesInSubnet" in line:
        assert codes == ["karpenter.subnet_problem"]  # one signal, from ec2.subnet
        assert "issue" not in fields(line, "karpenter.subnet_problem")
    else:
        assert codes == []


def test_degraded_node_group_names_capacity_and_subnet() -> None:
    diagnosis = explain_text((FIXTURES / "ec2_nodegroup_degraded.txt").read_text())
    by_code = {f.code: f for f in diagnosis.findings}
    assert set(by_code) == {"karpenter.insufficient_capacity", "karpenter.subnet_problem"}
    capacity = by_code["karpenter.insufficient_capacity"]
    assert (capacity.severity, capacity.confidence) == ("error", "high")  # the named EC2 code wins over the bare issue code
    assert "p5.48xlarge" in capacity.title and "us-east-1a" in capacity.title


def test_asg_activities_name_quota_and_subnet_not_capacity() -> None:
    diagnosis = explain_text((FIXTURES / "ec2_asg_activities.txt").read_text())
    assert sorted(f.code for f in diagnosis.findings) == ["karpenter.quota_exceeded", "karpenter.subnet_problem"]
    quota = next(f for f in diagnosis.findings if f.code == "karpenter.quota_exceeded")
    assert "InstanceLimitExceeded" in quota.title or "MaxSpotInstanceCountExceeded" in quota.title
    assert len(quota.evidence) == 2


def test_node_status_failure_is_not_described_as_a_cni_problem() -> None:
    line = 'E0429 12:22:18.192118  155021 kubelet_node_status.go:527] "Unable to update node status" err="update node status exceeds retry count"'
    (finding,) = explain_text(line).findings
    assert finding.code == "node.not_ready"
    assert "CNI" not in finding.detail and "status updates failing" in finding.detail


def test_kubelet_unauthorized_registration_stays_high_confidence() -> None:
    line = 'E0101 12:01:07.300000 2201 kubelet_node_status.go:99] "Unable to register node with API server" err="Unauthorized" node="ip-10-0-5-89.ec2.internal"'
    assert found(line) == [("karpenter.node_registration_failed", "error", "high")]
