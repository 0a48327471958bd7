#!/usr/bin/env bash
# Fuzzing of Signet's parsers (CBOR, authenticator data, attestation objects, client data,
# JSON, COSE keys, assertions, base64url; form bodies, Basic credentials, Forwarded chains, CIDRs,
# sealed auth sessions; token and passwordless bodies, email addresses, Accept-Language,
# recovery codes, mail text; query strings, the Management API's q, served association files; DPoP proofs;
# Cookie headers, redirect URIs, ui_locales and acr_values, related origins; HTTP/1.1 requests; access and refresh tokens;
# WWW-Authenticate challenges; client assertions; new clients' bodies for /api/v2/clients;
# and the rest of FuzzTarget.Kind, the last of them any request to any route of the service).
#   scripts/fuzz.sh run [SECONDS]   libFuzzer with AddressSanitizer/LeakSanitizer (default 600 s):
#                                   the parsers together, then a quarter of the time the service
#   scripts/fuzz.sh replay          replay the seed corpus and any saved corpus with a plain build
#   SIGNET_FUZZ_KIND=N scripts/fuzz.sh run S   one parser only (N as in FuzzTarget.Kind, from 0;
#                                   `.build/debug/SignetFuzz kinds` prints how many there are)
#   scripts/fuzz.sh each RUNS [N...]  each parser in turn (all, or those listed) to RUNS executions,
#                                   then a table of executions and speed per parser
# Seeds are made from the WebAuthn fixtures into .fuzz/seeds; the corpus grows in .fuzz/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-run}
fixtures=${SIGNET_FIXTURES:-../shared/fixtures/webauthn}
mkdir -p .fuzz/seeds .fuzz/corpus .fuzz/artifacts

swift build --product SignetFuzz >&2
replay=.build/debug/SignetFuzz
# Without the fixtures, the seeds made by hand (every other parser's, and a request to every
# route of the service) are still written.
[ -d "$fixtures" ] || echo "fuzz.sh: fixtures not found at $fixtures; only the seeds made by hand (set SIGNET_FIXTURES)" >&2
"$replay" seed "$fixtures" .fuzz/seeds

case "$mode" in
replay)
    "$replay" replay .fuzz/seeds .fuzz/corpus Tests/FuzzRegressions
    ;;
run|each)
    swift build --product SignetFuzz --scratch-path .build/fuzz -c release \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -DSIGNET_LIBFUZZER -Xswiftc -parse-as-library >&2
    fuzzer=$(swift build --product SignetFuzz --scratch-path .build/fuzz -c release --show-bin-path)/SignetFuzz
    # The whole service keeps what each request writes (a database, caches, rate limits), so
    # nearly every input ends with more allocations than frees, and libFuzzer would rerun it
    # for a whole-heap leak scan (16 instead of 228 inputs a second); and its kept trees hold
    # enums whose pointers carry tag bits, which the scan takes for leaks. It runs under
    # AddressSanitizer without the leak check; every parser keeps it.
    service=$("$replay" kind service)
    leaks() { [ "$1" = "$service" ] && echo 0 || echo 1; }
    # libFuzzer over KIND (empty: the parsers together), with the flags every run shares, then
    # the arguments given.
    fuzz() {
        local kind=$1 leak
        shift
        leak=$(leaks "${kind:-x}")
        SIGNET_FUZZ_KIND=$kind ASAN_OPTIONS=detect_leaks=$leak "$fuzzer" .fuzz/corpus .fuzz/seeds Tests/FuzzRegressions \
            -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -detect_leaks="$leak" "$@"
    }
    if [ "$mode" = each ]; then
        runs=${2:-10000000}
        shift 2 || true
        kinds=${*:-$(seq 0 $(( $("$replay" kinds) - 1 )))}
        mkdir -p .fuzz/each
        printf "%-6s %-12s %-10s %s\n" kind executions "exec/s" result
        for kind in $kinds; do
            log=.fuzz/each/kind-$kind.log
            fuzz "$kind" -runs="$runs" -artifact_prefix=.fuzz/artifacts/kind-$kind- >"$log" 2>&1 || true
            result=clean
            grep -qE "ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|SUMMARY: .*Sanitizer" "$log" && result="FOUND (see $log)"
            printf "%-6s %-12s %-10s %s\n" "$kind" "$(grep -oP 'stat::number_of_executed_units: *\K[0-9]+' "$log")" \
                "$(grep -oP 'stat::average_exec_per_sec: *\K[0-9]+' "$log")" "$result"
        done
        ! grep -lqE "ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)" .fuzz/each/*.log
        exit
    fi
    seconds=${2:-600}
    # One run over every parser together, then (a quarter of the time) one over the service;
    # or, with SIGNET_FUZZ_KIND, one run over that kind alone.
    one() { # LOG SECONDS KIND-OR-EMPTY
        fuzz "$3" -max_total_time="$2" -artifact_prefix=.fuzz/artifacts/ 2>&1 | tee "$1" | grep -E "^#[0-9]+.*(pulse|DONE)|ERROR|SUMMARY|stat::" || true
    }
    if [ -n "${SIGNET_FUZZ_KIND:-}" ]; then
        one .fuzz/last-run.log "$seconds" "$SIGNET_FUZZ_KIND"
    else
        one .fuzz/last-run.log $((seconds - seconds / 4)) ""
        echo "fuzz.sh: the service, $((seconds / 4)) s" >&2
        one .fuzz/last-run-service.log $((seconds / 4)) "$service"
        cat .fuzz/last-run-service.log >> .fuzz/last-run.log
    fi
    if grep -qE "ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|SUMMARY: .*Sanitizer" .fuzz/last-run.log; then
        echo "fuzz.sh: the fuzzer found a problem; see .fuzz/last-run.log and .fuzz/artifacts/" >&2
        exit 1
    fi
    ;;
*) echo "usage: scripts/fuzz.sh run [SECONDS] | each RUNS [KIND...] | replay" >&2; exit 2 ;;
esac
