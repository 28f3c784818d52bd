# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# TAP (as `bats --formatter tap --timing` prints it) to JUnit XML.  The suite
# writes its own JUnit instead of using bats' junit report formatter because
# bats 1.8.2's formatter breaks under --jobs (file_count: unbound variable)
# and may still be writing the file when bats exits; the TAP stream has all
# the report needs.  Test names start with "<area>: ", which becomes the
# classname, so a CI shows the scenarios grouped by area.

xml_escape() {
    local s=$1
    # Quoted replacements: with bash 5.2's patsub_replacement an unquoted
    # "&" would stand for the matched text.
    s=${s//'&'/'&amp;'}
    s=${s//'<'/'&lt;'}
    s=${s//'>'/'&gt;'}
    s=${s//'"'/'&quot;'}
    s=${s//"'"/'&apos;'}
    # XML 1.0 has no place for other control characters.
    printf '%s' "$s" | tr -d '\000-\010\013\014\016-\037'
}

# tap_to_junit SUITE_NAME: TAP on stdin, JUnit on stdout.
tap_to_junit() {
    local suite=$1 line name status reason ms
    local -a names=() statuses=() reasons=() times=() details=()
    local suite_out='' current=-1 in_failure=0
    local result_re='^(ok|not ok) [0-9]+ (.*)$'
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ $line =~ $result_re ]]; then
            status=${BASH_REMATCH[1]}
            name=${BASH_REMATCH[2]}
            reason=''
            if [[ $name =~ ^(.*)\ \#\ (skip|SKIP)( (.*))?$ ]]; then
                name=${BASH_REMATCH[1]}
                reason=${BASH_REMATCH[4]:-skipped}
                status=skipped
            fi
            ms=0
            if [[ $name =~ ^(.*)\ in\ ([0-9]+)ms$ ]]; then
                name=${BASH_REMATCH[1]}
                ms=${BASH_REMATCH[2]}
            fi
            current=${#names[@]}
            names+=("$name")
            statuses+=("$status")
            reasons+=("$reason")
            times+=("$ms")
            details+=("")
            in_failure=0
            [[ $status == "not ok" ]] && in_failure=1
        elif [[ $line == '#'* ]]; then
            line=${line#\#}
            line=${line# }
            if ((in_failure)); then
                details[current]+=$line$'\n'
            else
                suite_out+=$line$'\n'
            fi
        fi
    done

    local total=${#names[@]} failures=0 skipped=0 total_ms=0 i
    for ((i = 0; i < total; i++)); do
        # $((...)) assignments: ((x += 0)) would return 1 under set -e.
        if [[ ${statuses[i]} == "not ok" ]]; then failures=$((failures + 1)); fi
        if [[ ${statuses[i]} == skipped ]]; then skipped=$((skipped + 1)); fi
        total_ms=$((total_ms + times[i]))
    done
    local secs
    secs=$(printf '%d.%03d' $((total_ms / 1000)) $((total_ms % 1000)))
    printf '<?xml version="1.0" encoding="UTF-8"?>\n'
    printf '<testsuites name="%s" tests="%d" failures="%d" skipped="%d" time="%s">\n' \
        "$(xml_escape "$suite")" "$total" "$failures" "$skipped" "$secs"
    printf '  <testsuite name="%s" tests="%d" failures="%d" errors="0" skipped="%d" time="%s" timestamp="%s">\n' \
        "$(xml_escape "$suite")" "$total" "$failures" "$skipped" "$secs" "$(date -u +%Y-%m-%dT%H:%M:%S)"
    if [[ -n $suite_out ]]; then
        printf '    <system-out>%s</system-out>\n' "$(xml_escape "$suite_out")"
    fi
    local class message
    for ((i = 0; i < total; i++)); do
        name=${names[i]}
        class=$suite
        [[ $name == *': '* ]] && class+=.${name%%: *}
        printf '    <testcase classname="%s" name="%s" time="%s">' "$(xml_escape "$class")" "$(xml_escape "$name")" \
            "$(printf '%d.%03d' $((times[i] / 1000)) $((times[i] % 1000)))"
        case ${statuses[i]} in
        ok) ;;
        skipped)
            printf '<skipped message="%s"/>' "$(xml_escape "${reasons[i]}")"
            ;;
        *)
            # The first line of the failure text that is not bats' own location note.
            message=$(grep -v -e '^(in test file' -e '^(from function' -e "^  \`" -e '^$' <<<"${details[i]}" | head -n 1)
            printf '<failure message="%s">%s</failure>' "$(xml_escape "${message:-failed}")" "$(xml_escape "${details[i]}")"
            ;;
        esac
        printf '</testcase>\n'
    done
    printf '  </testsuite>\n</testsuites>\n'
}
