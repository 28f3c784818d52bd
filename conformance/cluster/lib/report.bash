# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The machine-readable report of a run and a summary to paste into a README:
# TAP as `bats --formatter tap --timing` prints it (with the preflight's
# "# server ..." and "# driver ..." lines) in, profiles.tsv for the profile
# of each scenario area.  A profile has passed when at least one of its
# scenarios passed and none failed, is not applicable when all of them were
# skipped (the reasons say why), and was not run when a filter left it out.
# The run has passed when nothing failed and core passed.

# tap_records: TAP on stdin -> TSV: "test", result (ok|skip|fail), name,
# milliseconds, skip reason; and "server"/"driver"/"setup" lines.
tap_records() {
    local line name result reason ms
    local result_re='^(ok|not ok) [0-9]+ (.*)$'
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ $line =~ $result_re ]]; then
            result=${BASH_REMATCH[1]}
            name=${BASH_REMATCH[2]}
            reason=
            if [[ $name =~ ^(.*)\ \#\ (skip|SKIP)( (.*))?$ ]]; then
                name=${BASH_REMATCH[1]}
                reason=${BASH_REMATCH[4]:-skipped}
                result=skip
            fi
            [[ $result != "not ok" ]] || result=fail
            ms=0
            if [[ $name =~ ^(.*)\ in\ ([0-9]+)ms$ ]]; then
                name=${BASH_REMATCH[1]}
                ms=${BASH_REMATCH[2]}
            fi
            if [[ $name == setup_suite ]]; then
                printf 'setup\t%s\n' "$result"
            else
                printf 'test\t%s\t%s\t%s\t%s\n' "$result" "${name//$'\t'/ }" "$ms" "${reason//$'\t'/ }"
            fi
        elif [[ $line =~ ^#\ server\ ([^;]+)\; ]]; then
            printf 'server\t%s\n' "${BASH_REMATCH[1]}"
        elif [[ $line =~ ^#\ driver\ ([^,]+),\ class\ ([^,]+),\ fake\ driver:\ (.*)$ ]]; then
            printf 'driver\t%s\t%s\t%s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"
        fi
    done
}

# tap_to_report PROFILES_TSV KIT_VERSION DRIVER_VERSION STARTED FINISHED
# [TIMING_TSV STARTED_MS]: TAP on stdin -> the JSON report on stdout.
# TIMING_TSV holds the scenarios' own lines (lib/scenario.bash
# record_scenario_timing: name, start in Unix ms, node-lock wait in ms);
# with it each scenario gets startedSeconds (after STARTED_MS, the run's
# start) and lockWaitSeconds, and the totals the run's wall time.
tap_to_report() {
    local timing=${6:-/dev/null}
    [[ -r $timing ]] || timing=/dev/null
    tap_records | jq -R -s --rawfile profiles "$1" --arg kit "$2" --arg driver_version "$3" \
        --arg started "$4" --arg finished "$5" --rawfile timing "$timing" --arg started_ms "${7:-}" '
        def rows: split("\n") | map(select(length > 0) | split("\t"));
        ($timing | rows | map({key: .[0], value: {start: (.[1] | tonumber), wait: (.[2] | tonumber)}})
            | from_entries) as $times
        | ($started_ms | if . == "" then null else tonumber end) as $t0
        | ($profiles | rows | map(select(.[0] | startswith("#") | not))
            | map({name: .[0], areas: (.[1] | split(",")), covers: .[2]})) as $table
        | rows as $recs
        | ([$recs[] | select(.[0] == "test")
            | (.[2] | if test(": ") then sub(": .*"; "") else "" end) as $area
            | {name: .[2], area: $area,
               profile: (first($table[] | select(.areas | index($area)) | .name) // "other"),
               result: .[1], reason: (if .[1] == "skip" then .[4] else null end),
               seconds: ((.[3] | tonumber) / 1000)}
            + ($times[.[2]] // null | if . == null then {} else
                {lockWaitSeconds: (.wait / 1000)}
                + (if $t0 == null then {} else {startedSeconds: ((.start - $t0) / 1000)} end) end)]) as $scenarios
        | ([$recs[] | select(.[0] == "server") | .[1]] | last) as $server
        | ([$recs[] | select(.[0] == "driver")] | last) as $driver
        | ([$recs[] | select(.[0] == "setup") | .[1]] | last) as $setup
        | def verdict($s):
            if ($s | length) == 0 then "not-run"
            elif any($s[]; .result == "fail") then "failed"
            elif any($s[]; .result == "ok") then "passed"
            else "not-applicable" end;
          ([$table[], {name: "other", covers: "scenarios of no profile"}]
            | map(.name as $p | [$scenarios[] | select(.profile == $p)] as $s
                | select(.name != "other" or ($s | length) > 0)
                | {name, covers, verdict: verdict($s),
                   ok: ([$s[] | select(.result == "ok")] | length),
                   skipped: ([$s[] | select(.result == "skip")] | length),
                   failed: ([$s[] | select(.result == "fail")] | length),
                   seconds: ([$s[].seconds] | add // 0),
                   notApplicableBecause: (if verdict($s) == "not-applicable"
                       then [$s[].reason] | unique else null end)})) as $profiles_out
        | {kind: "DRAConformanceReport",
           kit: {name: "fakehw-dra", version: $kit},
           cluster: {version: ($server // "unknown")},
           driver: {name: ($driver[1] // "unknown"), version: $driver_version,
                    deviceClass: ($driver[2] // null), fakeDriver: (($driver[3] // "") == "true")},
           started: $started, finished: $finished,
           verdict: (if $setup == "fail" or any($scenarios[]; .result == "fail") then "failed"
                     elif (first($profiles_out[] | select(.name == "core")) | .verdict) == "passed"
                     then "passed" else "incomplete" end),
           totals: ({scenarios: ($scenarios | length),
                    ok: ([$scenarios[] | select(.result == "ok")] | length),
                    skipped: ([$scenarios[] | select(.result == "skip")] | length),
                    failed: ([$scenarios[] | select(.result == "fail")] | length),
                    seconds: ([$scenarios[].seconds] | add // 0),
                    lockWaitSeconds: ([$scenarios[].lockWaitSeconds // 0] | add // 0)}
                   + (if $t0 == null then {} else
                      {wallSeconds: ((($finished | fromdateiso8601) * 1000 - $t0) / 1000 | round)} end)),
           profiles: $profiles_out,
           scenarios: $scenarios}'
}

# report_summary: the JSON report on stdin -> Markdown on stdout.
report_summary() {
    jq -r '
        "### DRA conformance: \(.driver.name)\(if .driver.version != "" then " " + .driver.version else "" end) on Kubernetes \(.cluster.version)",
        "",
        "Verdict: **\(.verdict)** (\(.totals.ok) passed, \(.totals.skipped) skipped, \(.totals.failed) failed in \(if .totals.wallSeconds then "\(.totals.wallSeconds) s (scenarios \(.totals.seconds | floor) s, \(.totals.lockWaitSeconds | floor) s of it waiting for node locks)" else "\(.totals.seconds | floor) s" end); fakehw-dra conformance kit \(.kit.version), \(.finished))",
        "",
        "| profile | verdict | passed | skipped | failed |",
        "|---|---|---|---|---|",
        (.profiles[] | "| \(.name) | \(.verdict) | \(.ok) | \(.skipped) | \(.failed) |")'
}
