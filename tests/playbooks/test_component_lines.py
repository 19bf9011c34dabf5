"""The component reader (playbooks/failures/components.py): each log format of the stack, from its upstream
definition, read by its structure; the writer takes part in the match; routine lines stay quiet."""
from __future__ import annotations

import pytest

from playbooks.explain import explain_text
from playbooks.signatures import scan_line


def first(text: str) -> tuple[str, str]:
    raised = [f for f in explain_text(text).findings if f.severity != "info"]
    return (raised[0].code, raised[0].severity) if raised else ("", "")


@pytest.mark.parametrize(
    ("line", "code"),
    [
        # klog header, E and F (kubernetes/klog formatHeader)
        ('E0912 22:47:28.113402    1849 reflector.go:147] k8s.io/client-go/informers/factory.go:159: Failed to watch '
         '*v1.Pod: failed to list *v1.Pod: Unauthorized', "cluster.unrecognised"),
        # zapr JSON (Karpenter): its controller role, never the VPC CNI
        ('{"level":"ERROR","time":"2024-06-11T09:12:44.101Z","logger":"controller","message":"failed listing instance '
         'types for default","controller":"nodeclass","error":"UnauthorizedOperation: You are not authorized to perform '
         'this operation. User: arn:aws:sts::123456789012:assumed-role/KarpenterRole/1718 is not authorized to perform: '
         'ec2:DescribeInstanceTypes"}', "cluster.unrecognised"),
        # zap console (tabs), and pasted with spaces
        ("2024-02-01T10:00:00.000Z\tERROR\tcontroller.nodeclass\tfailed resolving amis\t{\"commit\": \"a4f1b2c\"}",
         "cluster.unrecognised"),
        ("2023-10-15T03:59:28Z    ERROR   Reconciler error        {\"controller\": \"jobset\", \"error\": \"creating "
         "Job: Job.batch \\\"x\\\" is invalid\"}", "cluster.unrecognised"),
        # logfmt (containerd, logrus)
        ('time="2026-04-28T15:08:10.865224875+08:00" level=error msg="Failed to pipe stdout of container" error="reading '
         'from a closed fifo"', "cluster.unrecognised"),
        # Go runtime
        ("panic: runtime error: invalid memory address or nil pointer dereference", "cluster.unrecognised"),
        # Go's standard logger with a failure opening (device plugins), classed by the GPU stack's vocabulary
        ("2017/11/24 09:06:29 Could not register device plugin: context deadline exceeded", "gpu.device_plugin_missing"),
        ("2026/02/03 15:23:32 Error to get IB device: %v. No valid EFA devices found", "cluster.unrecognised"),
        # Python logging's default format and a bracketed level
        ("ERROR:root:could not reach the metadata service", "cluster.unrecognised"),
        ("2018/09/06 13:02:45 [FATAL] plugin/loop: Seen \"HINFO IN 2050421060481615995.5620656063561519376.\" more "
         "than twice, loop detected", "cluster.unrecognised"),
        # kernel ring buffer: printk and dmesg -T stamps, the OOM killer
        ("[ 1234.567890] mlx5_core 0000:3b:00.0: mlx5_cmd_check:810: command failed, status bad parameter(0x3)",
         "cluster.unrecognised"),
        ("[Tue Mar 12 10:00:02 2024] efa 0000:10:1c.0: Failed to create cq[0] [-12]", "cluster.unrecognised"),
        ("Oct 21 21:08:58 node-2 kernel: [75254.207495] supervisord invoked oom-killer: gfp_mask=0xd0, order=0, "
         "oom_score_adj=0", "training.terminated"),
        # kubectl's event rows, whatever the reason
        ("5m          Warning   AttachQuotaReached   pod/trainer-0     attachment slots are used up",
         "cluster.unrecognised"),
        ("  Warning  AttachQuotaReached  3m (x5 over 10m)  kubelet  attachment slots are used up", "cluster.unrecognised"),
        # the API server's refusals
        ('Error from server (Forbidden): pods "x" is forbidden: exceeded quota: gpu-quota, requested: '
         'requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8',
         "cluster.unrecognised"),
        ('Internal error occurred: failed calling webhook "mjob.kb.io": failed to call webhook: Post '
         '"https://kueue-webhook-service.kueue-system.svc:443/mutate-batch-v1-job?timeout=10s": connection refused',
         "cluster.unrecognised"),
        # AWS: an IAM denial, an SDK error code
        ("AccessDenied: User: arn:aws:sts::111122223333:assumed-role/KarpenterControllerRole/1704 is not authorized "
         "to perform: iam:PassRole on resource: arn:aws:iam::111122223333:role/KarpenterNodeRole", "cluster.unrecognised"),
        ("InvalidParameterException: [t4g.medium] is not a valid instance type", "cluster.unrecognised"),
        # a CLI's own failure line (cobra, dnf)
        ("Error: failed to install Karpenter: failed to install chart: timed out waiting for the condition",
         "cluster.unrecognised"),
        # launchers
        ("srun: error: node-12: task 3: Exited with exit code 1", "training.failed"),
        ("mpirun noticed that process rank 3 with PID 0 on node gpu-7 exited on signal 9 (Killed).", "training.terminated"),
        ("[2024-03-11 10:12:01,532] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py'] "
         "exits with return code = 1", "training.failed"),
        ("(raylet) A worker died or was killed while executing a task by an unexpected system error. Worker exit type: "
         "NODE_OUT_OF_MEMORY Worker exit detail: Task was killed due to the node running low on memory.",
         "training.terminated"),
        ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", "training.terminated"),
        ("/usr/local/bin/train.sh: line 18:    36 Killed                  python3 train.py --epochs 3",
         "training.terminated"),
        # a status reason the vocabulary knows
        ("      reason: BackoffLimitExceeded", "training.failed"),
    ],
)
def test_each_format_is_read_by_its_structure(line: str, code: str) -> None:
    found, severity = first(line)
    assert found == code, explain_text(line).findings
    assert severity in ("warning", "error", "critical")


