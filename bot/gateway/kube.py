"""Cluster gateway: targeted, bounded reads through the official ``kubernetes`` client.

Every method costs a fixed number of requests whatever the cluster's size: objects are fetched by
name, by label selector on a job, or by field selector on one object; lists of things that grow with
the cluster (pods, nodes, NodeClaims, events) are never read whole. Objects come back as plain dicts
in their REST shape (camelCase), the same shape as the YAML people paste and the scenario files.
"""
from __future__ import annotations

import json
import logging
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import urllib3
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.kube_config import KubeConfigLoader

from bot.errors import ClusterConfigError, ClusterError, ClusterUnreachable, UserError
from bot import cluster_waits as waits
from bot.gateway import eks_token, whoami
from bot.gateway.kubeconfig import ContextInfo, load_kubeconfig, missing_kubeconfig
from bot.gateway.writes import RETRY_WRITE, WriteFailed, check_patch, object_path, path_params
from bot.settings import Settings
from playbooks.analyzers.evidence import event_time
from playbooks.gather import Listed, ReadFailed, is_device_plugin
from playbooks.karpenter import versions
from playbooks.remediations.model import ObjectRef

log = logging.getLogger(__name__)

KARPENTER_GROUP = "karpenter.sh"
AWS_NODECLASS_GROUP = "karpenter.k8s.aws"
AUTO_NODECLASS = ("eks.amazonaws.com", "v1", "nodeclasses")
PYTORCHJOB = ("kubeflow.org", "v1", "pytorchjobs")
# Workloads read through the custom objects API: key -> (group, versions to try in order, plural).
# MPIJob: kubeflow/mpi-operator serves v2beta1, the training-operator v1 (both in kubeflow.org).
# TrainJob: kubeflow/trainer pkg/apis/trainer/v1alpha1; JobSet: kubernetes-sigs/jobset api/jobset/v1alpha2.
WORKLOAD_APIS = {
    "pytorchjob": ("kubeflow.org", ("v1",), "pytorchjobs"),
    "tfjob": ("kubeflow.org", ("v1",), "tfjobs"),
    "mpijob": ("kubeflow.org", ("v2beta1", "v1"), "mpijobs"),
    "jobset": ("jobset.x-k8s.io", ("v1alpha2",), "jobsets"),
    "trainjob": ("trainer.kubeflow.org", ("v1alpha1",), "trainjobs"),
}
# Kinds added after the base RBAC role was written: one gpubot may not list is skipped when searching.
_OPTIONAL_WORKLOADS = ("tfjob", "mpijob", "jobset", "trainjob")
_WORKLOAD_KINDS = {"pytorchjob": "PyTorchJob", "tfjob": "TFJob", "mpijob": "MPIJob", "jobset": "JobSet",
                   "trainjob": "TrainJob"}
LEASE = ("coordination.k8s.io", "v1", "leases")

JOB_LABELS = ("training.kubeflow.org/job-name", "jobset.sigs.k8s.io/jobset-name", "batch.kubernetes.io/job-name",
              "job-name")
# Pods of a job that carry the evidence: not running, not done. Read first when a job is bigger than the
# cap, whatever their names (a field selector on status.phase is served for pods by every API server).
TROUBLED_PODS = "status.phase!=Running,status.phase!=Succeeded"
NOT_TERMINATED = "status.phase!=Succeeded,status.phase!=Failed"
_RETRYABLE = {429, 500, 502, 503, 504}
_DISCOVERY_TTL = 300.0  # CRDs come and go with upgrades; a long-lived bot re-reads now and then


class ReadRefused(ReadFailed, ClusterError):
    """The cluster answered one read with an error (403, 401, 404 for an API it does not serve, 5xx
    after retries). Gathering records it as a gap; resolving the named target reports it as one line."""

    def __init__(self, cluster: str, read: str, *, status: int | None, reason: str, detail: str) -> None:
        ReadFailed.__init__(self, read, reason=reason, detail=detail)
        self.cluster = cluster
        self.status = status
        code = f"{status} " if status else ""
        if status in (401, 403):
            self.args = (f"cluster {cluster} did not let gpubot read {read} ({code}{reason}: {detail}): check the "
                         "credentials and RBAC of the context gpubot uses (kubectl auth can-i get ...)",)
        else:
            self.args = (f"cluster {cluster} could not answer a read of {read} ({code}{reason}: {detail})",)


