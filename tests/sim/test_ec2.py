import boto3

from sim.ec2 import start_ec2
from sim.serve import start_sim


def _ec2(url):
    return boto3.client("ec2", endpoint_url=url, region_name="ap-northeast-2",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def test_moto_serves_real_instance_type_data():
    handle = start_ec2()
    try:
        ec2 = _ec2(handle.url)
        types = ec2.describe_instance_types(InstanceTypes=["p4d.24xlarge"])["InstanceTypes"]
        gpus = types[0]["GpuInfo"]["Gpus"][0]
        assert (gpus["Manufacturer"], gpus["Name"], gpus["Count"]) == ("NVIDIA", "A100", 8)
        offerings = ec2.describe_instance_type_offerings(
            LocationType="availability-zone",
            Filters=[{"Name": "instance-type", "Values": ["p4d.24xlarge"]}],
        )["InstanceTypeOfferings"]
        assert offerings and all(o["Location"].startswith("ap-northeast-2") for o in offerings)
    finally:
        handle.stop()


def test_start_sim_wires_ec2_into_the_kubeconfig(scenario_dir):
    with start_sim(scenarios=["beta"], directory=scenario_dir) as sim:
        assert sim.ec2_url and sim.ec2_url in sim.kubeconfig.read_text()
        assert _ec2(sim.ec2_url).describe_instance_types(InstanceTypes=["g5.12xlarge"])["InstanceTypes"]
    assert not sim.kubeconfig.exists()  # the temp kubeconfig goes with the handle
