import pytest

from sim.cluster import Cluster
from sim.scenarios import ScenarioError, ScenarioInfo, list_scenarios, load_into
from tests.sim.conftest import write_scenarios


def _pod_type(cluster):
    return cluster.resolve(group="", version="v1", plural="pods")


def test_list_scenarios_sorted_without_base(scenario_dir):
    infos = list_scenarios(scenario_dir)
    assert [i.name for i in infos] == ["alpha", "beta"]
    assert infos[0] == ScenarioInfo(
        name="alpha", seed="002", description="a job whose master crashed",
        target="pytorchjob/trainer", namespace="team-a", first_finding="runtime.cuda_oom",
        source="", base="_base", region="us-west-2",
    )


def test_load_defaults_namespace_and_creates_missing_namespaces(scenario_dir):
    cluster = Cluster()
    loaded = load_into(cluster, ["beta"], scenario_dir)
    assert [i.name for i in loaded] == ["beta"]
    jobs = cluster.resolve(group="batch", version="v1", plural="jobs")
    assert cluster.get(jobs, namespace="team-b", name="beta-job")["metadata"]["uid"]
    namespaces = cluster.resolve(group="", version="v1", plural="namespaces")
    names = [n["metadata"]["name"] for n in cluster.list(namespaces).items]
    assert names == ["default", "kube-system", "team-b"]
    assert cluster.find(_pod_type(cluster), namespace="team-a", name="trainer-master-0") is None


def test_shared_logs_concatenate_in_load_order(scenario_dir):
    cluster = Cluster()
    load_into(cluster, ["beta", "alpha"], scenario_dir)
    log = cluster.read_log(namespace="kube-system", pod="karpenter-0")
    assert log == "base line\nbeta line\nalpha line\n"
    previous = cluster.read_log(namespace="team-a", pod="trainer-master-0", container="pytorch", previous=True)
    assert "CUDA out of memory" in previous


def test_unknown_scenario_names_the_valid_ones(scenario_dir):
    with pytest.raises(ValueError, match="valid names: alpha, beta"):
        load_into(Cluster(), ["nope"], scenario_dir)


def test_conflicting_definitions_are_an_error(tmp_path):
    one = "name: one\nobjects:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: x}, data: {a: '1'}}\n"
    two = one.replace("one", "two").replace("'1'", "'2'")
    directory = write_scenarios(tmp_path, {"one.yaml": one, "two.yaml": two})
    with pytest.raises(ScenarioError, match="defined differently"):
        load_into(Cluster(), None, directory)


def test_file_name_must_match_name(tmp_path):
    directory = write_scenarios(tmp_path, {"one.yaml": "name: other\n"})
    with pytest.raises(ScenarioError, match="must equal the file name"):
        list_scenarios(directory)