def connect(settings: Settings, *, context: str | None = None) -> "ClusterGateway":
    """A gateway for ``context`` (or the current one) from the kubeconfig files merged as kubectl
    merges them, or in-cluster config when no kubeconfig exists."""
    context = context or settings.context
    configuration = client.Configuration()
    kubeconfig = load_kubeconfig(settings.kubeconfig)
    if kubeconfig is None:
        if context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
            try:
                config.load_incluster_config(client_configuration=configuration)
            except config.ConfigException as exc:
                raise ClusterConfigError(f"cannot use the in-cluster service account: {exc}") from None
            info = ContextInfo(name=settings.cluster_name or "in-cluster", server=configuration.host, region=None, ec2_endpoint=None)
            return ClusterGateway(settings=settings, info=info, configuration=configuration)
        raise missing_kubeconfig(settings.kubeconfig)
    name = kubeconfig.resolve(context)
    info = kubeconfig.info(name)
    # An EKS token command is answered in-process (no AWS CLI in the image); other exec plugins run.
    tokens = eks_token.token_source(kubeconfig.user(name), fallback_region=info.region)
    if tokens is not None:
        kubeconfig.set_user(name, {"token": tokens.token()})
    try:
        # persist_config off: refreshed credentials are never written back (the root filesystem is read-only).
        loader = KubeConfigLoader(config_dict=kubeconfig.merged, active_context=name, config_base_path=None)
        loader.load_and_set(configuration)
    except (config.ConfigException, OSError, ValueError) as exc:
        where = ":".join(str(p) for p in kubeconfig.paths)
        raise ClusterConfigError(f"cannot load context {name!r} from {where}: {exc}") from None
    if tokens is not None:
        configuration.refresh_api_key_hook = lambda c: c.api_key.__setitem__("BearerToken", f"Bearer {tokens.token()}")
    return ClusterGateway(settings=settings, info=info, configuration=configuration)


