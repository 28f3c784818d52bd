#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Attachable devices on a real FUSE mount: the attach and attachFailure
# files, the attach delay, scripted failures, the snapshot, reloads.  Needs
# root and /dev/fuse, like fakehw.bats.

bats_require_minimum_version 1.5.0
load helpers

@test "attach files: none on plain devices, detached on attachable ones; plain ones refuse writes" {
	fakehw_start --config "$CONFIGS/good-attach.yaml" --node n1
	assert_equal "$(attr gpu-0 attach)" none
	assert_equal "$(attr gpu-0 attachFailure)" never
	assert_equal "$(attr gpu-1 attach)" detached
	assert_equal "$(attr gpu-2 attachFailure)" next
	assert_equal "$(stat -c %a "$MNT/devices/gpu-1/attach")" 644
	assert_equal "$(stat -c %a "$MNT/devices/gpu-1/attachFailure")" 444
	run ! bash -c "echo attach >'$MNT/devices/gpu-0/attach'"
	assert_output --partial "Invalid argument"
	run ! bash -c "echo attached >'$MNT/devices/gpu-1/attach'"
	run ! bash -c "echo never >'$MNT/devices/gpu-1/attachFailure'"
	assert_equal "$(attr gpu-1 attach)" detached
	assert_equal "$(cat "$MNT/generation")" 1
	grep -q 'gpu-0/attach refused: gpu-0: attach: the device is not attachable' "$LOG"
}

@test "an attach takes its delay, bumps the generation and wakes a poller" {
	fakehw_start --config "$CONFIGS/good-attach.yaml" --node n1
	"$POLLWAIT" wait "$MNT/generation" 5 "$BATS_TEST_TMPDIR/ready" >"$BATS_TEST_TMPDIR/woke" &
	local waiter=$!
	wait_until 50 test -e "$BATS_TEST_TMPDIR/ready"
	echo attach >"$MNT/devices/gpu-1/attach"
	assert_equal "$(attr gpu-1 attach)" attaching
	assert_equal "$(cat "$MNT/generation")" 2
	wait "$waiter"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/woke")" "woke 1 2"
	# 2 s in the config; generous bound for a loaded machine.
	wait_until 100 attr_is gpu-1 attach attached
	assert_equal "$(cat "$MNT/generation")" 3
	# Attaching again changes nothing; detach does.
	echo attach >"$MNT/devices/gpu-1/attach"
	assert_equal "$(cat "$MNT/generation")" 3
	echo detach >"$MNT/devices/gpu-1/attach"
	assert_equal "$(attr gpu-1 attach)" detached
	assert_equal "$(cat "$MNT/generation")" 4
}

@test "scripted failures: fail next fails once, fail always until fail never" {
	fakehw_start --config "$CONFIGS/good-attach.yaml" --node n1
	# gpu-2: no delay, its first attach scripted to fail.
	echo attach >"$MNT/devices/gpu-2/attach"
	assert_equal "$(attr gpu-2 attach)" failed
	assert_equal "$(attr gpu-2 attachFailure)" never
	echo attach >"$MNT/devices/gpu-2/attach"
	assert_equal "$(attr gpu-2 attach)" attached
	echo detach >"$MNT/devices/gpu-2/attach"
	echo "fail always" >"$MNT/devices/gpu-2/attach"
	for _ in 1 2 3; do
		echo attach >"$MNT/devices/gpu-2/attach"
		assert_equal "$(attr gpu-2 attach)" failed
	done
	assert_equal "$(attr gpu-2 attachFailure)" always
	echo "fail never" >"$MNT/devices/gpu-2/attach"
	echo attach >"$MNT/devices/gpu-2/attach"
	assert_equal "$(attr gpu-2 attach)" attached
	# A failure scripted while an attach is in progress ends that one.
	echo attach >"$MNT/devices/gpu-1/attach"
	echo "fail next" >"$MNT/devices/gpu-1/attach"
	wait_until 100 attr_is gpu-1 attach failed
}

@test "the snapshot and fakehw_tree_list carry the attach state" {
	fakehw_start --config "$CONFIGS/good-attach.yaml" --node n1
	echo attach >"$MNT/devices/gpu-2/attach"
	run grep -A 20 -x 'device gpu-2' "$MNT/snapshot"
	assert_line "attach failed"
	assert_line "attachFailure never"
	mkdir -p "$BATS_TEST_TMPDIR/walk"
	ln -s "$MNT/node" "$BATS_TEST_TMPDIR/walk/node"
	ln -s "$MNT/generation" "$BATS_TEST_TMPDIR/walk/generation"
	ln -s "$MNT/devices" "$BATS_TEST_TMPDIR/walk/devices"
	"$TREE_DUMP" "$MNT" >"$BATS_TEST_TMPDIR/from-snapshot"
	"$TREE_DUMP" "$BATS_TEST_TMPDIR/walk" >"$BATS_TEST_TMPDIR/from-files"
	run -0 diff -u "$BATS_TEST_TMPDIR/from-files" "$BATS_TEST_TMPDIR/from-snapshot"
	grep -qx 'gpu-0 attach none' "$BATS_TEST_TMPDIR/from-snapshot"
	grep -qx 'gpu-1 attach detached' "$BATS_TEST_TMPDIR/from-snapshot"
	grep -qx 'gpu-2 attach failed' "$BATS_TEST_TMPDIR/from-snapshot"
}

