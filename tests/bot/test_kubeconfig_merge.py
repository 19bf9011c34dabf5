"""KUBECONFIG=a:b read as kubectl reads it (client-go clientcmd/loader.go): a context found in any file,
the first file to name a cluster, user or context wins, current-context from the first file that sets
it, missing and empty files skipped; in-cluster config when there is no kubeconfig at all. Reads go to
the simulated API server over HTTP."""
from __future__ import annotations

import os

import pytest
import yaml

from bot.errors import ClusterConfigError
from bot.gateway import connect
from bot.settings import load_settings
from tests.conftest import run_cli, point_cli_at
from tests.fakes.ports import refused_port


def _laptop(path, *, dead_url: str, current: str | None = "laptop", cluster_name: str = "laptop"):
    doc = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {"server": dead_url}}],
        "users": [{"name": "me", "user": {"token": "t"}}],
        "contexts": [{"name": "laptop", "context": {"cluster": cluster_name, "user": "me"}}],
    }
    if current is not None:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


def _env(*paths) -> dict:
    return {"KUBECONFIG": os.pathsep.join(str(p) for p in paths), "GPUBOT_RETRY_BACKOFF": "0.01",
            "GPUBOT_MAX_RETRIES": "0"}


def test_context_only_in_the_second_file_is_found(seed_sim, tmp_path):
    with refused_port() as port:
        first = _laptop(tmp_path / "a", dead_url=f"http://127.0.0.1:{port}")
        gw = connect(load_settings(_env(first, seed_sim.kubeconfig)), context="gpubot-sim")
        assert gw.name == "gpubot-sim"
        assert gw.get_pod("llm-gpu", "llama-3-8b-node-0-0-w5psk")["metadata"]["name"] == "llama-3-8b-node-0-0-w5psk"
        # The second file's cluster extension is read from the merged view too.
        assert gw.info.region == "ap-northeast-2"


def test_current_context_comes_from_the_first_file_that_sets_it(seed_sim, tmp_path):
    with refused_port() as port:
        first = _laptop(tmp_path / "a", dead_url=f"http://127.0.0.1:{port}")
        assert connect(load_settings(_env(first, seed_sim.kubeconfig))).name == "laptop"
        assert connect(load_settings(_env(seed_sim.kubeconfig, first))).name == "gpubot-sim"
        unset = _laptop(tmp_path / "c", dead_url=f"http://127.0.0.1:{port}", current=None)
        assert connect(load_settings(_env(unset, seed_sim.kubeconfig))).name == "gpubot-sim"


def test_first_file_to_name_a_cluster_wins(seed_sim, tmp_path):
    with refused_port() as port:
        dead = f"http://127.0.0.1:{port}"
        # The first file names its cluster "gpubot-sim" too: kubectl keeps the first, so the sim's
        # context points at the dead server, and the error says so.
        first = _laptop(tmp_path / "a", dead_url=dead, cluster_name="gpubot-sim")
        gw = connect(load_settings(_env(first, seed_sim.kubeconfig)), context="gpubot-sim")
        assert gw.info.server == dead
        assert connect(load_settings(_env(seed_sim.kubeconfig, first)), context="gpubot-sim").info.server == seed_sim.url


def test_missing_and_empty_files_are_skipped(seed_sim, tmp_path):
    (tmp_path / "empty").write_text("")
    gw = connect(load_settings(_env(tmp_path / "missing", tmp_path / "empty", seed_sim.kubeconfig)))
    assert gw.name == "gpubot-sim"


def test_unknown_context_names_every_file_and_context(seed_sim, tmp_path):
    with refused_port() as port:
        first = _laptop(tmp_path / "a", dead_url=f"http://127.0.0.1:{port}")
        with pytest.raises(ClusterConfigError) as err:
            connect(load_settings(_env(first, seed_sim.kubeconfig)), context="prod")
    message = str(err.value)
    assert str(first) in message and str(seed_sim.kubeconfig) in message
    assert "contexts: gpubot-sim, laptop" in message and "--context" in message


def test_cli_nodes_with_the_context_in_the_second_file(seed_sim, tmp_path, monkeypatch):
    point_cli_at(seed_sim, monkeypatch)
    with refused_port() as port:
        first = _laptop(tmp_path / "a", dead_url=f"http://127.0.0.1:{port}")
        monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(first), str(seed_sim.kubeconfig)]))
        result = run_cli("nodes", "--context", "gpubot-sim")
    assert result.code == 0, result.err
    assert result.out.startswith("GPU nodes in gpubot-sim:") and "p4d.24xlarge" in result.out


def test_no_kubeconfig_uses_the_in_cluster_service_account(tmp_path, monkeypatch):
    from kubernetes.config import incluster_config

    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("in-cluster-token")
    ca.write_text("not checked until a TLS handshake")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    settings = load_settings({"KUBECONFIG": str(tmp_path / "none"), "GPUBOT_CLUSTER_NAME": "gpu-prod"})
    gw = connect(settings)
    assert gw.name == "gpu-prod" and gw.info.server == "https://10.0.0.1:443"
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    with pytest.raises(ClusterConfigError) as err:
        connect(settings)
    assert "no kubeconfig found" in str(err.value) and "KUBECONFIG" in str(err.value)
