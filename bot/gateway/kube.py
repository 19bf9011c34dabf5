"""Cluster gateway: targeted, bounded reads through the official ``kubernetes`` client.

Every method costs a fixed number of requests whatever the cluster's size: objects are fetched by
name, by label selector on a job, or by field selector on one object; lists of things that grow with
the cluster (pods, nodes, NodeClaims, events) are never read whole. Objects come back as plain dicts
in their REST shape (camelCase), the same shape as the YAML people paste and the scenario files.
"""
from __future__ import annotations

import json
import logging
import time
from typing import Any, Callable

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from bot.errors import ClusterConfigError, ClusterError, ClusterUnreachable, UserError
from bot.gateway.kubeconfig import ContextInfo, kubeconfig_path, read_context
from bot.settings import Settings

log = logging.getLogger(__name__)

NODEPOOL = ("karpenter.sh", "v1", "nodepools")
NODECLAIM = ("karpenter.sh", "v1", "nodeclaims")
EC2NODECLASS = ("karpenter.k8s.aws", "v1", "ec2nodeclasses")
AUTO_NODECLASS = ("eks.amazonaws.com", "v1", "nodeclasses")
PYTORCHJOB = ("kubeflow.org", "v1", "pytorchjobs")
NODECLASS_BY_GROUP = {"karpenter.k8s.aws": EC2NODECLASS, "eks.amazonaws.com": AUTO_NODECLASS}

JOB_LABELS = ("training.kubeflow.org/job-name", "batch.kubernetes.io/job-name", "job-name")
_RETRYABLE = {429, 500, 502, 503, 504}


