"""start_sim / serve_forever as the CLI uses them: in another process, stopped by a signal."""

import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

from kubernetes import client, config

from sim.serve import start_sim

SERVE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from sim.serve import serve_forever, start_sim
    handle = start_sim(scenarios=["alpha"], ec2=False, directory=sys.argv[1], kubeconfig_out=Path(sys.argv[2]))
    serve_forever(handle)
    """
)


def test_serve_forever_stops_cleanly_on_sigterm(scenario_dir, tmp_path):
    kubeconfig = tmp_path / "out" / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-c", SERVE, str(scenario_dir), str(kubeconfig)],
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "no kubeconfig"
            time.sleep(0.05)
        # The kubeconfig appears only once the server answers.
        api = config.new_client_from_config(config_file=str(kubeconfig))
        assert client.CoreV1Api(api).read_namespaced_pod("trainer-master-0", "team-a").metadata.name
        api.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_kubeconfig_out_is_kept_and_handle_stops_idempotently(scenario_dir, tmp_path):
    path = tmp_path / "kc"
    handle = start_sim(scenarios=["beta"], ec2=False, directory=scenario_dir, kubeconfig_out=path)
    assert [s.name for s in handle.scenarios] == ["beta"]
    handle.stop()
    handle.stop()
    assert path.exists()


def test_concurrent_reads_and_writes(sim, core):
    def work(i):
        core.patch_namespaced_pod("trainer-master-0", "team-a", {"metadata": {"labels": {f"k{i}": "v"}}},
                                  _content_type="application/merge-patch+json")
        return len(core.list_namespaced_pod("team-a", label_selector="job-name=trainer").items)

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert set(pool.map(work, range(40))) == {3}
    labels = core.read_namespaced_pod("trainer-master-0", "team-a").metadata.labels
    assert {f"k{i}" for i in range(40)} <= set(labels)
