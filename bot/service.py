"""One entry point for diagnoses, used alike by the CLI, the Slack handlers and the tests.

Turns what people typed into targets, checks every read against the policy for who asks and where,
picks the cluster gateway and EC2 catalogue for a context, runs the engine, and converts engine
lookups that failed into errors that say what to type instead.

The policy is enforced here and only here: a Slack surface passes an :class:`Asker` (user and
channel), and the service refuses, before anything is read, what the policy does not open to that
person in that channel. Lookups that search (a bare name, "did you mean", pending jobs) see only
namespaces the asker may read. The CLI passes no asker: its user holds the kubeconfig already.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from bot.errors import ClusterConfigError, ClusterError, NotFoundError, Refused, UserError
from bot.gateway import ClusterGateway, connect
from bot.gateway.ec2 import Ec2Catalog, catalog_for
from bot.gateway.prometheus import PrometheusGpuMetrics
from bot.observe import timed_diagnosis
from bot.settings import Settings
from bot.targets import parse_target, validate_context, validate_namespace
from bot.textinput import decode_log
from playbooks.analyzers.owners import OWNER_KINDS
from playbooks.engine import NamespaceNotFound, TargetNotFound, diagnose
from playbooks.explain import explain_text
from playbooks.gather import KUBEFLOW_JOB_LABEL, Limits
from playbooks.fleet import NodePoolsReport, NodesReport, nodepools_report, nodes_report
from playbooks.model import Diagnosis, Remediation, Target
from playbooks.registry import Registry, default_registry
from playbooks.scope import mask_other_namespaces
from bot.policy import Access

if TYPE_CHECKING:
    from bot.policy.source import PolicySource

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Asker:
    """Who asks, and where: the Slack user and the conversation (channel, DM; None for App Home)."""

    user: str | None
    channel: str | None


class DiagnosisService:
    def __init__(self, settings: Settings, *, registry: Registry | None = None,
                 policy: "PolicySource | None" = None) -> None:
        self.settings = settings
        self.registry = registry or default_registry()
        self._policy = policy
        self._gateways: dict[str | None, ClusterGateway] = {}
        self._lock = threading.Lock()
        # Optional: diagnoses add the GPUs' utilisation and memory where a Prometheus is configured.
        self.gpu_metrics = PrometheusGpuMetrics(settings.prometheus_url, timeout=settings.request_timeout) \
            if settings.prometheus_url else None

    # -- who may read what ------------------------------------------------------------------------

    @property
    def policy(self) -> "PolicySource":
        """Loaded on first use: the CLI never needs it; the Slack app loads it at start-up (create_app)."""
        if self._policy is None:
            from bot.policy.source import PolicySource

            with self._lock:
                if self._policy is None:
                    self._policy = PolicySource.from_settings(self.settings)
        return self._policy

    def _trusted_node_reporters(self) -> frozenset[str]:
        """The policy's namespaces trusted to speak for nodes, where a policy is loaded (the Slack app loads it
        at start-up; the CLI does not read one and trusts only what it sees installed)."""
        return self._policy.current().trusted_node_reporters if self._policy is not None else frozenset()

    def access(self, asker: Asker | None) -> Access:
        if asker is None:
            return Access.everything(default_namespace=self.settings.namespace)
        fallback = self.settings.channel_namespaces.get(asker.channel or "") or self.settings.namespace
        return self.policy.current().access(user=asker.user, channel=asker.channel, fallback_namespace=fallback)

    def check_read(self, asker: Asker | None, *, cluster: str | None, namespace: str | None) -> Access:
        """Refuse (one line, nothing revealed) unless ``asker`` may read ``namespace`` (None: a cluster-
        scoped object) of ``cluster`` (None: the default cluster)."""
        access = self.access(asker)
        if access.unrestricted:
            return access
        name = self._cluster_name(cluster, asker)
        if not access.may_read(name, namespace):
            raise Refused(access.refusal(name, namespace))
        return access

    def channel_may_read(self, channel: str, *, cluster: str, namespace: str | None) -> bool:
        """Whether everyone in ``channel`` may read ``namespace`` of ``cluster``: the channel's own grant,
        no person's. What gpubot posts there unasked (alerts, approval requests, notes in an incident's
        thread) is read by all its members, so no member's own grant can open it."""
        return self.access(Asker(user=None, channel=channel)).may_read(cluster, namespace)

    def check_remediation(self, asker: Asker, remediation: Remediation, *, cluster: str | None,
                          namespace: str | None) -> None:
        """Refuse a proposal unless the asker may read the diagnosis it came from (``cluster`` and
        ``namespace`` of its target), may read what it would change, and the policy allows this kind of
        change there. Without a policy file no change is proposed at all."""
        policy = self.policy.current()
        if not policy.enforced:
            raise Refused("changes are disabled: gpubot runs without a policy file (GPUBOT_POLICY), so nobody "
                          "could approve them")
        self.check_read(asker, cluster=cluster, namespace=namespace)
        params = remediation.params
        touched_namespace = params.get("namespace") if remediation.kind == "annotate-do-not-disrupt" else None
        if touched_namespace is not None:
            self.check_read(asker, cluster=cluster, namespace=touched_namespace)
        if not policy.remediations.allows(remediation.kind, namespace=touched_namespace,
                                          nodepool=params.get("nodepool"), node=params.get("node")):
            raise Refused(f"{remediation.kind} on {remediation.target} is not allowed by gpubot's policy")

    def _cluster_name(self, context: str | None, asker: Asker | None) -> str:
        """The cluster's name in the policy: the kubeconfig context (or GPUBOT_CLUSTER_NAME in-cluster)."""
        if context is not None:
            return validate_context(context)
        return self.gateway(None, asker=asker).name

    def _open_cluster(self, context: str | None, asker: Asker | None, access: Access) -> ClusterGateway:
        """The gateway for a cluster the asker may read; the check comes before any connection, so a
        refused name is refused alike whether or not gpubot knows such a cluster."""
        if not access.unrestricted and context is not None and not access.may_cluster(validate_context(context)):
            raise Refused(access.refusal(context, None))
        gateway = self.gateway(context, asker=asker)
        if not access.may_cluster(gateway.name):
            raise Refused(access.refusal(gateway.name, None))
        return gateway

    # -- clusters -----------------------------------------------------------------------------------

    def gateway(self, context: str | None = None, *, asker: Asker | None = None) -> ClusterGateway:
        if context is not None and context == self.settings.cluster_name:
            context = None  # in-cluster: the policy's name for the one cluster gpubot runs in
        if context is not None:
            validate_context(context)
        with self._lock:
            if context not in self._gateways:
                try:
                    self._gateways[context] = connect(self.settings, context=context)
                except ClusterConfigError as exc:
                    if asker is None:
                        raise
                    # Chat never sees file paths or kubeconfig contents; the operator's log has them.
                    log.warning("cluster %s cannot be configured: %s", context or "(default)", exc)
                    raise ClusterError(f"cluster {context or '(default)'} is not set up in gpubot: its operators "
                                       "can find why in gpubot's log") from None
            return self._gateways[context]

    def catalog(self, gateway: ClusterGateway) -> Ec2Catalog:
        region = gateway.info.region or self.settings.aws_region
        endpoint = gateway.info.ec2_endpoint or self.settings.ec2_endpoint
        return catalog_for(region=region, endpoint_url=endpoint, timeout=self.settings.request_timeout)

    def diagnose(self, target_text: str, *, namespace: str | None = None, context: str | None = None,
                 asker: Asker | None = None, on_resolved: Callable[[Target], None] | None = None,
                 progress: Callable[[str], None] | None = None) -> Diagnosis:
        access = self.access(asker)
        target = parse_target(target_text, namespace=namespace or access.default_namespace or self.settings.namespace)
        gateway = self._open_cluster(context, asker, access)
        allowed = access.namespace_filter(gateway.name)
        if target.kind in ("pod", *OWNER_KINDS) or (target.kind == "auto" and namespace is not None):
            if not allowed(target.namespace or ""):
                if namespace is None:
                    raise Refused(self._name_a_namespace(access, gateway.name))
                raise Refused(access.refusal(gateway.name, target.namespace))
        limits = Limits(max_pods=self.settings.max_pods_per_job)
        try:
            diagnosis = timed_diagnosis(diagnose, target, gateway=gateway, catalog=self.catalog(gateway), registry=self.registry,
                                 limits=limits, on_resolved=on_resolved, progress=progress,
                                 namespace_allowed=None if access.unrestricted else allowed,
                                 gpu_metrics=self.gpu_metrics, trusted_node_reporters=self._trusted_node_reporters())
        except NamespaceNotFound as exc:
            raise UserError(f"{exc} Pass -n with an existing namespace.") from None
        except TargetNotFound as exc:
            raise NotFoundError(str(exc), suggestions=exc.suggestions) from None
        resolved = diagnosis.target.namespace
        if resolved is not None and not allowed(resolved):  # the engine searched allowed namespaces only
            raise Refused(access.refusal(gateway.name, resolved))
        if not access.unrestricted:
            diagnosis = mask_other_namespaces(diagnosis, allowed)
        return diagnosis if asker is None else self._offerable(diagnosis, asker)

    def _offerable(self, diagnosis: Diagnosis, asker: Asker) -> Diagnosis:
        """Only changes the policy would let this asker propose are offered (as buttons); the rest stay
        as fix snippets to apply by hand."""
        def offer(remediation: Remediation) -> bool:
            try:
                self.check_remediation(asker, remediation, cluster=diagnosis.cluster,
                                       namespace=diagnosis.target.namespace)
            except Refused:
                return False
            return True

        findings = [replace(f, remediations=[r for r in f.remediations if offer(r)]) if f.remediations else f
                    for f in diagnosis.findings]
        return replace(diagnosis, findings=findings)

    @staticmethod
    def _name_a_namespace(access: Access, cluster: str) -> str:
        open_here = access.readable_namespaces(cluster)
        if not open_here:
            return f"no namespace of cluster {cluster} is open to {access.where}"
        return f"name a namespace with -n: open to {access.where} are {', '.join(open_here[:10])}"

    def pending_jobs(self, *, namespace: str | None = None, context: str | None = None,
                     asker: Asker | None = None) -> list[str]:
        """Jobs (or lone pods) with pending pods in a namespace: what people most often ask about."""
        access = self.access(asker)
        ns = validate_namespace(namespace or access.default_namespace or self.settings.namespace)
        gateway = self._open_cluster(context, asker, access)
        if not access.may_read(gateway.name, ns):
            raise Refused(access.refusal(gateway.name, ns))
        names: list[str] = []
        for pod in gateway.pending_pods(ns, max_items=200):
            labels = pod["metadata"].get("labels") or {}
            job = labels.get(KUBEFLOW_JOB_LABEL) or labels.get("batch.kubernetes.io/job-name") or labels.get("job-name")
            names.append(job or f"pod/{pod['metadata']['name']}")
        return list(dict.fromkeys(names))

    def nodes(self, *, context: str | None = None, asker: Asker | None = None) -> NodesReport:
        gateway = self._open_cluster(context, asker, self.access(asker))
        nodes, more = gateway.gpu_nodes(max_items=500)
        pods = gateway.pods_on_nodes([n["metadata"]["name"] for n in nodes])  # one read per GPU node
        return nodes_report(nodes, cluster=gateway.name, more=more, pods=pods)

    def nodepools(self, *, context: str | None = None, asker: Asker | None = None) -> NodePoolsReport:
        gateway = self._open_cluster(context, asker, self.access(asker))
        return nodepools_report(gateway.list_nodepools(), cluster=gateway.name)

    def explain(self, data: bytes, *, source: str = "pasted text") -> Diagnosis:
        text = decode_log(data, max_bytes=self.settings.explain_max_bytes)
        return explain_text(text, source=source)

    def close(self) -> None:
        for gateway in self._gateways.values():
            gateway.close()
        self._gateways.clear()
