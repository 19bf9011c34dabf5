"""The image (deploy/Dockerfile) and the chart (deploy/helm/gpubot) agree: what the chart runs is a gpubot
command line of the image's entrypoint, as the image's user, on the ports the image exposes, and every
place the image writes to is on the emptyDir the chart mounts at /tmp (the root filesystem is read-only)."""
from __future__ import annotations

import json
import re
import shlex
import tempfile
from pathlib import Path, PurePosixPath

import pytest

from bot.cli import build_parser
from bot.settings import load_settings
from tests.deploy.chart import CI_VALUES, ROOT, one, render

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
CI_IDS = [p.stem for p in CI_VALUES]


def runtime_stage(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """The last stage's instructions, continuation lines joined and comments dropped (Dockerfile
    reference: https://docs.docker.com/reference/dockerfile/#format)."""
    lines = [line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")]
    text = re.sub(r"\\\n", " ", "\n".join(lines))
    stages: list[list[tuple[str, str]]] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        op, _, arg = raw.strip().partition(" ")
        if op.upper() == "FROM":
            stages.append([])
        elif stages:
            stages[-1].append((op.upper(), arg.strip()))
    return stages[-1]


def image() -> dict:
    """ENTRYPOINT, CMD, USER, WORKDIR, EXPOSE and ENV of the runtime stage, as the image config holds them."""
    found: dict = {"env": {}, "expose": set()}
    for op, arg in runtime_stage():
        if op in ("ENTRYPOINT", "CMD"):
            found[op.lower()] = json.loads(arg)  # exec form only: a shell form would run gpubot under sh -c
        elif op in ("USER", "WORKDIR"):
            found[op.lower()] = arg
        elif op == "EXPOSE":
            found["expose"] |= {int(p.split("/")[0]) for p in arg.split()}
        elif op == "ENV":
            found["env"].update(item.split("=", 1) for item in shlex.split(arg))
    return found


def _under(path: str, root: str) -> bool:
    return PurePosixPath(path).is_relative_to(root)


def test_the_dockerfile_is_read_as_docker_reads_it():
    built = image()
    assert built["entrypoint"] == ["gpubot"] and built["cmd"] == ["serve"]
    assert built["user"] == "10001:10001" and built["expose"] == {3000, 8081}
    assert built["env"]["HOME"] == "/tmp" and built["env"]["PATH"].startswith("/opt/gpubot/bin:")


@pytest.mark.parametrize("values", CI_VALUES, ids=CI_IDS)
def test_the_chart_runs_gpubot_commands_through_the_entrypoint(values):
    built = image()
    pod = one(render(values), "Deployment")["spec"]["template"]["spec"]
    for container in pod["initContainers"] + pod["containers"]:
        # No command: the image's ENTRYPOINT (gpubot) runs, with the chart's args in place of CMD.
        assert "command" not in container, container["name"]
        argv = built["entrypoint"] + container["args"]
        assert argv[0] == "gpubot"
        build_parser().parse_args(argv[1:])  # a command line gpubot accepts (SystemExit otherwise)
    [gpubot] = pod["containers"]
    assert gpubot["args"] == built["cmd"]  # the main container runs what the image runs by default


@pytest.mark.parametrize("values", CI_VALUES, ids=CI_IDS)
def test_the_chart_runs_as_the_images_user(values):
    uid, gid = (int(n) for n in image()["user"].split(":"))
    pod = one(render(values), "Deployment")["spec"]["template"]["spec"]
    assert (pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]) == (uid, gid)
    for container in pod["initContainers"] + pod["containers"]:
        sc = container["securityContext"]
        assert (sc["runAsUser"], sc["runAsGroup"]) == (uid, gid), container["name"]


@pytest.mark.parametrize("values", CI_VALUES, ids=CI_IDS)
def test_the_ports_the_chart_opens_are_the_ones_the_image_exposes_and_gpubot_listens_on(values):
    pod = one(render(values), "Deployment")["spec"]["template"]["spec"]
    [gpubot] = pod["containers"]
    ports = {p["name"]: p["containerPort"] for p in gpubot["ports"]}
    assert set(ports.values()) == image()["expose"]
    env = {e["name"]: e["value"] for e in gpubot["env"] if "value" in e}
    settings = load_settings(env)
    assert (settings.http_port, settings.probe_port) == (ports["http"], ports["probes"])
    # And nothing set: gpubot's own defaults are the image's ports.
    defaults = load_settings({})
    assert {defaults.http_port, defaults.probe_port} == image()["expose"]


@pytest.mark.parametrize("values", CI_VALUES, ids=CI_IDS)
def test_everywhere_the_image_writes_is_on_the_tmp_emptydir(values):
    built = image()
    pod = one(render(values), "Deployment")["spec"]["template"]["spec"]
    [tmp_volume] = [v for v in pod["volumes"] if v["name"] == "tmp"]
    assert "emptyDir" in tmp_volume
    writable = [k for k in ("HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR")]
    assert set(writable) <= set(built["env"]), sorted(built["env"])
    assert _under(built["workdir"], "/tmp")
    for container in pod["initContainers"] + pod["containers"]:
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        [mount] = [m for m in container["volumeMounts"] if m["name"] == "tmp"]
        assert mount["mountPath"] == "/tmp" and not mount.get("readOnly"), container["name"]
        env = {e["name"]: e.get("value") for e in container.get("env") or []}
        # What the chart sets wins over the image; either way it stays on the emptyDir.
        for name in writable:
            path = env.get(name) or built["env"][name]
            assert _under(path, mount["mountPath"]), f"{container['name']}: {name}={path}"
        # prometheus_client's multiprocess directory is tempfile.mkdtemp (bot.metrics): TMPDIR unset,
        # Python takes /tmp first (https://docs.python.org/3/library/tempfile.html#tempfile.gettempdir).
        assert "TMPDIR" not in env and "TMPDIR" not in built["env"] and "PROMETHEUS_MULTIPROC_DIR" not in env


def test_the_metrics_directory_is_made_under_the_temporary_directory(monkeypatch, tmp_path):
    """bot.metrics makes its multiprocess directory with tempfile: pointed at a directory standing in
    for the emptyDir, it lands there (the image leaves TMPDIR unset, so /tmp)."""
    from bot.metrics import WorkerMetrics

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    metrics = WorkerMetrics()
    try:
        assert _under(metrics.path, str(tmp_path))
    finally:
        metrics.close()
