"""A scenario's ec2.offerings, answered by moto over real HTTP through boto3."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import boto3
import pytest

from sim.ec2 import patch_offerings
from sim.serve import start_sim
from tests.sim.conftest import write_scenarios

SCENARIO = """\
name: offerings
base: karpenter
region: us-east-1
target: pod/x
namespace: ml
ec2:
  offerings:
    p5.48xlarge: {us-east-1a: [on-demand, spot], us-east-1b: [spot]}
    g6e.12xlarge: {us-east-1a: [on-demand]}
    p5e.48xlarge: {us-east-1d: [reserved]}
objects: []
"""


def _ec2(url: str, region: str = "us-east-1"):
    return boto3.client("ec2", endpoint_url=url, region_name=region,
                        aws_access_key_id="testing", aws_secret_access_key="testing")


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    directory = write_scenarios(tmp_path_factory.mktemp("ec2"), {"offerings.yaml": SCENARIO})
    with start_sim(scenarios=None, directory=directory) as handle:
        yield handle


def _zones(ec2, instance_type: str) -> list[str]:
    offerings = ec2.describe_instance_type_offerings(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": [instance_type]}],
    )["InstanceTypeOfferings"]
    return sorted(o["Location"] for o in offerings)


def test_offerings_list_exactly_the_scenarios_zones(sim):
    ec2 = _ec2(sim.ec2_url)
    assert sim.region == "us-east-1" and "us-east-1" in sim.kubeconfig.read_text()
    assert _zones(ec2, "p5.48xlarge") == ["us-east-1a", "us-east-1b"]
    assert _zones(ec2, "g6e.12xlarge") == ["us-east-1a"]
    assert _zones(ec2, "p5e.48xlarge") == ["us-east-1d"]
    assert len(_zones(ec2, "m5.large")) > 2  # unlisted types keep moto's own data


def test_spot_prices_only_where_spot_is_listed_and_recent(sim):
    ec2 = _ec2(sim.ec2_url)
    history = ec2.describe_spot_price_history(
        InstanceTypes=["p5.48xlarge", "g6e.12xlarge", "m5.large"], ProductDescriptions=["Linux/UNIX"],
    )["SpotPriceHistory"]
    pairs = sorted((h["InstanceType"], h["AvailabilityZone"]) for h in history)
    assert pairs == [("p5.48xlarge", "us-east-1a"), ("p5.48xlarge", "us-east-1b")]
    assert all(float(h["SpotPrice"]) > 0 for h in history)
    assert all(datetime.now(timezone.utc) - h["Timestamp"] < timedelta(hours=1) for h in history)
    zone_b = ec2.describe_spot_price_history(
        InstanceTypes=["p5.48xlarge"], Filters=[{"Name": "availability-zone", "Values": ["us-east-1b"]}],
    )["SpotPriceHistory"]
    assert [h["AvailabilityZone"] for h in zone_b] == ["us-east-1b"]


def test_reserved_capacity_is_an_active_reservation(sim):
    reservations = _ec2(sim.ec2_url).describe_capacity_reservations()["CapacityReservations"]
    assert [(r["InstanceType"], r["AvailabilityZone"], r["State"]) for r in reservations] == [
        ("p5e.48xlarge", "us-east-1d", "active")]
    assert reservations[0]["AvailableInstanceCount"] > 0
    filtered = _ec2(sim.ec2_url).describe_capacity_reservations(
        Filters=[{"Name": "instance-type", "Values": ["p5.48xlarge"]}])["CapacityReservations"]
    assert filtered == []


def test_other_regions_are_untouched(sim):
    other = _ec2(sim.ec2_url, "us-west-2")
    assert other.describe_capacity_reservations()["CapacityReservations"] == []
    assert len(other.describe_spot_price_history(InstanceTypes=["m5.large"])["SpotPriceHistory"]) > 0


def test_two_sims_may_not_patch_one_region(sim):
    with pytest.raises(ValueError, match="already patched"):
        patch_offerings("us-east-1", {"p5.48xlarge": {"us-east-1c": ["spot"]}})


def test_stop_restores_motos_data(tmp_path):
    from moto.ec2.models.instance_types import INSTANCE_TYPE_OFFERINGS

    original = list(INSTANCE_TYPE_OFFERINGS["availability-zone"].get("eu-west-1") or [])
    directory = write_scenarios(tmp_path, {"offerings.yaml": SCENARIO.replace("us-east-1", "eu-west-1")})
    with start_sim(scenarios=None, directory=directory) as handle:
        before_url = handle.ec2_url
        assert _zones(_ec2(before_url, "eu-west-1"), "g6e.12xlarge") == ["eu-west-1a"]
    assert INSTANCE_TYPE_OFFERINGS["availability-zone"].get("eu-west-1") == original
    patch_offerings("eu-west-1", {}).restore()  # the region is free again once the first sim stopped
    with start_sim(scenarios=None, directory=write_scenarios(tmp_path / "plain", {
        "plain.yaml": "name: plain\nbase: none\nregion: eu-west-1\n"})) as plain:
        ec2 = _ec2(plain.ec2_url, "eu-west-1")
        moto_zones = sorted(o["Location"] for o in original if o["InstanceType"] == "g6e.12xlarge")
        assert _zones(ec2, "g6e.12xlarge") == moto_zones != ["eu-west-1a"]
        assert ec2.describe_capacity_reservations()["CapacityReservations"] == []
