"""A fix never names an object the input did not: where the NodePool, node, namespace, NodeClass, pod,
container or cluster is unknown the snippet holds a placeholder and says how to find the real one."""
from __future__ import annotations

import re

import jinja2
import pytest

from playbooks.analyzers import ami
from playbooks.fix_values import KINDS
from playbooks.fixes import environment, render_fix, template_names

# Names a template once made up when a value was missing: a NodePool or NodeClass "gpu" or "default",
# a node "node-1", a cluster "my-cluster", jobs and labels "my-job" / "my-training-job", a container
# "pytorch", a taint "gpu-workload", an instance type "p4d.24xlarge" standing for the one that failed,
# upper-case stand-ins (NODEPOOL, NODECLAIM, POD, NAMESPACE) and Jinja's namespace() in place of one.
FORBIDDEN = {
    "NodePool/NodeClass gpu": re.compile(r"(?:name|nodepool|NodePool|EC2NodeClass|karpenter\.sh/nodepool):? '?gpu'?(?![\w./-])"),
    "NodePool default": re.compile(r"(?:name: |nodepool |NodePool )'?default'?(?![\w./-])"),
    "node-1": re.compile(r"(?<![\w-])node-1(?![\w-])"),
    "my-cluster": re.compile(r"my-cluster"),
    "my-job": re.compile(r"my-job|my-training-job"),
    "container pytorch": re.compile(r"name: '?pytorch'?$", re.M),
    "taint gpu-workload": re.compile(r"gpu-workload"),
    "p4d.24xlarge as the failed type": re.compile(r"Values='?p4d\.24xlarge'? |^\s+- p4d\.24xlarge$", re.M),
    # (a custom-columns heading "NODEPOOL:" and "the NODECLASS column" are headings, not names)
    "upper-case stand-in": re.compile(r"(?<![\w$\"-])(?:NODEPOOL|NODECLAIM|NAMESPACE|POD|JOB)(?![\w=:]| column)"),
    "jinja namespace()": re.compile(r"jinja2\.utils"),
}
# Variables that name an object; a default for one must be a placeholder ("<...>"), never a name.
OBJECT_VARIABLES = sorted(set(KINDS) | {"app", "taint_key", "key_name", "label"})
_DEFAULT = re.compile(r"\b(?P<var>\w+)\s*\|\s*default\(\s*\"(?P<value>[^\"]*)\"")


def _render_empty(template: str):
    try:
        return render_fix(template)
    except jinja2.UndefinedError:
        return None  # a value the caller always has (the analyzer that renders it holds the object)


# Templates an analyzer renders only with the object in hand need its values; every other one (all the
# generic ones among them, see below) is rendered empty here.
RENDERABLE = [t for t in template_names() if _render_empty(t) is not None]


@pytest.mark.parametrize("template", RENDERABLE)
def test_an_empty_context_invents_no_name(template: str) -> None:
    fix = _render_empty(template)
    text = fix.summary + "\n" + fix.snippet
    found = {what for what, pattern in FORBIDDEN.items() if pattern.search(text)}
    assert not found, (template, found, text)


@pytest.mark.parametrize("template", template_names())
def test_a_default_for_an_object_name_is_a_placeholder(template: str) -> None:
    env = environment()
    source = env.loader.get_source(env, template)[0]
    for match in _DEFAULT.finditer(source):
        if match["var"] in OBJECT_VARIABLES and match["value"]:
            value = match["value"]
            assert value.startswith("<") or " " in value, (template, match.group(0))


def test_every_generic_template_renders_without_values() -> None:
    """The generic templates are what explain renders from a pasted line: any field may be missing."""
    generic = [t for t in template_names() if t.startswith("generic/")]
    assert generic
    unrendered = [t for t in generic if _render_empty(t) is None]
    assert unrendered == []


