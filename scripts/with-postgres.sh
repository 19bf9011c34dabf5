#!/usr/bin/env bash
# Usage: scripts/with-postgres.sh COMMAND [ARG...]
#
# Runs COMMAND with GPUBOT_TEST_POSTGRES_URL pointing at a throwaway PostgreSQL server, so the store
# tests run against PostgreSQL as well as SQLite (`make test` uses it).
#
# - GPUBOT_TEST_POSTGRES_URL already set: that server is used as it is; nothing is installed or started.
# - Otherwise: PostgreSQL is installed with apt if no /usr/lib/postgresql/*/bin/initdb exists (Debian;
#   root or passwordless sudo), a new cluster is made in a temporary directory (trust auth, listening
#   on 127.0.0.1 only, on a free port, its unix socket inside that directory), started, and given a
#   database `gpubot_test`. When the command ends, however it ends, the server is stopped and the
#   directory deleted. The script exits with the command's status.
#
# If PostgreSQL cannot be installed or started the script fails (status 1) without running the
# command: the PostgreSQL store tests must not be skipped for want of a server.
set -euo pipefail

PROG=with-postgres
die() {
    echo "$PROG: ERROR: $*" >&2
    exit 1
}
log() { echo "$PROG: $*" >&2; }

[ $# -gt 0 ] || die "usage: $0 COMMAND [ARG...]"

if [ -n "${GPUBOT_TEST_POSTGRES_URL:-}" ]; then
    log "using the existing server in GPUBOT_TEST_POSTGRES_URL (no server started)"
    exec "$@"
fi

started=$(date +%s.%N)
export DEBIAN_FRONTEND=noninteractive

# ---- find (or install) the server binaries ------------------------------------------------------
find_bindir() {
    # Newest installed major version first.
    local initdb
    initdb=$(ls -1d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -t/ -k5,5n | tail -n 1 || true)
    [ -n "$initdb" ] && dirname "$initdb"
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n "$@"
    else
        die "PostgreSQL is not installed and installing it needs root (or passwordless sudo): run \`apt-get install postgresql\`, or set GPUBOT_TEST_POSTGRES_URL to an existing server"
    fi
}

install_note="already installed, apt skipped"
BINDIR=$(find_bindir || true)
if [ -z "$BINDIR" ]; then
    command -v apt-get >/dev/null 2>&1 \
        || die "PostgreSQL is not installed and there is no apt-get to install it: install PostgreSQL, or set GPUBOT_TEST_POSTGRES_URL to an existing server"
    log "PostgreSQL not found; installing it with apt (first run only) ..."
    apt_started=$(date +%s)
    # Stop the package's maintainer scripts from starting the cluster they create (no service
    # manager here, and our own server is the only one wanted): policy-rc.d exit 101 = "don't".
    made_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
        made_policy=1
    fi
    apt_ok=1
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >/tmp/with-postgres-apt.log 2>&1 || apt_ok=0
    if [ "$apt_ok" -eq 1 ]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            -o DPkg::Lock::Timeout=300 postgresql </dev/null >>/tmp/with-postgres-apt.log 2>&1 || apt_ok=0
    fi
    [ "$made_policy" -eq 1 ] && as_root rm -f /usr/sbin/policy-rc.d
    if [ "$apt_ok" -ne 1 ]; then
        tail -n 30 /tmp/with-postgres-apt.log >&2 || true
        die "could not install PostgreSQL with apt (full log: /tmp/with-postgres-apt.log)"
    fi
    BINDIR=$(find_bindir || true)
    [ -n "$BINDIR" ] || die "apt installed postgresql but no /usr/lib/postgresql/*/bin/initdb exists"
    install_note="installed with apt in $(( $(date +%s) - apt_started )) s"
fi

# ---- who runs the server -------------------------------------------------------------------------
# initdb and postgres refuse to run as root: as root, run them as the `postgres` user (created by
# the Debian package).
if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root but there is no \`postgres\` user to run the server as"
    as_pg() { (cd / && runuser -u postgres -- "$@"); }
else
    as_pg() { (cd / && "$@"); }
fi

# ---- a throwaway cluster -------------------------------------------------------------------------
# Under /tmp (not $TMPDIR, which may sit below a directory the postgres user cannot enter).
PGBASE=$(mktemp -d /tmp/gpubot-pg.XXXXXX) || die "cannot create a temporary directory in /tmp"
PGDATA_DIR="$PGBASE/data"
PGLOG="$PGBASE/server.log"
PGPORT_CHOSEN=""
server_started=0

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if [ "$server_started" -eq 1 ]; then
        as_pg "$BINDIR/pg_ctl" stop -D "$PGDATA_DIR" -m fast -w -t 30 >/dev/null 2>&1 \
            || as_pg "$BINDIR/pg_ctl" stop -D "$PGDATA_DIR" -m immediate -w -t 30 >/dev/null 2>&1 \
            || log "warning: could not stop the server in $PGDATA_DIR"
    fi
    rm -rf "$PGBASE"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(id -u)" -eq 0 ] && chown postgres: "$PGBASE"
chmod 700 "$PGBASE"

if ! as_pg "$BINDIR/initdb" -D "$PGDATA_DIR" -U postgres --auth=trust --no-locale -E UTF8 \
        >"$PGBASE/initdb.log" 2>&1; then
    cat "$PGBASE/initdb.log" >&2
    die "initdb failed"
fi

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# A free port can be taken by someone else between choosing and binding it: try a few.
for attempt in 1 2 3 4 5; do
    PGPORT_CHOSEN=$(free_port) || die "cannot find a free port (python3 needed)"
    # Throwaway data: durability settings off for speed.
    cat >"$PGBASE/overrides.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PGPORT_CHOSEN
unix_socket_directories = '$PGBASE'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
    [ "$(id -u)" -eq 0 ] && chown postgres: "$PGBASE/overrides.conf"
    grep -q "^include = '$PGBASE/overrides.conf'" "$PGDATA_DIR/postgresql.conf" \
        || as_pg sh -c "echo \"include = '$PGBASE/overrides.conf'\" >> '$PGDATA_DIR/postgresql.conf'"
    if as_pg "$BINDIR/pg_ctl" start -D "$PGDATA_DIR" -l "$PGLOG" -w -t 60 >/dev/null 2>&1; then
        server_started=1
        break
    fi
    # pg_ctl may have left a half-started postmaster behind.
    as_pg "$BINDIR/pg_ctl" stop -D "$PGDATA_DIR" -m immediate -w -t 10 >/dev/null 2>&1 || true
    log "server did not start on port $PGPORT_CHOSEN (attempt $attempt); retrying"
done
if [ "$server_started" -ne 1 ]; then
    tail -n 30 "$PGLOG" >&2 2>/dev/null || true
    die "PostgreSQL would not start (server log above)"
fi

"$BINDIR/createdb" -h 127.0.0.1 -p "$PGPORT_CHOSEN" -U postgres gpubot_test \
    || die "cannot create database gpubot_test"

version=$("$BINDIR/psql" -h 127.0.0.1 -p "$PGPORT_CHOSEN" -U postgres -d gpubot_test -XAtqc 'SHOW server_version' \
    | cut -d' ' -f1) || die "cannot query the new server"

export GPUBOT_TEST_POSTGRES_URL="postgresql+psycopg://postgres@127.0.0.1:$PGPORT_CHOSEN/gpubot_test"
elapsed=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
log "PostgreSQL $version on 127.0.0.1:$PGPORT_CHOSEN (data $PGDATA_DIR), set up in ${elapsed} s ($install_note)"

# Not exec: the EXIT trap must stop the server afterwards.
set +e
"$@"
status=$?
set -e
exit "$status"
