"""Read the policy file (``GPUBOT_POLICY``) into a :class:`~bot.policy.model.Policy`.

The YAML is composed into nodes rather than loaded into dicts so that every mistake can name the line
it is on: the file is written by hand, and "line 14: namespaces must be a list" is what lets a person
fix it without reading this code. Every error is one line, ``{source}:{line}: {reason}``, and the
reason says what to write instead.
"""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Callable, TypeVar

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bot.durations import DurationError, parse_duration
from bot.errors import GpubotError
from bot.policy.model import (
    ALERT_SEVERITIES, ANY, REMEDIATION_KINDS, AlertPolicy, AlertRoute, Approvers, Grant, Policy, RemediationPolicy,
    RemediationScope, matches,
)

T = TypeVar("T")

SECTIONS = ("channels", "users", "approvers", "remediations", "alerts", "trusted_node_reporters")
GRANT_KEYS = ("clusters", "namespaces", "default_namespace")
APPROVER_KEYS = ("users", "usergroups", "channel", "kubernetes")
KUBERNETES_APPROVER_KEYS = ("users", "groups")
# Names that stand for everyone, or for no one in particular (k8s.io/apiserver pkg/authentication/user
# user.go, serviceaccount/util.go): as an approver they would let any tenant's pod or anonymous
# request approve.
_KUBERNETES_EVERYONE = frozenset({"system:anonymous", "system:authenticated", "system:unauthenticated",
                                  "system:serviceaccounts"})
REMEDIATION_SETTINGS = ("self_approval", "expiry", "two_person")
# Which names scope each remediation kind (RemediationScope's field of the same name).
ALERT_KEYS = ("routes",)
ROUTE_KEYS = ("channel", "clusters", "namespaces", "nodepools", "min_severity")
SCOPE_KEYS = {"annotate-do-not-disrupt": "namespaces", "nodepool-consolidation": "nodepools",
              "cordon-gpu-node": "nodes"}
MAX_EXPIRY = timedelta(days=7)

_CHANNEL = re.compile(r"^[CGD][A-Z0-9]{2,}\Z")
_USER = re.compile(r"^[UW][A-Z0-9]{2,}\Z")
_USERGROUP = re.compile(r"^S[A-Z0-9]{2,}\Z")
_CLUSTER = re.compile(r"^[A-Za-z0-9@:/._*-]{1,253}\Z")
_NAMESPACE = re.compile(r"^[a-z0-9*]([-a-z0-9*]{0,61}[a-z0-9*])?\Z")
_NODE = re.compile(r"^[a-z0-9*]([-a-z0-9.*]{0,251}[a-z0-9*])?\Z")
# Kubernetes user and group names are free text (an email, an IAM ARN, an OIDC name, system:...):
# printable, not starting or ending with a space, and no * (an approver is one exact identity).
_KUBERNETES_NAME = re.compile(r"^(?=.{1,253}\Z)[^\s*\x00-\x1f\x7f]([^*\x00-\x1f\x7f]*[^\s*\x00-\x1f\x7f])?\Z")
_BOOL = yaml.constructor.SafeConstructor.bool_values
_STR_TAG, _BOOL_TAG, _NULL_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"


class PolicyError(GpubotError):
    """The policy file cannot be used; the message is one line, ``{source}:{line}: {reason}``."""

    exit_code = 2


class _Invalid(Exception):
    """One mistake at one node; :func:`parse_policy` adds the source name."""

    def __init__(self, node: Node | None, reason: str) -> None:
        super().__init__(reason)
        self.line = node.start_mark.line + 1 if node is not None else 1
        self.reason = reason


def load_policy(path: str | Path) -> Policy:
    """The policy in ``path``; :class:`PolicyError` naming the path (and line) when it cannot be used."""
    return parse_policy(decode_policy(read_policy_bytes(path), source=str(path)), source=str(path))


def read_policy_bytes(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise PolicyError(f"{path}: no such policy file: point GPUBOT_POLICY at an existing policy.yaml, "
                          "or unset it to run without a policy") from None
    except IsADirectoryError:
        raise PolicyError(f"{path}: is a directory: GPUBOT_POLICY names the file itself, "
                          "e.g. /etc/gpubot/policy.yaml") from None
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read the policy file ({exc.strerror}): "
                          "make it readable by the user gpubot runs as") from None


