"""Where and how an instance type can be bought: capacity type (on-demand, spot, reserved), zone, and the
EC2NodeClass that supplies subnets, capacity reservations and its own Ready condition. An instance type
counts only if one of its offerings is compatible with the pod's and the NodePool's requirements
(kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/nodeclaim.go fits(): "no instance type
has the required offering")."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from playbooks.karpenter import labels as lbl
from playbooks.karpenter.requirements import Requirements


def nodeclass_of(nodepool: dict, nodeclasses: dict[str, dict]) -> tuple[str, dict | None]:
    """("group/name", the object or None when it was not read)."""
    ref = ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
    key = f"{ref.get('group', '')}/{ref.get('name', '')}"
    return key, nodeclasses.get(key)


@dataclass(frozen=True)
class NotReady:
    condition: str  # the failing condition: Ready, or SubnetsReady, AMIsReady ... when one of them says why
    reason: str
    message: str


def not_ready(nodeclass: dict | None) -> NotReady | None:
    """A NodeClass whose Ready condition is False: Karpenter returns no instance types for it
    (aws/karpenter-provider-aws pkg/cloudprovider/cloudprovider.go GetInstanceTypes: NodeClass not ready).
    The most specific False condition is named, since Ready's own message only summarises it."""
    if not nodeclass:
        return None
    conditions = {c.get("type"): c for c in (nodeclass.get("status") or {}).get("conditions") or []}
    ready = conditions.get("Ready")
    if not ready or ready.get("status") != "False":
        return None  # Unknown or absent: not yet reconciled, not a verdict
    for name in ("SubnetsReady", "SecurityGroupsReady", "AMIsReady", "InstanceProfileReady", "ValidationSucceeded"):
        cond = conditions.get(name)
        if cond and cond.get("status") == "False":
            return NotReady(name, cond.get("reason", ""), cond.get("message", ""))
    return NotReady("Ready", ready.get("reason", ""), ready.get("message", ""))


def subnet_zones(nodeclass: dict | None) -> frozenset[str] | None:
    """Zones of the NodeClass's resolved subnets (status.subnets[].zone); None when not known."""
    subnets = ((nodeclass or {}).get("status") or {}).get("subnets")
    if not subnets:
        return None
    return frozenset(s["zone"] for s in subnets if s.get("zone"))


def subnet_zone_ids(nodeclass: dict | None) -> dict[str, str] | None:
    """zone -> zone id of the NodeClass's resolved subnets (EC2NodeClass status.subnets[].zoneID, which
    aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass_status.go Subnet.ZoneID holds); None when no
    subnet states one (a status written before zone ids were recorded)."""
    subnets = ((nodeclass or {}).get("status") or {}).get("subnets") or []
    found = {s["zone"]: s["zoneID"] for s in subnets if s.get("zone") and s.get("zoneID")}
    return found or None


def type_zone_ids(name: str, *, ec2, nodeclass: dict | None) -> frozenset[str] | None:
    """The topology.k8s.aws/zone-id values an instance type's nodes can have: the zone ids of the NodeClass
    subnets in zones where the type is offered (aws/karpenter-provider-aws pkg/providers/instancetype/
    types.go computeRequirements). A type EC2 said nothing about keeps every subnet's zone id; None when
    the subnets state no zone id, as upstream then sets no zone-id requirement at all."""
    ids = subnet_zone_ids(nodeclass)
    if ids is None:
        return None
    where = _where(name, ec2=ec2, reserved=reserved_offerings(nodeclass))
    return frozenset(i for z, i in ids.items() if where is None or z in where)


def offering_values(types: dict, *, ec2, nodeclass: dict | None) -> dict[str, dict[str, set[str]]]:
    """type -> {zone, capacity-type, zone-id: values} as the provider's computeRequirements sets them for
    minValues to count: zones where the type is offered within the subnets, the capacity types it is
    offered as (reserved with a reservation), the zone ids of those zones. A key left out is not known."""
    subnets = subnet_zones(nodeclass)
    ids = subnet_zone_ids(nodeclass)
    out: dict[str, dict[str, set[str]]] = {}
    for name in types:
        where = _where(name, ec2=ec2, reserved=reserved_offerings(nodeclass))
        if where is None:
            continue
        zones = {z for z in where if subnets is None or z in subnets}
        values: dict[str, set[str]] = {lbl.ZONE: zones}
        if all(c is not None for c in where.values()):
            values[lbl.CAPACITY_TYPE] = {c for cs in where.values() for c in cs or ()}
        if ids is not None:
            values[lbl.ZONE_ID] = {ids[z] for z in zones if z in ids}
        out[name] = values
    return out


# aws/karpenter-provider-aws v1.14.1 pkg/apis/v1/ec2nodeclass_status.go CapacityReservationFromEC2:
# a Capacity Block is "expiring" from 40 minutes before its end (capacityReservationExpirationPeriod)
CAPACITY_BLOCK_EXPIRATION = dt.timedelta(minutes=40)


