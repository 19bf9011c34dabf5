"""The simulated cluster's in-memory object store.

Stored objects are never mutated: every write stores a new dict (copy on write). That lets readers
serialise objects outside the lock, and lets the scale generator share sub-dicts between objects.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable

from sim import access, authn, events, resources, validation
from sim.logs import LogKey, LogStore, pick_container, tail
from sim.patching import STRATEGIC_MERGE_PATCH, PatchBodyError, PatchError, PatchTestFailed, UnsupportedPatchType, apply_patch
from sim.resources import KNOWN_TYPES, ON_DEMAND_TYPES, VERSIONED_TYPES, ApiError, ResourceType
from sim.selectors import FieldSelector, LabelSelector

ObjectKey = tuple[str, str]  # (namespace or "", name)


@dataclass(frozen=True)
class ListPage:
    items: list[dict]
    resource_version: str
    continue_token: str
    remaining_item_count: int | None


def utc_timestamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _encode_continue(*, resource_version: int, after: ObjectKey) -> str:
    raw = json.dumps({"rv": resource_version, "after": list(after)}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_continue(token: str) -> ObjectKey:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        namespace, name = data["after"]
        return (str(namespace), str(name))
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise resources.bad_request(f"continue key is not valid: {exc}") from exc


_CUSTOM_PATCH_TYPES_MESSAGE = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)
# Kinds with no status subresource: their status, if any, is written like any other field.
_NO_STATUS_SUBRESOURCE = frozenset({("", "Event"), ("", "ConfigMap"), ("coordination.k8s.io", "Lease")})


def _through_subresource(rt: ResourceType, *, old: dict, new: dict, subresource: str | None) -> dict:
    """The main resource ignores status changes and /status ignores everything else, as each
    strategy's PrepareForUpdate does (e.g. apiextensions-apiserver pkg/registry/customresource/strategy.go)."""
    if rt.key in _NO_STATUS_SUBRESOURCE:
        return new
    if subresource == "status":
        merged = {k: v for k, v in old.items() if k != "status"}
        merged["metadata"] = {**old["metadata"], "resourceVersion": (new.get("metadata") or {}).get("resourceVersion")}
        if "status" in new:
            merged["status"] = new["status"]
        return merged
    merged = {k: v for k, v in new.items() if k != "status"}
    if "status" in old:
        merged["status"] = old["status"]
    return merged


def _resource_version_required(rt: ResourceType, name: str) -> ApiError:
    message = "Invalid value: 0x0: must be specified for an update"
    cause = {"reason": "FieldValueInvalid", "message": message, "field": "metadata.resourceVersion"}
    qualified = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
    return ApiError(
        code=422,
        reason="Invalid",
        message=f'{qualified} "{name}" is invalid: metadata.resourceVersion: {message}',
        details={"name": name, "group": rt.group, "kind": rt.kind, "causes": [cause]},
    )


def _present(rt: ResourceType, obj: dict) -> dict:
    """Events are stored once and shown in the shape of the API asked (see sim/events.py)."""
    if rt.kind == "Event" and obj.get("apiVersion") != rt.api_version:
        return events.present(obj, rt.api_version)
    return obj


def _json_patch_failed() -> ApiError:
    message = "the server rejected our request due to an error in our request"
    return ApiError(code=422, reason="Invalid", message=message, details={})


def _patched(rt: ResourceType, *, old: dict, patch_type: str, body: object) -> dict:
    try:
        return apply_patch(old, patch_type=patch_type, body=body)
    except PatchBodyError as exc:
        raise resources.bad_request(str(exc)) from exc
    except (PatchTestFailed, PatchError) as exc:
        # apiserver pkg/endpoints/handlers/patch.go (jsonPatcher.applyJSPatch): any failure of
        # patchObj.Apply, a `test` op that does not hold included, is answered by
        # errors.NewGenericServerResponse(422, "", schema.GroupResource{}, "", err.Error(), 0, false),
        # which keeps apimachinery's generic 422 wording and drops the patch library's own message
        # (k8s.io/apimachinery/pkg/api/errors/errors.go).
        raise _json_patch_failed() from exc
    except UnsupportedPatchType as exc:
        raise ApiError(code=415, reason="UnsupportedMediaType", message=str(exc)) from exc