def decode_policy(data: bytes, *, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise PolicyError(f"{source}:{line}: the policy file is not UTF-8 text: save it as UTF-8") from None


def parse_policy(text: str, *, source: str) -> Policy:
    """``text`` as a policy; ``source`` names it in errors and becomes ``Policy.source``."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = _yaml_mark(exc, text)
        line = mark.line + 1 if mark is not None else 1
        raise PolicyError(f"{source}:{line}: {_yaml_reason(exc)}") from None
    except yaml.YAMLError as exc:
        raise PolicyError(f"{source}:1: not valid YAML ({_one_line(str(exc))})") from None
    if root is None:
        raise PolicyError(f"{source}:1: the policy file is empty: give it at least a channels: section "
                          "(see README \"Policy file\"), or unset GPUBOT_POLICY to run without a policy")
    try:
        return _policy(root, source=source)
    except _Invalid as exc:
        raise PolicyError(f"{source}:{exc.line}: {_one_line(exc.reason)}") from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _yaml_mark(exc: yaml.MarkedYAMLError, text: str):
    """Where a person should look: the parser gives up at the end of the file on an unclosed ``{`` and
    on the line after a line with no ``:``, so the line it started on (the context) says more there."""
    mark, context = exc.problem_mark, exc.context_mark
    gave_up_late = (mark is None or mark.index >= len(text.rstrip())
                    or "could not find expected ':'" in (exc.problem or ""))
    return context if context is not None and gave_up_late else mark or context


# What PyYAML's message says -> what to write instead.
_YAML_HINTS = (
    ("alias", "write \"*\" in quotes, a bare * starts a YAML alias"),
    ("'\\t'", "indent with spaces, not tabs"),
    ("<stream end>", "close the bracket or quote opened on this line"),
    ("found another document", "keep one document, remove this ---"),
    ("mapping values are not allowed", "put each key on its own line, or quote a value containing ': '"),
    ("expected <block end>", "indent this line like the keys next to it"),
    ("could not find expected ':'", "write key: value, or indent this line under the one before"),
)


def _yaml_reason(exc: yaml.MarkedYAMLError) -> str:
    problem = _one_line(" ".join(p for p in (exc.context, exc.problem) if p)) or "not valid YAML"
    hint = next((hint for needle, hint in _YAML_HINTS if needle in problem), None)
    return f"not valid YAML ({problem})" + (f": {hint}" if hint else "")


# ---------------------------------------------------------------------------------------------
# node helpers


def _mapping(node: Node, where: str, *, example: str) -> list[tuple[ScalarNode, Node]]:
    """The (key, value) pairs of a mapping node, refusing non-scalar and repeated keys."""
    if not isinstance(node, MappingNode):
        raise _Invalid(node, f"{where} must be a mapping, e.g. {example}")
    seen: dict[str, int] = {}
    pairs = []
    for key, value in node.value:
        if not isinstance(key, ScalarNode) or key.tag == _NULL_TAG:
            raise _Invalid(key, f"{where}: keys must be plain names, e.g. {example}")
        if key.value in seen:
            raise _Invalid(key, f"{where}: {key.value} appears twice (first on line {seen[key.value]}): "
                                "keep one entry and merge the two")
        seen[key.value] = key.start_mark.line + 1
        pairs.append((key, value))
    return pairs


def _unknown_key(key: ScalarNode, where: str, allowed: tuple[str, ...]) -> _Invalid:
    return _Invalid(key, f"{where}: unknown key {key.value!r}: the keys allowed here are {', '.join(allowed)}")


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _NULL_TAG


def _name(node: Node, where: str) -> str:
    if not isinstance(node, ScalarNode) or node.tag in (_NULL_TAG, _BOOL_TAG):
        raise _Invalid(node, f"{where}: expected a name, got {_shown(node)}: write the name, in quotes if "
                             "it looks like true/false/null")
    return node.value


def _shown(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return "nothing" if node.tag == _NULL_TAG else repr(node.value)


def _names(node: Node, where: str, pattern: re.Pattern[str], what: str) -> tuple[str, ...]:
    """A list of names, each checked against ``pattern``; ``what`` says what a good one looks like."""
    if isinstance(node, ScalarNode) and node.tag != _NULL_TAG:
        item = f'"{node.value}"' if node.value.startswith(ANY) else node.value
        raise _Invalid(node, f"{where} must be a list: write [{item}] instead of {item}")
    if not isinstance(node, SequenceNode):
        raise _Invalid(node, f"{where} must be a list, e.g. [name] (or [] for none), got {_shown(node)}")
    out = []
    for item in node.value:
        name = _name(item, where)
        if not pattern.match(name):
            raise _Invalid(item, f"{where}: {name!r} is not {what}")
        out.append(name)
    return tuple(out)


def _bool(node: Node, where: str) -> bool:
    if not isinstance(node, ScalarNode) or node.tag != _BOOL_TAG:
        raise _Invalid(node, f"{where} must be true or false, got {_shown(node)}")
    return _BOOL[node.value.lower()]


def _duration(node: Node, where: str) -> timedelta:
    text = node.value if isinstance(node, ScalarNode) and node.tag != _NULL_TAG else ""
    try:
        value = parse_duration(text, name=where)
    except DurationError:
        raise _Invalid(node, f"{where} must be a duration with its unit, like 45s, 30m, 2h or 1d (or 1h30m, 1w), "
                             f"got {_shown(node)}") from None
    if value <= timedelta(0) or value > MAX_EXPIRY:
        raise _Invalid(node, f"{where} must be more than 0 and at most 7d, got {text}")
    return value


# ---------------------------------------------------------------------------------------------
# sections

_CLUSTER_WHAT = ("a cluster pattern (the kubeconfig context or GPUBOT_CLUSTER_NAME; letters, digits, @:/._-, "
                 "* for any run)")
_NAMESPACE_WHAT = ("a namespace pattern (lowercase letters, digits and '-', at most 63, * for any run), "
                   "e.g. ml-training or llm-*")
_NODE_WHAT = "a node or NodePool pattern (lowercase letters, digits, '-' and '.', * for any run), e.g. gpu-*"
_GRANT_EXAMPLE = "{clusters: [prod-use1], namespaces: [ml-training]}"


def _policy(root: Node, *, source: str) -> Policy:
    sections: dict[str, Node] = {}
    for key, value in _mapping(root, "the policy file", example="channels: {...}"):
        if key.value in ("apiVersion", "kind"):
            raise _Invalid(key, "this is a Kubernetes manifest, not a policy file: check the policy.yaml "
                                "inside its data (the text under `policy.yaml: |`)")
        if key.value not in SECTIONS:
            raise _unknown_key(key, "the policy file", SECTIONS)
        sections[key.value] = value

    def section(name: str, build: Callable[[Node], T], default: T) -> T:
        node = sections.get(name)
        # `users:` with every entry commented out is an empty section, not a mistake.
        return default if node is None or _is_null(node) else build(node)

    return Policy(
        channels=section("channels", _channels, {}),
        users=section("users", _users, {}),
        approvers=section("approvers", _approvers, Approvers()),
        remediations=section("remediations", _remediations, RemediationPolicy(enabled=True)),
        alerts=section("alerts", _alerts, AlertPolicy()),
        trusted_node_reporters=section("trusted_node_reporters", _trusted_node_reporters, frozenset()),
        source=source,
    )


def _channels(node: Node) -> dict[str, Grant]:
    out = {}
    for key, value in _mapping(node, "channels", example=f"C0123ABCD: {_GRANT_EXAMPLE}"):
        if key.value != ANY and not _CHANNEL.match(key.value):
            raise _Invalid(key, f"channels: {key.value!r} is not a channel id: use the id from the channel's "
                                "details (C0123ABCD, G... or D...), not its name, or \"*\" for every other channel")
        out[key.value] = _grant(value, f"channels.{key.value}")
    return out


def _users(node: Node) -> dict[str, Grant]:
    out = {}
    for key, value in _mapping(node, "users", example=f"U0123ABCD: {_GRANT_EXAMPLE}"):
        if not _USER.match(key.value):
            raise _Invalid(key, f"users: {key.value!r} is not a user id: use the member id from the person's "
                                "profile (U0123ABCD or W...), not their name")
        out[key.value] = _grant(value, f"users.{key.value}")
    return out


def _grant(node: Node, where: str) -> Grant:
    if _is_null(node):
        raise _Invalid(node, f"{where} has no grant: write {_GRANT_EXAMPLE}, or {{clusters: []}} to deny")
    fields: dict[str, Node] = {}
    for key, value in _mapping(node, where, example=_GRANT_EXAMPLE):
        if key.value not in GRANT_KEYS:
            raise _unknown_key(key, where, GRANT_KEYS)
        fields[key.value] = value
    if "clusters" not in fields:
        raise _Invalid(node, f"{where} names no clusters: add clusters: [NAME] (or [\"*\"]; [] to deny)")
    clusters = _names(fields["clusters"], f"{where}.clusters", _CLUSTER, _CLUSTER_WHAT)
    namespaces = ()
    if "namespaces" in fields:
        namespaces = _names(fields["namespaces"], f"{where}.namespaces", _NAMESPACE, _NAMESPACE_WHAT)
    default = None
    if "default_namespace" in fields:
        default_node = fields["default_namespace"]
        default = _name(default_node, f"{where}.default_namespace")
        if ANY in default or not _NAMESPACE.match(default):
            raise _Invalid(default_node, f"{where}.default_namespace: {default!r} is not a namespace: name one "
                                         "namespace, without *, e.g. ml-training")
        if not matches(namespaces, default):
            raise _Invalid(default_node, f"{where}.default_namespace: {default} is not among this grant's "
                                         f"namespaces: add it to namespaces or pick one of "
                                         f"[{', '.join(namespaces)}]")
    return Grant(clusters=clusters, namespaces=namespaces, default_namespace=default)


def _trusted_node_reporters(node: Node) -> frozenset[str]:
    """Exact namespace names: a pattern would also match a namespace a tenant creates later
    (``node-*`` matches ``node-problem-detector-x``), and its Events would then cordon nodes."""
    where = "trusted_node_reporters"
    names = _names(node, where, _NAMESPACE, "a namespace (lowercase letters, digits and '-', at most 63), "
                                            "e.g. node-problem-detector")
    items = node.value if isinstance(node, SequenceNode) else []
    for item, name in zip(items, names):
        if ANY in name:
            raise _Invalid(item, f"{where}: {name!r} is a pattern: name each namespace exactly, e.g. "
                                 "[node-problem-detector, gpu-operator], since a tenant who may create namespaces "
                                 "could make one a pattern matches")
    return frozenset(names)


def _approvers(node: Node) -> Approvers:
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    channel: str | None = None
    kubernetes: dict[str, tuple[str, ...]] = {}
    for key, value in _mapping(node, "approvers", example="{users: [U0123ABCD], usergroups: [S0123ABCD]}"):
        if key.value == "users":
            users = _names(value, "approvers.users", _USER, "a user id (U0123ABCD or W...): use the member id "
                                                           "from the person's profile, not their name")
        elif key.value == "usergroups":
            groups = _names(value, "approvers.usergroups", _USERGROUP,
                            "a user group id (S0123ABCD): use the group's id, not its @handle")
        elif key.value == "channel":
            channel = _name(value, "approvers.channel")
            if not _CHANNEL.match(channel) or channel.startswith("D"):
                raise _Invalid(value, f"approvers.channel: {channel!r} is not a channel id (C0123ABCD): use the id "
                                      "from the channel's details, not its #name")
        elif key.value == "kubernetes":
            kubernetes = {} if _is_null(value) else _kubernetes_approvers(value)
        else:
            raise _unknown_key(key, "approvers", APPROVER_KEYS)
    return Approvers(users=frozenset(users), usergroups=frozenset(groups), channel=channel,
                     kubernetes_users=frozenset(kubernetes.get("users", ())),
                     kubernetes_groups=frozenset(kubernetes.get("groups", ())))


def _kubernetes_approvers(node: Node) -> dict[str, tuple[str, ...]]:
    """``approvers.kubernetes``: who may approve with ``gpubot remediate``, by the user name and groups
    the cluster authenticates (what ``kubectl auth whoami`` prints)."""
    out: dict[str, tuple[str, ...]] = {}
    example = "{users: [alice@example.com], groups: [sre-oncall]}"
    for key, value in _mapping(node, "approvers.kubernetes", example=example):
        if key.value not in KUBERNETES_APPROVER_KEYS:
            raise _unknown_key(key, "approvers.kubernetes", KUBERNETES_APPROVER_KEYS)
        where = f"approvers.kubernetes.{key.value}"
        what = "user" if key.value == "users" else "group"
        names = _names(value, where, _KUBERNETES_NAME,
                       f"a Kubernetes {what} name as `kubectl auth whoami` prints it (printable, no * and no "
                       f"space at either end: an approver is one exact {what})")
        for item, name in zip(value.value, names):
            if name in _KUBERNETES_EVERYONE:
                raise _Invalid(item, f"{where}: {name} stands for everyone (or no one) the cluster admits: name the "
                                     f"{what} your approvers are in, e.g. sre-oncall")
        out[key.value] = names
    return out


def _remediations(node: Node) -> RemediationPolicy:
    settings: dict[str, object] = {}
    scopes: dict[str, RemediationScope] = {}
    example = "{expiry: 30m, nodepool-consolidation: {nodepools: [gpu-*]}}"
    for key, value in _mapping(node, "remediations", example=example):
        where = f"remediations.{key.value}"
        if key.value in ("self_approval", "two_person"):
            settings[key.value] = _bool(value, where)
        elif key.value == "expiry":
            settings["expiry"] = _duration(value, where)
        elif key.value in REMEDIATION_KINDS:
            scopes[key.value] = _scope(key.value, value, where)
        else:
            raise _unknown_key(key, "remediations", REMEDIATION_SETTINGS + REMEDIATION_KINDS)
    return RemediationPolicy(enabled=True, scopes=scopes, **settings)  # type: ignore[arg-type]


def _scope(kind: str, node: Node, where: str) -> RemediationScope:
    scope_key = SCOPE_KEYS[kind]
    example = f"{{{scope_key}: [\"*\"]}}"
    if _is_null(node):
        raise _Invalid(node, f"{where} says nowhere: write {example}, or remove {kind} to disallow it")
    names: tuple[str, ...] | None = None
    for key, value in _mapping(node, where, example=example):
        if key.value != scope_key:
            raise _Invalid(key, f"{where}: unknown key {key.value!r}: {kind} is scoped by {scope_key}, "
                                f"e.g. {example}")
        pattern, what = (_NAMESPACE, _NAMESPACE_WHAT) if scope_key == "namespaces" else (_NODE, _NODE_WHAT)
        names = _names(value, f"{where}.{scope_key}", pattern, what)
    if names is None:
        raise _Invalid(node, f"{where} says nowhere: write {example}, or remove {kind} to disallow it")
    return RemediationScope(**{scope_key: names})


_ROUTE_EXAMPLE = "{channel: C0GPUONCALL, clusters: [prod-use1], namespaces: [\"llm-*\"], min_severity: error}"


def _alerts(node: Node) -> AlertPolicy:
    routes: tuple[AlertRoute, ...] = ()
    for key, value in _mapping(node, "alerts", example=f"{{routes: [{_ROUTE_EXAMPLE}]}}"):
        if key.value != "routes":
            raise _unknown_key(key, "alerts", ALERT_KEYS)
        if _is_null(value):
            continue
        if not isinstance(value, SequenceNode):
            raise _Invalid(value, f"alerts.routes must be a list of routes, each like - {_ROUTE_EXAMPLE}")
        routes = tuple(_route(item, f"alerts.routes[{i}]") for i, item in enumerate(value.value))
    return AlertPolicy(routes=routes)


def _route(node: Node, where: str) -> AlertRoute:
    fields: dict[str, Node] = {}
    for key, value in _mapping(node, where, example=_ROUTE_EXAMPLE):
        if key.value not in ROUTE_KEYS:
            raise _unknown_key(key, where, ROUTE_KEYS)
        fields[key.value] = value
    if "channel" not in fields:
        raise _Invalid(node, f"{where} names no channel: add channel: C0123ABCD (where its alerts are posted)")
    channel = _name(fields["channel"], f"{where}.channel")
    if not _CHANNEL.match(channel) or channel.startswith("D"):
        raise _Invalid(fields["channel"], f"{where}.channel: {channel!r} is not a channel id (C0123ABCD): use the "
                                          "id from the channel's details, not its #name")
    route = AlertRoute(channel=channel)
    if "clusters" in fields:
        route = replace(route, clusters=_names(fields["clusters"], f"{where}.clusters", _CLUSTER, _CLUSTER_WHAT))
    if "namespaces" in fields:
        route = replace(route, namespaces=_names(fields["namespaces"], f"{where}.namespaces", _NAMESPACE,
                                                 _NAMESPACE_WHAT))
    if "nodepools" in fields:
        route = replace(route, nodepools=_names(fields["nodepools"], f"{where}.nodepools", _NODE, _NODE_WHAT))
    if "min_severity" in fields:
        severity = _name(fields["min_severity"], f"{where}.min_severity")
        if severity not in ALERT_SEVERITIES:
            raise _Invalid(fields["min_severity"], f"{where}.min_severity: {severity!r} is not a severity: use one "
                                                   f"of {', '.join(ALERT_SEVERITIES)}")
        route = replace(route, min_severity=severity)
    return route