def _expiring(cr: dict, now: dt.datetime) -> bool:
    if cr.get("state") == "expiring":
        return True
    if cr.get("reservationType") != "capacity-block" or not cr.get("endTime"):
        return False
    try:
        end = dt.datetime.fromisoformat(str(cr["endTime"]).replace("Z", "+00:00"))
    except ValueError:
        return False
    if end.tzinfo is None:
        end = end.replace(tzinfo=dt.timezone.utc)
    return now >= end - CAPACITY_BLOCK_EXPIRATION  # the status may predate the window


def reserved_offerings(nodeclass: dict | None, *, now: dt.datetime | None = None) -> dict[str, set[str]] | None:
    """instance type -> zones with a capacity reservation (ODCR or Capacity Block) the NodeClass selected
    (EC2NodeClass status.capacityReservations), not expiring: the only source of "reserved" offerings
    (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/offering/reserved_capacity_resolver.go builds
    one offering per nodeClass.CapacityReservations() entry). None: the NodeClass was not read."""
    if nodeclass is None:
        return None
    now = now or dt.datetime.now(dt.timezone.utc)
    out: dict[str, set[str]] = {}
    for cr in (nodeclass.get("status") or {}).get("capacityReservations") or []:
        if cr.get("instanceType") and cr.get("availabilityZone") and not _expiring(cr, now):
            out.setdefault(cr["instanceType"], set()).add(cr["availabilityZone"])
    return out


@dataclass
class Offerings:
    """The verdict on offerings for one NodePool and one pod's requirements."""

    zones: frozenset[str] | None  # allowed zones (pod ∩ NodePool ∩ subnets); None: any
    capacity_types: frozenset[str]  # allowed capacity types
    offered: dict = field(default_factory=dict)  # instance type -> info, with a compatible offering
    where: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)  # type -> zone -> capacity types known
    capacity_checked: bool = True  # False: only zone offerings were known, not capacity types
    subnet_zones: frozenset[str] | None = None


def allowed(reqs: Requirements, *, subnets: frozenset[str] | None) -> tuple[frozenset[str] | None, frozenset[str]]:
    """Allowed zones and capacity types from the merged pod + NodePool requirements and the subnets."""
    zone_req = reqs.by_key.get(lbl.ZONE)
    zones = None
    if zone_req is not None and not zone_req.complement:
        zones = frozenset(zone_req.values)
    if subnets is not None:
        zones = subnets if zones is None else zones & subnets
        if zone_req is not None and zone_req.complement:
            zones = frozenset(z for z in zones if zone_req.has(z))
    ct = reqs.get(lbl.CAPACITY_TYPE)
    return zones, frozenset(c for c in lbl.CAPACITY_TYPES if ct.has(c))


def check(reqs: Requirements, types: dict, *, ec2, nodeclass: dict | None) -> Offerings:
    """Which of ``types`` have an offering the requirements allow. Missing data never removes a type:
    a type EC2 said nothing about counts as offered."""
    subnets = subnet_zones(nodeclass)
    zones, capacity_types = allowed(reqs, subnets=subnets)
    zone_req = reqs.get(lbl.ZONE)
    reserved = reserved_offerings(nodeclass)
    out = Offerings(zones=zones, capacity_types=capacity_types, subnet_zones=subnets,
                    capacity_checked=bool(ec2.offerings))
    for name, info in types.items():
        where = _where(name, ec2=ec2, reserved=reserved)
        if where is None:
            out.offered[name] = info
            continue
        out.where[name] = where
        for zone, cts in where.items():
            if (zones is not None and zone not in zones) or not zone_req.has(zone):
                continue
            if cts is None or cts & capacity_types:
                out.offered[name] = info
                break
    return out


def _where(name: str, *, ec2, reserved: dict[str, set[str]] | None) -> dict[str, frozenset[str] | None] | None:
    """zone -> capacity types (None: capacity types not known) for one type; None when EC2 said nothing.

    A reserved offering is available only for a reservation the NodeClass selected, not expiring, with
    instances left (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/offering/
    reserved_capacity_resolver.go: Available = compatible && reservationCapacity != 0 && zone offered && State
    != expiring && not zonal-shifted). EC2's own "reserved" (an active reservation of the account with
    AvailableInstanceCount > 0) says whether instances are left; the NodeClass says which reservations count.
    Where EC2's capacity types were not read, a selected reservation is taken as available."""
    if name in (ec2.offerings or {}):
        where = {z: frozenset(c) for z, c in ec2.offerings[name].items()}
        if reserved is None:
            return where  # the NodeClass was not read: EC2's view stands
        left = {z for z, c in where.items() if "reserved" in c}
        where = {z: c - {"reserved"} for z, c in where.items()}
        for zone in reserved.get(name, set()) & left:
            where[zone] = where[zone] | {"reserved"}
        return where
    if name in (ec2.zones or {}):
        where = {z: None for z in ec2.zones[name]}
    else:
        return None
    for zone in (reserved or {}).get(name, ()):
        if zone not in where:
            where[zone] = frozenset({"reserved"})
    return where
