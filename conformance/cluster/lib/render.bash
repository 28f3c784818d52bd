# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Scenario manifests are templates in templates/ with __NAME__ placeholders
# (plain YAML strings, so the templates themselves are valid YAML).
# render_template fills them from the suite parameters and KEY=VALUE
# arguments, and refuses to hand out a manifest in which a placeholder
# survived (a typo in a template or a forgotten argument would otherwise reach
# the API server as a literal "__COUNT__").

CONFORMANCE_TEMPLATES=${CONFORMANCE_TEMPLATES:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../templates" && pwd)}

# Values every template may use.  NAMESPACE is the current test's namespace.
render_globals() {
    printf '%s\n' \
        "DRIVER=$CONFORMANCE_DRIVER" \
        "DEVICE_CLASS=$CONFORMANCE_DEVICE_CLASS" \
        "IMAGE=$CONFORMANCE_IMAGE" \
        "CONFIG_API_VERSION=$CONFORMANCE_FAKE_CONFIG_API_VERSION" \
        "NAMESPACE=${TEST_NAMESPACE:-}" \
        "AFFINITY={}"
}

# render_template TEMPLATE [KEY=VALUE...]: prints the filled manifest.
# Arguments override the globals.  Fails, naming template, line and
# placeholder, if a placeholder is left, if an argument names a placeholder
# the template does not have, or if a value holds a newline.
render_template() {
    local name=$1
    shift
    local file=$CONFORMANCE_TEMPLATES/$name
    [[ $name == *.yaml ]] || file+=.yaml
    [[ -f $file ]] || {
        fail "render: no template $name in $CONFORMANCE_TEMPLATES"
        return 1
    }
    local text kv key value
    text=$(<"$file")
    local -A values=()
    while IFS= read -r kv; do
        values[${kv%%=*}]=${kv#*=}
    done < <(render_globals)
    for kv in "$@"; do
        [[ $kv == *=* ]] || {
            fail "render $name: argument \"$kv\" is not KEY=VALUE"
            return 1
        }
        key=${kv%%=*}
        value=${kv#*=}
        [[ $key =~ ^[A-Z][A-Z0-9_]*$ ]] || {
            fail "render $name: \"$key\" is not a placeholder name (A-Z, 0-9, _)"
            return 1
        }
        [[ $text == *"__${key}__"* ]] || {
            fail "render $name: $key given, but the template has no __${key}__"
            return 1
        }
        values[$key]=$value
    done
    for key in "${!values[@]}"; do
        value=${values[$key]}
        [[ $value != *$'\n'* ]] || {
            fail "render $name: the value of $key holds a newline; placeholders take one line"
            return 1
        }
        # Quoted pattern and replacement: no glob, and "&" stays literal.
        text=${text//"__${key}__"/"$value"}
    done
    check_no_placeholders "$name" "$text" || return 1
    printf '%s\n' "$text"
}

# Fails with every placeholder still present in $2 (the text of template $1).
check_no_placeholders() {
    local left
    left=$(grep -noE '__[A-Z][A-Z0-9_]*__' <<<"$2") || return 0
    fail "render $1: placeholders left unfilled (line:placeholder): $(tr '\n' ' ' <<<"$left")"
    return 1
}

# Every placeholder name a template uses, sorted (for docs and self-tests).
template_placeholders() {
    grep -oE '__[A-Z][A-Z0-9_]*__' "$CONFORMANCE_TEMPLATES/$1" | sed -E 's/^__(.*)__$/\1/' | sort -u
}

# create_from TEMPLATE [KEY=VALUE...]: renders and creates the objects; the
# manifest is kept in the test's temp dir for the failure report.
create_from() {
    local manifest
    # Anything but the test's namespace uses the nodes' devices.
    if [[ $1 != namespace ]]; then take_node_lock || return 1; fi
    manifest=$(render_template "$@") || return 1
    save_manifest "$1" "$manifest"
    local out
    out=$(kc create -f - <<<"$manifest" 2>&1) || {
        fail "kubectl create from template $1 failed: $out"$'\n'"manifest:"$'\n'"$manifest"
        return 1
    }
}

save_manifest() {
    [[ -n ${BATS_TEST_TMPDIR:-} ]] || return 0
    mkdir -p "$BATS_TEST_TMPDIR/manifests"
    local n
    n=$(find "$BATS_TEST_TMPDIR/manifests" -type f | wc -l)
    printf '%s\n' "$2" >"$BATS_TEST_TMPDIR/manifests/$(printf '%02d' "$n")-${1%.yaml}.yaml"
}

# Helpers that build the CEL and constraint strings the templates take.

# The full name of an attribute: names without a domain are the driver's.
qualified_name() {
    if [[ $1 == */* ]]; then
        printf '%s\n' "$1"
    else
        printf '%s/%s\n' "$CONFORMANCE_DRIVER" "$1"
    fi
}

# cel_guarded MAP NAME: the CEL access to attribute/capacity NAME, guarded so a
# device without it does not match instead of aborting allocation with a
# "no such key" error.  MAP is attributes or capacity.
cel_guarded() {
    local map=$1 full domain id
    full=$(qualified_name "$2")
    domain=${full%/*}
    id=${full##*/}
    printf '"%s" in device.%s["%s"] && device.%s["%s"].%s' "$id" "$map" "$domain" "$map" "$domain" "$id"
}

# cel_attribute_equals NAME TYPE VALUE: a guarded CEL test that attribute NAME
# (of type string, int, bool or version) equals VALUE.
cel_attribute_equals() {
    local guarded literal
    guarded=$(cel_guarded attributes "$1")
    case $2 in
    string)
        literal=$(jq -rn --arg v "$3" '$v | tojson')
        printf '%s == %s\n' "$guarded" "$literal"
        ;;
    int | bool) printf '%s == %s\n' "$guarded" "$3" ;;
    version)
        literal=$(jq -rn --arg v "$3" '$v | tojson')
        printf '%s.compareTo(semver(%s)) == 0\n' "$guarded" "$literal"
        ;;
    *)
        fail "cel_attribute_equals: attribute $1 has unknown type $2"
        return 1
        ;;
    esac
}
