#!/usr/bin/env bash
# Instructions per sign-in of the server itself, counted by callgrind while `signet bench login`
# drives it over HTTP: stable where timings are not, so a change's saving can be given as a
# count. The server runs under valgrind; after a warm-up its counters are zeroed, sign-ins run
# for DURATION seconds, and the count is divided by the sign-ins the server's metrics report.
# The count includes what the server does meanwhile except building the /metrics answer that
# bench login reads once a second (its timers and background threads remain, a few thousand
# instructions a sign-in), so compare runs with the same options.
#   scripts/bench-callgrind.sh                  the release build
#   BIN=/path/to/signet scripts/bench-callgrind.sh   another build (e.g. before a change)
#   CACHE=1 scripts/bench-callgrind.sh          also simulated cache misses and mispredictions
#   env: DURATION=15 CONCURRENCY=4 TOP=0 (TOP=N also lists the N costliest functions)
#   KEEP=FILE keeps callgrind's dump there, for callgrind_annotate (--tree=caller finds callers)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh profile
bin=${BIN:-}
if [ -z "$bin" ]; then
    scripts/build-release.sh
    bin=$PWD/.build/release/signet
fi
duration=${DURATION:-15}
concurrency=${CONCURRENCY:-4}
work=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
# valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes; the symbol table suffices.
objcopy --strip-debug "$bin" "$work/signet"
# `bench login` reads /metrics once a second (about 1.2M instructions a read), so a run that fits
# fewer sign-ins in its time would carry more of them each: collection pauses while that answer is
# built (toggled off on entering its getter and on again on leaving it, on that thread only).
# --collect-atstart=yes must follow --toggle-collect, which otherwise starts with collection off.
# callgrind says nothing when the pattern matches no function: a renamed getter would quietly
# bring the reads back into the count, so the script stops instead (grep reads all of nm's output:
# with -q it would stop early, and pipefail would count nm's broken pipe as a failure).
nm "$work/signet" | grep 'metricsResponse' >/dev/null || { echo "bench-callgrind: no metricsResponse getter in $bin to leave out" >&2; exit 1; }
options=(--toggle-collect='*metricsResponse*' --collect-atstart=yes)
[ "${CACHE:-0}" = 1 ] && options+=(--cache-sim=yes --branch-sim=yes)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work" && SIGNET_RATE_LIMITS_ENABLED=false exec valgrind --tool=callgrind "${options[@]}" \
    --callgrind-out-file="$work/callgrind.out" "$work/signet" serve --listen "127.0.0.1:$port" \
    --database "sqlite:$work/signet.db" >"$work/log" 2>&1) &
server=$!
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "bench-callgrind: the server did not start" >&2; cat "$work/log" >&2; exit 1; }
signins() {
    curl -sf "http://127.0.0.1:$port/metrics" |
        awk '/^signet_ceremonies_total\{ceremony="sign_in",outcome="success"/ { n += $2 } END { print n + 0 }'
}
load() { "$bin" bench login --url "http://127.0.0.1:$port" --concurrency "$concurrency" --duration "$1" --idle-connections 0 >/dev/null; }
load 4
before=$(signins)
callgrind_control -z "$server" >/dev/null 2>&1
load "$duration"
callgrind_control -d "$server" >/dev/null 2>&1
after=$(signins)
count=$((after - before))
[ "$count" -gt 0 ] || { echo "bench-callgrind: no sign-in completed" >&2; exit 1; }
dump=$(ls -t "$work"/callgrind.out.* | head -n 1)
[ -n "${KEEP:-}" ] && cp "$dump" "$KEEP"
echo "signet bench-callgrind: $count sign-ins, $concurrency clients, ${duration} s under callgrind ($bin)"
python3 - "$dump" "$count" "${TOP:-0}" <<'PY'
import re, subprocess, sys
dump, count, top = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
events = next(line.split()[1:] for line in open(dump) if line.startswith("events:"))
totals = next(line.split()[1:] for line in open(dump) if line.startswith("summary:"))
names = {"Ir": "instructions", "I1mr": "instruction-cache misses (L1)", "D1mr": "data-cache read misses (L1)",
         "D1mw": "data-cache write misses (L1)", "Bcm": "conditional branches mispredicted",
         "Bim": "indirect branches mispredicted", "Bi": "indirect branches"}
for event, total in zip(events, totals):
    if event in names:
        print(f"  {names[event]:<44} {int(total) / count:>12,.0f} per sign-in")
report = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", dump],
                        capture_output=True, text=True, check=True).stdout
by_object, by_function = {}, []
for line in report.splitlines():
    match = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
    if not match or "PROGRAM TOTALS" in line:
        continue
    cost, name = int(match.group(1).replace(",", "")), match.group(2)
    # callgrind_annotate lists a thread's entry points with the whole thread's cost as if their own:
    # the C library's, Foundation's `Thread.main` and the closures a `Thread` runs (`start(...)`).
    if "clone.S:clone" in name or "pthread_create.c:start_thread" in name:
        continue
    if re.search(r"Foundation6ThreadC4main|C5start\w*cfU_(TA)?\s", name):
        continue
    found = re.search(r"\[([^\]]*)\]\s*$", name)
    obj = found.group(1).rsplit("/", 1)[-1] if found else "?"
    obj = "signet (its own code, and the Swift runtime linked in)" if obj == "signet" else obj
    by_object[obj] = by_object.get(obj, 0) + cost
    by_function.append((cost, name))
print("  instructions per sign-in, by object:")
for obj, cost in sorted(by_object.items(), key=lambda item: -item[1]):
    if cost / count >= 500:
        print(f"    {cost / count:>10,.0f}  {obj}")
for cost, name in sorted(by_function, reverse=True)[:top]:
    print(f"    {cost / count:>10,.0f}  {name[:150]}")
PY
