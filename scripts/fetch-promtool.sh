#!/usr/bin/env bash
# Usage: scripts/fetch-promtool.sh
#
# Makes sure `promtool` (Prometheus' rule checker) is on PATH, so tests/deploy_rules can run
# `promtool check rules` and `promtool test rules` on deploy/prometheus (`make test` calls this first).
#
# - promtool already on PATH: nothing is done (the script is idempotent and fast on every later run).
# - Otherwise: Debian's `prometheus` package, which ships /usr/bin/promtool, is installed with apt
#   (root or passwordless sudo). Its maintainer scripts are kept from starting a Prometheus server:
#   only the checker is wanted. The release tarball from github.com is not used: test machines reach
#   package registries only.
#
# Prints the path of promtool on success; exits 1 with what to do next when it cannot be installed,
# so the rule tests fail loudly instead of being skipped.
set -euo pipefail

PROG=fetch-promtool
die() {
    echo "$PROG: ERROR: $*" >&2
    exit 1
}
log() { echo "$PROG: $*" >&2; }

if command -v promtool >/dev/null 2>&1; then
    command -v promtool
    exit 0
fi

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n "$@"
    else
        die "promtool is not installed and installing it needs root (or passwordless sudo): run \`apt-get install prometheus\` (it ships promtool), or put a promtool binary on PATH"
    fi
}

command -v apt-get >/dev/null 2>&1 \
    || die "promtool is not installed and there is no apt-get to install it: put a promtool binary (from a Prometheus release) on PATH"

started=$(date +%s)
log "promtool not found; installing Debian's prometheus package with apt (first run only) ..."
# policy-rc.d exit 101 = "don't start services": the package would otherwise start a Prometheus server.
made_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
    as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
    made_policy=1
fi
apt_ok=1
APT_LOG=/tmp/fetch-promtool-apt.log
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >"$APT_LOG" 2>&1 || apt_ok=0
if [ "$apt_ok" -eq 1 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o DPkg::Lock::Timeout=300 prometheus </dev/null >>"$APT_LOG" 2>&1 || apt_ok=0
fi
[ "$made_policy" -eq 1 ] && as_root rm -f /usr/sbin/policy-rc.d
if [ "$apt_ok" -ne 1 ]; then
    tail -n 30 "$APT_LOG" >&2 || true
    die "could not install the prometheus package with apt (full log: $APT_LOG)"
fi
command -v promtool >/dev/null 2>&1 || die "apt installed prometheus but promtool is not on PATH"
log "installed with apt in $(( $(date +%s) - started )) s: $(promtool --version 2>&1 | head -n 1)"
command -v promtool
