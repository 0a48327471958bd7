#!/usr/bin/env bash
# Sign-ins per second and CPU per sign-in on one SQLite instance, one PostgreSQL instance and
# two PostgreSQL instances sharing the database, measured with `signet bench login`.
#   DURATION=10 CONCURRENCY=64 scripts/bench-scaling.sh
#   BIN=/path/to/signet scripts/bench-scaling.sh   another build (e.g. before a change)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
bin=${BIN:-}
if [ -z "$bin" ]; then
    scripts/build-release.sh
    bin=$PWD/.build/release/signet
fi
duration=${DURATION:-10}
concurrency=${CONCURRENCY:-64}
work=$(mktemp -d /tmp/signet-scaling.XXXXXX)
chmod 755 "$work"   # the postgres user must reach its data directory inside
freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The servers' pids go to a file: `serve` runs inside command substitutions, whose subshells
# cannot add to an array of this shell (the servers outlived the script before).
cleanup() {
    [ -f "$work/pids" ] && while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$work/pids"
    scripts/postgres.sh stop "$work/pg" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
admin=$(scripts/postgres.sh start "$work/pg" "$(freeport)")   # durable settings: fsync on
# Instances that share a database share the key-encryption key, the issuer and the origin.
kek=$($bin keys kek)
serve() {  # serve DATABASE -> prints the URL once it answers
    local port
    port=$(freeport)
    (cd "$work" && SIGNET_KEK=$kek SIGNET_ISSUER=http://localhost:8080 SIGNET_RELYING_PARTY_ORIGINS=http://localhost:8080 \
        SIGNET_CLIENTS='[{"client_id": "dev"}]' SIGNET_RATE_LIMITS_ENABLED=false SIGNET_LIMITS_MAX_CONNECTIONS_PER_IP=4096 \
        exec "$bin" serve --listen "127.0.0.1:$port" --database "$1" >/dev/null 2>&1) &
    echo "$!" >>"$work/pids"
    python3 - "$port" <<'PY'
import sys, time, urllib.request
for _ in range(200):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/healthz", timeout=1)
        break
    except Exception:
        time.sleep(0.05)
PY
    echo "http://127.0.0.1:$port"
}
database() { psql -q "$admin" -c "CREATE DATABASE $1" >/dev/null; echo "${admin%/postgres}/$1"; }
run() { "$bin" bench login --concurrency "$concurrency" --duration "$duration" --idle-connections 0 --json "$@"; }

echo "== 1 instance, SQLite" >&2
sqlite=$(run)
echo "== 1 instance, PostgreSQL" >&2
one=$(run --url "$(serve "$(database one)")" --origin http://localhost:8080)
echo "== 2 instances, PostgreSQL" >&2
db=$(database two)
two=$(run --url "$(serve "$db"),$(serve "$db")" --origin http://localhost:8080)
python3 - "$sqlite" "$one" "$two" <<'PY'
import json, sys
rows = [("1 instance, SQLite", json.loads(sys.argv[1])), ("1 instance, PostgreSQL", json.loads(sys.argv[2])), ("2 instances, PostgreSQL", json.loads(sys.argv[3]))]
print("| setup | sign-ins/s | p50 / p99 ms | Signet CPU µs/sign-in | PostgreSQL CPU µs/sign-in | sign-ins per commit batch | floor µs | Signet / floor |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for name, r in rows:
    print(f"| {name} | {r['signins_per_s']} | {r['p50_ms']} / {r['p99_ms']} | {r['server_cpu_us_per_signin']} | {r['postgres_cpu_us_per_signin']} | {r.get('postgres_signins_per_batch', '')} | {r['floor_cpu_us']} | {r['ratio_vs_floor']} |")
PY
