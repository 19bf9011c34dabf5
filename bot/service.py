"""One entry point for diagnoses, used alike by the CLI, the Slack handlers and the tests.

Turns what people typed into targets, picks the cluster gateway and EC2 catalogue for a context, runs
the engine, and converts engine lookups that failed into errors that say what to type instead.
"""
from __future__ import annotations

import threading
from typing import Callable

from bot.errors import NotFoundError, UserError
from bot.gateway import ClusterGateway, connect
from bot.gateway.ec2 import Ec2Catalog, catalog_for
from bot.settings import Settings
from bot.targets import parse_target, validate_context, validate_namespace
from bot.textinput import decode_log
from playbooks.engine import NamespaceNotFound, TargetNotFound, diagnose
from playbooks.explain import explain_text
from playbooks.gather import KUBEFLOW_JOB_LABEL, Limits
from playbooks.fleet import NodePoolsReport, NodesReport, nodepools_report, nodes_report
from playbooks.model import Diagnosis, Target
from playbooks.registry import Registry, default_registry


class DiagnosisService:
    def __init__(self, settings: Settings, *, registry: Registry | None = None) -> None:
        self.settings = settings
        self.registry = registry or default_registry()
        self._gateways: dict[str | None, ClusterGateway] = {}
        self._lock = threading.Lock()

    def gateway(self, context: str | None = None) -> ClusterGateway:
        if context is not None:
            validate_context(context)
        with self._lock:
            if context not in self._gateways:
                self._gateways[context] = connect(self.settings, context=context)
            return self._gateways[context]

    def catalog(self, gateway: ClusterGateway) -> Ec2Catalog:
        region = gateway.info.region or self.settings.aws_region
        endpoint = gateway.info.ec2_endpoint or self.settings.ec2_endpoint
        return catalog_for(region=region, endpoint_url=endpoint, timeout=self.settings.request_timeout)

    def diagnose(self, target_text: str, *, namespace: str | None = None, context: str | None = None,
                 on_resolved: Callable[[Target], None] | None = None,
                 progress: Callable[[str], None] | None = None) -> Diagnosis:
        target = parse_target(target_text, namespace=namespace or self.settings.namespace)
        gateway = self.gateway(context)
        limits = Limits(max_pods=self.settings.max_pods_per_job)
        try:
            return diagnose(target, gateway=gateway, catalog=self.catalog(gateway), registry=self.registry,
                            limits=limits, on_resolved=on_resolved, progress=progress)
        except NamespaceNotFound as exc:
            raise UserError(f"{exc} Pass -n with an existing namespace.") from None
        except TargetNotFound as exc:
            raise NotFoundError(str(exc), suggestions=exc.suggestions) from None

    def pending_jobs(self, *, namespace: str | None = None, context: str | None = None) -> list[str]:
        """Jobs (or lone pods) with pending pods in a namespace: what people most often ask about."""
        ns = validate_namespace(namespace or self.settings.namespace)
        names: list[str] = []
        for pod in self.gateway(context).pending_pods(ns, max_items=200):
            labels = pod["metadata"].get("labels") or {}
            job = labels.get(KUBEFLOW_JOB_LABEL) or labels.get("batch.kubernetes.io/job-name") or labels.get("job-name")
            names.append(job or f"pod/{pod['metadata']['name']}")
        return list(dict.fromkeys(names))

    def nodes(self, *, context: str | None = None) -> NodesReport:
        gateway = self.gateway(context)
        nodes, more = gateway.gpu_nodes(max_items=500)
        return nodes_report(nodes, cluster=gateway.name, more=more)

    def nodepools(self, *, context: str | None = None) -> NodePoolsReport:
        gateway = self.gateway(context)
        return nodepools_report(gateway.list_nodepools(), cluster=gateway.name)

    def explain(self, data: bytes, *, source: str = "pasted text") -> Diagnosis:
        text = decode_log(data, max_bytes=self.settings.explain_max_bytes)
        return explain_text(text, source=source)

    def close(self) -> None:
        for gateway in self._gateways.values():
            gateway.close()
        self._gateways.clear()
