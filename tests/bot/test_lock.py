"""The image's inputs, checked offline by parsing: the lock files agree with pyproject.toml (every direct
dependency locked at a version its specifier allows, every pin hashed), and deploy/Dockerfile builds
from them alone: a builder and a runtime stage, hashed installs only, non-root, writable only /tmp,
every runtime package copied."""
from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from bot.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# Environments the lock must serve: the image's platforms on every supported Python.
ENVIRONMENTS = [
    {"python_version": py, "python_full_version": f"{py}.0", "platform_machine": machine, "sys_platform": "linux",
     "platform_system": "Linux", "os_name": "posix", "implementation_name": "cpython",
     "platform_python_implementation": "CPython", "extra": "postgres"}
    for py in ("3.11", "3.12", "3.13") for machine in ("x86_64", "aarch64")
]


def _locked(path: Path) -> list[tuple[str, Version, Marker | None, list[str]]]:
    """(name, version, marker, hashes) for each pin of a `uv pip compile --generate-hashes` file."""
    entries = []
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        pin, _, marker = line.partition(";")
        hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", marker or pin)
        pin = pin.split("--hash")[0].strip()
        marker = marker.split("--hash")[0].strip()
        name, _, version = pin.partition("==")
        entries.append((canonicalize_name(name), Version(version), Marker(marker) if marker else None, hashes))
    return entries


def _direct_dependencies() -> list[Requirement]:
    return [Requirement(r) for r in PYPROJECT["project"]["dependencies"]
            + PYPROJECT["project"]["optional-dependencies"]["postgres"]]


def test_every_pin_is_exact_and_hashed():
    for lock in ("gpubot.lock", "build.lock"):
        entries = _locked(ROOT / "requirements" / lock)
        assert entries, lock
        for name, _, _, hashes in entries:
            assert hashes, f"{lock}: {name} has no --hash (run scripts/lock.sh)"


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda e: f"py{e['python_version']}-{e['platform_machine']}")
def test_lock_satisfies_pyproject(env):
    """Each direct dependency that applies on this platform is locked, at an allowed version; stale
    locks (a bumped lower bound, a new dependency) fail here until scripts/lock.sh is run."""
    locked: dict[str, list[Version]] = {}
    for name, version, marker, _ in _locked(ROOT / "requirements" / "gpubot.lock"):
        if marker is None or marker.evaluate(env):
            locked.setdefault(name, []).append(version)
    assert all(len(v) == 1 for v in locked.values()), {k: v for k, v in locked.items() if len(v) > 1}
    for req in _direct_dependencies():
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        name = canonicalize_name(req.name)
        assert name in locked, f"{req} is not in requirements/gpubot.lock: run scripts/lock.sh"
        assert req.specifier.contains(locked[name][0], prereleases=True), (
            f"requirements/gpubot.lock has {name}=={locked[name][0]}, pyproject.toml wants {req}: run scripts/lock.sh")
    # psycopg[binary]: the extra's package is what lets the slim image skip libpq and a compiler.
    assert "psycopg-binary" in locked


def test_build_lock_satisfies_the_build_backend():
    versions = {n: v for n, v, _, _ in _locked(ROOT / "requirements" / "build.lock")}
    for spec in PYPROJECT["build-system"]["requires"]:
        req = Requirement(spec)
        assert req.specifier.contains(versions[canonicalize_name(req.name)]), f"{spec}: run scripts/lock.sh"


def test_lock_was_made_by_the_script():
    header = (ROOT / "requirements" / "gpubot.lock").read_text().splitlines()[1]
    script = (ROOT / "scripts" / "lock.sh").read_text()
    for flag in ("--extra postgres", "--generate-hashes", "--universal", "-o requirements/gpubot.lock"):
        assert flag in header and flag in script


# -- the Dockerfile -----------------------------------------------------------------------------


def _instructions(path: Path) -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", "\n".join(line for line in path.read_text().splitlines()
                                         if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line.strip() else "")
            for line in (raw.strip() for raw in text.splitlines()) if line]


def _stages(path: Path) -> dict[str, list[tuple[str, str]]]:
    stages: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for op, arg in _instructions(path):
        if op == "FROM":
            name = arg.split()[-1] if " as " in arg.lower() else f"stage{len(stages)}"
            current = stages.setdefault(name, [])
        elif current is not None:
            current.append((op, arg))
    return stages


DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def test_two_stages_and_the_last_is_the_runtime():
    stages = _stages(DOCKERFILE)
    assert list(stages) == ["builder", "runtime"]
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in DOCKERFILE.read_text()
    runtime = stages["runtime"]
    assert ("COPY", "--from=builder /opt/gpubot /opt/gpubot") in runtime
    # Nothing is installed or compiled in the image people run: no pip, no apt, no compiler.
    runs = " ".join(arg for op, arg in runtime if op == "RUN")
    assert not re.search(r"\b(pip|apt-get|apt|gcc|cc|make|build-essential)\b", runs), runs


def test_every_install_is_hashed_or_offline():
    installs = [arg for op, arg in _instructions(DOCKERFILE) if op == "RUN"
                for arg in re.split(r"&&", arg) if re.search(r"\bpip (install|wheel)\b", arg)]
    assert len(installs) == 4
    for command in installs:
        assert "--require-hashes" in command or "--no-index" in command, command
        if "--require-hashes" in command:
            assert "--only-binary :all:" in command and re.search(r"-r /tmp/requirements/\w+\.lock", command)


def test_runs_as_non_root_with_only_tmp_writable():
    runtime = _stages(DOCKERFILE)["runtime"]
    users = [arg for op, arg in runtime if op == "USER"]
    assert users == ["10001:10001"]
    env = " ".join(arg for op, arg in runtime if op == "ENV")
    for var in ("HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR"):
        value = re.search(rf"\b{var}=(\S+)", env)
        assert value and value.group(1).startswith("/tmp"), var
    assert ("WORKDIR", "/tmp") in runtime


def test_entrypoint_ports_and_labels():
    runtime = _stages(DOCKERFILE)["runtime"]
    assert ("ENTRYPOINT", '["gpubot"]') in runtime and "gpubot" in PYPROJECT["project"]["scripts"]
    settings = load_settings({})
    assert ("EXPOSE", f"{settings.http_port} {settings.probe_port}") in runtime
    labels = " ".join(arg for op, arg in runtime if op == "LABEL")
    for key in ("title", "description", "version", "revision", "base.name"):
        assert f"org.opencontainers.image.{key}=" in labels


# The simulator (sim) is left out of the image: it serves `gpubot sim` and `gpubot demo` only, needs
# moto (the `sim` extra, not in the lock), and is imported lazily by those two commands alone.
LEFT_OUT = {"sim"}


def _packages() -> set[str]:
    return {p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]}


def test_every_runtime_package_is_copied_and_let_through():
    copied = {arg.split()[0] for op, arg in _stages(DOCKERFILE)["builder"] if op == "COPY"}
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert _packages() - LEFT_OUT <= copied, _packages() - LEFT_OUT - copied
    assert not LEFT_OUT & copied
    for source in copied | {"requirements/gpubot.lock", "requirements/build.lock"}:
        for part in source.split():
            if not part.startswith("/"):
                assert f"!{part.rstrip('/')}" in ignore or f"!{part.rstrip('/')}/" in ignore, part


def test_left_out_packages_are_imported_only_inside_functions():
    """A module-level import of sim would break every command in the image, not just the demo."""
    for package in _packages() - LEFT_OUT:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in tree.body:
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                assert not any(n.split(".")[0] in LEFT_OUT for n in names), f"{path}: {names}"