class Cluster:
    """Objects per kind in a dict keyed by (namespace, name), plus a sorted key list for paging.

    The sorted list makes a page of `limit` items cost O(log n + limit) on 100k pods, and one
    namespace is a contiguous slice of it.
    """

    def __init__(self, *, clock: Callable[[], str] = utc_timestamp):
        self._lock = threading.RLock()
        self._clock = clock
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        self._types_by_kind: dict[tuple[str, str], ResourceType] = {}
        self._served: dict[str, str] = {}  # group -> the only version served (scenario api.serve)
        self.forbidden: tuple[access.Rule, ...] = ()  # requests refused with 403 (scenario api.forbidden)
        self.authentication = authn.Authentication()  # tokens -> users, for SelfSubjectReview
        for rt in KNOWN_TYPES:
            self._register(rt)
        self._objects: dict[tuple[str, str], dict[ObjectKey, dict]] = {}
        self._sorted: dict[tuple[str, str], list[ObjectKey]] = {}
        self._logs = LogStore()
        self._revision = 0

    # --- resource types -------------------------------------------------------------------------

    def _register(self, rt: ResourceType) -> None:
        self._types[(rt.group, rt.version, rt.plural)] = rt
        self._types_by_kind.setdefault((rt.group, rt.kind), rt)

    def _is_served(self, rt: ResourceType) -> bool:
        only = self._served.get(rt.group)
        return only is None or only == rt.version

    def serve_only(self, *, group: str, version: str) -> None:
        """Serve `group` at `version` alone (a cluster whose CRDs are older), with that version's kinds."""
        with self._lock:
            self._served[group] = version
            for rt in VERSIONED_TYPES:
                if (rt.group, rt.version) == (group, version):
                    self._types[(rt.group, rt.version, rt.plural)] = rt
                    self._types_by_kind.setdefault((rt.group, rt.kind), rt)

    def forbid(self, rules: Iterable[str]) -> None:
        """Refuse requests to these resources with 403, as RBAC would (see sim/access.py)."""
        self.forbidden = self.forbidden + tuple(access.parse_rule(r) for r in rules)

    def resolve(self, *, group: str, version: str, plural: str) -> ResourceType | None:
        rt = self._types.get((group, version, plural))
        return rt if rt is not None and self._is_served(rt) else None

    def resource_types(self) -> list[ResourceType]:
        with self._lock:
            return [rt for rt in self._types.values() if self._is_served(rt)]

    def type_for(self, obj: dict) -> ResourceType:
        """The served type of an object; kinds outside the table are registered generically."""
        group, version = resources.split_api_version(obj["apiVersion"])
        with self._lock:
            rt = self._types_by_kind.get((group, obj["kind"]))
            if rt is None:
                known = [t for t in (*VERSIONED_TYPES, *ON_DEMAND_TYPES)
                         if (t.group, t.version, t.kind) == (group, version, obj["kind"])]
                rt = known[0] if known else resources.derive_type(obj)
                self._register(rt)
            elif rt.version != version and (group, version, rt.plural) not in self._types:
                self._register(ResourceType(group, version, rt.plural, rt.kind, rt.namespaced))
            return rt

    # --- reads ----------------------------------------------------------------------------------

    def find(self, rt: ResourceType, *, namespace: str | None, name: str) -> dict | None:
        obj = self._objects.get(rt.key, {}).get(((namespace or "") if rt.namespaced else "", name))
        return _present(rt, obj) if obj is not None else None

    def get(self, rt: ResourceType, *, namespace: str | None, name: str) -> dict:
        obj = self.find(rt, namespace=namespace, name=name)
        if obj is None:
            raise resources.not_found(rt.plural, name)
        return obj

    def count(self, rt: ResourceType) -> int:
        return len(self._objects.get(rt.key, {}))

    def list(
        self,
        rt: ResourceType,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelector | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ListPage:
        with self._lock:
            objects = self._objects.get(rt.key, {})
            keys = self._sorted.get(rt.key, [])
            lo, hi = 0, len(keys)
            if namespace:
                lo = bisect.bisect_left(keys, (namespace, ""))
                hi = bisect.bisect_left(keys, (namespace + "\x00", ""))
            if continue_token:
                lo = max(lo, bisect.bisect_right(keys, _decode_continue(continue_token)))
            items: list[dict] = []
            index = lo
            while index < hi and (not limit or len(items) < limit):
                obj = _present(rt, objects[keys[index]])
                index += 1
                if label_selector and not label_selector.matches(obj["metadata"].get("labels")):
                    continue
                if field_selector and not field_selector.matches(obj):
                    continue
                items.append(obj)
            more = bool(limit) and index < hi
            token = _encode_continue(resource_version=self._revision, after=keys[index - 1]) if more else ""
            # Like the real server, only an unfiltered list knows how many items remain.
            unfiltered = label_selector is None and field_selector is None
            remaining = hi - index if more and unfiltered else None
            return ListPage(items, str(self._revision), token, remaining)

    # --- writes ---------------------------------------------------------------------------------

    def _next_revision(self) -> str:
        self._revision += 1
        return str(self._revision)

    def _store(self, rt: ResourceType, key: ObjectKey, obj: dict) -> None:
        bucket = self._objects.setdefault(rt.key, {})
        if key not in bucket:
            bisect.insort(self._sorted.setdefault(rt.key, []), key)
        bucket[key] = obj

    def _new_key(self, rt: ResourceType, obj: dict, namespace: str | None) -> ObjectKey:
        metadata = obj.get("metadata") or {}
        name = metadata.get("name")
        if not name:
            message = f"{rt.kind} is invalid: metadata.name: Required value: name is required"
            raise resources.invalid(plural=rt.plural, name="", message=message)
        if not rt.namespaced:
            return ("", name)
        body_namespace = metadata.get("namespace")
        if namespace and body_namespace and body_namespace != namespace:
            raise resources.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        if not (namespace or body_namespace):
            raise resources.bad_request(f"{rt.plural} must be created in a namespace")
        return (namespace or body_namespace, name)

    def create(self, rt: ResourceType, obj: dict, *, namespace: str | None = None, dry_run: bool = False) -> dict:
        """Store a new object; fills uid, creationTimestamp, resourceVersion and generation."""
        return self._create(rt, obj, namespace=namespace, dry_run=dry_run, keep_sorted=True)

    def _create(
        self, rt: ResourceType, obj: dict, *, namespace: str | None, dry_run: bool, keep_sorted: bool
    ) -> dict:
        with self._lock:
            key = self._new_key(rt, obj, namespace)
            if key in self._objects.get(rt.key, {}):
                raise resources.already_exists(rt.plural, key[1])
            metadata = dict(obj["metadata"])
            if rt.namespaced:
                metadata["namespace"] = key[0]
            # Not setdefault: generating a uuid or timestamp nobody needs doubles bulk-load time.
            if "uid" not in metadata:
                metadata["uid"] = str(uuid.uuid4())
            if "creationTimestamp" not in metadata:
                metadata["creationTimestamp"] = self._clock()
            if "spec" in obj:
                metadata.setdefault("generation", 1)
            api_version = obj.get("apiVersion") or rt.api_version
            stored = {**obj, "apiVersion": api_version, "kind": rt.kind, "metadata": metadata}
            if dry_run:
                return stored
            metadata["resourceVersion"] = self._next_revision()
            if keep_sorted:
                self._store(rt, key, stored)
            else:
                self._objects.setdefault(rt.key, {})[key] = stored
            return stored

    def add(self, obj: dict) -> dict:
        """Load an object as it is (scenario files); its type comes from the object."""
        return self.create(self.type_for(obj), obj)

    def add_all(self, objects: Iterable[dict]) -> int:
        """Bulk load: one sort per kind at the end instead of a sorted insert per object."""
        touched: set[tuple[str, str]] = set()
        count = 0
        with self._lock:
            for obj in objects:
                rt = self.type_for(obj)
                self._create(rt, obj, namespace=None, dry_run=False, keep_sorted=False)
                touched.add(rt.key)
                count += 1
            for key in touched:
                self._sorted[key] = sorted(self._objects[key])
        return count

    def _existing(self, rt: ResourceType, *, namespace: str | None, name: str) -> tuple[ObjectKey, dict]:
        key = ((namespace or "") if rt.namespaced else "", name)
        return key, self.get(rt, namespace=key[0], name=name)

    def _commit_update(
        self, rt: ResourceType, *, key: ObjectKey, old: dict, new: dict, dry_run: bool, subresource: str | None = None
    ) -> dict:
        new = _through_subresource(rt, old=old, new=new, subresource=subresource)
        # Every write of a custom resource is checked against its CRD schema, dry run or not
        # (apiextensions-apiserver pkg/registry/customresource/strategy.go ValidateUpdate).
        validation.check_custom(rt, new, old=old)
        metadata = dict(new.get("metadata") or {})
        if metadata.get("name") != key[1] or (rt.namespaced and metadata.get("namespace", key[0]) != key[0]):
            message = f'{rt.kind} "{key[1]}" is invalid: metadata.name: field is immutable'
            raise resources.invalid(plural=rt.plural, name=key[1], message=message)
        sent_version = metadata.get("resourceVersion")
        old_meta = old["metadata"]
        if sent_version and sent_version != old_meta.get("resourceVersion"):
            raise resources.conflict(rt.plural, key[1])
        for field in ("uid", "creationTimestamp", "namespace"):
            if field in old_meta:
                metadata[field] = old_meta[field]
        if old.get("spec") != new.get("spec"):
            metadata["generation"] = int(old_meta.get("generation", 0)) + 1
        elif "generation" in old_meta:
            metadata["generation"] = old_meta["generation"]
        updated = {**new, "apiVersion": old["apiVersion"], "kind": old["kind"], "metadata": metadata}
        if dry_run:
            metadata["resourceVersion"] = old_meta.get("resourceVersion", "")
            return updated
        metadata["resourceVersion"] = self._next_revision()
        self._store(rt, key, updated)
        return updated

    def replace(
        self,
        rt: ResourceType,
        obj: dict,
        *,
        namespace: str | None,
        name: str,
        dry_run: bool = False,
        subresource: str | None = None,
    ) -> dict:
        """PUT: a stale metadata.resourceVersion in the body is a 409; none means unconditional, except
        for Leases and custom resources, whose strategies refuse unconditional updates (422)."""
        body_name = (obj.get("metadata") or {}).get("name")
        if body_name != name:
            raise resources.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        if (rt.is_custom or rt.key == ("coordination.k8s.io", "Lease")) and not (obj.get("metadata") or {}).get(
            "resourceVersion"
        ):
            raise _resource_version_required(rt, name)
        with self._lock:
            key, old = self._existing(rt, namespace=namespace, name=name)
            return self._commit_update(rt, key=key, old=old, new=obj, dry_run=dry_run, subresource=subresource)

    def patch(
        self,
        rt: ResourceType,
        *,
        namespace: str | None,
        name: str,
        patch_type: str,
        body: object,
        dry_run: bool = False,
        subresource: str | None = None,
    ) -> dict:
        if rt.is_custom and patch_type == STRATEGIC_MERGE_PATCH:
            # apiserver pkg/endpoints/handlers/patch.go: custom resources accept no strategic merge
            # patch (they have no Go struct tags to merge lists by key).
            raise ApiError(code=415, reason="UnsupportedMediaType", message=_CUSTOM_PATCH_TYPES_MESSAGE)
        with self._lock:
            key, old = self._existing(rt, namespace=namespace, name=name)
            new = _patched(rt, old=old, patch_type=patch_type, body=body)
            return self._commit_update(rt, key=key, old=old, new=new, dry_run=dry_run, subresource=subresource)

    def delete(self, rt: ResourceType, *, namespace: str | None, name: str, dry_run: bool = False) -> dict:
        with self._lock:
            key, old = self._existing(rt, namespace=namespace, name=name)
            if not dry_run:
                del self._objects[rt.key][key]
                keys = self._sorted[rt.key]
                keys.pop(bisect.bisect_left(keys, key))
            return old

    # --- container logs -------------------------------------------------------------------------

    def add_log(self, *, namespace: str, pod: str, container: str, previous: bool = False, text: str) -> None:
        """Appends: several scenarios may contribute to one shared controller log."""
        self._logs.append(LogKey(namespace, pod, container, previous), text)

    def read_log(
        self,
        *,
        namespace: str,
        pod: str,
        container: str | None = None,
        previous: bool = False,
        tail_lines: int | None = None,
        limit_bytes: int | None = None,
    ) -> str:
        pod_obj = self.get(self._types[("", "v1", "pods")], namespace=namespace, name=pod)
        key = LogKey(namespace, pod, pick_container(pod_obj, container), previous)
        return tail(self._logs.read(key), tail_lines=tail_lines, limit_bytes=limit_bytes)
