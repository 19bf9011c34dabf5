"""EC2 facts for diagnoses: GPUs, EFA support, zone and capacity-type offerings per instance type, via boto3.

Instance-type data changes a few times a year, so answers are cached for the process, per AWS account,
region and endpoint (zone names differ per account). When EC2 cannot be asked (no credentials, refused,
unreachable) instance-type facts come from the embedded catalogue of GPU and accelerated types and
``source`` says so; zone and capacity-type offerings still need EC2, and say why they were not checked.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import threading
import time
from typing import Callable, Iterable, TypeVar
from urllib.parse import urlparse

import boto3
import botocore.exceptions
import botocore.parsers
from botocore.config import Config

from bot.gateway.catalogue import EmbeddedCatalogue, InstanceTypeInfo, embedded_catalogue, parse_instance_type
from playbooks.facts import FactsUnavailable

__all__ = ["CACHE_SECONDS", "Ec2Catalog", "Ec2Unavailable", "InstanceTypeInfo", "catalog_for", "parse_instance_type"]

log = logging.getLogger(__name__)

CACHE_SECONDS = 3600.0
# Capacity reservations fill and free as instances launch: their availability is not kept as long.
RESERVATION_CACHE_SECONDS = 60.0
# After EC2's endpoint could not be reached, later calls (the rest of this diagnosis, the next ones)
# fall back at once instead of each waiting out the timeouts again.
UNREACHABLE_SECONDS = 60.0

EC2_SOURCE = "ec2"
CAPACITY_TYPES = ("on-demand", "spot", "reserved")

_REFUSED = ("UnauthorizedOperation", "AuthFailure", "InvalidClientTokenId", "UnrecognizedClientException",
            "AccessDenied", "AccessDeniedException", "OptInRequired")
_UNIMPLEMENTED = ("InvalidAction", "NotImplemented", "UnsupportedOperation")

T = TypeVar("T")


class Ec2Unavailable(FactsUnavailable):
    """EC2 facts cannot be had right now; the message says why in words for a diagnosis."""


class Ec2Catalog:
    def __init__(self, *, region: str | None, endpoint_url: str | None = None, timeout: float = 10.0,
                 session: boto3.session.Session | None = None, account: str | None = None,
                 embedded: EmbeddedCatalogue | None = None) -> None:
        self.region = region
        self.endpoint_url = endpoint_url
        self.account = account
        self._timeout = timeout
        self._session = session
        self.access_key = _access_key(session)
        self._client = None
        self._embedded = embedded
        self._lock = threading.Lock()
        self._types: dict[str, tuple[float, InstanceTypeInfo | None]] = {}
        self._patterns: dict[tuple[str, ...], tuple[float, tuple[str, ...]]] = {}
        self._offerings: dict[str, tuple[float, frozenset[str]]] = {}
        # capacity type -> instance type -> (stamp, zones)
        self._capacity: dict[str, dict[str, tuple[float, frozenset[str]]]] = {"spot": {}, "reserved": {}}
        # capacity type -> (stamp, why it could not be checked)
        self._capacity_failed: dict[str, tuple[float, str]] = {}
        self._last_unchecked: dict[str, str] = {}
        self._flights: dict[tuple[str, ...], threading.Lock] = {}
        self._unavailable: str | None = None if region else "no AWS region is configured (set AWS_REGION)"
        self._unreachable: tuple[float, str] | None = None
        self._source = EC2_SOURCE
        self.calls = 0

    @property
    def unavailable_reason(self) -> str | None:
        """Why EC2 cannot be asked at all (no region, no credentials, refused); None when it can."""
        return self._unavailable

    @property
    def source(self) -> str:
        """Where the latest instance-type facts came from: "ec2" or the embedded catalogue."""
        return self._source

    @property
    def embedded(self) -> EmbeddedCatalogue:
        if self._embedded is None:
            self._embedded = embedded_catalogue()
        return self._embedded

    @property
    def capacity_types_unchecked(self) -> dict[str, str]:
        """Capacity types the latest ``offerings`` call could not check -> why, in words for a gap."""
        with self._lock:
            return dict(sorted(self._last_unchecked.items()))

    def use_session(self, session: boto3.session.Session) -> None:
        """Ask EC2 with these credentials from now on (the same account's keys were rotated)."""
        with self._lock:
            if session is not self._session:  # the same session refreshes its own credentials
                self._session, self._client = session, None
            self.access_key = _access_key(session)

    # -- talking to EC2 -------------------------------------------------------------------------

    def _ec2(self):
        if self._unavailable:
            raise Ec2Unavailable(self._unavailable)
        if self._unreachable and time.monotonic() < self._unreachable[0]:
            raise Ec2Unavailable(self._unreachable[1])
        if self._client is None:
            session = self._session or boto3.session.Session(region_name=self.region)
            if session.get_credentials() is None:
                self._unavailable = "no AWS credentials found"
                raise Ec2Unavailable(self._unavailable)
            cfg = Config(connect_timeout=self._timeout, read_timeout=self._timeout, retries={"max_attempts": 3, "mode": "standard"})
            self._client = session.client("ec2", region_name=self.region, endpoint_url=self.endpoint_url, config=cfg)
        return self._client

    def _guard(self, what: str, fn: Callable[[], T], *, permission: str | None = None, optional: bool = False) -> T:
        """Run one EC2 call. A refusal of a call every diagnosis needs makes EC2 unavailable for the
        process; ``optional`` calls (spot prices, reservations) only fail themselves."""
        try:
            self.calls += 1
            return fn()
        except Ec2Unavailable:
            raise
        except botocore.exceptions.NoCredentialsError:
            self._unavailable = "no AWS credentials found"
            raise Ec2Unavailable(self._unavailable) from None
        except botocore.exceptions.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in _REFUSED:
                grant = permission or "ec2:DescribeInstanceTypes and ec2:DescribeInstanceTypeOfferings"
                reason = f"EC2 refused {what} ({code}): grant {grant}"
                if not optional:
                    self._unavailable = reason
                raise Ec2Unavailable(reason) from None
            if code in _UNIMPLEMENTED:
                raise Ec2Unavailable(f"this EC2 endpoint does not implement {what} ({code})") from None
            raise Ec2Unavailable(f"EC2 {what} failed: {code or exc}") from None
        except botocore.parsers.ResponseParserError:
            # A 5xx page instead of an EC2 answer: emulators answer so for calls they lack.
            raise Ec2Unavailable(f"EC2 gave no readable answer to {what} (server error)") from None
        except (botocore.exceptions.BotoCoreError, OSError) as exc:
            reason = f"EC2 did not answer {what}: {str(exc)[:200]}"
            # Only when the endpoint cannot be reached at all: a slow answer to one large call (a read
            # timeout) says nothing about the next, smaller one.
            if not optional and isinstance(exc, botocore.exceptions.ConnectionError):
                self._unreachable = (time.monotonic() + UNREACHABLE_SECONDS, reason)
            raise Ec2Unavailable(reason) from None

    def _fresh(self, stamp: float, ttl: float = CACHE_SECONDS) -> bool:
        return time.monotonic() - stamp < ttl

    # -- instance types ---------------------------------------------------------------------------

    def instance_types(self, names: Iterable[str]) -> dict[str, InstanceTypeInfo]:
        """Facts for named types; unknown names are left out. From the embedded catalogue when EC2
        cannot be asked."""
        wanted = sorted(set(names))
        try:
            return self._ec2_instance_types(wanted)
        except Ec2Unavailable as exc:
            return self._fallback(exc).instance_types(wanted)

    def _ec2_instance_types(self, wanted: list[str]) -> dict[str, InstanceTypeInfo]:
        with self._lock:
            missing = [n for n in wanted if n not in self._types or not self._fresh(self._types[n][0])]
        for chunk in (missing[i : i + 100] for i in range(0, len(missing), 100)):
            found = self._describe(Filters=[{"Name": "instance-type", "Values": chunk}])
            now = time.monotonic()
            with self._lock:
                for name in chunk:
                    self._types[name] = (now, found.get(name))
        self._source = EC2_SOURCE
        with self._lock:
            return {n: self._types[n][1] for n in wanted if self._types.get(n, (0, None))[1] is not None}

    def matching(self, patterns: Iterable[str]) -> dict[str, InstanceTypeInfo]:
        """Facts for every type matching EC2 wildcard patterns such as ``p4d.*`` or ``g*``.

        EC2's answer, where it can be had, is the region's own list and overrides the embedded
        catalogue; without it the embedded catalogue answers (GPU and accelerated types only).
        """
        key = tuple(sorted(set(patterns)))
        # One caller fetches a pattern while concurrent callers wait for its answer: a burst of
        # diagnoses after start-up must not each page through every instance type.
        with self._flight(key):
            try:
                return self._matching(key)
            except Ec2Unavailable as exc:
                return self._fallback(exc).matching(key)

    def _fallback(self, exc: Ec2Unavailable) -> EmbeddedCatalogue:
        if self._source == EC2_SOURCE:
            log.info("EC2 instance-type facts from the %s: %s", self.embedded.source, exc)
        self._source = self.embedded.source
        return self.embedded

    def _flight(self, key: tuple[str, ...]) -> threading.Lock:
        with self._lock:
            return self._flights.setdefault(key, threading.Lock())

    def _matching(self, key: tuple[str, ...]) -> dict[str, InstanceTypeInfo]:
        with self._lock:
            hit = self._patterns.get(key)
        if hit and self._fresh(hit[0]):
            return self._ec2_instance_types(list(hit[1]))
        found = self._describe(Filters=[{"Name": "instance-type", "Values": list(key)}])
        now = time.monotonic()
        with self._lock:
            self._patterns[key] = (now, tuple(sorted(found)))
            for name, info in found.items():
                self._types[name] = (now, info)
        self._source = EC2_SOURCE
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

    # -- offerings --------------------------------------------------------------------------------

    def zones_offering(self, names: Iterable[str]) -> dict[str, frozenset[str]]:
        """Availability zones of the region where each type is offered at all. Needs EC2: there is
        no embedded answer, since zones differ per account and region."""
        wanted = sorted(set(names))
        with self._lock:
            missing = [n for n in wanted if n not in self._offerings or not self._fresh(self._offerings[n][0])]
        if missing:
            try:
                ec2 = self._ec2()
            except Ec2Unavailable as exc:
                raise Ec2Unavailable(f"zone offerings not checked: {exc}") from None

            def run() -> dict[str, set[str]]:
                zones: dict[str, set[str]] = {n: set() for n in missing}
                for chunk in _chunks(missing):
                    pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
                        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": chunk}]
                    )
                    for page in pages:
                        for offer in page.get("InstanceTypeOfferings", []):
                            zones.setdefault(offer["InstanceType"], set()).add(offer["Location"])
                return zones

            try:
                found = self._guard("DescribeInstanceTypeOfferings", run)
            except Ec2Unavailable as exc:
                raise Ec2Unavailable(f"zone offerings not checked: {exc}") from None
            now = time.monotonic()
            with self._lock:
                for name, zones in found.items():
                    self._offerings[name] = (now, frozenset(zones))
        with self._lock:
            return {n: self._offerings[n][1] for n in wanted if n in self._offerings}

    def offerings(self, names: Iterable[str], *,
                  capacity_types: Iterable[str] = CAPACITY_TYPES) -> dict[str, dict[str, frozenset[str]]]:
        """Instance type -> zone -> capacity types offered there: "on-demand" where the type is offered
        and supports it, "spot" where EC2 has a current Linux/UNIX spot price, "reserved" where an active
        capacity reservation (Capacity Blocks included) has instances free. Reservations are the
        account's; Karpenter launches into those its EC2NodeClass selects (capacityReservationSelectorTerms).

        ``capacity_types`` limits the calls to what the caller can use: Karpenter offers "reserved" only
        where the EC2NodeClass selects reservations, and a NodePool may allow one capacity type alone.

        Raises Ec2Unavailable when zone offerings cannot be had at all. When only the spot or reserved
        check fails, the rest is returned and ``capacity_types_unchecked`` says which and why.
        """
        wanted = sorted(set(names))
        asked = set(capacity_types)
        zones = self.zones_offering(wanted)
        infos = self.instance_types(wanted)
        spot = self._capacity_zones("spot", wanted, self._spot_zones, ttl=CACHE_SECONDS) if "spot" in asked else {}
        reserved = (self._capacity_zones("reserved", wanted, self._reserved_zones, ttl=RESERVATION_CACHE_SECONDS)
                    if "reserved" in asked else {})
        with self._lock:
            self._last_unchecked = {ct: why for ct, (_, why) in self._capacity_failed.items() if ct in asked}
        out: dict[str, dict[str, frozenset[str]]] = {}
        for name in wanted:
            info = infos.get(name)
            # aws/karpenter-provider-aws pkg/providers/instancetype/types.go createOfferings: an offering
            # per zone and usage class the type supports; spot is available only where a spot price exists.
            classes = set(info.usage_classes) if info and info.usage_classes else {"on-demand", "spot"}
            by_zone: dict[str, set[str]] = {}
            for zone in zones.get(name, ()):
                if "on-demand" in classes and "on-demand" in asked:
                    by_zone.setdefault(zone, set()).add("on-demand")
            for zone in spot.get(name, ()):
                if "spot" in classes:
                    by_zone.setdefault(zone, set()).add("spot")
            for zone in reserved.get(name, ()):
                by_zone.setdefault(zone, set()).add("reserved")
            out[name] = {zone: frozenset(cts) for zone, cts in sorted(by_zone.items())}
        return out

    def _capacity_zones(self, capacity_type: str, wanted: list[str], fetch: Callable[[list[str]], dict[str, set[str]]],
                        *, ttl: float) -> dict[str, frozenset[str]]:
        cache = self._capacity[capacity_type]
        with self._lock:
            failed = self._capacity_failed.get(capacity_type)
            if failed and self._fresh(failed[0], RESERVATION_CACHE_SECONDS):  # a failed check is tried again sooner
                return {}
            missing = [n for n in wanted if n not in cache or not self._fresh(cache[n][0], ttl)]
        if missing:
            try:
                found = fetch(missing)
            except Ec2Unavailable as exc:
                with self._lock:
                    self._capacity_failed[capacity_type] = (time.monotonic(), str(exc))
                return {}
            now = time.monotonic()
            with self._lock:
                self._capacity_failed.pop(capacity_type, None)
                for name in missing:
                    cache[name] = (now, frozenset(found.get(name, ())))
        with self._lock:
            return {n: cache[n][1] for n in wanted if n in cache}

    def _spot_zones(self, names: list[str]) -> dict[str, set[str]]:
        ec2 = self._ec2()
        # With StartTime now, EC2 answers the price in effect now per zone (the last change before
        # it, however old): a type has spot capacity in a zone where it has a current price.
        now = dt.datetime.now(dt.timezone.utc)

        def run() -> dict[str, set[str]]:
            zones: dict[str, set[str]] = {}
            for chunk in _chunks(names):
                pages = ec2.get_paginator("describe_spot_price_history").paginate(
                    InstanceTypes=chunk, StartTime=now, EndTime=now,
                    ProductDescriptions=["Linux/UNIX", "Linux/UNIX (Amazon VPC)"],
                )
                for page in pages:
                    for price in page.get("SpotPriceHistory", []):
                        if price.get("ProductDescription", "").startswith("Linux/UNIX"):
                            zones.setdefault(price["InstanceType"], set()).add(price["AvailabilityZone"])
            return zones

        return self._guard("DescribeSpotPriceHistory", run, permission="ec2:DescribeSpotPriceHistory", optional=True)

    def _reserved_zones(self, names: list[str]) -> dict[str, set[str]]:
        ec2 = self._ec2()

        def run() -> dict[str, set[str]]:
            zones: dict[str, set[str]] = {}
            for chunk in _chunks(names):
                pages = ec2.get_paginator("describe_capacity_reservations").paginate(
                    Filters=[{"Name": "instance-type", "Values": chunk}, {"Name": "state", "Values": ["active"]}],
                )
                for page in pages:
                    for cr in page.get("CapacityReservations", []):
                        if cr.get("State") == "active" and int(cr.get("AvailableInstanceCount", 0)) > 0:
                            zones.setdefault(cr["InstanceType"], set()).add(cr["AvailabilityZone"])
            return zones

        return self._guard("DescribeCapacityReservations", run, permission="ec2:DescribeCapacityReservations",
                           optional=True)


