"""Typed settings, read from the environment once by whoever starts the program (CLI, app factory)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping


class SettingsError(ValueError):
    """A setting has a value we cannot use; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    # Kubernetes: kubeconfig path (None: KUBECONFIG / ~/.kube/config, or in-cluster config).
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str = "default"
    # Seconds for one API request (connect + read); retries on 429/5xx with exponential backoff.
    request_timeout: float = 10.0
    max_retries: int = 3
    retry_backoff: float = 0.2
    page_size: int = 500
    # Where the Karpenter controller runs (absent on EKS Auto Mode).
    karpenter_namespace: str = "karpenter"
    karpenter_selector: str = "app.kubernetes.io/name=karpenter"
    log_tail_lines: int = 2000
    # Pods of one job examined in detail; bounds the cost of a diagnosis.
    max_pods_per_job: int = 16
    # AWS: region and EC2 endpoint may also come from the kubeconfig's gpubot.dev/aws extension.
    aws_region: str | None = None
    ec2_endpoint: str | None = None
    # `explain` input bound.
    explain_max_bytes: int = 64 * 1024 * 1024
    extra: Mapping[str, str] = field(default_factory=dict)


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise SettingsError(f"{name} must be positive, got {raw!r}")
    return value


def _int(env: Mapping[str, str], name: str, default: int, *, minimum: int = 0) -> int:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, got {raw!r}")
    return value


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    return Settings(
        kubeconfig=env.get("KUBECONFIG") or None,
        context=env.get("GPUBOT_CONTEXT") or None,
        namespace=env.get("GPUBOT_NAMESPACE") or "default",
        request_timeout=_float(env, "GPUBOT_REQUEST_TIMEOUT", 10.0),
        max_retries=_int(env, "GPUBOT_MAX_RETRIES", 3),
        retry_backoff=_float(env, "GPUBOT_RETRY_BACKOFF", 0.2),
        page_size=_int(env, "GPUBOT_PAGE_SIZE", 500, minimum=1),
        karpenter_namespace=env.get("GPUBOT_KARPENTER_NAMESPACE") or "karpenter",
        karpenter_selector=env.get("GPUBOT_KARPENTER_SELECTOR") or "app.kubernetes.io/name=karpenter",
        log_tail_lines=_int(env, "GPUBOT_LOG_TAIL_LINES", 2000, minimum=1),
        max_pods_per_job=_int(env, "GPUBOT_MAX_PODS_PER_JOB", 16, minimum=1),
        aws_region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
        ec2_endpoint=env.get("AWS_ENDPOINT_URL_EC2") or env.get("AWS_ENDPOINT_URL") or None,
        explain_max_bytes=_int(env, "GPUBOT_EXPLAIN_MAX_BYTES", 64 * 1024 * 1024, minimum=1),
    )
