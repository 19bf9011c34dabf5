"""The scenario files themselves: valid objects, a complete contract, and one consistent cluster.

All scenarios are loaded into one simulated cluster for the demo, so names must not collide and every
reference (event -> object, pod -> node, node -> NodePool, owner -> owner) must resolve, either in the
scenario itself or in `_base.yaml`, which is always loaded with it.
"""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from functools import cache
from pathlib import Path

import pytest
import yaml

from playbooks.codes import CODE_SET
from playbooks.validation import validate_object
from sim.timestamps import relative

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "sim" / "scenarios"
REQUIRED_KEYS = ("name", "seed", "description", "target", "namespace", "expect", "objects", "logs")
TARGET_KINDS = {"pod": "Pod", "job": "Job", "pytorchjob": "PyTorchJob", "node": "Node", "nodepool": "NodePool"}
CLUSTER_SCOPED = {"Namespace", "Node", "NodePool", "NodeClaim", "EC2NodeClass", "NodeClass"}
KARPENTER_POD = ("karpenter", "karpenter-7d4f9c8b6-x2x9k", "controller")
AUTO_MODE_SCENARIOS = {"seed-auto-mode-label-prefix", "seed-untolerated-gpu-taint"}


@cache
def load(name: str) -> dict:
    return yaml.safe_load((SCENARIO_DIR / f"{name}.yaml").read_text())


def scenario_names() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml") if p.stem != "_base")


def all_names() -> list[str]:
    return ["_base", *scenario_names()]


def key(obj: dict) -> tuple[str, str, str]:
    meta = obj["metadata"]
    return obj["kind"], meta.get("namespace", ""), meta["name"]


def index(*names: str) -> dict[tuple[str, str, str], dict]:
    return {key(obj): obj for name in names for obj in load(name)["objects"]}


def _absolute(value: str) -> datetime:
    resolved = relative(value, now=_NOW) or value
    return datetime.fromisoformat(resolved.replace("Z", "+00:00"))


def objects_of(name: str) -> list[dict]:
    return load(name)["objects"]


_NOW = datetime.now(timezone.utc)
SCENARIOS = scenario_names()
ALL = all_names()


def test_there_are_scenarios():
    assert len(SCENARIOS) >= 14
    assert (SCENARIO_DIR / "_base.yaml").exists()
    assert (SCENARIO_DIR / "README.md").exists()


@pytest.mark.parametrize("name", ALL)
def test_every_object_validates(name):
    errors = [e for obj in objects_of(name) for e in validate_object(obj, strict=True)]
    assert errors == []


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_has_the_contract_keys(name):
    doc = load(name)
    missing = [k for k in REQUIRED_KEYS if k not in doc]
    assert missing == []
    assert doc["name"] == name
    assert isinstance(doc["seed"], str) and len(doc["seed"]) == 3
    assert doc["description"] and "\n" not in doc["description"]
    kind, _, target = doc["target"].partition("/")
    assert kind in TARGET_KINDS and target
    assert doc["expect"]["first_finding"] in CODE_SET


def test_base_has_only_objects_and_logs():
    assert set(load("_base")) == {"name", "region", "objects", "logs"}
    assert load("_base")["name"] == "_base"


def test_object_names_are_unique_across_all_files():
    seen = Counter(key(obj) for name in ALL for obj in objects_of(name))
    assert [k for k, n in seen.items() if n > 1] == []
    cluster_scoped = Counter((obj["kind"], obj["metadata"]["name"]) for name in ALL for obj in objects_of(name)
                             if obj["kind"] in CLUSTER_SCOPED)
    assert [k for k, n in cluster_scoped.items() if n > 1] == []
    # uid may be omitted (the loader fills it); those written must be unique.
    uids = Counter(obj["metadata"]["uid"] for name in ALL for obj in objects_of(name) if "uid" in obj["metadata"])
    assert [u for u, n in uids.items() if n > 1] == []


def test_scoping_matches_the_kind():
    for name in ALL:
        for obj in objects_of(name):
            namespaced = bool(obj["metadata"].get("namespace"))
            assert namespaced != (obj["kind"] in CLUSTER_SCOPED), f"{name}: {key(obj)}"


@pytest.mark.parametrize("name", SCENARIOS)
def test_target_exists_in_its_namespace(name):
    doc = load(name)
    kind, _, target = doc["target"].partition("/")
    real_kind = TARGET_KINDS[kind]
    namespace = "" if real_kind in CLUSTER_SCOPED else doc["namespace"]
    assert (real_kind, namespace, target) in index("_base", name)


def test_each_scenario_owns_a_unique_namespace():
    namespaces = [load(name)["namespace"] for name in SCENARIOS]
    assert len(set(namespaces)) == len(namespaces)
    base_namespaces = {obj["metadata"]["name"] for obj in objects_of("_base") if obj["kind"] == "Namespace"}
    assert base_namespaces >= {"default", "kube-system", "karpenter"}
    for name in SCENARIOS:
        ns = load(name)["namespace"]
        assert ns not in base_namespaces
        assert ("Namespace", "", ns) in index(name)


@pytest.mark.parametrize("name", ALL)
def test_namespaces_of_objects_exist(name):
    objs = index("_base", name)
    for obj in objects_of(name):
        ns = obj["metadata"].get("namespace")
        if ns:
            assert ("Namespace", "", ns) in objs, f"{key(obj)}"


