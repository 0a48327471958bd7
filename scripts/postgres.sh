#!/usr/bin/env bash
# A throw-away PostgreSQL cluster on a loopback port, for the tests.
#   scripts/postgres.sh start DIR PORT [fast]  installs PostgreSQL from Debian if missing, initdb, start;
#                                        prints the admin URL postgres://signet@127.0.0.1:PORT/postgres
#   scripts/postgres.sh pause DIR        stops the server, keeping its data (fault tests)
#   scripts/postgres.sh resume DIR PORT  starts it again
#   scripts/postgres.sh stop DIR         stops it and removes DIR
set -euo pipefail
mode=$1
dir=$2
pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
as_owner() {
    # initdb and postgres refuse to run as root: run them as the postgres user then.
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$mode" in
start)
    port=$3
    extra=""
    # "fast" (the tests): no fsync; the data is thrown away anyway. Benchmarks run without it.
    [ "${4:-}" = "fast" ] && extra="-c fsync=off -c synchronous_commit=off"
    if [ -z "$(pgbin)" ]; then
        echo "postgres.sh: installing PostgreSQL" >&2
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        . "$(dirname "$0")/retry.sh"
        retry $sudo apt-get update -qq
        retry $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    fi
    bin=$(pgbin)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -A trust -U signet -E UTF8 >/dev/null
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 $extra" start >/dev/null
    echo "postgres://signet@127.0.0.1:$port/postgres"
    ;;
pause)
    as_owner "$(pgbin)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
resume)
    port=$3
    as_owner "$(pgbin)/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
    ;;
stop)
    bin=$(pgbin)
    if [ -d "$dir/data" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir"
    ;;
*) echo "usage: scripts/postgres.sh start DIR PORT [fast] | pause DIR | resume DIR PORT | stop DIR" >&2; exit 2 ;;
esac
