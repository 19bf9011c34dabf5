#!/usr/bin/env bash
# Usage: scripts/check-wheels.sh [python versions...]      (default: 3.11 3.12 3.13)
#
# Resolves the runtime dependency set (pyproject.toml + the postgres extra) with wheels only, for
# every supported Python on x86_64 and aarch64 Linux (manylinux_2_28: the glibc of python:3.*-slim
# and of every current EKS AMI), so a slim image never needs a compiler. One line per combination:
#   ok   3.12 x86_64-manylinux_2_28  (70 packages)
#   FAIL 3.13 aarch64-manylinux_2_28 <uv's reason, first line>
# Exits 1 when any combination fails. Needs PyPI (uv's resolver reads the index).
set -uo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.venv/bin/uv}
VERSIONS=("${@:-3.11 3.12 3.13}")
# shellcheck disable=SC2206
VERSIONS=(${VERSIONS[*]})
PLATFORMS=(x86_64-manylinux_2_28 aarch64-manylinux_2_28)
status=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for py in "${VERSIONS[@]}"; do
    for platform in "${PLATFORMS[@]}"; do
        if "$UV" pip compile pyproject.toml --extra postgres --only-binary :all: \
                --python-version "$py" --python-platform "$platform" --no-header --no-annotate >"$out" 2>&1; then
            echo "ok   $py $platform  ($(grep -c '==' "$out") packages)"
        else
            status=1
            echo "FAIL $py $platform"
            sed -e 's/^/       /' "$out" | head -20
        fi
    done
done
exit $status
