import pytest

from bot.errors import UserError
from bot.intent import parse_question
from bot.targets import parse_target, validate_namespace


@pytest.mark.parametrize("text,kind,name", [
    ("pod/llama-3-8b-node-0-0", "pod", "llama-3-8b-node-0-0"),
    ("pytorchjob/pytorch-dist-job", "pytorchjob", "pytorch-dist-job"),
    ("PyTorchJobs/x", "pytorchjob", "x"),
    ("job/bert-finetune", "job", "bert-finetune"),
    ("node/ip-10-0-5-89.ap-northeast-2.compute.internal", "node", "ip-10-0-5-89.ap-northeast-2.compute.internal"),
    ("nodepool/gpu", "nodepool", "gpu"),
    ("llama-3-8b", "auto", "llama-3-8b"),
    ("tfjob/resnet-ps", "tfjob", "resnet-ps"),
    ("MPIJobs/nccl-tests", "mpijob", "nccl-tests"),
    ("jobset/llama-pretrain", "jobset", "llama-pretrain"),
    ("trainjob/qwen-sft", "trainjob", "qwen-sft"),
])
def test_parse_target(text, kind, name):
    target = parse_target(text, namespace="ml")
    assert (target.kind, target.name) == (kind, name)
    assert target.namespace == (None if kind in ("node", "nodepool") else "ml")


@pytest.mark.parametrize("text", [
    "pod/Bad_Name", "pod/", "deployment/x", "x;rm -rf /", "$(reboot)", "a" * 300, "pod/a b", "../etc/passwd",
    "pod/-leading", "", "   ",
])
def test_parse_target_rejects_bad_input_with_one_line(text):
    with pytest.raises(UserError) as err:
        parse_target(text, namespace="default")
    assert "\n" not in str(err.value)
    assert len(str(err.value)) < 300


@pytest.mark.parametrize("ns", ["Default", "a_b", "-x", "x" * 64, "ns;ls"])
def test_bad_namespace(ns):
    with pytest.raises(UserError):
        validate_namespace(ns)


@pytest.mark.parametrize("question,action,target,namespace", [
    ("why is my job llama-3-8b pending?", "why-pending", "llama-3-8b", None),
    ("What killed pytorch-dist-job?", "why-failed", "pytorch-dist-job", None),
    ("why is pod gpu-pod stuck in namespace automode-taint", "why-pending", "pod/gpu-pod", "automode-taint"),
    ("diagnose pytorchjob/llama-3-8b-fsdp -n llm-consolidation", "diagnose", "pytorchjob/llama-3-8b-fsdp", "llm-consolidation"),
    ("why is my job pending?", "why-pending", None, None),
    ("show me the gpu nodes", "nodes", None, None),
    ("hello", "help", None, None),
])
def test_parse_question(question, action, target, namespace):
    intent = parse_question(question)
    assert (intent.action, intent.target, intent.namespace) == (action, target, namespace)