def _chunks(names: list[str], size: int = 100) -> Iterable[list[str]]:
    return (names[i : i + size] for i in range(0, len(names), size))


# -- one catalogue per account, region and endpoint -------------------------------------------------

_CATALOGS: dict[tuple[str | None, str | None, str | None], Ec2Catalog] = {}
_CATALOGS_LOCK = threading.Lock()
# (access key id, STS endpoint) -> account id, or "access key <id>" when STS would not say
_ACCOUNTS: dict[tuple[str, str | None], str] = {}


def catalog_for(*, region: str | None, endpoint_url: str | None, timeout: float = 10.0) -> Ec2Catalog:
    """One catalogue (and cache) per AWS account, region and endpoint for the life of the process.

    Credentials are looked for again when the environment that locates them changes, and the account
    is asked of STS once per access key. Without credentials the key's account is None: that
    catalogue answers from the embedded data.
    """
    session, credentials = _session(region) if region else (None, None)
    access_key = credentials.access_key if credentials is not None else None
    account = (_account(session, access_key, region=region, endpoint_url=endpoint_url, timeout=timeout)
               if session is not None and access_key else None)
    key = (account, region, endpoint_url)
    with _CATALOGS_LOCK:
        catalog = _CATALOGS.get(key)
        if catalog is None:
            catalog = _CATALOGS[key] = Ec2Catalog(region=region, endpoint_url=endpoint_url, timeout=timeout,
                                                  session=session if access_key else None, account=account)
        elif access_key and catalog.access_key != access_key:
            catalog.use_session(session)
        return catalog


