"""The peers' failures fold under the rank that failed first, end to end: a field scenario served by the
simulator, diagnosed with `gpubot diagnose --json` over the kubernetes client, as a user would.

Upstream: torchrun's agent stops every worker with SIGTERM when one fails (pytorch/pytorch
torch/distributed/elastic/agent/server/api.py); NCCL's survivors read "remote process exited or there was
a network error" when a peer's sockets close (NVIDIA/nccl src/transport/net_socket.cc, src/proxy.cc).
"""
from __future__ import annotations

import json

import pytest

from tests.conftest import REPO
from tests.e2e.test_field_scenarios import field_env  # noqa: F401 - the fixture pointing the CLI at the sim

SCENARIO_DIR = REPO / "tests" / "scenarios"


def _diagnose(cli, field_env, name: str, target: str, namespace: str) -> dict:  # noqa: F811
    from sim.serve import start_sim

    with start_sim(directory=SCENARIO_DIR, scenarios=[name]) as sim:
        field_env(sim.kubeconfig)
        result = cli("diagnose", target, "-n", namespace, "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)


@pytest.mark.parametrize(("name", "target", "namespace", "cause", "peer_line"), [
    ("field-xid79-peer-nccl-timeouts-p4d", "pytorchjob/mixtral-pretrain", "foundation", "gpu.xid_error",
     "Watchdog caught collective operation timeout"),
    ("field-oomkilled-rank3-sigterm-g6e", "pytorchjob/siglip-so400m-ft", "vision-ft", "training.terminated",
     "remote process exited or there was a network error"),
])
def test_the_peers_errors_follow_the_failed_rank_with_their_evidence(cli, field_env, name, target, namespace,  # noqa: F811
                                                                       cause, peer_line):
    d = _diagnose(cli, field_env, name, target, namespace)
    lead, rest = d["findings"][0], d["findings"][1:]
    assert lead["code"] == cause and lead["consequence_of"] is None and lead["severity"] in ("critical", "error")
    followed = [f for f in rest if f["consequence_of"] == cause]
    assert {f["code"] for f in followed} >= {"training.terminated", "nccl.peer_unresponsive"}, \
        [(f["code"], f["consequence_of"]) for f in rest]
    assert all(f["severity"] == "info" for f in followed)
    # no peer's NCCL error or SIGTERM is left standing as a cause of its own
    assert not [f for f in rest if f["consequence_of"] is None and f["severity"] in ("critical", "error")
                and f["code"].startswith("nccl.")]
    quoted = [e["text"] for f in followed for e in f["evidence"]]
    assert any(peer_line in text for text in quoted), "the peers' own words stay with what followed"
    assert any('"exitCode": 143' in text for text in quoted)
    assert not any("OOMKilled" in e["text"] for f in followed for e in f["evidence"] if f["code"] == "training.terminated")


def test_the_failed_ranks_own_cuda_error_and_the_unhealthy_mark_are_the_xid_seen_by_others(cli, field_env):  # noqa: F811
    """worker-4's node lost a GPU (Xid 79): its CUDA error is what that looks like to the program, and the
    device plugin's 7-of-8 allocatable is the same fault; neither is a possible cause beside it."""
    d = _diagnose(cli, field_env, "field-xid79-peer-nccl-timeouts-p4d", "pytorchjob/mixtral-pretrain", "foundation")
    lead, rest = d["findings"][0], d["findings"][1:]
    assert lead["code"] == "gpu.xid_error" and lead["consequence_of"] is None
    standing = [(f["code"], f["severity"]) for f in rest if f["consequence_of"] is None and f["severity"] != "info"]
    assert standing == [], standing
    quoted = [e["text"] for e in lead["evidence"]]
    assert any("GPU has fallen off the bus" in t for t in quoted)
    assert any('"allocatable": {"nvidia.com/gpu": "7"}' in t for t in quoted), "the device plugin's mark joins the cause"
    own = [f for f in rest if f["consequence_of"] == "gpu.xid_error"
           and any("CUDA error: unspecified launch failure" in e["text"] for e in f["evidence"])]
    assert len(own) == 1 and own[0]["severity"] == "info" and "mixtral-pretrain-worker-4" in own[0]["title"]
    assert "not of the GPU" not in own[0]["title"] + own[0]["detail"]