@test "a tree without attach files (an older fakehw) reads as none" {
	local root=$BATS_TEST_TMPDIR/plain
	mkdir -p "$root/devices/gpu-0"
	echo n1 >"$root/node"
	echo 1 >"$root/generation"
	local kv
	for kv in name=gpu-0 index=0 uuid=GPU-1 productName=X architecture=A brand=B memory=1 \
		computeCapability=9.0 driverVersion=1 cudaDriverVersion=1 pciBusID=0000:08:00.0 \
		pcieRoot=pci0000:07 numaNode=0 minor=0 devicePath= health=healthy healthReason= \
		healthSince=1; do
		echo "${kv#*=}" >"$root/devices/gpu-0/${kv%%=*}"
	done
	run -0 "$TREE_DUMP" "$root"
	assert_line "gpu-0 attach none"
	assert_line "gpu-0 attachFailure never"
	assert_line "gpu-0 attachDelayMs 0"
	echo sometimes >"$root/devices/gpu-0/attachFailure"
	run ! "$TREE_DUMP" "$root"
	assert_output --partial 'attachFailure: "sometimes" is not an attach failure (never, next, always)'
}

@test "a reload keeps the attach state of unchanged devices" {
	cp "$CONFIGS/good-attach.yaml" "$BATS_TEST_TMPDIR/c.yaml"
	fakehw_start --config "$BATS_TEST_TMPDIR/c.yaml" --node n1
	echo attach >"$MNT/devices/gpu-1/attach"
	wait_until 100 attr_is gpu-1 attach attached
	echo attach >"$MNT/devices/gpu-2/attach"
	assert_equal "$(attr gpu-2 attach)" failed
	# gpu-2's entry changes (no scripted failure any more): it starts over.
	sed -i 's/failure: next/failure: never/' "$BATS_TEST_TMPDIR/c.yaml"
	kill -HUP "$FAKEHW_PID"
	wait_until 100 attr_is gpu-2 attach detached
	assert_equal "$(attr gpu-1 attach)" attached
}

@test "virtual: the config key shows in the tree, the snapshot and fakehw_tree_list" {
	fakehw_start --config "$CONFIGS/good-attach.yaml" --node n1
	assert_equal "$(attr gpu-3 virtual)" true
	assert_equal "$(attr gpu-0 virtual)" false
	assert_equal "$(stat -c %a "$MNT/devices/gpu-3/virtual")" 444
	run grep -A 23 -x 'device gpu-3' "$MNT/snapshot"
	assert_line "virtual true"
	run "$TREE_DUMP" "$MNT"
	assert_line "gpu-3 virtual true"
	assert_line "gpu-1 virtual false"
}

