"""Who the cluster says the kubeconfig in use is: the answer of a SelfSubjectReview, as plain data.

``gpubot remediate`` records this identity, never one typed on the command line: the cluster has
authenticated the credentials (token, client certificate, exec plugin such as ``aws eks get-token``)
that the command will also write with. SelfSubjectReview is authentication.k8s.io/v1 from
Kubernetes 1.28 (v1beta1 in 1.27, KEP-3325 "Auth API to get self user attributes"); the default RBAC
lets every authenticated user create one (ClusterRole ``system:basic-user``).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from kubernetes.client.exceptions import ApiException

from bot.errors import ClusterError, Refused

PREFIX = "k8s:"
PLURAL = "selfsubjectreviews"
JSON_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}
# Recorded ids live in 64-character columns and reach Slack text: a username that is longer, or holds
# characters outside this set, is recorded as its readable start and a digest, so two usernames never
# share an id and none can carry markup.
_PLAIN = re.compile(r"^[A-Za-z0-9@:._/+=,-]{1,60}\Z")
_KEEP = re.compile(r"[^A-Za-z0-9@:._/+=,-]")
# k8s.io/apiserver pkg/authentication/user/user.go: the names of no one in particular.
ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"


@dataclass(frozen=True)
class ClusterIdentity:
    """A user as one cluster authenticates them (``status.userInfo`` of a SelfSubjectReview)."""

    cluster: str
    username: str
    groups: frozenset[str]

    @property
    def actor(self) -> str:
        """The id recorded for this person (requested_by, approvals, timeline): ``k8s:USERNAME``."""
        if _PLAIN.match(self.username):
            return PREFIX + self.username
        digest = hashlib.sha256(self.username.encode()).hexdigest()[:16]
        return f"{PREFIX}{_KEEP.sub('_', self.username)[:40]}~{digest}"


def identity_from_review(cluster: str, body: dict) -> ClusterIdentity:
    """The identity in a SelfSubjectReview answer; Refused when the cluster did not authenticate anyone."""
    info = ((body or {}).get("status") or {}).get("userInfo") or {}
    username = info.get("username") if isinstance(info.get("username"), str) else ""
    groups = frozenset(g for g in info.get("groups") or () if isinstance(g, str))
    if not username or username == ANONYMOUS_USER or UNAUTHENTICATED in groups:
        raise Refused(f"cluster {cluster} does not know who you are (it answers {username or 'no user'}): use a "
                      "kubeconfig with your own credentials; nothing was recorded")
    return ClusterIdentity(cluster=cluster, username=username, groups=groups)


def unavailable(cluster: str) -> Refused:
    """Neither v1 nor v1beta1 is served (a cluster older than 1.27, or the API turned off)."""
    return Refused(f"cluster {cluster} cannot tell who you are (SelfSubjectReview unavailable): CLI approvals are "
                   "refused and nothing was recorded; approve in Slack, or upgrade the cluster to Kubernetes 1.28 "
                   "or later")


def refused(cluster: str, exc: ApiException) -> Exception:
    """A SelfSubjectReview the cluster answered with an error other than "not served"."""
    if exc.status == 401:
        return Refused(f"cluster {cluster} did not accept your kubeconfig's credentials (401 unauthorized): "
                       "log in again (e.g. aws eks update-kubeconfig); nothing was recorded")
    if exc.status == 403:
        return Refused(f"cluster {cluster} refused to say who you are (403 forbidden on selfsubjectreviews): ask "
                       "its admins to let you create selfsubjectreviews (ClusterRole system:basic-user); nothing "
                       "was recorded")
    answer = " ".join(str(part) for part in (exc.status, exc.reason) if part)
    return ClusterError(f"cluster {cluster} could not say who you are ({answer}): try again; nothing was recorded")
