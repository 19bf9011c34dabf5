"""EC2 for the simulated cluster: moto in server mode on loopback, reached by boto3 over real HTTP.

A scenario's `ec2.offerings` (instance type -> zone -> capacity types) changes what moto answers in
the scenario's region: DescribeInstanceTypeOfferings, DescribeSpotPriceHistory and
DescribeCapacityReservations (which moto does not implement; added here). moto keeps its data
process-wide, so a patch belongs to one region, is undone on stop, and two live sims may not patch
the same region.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from moto.ec2.models.instance_types import INSTANCE_TYPE_OFFERINGS
from moto.ec2.responses import EC2Response
from moto.core.responses import ActionResult
from moto.server import ThreadedMotoServer

_lock = threading.Lock()
_patched: dict[str, dict[str, dict[str, list[str]]]] = {}  # region -> type -> zone -> capacity types
_hooks_installed = False
_OWNER_ID = "123456789012"


@dataclass
class OfferingsPatch:
    """Undo handle for one region's patched offerings."""

    region: str
    _saved: dict[str, list | None] = field(default_factory=dict)  # location type -> moto's list
    _restored: bool = False

    def restore(self) -> None:
        with _lock:
            if self._restored:
                return
            self._restored = True
            for location_type, original in self._saved.items():
                table = INSTANCE_TYPE_OFFERINGS[location_type]
                if original is None:
                    table.pop(self.region, None)
                else:
                    table[self.region] = original
            _patched.pop(self.region, None)


@dataclass
class Ec2Handle:
    url: str
    _server: ThreadedMotoServer
    _patches: list[OfferingsPatch] = field(default_factory=list)

    def stop(self) -> None:
        for patch in self._patches:
            patch.restore()
        self._server.stop()


def _offered(zones: dict[str, list[str]]) -> list[str]:
    return [zone for zone, capacity_types in zones.items() if capacity_types]


def patch_offerings(region: str, offerings: dict[str, dict[str, list[str]]]) -> OfferingsPatch:
    """Make moto answer `offerings` for the listed types in `region`; other types keep moto's data."""
    _install_hooks()
    with _lock:
        if region in _patched:
            raise ValueError(f"EC2 offerings in {region} are already patched by another running sim in this "
                             "process: stop it first, or give this scenario another region")
        patch = OfferingsPatch(region)
        zone_table = INSTANCE_TYPE_OFFERINGS["availability-zone"]
        region_table = INSTANCE_TYPE_OFFERINGS["region"]
        patch._saved = {"availability-zone": zone_table.get(region), "region": region_table.get(region)}
        kept = [o for o in zone_table.get(region) or [] if o["InstanceType"] not in offerings]
        added = [
            {"InstanceType": instance_type, "Location": zone, "LocationType": "availability-zone"}
            for instance_type, zones in offerings.items() for zone in _offered(zones)
        ]
        zone_table[region] = kept + added
        regional = [o for o in region_table.get(region) or [] if o["InstanceType"] not in offerings]
        regional += [{"InstanceType": t, "Location": region, "LocationType": "region"}
                     for t, zones in offerings.items() if _offered(zones)]
        region_table[region] = regional
        _patched[region] = {t: dict(zones) for t, zones in offerings.items()}
        return patch


def _spot_price(instance_type: str, zone: str) -> str:
    """A stable, plausible-looking price per (type, zone); nothing reads its value, only its presence."""
    digest = int(hashlib.sha256(f"{instance_type}/{zone}".encode()).hexdigest()[:6], 16)
    return f"{1 + digest % 4000 / 100:.4f}"


def _matches(filters: dict[str, list[str]], values: dict[str, str]) -> bool:
    return all(values.get(name) in wanted for name, wanted in filters.items() if name in values)


def _spot_price_history(response: EC2Response, original) -> ActionResult:
    offerings = _patched.get(response.region)
    if offerings is None:
        return original(response)
    wanted_types = response._get_param("InstanceTypes", [])
    filters = response._filters_from_querystring()
    # A recent observation per (type, zone) offering spot, as EC2 returns for the last hours.
    observed = (datetime.now(timezone.utc) - timedelta(minutes=7)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    history = [
        {"InstanceType": instance_type, "ProductDescription": "Linux/UNIX (Amazon VPC)",
         "SpotPrice": _spot_price(instance_type, zone), "AvailabilityZone": zone, "Timestamp": observed}
        for instance_type, zones in sorted(offerings.items())
        for zone, capacity_types in sorted(zones.items())
        if "spot" in capacity_types
        and (not wanted_types or instance_type in wanted_types)
        and _matches(filters, {"instance-type": instance_type, "availability-zone": zone})
    ]
    return ActionResult({"SpotPriceHistory": history})


def _capacity_reservations(response: EC2Response) -> ActionResult:
    offerings = _patched.get(response.region) or {}
    filters = response._filters_from_querystring()
    start = (datetime.now(timezone.utc) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    reservations = []
    for instance_type, zones in sorted(offerings.items()):
        for zone, capacity_types in sorted(zones.items()):
            if "reserved" not in capacity_types:
                continue
            identifier = hashlib.sha256(f"{instance_type}/{zone}".encode()).hexdigest()[:17]
            reservation = {
                "CapacityReservationId": f"cr-{identifier}",
                "OwnerId": _OWNER_ID,
                "CapacityReservationArn": f"arn:aws:ec2:{response.region}:{_OWNER_ID}:capacity-reservation/cr-{identifier}",
                "InstanceType": instance_type,
                "InstancePlatform": "Linux/UNIX",
                "AvailabilityZone": zone,
                "Tenancy": "default",
                "TotalInstanceCount": 2,
                "AvailableInstanceCount": 2,
                "EbsOptimized": True,
                "State": "active",
                "StartDate": start,
                "EndDateType": "unlimited",
                "InstanceMatchCriteria": "targeted",
                "CreateDate": start,
                "ReservationType": "default",
            }
            values = {"instance-type": instance_type, "availability-zone": zone, "state": "active"}
            if _matches(filters, values):
                reservations.append(reservation)
    return ActionResult({"CapacityReservations": reservations})


def _install_hooks() -> None:
    """Once per process: route the two EC2 actions through the patched regions."""
    global _hooks_installed
    with _lock:
        if _hooks_installed:
            return
        original = EC2Response.describe_spot_price_history

        def describe_spot_price_history(self: EC2Response) -> ActionResult:
            return _spot_price_history(self, original)

        def describe_capacity_reservations(self: EC2Response) -> ActionResult:
            return _capacity_reservations(self)

        EC2Response.describe_spot_price_history = describe_spot_price_history
        EC2Response.describe_capacity_reservations = describe_capacity_reservations
        _hooks_installed = True


def start_ec2(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    region: str | None = None,
    offerings: dict[str, dict[str, list[str]]] | None = None,
) -> Ec2Handle:
    """moto ships real instance-type and offering data; `offerings` overrides it for `region`.

    moto keeps its backends in process-wide state: two handles in one process share EC2 data.
    """
    _install_hooks()  # DescribeCapacityReservations answers (empty) in every region, not a 500
    patches = [patch_offerings(region, offerings)] if offerings and region else []
    # moto serves through werkzeug, which logs every request line to stderr; the demo is not the place.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    try:
        server = ThreadedMotoServer(ip_address=host, port=port, verbose=False)
        server.start()
    except BaseException:
        for patch in patches:
            patch.restore()
        raise
    bound_host, bound_port = server.get_host_and_port()
    return Ec2Handle(url=f"http://{bound_host}:{bound_port}", _server=server, _patches=patches)