def connect(settings: Settings, *, context: str | None = None) -> "ClusterGateway":
    """A gateway for ``context`` (or the current one), or in-cluster config when no kubeconfig exists."""
    context = context or settings.context
    configuration = client.Configuration()
    try:
        path = kubeconfig_path(settings.kubeconfig)
    except ClusterConfigError:
        if context is None:
            try:
                config.load_incluster_config(client_configuration=configuration)
            except config.ConfigException:
                raise ClusterConfigError(
                    "no kubeconfig found and not running in a cluster: set KUBECONFIG or pass --kubeconfig"
                ) from None
            info = ContextInfo(name="in-cluster", server=configuration.host, region=None, ec2_endpoint=None)
            return ClusterGateway(settings=settings, info=info, configuration=configuration)
        raise
    info = read_context(path, context)
    try:
        config.load_kube_config(config_file=str(path), context=info.name, client_configuration=configuration)
    except (config.ConfigException, OSError, ValueError) as exc:
        raise ClusterConfigError(f"cannot load context {info.name!r} from {path}: {exc}") from None
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

    def close(self) -> None:
        self._api.close()

    # -- transport -------------------------------------------------------------------------------

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One API call: timeout, bounded retries with backoff on 429/5xx and connection errors."""
        timeout = self.settings.request_timeout
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            try:
                return fn(*args, _request_timeout=timeout, _preload_content=False, **kwargs)
            except ApiException as exc:
                if exc.status in _RETRYABLE and attempt + 1 < attempts:
                    self._sleep(attempt, exc)
                    continue
                raise
            except urllib3.exceptions.ReadTimeoutError:
                if attempt + 1 < attempts:
                    continue
                raise ClusterUnreachable(self.name, f"timeout after {timeout:g} s") from None
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                if attempt + 1 < attempts:
                    self._sleep(attempt, None)
                    continue
                raise ClusterUnreachable(self.name, _reason(exc, timeout)) from None
        raise AssertionError("unreachable")

    def _sleep(self, attempt: int, exc: ApiException | None) -> None:
        delay = self.settings.retry_backoff * (2**attempt)
        retry_after = (exc.headers or {}).get("Retry-After") if exc is not None else None
        if retry_after:
            try:
                delay = max(delay, min(float(retry_after), 10.0))
            except ValueError:
                pass
        time.sleep(delay)

    def _json(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        response = self._call(fn, *args, **kwargs)
        return json.loads(response.data or b"{}")

    def _get(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        """GET one object; ``None`` when it does not exist."""
        try:
            return self._json(fn, *args, **kwargs)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise _api_error(self.name, exc) from None

    def _list(self, fn: Callable[..., Any], *args: Any, max_items: int | None = None, **kwargs: Any) -> list[dict]:
        """Follow ``continue`` tokens up to ``max_items`` items (a bound, not a hope)."""
        items: list[dict] = []
        token: str | None = None
        page = self.settings.page_size if max_items is None else min(self.settings.page_size, max_items)
        while True:
            if token:
                kwargs["_continue"] = token
            try:
                body = self._json(fn, *args, limit=page, **kwargs)
            except ApiException as exc:
                if exc.status == 404:
                    return items  # the API group is not installed (e.g. no Kubeflow): nothing to list
                raise _api_error(self.name, exc) from None
            items.extend(body.get("items") or [])
            token = (body.get("metadata") or {}).get("continue")
            if not token or (max_items is not None and len(items) >= max_items):
                return items if max_items is None else items[:max_items]

    # -- reads -----------------------------------------------------------------------------------

    def get_pod(self, namespace: str, name: str) -> dict | None:
        return self._get(self.core.read_namespaced_pod, name, namespace)

    def get_job(self, namespace: str, name: str) -> dict | None:
        return self._get(self.batch.read_namespaced_job, name, namespace)

    def get_pytorchjob(self, namespace: str, name: str) -> dict | None:
        return self._get(self.custom.get_namespaced_custom_object, *PYTORCHJOB[:2], namespace, PYTORCHJOB[2], name)

    def get_node(self, name: str) -> dict | None:
        return self._get(self.core.read_node, name)

    def get_nodepool(self, name: str) -> dict | None:
        return self._get(self.custom.get_cluster_custom_object, *NODEPOOL[:2], NODEPOOL[2], name)

    def get_nodeclaim(self, name: str) -> dict | None:
        return self._get(self.custom.get_cluster_custom_object, *NODECLAIM[:2], NODECLAIM[2], name)

    def get_nodeclass(self, group: str, name: str) -> dict | None:
        coords = NODECLASS_BY_GROUP.get(group)
        if coords is None:
            return None
        return self._get(self.custom.get_cluster_custom_object, *coords[:2], coords[2], name)

    def namespace_exists(self, namespace: str) -> bool:
        return self._get(self.core.read_namespace, namespace) is not None

    def list_nodepools(self) -> list[dict]:
        # NodePools are few by design (one per workload class), so one page is the normal cost.
        return self._list(self.custom.list_cluster_custom_object, *NODEPOOL[:2], NODEPOOL[2], max_items=200)

    def job_pods(self, namespace: str, job_name: str, *, max_items: int) -> list[dict]:
        """Pods of a Kubeflow or batch job: one labelled list, the first selector that matches wins."""
        for label in JOB_LABELS:
            pods = self._list(
                self.core.list_namespaced_pod, namespace, label_selector=f"{label}={job_name}", max_items=max_items
            )
            if pods:
                return pods
        return []

    def pods_by_label(self, namespace: str, selector: str, *, max_items: int) -> list[dict]:
        return self._list(self.core.list_namespaced_pod, namespace, label_selector=selector, max_items=max_items)

    def pending_pods(self, namespace: str, *, max_items: int = 50) -> list[dict]:
        return self._list(
            self.core.list_namespaced_pod, namespace, field_selector="status.phase=Pending", max_items=max_items
        )

    def pods_on_node(self, node_name: str, *, label_selector: str | None = None, max_items: int = 200) -> list[dict]:
        kwargs = {"label_selector": label_selector} if label_selector else {}
        return self._list(
            self.core.list_pod_for_all_namespaces, field_selector=f"spec.nodeName={node_name}",
            max_items=max_items, **kwargs,
        )

    def find_named(self, name: str) -> dict[str, list[str]]:
        """Namespaces holding a pod, Job or PyTorchJob called ``name`` (field selector: one request each)."""
        found: dict[str, list[str]] = {}
        selector = f"metadata.name={name}"
        for kind, fn, args in (
            ("pytorchjob", self.custom.list_cluster_custom_object, PYTORCHJOB),
            ("job", self.batch.list_job_for_all_namespaces, ()),
            ("pod", self.core.list_pod_for_all_namespaces, ()),
        ):
            for item in self._list(fn, *args, field_selector=selector, max_items=20):
                ns = (item.get("metadata") or {}).get("namespace")
                if ns:
                    found.setdefault(kind, []).append(ns)
        return found

    def names_in_namespace(self, namespace: str) -> list[str]:
        """Names of PyTorchJobs, Jobs and pods in a namespace (one page each), for "did you mean"."""
        names: list[str] = []
        for fn, args in (
            (self.custom.list_namespaced_custom_object, (*PYTORCHJOB[:2], namespace, PYTORCHJOB[2])),
            (self.batch.list_namespaced_job, (namespace,)),
            (self.core.list_namespaced_pod, (namespace,)),
        ):
            body = self._json_list_page(fn, *args)
            names.extend(i["metadata"]["name"] for i in body)
        return list(dict.fromkeys(names))

    def _json_list_page(self, fn: Callable[..., Any], *args: Any) -> list[dict]:
        try:
            return self._json(fn, *args, limit=self.settings.page_size).get("items") or []
        except ApiException as exc:
            if exc.status == 404:
                return []
            raise _api_error(self.name, exc) from None

    def events_for(self, *, kind: str, name: str, namespace: str | None, max_items: int = 200) -> list[dict]:
        """Events about one object (field selector on involvedObject), oldest first."""
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        if namespace:
            events = self._list(self.core.list_namespaced_event, namespace, field_selector=selector, max_items=max_items)
        else:
            events = self._list(self.core.list_event_for_all_namespaces, field_selector=selector, max_items=max_items)
        return sorted(events, key=_event_time)

    def pod_log(self, namespace: str, name: str, *, container: str | None, previous: bool) -> str | None:
        """The tail of a container's log; ``None`` when there is none (e.g. no previous container)."""
        kwargs: dict[str, Any] = {"tail_lines": self.settings.log_tail_lines, "previous": previous}
        if container:
            kwargs["container"] = container
        try:
            response = self._call(self.core.read_namespaced_pod_log, name, namespace, **kwargs)
        except ApiException as exc:
            if exc.status in (400, 404):
                return None
            raise _api_error(self.name, exc) from None
        return response.data.decode("utf-8", errors="replace")

    def karpenter_log(self) -> tuple[str | None, str | None]:
        """(log text, pod name) of the Karpenter controller; (None, None) when it does not run here."""
        ns = self.settings.karpenter_namespace
        pods = self._list(self.core.list_namespaced_pod, ns, label_selector=self.settings.karpenter_selector, max_items=5)
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"] or pods
        if not running:
            return None, None
        pod = running[0]
        name = pod["metadata"]["name"]
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        container = "controller" if "controller" in containers else (containers[0] if containers else None)
        return self.pod_log(ns, name, container=container, previous=False), f"{ns}/{name}"

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
                raise _api_error(self.name, exc) from None
            for node in body.get("items") or []:
                found.setdefault(node["metadata"]["name"], node)
            more = max(more, int((body.get("metadata") or {}).get("remainingItemCount") or 0))
        nodes = list(found.values())
        return nodes[:max_items], more + max(len(nodes) - max_items, 0)

    def device_plugin_daemonsets(self) -> list[dict]:
        # DaemonSets are few (one per add-on), whatever the number of nodes.
        items = self._list(self.apps.list_daemon_set_for_all_namespaces, max_items=300)
        return [d for d in items if _is_device_plugin(d)]


