"""A container that keeps restarting, as ``kubectl describe`` / ``kubectl get`` / the kubelet's events show it.

It is the fallback: when the same text carries the reason (a CUDA OOM, a code error, an OOM kill), that
finding explains the crash loop and this one is dropped (playbooks/explain.py); live, the crash-loop analyzer
reads the container state and the previous container's log instead (playbooks/analyzers/crash_loop.py).

Sources (kubernetes/kubernetes): pkg/kubelet/kuberuntime/kuberuntime_manager.go ``doBackOff``: event
``BackOff`` ``Back-off restarting failed container <c> in pod <pod>`` (older kubelets: ``Back-off restarting
failed container``) and the waiting message ``back-off 1m20s restarting failed container=<c> pod=<pod>``;
pkg/kubelet/images/types.go and kuberuntime ``ErrCrashLoopBackOff``: waiting reason ``CrashLoopBackOff``.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.signatures.model import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        name="kubelet.crash_loop",
        code="training.crash_loop",
        severity="error",
        confidence="medium",
        title="Container[ {container}] keeps crashing and restarting (CrashLoopBackOff)",
        keywords=("CrashLoopBackOff", "Back-off restarting failed container", "restarting failed container="),
        extract=(
            linear.compile(r"restarting failed container[= ](?P<container>[a-z0-9][a-z0-9-]{0,62})"),
            linear.compile(r"back-off (?P<backoff>\d[\dhms.]{0,12}) restarting"),
        ),
        fields_doc="container, backoff",
        example="  Warning  BackOff    2m (x14 over 9m)  kubelet  Back-off restarting failed container trainer in pod llama-3-8b-worker-0_ml-train(6c0d9e4a)",
    ),
)
