"""Parsing and validating what a user names: ``pod/x``, ``pytorchjob/x``, a bare name, a namespace.

Nothing a user types reaches a selector, a URL or a shell without passing through here.
"""
from __future__ import annotations

import re

from bot.errors import UserError
from playbooks.model import Target

# RFC 1123 subdomain (pods, jobs, nodes, custom objects) and label (namespaces).
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

KIND_ALIASES = {
    "pod": "pod", "pods": "pod", "po": "pod",
    "job": "job", "jobs": "job",
    "pytorchjob": "pytorchjob", "pytorchjobs": "pytorchjob", "ptj": "pytorchjob",
    "tfjob": "tfjob", "tfjobs": "tfjob",
    "mpijob": "mpijob", "mpijobs": "mpijob",
    "jobset": "jobset", "jobsets": "jobset",
    "trainjob": "trainjob", "trainjobs": "trainjob",
    "node": "node", "nodes": "node", "no": "node",
    "nodepool": "nodepool", "nodepools": "nodepool", "np": "nodepool",
}
CLUSTER_SCOPED = {"node", "nodepool"}
KINDS = ("pod", "job", "pytorchjob", "tfjob", "mpijob", "jobset", "trainjob", "node", "nodepool")


def _show(value: str) -> str:
    shown = value if len(value) <= 60 else value[:57] + "..."
    return repr(shown)


def validate_name(name: str, *, what: str = "name") -> str:
    if not name or len(name) > 253 or not _SUBDOMAIN.match(name):
        raise UserError(
            f"{_show(name)} is not a valid Kubernetes {what}: use lowercase letters, digits, '-' and '.', "
            "starting and ending with a letter or digit (at most 253 characters)."
        )
    return name


def validate_namespace(namespace: str) -> str:
    if not namespace or len(namespace) > 63 or not _LABEL.match(namespace):
        raise UserError(
            f"{_show(namespace)} is not a valid namespace: use lowercase letters, digits and '-' "
            "(at most 63 characters)."
        )
    return namespace


def validate_context(context: str) -> str:
    # Context names are free-form in kubeconfig but never need control characters or shell syntax.
    if not context or len(context) > 253 or not re.match(r"^[A-Za-z0-9@:/._-]+$", context):
        raise UserError(f"{_show(context)} is not a valid kubeconfig context name.")
    return context


def parse_target(text: str, *, namespace: str | None) -> Target:
    """``kind/name`` or a bare ``name`` (kind resolved later against the cluster)."""
    text = text.strip()
    if not text:
        raise UserError("Name a target: pod/NAME, job/NAME, pytorchjob/NAME, node/NAME, nodepool/NAME or a bare name.")
    if namespace is not None:
        validate_namespace(namespace)
    if "/" in text:
        kind_text, _, name = text.partition("/")
        kind = KIND_ALIASES.get(kind_text.lower())
        if kind is None:
            raise UserError(
                f"Unknown kind {_show(kind_text)}: use one of {', '.join(KINDS)} (for example pytorchjob/my-job)."
            )
        validate_name(name, what=f"{kind} name")
        return Target(kind=kind, name=name, namespace=None if kind in CLUSTER_SCOPED else namespace)
    validate_name(text)
    return Target(kind="auto", name=text, namespace=namespace)