# What decides where boto3 finds credentials: a change in any of them is a different search.
_CREDENTIAL_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
                   "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
                   "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                   "AWS_EC2_METADATA_DISABLED")
# "No credentials" is looked for again after this long (a profile written meanwhile, say).
NO_CREDENTIALS_SECONDS = 60.0
_SESSIONS: dict[tuple, tuple[boto3.session.Session, float]] = {}


def _session(region: str):
    """A boto3 session for this region and credential environment, kept for the process: botocore
    keeps its credentials (and refreshes role credentials itself), so a diagnosis neither assumes a
    role again nor probes instance metadata again."""
    key = (region, tuple(os.environ.get(k) for k in _CREDENTIAL_ENV))
    with _CATALOGS_LOCK:
        hit = _SESSIONS.get(key)
    if hit is not None:
        session, stamp = hit
        credentials = session.get_credentials()
        if credentials is not None or time.monotonic() - stamp < NO_CREDENTIALS_SECONDS:
            return session, credentials
    session = boto3.session.Session(region_name=region)
    credentials = session.get_credentials()
    with _CATALOGS_LOCK:
        _SESSIONS[key] = (session, time.monotonic())
    return session, credentials


def _access_key(session: boto3.session.Session | None) -> str | None:
    credentials = session.get_credentials() if session is not None else None
    return credentials.access_key if credentials is not None else None


