"""The events of a pending pod's unbound claim are read through the real gateway from the simulated API server,
one request per claim, and the claim's own words (the EBS CSI driver's ProvisioningFailed) carry the finding;
a waiting container's state on a scheduled pod is read the same way."""
from __future__ import annotations

from bot.service import DiagnosisService
from bot.settings import load_settings
from sim.serve import start_sim

from tests.conftest import REPO, SIM_ENV

SCENARIOS = REPO / "tests" / "scenarios"


def _diagnose(monkeypatch, scenario: str, target: str, namespace: str):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    with start_sim(directory=SCENARIOS, scenarios=[scenario]) as sim:
        service = DiagnosisService(load_settings({"KUBECONFIG": str(sim.kubeconfig), **SIM_ENV}))
        try:
            sim.reset_requests()
            diagnosis = service.diagnose(target, namespace=namespace)
            return diagnosis, sim.request_log()
        finally:
            service.close()


def test_the_claims_provisioning_failure_is_read_and_quoted(monkeypatch):
    diagnosis, log = _diagnose(monkeypatch, "field-ebs-csi-unauthorized-g6", "pod/parakeet-0", "asr-ca")
    claim_reads = [line for line in log if "involvedObject.kind%3DPersistentVolumeClaim" in line]
    assert len(claim_reads) == 1 and "involvedObject.name%3Dckpt-parakeet-0" in claim_reads[0]
    first = diagnosis.findings[0]
    assert first.code == "storage.provisioning_failed" and first.severity == "error"
    assert first.evidence[0].source.startswith("event pvc/asr-ca/ckpt-parakeet-0 ProvisioningFailed")
    assert "UnauthorizedOperation" in first.evidence[0].text
    assert "PVC=ckpt-parakeet-0" in first.fix.snippet and "NAMESPACE=asr-ca" in first.fix.snippet


def test_a_scheduled_pods_waiting_container_is_read(monkeypatch):
    diagnosis, log = _diagnose(monkeypatch, "field-ecr-other-region-p4d", "pod/sft-llama-0", "sft-jp")
    assert not [line for line in log if "PersistentVolumeClaim" in line]  # no claim, no claim read
    first = diagnosis.findings[0]
    assert first.code == "image.pull_failed" and first.title.startswith("sft-llama-0 container train: ")
    assert first.evidence[0].source == "pod/sft-jp/sft-llama-0 status.containerStatuses[train].state.waiting"
    assert "--region ap-northeast-3 --repository-name llm/sft-trainer" in first.fix.snippet
