"""The cluster gateway against the simulated API server over HTTP: bounded retries, timeouts, errors."""
from __future__ import annotations

import json
import urllib.request

import pytest

from bot.errors import ClusterConfigError, ClusterUnreachable
from bot.gateway import connect
from bot.settings import load_settings
from tests.fakes.ports import refused_port


def _settings(sim, **env):
    return load_settings({"KUBECONFIG": str(sim.kubeconfig), "GPUBOT_RETRY_BACKOFF": "0.01", **env})


def _fault(sim, **spec):
    req = urllib.request.Request(f"{sim.url}/sim/faults", data=json.dumps(spec).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()


def _clear(sim):
    urllib.request.urlopen(urllib.request.Request(f"{sim.url}/sim/faults", method="DELETE")).read()


def test_reads_a_pod_and_its_events(seed_sim):
    gw = connect(_settings(seed_sim))
    pod = gw.get_pod("llm-gpu", "llama-3-8b-node-0-0-w5psk")
    assert pod["metadata"]["name"] == "llama-3-8b-node-0-0-w5psk"
    events = gw.events_for(kind="Pod", name="llama-3-8b-node-0-0-w5psk", namespace="llm-gpu")
    assert any(e["reason"] == "UnexpectedAdmissionError" for e in events)
    assert gw.get_pod("llm-gpu", "does-not-exist") is None
    assert gw.info.region == "ap-northeast-2" and gw.info.ec2_endpoint == seed_sim.ec2_url


def test_retries_server_errors_then_succeeds(seed_sim):
    gw = connect(_settings(seed_sim))
    _fault(seed_sim, status=503, times=2, path_contains="/nodepools")
    try:
        assert gw.list_nodepools()
    finally:
        _clear(seed_sim)


def test_retries_are_bounded(seed_sim):
    gw = connect(_settings(seed_sim, GPUBOT_MAX_RETRIES="1"))
    _fault(seed_sim, status=500, times=5, path_contains="/nodepools")
    try:
        with pytest.raises(Exception) as err:
            gw.list_nodepools()
        assert "500" in str(err.value)
    finally:
        _clear(seed_sim)


def test_timeout_names_the_cluster_and_the_limit(seed_sim):
    gw = connect(_settings(seed_sim, GPUBOT_REQUEST_TIMEOUT="0.3", GPUBOT_MAX_RETRIES="0"))
    _fault(seed_sim, status=200, times=1, delay_seconds=1.5, path_contains="/nodepools")
    try:
        with pytest.raises(ClusterUnreachable) as err:
            gw.list_nodepools()
        assert str(err.value) == "cannot reach cluster gpubot-sim (timeout after 0.3 s)"
    finally:
        _clear(seed_sim)


def test_unreachable_cluster(tmp_path):
    with refused_port() as port:
        from sim.kubeconfig import write_kubeconfig

        path = tmp_path / "kubeconfig"
        write_kubeconfig(path, server_url=f"http://127.0.0.1:{port}", context="dead")
        gw = connect(load_settings({"KUBECONFIG": str(path), "GPUBOT_RETRY_BACKOFF": "0.01", "GPUBOT_MAX_RETRIES": "1"}))
        with pytest.raises(ClusterUnreachable) as err:
            gw.get_pod("default", "x")
        assert str(err.value) == "cannot reach cluster dead (connection refused)"


def test_unknown_context_lists_the_known_ones(seed_sim):
    with pytest.raises(ClusterConfigError) as err:
        connect(_settings(seed_sim), context="prod")
    assert "gpubot-sim" in str(err.value)