@pytest.mark.parametrize(("template", "placeholder", "lookup"), [
    ("generic/karpenter.insufficient_capacity.yaml.j2", "<nodepool-name>", "kubectl get nodepools"),
    ("generic/karpenter.nodepool_limit_reached.yaml.j2", "<nodepool-name>", "kubectl get nodepools"),
    ("generic/scheduling.node_selector_mismatch.yaml.j2", "<nodepool-name>", "kubectl get nodepools"),
    ("generic/karpenter.subnet_problem.yaml.j2", "<nodeclass-name>", "nodeClassRef.name"),
    ("generic/karpenter.subnet_problem.yaml.j2", "<cluster-name>", "aws eks list-clusters"),
    ("generic/image.slow_pull.yaml.j2", "<nodeclass-name>", "nodeClassRef.name"),
    ("generic/training.shm_exhausted.yaml.j2", "<container>", ".spec.containers[*].name"),
    ("generic/scheduling.untolerated_taint.yaml.j2", "<taint-key>", ".spec.template.spec.taints"),
    ("nodeclass_ami.yaml.j2", "<nodeclass-name>", "nodeClassRef.name"),
])
def test_an_unknown_object_comes_with_how_to_find_it(template: str, placeholder: str, lookup: str) -> None:
    context = {"alias": "al2023@latest", "current": "", "custom": True} if template == "nodeclass_ami.yaml.j2" else {}
    snippet = render_fix(template, **context).snippet
    assert placeholder in snippet and lookup in snippet, snippet


def test_a_known_nodepool_is_named_and_nothing_is_looked_up() -> None:
    fix = render_fix("generic/karpenter.insufficient_capacity.yaml.j2", nodepool="h100-train", instance_type="p5.48xlarge")
    assert "NodePool h100-train" in fix.summary
    assert "name: h100-train" in fix.snippet and "<nodepool-name>" not in fix.snippet
    assert "- p5.48xlarge" in fix.snippet


def test_a_pod_command_names_its_namespace() -> None:
    snippet = render_fix("generic/training.crash_loop.sh.j2", pod="llama-worker-3", namespace="research").snippet
    assert "NAMESPACE=research" in snippet and '-n "$NAMESPACE"' in snippet
    assert "NAMESPACE='<namespace>'" in render_fix("generic/training.crash_loop.sh.j2").snippet


# -- which AMI has the NVIDIA driver (aws/karpenter-provider-aws pkg/providers/amifamily) ------------------

@pytest.mark.parametrize(("name", "driver", "alias"), [
    ("amazon-eks-node-al2023-x86_64-standard-1.33-v20251103", False, "al2023@v20251103"),
    ("amazon-eks-node-al2023-arm64-standard-1.32-v20250715", False, "al2023@v20250715"),
    ("amazon-eks-node-al2023-x86_64-nvidia-1.33-v20251103", True, "al2023@v20251103"),
    ("amazon-eks-node-al2023-x86_64-neuron-1.31-v20250403", False, "al2023@v20250403"),
    ("bottlerocket-aws-k8s-1.31-x86_64-v1.26.2-360b7a38", False, "bottlerocket@v1.26.2"),
    ("bottlerocket-aws-k8s-1.31-nvidia-x86_64-v1.26.2-360b7a38", True, "bottlerocket@v1.26.2"),
    ("amazon-eks-gpu-node-1.29-v20240817", True, "al2@v20240817"),
    ("amazon-eks-node-1.29-v20240817", False, "al2@v20240817"),
    ("acme-hardened-eks-1.31-2025-06", None, None),
])
def test_ami_names(name: str, driver: bool | None, alias: str | None) -> None:
    image = ami.classify(name)
    assert (image.driver, image.alias) == (driver, alias)


def test_bottlerocket_variant_is_read_from_the_os_image_when_the_ami_name_is_unknown() -> None:
    assert ami.classify(None, os_image="Bottlerocket OS 1.26.2 (aws-k8s-1.31)").driver is False
    assert ami.classify(None, os_image="Bottlerocket OS 1.26.2 (aws-k8s-1.31-nvidia)").driver is True
    assert ami.classify(None, os_image="Amazon Linux 2023.9.20251103").driver is None


def test_the_device_plugin_line_that_says_no_driver() -> None:
    log = ("I1126 00:10:01.000000       1 main.go:317] Retrieving plugins.\n"
           "E1126 00:10:01.000100       1 factory.go:112] could not load NVML library: libnvidia-ml.so.1: cannot open "
           "shared object file: No such file or directory\n")
    assert ami.says_no_driver(log).startswith("E1126") and ami.says_no_driver("No devices found") is None


