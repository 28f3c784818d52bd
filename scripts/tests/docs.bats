#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Statements of the docs that the code can check: how many programs make
# install installs, how many files fakehw serves per device and what its
# snapshot looks like, which nodes a kind cluster has, which taint the
# DaemonSet tolerates, and that the README's table lists every page.

load helpers

setup() {
    in_repo
}

NUMBERS=(zero one two three four five six seven eight nine ten)

@test "docs: the number of programs make install installs" {
    local n word bad=''
    # shellcheck disable=SC2016 # a make rule, not shell
    n=$(make -s --no-print-directory -f Makefile -f - print-programs <<<'print-programs: ; @echo $(words $(INSTALL_PROGRAMS))')
    word=${NUMBERS[$n]}
    while IFS=: read -r file line text; do
        [[ ${text,,} == "$word "* ]] || bad+="$file:$line: \"$text\", but make install installs $word ($n)"$'\n'
    done < <(grep -noiE "\\b($(IFS='|'; echo "${NUMBERS[*]}")) (user programs|programs a user runs|programs into)\\b" \
        README.md docs/*.md scripts/demo.sh Makefile)
    [[ -z $bad ]] || fail "$bad"
}

@test "docs: every page of docs/ is in the README's table of documentation" {
    local f table missing=''
    table=$(sed -n '/^## Documentation$/,/^## /p' README.md)
    for f in docs/*.md; do
        grep -qF "($f)" <<<"$table" || missing+=" $f"
    done
    [[ -z $missing ]] || fail "not in README.md's Documentation table:$missing"
}

# The nodes of a kind config, as kind names them for cluster $2:
# <name>-control-plane (then -control-plane2, ...), <name>-worker, -worker2, ...
kind_nodes() {
    python3 - "$1" "$2" <<'EOF'
import sys, yaml
count = {}
for node in yaml.safe_load(open(sys.argv[1]))["nodes"]:
    role = node["role"]
    count[role] = count.get(role, 0) + 1
    n = count[role]
    print(f"{sys.argv[2]}-{role}{n if n > 1 else ''}")
EOF
}

@test "docs: the kind cluster's nodes are those docs/install.md names" {
    local default minor nodes workers f node
    default=$(sed -n 's/^K8S_VERSION *?= *//p' manifests/build.mk)
    minor=$(sed -E 's/^v([0-9]+\.[0-9]+)\..*/\1/' <<<"$default")
    nodes=$(kind_nodes "kind/cluster-$minor.yaml" fakehw-dra)
    # Every minor's cluster has the same nodes.
    for f in kind/cluster-*.yaml; do
        assert_equal "$(kind_nodes "$f" fakehw-dra)" "$nodes"
    done
    workers=$(grep -c -- '-worker' <<<"$nodes")
    run grep -o "(one control plane, [a-z]* workers)" docs/install.md
    assert_output "(one control plane, ${NUMBERS[$workers]} workers)"
    # Restarting the cluster's containers names every one.
    run grep -o 'docker start fakehw-dra-[^`]*' docs/install.md
    assert_output "docker start $(paste -sd' ' <<<"$nodes")"
    # The table of workers and the slices kind-up prints list each worker.
    while read -r node; do
        [[ $node == *-worker* ]] || continue
        run grep -c "^| \`$node\` |" docs/install.md
        assert_output 1
        run grep -cE "^$node +$node +" docs/install.md
        ((output >= 1)) || fail "kind-up's printed slices in docs/install.md have no line of $node"
    done <<<"$nodes"
    # shellcheck disable=SC2016 # backquotes of Markdown, not of the shell
    run grep -F '| `KIND_CLUSTER_NAME` |' docs/install.md
    # shellcheck disable=SC2016
    assert_output --partial "node names are $(sed 's/^fakehw-dra/`<name>/; s/$/`/' <<<"$nodes" | paste -sd, - | sed 's/,/, /g') |"
}

@test "docs: the DaemonSet's tolerations are the ones docs/install.md and wait-slices.sh name" {
    local key
    run grep -rn 'tolerates no taint' docs scripts/wait-slices.sh README.md
    assert_failure
    while read -r key; do
        grep -q "tolerates one taint,\$" docs/install.md || fail "docs/install.md does not say the DaemonSet tolerates one taint"
        grep -qF "\`$key\`" docs/install.md || fail "docs/install.md does not name the toleration $key"
        grep -qF "tolerates only $key" scripts/wait-slices.sh || fail "wait-slices.sh does not name the toleration $key"
    done < <(python3 -c '
import yaml
for doc in yaml.safe_load_all(open("manifests/base/daemonset.yaml")):
    if doc and doc.get("kind") == "DaemonSet":
        for t in doc["spec"]["template"]["spec"].get("tolerations", []):
            print(t["key"])')
}

# The keys of the device blocks of a snapshot on stdin, one block a line.
block_keys() {
    awk '/^device /{if (keys) print keys; keys = ""; next}
        /^end /{if (keys) print keys; keys = ""; next}
        /^\[/{keys = ""; next}
        keys != "" || /^name /{keys = keys (keys ? " " : "") $1}
        END{if (keys) print keys}'
}

@test "docs/fakehw.md: the files per device and the snapshot sample are what fakehw serves" {
    ((EUID == 0)) || skip "fakehw mounts need root"
    [[ -x $BIN/fakehw ]] || fail "no $BIN/fakehw (make)"
    local t=$BATS_TEST_TMPDIR n keys
    # The example config of docs/fakehw.md, the node of its snapshot sample.
    "$BIN/fakehw" --config fakehw/tests/configs/good-cluster.yaml --mount "$t/mnt" --node kind-worker 2>"$t/log" ||
        fail "fakehw did not mount: $(cat "$t/log")"
    n=$(find "$t/mnt/devices/gpu-0" -mindepth 1 | wc -l)
    cat "$t/mnt/snapshot" >"$t/snapshot"
    fusermount3 -u "$t/mnt"
    keys=$(block_keys <"$t/snapshot" | sort -u)
    [[ $(wc -l <<<"$keys") == 1 && $(wc -w <<<"$keys") == "$n" ]] ||
        fail "the real snapshot's blocks are not one line per file: $keys"
    # The counts in the text.
    local all
    all=$(sed -E ':a; s/([0-9])([0-9]{3})($|,)/\1,\2\3/; ta' <<<"$((4096 * n))")
    run grep -c "each of the $n files of every device ($all files for 4,096 GPUs" docs/fakehw.md
    assert_output 1
    run grep -c "each of its $n files, in the order of the listing above" docs/fakehw.md
    assert_output 1
    # The listing of the tree names every file, in the snapshot's order.
    run bash -c "sed -n '/^## The tree\$/,/^### /p' docs/fakehw.md | sed -n '/^    gpu-0\\/\$/,/^    gpu-1\\/\$/p' |
        sed -n 's/^      \\([A-Za-z][A-Za-z]*\\) .*/\\1/p' | paste -sd' ' -"
    assert_output "$keys"
    # Every block the sample shows in full has every line, in order, and the
    # sample ends as a snapshot of its five devices does.
    local sample
    sample=$(sed -n '/^generation 2$/,/^end [0-9]*$/p' docs/fakehw.md)
    [[ -n $sample ]] || fail "no snapshot sample in docs/fakehw.md"
    run bash -c 'block_keys() { '"$(declare -f block_keys | sed '1,2d;$d')"'; }; block_keys | sort -u' <<<"$sample"
    assert_output "$keys"
    run tail -n1 <<<"$sample"
    assert_output "$(tail -n1 "$t/snapshot")"
    # Its values are fakehw's, but for the health flip of gpu-1 (and the generation it made), the times
    # and the device nodes (the sample's fakehw had --dev-dir).
    run diff <(grep -Ev '^(generation|healthSince|health|healthReason|devicePath) |^\[' <<<"$sample") \
        <(grep -Ev '^(generation|healthSince|health|healthReason|devicePath) ' "$t/snapshot" |
            awk '/^device gpu-[23]$/{skip = 1} /^device big-0$/{skip = 0} !skip')
    assert_success
}