def _account(session: boto3.session.Session, access_key: str, *, region: str | None, endpoint_url: str | None,
             timeout: float) -> str:
    sts_url = _sts_endpoint(endpoint_url)
    key = (access_key, sts_url)
    with _CATALOGS_LOCK:
        if key in _ACCOUNTS:
            return _ACCOUNTS[key]
    cfg = Config(connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 2, "mode": "standard"})
    try:
        sts = session.client("sts", region_name=region, endpoint_url=sts_url, config=cfg)
        account = str(sts.get_caller_identity()["Account"])
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError, botocore.parsers.ResponseParserError,
            OSError, KeyError) as exc:
        # Without the account, these credentials' answers are kept apart from every other key's.
        log.info("STS GetCallerIdentity failed (%s); EC2 answers are cached per access key", str(exc)[:200])
        account = f"access key {access_key}"
    with _CATALOGS_LOCK:
        _ACCOUNTS[key] = account
    return account


def _sts_endpoint(ec2_endpoint: str | None) -> str | None:
    """Where to ask STS who the credentials belong to.

    An EC2 endpoint outside amazonaws.com is an emulator (moto, LocalStack) that answers every
    service at one address; an AWS endpoint (a VPC endpoint for EC2, say) says nothing about STS,
    so boto3's own resolution applies (AWS_ENDPOINT_URL_STS included).
    """
    if not ec2_endpoint:
        return None
    host = (urlparse(ec2_endpoint).hostname or "").lower()
    if host.endswith(".amazonaws.com") or host.endswith(".amazonaws.com.cn"):
        return None
    return ec2_endpoint
