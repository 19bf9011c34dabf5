"""The policy as one typed object: who may read which clusters and namespaces, from which channel;
who may approve; which remediations are allowed where.

Names in the policy are patterns: an exact name, ``*`` for any, or a name with ``*`` standing for any
run of characters (``llm-*``). Nothing else is special, so a pattern is also a valid SQL ``LIKE``
pattern once ``*`` becomes ``%`` (see :func:`like_pattern`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from functools import lru_cache
from typing import Callable, Mapping

ANY = "*"
DEFAULT_EXPIRY = timedelta(minutes=30)
REMEDIATION_KINDS = ("annotate-do-not-disrupt", "nodepool-consolidation", "cordon-gpu-node")
# Most severe first, as playbooks.model.SEVERITIES (the policy stays free of playbooks imports).
ALERT_SEVERITIES = ("critical", "error", "warning", "info")


@lru_cache(maxsize=4096)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if part == ANY else re.escape(part) for part in re.split(r"(\*)", pattern)) + r"\Z")


def matches(patterns: tuple[str, ...] | frozenset[str], value: str | None) -> bool:
    """True when ``value`` matches one of ``patterns`` (``None`` matches nothing)."""
    if value is None:
        return False
    return any(p == ANY or p == value or (ANY in p and _regex(p).match(value)) for p in patterns)


def like_pattern(pattern: str) -> str:
    """The SQL LIKE form of a policy pattern (escape character ``\\``)."""
    escaped = pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace(ANY, "%")


@dataclass(frozen=True)
class Grant:
    """What one channel (or one person) may read: clusters, and namespaces within them. Cluster-scoped
    objects (nodes, NodePools) follow the cluster grant alone."""

    clusters: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    default_namespace: str | None = None

    def allows_cluster(self, cluster: str) -> bool:
        return matches(self.clusters, cluster)

    def allows(self, cluster: str, namespace: str | None) -> bool:
        if not self.allows_cluster(cluster):
            return False
        return namespace is None or matches(self.namespaces, namespace)


EVERYTHING = Grant(clusters=(ANY,), namespaces=(ANY,))


@dataclass(frozen=True)
class Approvers:
    users: frozenset[str] = frozenset()
    usergroups: frozenset[str] = frozenset()
    # Where approval requests are posted (besides the incident's thread); None: the thread only.
    channel: str | None = None
    # Who may approve with ``gpubot remediate``: Kubernetes users and groups, exactly as the cluster
    # authenticates them (SelfSubjectReview), never a name typed on the command line.
    kubernetes_users: frozenset[str] = frozenset()
    kubernetes_groups: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RemediationScope:
    """Where one remediation kind may be proposed: namespaces (annotate-do-not-disrupt), NodePools
    (nodepool-consolidation), nodes (cordon-gpu-node)."""

    namespaces: tuple[str, ...] = ()
    nodepools: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RemediationPolicy:
    enabled: bool = False
    self_approval: bool = False
    expiry: timedelta = DEFAULT_EXPIRY
    two_person: bool = False
    scopes: Mapping[str, RemediationScope] = field(default_factory=dict)

    def allows(self, kind: str, *, namespace: str | None = None, nodepool: str | None = None,
               node: str | None = None) -> bool:
        """A kind absent from the policy is not allowed anywhere; so is every kind without a policy file."""
        scope = self.scopes.get(kind)
        if not self.enabled or scope is None:
            return False
        if kind == "annotate-do-not-disrupt":
            return matches(scope.namespaces, namespace)
        if kind == "nodepool-consolidation":
            return matches(scope.nodepools, nodepool)
        if kind == "cordon-gpu-node":
            return matches(scope.nodes, node)
        return False


@dataclass(frozen=True)
class AlertRoute:
    """Where alerts go: the first route whose every condition holds names the channel. A condition
    left out holds for every alert; ``namespaces`` or ``nodepools`` named hold only for alerts about a
    namespace (or NodePool) they match, so a node's alert is not sent to a team's channel by accident."""

    channel: str
    clusters: tuple[str, ...] = (ANY,)
    namespaces: tuple[str, ...] | None = None
    nodepools: tuple[str, ...] | None = None
    min_severity: str = "info"

    def matches(self, *, cluster: str, namespace: str | None, nodepool: str | None, severity: str) -> bool:
        if ALERT_SEVERITIES.index(severity) > ALERT_SEVERITIES.index(self.min_severity):
            return False
        if not matches(self.clusters, cluster):
            return False
        if self.namespaces is not None and not matches(self.namespaces, namespace):
            return False
        return self.nodepools is None or matches(self.nodepools, nodepool)


@dataclass(frozen=True)
class AlertPolicy:
    routes: tuple[AlertRoute, ...] = ()

    def channel(self, *, cluster: str, namespace: str | None, nodepool: str | None, severity: str) -> str | None:
        """The first matching route's channel; None: no route matches (the default channel applies)."""
        return next((r.channel for r in self.routes
                     if r.matches(cluster=cluster, namespace=namespace, nodepool=nodepool, severity=severity)), None)


