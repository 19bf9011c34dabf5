"""Every container state of the target's pods, the claims of its volumes, its NodeClass conditions and every
Warning about it becomes a finding or a quoted gap (analyzers/containers.py, volumes.py, unrecognised.py)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from playbooks.analyzers import containers, signals, unrecognised, volumes
from playbooks.facts import Facts, PodFacts
from playbooks.model import Target
from playbooks.signatures import scan_line

NOW = datetime.now(timezone.utc)
IMAGE = "111122223333.dkr.ecr.us-west-2.amazonaws.com/llm/sft:v7"


def _ago(minutes: float) -> str:
    return (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(name: str = "sft-0", *, state: dict | None = None, last: dict | None = None, node: str | None = "ip-10-0-1-5",
         phase: str = "Pending", restarts: int = 0, reason: str | None = None, message: str | None = None,
         claims: tuple[str, ...] = ()) -> dict:
    status: dict = {"phase": phase}
    if state is not None:
        status["containerStatuses"] = [{"name": "train", "image": IMAGE, "restartCount": restarts, "state": state,
                                        "lastState": last or {}}]
    if reason:
        status.update(reason=reason, message=message)
    spec: dict = {"containers": [{"name": "train", "image": IMAGE}],
                  "volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "ml"}, "spec": spec, "status": status}


def _event(message: str, *, reason: str = "Failed", type_: str = "Warning", component: str = "kubelet",
           path: str | None = "spec.containers{train}", minutes: float = 1) -> dict:
    involved = {"kind": "Pod", "name": "sft-0", "namespace": "ml", **({"fieldPath": path} if path else {})}
    return {"type": type_, "reason": reason, "message": message, "source": {"component": component},
            "involvedObject": involved, "lastTimestamp": _ago(minutes), "count": 3}


def _facts(*pods: PodFacts, target: str = "sft-0") -> Facts:
    return Facts(target=Target("pod", target, "ml"), cluster="test", pods=list(pods))


def test_an_image_that_cannot_be_pulled_on_a_scheduled_pod_is_a_finding():
    forbidden = (f'failed to pull and unpack image "{IMAGE}": failed to resolve reference "{IMAGE}": unexpected status '
                 f"from HEAD request to https://x/v2/llm/sft/manifests/v7: 403 Forbidden")
    pod = PodFacts(_pod(state={"waiting": {"reason": "ImagePullBackOff",
                                           "message": f'Back-off pulling image "{IMAGE}": ErrImagePull: {forbidden}'}}),
                   events=[_event(f'Failed to pull image "{IMAGE}": {forbidden}'), _event("Error: ImagePullBackOff"),
                           _event("Error: ImagePullBackOff", path="spec.containers{sidecar}")])
    [finding] = list(containers.analyze(_facts(pod)))
    assert finding.code == "image.pull_failed" and finding.severity == "error" and finding.confidence == "high"
    assert finding.title.startswith("sft-0 container train: ")
    assert "Amazon ECR refused" in finding.detail
    sources = [e.source for e in finding.evidence]
    assert sources[0] == "pod/ml/sft-0 status.containerStatuses[train].state.waiting"
    assert any("403 Forbidden" in e.text and "Failed" in e.source for e in finding.evidence)
    assert len(finding.evidence) == 3  # the sidecar's event is about another container
    assert "POD=sft-0" in finding.fix.snippet and "--repository-name llm/sft" in finding.fix.snippet


def test_a_missing_secret_key_names_the_secret_and_key():
    said = "couldn't find key HF_TOKEN in Secret ml/huggingface"
    pod = PodFacts(_pod(state={"waiting": {"reason": "CreateContainerConfigError", "message": said}}),
                   events=[_event(f"Error: {said}")])
    [finding] = list(containers.analyze(_facts(pod)))
    assert finding.code == "container.config_error"
    assert "HF_TOKEN" in finding.title and "huggingface" in finding.detail
    assert "kubectl describe secret" in finding.fix.snippet and "huggingface" in finding.fix.snippet


def test_a_peers_waiting_container_is_a_warning_and_the_reasons_of_upstream_are_read():
    target = PodFacts(_pod(state={"running": {"startedAt": _ago(5)}}, phase="Running"))
    peer = PodFacts(_pod("sft-1", state={"waiting": {"reason": "RunContainerError", "message": (
        'failed to create containerd task: OCI runtime create failed: runc create failed: unable to start container '
        'process: exec: "torchrun": executable file not found in $PATH: unknown')}}))
    [finding] = list(containers.analyze(_facts(target, peer)))
    assert finding.code == "container.config_error" and finding.severity == "warning"
    assert finding.title.startswith("sft-1 container train")
    assert "torchrun" in finding.detail


def test_a_container_the_runtime_could_not_start_is_a_config_error():
    term = {"terminated": {"reason": "StartError", "exitCode": 128, "message": (
        'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: '
        'unable to start container process: error during container init: error mounting "/var/lib/kubelet/pods/x/'
        'volume-subpaths/cfg/train/0" to rootfs at "/workspace/config.yaml": not a directory: unknown')}}
    pod = PodFacts(_pod(state={"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}}, last=term,
                        phase="Running", restarts=3))
    [finding] = list(containers.analyze(_facts(pod)))
    assert finding.code == "container.config_error"
    assert any("(exit code 128)" in e.text for e in finding.evidence)


def _floor(facts) -> list:
    return [f for f in unrecognised.floor(facts, []) if f.code == "cluster.unrecognised"]


def test_an_exit_nothing_explains_is_a_finding_and_one_explained_elsewhere_is_not():
    failed = PodFacts(_pod(state={"terminated": {"reason": "Error", "exitCode": 3, "message": "bad config"}}, phase="Failed"))
    facts = _facts(failed)
    assert list(containers.analyze(facts)) == []
    [finding] = [f for f in _floor(facts) if "exit code 3" in f.evidence[0].text]
    assert "bad config" in finding.evidence[0].text and finding.severity == "error" and facts.gaps == []
    oom = PodFacts(_pod(state={"terminated": {"reason": "OOMKilled", "exitCode": 137}}, phase="Failed"))
    facts = _facts(oom)
    list(containers.analyze(facts))
    assert not facts.cache.get("unexplained")  # training.terminated speaks for it
    logged = PodFacts(_pod(state={"terminated": {"reason": "Error", "exitCode": 1}}, phase="Failed"),
                      logs={("train", False): "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."})
    facts = _facts(logged)
    list(containers.analyze(facts))
    assert not facts.cache.get("unexplained")  # the log names the error


def test_a_pod_ended_with_a_message_no_rule_knows_is_a_finding():
    pod = PodFacts(_pod(phase="Failed", reason="DeadlineExceeded",
                        message="Pod was active on the node longer than the specified deadline"))
    facts = _facts(pod)
    list(containers.analyze(facts))
    quoted = [e.text for f in _floor(facts) for e in f.evidence]
    assert any("DeadlineExceeded" in t and "longer than the specified deadline" in t for t in quoted)
    assert facts.gaps == []


def _claim(phase: str = "Pending", minutes: float = 20) -> dict:
    return {"metadata": {"name": "ckpt", "namespace": "ml", "creationTimestamp": _ago(minutes),
                         "annotations": {"volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com"}},
            "spec": {"storageClassName": "gp3-enc"}, "status": {"phase": phase}}


WAITING = ('waiting for a volume to be created, either by external provisioner "ebs.csi.aws.com" or manually created '
           "by system administrator")
UNAUTHORIZED = ('failed to provision volume with StorageClass "gp3-enc": rpc error: code = Internal desc = Could not '
                'create volume "pvc-1f": could not create volume in EC2: UnauthorizedOperation: You are not authorized to '
                "perform this operation.")


def _volume_facts(*events: dict, minutes: float = 20) -> Facts:
    pod = PodFacts(_pod(node=None, claims=("ckpt",)), events=[_event(
        'running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "ckpt"',
        reason="FailedScheduling", component="default-scheduler", path=None)])
    facts = _facts(pod)
    facts.volumes["pvc/ml/ckpt"] = _claim(minutes=minutes)
    facts.volume_events["pvc/ml/ckpt"] = list(events)
    return facts


def test_a_claim_the_csi_driver_may_not_create_names_the_claim_and_its_class():
    facts = _volume_facts(_event(WAITING, reason="ExternalProvisioning", type_="Normal"),
                          _event(UNAUTHORIZED, reason="ProvisioningFailed", component="ebs.csi.aws.com_ebs-csi-controller-x"))
    [finding] = list(volumes.analyze(facts))
    assert finding.code == "storage.provisioning_failed" and finding.severity == "error"
    assert finding.title.startswith("PersistentVolumeClaim ml/ckpt: ") and "UnauthorizedOperation" in finding.title
    assert "ebs-csi-controller-sa" in finding.detail
    assert [e.source.split()[1] for e in finding.evidence] == ["pvc/ml/ckpt", "pod/ml/sft-0", "pvc/ml/ckpt"]
    assert "PVC=ckpt" in finding.fix.snippet and "AmazonEBSCSIDriverPolicy" in finding.fix.snippet


def test_waiting_for_the_provisioner_is_news_only_when_it_lasts():
    young = _volume_facts(_event(WAITING, reason="ExternalProvisioning", type_="Normal"), minutes=2)
    young.pods[0].events.clear()
    assert list(volumes.analyze(young)) == []
    old = _volume_facts(_event(WAITING, reason="ExternalProvisioning", type_="Normal"), minutes=30)
    old.pods[0].events.clear()
    [finding] = list(volumes.analyze(old))
    assert finding.severity == "warning" and "more than 10 minutes" in finding.detail


def test_no_default_storage_class():
    facts = _volume_facts(_event("no persistent volumes available for this claim and no storage class is set",
                                 reason="FailedBinding", type_="Normal", component="persistentvolume-controller"))
    facts.pods[0].events.clear()
    [finding] = list(volumes.analyze(facts))
    assert "no StorageClass" in finding.title and "is-default-class" in finding.fix.snippet


def test_every_warning_about_the_target_its_volumes_and_its_node_is_a_finding():
    pod = PodFacts(_pod(state={"running": {"startedAt": _ago(30)}}, phase="Running"),
                   events=[_event("Readiness probe failed: HTTP probe failed with statuscode: 503", reason="Unhealthy"),
                           _event(f"Error: {UNAUTHORIZED}")])
    facts = _facts(pod)
    facts.volume_events["pvc/ml/ckpt"] = [_event("the claim was resized by an unknown quota policy", reason="QuotaX")]
    facts.node_events["ip-10-0-1-5"] = [_event("kubelet saw something new on the node", reason="Odd", path=None)]
    facts.owner_events = [_event("job controller said something new", reason="Odd", path=None)]
    said = [item.about for item in unrecognised.note(facts)]
    assert said == ["job sft-0", "sft-0", "ml/ckpt", "node ip-10-0-1-5"]
    floor = unrecognised.floor(facts, [])
    assert [f.code for f in floor] == ["cluster.unrecognised"] * 4
    quoted = [e.text for f in floor for e in f.evidence]
    assert "the claim was resized by an unknown quota policy" in quoted and "kubelet saw something new on the node" in quoted
    assert all(f.severity in ("warning", "error") and f.confidence == "low" for f in floor)
    assert facts.gaps == []  # a gap is only for what could not be read


def test_a_failed_pull_before_an_hour_of_running_is_history():
    pod = PodFacts(_pod(state={"running": {"startedAt": _ago(75)}}, phase="Running"),
                   events=[_event(f'Failed to pull image "{IMAGE}": dial tcp 1.2.3.4:443: i/o timeout', minutes=78)])
    found = list(signals.analyze(_facts(pod)))
    assert [f.severity for f in found if f.code == "image.pull_failed"] in ([], ["info"])
    starting = PodFacts(_pod(state={"waiting": {"reason": "ErrImagePull", "message": "dial tcp 1.2.3.4:443: i/o timeout"}}),
                        events=[_event(f'Failed to pull image "{IMAGE}": dial tcp 1.2.3.4:443: i/o timeout')])
    assert [f.severity for f in signals.analyze(_facts(starting)) if f.code == "image.pull_failed"] == ["error"]


def test_nodeclass_conditions_other_than_subnets_are_nodeclass_not_ready():
    def codes(line: str) -> list[str]:
        return [s.code for s in scan_line(line, source="x")]

    assert codes("AMIsReady  False  UnsupportedAlias  AL2 aliases are no longer supported on EKS 1.33+") == [
        "karpenter.nodeclass_not_ready"]
    assert codes("SecurityGroupsReady  False  SecurityGroupsNotFound  SecurityGroupSelector did not match any "
                 "SecurityGroups") == ["karpenter.nodeclass_not_ready"]
    assert codes("ValidationSucceeded  False  RunInstancesAuthCheckFailed  Controller isn't authorized to call "
                 "ec2:RunInstances") == ["karpenter.nodeclass_not_ready"]
    assert codes("NodeClassReady  False  NodeClassNotReady  EC2NodeClass not ready") == ["karpenter.nodeclass_not_ready"]
    assert codes("SubnetsReady  False  SubnetsNotFound  SubnetSelector did not match any Subnets") == [
        "karpenter.subnet_problem"]
    # a repetition of the others, and a NodePool's own validation, are not the NodeClass's cause
    assert codes("ValidationSucceeded  False  DependenciesNotReady  Awaiting AMI, Instance Profile, Security Group, "
                 "and Subnet resolution") == []
    assert codes("ValidationSucceeded  False  NodePoolValidationFailed  invalid requirements") == [
        "karpenter.no_instance_type"]