# -- gpu.device_plugin_missing follows the AMI (playbooks/analyzers/gpu.py) ----------------------------------

def _gpu_node_facts(*, ami_name: str | None, terms: list[dict], plugin_log: str = "", family: str | None = None):
    from playbooks.facts import Facts
    from playbooks.model import Target

    node_name = "ip-10-9-8-7.us-west-2.compute.internal"
    node = {"metadata": {"name": node_name, "labels": {"karpenter.k8s.aws/instance-gpu-count": "8",
                                                       "node.kubernetes.io/instance-type": "p4d.24xlarge",
                                                       "karpenter.sh/nodepool": "a100-pretrain"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "96"}, "nodeInfo": {"osImage": "Amazon Linux 2023.9.20251016"}}}
    claim = {"metadata": {"name": "a100-pretrain-x1y2z", "labels": {"karpenter.sh/nodepool": "a100-pretrain"}},
             "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "a100-nodes"}},
             "status": {"nodeName": node_name, "imageID": "ami-0123456789abcdef0"}}
    nodeclass = {"metadata": {"name": "a100-nodes"},
                 "spec": {"amiSelectorTerms": terms, **({"amiFamily": family} if family else {})},
                 "status": {"amis": [{"id": "ami-0123456789abcdef0", "name": ami_name}] if ami_name else []}}
    facts = Facts(target=Target(kind="node", name=node_name, namespace=""), cluster="test")
    facts.nodes[node_name] = node
    facts.nodeclaims["a100-pretrain-x1y2z"] = claim
    facts.nodeclasses["karpenter.k8s.aws/a100-nodes"] = nodeclass
    if plugin_log:
        facts.device_plugin_logs[node_name] = [("pod/kube-system/nvidia-device-plugin-daemonset-abcde", plugin_log)]
    return facts


def test_a_standard_ami_node_is_pointed_at_the_ami() -> None:
    from playbooks.analyzers.gpu import analyze_plugin_missing

    facts = _gpu_node_facts(ami_name="bottlerocket-aws-k8s-1.31-x86_64-v1.26.2-360b7a38",
                            terms=[{"tags": {"team": "pretrain"}}], family="Bottlerocket")
    [finding] = list(analyze_plugin_missing(facts))
    assert (finding.code, finding.confidence) == ("gpu.device_plugin_missing", "high")
    assert "selects it by" not in finding.detail and "by tags" in finding.detail
    patch = __import__("yaml").safe_load(finding.fix.snippet)
    assert patch["metadata"]["name"] == "a100-nodes"
    assert patch["spec"] == {"amiSelectorTerms": [{"alias": "bottlerocket@v1.26.2"}]}


def test_a_custom_ami_without_the_driver_is_read_from_the_plugin_log() -> None:
    from playbooks.analyzers.gpu import analyze_plugin_missing

    log = ("I1119 17:44:43.345466       1 factory.go:104] Detected non-NVML platform: could not load NVML library: "
           "libnvidia-ml.so.1: cannot open shared object file: No such file or directory\n")
    facts = _gpu_node_facts(ami_name="acme-hardened-eks-1.31-2025-06", terms=[{"id": "ami-0123456789abcdef0"}],
                            plugin_log=log, family="AL2")
    [finding] = list(analyze_plugin_missing(facts))
    assert finding.confidence == "medium" and "could not load NVML library" in finding.evidence[-1].text
    assert "bake the NVIDIA driver" in finding.fix.snippet
    patch = __import__("yaml").safe_load(finding.fix.snippet)
    # EC2NodeClass CEL: with an al2023 alias, amiFamily may only be AL2023 or Custom
    assert patch["spec"] == {"amiFamily": "AL2023", "amiSelectorTerms": [{"alias": "al2023@latest"}]}


def test_an_nvidia_ami_node_without_gpus_is_still_a_device_plugin_question() -> None:
    from playbooks.analyzers.gpu import analyze_plugin_missing

    facts = _gpu_node_facts(ami_name="amazon-eks-node-al2023-x86_64-nvidia-1.33-v20251103", terms=[{"alias": "al2023@latest"}])
    [finding] = list(analyze_plugin_missing(facts))
    assert finding.title.endswith("advertises no nvidia.com/gpu") and finding.fix is None
