"""Real-looking lines, one or more per finding code, with the fields each must yield.

Shared by test_signatures (the code is produced) and test_explain (templates render from these fields).
"""
from __future__ import annotations

KARPENTER_JSON_ERROR = (
    '{"level":"ERROR","time":"2026-01-01T12:00:00.000Z","logger":"controller","message":"could not schedule pod",'
    '"commit":"1ad0d78","controller":"provisioner","namespace":"","name":"","reconcileID":"9d3e",'
    '"Pod":{"name":"llama-3-8b-node-0-0","namespace":"default"},'
    '"error":"incompatible with nodepool \\"gpu\\", daemonset overhead={\\"cpu\\":\\"310m\\",\\"memory\\":\\"272Mi\\"}, '
    'no instance type which had enough resources and the required offering met the scheduling requirements"}'
)

# (expected code, line, fields that must be present with these values)
LINES: list[tuple[str, str, dict[str, str]]] = [
    # scheduling.*
    (
        "scheduling.node_selector_mismatch",
        "  Warning  FailedScheduling  11m  default-scheduler  0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
        {"nodes": "4", "total": "4"},
    ),
    (
        "scheduling.node_selector_mismatch",
        'Warning  FailedScheduling  30s  karpenter  Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={"cpu":"180m","memory":"340Mi","pods":"5"}, incompatible requirements, label "eks.amazonaws.com/instance-gpu-name" does not have known values',
        {"label": "eks.amazonaws.com/instance-gpu-name", "nodepool": "gpu"},
    ),
    (
        "scheduling.node_selector_mismatch",
        '2024-02-01T10:00:00.000Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner "default", incompatible requirements, key karpenter.k8s.aws/instance-gpu-name, karpenter.k8s.aws/instance-gpu-name In [h100] not in karpenter.k8s.aws/instance-gpu-name In [a100 a10g]\t{"commit": "a4f1b2c", "pod": "default/train-0"}',
        {"key": "karpenter.k8s.aws/instance-gpu-name", "label": "karpenter.k8s.aws/instance-gpu-name", "nodepool": "default"},
    ),
    (
        "scheduling.untolerated_taint",
        "  Warning  FailedScheduling  2m  default-scheduler  0/3 nodes are available: 3 node(s) had untolerated taint {gpu-workload: true}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        {"key": "gpu-workload", "taint": "gpu-workload=true"},
    ),
    (
        "scheduling.untolerated_taint",
        "0/2 nodes are available: 2 node(s) had taint {nvidia.com/gpu: present}, that the pod didn't tolerate.",
        {"key": "nvidia.com/gpu", "value": "present"},
    ),
    (
        "scheduling.untolerated_taint",
        'Warning  FailedScheduling  20s  karpenter  Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={"cpu":"200m"}, did not tolerate taint (taint=gpu-workload:NoSchedule)',
        {"taint": "gpu-workload:NoSchedule", "key": "gpu-workload", "effect": "NoSchedule", "nodepool": "gpu"},
    ),
    (
        "scheduling.untolerated_taint",
        'Could not schedule pod, incompatible with nodepool "runner-arm", daemonset overhead={}, did not tolerate workload-type=ci-runner:NoSchedule',
        {"taint": "workload-type=ci-runner:NoSchedule", "key": "workload-type", "nodepool": "runner-arm"},
    ),
    (
        "scheduling.node_lifecycle_taint",
        "Warning  Unschedulable  12m (x4 over 12m)  pytorchjob-controller  Error pod pytorch-dist-job-master-0 condition message: 0/3 nodes are available: 1 node(s) had untolerated taint {karpenter.sh/unregistered: }, 2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        {"key": "karpenter.sh/unregistered"},
    ),
    (
        "scheduling.insufficient_gpu",
        "  Warning  FailedScheduling  9m53s (x2 over 9m53s)  default-scheduler  0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
        {"resource": "nvidia.com/gpu", "nodes": "1", "total": "5"},
    ),
    (
        "scheduling.pod_affinity_unsatisfiable",
        "0/4 nodes are available: 2 node(s) didn't match pod affinity rules, 2 node(s) didn't match Pod's node affinity/selector.",
        {"nodes": "2"},
    ),
    (
        "scheduling.pod_affinity_unsatisfiable",
        '{"level":"ERROR","time":"2026-01-01T12:00:00.000Z","logger":"controller","message":"could not schedule pod","controller":"provisioner","Pod":{"name":"t5-worker-1","namespace":"ml"},"error":"unsatisfiable topology constraint for pod affinity, key=kubernetes.io/hostname (counts = map[], podDomains = kubernetes.io/hostname Exists, nodeDomains = kubernetes.io/hostname Exists"}',
        {"key": "kubernetes.io/hostname", "pod": "ml/t5-worker-1"},
    ),
    (
        "scheduling.volume_zone_conflict",
        "0/6 nodes are available: 3 node(s) had volume node affinity conflict, 3 node(s) didn't match Pod's node affinity/selector.",
        {"nodes": "3"},
    ),
    (
        "scheduling.volume_zone_conflict",
        "0/6 nodes are available: 6 node(s) didn't match PersistentVolume's node affinity.",
        {"nodes": "6"},
    ),
    (
        "scheduling.topology_spread",
        "0/6 nodes are available: 6 node(s) didn't match pod topology spread constraints.",
        {"nodes": "6"},
    ),
    (
        "scheduling.gated",
        "  PodScheduled   False  SchedulingGated  Scheduling is blocked due to non-empty scheduling gates",
        {"hold": "gates"},
    ),
    (
        "scheduling.gated",
        "    Message:               couldn't assign flavors to pod set worker: insufficient unused quota for nvidia.com/gpu in flavor p5-reserved, 8 more needed",
        {"hold": "kueue", "podset": "worker", "resource": "nvidia.com/gpu", "flavor": "p5-reserved"},
    ),
    (
        "scheduling.gated",
        '{"type":"Suspended","status":"True","reason":"PyTorchJobSuspended","message":"PyTorchJob default/llama-3-8b is suspended.","lastTransitionTime":"2026-01-01T12:00:00Z"}',
        {"hold": "suspended", "kind": "PyTorchJob", "job": "default/llama-3-8b"},
    ),
    # karpenter.*
    (
        "karpenter.provisioning",
        "  Normal   Nominated  11m  karpenter  Pod should schedule on: nodeclaim/gpu-v278f",
        {"nodeclaim": "gpu-v278f"},
    ),
    (
        "karpenter.provisioning",
        "Launched  Unknown  AwaitingReconciliation  object is awaiting reconciliation",
        {"condition": "Launched", "reason": "AwaitingReconciliation"},
    ),
    ("karpenter.no_instance_type", KARPENTER_JSON_ERROR, {"nodepool": "gpu", "pod": "default/llama-3-8b-node-0-0"}),
    (
        "karpenter.no_instance_type",
        'Warning  FailedScheduling  1m  karpenter  Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={"cpu":"310m"}, no instance type has enough resources, requirements=karpenter.k8s.aws/instance-family In [p4d p5], karpenter.sh/nodepool In [gpu], resources={"cpu":"8310m","nvidia.com/gpu":"16","pods":"8"}',
        {"gpus": "16", "nodepool": "gpu"},
    ),
    (
        "karpenter.nodepool_limit_reached",
        '{"level":"ERROR","time":"2026-01-01T12:00:00.000Z","logger":"controller","message":"could not schedule pod","controller":"provisioner","Pod":{"name":"llama-3-8b-node-0-1","namespace":"default"},"error":"all available instance types exceed limits for nodepool (NodePool=gpu)"}',
        {"nodepool": "gpu"},
    ),
    (
        "karpenter.nodepool_limit_reached",
        'Failed to schedule pod, incompatible with nodepool "gpu", node limits have been exhausted for nodepool "gpu"',
        {"nodepool": "gpu"},
    ),
    (
        "karpenter.nodepool_limit_reached",
        '2023-03-01T10:00:00.000Z\tERROR\tcontroller.provisioner\tlaunching machine, cpu resource usage of 128 exceeds limit of 64 for provisioner "default"',
        {"resource": "cpu", "nodepool": "default"},
    ),
    (
        "karpenter.nodepool_limit_reached",
        "Failed to schedule pod, node limits have been exhausted for nodepool (NodePool=gpu)",
        {"resource": "nodes", "nodepool": "gpu"},
    ),
    (
        "karpenter.node_registration_failed",
        'Initialized  Unknown  StartupTaintsExist  StartupTaint "nvidia.com/gpu-driver-not-ready:NoSchedule" still exists',
        {"reason": "StartupTaintsExist", "taint": "nvidia.com/gpu-driver-not-ready:NoSchedule"},
    ),
    (
        "karpenter.offering_unavailable_in_zone",
        'Failed to schedule pod, no instance type has the required offering, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [spot-gpu], topology.kubernetes.io/zone In [us-west-2a], resources={"nvidia.com/gpu":"8"}',
        {"nodepool": "spot-gpu", "capacity_type": "spot", "zones": "us-west-2a"},
    ),
    (
        "karpenter.insufficient_capacity",
        "  Warning  InsufficientCapacityError  40s  karpenter  NodeClaim gpu-x8k2p event: creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-2a). Our system will be working on provisioning additional capacity.",
        {"instance_type": "p5.48xlarge", "zone": "us-east-2a", "error_code": "InsufficientInstanceCapacity"},
    ),
    (
        "karpenter.offering_unavailable_in_zone",
        '{"level":"ERROR","time":"2026-01-01T12:00:00.000Z","logger":"controller","message":"failed launching nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"gpu-4kq2z"},"error":"creating instance, insufficient capacity, with fleet error(s), Unsupported: Your requested instance type (p4d.24xlarge) is not supported in your requested Availability Zone (us-west-2d). Please retry your request by not specifying an Availability Zone or choosing us-west-2a, us-west-2b, us-west-2c."}',
        {"instance_type": "p4d.24xlarge", "zone": "us-west-2d", "nodeclaim": "gpu-4kq2z"},
    ),
    (
        "karpenter.offering_unavailable_in_zone",
        'Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={"cpu":"200m"}, no instance type has the required offering, requirements=topology.kubernetes.io/zone In [ap-northeast-2d]',
        {"nodepool": "gpu"},
    ),
    (
        "karpenter.quota_exceeded",
        "NodeClaim gpu-7v9xk event: creating instance, insufficient capacity, with fleet error(s), VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 0 allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit.",
        {"error_code": "VcpuLimitExceeded", "limit": "0"},
    ),
    (
        "karpenter.quota_exceeded",
        "creating instance, insufficient capacity, with fleet error(s), MaxSpotInstanceCountExceeded: Max spot instance count exceeded",
        {"error_code": "MaxSpotInstanceCountExceeded"},
    ),
    (
        "karpenter.subnet_problem",
        '{"level":"ERROR","time":"2026-01-01T12:00:00.000Z","logger":"controller","message":"failed launching nodeclaim","error":"creating instance, with fleet error(s), InsufficientFreeAddressesInSubnet: There are not enough free addresses in subnet \'subnet-0a1b2c3d4e5f67890\' to satisfy the requested number of instances."}',
        {"subnet": "subnet-0a1b2c3d4e5f67890", "problem": "InsufficientFreeAddressesInSubnet"},
    ),
    (
        "karpenter.subnet_problem",
        '{"level":"ERROR","time":"2026-01-01T12:00:00.000Z","logger":"controller","message":"failed launching nodeclaim","error":"no subnets matched selector [{map[karpenter.sh/discovery:training-on-eks] }]"}',
        {"problem": "no subnets matched selector"},
    ),
    (
        "karpenter.node_registration_failed",
        "    Message:               Node not registered with cluster",
        {},
    ),
    (
        "karpenter.node_registration_failed",
        'E0101 12:01:07.300000 2201 kubelet_node_status.go:99] "Unable to register node with API server" err="Unauthorized" node="ip-10-0-5-89.ec2.internal"',
        {"error": "Unauthorized"},
    ),
    (
        "karpenter.resource_not_registered",
        '    Message:               Resource "vpc.amazonaws.com/efa" was requested but not registered',
        {"resource": "vpc.amazonaws.com/efa"},
    ),
    (
        "karpenter.resource_not_registered",
        "  Warning  OutOfnvidia.com/gpu  2m  kubelet  Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0",
        {"resource": "nvidia.com/gpu", "capacity": "0"},
    ),
    (
        "karpenter.disruption",
        "  Normal   DisruptionTerminating  2m  karpenter  Disrupting Node: Underutilized",
        {"reason": "Underutilized"},
    ),
    (
        "karpenter.disruption",
        '{"level":"INFO","time":"2026-07-19T17:26:30.642Z","logger":"controller","message":"disrupting node(s)","controller":"disruption","command":"Underutilized/df119f30: delete: nodepools=[gpu]","decision":"delete","disrupted-node-count":1,"replacement-node-count":0,"pod-count":3}',
        {"reason": "Underutilized"},
    ),
    (
        "karpenter.disruption",
        "2023-05-01T10:00:00.000Z\tINFO\tcontroller.deprovisioning\tdeprovisioning via consolidation delete, terminating 1 machines ip-10-0-5-89.ec2.internal/p4d.24xlarge/on-demand",
        {"reason": "Consolidation delete"},
    ),
    # karpenter.interruption: aws/karpenter-provider-aws pkg/controllers/interruption events/events.go and utils.go
    (
        "karpenter.interruption",
        "  Warning  SpotInterrupted  2m  karpenter  Spot interruption warning was triggered",
        {"interruption": "SpotInterrupted"},
    ),
    (
        "karpenter.interruption",
        "  Warning  InstanceStopping  1m  karpenter  Instance is stopping",
        {"interruption": "InstanceStopping"},
    ),
    (
        "karpenter.interruption",
        "  Warning  InstanceUnhealthy  4m  karpenter  An unhealthy warning was triggered for the instance",
        {"interruption": "InstanceUnhealthy"},
    ),
    (
        "karpenter.interruption",
        '{"level":"INFO","time":"2026-11-25T23:36:02.118Z","logger":"controller","message":"initiating delete from interruption message","commit":"b1a7f62","controller":"interruption","queue":"sft-karpenter","messageKind":"scheduled_change","NodeClaim":{"name":"g6e-spot-8hq2w"},"action":"CordonAndDrain","Node":{"name":"ip-10-42-33-58.eu-central-1.compute.internal"}}',
        {"interruption": "ScheduledChange", "nodeclaim": "g6e-spot-8hq2w", "node": "ip-10-42-33-58.eu-central-1.compute.internal"},
    ),
    # forced termination and expiry: kubernetes-sigs/karpenter terminator/events/events.go, expiration/controller.go
    (
        "karpenter.disruption",
        "  Normal   Evicted  40s  karpenter  Evicted pod: Drifted",
        {"reason": "Drifted"},
    ),
    (
        "karpenter.disruption",
        "  Normal   Disrupted  7m  karpenter  Deleting the pod to accommodate the terminationTime 2026-11-25 23:44:10 +0000 UTC of the node. The pod was granted 30 seconds of grace-period of its 30 terminationGracePeriodSeconds. This bypasses the PDB of the pod and the do-not-disrupt annotation.",
        {"reason": "TerminationGracePeriod"},
    ),
    (
        "karpenter.disruption",
        '{"level":"DEBUG","time":"2026-11-25T21:44:10.002Z","logger":"controller","message":"deleting expired nodeclaim","commit":"3c6ad2c","controller":"nodeclaim.expiration","NodeClaim":{"name":"p4d-pretrain-q7l4s"},"Node":{"name":"ip-10-8-91-140.ap-southeast-2.compute.internal"}}',
        {"reason": "Expired", "nodeclaim": "p4d-pretrain-q7l4s"},
    ),
    # gpu.*
    (
        "gpu.unhealthy_device",
        "  Warning  UnexpectedAdmissionError  3m2s  kubelet  Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, which is unexpected",
        {"resource": "nvidia.com/gpu"},
    ),
    (
        "gpu.unhealthy_device",
        "I0810 15:36:05.551834       1 health.go:169] XidCriticalError: Xid=79 on Device=GPU-455e672a-1f0c-4d1b-9a7e-0c3b5d2e6f70; marking device as unhealthy.",
        {"xid": "79", "device": "GPU-455e672a-1f0c-4d1b-9a7e-0c3b5d2e6f70"},
    ),
    (
        "gpu.xid_error",
        "[ 5123.456789] NVRM: Xid (PCI:0000:10:1c): 79, pid=2451, GPU has fallen off the bus.",
        {"xid": "79", "pci": "0000:10:1c", "pid": "2451"},
    ),
    (
        "gpu.xid_error",
        "[ 812.1] NVRM: Xid (PCI:0000:a0:1d): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
        {"xid": "48"},
    ),
    (
        "gpu.idle",
        'DCGM_FI_DEV_GPU_UTIL{gpu="3",UUID="GPU-5d3c",device="nvidia3",modelName="NVIDIA A100-SXM4-80GB",Hostname="ip-10-0-14-201",exported_namespace="llm-zero3",exported_pod="llama-3-8b-zero3-0"} 0.5',
        {"gpu": "3", "util": "0.5", "pod": "llama-3-8b-zero3-0", "namespace": "llm-zero3"},
    ),
    (
        "gpu.device_plugin_missing",
        "I1119 17:44:43.345499       1 main.go:381] No devices found. Waiting indefinitely.",
        {"detail": "No devices found"},
    ),
    # efa.*, nccl.*
    (
        "efa.resource_unavailable",
        "0/4 nodes are available: 4 Insufficient vpc.amazonaws.com/efa. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.",
        {"resource": "vpc.amazonaws.com/efa"},
    ),
    (
        "efa.network_unreachable",
        "ip-10-0-5-89:194:710 [0] int cm_req_handle_error_entry(nccl_net_ofi_context_t*, fid_cq*, fi_cq_err_entry*, uint16_t):46 NCCL WARN NET/OFI Request 0x7f2a1c0 completed with error. RC: 113. Error: 15 (Unreachable remote (never received a response) My EFA addr: fi_addr_efa://[fe80::4a2:8ff:fe1f:1c55]:0:1093416171 My host id: i-0a1b2c3d4e5f60718 Peer EFA addr: fi_addr_efa://[fe80::4c9:f1ff:fe3a:2b11]:0:512 Peer host id: N/A). Completed length: 0",
        {"ofi_error": "15", "host_id": "i-0a1b2c3d4e5f60718"},
    ),
    (
        "nccl.peer_unresponsive",
        "[2026-01-01 12:08:32] llama-3-8b-node-0-0:194:710 [0] int cm_req_handle_error_entry(nccl_net_ofi_context_t*, fid_cq*, fi_cq_err_entry*, uint16_t):46 NCCL WARN NET/OFI Request 0x7f456c222f60 completed with error. RC: 103. Error: 4126 (Unresponsive receiver (reachable by EFA device but handshake failed) My EFA addr: fi_addr_efa://[fe80::c55:2eff:fe44:db5]:0:142160333 My host id: i-07792e0f955a9673b Peer EFA addr: fi_addr_efa://[fe80::454:14ff:fedd:d5b3]:0:825957744 Peer host id: N/A). Completed length: 0",
        {"ofi_error": "4126", "host_id": "i-07792e0f955a9673b", "peer_host_id": "N/A"},
    ),
    (
        "nccl.peer_unresponsive",
        "[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        {},
    ),
    (
        "nccl.timeout",
        "[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.",
        {"rank": "0", "op": "BROADCAST", "timeout_ms": "600000", "ran_ms": "600081"},
    ),
    # training.*
    (
        "training.cuda_oom",
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacity of 39.49 GiB of which 119.38 MiB is free. Including non-PyTorch memory, this process has 8.38 GiB memory in use. Of the allocated memory 7.96 GiB is allocated by PyTorch, and 7.73 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        {"tried": "112.00 MiB", "total": "39.49 GiB", "free": "119.38 MiB", "process": "8.38 GiB", "gpu": "0"},
    ),
    (
        "training.cuda_oom",
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated; 4.75 MiB free; 14.71 GiB reserved in total by PyTorch)",
        {"tried": "20.00 MiB", "total": "15.78 GiB", "free": "4.75 MiB", "reserved_total": "14.71 GiB", "allocated": "14.56 GiB"},
    ),
    (
        "training.memory_pressure",
        "[2025-12-31 17:08:24,236] [WARNING] [stage3.py:2236:step] 1 pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is detrimental to performance. if this is happening frequently consider adjusting settings to reduce memory consumption. If you are unable to make the cache flushes go away consider adding get_accelerator().empty_cache() calls in your training loop to ensure that all ranks flush their caches at the same time",
        {"flushes": "1"},
    ),
    (
        "training.rendezvous_failed",
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",
        {"error": "RendezvousConnectionError"},
    ),
    (
        "training.rendezvous_failed",
        "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of (pytorch-dist-job-master-0, 23456). The client socket has failed to connect to pytorch-dist-job-master-0:23456 (errno: -2 - Name or service not known).",
        {"host": "pytorch-dist-job-master-0", "port": "23456", "problem": "Name or service not known"},
    ),
    (
        "training.rendezvous_failed",
        "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/4 clients joined.",
        {"joined": "1", "world": "4"},
    ),
    (
        "training.terminated",
        "E0101 11:10:18.826000 7 site-packages/torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -15) local_rank: 0 (pid: 192) of binary: /usr/local/bin/python",
        {"exit_code": "-15", "signal": "SIGTERM", "local_rank": "0"},
    ),
    (
        "training.terminated",
        "[2026-01-01 12:08:30] Signal 15 (SIGTERM) received by PID 194",
        {"signal": "SIGTERM"},
    ),
    (
        "training.terminated",
        "      Exit Code:    143",
        {"exit_code": "143", "signal": "SIGTERM"},
    ),
    (
        "training.terminated",
        "      Reason:       OOMKilled",
        {"reason": "OOMKilled"},
    ),
    # nccl.invalid_usage, training.code_error, training.shm_exhausted, training.crash_loop
    # (NVIDIA/nccl src/init.cc, src/misc/shmutils.cc; pytorch aten/src/ATen/native/cuda/Indexing.cu,
    # torch/csrc/DataLoader.cpp, aten/src/ATen/MapAllocator.cpp; kubelet kuberuntime_manager.go)
    (
        "nccl.invalid_usage",
        "llama-3-8b-worker-0:105:105 [1] init.cc:1018 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1d000",
        {"rank": "1", "other_rank": "0", "bus_id": "1d000", "problem": "duplicate GPU"},
    ),
    (
        "nccl.invalid_usage",
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.27.5",
        {"nccl_version": "2.27.5"},
    ),
    (
        "training.code_error",
        "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: indexSelectLargeIndex: block: [226,0,0], thread: [96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
        {"kernel": "indexSelectLargeIndex", "assertion": "srcIndex < srcSelectDimSize"},
    ),
    (
        "training.code_error",
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:245: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [7,0,0] Assertion `t >= 0 && t < n_classes` failed.",
        {"assertion": "t >= 0 && t < n_classes"},
    ),
    ("training.code_error", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x4096 and 1024x4096)", {"shapes": "8x4096 and 1024x4096"}),
    (
        "training.shm_exhausted",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
        {},
    ),
    (
        "training.shm_exhausted",
        "ip-10-1-2-3:168:168 [0] misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-UbzKZ9 (size 9637888)",
        {"segment": "/dev/shm/nccl-UbzKZ9", "size": "9637888"},
    ),
    (
        "training.crash_loop",
        "  Warning  BackOff    2m (x14 over 9m)  kubelet  Back-off restarting failed container trainer in pod llama-3-8b-worker-0_ml-train(6c0d9e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6)",
        {"container": "trainer"},
    ),
    # node.*, image.*
    (
        "node.not_ready",
        '{"level":"error","ts":"2026-01-01T00:00:00.000Z","caller":"ipamd/ipamd.go:512","msg":"Failed to increase pool size: failed to create ENI: CreateNetworkInterface: UnauthorizedOperation: You are not authorized to perform this operation."}',
        {"problem": "UnauthorizedOperation", "operation": "CreateNetworkInterface"},
    ),
    (
        "node.not_ready",
        "  Normal   NodeNotReady  2m  node-controller  Node ip-10-0-5-89.ap-northeast-2.compute.internal status is now: NodeNotReady",
        {"condition": "NodeNotReady", "node": "ip-10-0-5-89.ap-northeast-2.compute.internal"},
    ),
    (
        "image.slow_pull",
        '  Normal   Pulled  5m29s  kubelet  Successfully pulled image "public.ecr.aws/deep-learning-containers/pytorch-training:2.8.0-gpu-py312-cu129-ubuntu22.04-ec2-v1.0" in 3m51.333s (3m51.333s including waiting). Image size: 12916508213 bytes.',
        {"pulled_in": "3m51.333s", "image_size": "12916508213", "including_waiting": "3m51.333s"},
    ),
    (
        "image.slow_pull",
        '  Normal   Pulled  1m  kubelet  Successfully pulled image "nvcr.io/nvidia/pytorch:25.01-py3" in 1m2.5s (10m16.2s including waiting). Image size: 9916508213 bytes.',
        {"pulled_in": "1m2.5s", "including_waiting": "10m16.2s"},
    ),
    (
        "image.pull_failed",
        '  Warning  Failed  12s (x3 over 51s)  kubelet  Failed to pull image "123456789012.dkr.ecr.us-west-2.amazonaws.com/llm-train:v42": rpc error: code = NotFound desc = failed to pull and unpack image "123456789012.dkr.ecr.us-west-2.amazonaws.com/llm-train:v42": failed to resolve reference "123456789012.dkr.ecr.us-west-2.amazonaws.com/llm-train:v42": 123456789012.dkr.ecr.us-west-2.amazonaws.com/llm-train:v42: not found',
        {"image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/llm-train:v42", "problem": "not_found", "ecr_region": "us-west-2", "ecr_repository": "llm-train", "tag": "v42"},
    ),
    (
        "container.config_error",
        "  Warning  Failed  8s (x3 over 30s)  kubelet  Error: couldn't find key HF_TOKEN in Secret ml/hf-credentials",
        {"secret": "hf-credentials", "key": "HF_TOKEN", "namespace": "ml", "problem": "missing key"},
    ),
    (
        "storage.disk_full",
        "OSError: [Errno 28] No space left on device: '/checkpoints/llama-8b/step_12000/model-00003-of-00004.safetensors'",
        {"path": "/checkpoints/llama-8b/step_12000/model-00003-of-00004.safetensors", "problem": "no space"},
    ),
    (
        "training.failed",
        "[rank2]: ChatTemplateError: no chat template in tokenizer_config.json",
        {"exc_type": "ChatTemplateError", "rank": "2", "error_class": "unknown"},
    ),
    (
        "cluster.unrecognised",
        'E0912 22:47:28.000000    1849 reflector.go:138] k8s.io/client-go/informers/factory.go:134: Failed to watch *v1.Pod: failed to list *v1.Pod: Unauthorized',
        {"writer": "client-go", "format": "klog"},
    ),
    (
        "cluster.unrecognised",
        "  Warning  AttachQuotaReached  2m  kubelet  the volume plugin refused the request: attachment slots of this instance family are used up",
        {"reason": "AttachQuotaReached", "format": "describe", "writer": "kubelet"},
    ),
    (
        "training.gpu_not_visible",
        "RuntimeError: No CUDA GPUs are available",
        {"exc_type": "RuntimeError"},
    ),
    (
        "training.numerical",
        "RuntimeError: Function 'LogBackward0' returned nan values in its 0th output.",
        {"function": "LogBackward0"},
    ),
    (
        "nccl.network_config",
        "[2026-11-25 23:58:32] vm:964:964 [0] bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found",
        {"host": "vm"},
    ),
    # kubernetes-sigs/aws-ebs-csi-driver#963 / #1449: the CSI provisioner's event on the claim
    (
        "storage.provisioning_failed",
        '  Warning  ProvisioningFailed  2m (x9 over 14m)  ebs.csi.aws.com_ebs-csi-controller-6c8b7f5d9c-x2kqz_0a1b2c3d  failed to provision volume with StorageClass "gp3-encrypted": rpc error: code = Internal desc = Could not create volume "pvc-3f1c9a2e-77d4-4b8e-9a51-2f0c6d1e8b40": could not create volume in EC2: UnauthorizedOperation: You are not authorized to perform this operation.',
        {"storageclass": "gp3-encrypted", "problem": "unauthorized", "volume": "pvc-3f1c9a2e-77d4-4b8e-9a51-2f0c6d1e8b40"},
    ),
    # kubernetes/kubernetes pkg/scheduler/framework/plugins/volumebinding/binder.go, on the pod
    (
        "storage.provisioning_failed",
        '  Warning  FailedScheduling  40s  default-scheduler  running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "llama-ckpt"',
        {"pvc": "llama-ckpt", "problem": "rescheduled"},
    ),
    # pkg/controller/volume/persistentvolume/pv_controller.go syncUnboundClaim
    (
        "storage.provisioning_failed",
        "  Normal  FailedBinding  16s (x42 over 10m)  persistentvolume-controller  no persistent volumes available for this claim and no storage class is set",
        {"problem": "no_storage_class"},
    ),
    # aws/karpenter-provider-aws v1.6+ pkg/controllers/nodeclass/ami.go with pkg/providers/amifamily/ami.go
    (
        "karpenter.nodeclass_not_ready",
        "AMIsReady  False  UnsupportedAlias  AL2 aliases are no longer supported on EKS 1.33+ (see https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions-standard.html#kubernetes-1-33)",
        {"condition": "AMIsReady", "status": "False", "reason": "UnsupportedAlias"},
    ),
    (
        "karpenter.nodeclass_not_ready",
        "SecurityGroupsReady  False  SecurityGroupsNotFound  SecurityGroupSelector did not match any SecurityGroups",
        {"condition": "SecurityGroupsReady", "reason": "SecurityGroupsNotFound"},
    ),
    (
        "karpenter.nodeclass_not_ready",
        "ValidationSucceeded  False  CreateFleetAuthCheckFailed  Controller isn't authorized to call ec2:CreateFleet",
        {"condition": "ValidationSucceeded", "reason": "CreateFleetAuthCheckFailed"},
    ),
]
