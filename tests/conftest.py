"""Shared fixtures: the simulated cluster with every seed scenario, reached over real HTTP, and a way
to run the ``gpubot`` CLI in-process against it."""
from __future__ import annotations

pytest_plugins = ["tests.store_fixtures", "tests.pg_fixtures"]

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import pytest

SIM_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture(scope="session")
def seed_sim():
    """Every seed scenario in one simulated cluster, with moto answering EC2."""
    from sim.serve import start_sim

    with start_sim(scenarios=None) as sim:
        yield sim


def point_cli_at(sim, monkeypatch):
    """Environment pointing the CLI at a simulated cluster (kubeconfig) and moto (dummy credentials)."""
    monkeypatch.setenv("KUBECONFIG", str(sim.kubeconfig))
    for key, value in SIM_ENV.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2", "GPUBOT_NAMESPACE",
                "GPUBOT_CONTEXT", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    return sim


@pytest.fixture
def sim_env(seed_sim, monkeypatch):
    """The CLI pointed at the seed cluster."""
    return point_cli_at(seed_sim, monkeypatch)


def run_cli(*args: str, stdin: bytes | None = None) -> CliResult:
    """``gpubot ARGS`` in this process; stdout/stderr captured."""
    from bot.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = None
    if stdin is not None:
        import sys

        old_stdin = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        if old_stdin is not None:
            import sys

            sys.stdin = old_stdin
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli


REPO = Path(__file__).resolve().parent.parent
