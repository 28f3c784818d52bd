#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs each libFuzzer target for a set time: fuzz/run.sh BIN_DIR BUILD_DIR SECONDS TARGET...
# Each target fuzzes a scratch corpus (BUILD_DIR/fuzz-corpus/<target>, kept
# between runs) seeded from fuzz/corpus/<target>, which is only read.  The
# target's own stderr is discarded (-close_fd_mask=2: the plugin logs every
# refused claim); libFuzzer's lines and sanitizer reports still show.
# Prints one summary line per target; fails when any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1 build=$2 seconds=$3
shift 3
# The snapshot and kubeconfig targets write their input to a scratch file
# per run: keep those in memory when /dev/shm is there.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    export TMPDIR=/dev/shm
fi
status=0
for t in "$@"; do
    corpus="$build/fuzz-corpus/$t"
    artifacts="$build/fuzz-artifacts"
    log="$build/fuzz-logs/$t.log"
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
    rc=0
    "$bin/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -close_fd_mask=2 -print_final_stats=1 -artifact_prefix="$artifacts/$t-" \
        "$corpus" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
    units=$(find "$corpus" -type f | wc -l)
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "fuzz_$t: FAILED (exit $rc) after ${runs:-?} runs; see $log and $artifacts/$t-*"
        grep -m 20 -E 'ERROR|SUMMARY|==[0-9]+==|runtime error|Test unit written' "$log" || true
    else
        echo "fuzz_$t: ${runs:-?} runs in ${seconds}s, $cov, corpus $units units, no findings"
    fi
done
exit "$status"
