"""The EC2 catalogue against moto in server mode over real HTTP: the embedded catalogue of GPU and
accelerated types agrees with EC2's own answers, takes over when EC2 cannot be asked, answers are kept
per account, and offerings are told apart by capacity type."""
from __future__ import annotations

import json
import re
import socket
from importlib import metadata, resources

import boto3
import botocore.exceptions
import pytest

from bot.gateway.catalogue import embedded_catalogue, parse_instance_type
from bot.gateway.ec2 import Ec2Catalog, Ec2Unavailable, catalog_for
from sim.ec2 import start_ec2

REGION = "us-east-1"
AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL",
           "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_STS", "AWS_REGION", "AWS_DEFAULT_REGION")


@pytest.fixture(scope="module")
def moto_url():
    handle = start_ec2()
    yield handle.url
    handle.stop()


@pytest.fixture
def aws_env(monkeypatch):
    """Dummy credentials moto accepts; no shared files, so nothing on this machine leaks in."""
    for key in AWS_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    return monkeypatch


@pytest.fixture
def no_credentials(aws_env):
    aws_env.delenv("AWS_ACCESS_KEY_ID")
    aws_env.delenv("AWS_SECRET_ACCESS_KEY")
    return aws_env


def _ec2(url, **creds):
    creds = creds or {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    return boto3.client("ec2", endpoint_url=url, region_name=REGION, **creds)


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens once the socket is closed


# -- the embedded data ------------------------------------------------------------------------------

def test_embedded_catalogue_names_its_source_and_what_it_lacks():
    raw = json.loads((resources.files("bot.gateway") / "data" / "instance_types.json").read_text())
    assert raw["moto_version"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw["generated"])
    catalogue = embedded_catalogue()
    assert catalogue.source == f"embedded catalogue (moto {raw['moto_version']} data, {raw['generated']})"
    families = {info.family for info in catalogue.types.values()}
    for family in ("g4dn", "g5", "g5g", "g6", "g6e", "gr6", "p4d", "p4de", "p5", "p5e", "p5en", "trn1", "trn1n",
                   "trn2", "inf1", "inf2", "dl2q"):
        assert family in families, family
    # moto 5.2.5's data has no g4ad, p3 or dl1 (Gaudi): said, not guessed
    assert {"g4ad", "p3", "dl1"} <= set(catalogue.missing)
    assert not {"g4ad", "p3", "dl1"} & families
    # only accelerated types: CPU-only ones would be guesses about a region's full list
    assert all(i.gpu_count or i.gpu_name or i.neuron_count or i.accelerator_count for i in catalogue.types.values())


def test_embedded_catalogue_is_what_the_script_makes_from_the_installed_moto():
    from scripts.gen_instance_catalogue import build

    committed = json.loads((resources.files("bot.gateway") / "data" / "instance_types.json").read_text())
    assert committed["moto_version"] == metadata.version("moto"), (
        "moto was upgraded: run .venv/bin/python scripts/gen_instance_catalogue.py and commit the JSON")
    fresh = build()
    assert fresh["instance_types"] == committed["instance_types"]
    assert fresh["missing"] == committed["missing"]


@pytest.mark.parametrize("name", ["p4d.24xlarge", "g5.xlarge", "trn1.32xlarge", "p5.48xlarge", "inf2.xlarge",
                                  "g6e.12xlarge", "dl2q.24xlarge"])
def test_embedded_facts_match_ec2s_answer(moto_url, name):
    answer = _ec2(moto_url).describe_instance_types(InstanceTypes=[name])["InstanceTypes"]
    assert embedded_catalogue().types[name] == parse_instance_type(answer[0])


def test_p4d_24xlarge():
    p4d = embedded_catalogue().types["p4d.24xlarge"]
    assert (p4d.vcpus, p4d.memory_mib, p4d.architectures) == (96, 1179648, ("x86_64",))
    assert (p4d.gpu_count, p4d.gpu_name, p4d.gpu_manufacturer, p4d.gpu_memory_mib) == (8, "A100", "NVIDIA", 40960)
    assert (p4d.efa_supported, p4d.max_efa_interfaces) == (True, 4)
    # 15 ENIs on the default card, 50 IPv4 each: 15 * 49 + 2, as amazon-eks-ami's eni-max-pods.txt says
    assert (p4d.max_network_interfaces, p4d.max_pods) == (60, 737)
    labels = p4d.karpenter_labels()
    assert labels["karpenter.k8s.aws/instance-gpu-count"] == "8"
    assert labels["karpenter.k8s.aws/instance-gpu-name"] == "a100"
    assert labels["karpenter.k8s.aws/instance-gpu-memory"] == "40960"
    assert "karpenter.k8s.aws/instance-accelerator-name" not in labels


def test_g5_xlarge():
    g5 = embedded_catalogue().types["g5.xlarge"]
    assert (g5.vcpus, g5.memory_mib, g5.gpu_count, g5.gpu_name, g5.gpu_memory_mib) == (4, 16384, 1, "A10G", 22888)
    assert (g5.efa_supported, g5.max_efa_interfaces) == (False, 0)
    assert g5.max_pods == 4 * 14 + 2
    assert g5.karpenter_labels("eks.amazonaws.com")["eks.amazonaws.com/instance-gpu-manufacturer"] == "nvidia"


def test_trn1_32xlarge_has_neuron_devices_and_accelerator_labels():
    trn1 = embedded_catalogue().types["trn1.32xlarge"]
    assert (trn1.gpu_count, trn1.neuron_count, trn1.neuron_core_count) == (0, 16, 32)
    assert (trn1.efa_supported, trn1.max_efa_interfaces, trn1.max_pods) == (True, 8, 5 * 49 + 2)
    labels = trn1.karpenter_labels()
    assert labels["karpenter.k8s.aws/instance-accelerator-name"] == "trainium"
    assert labels["karpenter.k8s.aws/instance-accelerator-manufacturer"] == "aws"
    assert labels["karpenter.k8s.aws/instance-accelerator-count"] == "16"
    assert "karpenter.k8s.aws/instance-gpu-count" not in labels


def test_inference_accelerators_other_than_neuron_are_labelled_as_ec2_names_them():
    labels = embedded_catalogue().types["dl2q.24xlarge"].karpenter_labels()
    assert labels["karpenter.k8s.aws/instance-accelerator-name"] == "qualcomm-ai100"
    assert labels["karpenter.k8s.aws/instance-accelerator-manufacturer"] == "qualcomm"
    assert labels["karpenter.k8s.aws/instance-accelerator-count"] == "8"


# -- when EC2 cannot be asked --------------------------------------------------------------------------

def test_without_credentials_instance_facts_come_from_the_embedded_catalogue(moto_url, no_credentials):
    catalog = catalog_for(region=REGION, endpoint_url=moto_url)
    assert catalog.account is None
    found = catalog.matching(["p4d.*", "g5.xlarge"])
    assert sorted(found) == ["g5.xlarge", "p4d.24xlarge"]
    assert found["p4d.24xlarge"].max_efa_interfaces == 4
    assert catalog.source == embedded_catalogue().source
    assert catalog.unavailable_reason == "no AWS credentials found"
    assert catalog.instance_types(["trn1.32xlarge", "m5.large"]).keys() == {"trn1.32xlarge"}
    with pytest.raises(Ec2Unavailable, match="^zone offerings not checked: no AWS credentials found$"):
        catalog.zones_offering(["p4d.24xlarge"])
    with pytest.raises(Ec2Unavailable, match="zone offerings not checked"):
        catalog.offerings(["p4d.24xlarge"])
    assert catalog.calls == 0


def test_unreachable_ec2_falls_back_once_and_zone_offerings_say_why(aws_env):
    catalog = Ec2Catalog(region=REGION, endpoint_url=_closed_port_url(), timeout=2)
    found = catalog.matching(["p5.*"])
    assert found["p5.48xlarge"].gpu_name == "H100"
    assert catalog.source.startswith("embedded catalogue (moto ")
    calls = catalog.calls
    with pytest.raises(Ec2Unavailable, match="^zone offerings not checked: EC2 did not answer DescribeInstanceTypes"):
        catalog.zones_offering(["p5.48xlarge"])
    assert catalog.calls == calls  # the same diagnosis does not wait for the timeouts again


def test_ec2_answers_override_the_embedded_catalogue(moto_url, aws_env):
    catalog = catalog_for(region=REGION, endpoint_url=moto_url)
    found = catalog.matching(["g5.*", "m5.large"])
    assert catalog.source == "ec2" and catalog.unavailable_reason is None
    assert "m5.large" in found  # EC2 knows every type; the embedded catalogue only accelerated ones
    assert found["g5.xlarge"] == embedded_catalogue().types["g5.xlarge"]


# -- one catalogue per account -------------------------------------------------------------------------

def test_catalogues_are_kept_per_account(moto_url, aws_env):
    first = catalog_for(region=REGION, endpoint_url=moto_url)
    assert first.account == "123456789012"  # moto's default account, from STS GetCallerIdentity
    assert catalog_for(region=REGION, endpoint_url=moto_url) is first

    sts = boto3.client("sts", endpoint_url=moto_url, region_name=REGION,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    creds = sts.assume_role(RoleArn="arn:aws:iam::111122223333:role/gpubot", RoleSessionName="gpubot")["Credentials"]
    aws_env.setenv("AWS_ACCESS_KEY_ID", creds["AccessKeyId"])
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", creds["SecretAccessKey"])
    aws_env.setenv("AWS_SESSION_TOKEN", creds["SessionToken"])
    other = catalog_for(region=REGION, endpoint_url=moto_url)
    assert other is not first and other.account == "111122223333"
    assert other.matching(["p4d.24xlarge"])["p4d.24xlarge"].gpu_count == 8
    assert other.source == "ec2"

    assert catalog_for(region="us-west-2", endpoint_url=moto_url) is not other  # and per region


# -- offerings by capacity type ------------------------------------------------------------------------

def test_offerings_by_capacity_type(moto_url, aws_env):
    # moto cannot be seeded with spot prices: it prices every zone that offers a type (0.00001, dated
    # 2006). Zones with on-demand but no spot are therefore not exercised here.
    names = ["g5.xlarge", "p4d.24xlarge"]
    ec2 = _ec2(moto_url)
    offered = {n: {o["Location"] for o in ec2.describe_instance_type_offerings(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": [n]}])["InstanceTypeOfferings"]}
        for n in names}
    priced = {n: {p["AvailabilityZone"] for p in ec2.describe_spot_price_history(InstanceTypes=[n])["SpotPriceHistory"]}
              for n in names}
    catalog = catalog_for(region=REGION, endpoint_url=moto_url)

    offerings = catalog.offerings(names)

    for name in names:
        assert offered[name] and set(offerings[name]) == offered[name] | priced[name]
        assert {z for z, cts in offerings[name].items() if "on-demand" in cts} == offered[name]
        assert {z for z, cts in offerings[name].items() if "spot" in cts} == priced[name]
    # moto 5.2.5 does not implement DescribeCapacityReservations; the simulator adds it (no reservations)
    # process-wide once a simulated cluster has started. Either way no zone claims reserved capacity, and
    # where EC2 cannot answer, reserved capacity is named as not checked.
    try:
        ec2.describe_capacity_reservations()
        answered = True
    except botocore.exceptions.ClientError:
        answered = False
    unchecked = catalog.capacity_types_unchecked
    if answered:
        assert "reserved" not in unchecked
    else:
        assert set(unchecked) == {"reserved"} and "DescribeCapacityReservations" in unchecked["reserved"]
    assert not any("reserved" in cts for zones in offerings.values() for cts in zones.values())
    calls = catalog.calls
    assert catalog.offerings(names) == offerings
    assert catalog.calls == calls  # cached, the failed check included


def test_when_sts_cannot_say_answers_are_kept_per_access_key(aws_env):
    url = _closed_port_url()
    catalog = catalog_for(region=REGION, endpoint_url=url, timeout=2)
    assert catalog.account == "access key testing"
    aws_env.setenv("AWS_ACCESS_KEY_ID", "other")
    assert catalog_for(region=REGION, endpoint_url=url, timeout=2).account == "access key other"
    # and EC2 there cannot be reached either: the embedded catalogue answers
    assert catalog.matching(["g6e.*"])["g6e.xlarge"].gpu_name == "L40S"


def test_without_a_region_the_embedded_catalogue_answers_and_says_why_zones_were_not(moto_url, aws_env):
    catalog = catalog_for(region=None, endpoint_url=moto_url)
    assert catalog.matching(["p5e.*"])["p5e.48xlarge"].gpu_memory_mib == 144384
    with pytest.raises(Ec2Unavailable, match=r"^zone offerings not checked: no AWS region is configured \(set AWS_REGION\)$"):
        catalog.zones_offering(["p5e.48xlarge"])


def test_offerings_ask_only_for_the_capacity_types_wanted(moto_url, aws_env):
    catalog = Ec2Catalog(region=REGION, endpoint_url=moto_url)
    offerings = catalog.offerings(["g5.xlarge"], capacity_types=["on-demand", "spot"])
    assert catalog.capacity_types_unchecked == {}  # reserved was not asked for, so not tried
    assert catalog.calls == 3  # DescribeInstanceTypeOfferings, DescribeInstanceTypes, DescribeSpotPriceHistory
    assert {cts for cts in offerings["g5.xlarge"].values()} == {frozenset({"on-demand", "spot"})}
    spot_only = catalog.offerings(["g5.xlarge"], capacity_types=["spot"])
    assert {cts for cts in spot_only["g5.xlarge"].values()} == {frozenset({"spot"})}
