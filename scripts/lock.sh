#!/usr/bin/env bash
# Usage: scripts/lock.sh
#
# Regenerates the lock files the image installs from (pip --require-hashes):
#
# requirements/gpubot.lock, from pyproject.toml: the runtime dependencies plus the
# `postgres` extra, pinned with hashes, resolved once for every platform and Python the project
# supports (--universal: markers instead of one answer per machine), so an x86_64 and an arm64 image
# install the same versions.
#
# requirements/build.lock, from requirements/build.in: the build backend (setuptools) the builder
# stage needs to turn the source into a wheel, so that step fetches nothing unpinned either.
#
# Run it after changing [project] dependencies; tests/bot/test_lock.py fails until you do.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.venv/bin/uv}
"$UV" pip compile pyproject.toml --extra postgres --generate-hashes --universal \
    --quiet -o requirements/gpubot.lock "$@"
"$UV" pip compile requirements/build.in --generate-hashes --universal --python-version 3.11 \
    --quiet -o requirements/build.lock "$@"
