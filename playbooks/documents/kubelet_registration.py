"""A kubelet log whose registration keeps failing: the node never joins, whatever each line says alone.

kubernetes/kubernetes pkg/kubelet/kubelet_node_status.go (v1.20 to v1.33) ``registerWithAPIServer`` retries
``tryRegisterWithAPIServer`` with a backoff (100 ms doubling to 7 s) until it succeeds, logging each round:
``"Attempting to register node" node="<name>"``, then on failure ``"Unable to register node with API server"
err="<error>" node="<name>"`` or on success ``"Successfully registered node" node="<name>"``. Before v1.20
(unstructured klog): ``Attempting to register node <name>``, ``Unable to register node "<name>" with API server:
<error>``, ``Successfully registered node <name>``. Meanwhile kubelet.go's ``"Error getting node" err="node \\"<name>\\"
not found"`` (older: ``node "<name>" not found``) repeats: a consequence, not a cause.

Three or more attempts with a failure between them and no success after the last one is a registration loop:
node.not_ready, or karpenter.node_registration_failed when the text shows the node is Karpenter's (its labels,
taints or a NodeClaim). The title carries the count and the last error, with what that error usually means:
``Unauthorized`` / ``forbidden`` is the node's identity (on EKS the node role's access entry or aws-auth
mapping; aws/karpenter-provider-aws#7508 shows a name the identity may not modify), a dial / timeout error is
the path to the API endpoint. Only ``Error getting node`` between attempts is weaker (medium confidence).
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.catalogue import iter_lines
from playbooks.signatures.model import Signal, trim

MARKERS = ("Attempting to register node",)
MIN_ATTEMPTS = 3
_ATTEMPT = "Attempting to register node"
_UNABLE = "Unable to register node"
_SUCCESS = "Successfully registered node"
_GETTING_NODE = "Error getting node"
_KARPENTER = ("karpenter.sh/", "karpenter.k8s.aws/", "NodeClaim")
_NODE = linear.compile(r'Attempting to register node"? (?:node="(?P<node>[^"\s]{1,253})"|(?P<plain>[\w.-]{1,253}))')
_ERR = linear.compile(r'err="(?P<err>(?:[^"\\]|\\.){1,600})"')
_OLD_ERR = linear.compile(r'Unable to register node "[^"]{1,253}" with API server: (?P<err>.{1,600})$')
_OLD_NOT_FOUND = linear.compile(r'(?P<err>node "[^"]{1,253}" not found)')
_IDENTITY = ("Unauthorized", "forbidden", "not allowed")
_REACH = ("dial tcp", "i/o timeout", "connection refused", "no such host", "no route to host", "TLS handshake timeout",
          "context deadline exceeded", "Client.Timeout")


def _error(line: str) -> str | None:
    found = _ERR.search(line) or _OLD_ERR.search(line) or _OLD_NOT_FOUND.search(line)
    return found.group("err").replace('\\"', '"').strip() if found else None


def _meaning(error: str) -> str:
    if any(word in error for word in _IDENTITY):
        return ": the API server rejects the kubelet's identity (the node role's EKS access entry or aws-auth mapping, or a node name that identity may not use)"
    if any(word in error for word in _REACH):
        return ": the kubelet cannot reach the API server (endpoint access, security groups, DNS or proxy)"
    return ""


def read(text: str, source: str) -> list[Signal]:
    attempts, node = 0, "?"
    failure: tuple[int, str, str] | None = None  # lineno, line, error of the last "Unable to register"
    not_found: tuple[int, str, str] | None = None
    for lineno, raw in enumerate(iter_lines(text), start=1):
        line = raw.strip()
        if _ATTEMPT in line:
            attempts += 1
            found = _NODE.search(line)
            if found:
                node = found.group("node") or found.group("plain")
        elif _SUCCESS in line:
            attempts, failure, not_found = 0, None, None  # registered: whatever came before is over
        elif attempts and _UNABLE in line:
            failure = (lineno, line, _error(line) or "")
        elif attempts and (_GETTING_NODE in line or _OLD_NOT_FOUND.search(line)):
            not_found = (lineno, line, _error(line) or "")
    last = failure or not_found
    if attempts < MIN_ATTEMPTS or last is None:
        return []
    lineno, line, error = last
    karpenter = any(marker in text for marker in _KARPENTER)
    code = "karpenter.node_registration_failed" if karpenter else "node.not_ready"
    confidence = "high" if failure is not None else "medium"
    shown = error if len(error) <= 200 else error[:199] + "…"
    title = f"kubelet failed to register node {node} with the API server ({attempts} attempts); last error: {shown}{_meaning(error)}"
    fields = {"node": node, "attempts": str(attempts), "error": error}
    return [Signal(code=code, severity="error", confidence=confidence, title=title, line=trim(line), source=source,
                   lineno=lineno, fields=fields)]
