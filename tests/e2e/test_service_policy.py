"""The service enforces the policy for an asker (user, channel) on every read, against the simulated
cluster over HTTP: nothing in a namespace the asker may not read is read, searched, or named."""
from __future__ import annotations


import pytest

from bot.errors import NotFoundError, Refused
from bot.policy.load import parse_policy
from bot.policy.source import PolicySource
from bot.render import json_out
from bot.service import Asker, DiagnosisService
from bot.settings import load_settings
from tests.conftest import SIM_ENV

NODE = "ip-10-0-5-89.ap-northeast-2.compute.internal"  # runs llm-gpu's GPU pods (seed-unhealthy-gpu)

POLICY = """\
channels:
  C0VISION: {clusters: ["*"], namespaces: [automode-taint]}
  C0LLM: {clusters: ["*"], namespaces: [llm-gpu]}
users:
  U0ADMIN: {clusters: ["*"], namespaces: ["*"]}
"""


@pytest.fixture(scope="module")
def service(seed_sim, tmp_path_factory):
    path = tmp_path_factory.mktemp("policy") / "policy.yaml"
    path.write_text(POLICY)
    parse_policy(POLICY, source=str(path))  # the file is valid
    settings = load_settings({"KUBECONFIG": str(seed_sim.kubeconfig), **SIM_ENV})
    svc = DiagnosisService(settings, policy=PolicySource(str(path)))
    yield svc
    svc.close()


def test_a_node_diagnosis_counts_other_namespaces_pods_without_reading_them(service, monkeypatch):
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    vision = json_out.render(service.diagnose(f"node/{NODE}", asker=Asker("U0ALICE", "C0VISION")))
    assert "llm-gpu" not in vision and "llama-3-8b-node-0-0" not in vision
    assert "belong to namespaces not open here" in vision
    llm = json_out.render(service.diagnose(f"node/{NODE}", asker=Asker("U0BOB", "C0LLM")))
    assert "llama-3-8b-node-0-0" in llm  # the team that may read them sees them


def test_a_bare_name_is_looked_for_only_where_the_asker_may_read(service):
    with pytest.raises(NotFoundError) as refused:
        service.diagnose("llama-3-8b-node-0-0-w5psk", asker=Asker("U0ALICE", "C0VISION"))
    assert "llm-gpu" not in str(refused.value)
    found = service.diagnose("llama-3-8b-node-0-0-w5psk", asker=Asker("U0ADMIN", "C0VISION"))
    assert found.target.namespace == "llm-gpu"  # the admin's own grant reaches it from the same channel


def test_refusals_do_not_reveal_existence(service):
    asker = Asker("U0ALICE", "C0VISION")
    answers = set()
    for name in ("pod/llama-3-8b-node-0-0-w5psk", "pod/no-such-pod"):
        with pytest.raises(Refused) as refused:
            service.diagnose(name, namespace="llm-gpu", asker=asker)
        answers.add(str(refused.value))
    assert answers == {"namespace llm-gpu is not open to this channel"}
    with pytest.raises(Refused, match="^cluster prod-euw1 is not open to this channel$"):
        service.nodes(context="prod-euw1", asker=Asker("U0BOB", "C0OTHER"))
    with pytest.raises(Refused):
        service.pending_jobs(namespace="llm-gpu", asker=asker)


def test_the_cli_reads_everything(service):
    assert service.diagnose("llama-3-8b-node-0-0-w5psk").target.namespace == "llm-gpu"