@pytest.mark.parametrize(
    "line",
    [
        'I0101 12:00:00.155069       1 server.go:146] Registered device plugin for \'nvidia.com/gpu\' with Kubelet',
        '{"level":"INFO","time":"2026-01-01T12:00:02.400Z","logger":"controller","message":"launched nodeclaim"}',
        'time="2026-03-10T08:10:00Z" level=info msg="GPU resources are not yet discovered by the node, retry: 3"',
        "2017/11/24 09:06:24 Starting to serve on /var/lib/kubelet/device-plugins/nvidia.sock",
        "  Normal   Pulled     2m    kubelet  Container image \"repo/x:1\" already present on machine",
        '  Warning  FailedMount  3m2s  kubelet  MountVolume.SetUp failed for volume "kube-api-access-pj2nv" : object '
        '"default"/"kube-root-ca.crt" not registered',
        '{"level":"ERROR","time":"2024-10-09T08:50:17.156Z","logger":"webhook","message":"http: TLS handshake error '
        'from 10.53.153.172:60594: EOF\\n"}',
        "  Normal  DisruptionBlocked  1m  karpenter  Cannot disrupt Node: pdb \"train\" prevents pod evictions",
        "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='pypi.org', port=443): Max retries",
    ],
)
def test_routine_lines_stay_quiet(line: str) -> None:
    assert first(line) == ("", ""), explain_text(line).findings


def test_the_writer_decides_whose_fault_an_unauthorized_operation_is() -> None:
    ipamd = ('{"level":"error","ts":"2026-01-01T00:00:00.000Z","caller":"ipamd/ipamd.go:512","msg":"Failed to call '
             'ec2:CreateNetworkInterface: UnauthorizedOperation: You are not authorized to perform this operation."}')
    karpenter = ('{"level":"ERROR","logger":"controller","controller":"nodeclaim.lifecycle","message":"creating '
                 'instance","error":"UnauthorizedOperation: You are not authorized to perform this operation."}')
    assert [s.code for s in scan_line(ipamd, source="x")] == ["node.not_ready"]
    assert "node.not_ready" not in [s.code for s in scan_line(karpenter, source="x")]
