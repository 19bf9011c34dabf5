import yaml
from kubernetes import client, config

from sim.kubeconfig import write_kubeconfig


def test_kubeconfig_carries_the_aws_extension(tmp_path):
    path = write_kubeconfig(tmp_path / "kc", server_url="http://127.0.0.1:1", ec2_endpoint="http://127.0.0.1:2")
    doc = yaml.safe_load(path.read_text())
    assert doc["current-context"] == "gpubot-sim"
    cluster = doc["clusters"][0]["cluster"]
    assert cluster["extensions"] == [
        {"name": "gpubot.dev/aws", "extension": {"region": "ap-northeast-2", "ec2Endpoint": "http://127.0.0.1:2"}}
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["kc"]  # no temp file left behind


def test_ec2_endpoint_is_omitted_when_absent(tmp_path):
    path = write_kubeconfig(tmp_path / "kc", server_url="http://127.0.0.1:1", context="other", region="us-east-1")
    cluster = yaml.safe_load(path.read_text())["clusters"][0]["cluster"]
    assert cluster["extensions"][0]["extension"] == {"region": "us-east-1"}


def test_new_client_from_config_reaches_the_sim(sim, tmp_path):
    path = write_kubeconfig(tmp_path / "kc", server_url=sim.url, context="ctx")
    api = config.new_client_from_config(config_file=str(path), context="ctx")
    try:
        assert api.configuration.host == sim.url
        assert api.configuration.api_key["BearerToken"] == "Bearer sim"
        names = [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items]
        assert "team-a" in names
    finally:
        api.close()
