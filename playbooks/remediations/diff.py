"""The preview of a plan: per object, a unified diff of the fields it touches, as YAML, before and
after. Only the touched subtrees are shown (a pod's annotations, a NodePool's spec.disruption), so an
approver reads the change and not the object."""
from __future__ import annotations

import copy
import difflib
from typing import Any

import yaml

from playbooks.remediations.model import ObjectRef

PODS_SHOWN = 3  # a job of 64 pods would bury the diff that matters; the count says the rest


def project(obj: Any, paths: list[list[str]]) -> Any:
    """The parts of ``obj`` on the way to each path (segments, list indexes as digits); a list keeps
    only the touched items, each with its ``name`` so the reader knows which one it is."""
    if any(not path for path in paths):
        return copy.deepcopy(obj)
    heads = list(dict.fromkeys(path[0] for path in paths))
    if isinstance(obj, dict):
        return {key: project(obj[key], [p[1:] for p in paths if p[0] == key]) for key in heads if key in obj}
    if isinstance(obj, list):
        out = []
        for head in heads:
            if head.isdigit() and int(head) < len(obj):
                item, part = obj[int(head)], project(obj[int(head)], [p[1:] for p in paths if p[0] == head])
                if isinstance(item, dict) and "name" in item and isinstance(part, dict):
                    part = {"name": item["name"], **part}
                out.append(part)
        return out
    return copy.deepcopy(obj)


def render(value: Any) -> list[str]:
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=False, width=1000).splitlines()


def object_diff(ref: ObjectRef, before: Any, after: Any) -> str:
    """``--- <ref> (now)`` / ``+++ <ref> (after)`` and the whole touched subtree as context."""
    old, new = render(before), render(after)
    lines = difflib.unified_diff(old, new, fromfile=f"{ref} (now)", tofile=f"{ref} (after)",
                                 n=max(len(old), len(new)), lineterm="")
    return "\n".join(lines)


def join(owner: list[str], pods: list[str]) -> str:
    """The owner's diffs, then the first pods' and how many more pods the plan changes alike."""
    shown = owner + pods[:PODS_SHOWN]
    more = len(pods) - PODS_SHOWN
    if more > 0:
        shown.append(f"... and {more} more pod{'s' if more > 1 else ''}, changed alike")
    return "\n".join(shown)
