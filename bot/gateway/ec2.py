"""EC2 facts for diagnoses: GPUs, EFA support and zone offerings per instance type, via boto3.

Instance-type data changes a few times a year, so answers are cached for the process. When there are
no AWS credentials (or EC2 does not answer) the catalogue says so once, and diagnoses carry on
without EC2 facts, naming what they could not check.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Iterable

import boto3
import botocore.exceptions
from botocore.config import Config

from playbooks.facts import FactsUnavailable

log = logging.getLogger(__name__)

CACHE_SECONDS = 3600.0


@dataclass(frozen=True)
class InstanceTypeInfo:
    name: str
    vcpus: int
    memory_mib: int
    architectures: tuple[str, ...]
    gpu_count: int
    gpu_name: str | None  # as EC2 spells it: "A100", "H100", "A10G"
    gpu_manufacturer: str | None
    gpu_memory_mib: int | None  # per GPU
    efa_supported: bool
    max_efa_interfaces: int

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def size(self) -> str:
        return self.name.split(".", 1)[1] if "." in self.name else ""

    @property
    def category(self) -> str:
        return "".join(ch for ch in self.family if ch.isalpha())[:1] if self.family else ""

    @property
    def generation(self) -> str:
        digits = "".join(ch for ch in self.family if ch.isdigit())
        return digits[:1] if digits else ""

    def karpenter_labels(self, prefix: str = "karpenter.k8s.aws") -> dict[str, str]:
        """Labels Karpenter would put on a node of this type (``eks.amazonaws.com`` on Auto Mode)."""
        arch = {"x86_64": "amd64", "arm64": "arm64"}.get(self.architectures[0] if self.architectures else "", "")
        labels = {
            "node.kubernetes.io/instance-type": self.name,
            "kubernetes.io/arch": arch,
            f"{prefix}/instance-category": self.category,
            f"{prefix}/instance-family": self.family,
            f"{prefix}/instance-size": self.size,
            f"{prefix}/instance-generation": self.generation,
            f"{prefix}/instance-cpu": str(self.vcpus),
            f"{prefix}/instance-memory": str(self.memory_mib),
        }
        if self.gpu_count:
            labels[f"{prefix}/instance-gpu-count"] = str(self.gpu_count)
            labels[f"{prefix}/instance-gpu-name"] = (self.gpu_name or "").lower()
            labels[f"{prefix}/instance-gpu-manufacturer"] = (self.gpu_manufacturer or "").lower()
            labels[f"{prefix}/instance-gpu-memory"] = str(self.gpu_memory_mib or 0)
        return labels


def parse_instance_type(raw: dict) -> InstanceTypeInfo:
    gpus = (raw.get("GpuInfo") or {}).get("Gpus") or []
    gpu = gpus[0] if gpus else {}
    net = raw.get("NetworkInfo") or {}
    return InstanceTypeInfo(
        name=raw["InstanceType"],
        vcpus=int((raw.get("VCpuInfo") or {}).get("DefaultVCpus", 0)),
        memory_mib=int((raw.get("MemoryInfo") or {}).get("SizeInMiB", 0)),
        architectures=tuple((raw.get("ProcessorInfo") or {}).get("SupportedArchitectures") or ()),
        gpu_count=sum(int(g.get("Count", 0)) for g in gpus),
        gpu_name=gpu.get("Name"),
        gpu_manufacturer=gpu.get("Manufacturer"),
        gpu_memory_mib=(gpu.get("MemoryInfo") or {}).get("SizeInMiB"),
        efa_supported=bool(net.get("EfaSupported")),
        max_efa_interfaces=int((net.get("EfaInfo") or {}).get("MaximumEfaInterfaces", 0)),
    )


class Ec2Unavailable(FactsUnavailable):
    """EC2 facts cannot be had right now; the message says why in words for a diagnosis."""


class Ec2Catalog:
    def __init__(self, *, region: str | None, endpoint_url: str | None = None, timeout: float = 10.0) -> None:
        self.region = region
        self.endpoint_url = endpoint_url
        self._timeout = timeout
        self._client = None
        self._lock = threading.Lock()
        self._types: dict[str, tuple[float, InstanceTypeInfo | None]] = {}
        self._patterns: dict[tuple[str, ...], tuple[float, tuple[str, ...]]] = {}
        self._offerings: dict[str, tuple[float, frozenset[str]]] = {}
        self._flights: dict[tuple[str, ...], threading.Lock] = {}
        self._unavailable: str | None = None if region else "no AWS region is configured (set AWS_REGION)"
        self.calls = 0

    @property
    def unavailable_reason(self) -> str | None:
        return self._unavailable

    def _ec2(self):
        if self._unavailable:
            raise Ec2Unavailable(self._unavailable)
        if self._client is None:
            session = boto3.session.Session(region_name=self.region)
            if session.get_credentials() is None:
                self._unavailable = "no AWS credentials found"
                raise Ec2Unavailable(self._unavailable)
            cfg = Config(connect_timeout=self._timeout, read_timeout=self._timeout, retries={"max_attempts": 3, "mode": "standard"})
            self._client = session.client("ec2", endpoint_url=self.endpoint_url, config=cfg)
        return self._client

    def _guard(self, what: str, fn):
        try:
            self.calls += 1
            return fn()
        except Ec2Unavailable:
            raise
        except botocore.exceptions.NoCredentialsError:
            self._unavailable = "no AWS credentials found"
        except botocore.exceptions.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in ("UnauthorizedOperation", "AuthFailure", "InvalidClientTokenId", "UnrecognizedClientException"):
                self._unavailable = f"EC2 refused {what} ({code}): grant ec2:DescribeInstanceTypes and ec2:DescribeInstanceTypeOfferings"
            else:
                raise Ec2Unavailable(f"EC2 {what} failed: {code or exc}") from None
        except (botocore.exceptions.BotoCoreError, OSError) as exc:
            raise Ec2Unavailable(f"EC2 did not answer {what}: {str(exc)[:200]}") from None
        raise Ec2Unavailable(self._unavailable or f"EC2 {what} failed")

    def _fresh(self, stamp: float) -> bool:
        return time.monotonic() - stamp < CACHE_SECONDS

    def instance_types(self, names: Iterable[str]) -> dict[str, InstanceTypeInfo]:
        """Facts for named types; unknown names are left out."""
        wanted = sorted(set(names))
        with self._lock:
            missing = [n for n in wanted if n not in self._types or not self._fresh(self._types[n][0])]
        for chunk in (missing[i : i + 100] for i in range(0, len(missing), 100)):
            found = self._describe(Filters=[{"Name": "instance-type", "Values": chunk}])
            now = time.monotonic()
            with self._lock:
                for name in chunk:
                    self._types[name] = (now, found.get(name))
        with self._lock:
            return {n: self._types[n][1] for n in wanted if self._types.get(n, (0, None))[1] is not None}

    def matching(self, patterns: Iterable[str]) -> dict[str, InstanceTypeInfo]:
        """Facts for every type matching EC2 wildcard patterns such as ``p4d.*`` or ``g*``."""
        key = tuple(sorted(set(patterns)))
        # One caller fetches a pattern while concurrent callers wait for its answer: a burst of
        # diagnoses after start-up must not each page through every instance type.
        with self._flight(key):
            return self._matching(key)

    def _flight(self, key: tuple[str, ...]) -> threading.Lock:
        with self._lock:
            return self._flights.setdefault(key, threading.Lock())

    def _matching(self, key: tuple[str, ...]) -> dict[str, InstanceTypeInfo]:
        with self._lock:
            hit = self._patterns.get(key)
        if hit and self._fresh(hit[0]):
            return self.instance_types(hit[1])
        found = self._describe(Filters=[{"Name": "instance-type", "Values": list(key)}])
        now = time.monotonic()
        with self._lock:
            self._patterns[key] = (now, tuple(sorted(found)))
            for name, info in found.items():
                self._types[name] = (now, info)
        return found

    def _describe(self, **kwargs) -> dict[str, InstanceTypeInfo]:
        ec2 = self._ec2()

        def run() -> dict[str, InstanceTypeInfo]:
            out: dict[str, InstanceTypeInfo] = {}
            for page in ec2.get_paginator("describe_instance_types").paginate(**kwargs):
                for raw in page.get("InstanceTypes", []):
                    info = parse_instance_type(raw)
                    out[info.name] = info
            return out

        return self._guard("DescribeInstanceTypes", run)

    def zones_offering(self, names: Iterable[str]) -> dict[str, frozenset[str]]:
        """Availability zones of the region where each type is offered at all."""
        wanted = sorted(set(names))
        with self._lock:
            missing = [n for n in wanted if n not in self._offerings or not self._fresh(self._offerings[n][0])]
        if missing:
            ec2 = self._ec2()

            def run() -> dict[str, set[str]]:
                zones: dict[str, set[str]] = {n: set() for n in missing}
                for chunk in (missing[i : i + 100] for i in range(0, len(missing), 100)):
                    pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
                        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": chunk}]
                    )
                    for page in pages:
                        for offer in page.get("InstanceTypeOfferings", []):
                            zones.setdefault(offer["InstanceType"], set()).add(offer["Location"])
                return zones

            found = self._guard("DescribeInstanceTypeOfferings", run)
            now = time.monotonic()
            with self._lock:
                for name, zones in found.items():
                    self._offerings[name] = (now, frozenset(zones))
        with self._lock:
            return {n: self._offerings[n][1] for n in wanted if n in self._offerings}


_CATALOGS: dict[tuple[str | None, str | None], Ec2Catalog] = {}
_CATALOGS_LOCK = threading.Lock()


def catalog_for(*, region: str | None, endpoint_url: str | None, timeout: float = 10.0) -> Ec2Catalog:
    """One catalogue (and cache) per region and endpoint for the life of the process."""
    with _CATALOGS_LOCK:
        key = (region, endpoint_url)
        if key not in _CATALOGS:
            _CATALOGS[key] = Ec2Catalog(region=region, endpoint_url=endpoint_url, timeout=timeout)
        return _CATALOGS[key]
