"""Pod logs. kubernetes-client 36 returns the repr of the bytes ("b'...'") from
read_namespaced_pod_log (upstream regression kubernetes-client/python#2596), so these tests read the
raw body with _preload_content=False, the way the gateway has to.
"""

import json

import pytest
from kubernetes.client.rest import ApiException


def _log(core, name, namespace, **kwargs):
    response = core.read_namespaced_pod_log(name, namespace, _preload_content=False, **kwargs)
    assert response.headers["Content-Type"] == "text/plain"
    return response.data.decode()


def test_current_previous_and_tail(core):
    assert _log(core, "trainer-master-0", "team-a") == "step 1\nstep 2\nstep 3\n"
    assert _log(core, "trainer-master-0", "team-a", tail_lines=2) == "step 2\nstep 3\n"
    assert _log(core, "trainer-master-0", "team-a", limit_bytes=6) == "step 1"
    previous = _log(core, "trainer-master-0", "team-a", container="pytorch", previous=True)
    assert previous == "Traceback\nCUDA out of memory\n"


def test_pod_without_log_is_empty_and_missing_previous_is_400(core):
    assert _log(core, "trainer-worker-1", "team-a") == ""
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod_log("trainer-worker-1", "team-a", previous=True)
    assert err.value.status == 400
    message = json.loads(err.value.body)["message"]
    assert message == 'previous terminated container "pytorch" in pod "trainer-worker-1" not found'


def test_container_must_be_named_when_pod_has_several(core):
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod_log("trainer-worker-0", "team-a")
    assert err.value.status == 400 and "choose one of: [pytorch sidecar]" in err.value.body
    assert _log(core, "trainer-worker-0", "team-a", container="sidecar") == ""


def test_unknown_pod_log_is_404(core):
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod_log("ghost", "team-a")
    assert err.value.status == 404
