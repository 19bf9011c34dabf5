"""The reads of a sweep: server-side selectors and pagination, so a sweep costs a number of list
requests that grows with the GPU part of the cluster, not with all its pods.

- GPU nodes: nodes by label, Karpenter's (or Auto Mode's) instance-gpu-count, else GPU feature
  discovery's nvidia.com/gpu.present; each later selector excludes the earlier labels, so a node is
  listed once;
- warnings about nodes: events, fieldSelector involvedObject.kind=Node,type=Warning, in every
  namespace: a tenant's claim about a node is shown as one, and who wrote each event decides what it
  counts for (playbooks/speakers.py);
- pending pods: pods in every namespace, fieldSelector status.phase=Pending;
- NodePools: at the karpenter.sh version the cluster serves, converted to v1;
- NodeClaims: labelSelector karpenter.sh/nodepool in (the GPU NodePools);
- running pods of a node: fieldSelector spec.nodeName=<node>,status.phase=Running, only for nodes of
  NodePools whose consolidation can disrupt them.

Every list follows ``continue`` up to a cap; ``more`` on the result says a cap cut it. Requests go
through the gateway's own transport (timeouts, retries, refusals as ReadRefused).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from kubernetes.client.exceptions import ApiException

from bot.gateway.kube import KARPENTER_GROUP, ClusterGateway
from playbooks.gather import Listed
from playbooks.karpenter import versions

# Label selectors for GPU nodes, each excluding the labels before it so a node is listed once.
GPU_NODE_SELECTORS = (
    "karpenter.k8s.aws/instance-gpu-count",
    "eks.amazonaws.com/instance-gpu-count,!karpenter.k8s.aws/instance-gpu-count",
    "nvidia.com/gpu.present=true,!karpenter.k8s.aws/instance-gpu-count,!eks.amazonaws.com/instance-gpu-count",
)
NODE_WARNINGS = "involvedObject.kind=Node,type=Warning"
PENDING = "status.phase=Pending"


class SweepReads:
    """Reads for one sweep through ``gateway``; ``requests`` counts the API requests they made
    (thread-safe: the pods of several nodes are read at once)."""

    def __init__(self, gateway: ClusterGateway) -> None:
        self.gateway = gateway
        self.requests = 0
        self._lock = threading.Lock()

    def _list(self, fn: Callable[..., Any], *args: Any, read: str, max_items: int, **kwargs: Any) -> Listed:
        """Follow ``continue`` tokens up to ``max_items`` items, counting each page."""
        page = min(self.gateway.settings.page_size, max_items)
        items: list[dict] = []
        token: str | None = None
        while True:
            if token:
                kwargs["_continue"] = token
            with self._lock:
                self.requests += 1
            try:
                body = self.gateway._json(fn, *args, limit=page, **kwargs)
            except ApiException as exc:
                raise self.gateway._refused(read, exc) from None
            items.extend(body.get("items") or [])
            meta = body.get("metadata") or {}
            token = meta.get("continue")
            if not token:
                return Listed(items)
            if len(items) >= max_items:
                left = int(meta.get("remainingItemCount") or 0) + len(items) - max_items
                return Listed(items[:max_items], more=max(left, 1))

    def gpu_nodes(self, *, max_items: int) -> Listed:
        nodes: list[dict] = []
        more = 0
        for selector in GPU_NODE_SELECTORS:
            listed = self._list(self.gateway.core.list_node, label_selector=selector, read="nodes",
                                max_items=max_items)
            nodes.extend(listed)
            more += listed.more
        return Listed(nodes[:max_items], more=more + max(len(nodes) - max_items, 0))

    def node_warnings(self, *, max_items: int) -> Listed:
        return self._list(self.gateway.core.list_event_for_all_namespaces, field_selector=NODE_WARNINGS,
                          read="events", max_items=max_items)

    def pending_pods(self, *, max_items: int) -> Listed:
        return self._list(self.gateway.core.list_pod_for_all_namespaces, field_selector=PENDING,
                          read="pods", max_items=max_items)

    def running_pods_on(self, node: str, *, max_items: int) -> Listed:
        return self._list(self.gateway.core.list_pod_for_all_namespaces,
                          field_selector=f"spec.nodeName={node},status.phase=Running",
                          read=f"pods on node {node}", max_items=max_items)

    def nodepools(self, *, max_items: int) -> Listed:
        version, plural, convert = self.gateway._karpenter("nodepools", versions.NODEPOOLS)
        listed = self._list(self.gateway.custom.list_cluster_custom_object, KARPENTER_GROUP, version, plural,
                            read="nodepools", max_items=max_items)
        return Listed([convert(i) for i in listed], more=listed.more)

    def nodeclaims(self, nodepools: list[str], *, max_items: int) -> Listed:
        """NodeClaims of these NodePools (v1alpha5 Machines of these Provisioners), converted to v1."""
        if not nodepools:
            return Listed()
        version, plural, convert = self.gateway._karpenter("nodeclaims", versions.NODECLAIMS)
        label = versions.PROVISIONER_LABEL if version == "v1alpha5" else versions.NODEPOOL_LABEL
        selector = f"{label} in ({','.join(sorted(nodepools))})"
        listed = self._list(self.gateway.custom.list_cluster_custom_object, KARPENTER_GROUP, version, plural,
                            label_selector=selector, read="nodeclaims", max_items=max_items)
        return Listed([convert(i) for i in listed], more=listed.more)
