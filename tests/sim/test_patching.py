import pytest

from sim.patching import PatchError, PatchTestFailed, json_patch, merge_patch


def test_merge_patch_merges_deletes_and_replaces_without_mutating():
    shared = {"b": 1}
    target = {"a": {"x": 1, "y": 2}, "list": [1, 2], "shared": shared}
    result = merge_patch(target, {"a": {"x": None, "z": 3}, "list": [3], "new": "v"})
    assert result == {"a": {"y": 2, "z": 3}, "list": [3], "shared": {"b": 1}, "new": "v"}
    assert target == {"a": {"x": 1, "y": 2}, "list": [1, 2], "shared": {"b": 1}}
    assert result["shared"] is shared  # untouched branches stay shared (copy on write)


def test_json_patch_operations_with_pointer_escaping():
    doc = {"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "false"}, "labels": {}}, "items": [1, 2]}
    ops = [
        {"op": "test", "path": "/metadata/annotations/karpenter.sh~1do-not-disrupt", "value": "false"},
        {"op": "replace", "path": "/metadata/annotations/karpenter.sh~1do-not-disrupt", "value": "true"},
        {"op": "add", "path": "/metadata/labels/a~0b", "value": "1"},
        {"op": "add", "path": "/items/-", "value": 3},
        {"op": "add", "path": "/items/0", "value": 0},
        {"op": "copy", "from": "/items/1", "path": "/first"},
        {"op": "move", "from": "/first", "path": "/moved"},
        {"op": "remove", "path": "/items/3"},
    ]
    result = json_patch(doc, ops)
    assert result["metadata"] == {"annotations": {"karpenter.sh/do-not-disrupt": "true"}, "labels": {"a~b": "1"}}
    assert result["items"] == [0, 1, 2]
    assert result["moved"] == 1 and "first" not in result
    assert doc["items"] == [1, 2]


def test_json_patch_failed_test_and_bad_paths():
    with pytest.raises(PatchTestFailed):
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    with pytest.raises(PatchError):
        json_patch({"a": 1}, [{"op": "remove", "path": "/b"}])
    with pytest.raises(PatchError):
        json_patch({"a": 1}, [{"op": "replace", "path": "/b", "value": 1}])
    with pytest.raises(PatchError):
        json_patch({"a": 1}, {"op": "add"})
