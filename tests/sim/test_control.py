"""The /sim/ control endpoints: request counting and fault injection."""

import json
import time
import urllib.error
import urllib.request

import pytest
from kubernetes.client.rest import ApiException


def _control(sim, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{sim.url}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def test_request_counter_and_reset(sim, core):
    _control(sim, "POST", "/sim/requests/reset")
    core.list_namespaced_pod("team-a")
    core.read_namespaced_pod("trainer-master-0", "team-a")
    assert _control(sim, "GET", "/sim/requests") == {"count": 2}  # control calls are not counted
    assert sim.request_count() == 2
    log = _control(sim, "GET", "/sim/requests/log")["requests"]
    assert log == [
        "GET /api/v1/namespaces/team-a/pods 200",
        "GET /api/v1/namespaces/team-a/pods/trainer-master-0 200",
    ]
    sim.reset_requests()
    assert _control(sim, "GET", "/sim/requests") == {"count": 0}


def test_fault_fails_matching_requests_then_clears(sim, core):
    _control(sim, "POST", "/sim/faults", {"status": 503, "times": 1, "path_contains": "/pods/trainer-master-0"})
    core.list_namespaced_pod("team-a")  # does not match the fault
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("trainer-master-0", "team-a")
    assert err.value.status == 503
    assert core.read_namespaced_pod("trainer-master-0", "team-a").metadata.name == "trainer-master-0"
    assert sim.request_log()[-2:] == [
        "GET /api/v1/namespaces/team-a/pods/trainer-master-0 503",
        "GET /api/v1/namespaces/team-a/pods/trainer-master-0 200",
    ]


def test_429_carries_retry_after_and_delete_clears_faults(sim, core):
    _control(sim, "POST", "/sim/faults", {"status": 429, "times": 5})
    with pytest.raises(ApiException) as err:
        core.list_node()
    assert err.value.status == 429 and err.value.headers["Retry-After"] == "0"
    _control(sim, "DELETE", "/sim/faults")
    assert core.list_node().items


@pytest.mark.parametrize("spec", [{"delay_seconds": 0.3}, {"status": 200, "delay_seconds": 0.3}])
def test_delay_only_fault_slows_then_serves(sim, core, spec):
    _control(sim, "POST", "/sim/faults", {**spec, "path_contains": "/nodes"})
    started = time.monotonic()
    assert core.list_node().items
    assert time.monotonic() - started >= 0.3


def test_delay_longer_than_the_client_timeout(sim, core, capfd):
    # times=4: urllib3 retries a timed-out GET three times before giving up.
    _control(sim, "POST", "/sim/faults", {"status": 200, "delay_seconds": 0.5, "times": 4})
    with pytest.raises(Exception, match="[Tt]imed? ?out"):
        core.list_node(_request_timeout=0.1)
    time.sleep(0.7)  # let the server finish writing to the closed sockets
    assert core.list_node().items
    assert "Traceback" not in capfd.readouterr().err


def test_bad_fault_is_rejected(sim):
    with pytest.raises(urllib.error.HTTPError) as err:
        _control(sim, "POST", "/sim/faults", {"status": 200})
    assert err.value.code == 400
