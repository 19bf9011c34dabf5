"""`gpubot diagnose --json`, its terminal output and `gpubot explain` on inputs full of secrets print none
of them: a pod whose environment and log carry credentials, diagnosed through the simulated cluster."""
from __future__ import annotations

import json
import textwrap

from tests.conftest import SIM_ENV
from tests.playbooks.test_redaction import SECRETS

LOG = "\n".join(line for line, _ in SECRETS if "\n" not in line) + "\n" + textwrap.dedent("""\
    [rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.11 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 77.98 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated. HF_TOKEN=hf_LeakedInTheSameLine0123456789abcdefg
    """)

LEAKED = "hf_LeakedInTheSameLine0123456789abcdefg"  # on the very line quoted as evidence

SCENARIO = textwrap.dedent("""\
    name: leaky-trainer
    source: https://github.com/kubernetes-sigs/karpenter
    description: a trainer whose env and log carry credentials dies of CUDA OOM
    base: karpenter
    region: us-west-2
    target: pod/leaky-trainer-0
    namespace: ml-leaky
    expect: {first_finding: training.cuda_oom}
    objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: leaky-trainer-0, namespace: ml-leaky}
      spec:
        containers:
        - name: trainer
          image: public.ecr.aws/deep-learning-containers/pytorch-training:2.8.0-gpu-py312
          env:
          - {name: AWS_SECRET_ACCESS_KEY, value: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY}
          - {name: HF_TOKEN, value: hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789}
          resources: {limits: {nvidia.com/gpu: '1'}, requests: {nvidia.com/gpu: '1'}}
        restartPolicy: Never
      status:
        phase: Failed
        containerStatuses:
        - name: trainer
          image: public.ecr.aws/deep-learning-containers/pytorch-training:2.8.0-gpu-py312
          imageID: ''
          ready: false
          restartCount: 0
          state: {terminated: {exitCode: 1, reason: Error, startedAt: '-10m', finishedAt: '-2m'}}
    logs:
    - {namespace: ml-leaky, pod: leaky-trainer-0, container: trainer, previous: false, file: leaky.log}
    """)


def test_diagnose_prints_no_secret(tmp_path, monkeypatch, cli):
    from sim.serve import start_sim

    (tmp_path / "leaky-trainer.yaml").write_text(SCENARIO)
    (tmp_path / "leaky.log").write_text(LOG)
    with start_sim(directory=tmp_path, scenarios=["leaky-trainer"]) as sim:
        monkeypatch.setenv("KUBECONFIG", str(sim.kubeconfig))
        for key, value in SIM_ENV.items():
            monkeypatch.setenv(key, value)
        as_json = cli("diagnose", "pod/leaky-trainer-0", "-n", "ml-leaky", "--json")
        as_text = cli("diagnose", "pod/leaky-trainer-0", "-n", "ml-leaky")
    assert as_json.code == 0 and as_text.code == 0, as_json.err
    diagnosis = json.loads(as_json.out)
    assert diagnosis["findings"][0]["code"] == "training.cuda_oom"
    assert any("[REDACTED]" in e["text"] for f in diagnosis["findings"] for e in f["evidence"]), \
        "the log lines around the secrets are still quoted"
    for _, secret in SECRETS + [("", LEAKED)]:
        for part in secret.splitlines():
            assert part not in as_json.out + as_json.err + as_text.out + as_text.err, part


def test_explain_prints_no_secret(tmp_path, cli):
    path = tmp_path / "pasted.log"
    path.write_text(LOG)
    result = cli("explain", str(path), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["findings"][0]["code"] == "training.cuda_oom"
    for _, secret in SECRETS + [("", LEAKED)]:
        for part in secret.splitlines():
            assert part not in result.out + result.err, part