@pytest.mark.parametrize("name", ALL)
def test_log_files_exist_and_belong_to_pods(name):
    objs = index("_base", name)
    for entry in load(name)["logs"]:
        assert set(entry) >= {"namespace", "pod", "container"}
        assert ("file" in entry) != ("text" in entry)
        if "file" in entry:
            path = SCENARIO_DIR / entry["file"]
            assert path.is_file(), entry["file"]
            assert path.read_text().strip()
        pod = objs.get(("Pod", entry["namespace"], entry["pod"]))
        assert pod is not None, entry
        assert entry["container"] in [c["name"] for c in pod["spec"]["containers"]], entry


@pytest.mark.parametrize("name", ALL)
def test_karpenter_log_lines_are_upstream_json(name):
    for entry in load(name)["logs"]:
        if (entry["namespace"], entry["pod"], entry["container"]) != KARPENTER_POD:
            continue
        for line in (SCENARIO_DIR / entry["file"]).read_text().splitlines():
            record = json.loads(line)
            assert record["level"] in ("INFO", "ERROR", "DEBUG", "WARN")
            assert record["logger"].startswith("controller")
            assert record["time"].startswith("2026-01-01T") and record["time"].endswith("Z")
            assert record["message"] and record["commit"]
            if record["message"] == "could not schedule pod":
                assert record["level"] == "ERROR" and record["Pod"]["namespace"] and record["error"]


@pytest.mark.parametrize("name", sorted(AUTO_MODE_SCENARIOS))
def test_auto_mode_scenarios_have_no_karpenter_controller_log(name):
    assert [e for e in load(name)["logs"] if e["namespace"] == "karpenter"] == []


@pytest.mark.parametrize("name", ALL)
def test_events_point_at_real_objects(name):
    objs = index("_base", name)
    for ev in objects_of(name):
        if ev["kind"] != "Event":
            continue
        inv = ev["involvedObject"]
        target = objs.get((inv["kind"], inv.get("namespace", ""), inv["name"]))
        assert target is not None, f"{ev['metadata']['name']} -> {inv}"
        if "uid" in inv:  # an ObjectReference may leave the uid out
            assert inv["uid"] == target["metadata"].get("uid")
        assert inv["apiVersion"] == target["apiVersion"]
        assert ev["metadata"]["namespace"] == (inv.get("namespace") or "default")
        assert ev["metadata"]["name"].startswith(inv["name"] + ".")
        assert ev["type"] in ("Normal", "Warning") and ev["count"] >= 1
        first, last = (_absolute(ev[k]) for k in ("firstTimestamp", "lastTimestamp"))
        assert first <= last


@pytest.mark.parametrize("name", ALL)
def test_references_resolve(name):
    objs = index("_base", name)
    for obj in objects_of(name):
        for ref in obj["metadata"].get("ownerReferences", []):
            if ref["kind"] == "ReplicaSet":
                continue  # the Karpenter Deployment's ReplicaSet is not modelled
            ns = "" if ref["kind"] in CLUSTER_SCOPED else obj["metadata"].get("namespace", "")
            owner = objs.get((ref["kind"], ns, ref["name"]))
            assert owner is not None and owner["metadata"]["uid"] == ref["uid"], f"{key(obj)} -> {ref}"
        if obj["kind"] == "Pod" and obj["spec"].get("nodeName"):
            assert ("Node", "", obj["spec"]["nodeName"]) in objs, key(obj)
        if obj["kind"] == "Node" and "karpenter.sh/nodepool" in obj["metadata"]["labels"]:
            assert ("NodePool", "", obj["metadata"]["labels"]["karpenter.sh/nodepool"]) in objs, key(obj)
        if obj["kind"] == "NodeClaim" and obj["status"].get("nodeName"):
            assert ("Node", "", obj["status"]["nodeName"]) in objs, key(obj)
        if obj["kind"] == "NodePool":
            ref = obj["spec"]["template"]["spec"]["nodeClassRef"]
            assert (ref["kind"], "", ref["name"]) in objs, key(obj)


@pytest.mark.parametrize("name", ALL)
def test_pods_look_like_the_api_server_returned_them(name):
    for obj in objects_of(name):
        if obj["kind"] != "Pod":
            continue
        status = obj["status"]
        assert status["phase"] in ("Pending", "Running", "Succeeded", "Failed"), key(obj)
        if status["phase"] == "Pending" and not obj["spec"].get("nodeName"):
            scheduled = [c for c in status["conditions"] if c["type"] == "PodScheduled"]
            assert scheduled and scheduled[0]["status"] == "False" and scheduled[0]["reason"] == "Unschedulable"
            assert scheduled[0]["message"].startswith("0/"), key(obj)
        else:
            names = {c["name"] for c in obj["spec"]["containers"]}
            assert {c["name"] for c in status["containerStatuses"]} == names, key(obj)


@pytest.mark.parametrize("name", ALL)
def test_timestamps_are_fixed_and_absolute(name):
    def walk(node, path=""):
        if isinstance(node, dict):
            for k, v in node.items():
                yield from walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from walk(v, f"{path}[{i}]")
        elif isinstance(node, str) and (path.endswith("Timestamp") or path.endswith("Time") or
                                        path.endswith("At")):
            yield path, node

    for obj in objects_of(name):
        for path, value in walk(obj):
            if relative(value, now=datetime.now(timezone.utc)) is not None:
                continue  # relative to load time ("-20s"), resolved by the loader
            assert value.startswith("2026-01-01T"), f"{key(obj)} {path}={value}"
            datetime.fromisoformat(value.replace("Z", "+00:00"))