def _is_device_plugin(ds: dict) -> bool:
    meta = ds.get("metadata") or {}
    text = " ".join([meta.get("name", ""), *((meta.get("labels") or {}).values())]).lower()
    return "device-plugin" in text and ("nvidia" in text or "efa" in text or "neuron" in text)


def _event_time(event: dict) -> str:
    return str(
        event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp")
        or (event.get("metadata") or {}).get("creationTimestamp") or ""
    )


def _reason(exc: BaseException, timeout: float) -> str:
    text = str(exc)
    if "timed out" in text.lower() or "timeout" in text.lower():
        return f"timeout after {timeout:g} s"
    if "refused" in text.lower():
        return "connection refused"
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _api_error(cluster: str, exc: ApiException) -> Exception:
    if exc.status in (401, 403):
        return ClusterError(
            f"cluster {cluster} refused the request ({exc.status} {exc.reason}): check the credentials "
            "and RBAC of the context gpubot uses"
        )
    if exc.status == 400:
        return UserError(f"cluster {cluster} rejected the request: {_status_message(exc)}")
    return ClusterError(f"cluster {cluster} answered {exc.status} {exc.reason}: {_status_message(exc)}")


def _status_message(exc: ApiException) -> str:
    try:
        return str(json.loads(exc.body).get("message", ""))[:300]
    except (TypeError, ValueError, AttributeError):
        return (exc.reason or "")[:300]