@dataclass(frozen=True)
class Access:
    """What one person may read from one channel: the union of the channel's grant and their own.

    ``unrestricted`` is the CLI's (and a bot without a policy file): its user already holds the
    kubeconfig, so there is nothing to keep from them."""

    grants: tuple[Grant, ...] = ()
    default_namespace: str | None = None
    unrestricted: bool = False
    # How refusals name the asker's position: "this channel" in a channel, "you" in a DM.
    where: str = "this channel"

    @classmethod
    def everything(cls, *, default_namespace: str | None = None) -> "Access":
        return cls(grants=(EVERYTHING,), default_namespace=default_namespace, unrestricted=True)

    def may_cluster(self, cluster: str) -> bool:
        return any(g.allows_cluster(cluster) for g in self.grants)

    def may_read(self, cluster: str, namespace: str | None) -> bool:
        """``namespace`` None: a cluster-scoped object (node, NodePool), open with the cluster."""
        return any(g.allows(cluster, namespace) for g in self.grants)

    def namespace_filter(self, cluster: str) -> Callable[[str], bool]:
        """A predicate over namespaces of ``cluster``, for lookups that must not cross into others."""
        if self.unrestricted:
            return lambda namespace: True
        grants = [g for g in self.grants if g.allows_cluster(cluster)]
        return lambda namespace: any(matches(g.namespaces, namespace) for g in grants)

    def refusal(self, cluster: str, namespace: str | None) -> str:
        """One line that names what was asked, never whether it exists."""
        if not self.may_cluster(cluster):
            return f"cluster {cluster} is not open to {self.where}"
        return f"namespace {namespace} is not open to {self.where}"

    def readable_namespaces(self, cluster: str) -> list[str]:
        """The namespace patterns open on ``cluster``, to say what may be asked instead."""
        return list(dict.fromkeys(n for g in self.grants if g.allows_cluster(cluster) for n in g.namespaces))


@dataclass(frozen=True)
class Policy:
    channels: Mapping[str, Grant] = field(default_factory=dict)
    users: Mapping[str, Grant] = field(default_factory=dict)
    approvers: Approvers = Approvers()
    remediations: RemediationPolicy = RemediationPolicy()
    # Where proactive alerts go (README "Alerts"); no routes: GPUBOT_ALERT_CHANNEL for all.
    alerts: AlertPolicy = AlertPolicy()
    # Namespaces whose Events about nodes speak for the node (a GPU fault, a cordon offer) whatever the
    # cluster shows running there: installs gpubot cannot recognise from their DaemonSets. Exact names.
    trusted_node_reporters: frozenset[str] = frozenset()
    # The file it was read from; None: no policy file, every channel reads everything.
    source: str | None = None

    @classmethod
    def open(cls) -> "Policy":
        """No policy file: every channel reads every namespace of every cluster; remediations off."""
        return cls()

    @property
    def enforced(self) -> bool:
        return self.source is not None

    def access(self, *, user: str | None, channel: str | None, fallback_namespace: str | None = None) -> Access:
        """The union of ``channel``'s grant (its own entry, else ``"*"``, else none) and ``user``'s."""
        is_dm = bool(channel) and channel.startswith("D")
        where = "you" if is_dm or not channel else "this channel"
        if not self.enforced:
            return Access.everything(default_namespace=fallback_namespace)
        grants: list[Grant] = []
        channel_grant = self.channels.get(channel or "") or self.channels.get(ANY)
        if channel_grant is not None:
            grants.append(channel_grant)
        user_grant = self.users.get(user or "")
        if user_grant is not None:
            grants.append(user_grant)
        default = next((g.default_namespace for g in grants if g.default_namespace), None)
        if default is None:
            # One literal namespace open: that is the one meant when none is named.
            literal = [n for g in grants for n in g.namespaces if ANY not in n]
            if len(literal) == 1 and not any(ANY in n for g in grants for n in g.namespaces):
                default = literal[0]
        if default is None and fallback_namespace and any(matches(g.namespaces, fallback_namespace) for g in grants):
            default = fallback_namespace
        return Access(grants=tuple(grants), default_namespace=default, where=where)

    def may_approve(self, user: str, *, usergroups: frozenset[str] = frozenset()) -> bool:
        """``usergroups``: the Slack user groups ``user`` belongs to (read by the caller, cached)."""
        return user in self.approvers.users or bool(self.approvers.usergroups & usergroups)

    def may_approve_in_cluster(self, username: str, *, groups: frozenset[str]) -> bool:
        """``username`` and ``groups``: as a cluster authenticated them (SelfSubjectReview)."""
        return username in self.approvers.kubernetes_users or bool(self.approvers.kubernetes_groups & groups)
