"""Render the Helm chart with the real helm binary (scripts/fetch-helm.sh puts it in the venv)."""
from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import yaml

from tests.tools import required_tool

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "gpubot"
CI_VALUES = sorted((CHART / "ci").glob("*.yaml"))
RELEASE, NAMESPACE = "gpubot", "gpubot"
# The least --set that renders: everything else has a default.
REQUIRED = ("image.repository=registry.example.com/gpubot", "slack.existingSecret=gpubot-slack",
            "database.existingSecret=gpubot-db")


def helm_binary() -> str:
    """The venv's helm, else one on PATH; none: skipped locally, a failure under CI."""
    return required_tool("helm", install="run scripts/fetch-helm.sh", first=[Path(sys.prefix) / "bin" / "helm"])


def helm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([helm_binary(), *args], capture_output=True, text=True, timeout=60)


@functools.cache
def _render(values: tuple[str, ...], sets: tuple[str, ...]) -> tuple[dict, ...]:
    args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE]
    for path in values:
        args += ["--values", path]
    for item in sets:
        args += ["--set", item]
    done = helm(*args)
    assert done.returncode == 0, done.stderr
    return tuple(d for d in yaml.safe_load_all(done.stdout) if d)


def render(values: Path | None = None, *sets: str) -> list[dict]:
    """The objects `helm template` renders (fresh copies: callers may change them)."""
    import copy

    return copy.deepcopy(list(_render((str(values),) if values else (), sets)))


def render_error(*sets: str) -> str:
    """helm template's error for values that must not render."""
    done = helm("template", RELEASE, str(CHART), "--namespace", NAMESPACE, *[a for s in sets for a in ("--set", s)])
    assert done.returncode != 0, f"rendered although it should not: {sets}"
    return done.stderr


def one(objects: list[dict], kind: str, name: str | None = None) -> dict:
    [found] = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return found


def kinds(objects: list[dict]) -> set[str]:
    return {o["kind"] for o in objects}
