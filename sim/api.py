"""The Kubernetes REST API over a Cluster: paths and verbs in, (status, body) out. No sockets here."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from sim import access, authn, discovery, events, resources, validation
from sim.cluster import Cluster
from sim.resources import ApiError, ResourceType
from sim.selectors import SelectorError, parse_field_selector, parse_label_selector

JSON = "application/json"
TEXT = "text/plain"

# The groups whose delete returns a Status; pods, services and custom objects return the object.
_BUILTIN_GROUPS = frozenset({"", "apps", "batch", "coordination.k8s.io", "events.k8s.io"})
_DELETE_RETURNS_OBJECT = frozenset({("", "Pod"), ("", "Service")})


@dataclass
class Response:
    status: int
    body: object  # dict -> JSON, str -> text
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: bytes
    authorization: str = ""  # the Authorization header: who the request comes from (sim/authn.py)


@dataclass(frozen=True)
class _Target:
    rt: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None


def error_response(error: ApiError) -> Response:
    return Response(error.code, error.status())


def _not_found_path() -> ApiError:
    message = "the server could not find the requested resource"
    return ApiError(code=404, reason="NotFound", message=message, details={})


def _method_not_allowed() -> ApiError:
    message = "the server does not allow this method on the requested resource"
    return ApiError(code=405, reason="MethodNotAllowed", message=message)


def _parse_target(cluster: Cluster, *, group: str, version: str, rest: list[str]) -> _Target:
    namespace_subresource = group == "" and len(rest) == 3 and rest[2] in ("status", "finalize")
    if rest[0] == "namespaces" and len(rest) >= 3 and not namespace_subresource:
        namespace, plural, tail = rest[1], rest[2], rest[3:]
    else:
        namespace, plural, tail = None, rest[0], rest[1:]
    if len(tail) > 2:
        raise _not_found_path()
    rt = cluster.resolve(group=group, version=version, plural=plural)
    if rt is None or (namespace is not None and not rt.namespaced):
        raise _not_found_path()
    name = tail[0] if tail else None
    subresource = tail[1] if len(tail) > 1 else None
    if subresource not in (None, "status") and not (rt.kind == "Pod" and subresource == "log"):
        raise _not_found_path()
    return _Target(rt, namespace, name, subresource)


def _int_param(query: dict[str, str], name: str) -> int | None:
    raw = query.get(name)
    if raw in (None, ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        raise resources.bad_request(f"{name}: invalid value {raw!r}: must be an integer") from None
    if value < 0:
        raise resources.bad_request(f"{name}: invalid value {value}: must be non-negative")
    return value


def _bool_param(query: dict[str, str], name: str) -> bool:
    # Go's strconv.ParseBool spellings; the Python client sends "True".
    return query.get(name, "") in ("1", "t", "T", "true", "TRUE", "True")


def _dry_run(query: dict[str, str]) -> bool:
    value = query.get("dryRun")
    if value in (None, ""):
        return False
    if value != "All":
        raise resources.bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return True


def _json_body(request: Request) -> object:
    try:
        return json.loads(request.body or b"null")
    except ValueError as exc:
        raise resources.bad_request(f"the body of the request could not be decoded as JSON: {exc}") from exc


@dataclass(frozen=True)
class _CoreEventFields:
    """kube-apiserver matches event field selectors on the stored (core) Event, whichever API lists it."""

    inner: object

    def matches(self, obj: dict) -> bool:
        return self.inner.matches(events.to_core(obj))  # type: ignore[attr-defined]


def _list(cluster: Cluster, target: _Target, query: dict[str, str]) -> Response:
    if _bool_param(query, "watch"):
        raise resources.bad_request("watch is not supported by the simulated API server")
    try:
        labels = parse_label_selector(query.get("labelSelector"))
        fields = parse_field_selector(query.get("fieldSelector"), kind=target.rt.kind)
        if fields is not None and target.rt.group == "events.k8s.io":
            fields = _CoreEventFields(fields)
    except SelectorError as exc:
        raise resources.bad_request(str(exc)) from exc
    page = cluster.list(
        target.rt,
        namespace=target.namespace,
        label_selector=labels,
        field_selector=fields,
        limit=_int_param(query, "limit"),
        continue_token=query.get("continue") or None,
    )
    metadata: dict = {"resourceVersion": page.resource_version}
    if page.continue_token:
        metadata["continue"] = page.continue_token
    if page.remaining_item_count is not None:
        metadata["remainingItemCount"] = page.remaining_item_count
    kind, api_version = f"{target.rt.kind}List", target.rt.api_version
    return Response(200, {"kind": kind, "apiVersion": api_version, "metadata": metadata, "items": page.items})


def _read_log(cluster: Cluster, target: _Target, query: dict[str, str]) -> Response:
    text = cluster.read_log(
        namespace=target.namespace or "",
        pod=target.name or "",
        container=query.get("container") or None,
        previous=_bool_param(query, "previous"),
        tail_lines=_int_param(query, "tailLines"),
        limit_bytes=_int_param(query, "limitBytes"),
    )
    return Response(200, text, TEXT)


def _deleted(target: _Target, obj: dict) -> Response:
    rt = target.rt
    if rt.group not in _BUILTIN_GROUPS or rt.key in _DELETE_RETURNS_OBJECT:
        return Response(200, obj)
    metadata = obj["metadata"]
    details = {"name": metadata["name"], "group": rt.group, "kind": rt.plural, "uid": metadata.get("uid")}
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
    return Response(200, status)


def _object_verb(cluster: Cluster, target: _Target, request: Request) -> Response:
    rt, namespace, name, query = target.rt, target.namespace, target.name or "", request.query
    if request.method == "GET":
        if target.subresource == "log":
            return _read_log(cluster, target, query)
        return Response(200, cluster.get(rt, namespace=namespace, name=name))
    if target.subresource == "log":
        raise _method_not_allowed()
    if request.method == "PUT":
        body = _json_body(request)
        if not isinstance(body, dict):
            raise resources.bad_request("the body of a PUT must be a JSON object")
        replaced = cluster.replace(
            rt, body, namespace=namespace, name=name, dry_run=_dry_run(query), subresource=target.subresource
        )
        return Response(200, replaced)
    if request.method == "PATCH":
        patched = cluster.patch(
            rt,
            namespace=namespace,
            name=name,
            patch_type=request.content_type,
            body=_json_body(request),
            dry_run=_dry_run(query),
            subresource=target.subresource,
        )
        return Response(200, patched)
    if request.method == "DELETE":
        return _deleted(target, cluster.delete(rt, namespace=namespace, name=name, dry_run=_dry_run(query)))
    raise _method_not_allowed()


def _collection_verb(cluster: Cluster, target: _Target, request: Request) -> Response:
    if request.method == "GET":
        return _list(cluster, target, request.query)
    if request.method == "POST":
        body = _json_body(request)
        if not isinstance(body, dict):
            raise resources.bad_request("the body of a POST must be a JSON object")
        dry_run = _dry_run(request.query)
        if dry_run:
            validation.check_custom(target.rt, {**body, "metadata": body.get("metadata") or {}})
        created = cluster.create(target.rt, body, namespace=target.namespace, dry_run=dry_run)
        return Response(201, created)
    raise _method_not_allowed()


def _self_subject_review(cluster: Cluster, *, version: str, request: Request) -> Response:
    if version not in cluster.authentication.versions:
        raise _not_found_path()
    access.check(cluster.forbidden, method=request.method, group=authn.GROUP, plural=authn.PLURAL,
                 subresource=None, namespace=None, name=None)
    if request.method != "POST":
        raise _method_not_allowed()
    if not isinstance(_json_body(request), dict):
        raise resources.bad_request("the body of a POST must be a JSON object")
    return Response(201, cluster.authentication.review(version=version, authorization=request.authorization))


def _resource_request(
    cluster: Cluster, *, group: str, version: str, rest: list[str], request: Request
) -> Response:
    if group == authn.GROUP and rest == [authn.PLURAL]:
        return _self_subject_review(cluster, version=version, request=request)
    if (group, version, rest) == (access.REVIEW_GROUP, "v1", [access.REVIEW_PLURAL]) and request.method == "POST":
        body = _json_body(request)
        if not isinstance(body, dict):
            raise resources.bad_request("the body of a POST must be a JSON object")
        return Response(201, access.review(cluster.forbidden, body))
    target = _parse_target(cluster, group=group, version=version, rest=rest)
    access.check(cluster.forbidden, method=request.method, group=target.rt.group, plural=target.rt.plural,
                 subresource=target.subresource, namespace=target.namespace, name=target.name,
                 watch=_bool_param(request.query, "watch"))
    if target.name is None:
        return _collection_verb(cluster, target, request)
    return _object_verb(cluster, target, request)


def handle(cluster: Cluster, request: Request) -> Response:
    """Answer one Kubernetes API request; errors come back as Status objects, never exceptions."""
    try:
        segments = [s for s in request.path.split("/") if s]
        if request.path.rstrip("/") in ("/healthz", "/livez", "/readyz"):
            return Response(200, "ok", TEXT)
        if request.path.rstrip("/") == "/version":
            return Response(200, discovery.version())
        if segments[:1] == ["api"] and len(segments) >= 2:
            group, version, rest = "", segments[1], segments[2:]
        elif segments[:1] == ["apis"] and len(segments) >= 3:
            group, version, rest = segments[1], segments[2], segments[3:]
        else:
            found = discovery.answer(cluster, segments)
            if found is None:
                raise _not_found_path()
            return Response(200, found)
        if not rest:
            found = discovery.resource_list(cluster, group=group, version=version)
            if found is None:
                raise _not_found_path()
            return Response(200, found)
        return _resource_request(cluster, group=group, version=version, rest=rest, request=request)
    except ApiError as error:
        return error_response(error)