class ClusterGateway:
    def __init__(self, *, settings: Settings, info: ContextInfo, configuration: client.Configuration) -> None:
        # Retries are ours (bounded, with backoff, aware of 429); urllib3's own would multiply them.
        configuration.retries = False
        self.settings = settings
        self.info = info
        self.name = info.name
        self._api = client.ApiClient(configuration)
        self.core = client.CoreV1Api(self._api)
        self.apps = client.AppsV1Api(self._api)
        self.batch = client.BatchV1Api(self._api)
        self.custom = client.CustomObjectsApi(self._api)
        self.apis = client.ApisApi(self._api)
        self._discovery: tuple[float, dict[str, list[str]] | None] | None = None
        self._sleep: Callable[[float], None] = time.sleep

    def close(self) -> None:
        self._api.close()

    # -- transport -------------------------------------------------------------------------------

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One API call, answered or reported within ``request_timeout`` overall: retries on 429/5xx
        and connection errors (backoff, Retry-After) share that budget instead of multiplying it."""
        deadline = _Deadline(self.settings.request_timeout)
        with waits.waiting(self.name, deadline.seconds):
            try:
                for attempt in self._retrying(deadline, _retry_read):
                    with attempt:
                        return fn(*args, _request_timeout=deadline.left(), _preload_content=False, **kwargs)
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise ClusterUnreachable(self.name, _reason(exc, deadline.seconds)) from None
        raise AssertionError("unreachable")

    def _retrying(self, deadline: "_Deadline", retryable: Callable[[BaseException], bool]) -> Retrying:
        def delay(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            seconds = self.settings.retry_backoff * (2 ** (state.attempt_number - 1))
            retry_after = (exc.headers or {}).get("Retry-After") if isinstance(exc, ApiException) else None
            try:
                return max(seconds, min(float(retry_after), 10.0)) if retry_after else seconds
            except ValueError:
                return seconds

        def out_of_time(state: RetryCallState) -> bool:
            # Another try must still have time to be answered after the pause before it.
            return deadline.left() - delay(state) < deadline.least_attempt

        return Retrying(retry=retry_if_exception(retryable), wait=delay, reraise=True,
                        stop=stop_after_attempt(self.settings.max_retries + 1) | out_of_time,
                        sleep=lambda seconds: self._sleep(seconds))

    def _json(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        response = self._call(fn, *args, **kwargs)
        return json.loads(response.data or b"{}")

    def _refused(self, read: str, exc: ApiException) -> Exception:
        return _api_error(self.name, read, exc)

    def _get(self, fn: Callable[..., Any], *args: Any, read: str, **kwargs: Any) -> dict[str, Any] | None:
        """GET one object; ``None`` when it does not exist (an API that is not served is an error)."""
        try:
            return self._json(fn, *args, **kwargs)
        except ApiException as exc:
            if exc.status == 404 and _names_an_object(exc):
                return None
            raise self._refused(read, exc) from None

    def _list(self, fn: Callable[..., Any], *args: Any, read: str, max_items: int | None = None,
              missing_ok: bool = False, **kwargs: Any) -> Listed:
        """Follow ``continue`` tokens up to ``max_items`` items (a bound, not a hope); ``more`` on the
        result counts what the cap left out. ``missing_ok``: an API that is not served lists nothing
        (optional add-ons such as Kubeflow) instead of being a failed read."""
        items: list[dict] = []
        token: str | None = None
        page = self.settings.page_size if max_items is None else min(self.settings.page_size, max_items)
        while True:
            if token:
                kwargs["_continue"] = token
            try:
                body = self._json(fn, *args, limit=page, **kwargs)
            except ApiException as exc:
                if exc.status == 404 and missing_ok:
                    return Listed(items)
                raise self._refused(read, exc) from None
            items.extend(body.get("items") or [])
            meta = body.get("metadata") or {}
            token = meta.get("continue")
            if not token:
                return Listed(items)
            if max_items is not None and len(items) >= max_items:
                left = int(meta.get("remainingItemCount") or 0) + len(items) - max_items
                return Listed(items[:max_items], more=max(left, 1))

    # -- discovery -------------------------------------------------------------------------------

    def served_versions(self, group: str) -> list[str] | None:
        """Versions of an API group this cluster serves ([] when not installed); None when discovery
        itself could not be read. One request per gateway, cached for a few minutes."""
        now = time.monotonic()
        if self._discovery is None or now - self._discovery[0] > _DISCOVERY_TTL:
            groups: dict[str, list[str]] | None
            try:
                body = self._json(self.apis.get_api_versions)
                groups = {g.get("name", ""): [v.get("version", "") for v in g.get("versions") or []]
                          for g in body.get("groups") or []}
            except ApiException as exc:
                log.warning("cluster %s: API discovery failed (%s); assuming current API versions", self.name, exc.status)
                groups = None
            self._discovery = (now, groups)
        groups = self._discovery[1]
        return None if groups is None else list(groups.get(group, []))

    def api_versions(self) -> dict[str, str]:
        """The version read for each Karpenter API group (absent: the group is not served)."""
        out = {}
        for group, known in ((KARPENTER_GROUP, versions.KARPENTER_VERSIONS),
                             (AWS_NODECLASS_GROUP, versions.NODECLASS_VERSIONS)):
            version = self._version(group, known=known)
            if version:
                out[group] = version
        return out

    def _version(self, group: str, *, known: tuple[str, ...]) -> str | None:
        served = self.served_versions(group)
        if served is None:
            return known[0]  # discovery unreadable: try the current version and let the read say
        return versions.pick(served, known=known)

    def _karpenter(self, read: str, table: dict) -> tuple[str, str, Callable[[dict], dict]]:
        version = self._version(KARPENTER_GROUP, known=versions.KARPENTER_VERSIONS)
        if version is None:
            served = self.served_versions(KARPENTER_GROUP) or []
            detail = (f"the cluster serves {KARPENTER_GROUP} only at {', '.join(served)}" if served
                      else f"the cluster serves no {KARPENTER_GROUP} API")
            raise ReadRefused(self.name, read, status=404, reason="not installed", detail=detail)
        plural, convert = table[version]
        return version, plural, convert

    # -- reads -----------------------------------------------------------------------------------

    def get_pod(self, namespace: str, name: str) -> dict | None:
        return self._get(self.core.read_namespaced_pod, name, namespace, read=f"pod {namespace}/{name}")

    def get_job(self, namespace: str, name: str) -> dict | None:
        return self._get(self.batch.read_namespaced_job, name, namespace, read=f"job {namespace}/{name}")

    def get_pytorchjob(self, namespace: str, name: str) -> dict | None:
        try:
            return self._get(self.custom.get_namespaced_custom_object, *PYTORCHJOB[:2], namespace, PYTORCHJOB[2],
                             name, read=f"PyTorchJob {namespace}/{name}")
        except ReadRefused as exc:
            if exc.status == 404:
                return None  # Kubeflow is not installed: there is no PyTorchJob of that name
            raise

    def get_workload(self, key: str, namespace: str, name: str) -> dict | None:
        """A TFJob, MPIJob, JobSet, TrainJob or PyTorchJob by name; None when there is none, or when
        its API is not installed (no such kind, no such object). A refused read (403) raises
        ReadRefused: the engine turns it into a gap, never a traceback."""
        group, api_versions, plural = WORKLOAD_APIS[key]
        for version in api_versions:
            try:
                return self._get(self.custom.get_namespaced_custom_object, group, version, namespace, plural, name,
                                 read=f"{_WORKLOAD_KINDS[key]} {namespace}/{name}")
            except ReadRefused as exc:
                if exc.status != 404:
                    raise
        return None

    def get_node(self, name: str) -> dict | None:
        return self._get(self.core.read_node, name, read=f"node {name}")

    def get_nodepool(self, name: str) -> dict | None:
        version, plural, convert = self._karpenter("nodepools", versions.NODEPOOLS)
        obj = self._get(self.custom.get_cluster_custom_object, KARPENTER_GROUP, version, plural, name,
                        read="nodepools")
        return None if obj is None else convert(obj)

    def get_nodeclaim(self, name: str) -> dict | None:
        version, plural, convert = self._karpenter("nodeclaims", versions.NODECLAIMS)
        obj = self._get(self.custom.get_cluster_custom_object, KARPENTER_GROUP, version, plural, name,
                        read="nodeclaims")
        return None if obj is None else convert(obj)

    def get_nodeclass(self, group: str, name: str) -> dict | None:
        if group == AUTO_NODECLASS[0]:
            return self._get(self.custom.get_cluster_custom_object, *AUTO_NODECLASS[:2], AUTO_NODECLASS[2], name,
                             read="nodeclasses")
        if group != AWS_NODECLASS_GROUP:
            return None
        version = self._version(group, known=versions.NODECLASS_VERSIONS)
        if version is None:
            raise ReadRefused(self.name, "nodeclasses", status=404, reason="not installed",
                              detail=f"the cluster serves no {group} API at a version gpubot reads")
        plural, convert = versions.EC2NODECLASSES[version]
        obj = self._get(self.custom.get_cluster_custom_object, group, version, plural, name, read="nodeclasses")
        return None if obj is None else convert(obj)

    def namespace_exists(self, namespace: str) -> bool:
        return self._get(self.core.read_namespace, namespace, read=f"namespace {namespace}") is not None

    def list_nodepools(self) -> Listed:
        # NodePools are few by design (one per workload class), so one page is the normal cost.
        version, plural, convert = self._karpenter("nodepools", versions.NODEPOOLS)
        items = self._list(self.custom.list_cluster_custom_object, KARPENTER_GROUP, version, plural,
                           read="nodepools", max_items=200)
        return Listed([convert(i) for i in items], more=items.more)

    def job_pods(self, namespace: str, job_name: str, *, max_items: int, selectors: list[str] | None = None) -> Listed:
        """Pods of a Kubeflow job, JobSet (and TrainJob) or batch Job: one labelled list, the first
        selector that matches wins (``selectors``: the workload's own, else every job label in turn).

        When the job has more pods than ``max_items``, a second list fetches its pods that are not
        running first, so the pods in trouble are read whatever their names; ``more`` on the result
        counts the pods left out.
        """
        for selector in selectors or [f"{label}={job_name}" for label in JOB_LABELS]:
            pods = self._list(self.core.list_namespaced_pod, namespace, label_selector=selector,
                              max_items=max_items, read="pods of the job")
            if not pods:
                continue
            if not pods.more:
                return pods
            troubled = self._list(self.core.list_namespaced_pod, namespace, label_selector=selector,
                                  field_selector=TROUBLED_PODS, max_items=max_items, read="pods of the job")
            seen = {p["metadata"]["name"] for p in troubled}
            merged = list(troubled) + [p for p in pods if p["metadata"]["name"] not in seen]
            total = len(pods) + pods.more
            return Listed(merged[:max_items], more=max(total - max_items, 1))
        return Listed()

    def pods_by_label(self, namespace: str, selector: str, *, max_items: int) -> Listed:
        return self._list(self.core.list_namespaced_pod, namespace, label_selector=selector, max_items=max_items,
                          read=f"pods matching {selector or 'everything'} in {namespace}")

    def pending_pods(self, namespace: str, *, max_items: int = 50) -> list[dict]:
        return self._list(
            self.core.list_namespaced_pod, namespace, field_selector="status.phase=Pending", max_items=max_items,
            read=f"pods in {namespace}",
        )

    def pods_on_node(self, node_name: str, *, label_selector: str | None = None, max_items: int = 200) -> Listed:
        kwargs = {"label_selector": label_selector} if label_selector else {}
        return self._list(
            self.core.list_pod_for_all_namespaces, field_selector=f"spec.nodeName={node_name}",
            max_items=max_items, read=f"pods on node {node_name}", **kwargs,
        )

    def pods_on_nodes(self, names: list[str], *, max_per_node: int = 1000, parallel: int = 8) -> Listed:
        """Pods not terminated on each of these nodes, as kubectl describe node reads them for "Allocated
        resources" (fieldSelector spec.nodeName=<node>,status.phase!=Succeeded,status.phase!=Failed): one
        request per node, ``parallel`` at once, so the cost grows with these nodes, not with all pods."""
        def on(node: str) -> Listed:
            return self._list(self.core.list_pod_for_all_namespaces, max_items=max_per_node,
                              field_selector=f"spec.nodeName={node},{NOT_TERMINATED}", read=f"pods on node {node}")

        if not names:
            return Listed()
        with ThreadPoolExecutor(max_workers=min(parallel, len(names)), thread_name_prefix="pods-on-nodes") as pool:
            lists = list(pool.map(on, names))
        return Listed([pod for listed in lists for pod in listed], more=sum(listed.more for listed in lists))

    def find_named(self, name: str) -> dict[str, list[str]]:
        """Namespaces holding a pod, Job or training workload called ``name`` (field selector: one request
        each; an API that is not installed lists nothing)."""
        found: dict[str, list[str]] = {}
        selector = f"metadata.name={name}"
        custom = [(key, self.custom.list_cluster_custom_object, (group, versions[0], plural))
                  for key, (group, versions, plural) in WORKLOAD_APIS.items()]
        for kind, fn, args in (
            *custom,
            ("job", self.batch.list_job_for_all_namespaces, ()),
            ("pod", self.core.list_pod_for_all_namespaces, ()),
        ):
            try:
                items = self._list(fn, *args, field_selector=selector, max_items=20, missing_ok=True,
                                   read=f"{kind}s named {name}")
            except ReadRefused as exc:
                if kind in _OPTIONAL_WORKLOADS and exc.status in (401, 403):
                    continue  # a kind gpubot may not list cannot be searched; the others still are
                raise
            for item in items:
                ns = (item.get("metadata") or {}).get("namespace")
                if ns:
                    found.setdefault(kind, []).append(ns)
        # A TrainJob creates a JobSet of its own name: the same workload, named once.
        jobsets = [n for n in found.pop("jobset", []) if n not in found.get("trainjob", [])]
        if jobsets:
            found["jobset"] = jobsets
        return found

    def names_in_namespace(self, namespace: str) -> list[str]:
        """Names of training workloads, Jobs and pods in a namespace (one page each), for "did you mean"."""
        names: list[str] = []
        custom = [(key, self.custom.list_namespaced_custom_object, (group, versions[0], namespace, plural))
                  for key, (group, versions, plural) in WORKLOAD_APIS.items()]
        for key, fn, args in (
            *custom,
            ("job", self.batch.list_namespaced_job, (namespace,)),
            ("pod", self.core.list_namespaced_pod, (namespace,)),
        ):
            try:
                body = self._json_list_page(fn, *args, read=f"names in {namespace}")
            except ReadRefused as exc:
                if key in _OPTIONAL_WORKLOADS and exc.status in (401, 403):
                    continue
                raise
            names.extend(i["metadata"]["name"] for i in body)
        return list(dict.fromkeys(names))

    def _json_list_page(self, fn: Callable[..., Any], *args: Any, read: str) -> list[dict]:
        try:
            return self._json(fn, *args, limit=self.settings.page_size).get("items") or []
        except ApiException as exc:
            if exc.status == 404:
                return []
            raise self._refused(read, exc) from None

    def events_for(self, *, kind: str, name: str, namespace: str | None, max_items: int = 200) -> list[dict]:
        """Events about one object (field selector on involvedObject), oldest first, whichever shape
        they were written in (core/v1 ``lastTimestamp`` or events.k8s.io/v1 ``eventTime`` / ``series``)."""
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        if namespace:
            events = self._list(self.core.list_namespaced_event, namespace, field_selector=selector,
                                max_items=max_items, read="events")
        else:
            events = self._list(self.core.list_event_for_all_namespaces, field_selector=selector,
                                max_items=max_items, read="events")
        return sorted(events, key=event_time)

    def recent_events(self, *, namespace: str, kind: str, max_items: int) -> Listed:
        """Events in one namespace about objects of one kind, whatever their names: the only way to find
        the events of objects already deleted (an evicted pod, an interrupted node, its NodeClaim), which
        outlive them (kube-apiserver --event-ttl, 1h by default). Cluster-scoped objects' events live in
        ``default``. Exactly one request whatever the cluster's size: the cap is the page, and ``more``
        counts what it left out (at least 1 when the server says there is a next page)."""
        try:
            body = self._json(self.core.list_namespaced_event, namespace,
                              field_selector=f"involvedObject.kind={kind}", limit=max_items)
        except ApiException as exc:
            raise self._refused("events", exc) from None
        meta = body.get("metadata") or {}
        more = int(meta.get("remainingItemCount") or 0) or (1 if meta.get("continue") else 0)
        return Listed(sorted(body.get("items") or [], key=event_time), more=more)

    def pod_log(self, namespace: str, name: str, *, container: str | None, previous: bool) -> str | None:
        """The tail of a container's log; ``None`` when there is none (e.g. no previous container)."""
        kwargs: dict[str, Any] = {"tail_lines": self.settings.log_tail_lines, "previous": previous}
        if container:
            kwargs["container"] = container
        try:
            response = self._call(self.core.read_namespaced_pod_log, name, namespace, **kwargs)
        except ApiException as exc:
            if exc.status == 400 or (exc.status == 404 and _names_an_object(exc)):
                return None
            raise self._refused("pod logs", exc) from None
        return response.data.decode("utf-8", errors="replace")

    # -- objects named by reference, and the writes of remediations -------------------------------

    def _raw(self, ref: ObjectRef, method: str, **kwargs: Any) -> Any:
        """One request to the object's own REST path (any kind, built-in or custom, at ref's version)."""
        headers = {"Accept": "application/json", **kwargs.pop("header_params", {})}
        return self._api.call_api(object_path(ref), method, path_params=path_params(ref), header_params=headers,
                                  auth_settings=["BearerToken"], _return_http_data_only=True, **kwargs)

    def read_object(self, ref: ObjectRef) -> dict | None:
        """The object as the API serves it at ``ref.api_version``; None when it does not exist. An API
        the cluster does not serve, or a refused read, raises ReadFailed; no answer, ClusterUnreachable."""
        return self._get(self._raw, ref, "GET", read=str(ref))

    def pods_matching(self, namespace: str, selector: str, *, max_items: int = 500) -> Listed:
        """Pods of a workload by its label selector, capped; ``more`` counts the pods left out."""
        return self.pods_by_label(namespace, selector, max_items=max_items)

    def patch_object(self, ref: ObjectRef, body: Any, *, patch_type: str, dry_run: bool = False) -> dict:
        """PATCH one object with exactly ``patch_type`` as Content-Type (``dryRun=All`` when
        ``dry_run``); returns the object the server answered with, or raises WriteFailed.

        Retried only when the server refused before doing anything (429, 503, no connection made).
        A timeout or a dropped connection after the request went out is WriteFailed("timeout"): the
        write may have happened, so the caller reads the object back instead of sending it again."""
        check_patch(patch_type, body)
        verb = "dry-run patch" if dry_run else "patch"
        query = [("dryRun", "All")] if dry_run else []
        deadline = _Deadline(self.settings.request_timeout)
        timeout = deadline.seconds
        with waits.waiting(self.name, timeout):
            try:
                for attempt in self._retrying(deadline, _retry_write):
                    with attempt:
                        response = self._raw(ref, "PATCH", header_params={"Content-Type": patch_type}, body=body,
                                             query_params=query, _request_timeout=deadline.left(),
                                             _preload_content=False)
                        return json.loads(response.data or b"{}")
            except ApiException as exc:
                raise WriteFailed.from_api(verb, ref, exc) from None
            except urllib3.exceptions.ConnectTimeoutError as exc:  # NewConnectionError too: nothing was sent
                raise ClusterUnreachable(self.name, _reason(exc, timeout)) from None
            except urllib3.exceptions.ReadTimeoutError:
                raise WriteFailed(verb, ref, status=None, reason="timeout",
                                  message=f"no answer within {timeout:g} s; the write may have happened: "
                                          "read the object back before trying again") from None
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                lost = f"the connection failed after the request was sent ({_reason(exc, timeout)})"
                raise WriteFailed(verb, ref, status=None, reason="timeout",
                                  message=f"{lost}; the write may have happened: read the object back before "
                                          "trying again") from None
        raise AssertionError("unreachable")

    # -- who the credentials are ------------------------------------------------------------------

    def who_am_i(self) -> whoami.ClusterIdentity:
        """The user this gateway's credentials are authenticated as: one SelfSubjectReview (``kubectl
        auth whoami``), v1 first, v1beta1 on a 1.27 cluster. Not served at all, refused, or anonymous:
        Refused with one line; nothing is cached, so every action asks again."""
        for version in ("v1", "v1beta1"):
            body = {"apiVersion": f"authentication.k8s.io/{version}", "kind": "SelfSubjectReview"}
            try:
                if version == "v1":
                    authn = client.AuthenticationV1Api(self._api)
                    answer = self._json(authn.create_self_subject_review, body=body)
                else:  # the official client has no v1beta1 class: the same POST on its own path
                    answer = self._json(self._api.call_api, f"/apis/authentication.k8s.io/{version}/{whoami.PLURAL}",
                                        "POST", body=body, auth_settings=["BearerToken"],
                                        header_params=whoami.JSON_HEADERS, _return_http_data_only=True)
            except ApiException as exc:
                if exc.status == 404:
                    continue
                raise whoami.refused(self.name, exc) from None
            return whoami.identity_from_review(self.name, answer)
        raise whoami.unavailable(self.name)

    # -- the Karpenter controller ----------------------------------------------------------------

    def karpenter_namespaces(self) -> tuple[str, ...]:
        """Where to look for the controller: the configured namespace, else the upstream default
        (kube-system, as the Karpenter docs install it) and then the common ``karpenter``."""
        if self.settings.karpenter_namespace:
            return (self.settings.karpenter_namespace,)
        return ("kube-system", "karpenter")

    def karpenter_pods(self, namespace: str, *, max_items: int = 5) -> Listed:
        return self._list(self.core.list_namespaced_pod, namespace, label_selector=self.settings.karpenter_selector,
                          max_items=max_items, read=f"Karpenter controller pods in {namespace}")

    def karpenter_lease(self, namespace: str) -> dict | None:
        """The controller's leader-election Lease.

        kubernetes-sigs/karpenter pkg/operator/operator.go: LeaderElectionID "karpenter-leader-election"
        in the controller's own namespace; holderIdentity is "<pod name>_<uuid>".
        """
        return self._get(self.custom.get_namespaced_custom_object, *LEASE[:2], namespace, LEASE[2],
                         "karpenter-leader-election", read="Karpenter leader Lease")

    def gpu_nodes(self, *, max_items: int = 500) -> tuple[list[dict], int]:
        """GPU nodes by the labels Karpenter (or Auto Mode, or GPU feature discovery) puts on them,
        capped at ``max_items``; the second value counts nodes left out."""
        found: dict[str, dict] = {}
        more = 0
        for selector in ("karpenter.k8s.aws/instance-gpu-count", "eks.amazonaws.com/instance-gpu-count",
                         "nvidia.com/gpu.present=true"):
            try:
                body = self._json(self.core.list_node, label_selector=selector, limit=max_items)
            except ApiException as exc:
                raise self._refused("nodes", exc) from None
            for node in body.get("items") or []:
                found.setdefault(node["metadata"]["name"], node)
            more = max(more, int((body.get("metadata") or {}).get("remainingItemCount") or 0))
        nodes = list(found.values())
        return nodes[:max_items], more + max(len(nodes) - max_items, 0)

    def daemonsets(self, *, max_items: int = 300) -> Listed:
        # DaemonSets are few (one per add-on), whatever the number of nodes.
        return self._list(self.apps.list_daemon_set_for_all_namespaces, max_items=max_items, read="daemonsets")

    def device_plugin_daemonsets(self) -> list[dict]:
        return [d for d in self.daemonsets() if is_device_plugin(d)]

    def get_pvc(self, namespace: str, name: str) -> dict | None:
        return self._get(self.core.read_namespaced_persistent_volume_claim, name, namespace,
                         read="persistent volume claims")

    def get_pv(self, name: str) -> dict | None:
        return self._get(self.core.read_persistent_volume, name, read="persistent volumes")


class _Deadline:
    """One overall limit for a call and its retries; each attempt gets what is left of it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds
        # A retry with less than this left would only turn "refused" into "timeout".
        self.least_attempt = min(1.0, seconds / 4)

    def left(self) -> float:
        return max(self._end - time.monotonic(), 0.001)


def _retry_read(exc: BaseException) -> bool:
    if isinstance(exc, ApiException):
        return exc.status in _RETRYABLE
    return isinstance(exc, (urllib3.exceptions.HTTPError, OSError))


def _retry_write(exc: BaseException) -> bool:
    """Only what surely did nothing: a refusal before acting (429, 503) or no connection made."""
    if isinstance(exc, ApiException):
        return exc.status in RETRY_WRITE
    return isinstance(exc, urllib3.exceptions.ConnectTimeoutError)


def _reason(exc: BaseException, timeout: float) -> str:
    text = str(exc)
    if "timed out" in text.lower() or "timeout" in text.lower():
        return f"timeout after {timeout:g} s"
    if "refused" in text.lower():
        return "connection refused"
    if not text:
        return type(exc).__name__
    # The reason reaches chat: the API server's address (kubeconfig contents) stays in the operator's log.
    text = re.sub(r"https?://[^\s'\")]+", "<api server>", text.splitlines()[0])
    return re.sub(r"host='[^']*'", "host=<api server>", text)[:200]


def _names_an_object(exc: ApiException) -> bool:
    """A 404 about one object (``pods "x" not found``: its Status names it) rather than about the
    path (an API group or resource the cluster does not serve, answered with no object named)."""
    try:
        body = json.loads(exc.body)
    except (TypeError, ValueError):
        return False
    return isinstance(body, dict) and bool((body.get("details") or {}).get("name"))


_REASONS = {401: "unauthorized", 403: "forbidden", 404: "not served"}


def _api_error(cluster: str, read: str, exc: ApiException) -> Exception:
    if exc.status == 400:
        return UserError(f"cluster {cluster} rejected the request: {_status_message(exc)}")
    reason = _REASONS.get(exc.status, f"answered {exc.status} {exc.reason or ''}".strip())
    return ReadRefused(cluster, read, status=exc.status, reason=reason, detail=_status_message(exc))


def _status_message(exc: ApiException) -> str:
    try:
        return str(json.loads(exc.body).get("message", ""))[:300]
    except (TypeError, ValueError, AttributeError):
        return (exc.body if isinstance(exc.body, str) and exc.body else exc.reason or "")[:300].strip()
