"""What the CLI says when a dependency fails: one line on stderr naming what to fix, no traceback, and
the README's exit codes (3: a dependency unreachable or unconfigured); a reader that stops reading
stdout (`gpubot sim list | head -1`) ends it quietly."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.ports import refused_port

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "Sup3rSecret"


def _gpubot(*args: str, stdout=subprocess.PIPE, **env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "bot.cli", *args], cwd=ROOT, stdout=stdout,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT), **env})


@pytest.mark.parametrize(("scheme", "command"), [("postgres", ("db", "upgrade")),
                                                 ("postgresql+psycopg", ("db", "current")),
                                                 ("postgresql", ("incidents", "list")),
                                                 ("postgres", ("diagnose", "pod/x", "--record"))])
def test_an_unreachable_database_is_one_line_and_exit_3(scheme, command):
    with refused_port() as dead:
        proc = _gpubot(*command, GPUBOT_DATABASE_URL=f"{scheme}://gpubot:{PASSWORD}@127.0.0.1:{dead}/gpubot")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert err.decode() == (f"gpubot: cannot reach the database at postgresql://127.0.0.1:{dead}/gpubot "
                            f"(connection refused): check GPUBOT_DATABASE_URL\n")
    assert PASSWORD.encode() not in out + err


def test_an_unknown_host_says_so(tmp_path):
    proc = _gpubot("db", "current", GPUBOT_DATABASE_URL="postgresql://gpubot@db.invalid:5432/gpubot")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3
    assert err.decode().strip() == ("gpubot: cannot reach the database at postgresql://db.invalid:5432/gpubot "
                                    "(unknown host): check GPUBOT_DATABASE_URL")


def test_a_database_with_a_wrong_password_is_one_line_without_it(pg_url):
    from sqlalchemy.engine import make_url

    url = make_url(pg_url)
    # The test server trusts every local connection; a database that does not exist is refused the
    # same way a wrong password is, after connecting.
    missing = url.set(database="no_such_database", password=PASSWORD).render_as_string(hide_password=False)
    proc = _gpubot("db", "current", GPUBOT_DATABASE_URL=missing)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    line = err.decode()
    assert line.count("\n") == 1 and "Traceback" not in line and PASSWORD not in line
    assert line.startswith(f"gpubot: cannot reach the database at postgresql://{url.host}:{url.port}/no_such_database (")
    assert 'database "no_such_database" does not exist' in line


def test_a_closed_stdout_ends_quietly():
    proc = _gpubot("sim", "list")
    proc.stdout.close()  # the reader is gone before anything is written (`| head -0`)
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141  # 128 + SIGPIPE, as the shell reports `yes | head -1`
    assert err == b""


def test_head_takes_the_first_line_and_nothing_is_said(tmp_path):
    result = subprocess.run(f"{sys.executable} -m bot.cli sim list | head -1; echo \"status=${{PIPESTATUS[0]}}\"",
                            shell=True, executable="/bin/bash", cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and lines[1] in ("status=0", "status=141")  # 0 when all fit the pipe first
    assert result.stderr == ""


# What the image leaves out: the sim package, or moto (the simulated EC2). sys.modules[name] = None makes
# every import of it fail as a missing module does, without touching the installed packages.
_WITHOUT = ("import runpy, sys; sys.modules[{name!r}] = None; sys.argv = ['gpubot', *{args!r}]; "
            "runpy.run_module('bot.cli', run_name='__main__')")


@pytest.mark.parametrize("missing", ["sim", "moto"])
@pytest.mark.parametrize("args", [("demo",), ("sim", "list"), ("sim", "serve", "--scenario", "xid-79")])
def test_the_simulator_missing_is_one_line_and_exit_2(missing, args):
    proc = subprocess.run([sys.executable, "-c", _WITHOUT.format(name=missing, args=args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (f"gpubot: the simulated cluster is not part of this installation (no module {missing}): "
                           "install gpubot[sim] from a checkout of the repository (pip install '.[sim]') "
                           "to run gpubot sim and gpubot demo\n")
    assert proc.stdout == ""

