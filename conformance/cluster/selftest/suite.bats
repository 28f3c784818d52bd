#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Static checks of the cluster suite itself: every file parses and is
# lint-clean; every test is tagged and named the way the kit relies on; the
# templates the tests use exist, the gates they require are detected, and
# docs/conformance.md describes every scenario and parameter.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2016,SC2030,SC2031,SC2034,SC2154
load selftest

setup() { selftest_setup; }

suite_files() {
    find "$SUITE_DIR" -maxdepth 1 -name '*.bats' | sort
}

# "<file>\t<test name>" for every test of the suite.
suite_tests() {
    local f
    for f in $(suite_files); do
        sed -nE 's/^[[:blank:]]*@test[[:blank:]]+"(.*)"[[:blank:]]+\{.*$/\1/p' "$f" | sed "s|^|$(basename "$f")\t|"
    done
}

@test "suite: every bats file parses and holds tests" {
    local f n
    for f in $(suite_files); do
        n=$(bats --count "$f") || fail "bats --count $f failed"
        ((n > 0)) || fail "$f has no tests"
    done
    n=$(bats --count "$SUITE_DIR")
    assert_equal "$n" "$(suite_tests | wc -l)"
}

@test "suite: shellcheck passes on the suite, its helpers, the runner and the self-tests" {
    cd "$SUITE_DIR"
    run shellcheck -x run.sh setup_suite.bash lib/*.bash ./*.bats selftest/*.bash selftest/*.bats selftest/bin/kubectl
    assert_success
    assert_output ""
}

@test "suite: every test has an area, and is either generic or fake-only" {
    local file name tags bad='' area_re='^[a-z][a-z -]*: '
    while IFS=$'\t' read -r file name; do
        [[ $name =~ $area_re ]] || bad+="$file: \"$name\" does not start with \"<area>: \""$'\n'
        tags=$(test_tags "$SUITE_DIR/$file" "$name")
        local g=0 f=0
        if grep -qx generic <<<"$tags"; then g=1; fi
        if grep -qx fake-only <<<"$tags"; then f=1; fi
        ((g + f == 1)) || bad+="$file: \"$name\" must be tagged generic or fake-only (tags: $(paste -sd, <<<"$tags"))"$'\n'
        [[ $(wc -l <<<"$tags") -ge 2 ]] || bad+="$file: \"$name\" has no area tag"$'\n'
    done < <(suite_tests)
    [[ -z $bad ]] || fail "$bad"
}

@test "suite: test names are unique across files (they name JUnit test cases)" {
    run bash -c "cut -f2 <<<\"\$1\" | sort | uniq -d" _ "$(suite_tests)"
    assert_output ""
}

@test "suite: every test file sets up and tears down through the scenario lifecycle" {
    local f
    for f in $(suite_files); do
        grep -qx 'load lib/helpers' "$f" || fail "$f does not load lib/helpers"
        grep -qx 'setup() { scenario_setup; }' "$f" || fail "$f does not call scenario_setup in setup()"
        grep -qx 'teardown() { scenario_teardown; }' "$f" || fail "$f does not call scenario_teardown in teardown()"
    done
}

@test "suite: the templates the tests use exist, and every template is used" {
    local used t
    # The upgrade kit (conformance/upgrade) renders the same templates.
    used=$(cat "$SUITE_DIR"/*.bats "$SUITE_DIR"/lib/*.bash "$SUITE_DIR"/../upgrade/*.bats "$SUITE_DIR"/../upgrade/*.bash | grep -v '^[[:blank:]]*#' |
        grep -oE '(create_from|render_template|dry_run_create|dry_run_probe) [a-z][-a-z]*' | awk '{print $2}' | sort -u)
    for t in $used; do
        [[ -f $SUITE_DIR/templates/$t.yaml ]] || fail "template $t is used but templates/$t.yaml does not exist"
    done
    for t in "$SUITE_DIR"/templates/*.yaml; do
        t=$(basename "$t" .yaml)
        grep -qxF -- "$t" <<<"$used" || fail "templates/$t.yaml is not used by any test"
    done
}

@test "suite: every gate a test requires is one the preflight decides" {
    local gate
    while read -r gate; do
        [[ -n ${GATE_DEFAULT_SINCE[$gate]:-} ]] || fail "tests require gate $gate, which lib/features.bash does not decide"
    done < <(grep -ohE 'require_gate [A-Za-z]+' "$SUITE_DIR"/*.bats | awk '{print $2}' | sort -u)
}

@test "suite: docs/conformance.md lists every scenario and every parameter" {
    local doc=$SUITE_DIR/../../docs/conformance.md name var missing=''
    [[ -f $doc ]] || fail "docs/conformance.md is missing"
    while IFS=$'\t' read -r _ name; do
        grep -qF -- "$name" "$doc" || missing+="scenario \"$name\""$'\n'
    done < <(suite_tests)
    for var in $(params_names) CONFORMANCE_FILTER CONFORMANCE_JOBS CONFORMANCE_REPORT_DIR CONFORMANCE_JUNIT \
        CONFORMANCE_DRIVER_VERSION CONFORMANCE_KIT_VERSION; do
        grep -qF -- "$var" "$doc" || missing+="parameter $var"$'\n'
    done
    [[ -z $missing ]] || fail "docs/conformance.md does not mention:"$'\n'"$missing"
}

@test "suite: every CONFORMANCE_ variable the suite reads is a parameter or a known internal" {
    # Internals, run.sh's own settings, the env names of the opaque-config
    # test, and FAKEHW_NODE, which the suite hands to CONFORMANCE_FAKEHW_EXEC.
    local internal='^CONFORMANCE_(GATE|GATE_.*|SERVER_(MAJOR|MINOR|VERSION)|TAINT_RULE_API|TAINT_RULE_API_WHY|RUN_ID|LOCK_FDS|LOCK_FILE|API_SOCKET|TIMING_FILE|TEMPLATES|LIB|SUITE_DIR|FILTER|JOBS|REPORT_DIR|JUNIT|BATS_ARGS|DRY_RUN|DRIVER_VERSION|KIT_VERSION|FROM_CLASS|FROM_CLAIM|OVERRIDDEN|FAKEHW_NODE)$'
    local var unknown=''
    while read -r var; do
        [[ $var =~ $internal ]] && continue
        params_names | grep -qxF -- "$var" || unknown+=" $var"
    done < <(cat "$SUITE_DIR"/lib/*.bash "$SUITE_DIR"/*.bats "$SUITE_DIR"/setup_suite.bash "$SUITE_DIR"/run.sh |
        grep -oE 'CONFORMANCE_[A-Z_]+[A-Z]' | sort -u)
    [[ -z $unknown ]] || fail "not parameters (typo, or missing from PARAM_NAMES in lib/params.bash):$unknown"
}

@test "suite: every parameter has a default" {
    local var
    for var in $(params_names); do
        [[ -v $var ]] || fail "$var has no default in params_defaults"
    done
}
