"""Requests a scenario's cluster refuses (api.forbidden), answered as RBAC would: 403 with a Status.

A rule names a resource and, optionally, the verbs refused on it, as an RBAC PolicyRule does
(k8s.io/api/rbac/v1 PolicyRule: verbs x resources): ``pods/log`` refuses every verb on pod logs,
``patch pods`` only patching pods (a read-only service account), ``patch,update karpenter.sh/nodepools``
both writes of NodePools."""

from __future__ import annotations

from dataclasses import dataclass

from sim import resources
from sim.resources import ApiError

# Groups named without a dot; anything with a dot is a group too (karpenter.sh/nodeclaims).
_DOTLESS_GROUPS = {"core": "", "apps": "apps", "batch": "batch"}
VERBS = frozenset({"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"})


@dataclass(frozen=True)
class Rule:
    plural: str
    group: str | None = None  # None: any group (`daemonsets` means apps/v1 daemonsets)
    subresource: str | None = None
    namespace: str | None = None  # None: every namespace and the cluster scope
    verbs: frozenset[str] | None = None  # None: every verb

    def refuses(self, *, verb: str, group: str, plural: str, subresource: str | None, namespace: str | None) -> bool:
        return (
            self.plural == plural
            and (self.verbs is None or verb in self.verbs)
            and self.subresource == subresource
            and (self.group is None or self.group == group)
            and (self.namespace is None or self.namespace == namespace)
        )


def parse_rule(text: str) -> Rule:
    """`pods/log`, `daemonsets`, `namespaces/kube-system/pods`, `karpenter.sh/nodeclaims`, `apps/daemonsets`,
    each optionally after the verbs it refuses: `patch pods`, `patch,update karpenter.sh/nodepools`."""
    verbs = None
    words = text.split()
    if len(words) == 2:
        verbs = frozenset(v.strip() for v in words[0].split(",") if v.strip())
        unknown = sorted(verbs - VERBS)
        if not verbs or unknown:
            raise ValueError(f"api.forbidden: unknown verb(s) {', '.join(unknown) or words[0]!r} in {text!r}; "
                             f"write some of {', '.join(sorted(VERBS))}, e.g. patch pods")
        text = words[1]
    elif len(words) != 1:
        raise ValueError(f"api.forbidden: cannot read {text!r}; write [VERBS] RESOURCE, e.g. patch pods")
    parts = [p for p in text.strip().split("/") if p]
    namespace = None
    if len(parts) >= 3 and parts[0] == "namespaces":
        namespace, parts = parts[1], parts[2:]
    group = None
    if len(parts) >= 2 and ("." in parts[0] or parts[0] in _DOTLESS_GROUPS):
        group, parts = _DOTLESS_GROUPS.get(parts[0], parts[0]), parts[1:]
    if not parts or len(parts) > 2:
        raise ValueError(f"api.forbidden: cannot read {text!r}; write e.g. pods/log, daemonsets, "
                         "namespaces/kube-system/pods or karpenter.sh/nodeclaims")
    return Rule(plural=parts[0], group=group, subresource=parts[1] if len(parts) > 1 else None, namespace=namespace,
                verbs=verbs)


def verb(method: str, *, named: bool, watch: bool) -> str:
    if method == "GET":
        return "get" if named else ("watch" if watch else "list")
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


def check(
    rules: tuple[Rule, ...],
    *,
    method: str,
    group: str,
    plural: str,
    subresource: str | None,
    namespace: str | None,
    name: str | None,
    watch: bool = False,
) -> None:
    """Raise the 403 kube-apiserver would answer when a rule refuses this request."""
    asked = verb(method, named=name is not None, watch=watch)
    for rule in rules:
        if rule.refuses(verb=asked, group=group, plural=plural, subresource=subresource, namespace=namespace):
            raise _forbidden(method=method, group=group, plural=plural, subresource=subresource,
                             namespace=namespace, name=name, watch=watch)


def _forbidden(*, method: str, group: str, plural: str, subresource: str | None, namespace: str | None,
               name: str | None, watch: bool) -> ApiError:
    return resources.forbidden(verb=verb(method, named=name is not None, watch=watch), plural=plural,
                               subresource=subresource, group=group, namespace=namespace, name=name)


# authorization.k8s.io/v1 SelfSubjectAccessReview (k8s.io/api/authorization/v1 types.go): "may I VERB
# RESOURCE?" answered from the same rules that refuse requests, so a check agrees with the real call.
REVIEW_GROUP, REVIEW_PLURAL = "authorization.k8s.io", "selfsubjectaccessreviews"


def review(rules: tuple[Rule, ...], body: dict) -> dict:
    attributes = ((body.get("spec") or {}).get("resourceAttributes") or {})
    refused = any(rule.refuses(verb=str(attributes.get("verb", "")), group=str(attributes.get("group", "")),
                               plural=str(attributes.get("resource", "")),
                               subresource=attributes.get("subresource") or None,
                               namespace=attributes.get("namespace") or None) for rule in rules)
    status = {"allowed": not refused}
    if refused:
        status["reason"] = "forbidden by the scenario's api.forbidden rules"
    return {"kind": "SelfSubjectAccessReview", "apiVersion": f"{REVIEW_GROUP}/v1", "metadata": {"creationTimestamp": None},
            "spec": body.get("spec") or {}, "status": status}
