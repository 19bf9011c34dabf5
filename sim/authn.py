"""Who a request comes from: bearer tokens mapped to users, and SelfSubjectReview to ask.

kube-apiserver authenticates every request before anything else; ``SelfSubjectReview``
(authentication.k8s.io, KEP-3325: v1alpha1 in 1.26, v1beta1 in 1.27, v1 GA in 1.28) answers with the
user the request was authenticated as, ``status.userInfo`` {username, uid, groups, extra}. Its
shape and behaviour follow k8s.io/kubernetes pkg/registry/authentication/selfsubjectreview/rest.go:
create only (POST), nothing stored, the body's own status ignored. Every authenticated user also
carries ``system:authenticated`` (k8s.io/apiserver pkg/authentication/group/authenticated_group_adder.go);
a request with no credentials is ``system:anonymous`` in ``system:unauthenticated`` when anonymous auth
is on (the default).

The simulator stays permissive for every other request (tests read it with plain HTTP), so only a
SelfSubjectReview looks at the token: an unknown one is answered 401, as kube-apiserver would.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from sim.resources import ApiError

GROUP = "authentication.k8s.io"
PLURAL = "selfsubjectreviews"
KNOWN_VERSIONS = ("v1", "v1beta1", "v1alpha1")
AUTHENTICATED = "system:authenticated"
ANONYMOUS = ("system:anonymous", ("system:unauthenticated",))


@dataclass(frozen=True)
class UserInfo:
    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""


@dataclass
class Authentication:
    """The tokens this cluster accepts and the SelfSubjectReview versions it serves (a 1.33 cluster:
    v1 only; ``("v1beta1",)`` is a 1.27 cluster, ``()`` one older than 1.26 or with the API off)."""

    versions: tuple[str, ...] = ("v1",)
    _tokens: dict[str, UserInfo] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add_token(self, token: str, user: UserInfo) -> None:
        with self._lock:
            self._tokens[token] = user

    def user_for(self, authorization: str) -> UserInfo:
        """The user an ``Authorization`` header authenticates; 401 for a token nobody was given."""
        if not authorization:
            return UserInfo(ANONYMOUS[0], ANONYMOUS[1])
        scheme, _, token = authorization.partition(" ")
        with self._lock:
            user = self._tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            raise ApiError(code=401, reason="Unauthorized", message="Unauthorized")
        groups = user.groups if AUTHENTICATED in user.groups else (*user.groups, AUTHENTICATED)
        return UserInfo(user.username, groups, user.uid)

    def review(self, *, version: str, authorization: str) -> dict:
        """The SelfSubjectReview kube-apiserver answers (201 Created) for this request's user."""
        user = self.user_for(authorization)
        info: dict = {"username": user.username, "groups": list(user.groups)}
        if user.uid:
            info["uid"] = user.uid
        return {"kind": "SelfSubjectReview", "apiVersion": f"{GROUP}/{version}",
                "metadata": {"creationTimestamp": None}, "status": {"userInfo": info}}