@test "fakehw attach shows and changes the state, and explains mistakes" {
	fakehw_start --config "$CONFIGS/good-attach.yaml" --node n1
	run -0 "$FAKEHW" attach --mount "$MNT" gpu-1
	assert_output "gpu-1: detached (attachFailure never, attachDelayMs 2000)"
	run -0 "$FAKEHW" attach --mount "$MNT" gpu-2 attach
	assert_output "gpu-2: failed (attachFailure never, attachDelayMs 0)"
	assert_equal "$(attr gpu-2 attach)" failed
	# Flags after the positionals, the mount from the environment.
	FAKEHW_MOUNT=$MNT run "$FAKEHW" attach gpu-2 fail always
	assert_success
	assert_output "gpu-2: failed (attachFailure always, attachDelayMs 0)"
	run -0 "$FAKEHW" attach gpu-2 detach --mount "$MNT"
	assert_output "gpu-2: detached (attachFailure always, attachDelayMs 0)"
	run -0 "$FAKEHW" attach --mount "$MNT" all
	assert_line "gpu-0: none (attachFailure never, attachDelayMs 0)"
	assert_line "gpu-1: detached (attachFailure never, attachDelayMs 2000)"
	assert_line "gpu-3: none (attachFailure never, attachDelayMs 0)"
	# "all" with a command goes to the attachable devices only.
	run -0 "$FAKEHW" attach --mount "$MNT" all fail never
	assert_equal "${#lines[@]}" 2
	assert_line "gpu-1: detached (attachFailure never, attachDelayMs 2000)"
	assert_line "gpu-2: detached (attachFailure never, attachDelayMs 0)"

	run -1 "$FAKEHW" attach --mount "$MNT" gpu-0 attach
	assert_output "fakehw attach: gpu-0 is not attachable ($MNT/devices/gpu-0/attach reads \"none\")"
	run -1 "$FAKEHW" attach --mount "$MNT" gpu-7 attach
	assert_output "fakehw attach: no device gpu-7 in $MNT/devices"
	run -1 "$FAKEHW" attach --mount "$MNT" gpu-7
	assert_output "fakehw attach: no device gpu-7 in $MNT/devices"
	run -1 "$FAKEHW" attach --mount "$BATS_TEST_TMPDIR" gpu-1
	assert_output "fakehw attach: $BATS_TEST_TMPDIR is not a fakehw tree (no $BATS_TEST_TMPDIR/devices)"
	run -1 "$FAKEHW" attach --mount "$BATS_TEST_TMPDIR" all
	assert_output "fakehw attach: $BATS_TEST_TMPDIR is not a fakehw tree (no $BATS_TEST_TMPDIR/devices)"
	run -2 "$FAKEHW" attach --mount "$MNT" gpu-1 fail sometimes
	assert_output 'fakehw attach: "fail sometimes" is not an attach command (attach, detach, fail next|always|never, delay DURATION)'
	run -2 "$FAKEHW" attach --mount "$MNT" gpu-1 attached
	assert_output 'fakehw attach: "attached" is not an attach command (attach, detach, fail next|always|never, delay DURATION)'
	run -2 "$FAKEHW" attach --mount "$MNT" gpu-1 fail
	run -2 "$FAKEHW" attach --mount "$MNT" gpu-1 attach now
	run -2 "$FAKEHW" attach --mount "$MNT" gpu-1 fail next now
	assert_output 'fakehw attach: unexpected argument "now" (see --help)'
	run -2 "$FAKEHW" attach --mount "$MNT"
	assert_output "fakehw attach: need DEVICE (see --help)"
	run -0 "$FAKEHW" attach --help
	assert_output --partial "Exit"
	run -2 "$FAKEHW" attach --mount "$MNT" gpu-1 delay soon
	assert_output --partial "fakehw attach: delay: "
	run -2 "$FAKEHW" attach --mount "$MNT" gpu-1 delay
	# Nothing above changed gpu-1.
	assert_equal "$(attr gpu-1 attach)" detached
	assert_equal "$(attr gpu-1 attachFailure)" never
}

@test "fakehw check lists each device's attach config and virtual" {
	run -0 "$FAKEHW" check --config "$CONFIGS/good-attach.yaml" --node n1
	assert_line --index 1 --regexp '^NAME .* ATTACH +VIRTUAL +HEALTH$'
	assert_line --regexp '^gpu-0 .* - +false +healthy$'
	assert_line --regexp '^gpu-1 .* 2000ms/fail-never +false +healthy$'
	assert_line --regexp '^gpu-2 .* 0ms/fail-next +false +healthy$'
	assert_line --regexp '^gpu-3 .* - +true +healthy$'
}

@test "a delay set at run time holds the next attach; the tree and snapshot show it" {
	fakehw_start --config "$CONFIGS/good-attach.yaml" --node n1
	assert_equal "$(attr gpu-1 attachDelayMs)" 2000
	assert_equal "$(attr gpu-0 attachDelayMs)" 0
	assert_equal "$(stat -c %a "$MNT/devices/gpu-1/attachDelayMs")" 444
	run -0 "$FAKEHW" attach --mount "$MNT" gpu-1 delay 1h
	assert_output "gpu-1: detached (attachFailure never, attachDelayMs 3600000)"
	assert_equal "$(cat "$MNT/generation")" 2
	run grep -A 22 -x 'device gpu-1' "$MNT/snapshot"
	assert_line "attachDelayMs 3600000"
	echo attach >"$MNT/devices/gpu-1/attach"
	# 2 s was the config's delay: well past it, still attaching.
	sleep 2.5
	assert_equal "$(attr gpu-1 attach)" attaching
	# Shortening it does not end the attach in progress; a new one takes it.
	"$FAKEHW" attach --mount "$MNT" gpu-1 delay 0
	"$FAKEHW" attach --mount "$MNT" gpu-1 detach
	run "$FAKEHW" attach --mount "$MNT" gpu-1 attach
	assert_output "gpu-1: attached (attachFailure never, attachDelayMs 0)"
	run ! bash -c "echo 'delay 5' >'$MNT/devices/gpu-1/attach'"
	assert_equal "$(attr gpu-1 attachDelayMs)" 0
	run -1 "$FAKEHW" attach --mount "$MNT" gpu-0 delay 1s
	assert_output --partial "gpu-0 is not attachable"
}
