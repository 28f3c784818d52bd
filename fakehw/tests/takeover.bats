#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Two fakehw daemons on one mount point, as during a surge rolling update:
# with --takeover-timeout the second waits while the first serves, mounts
# once the first has unmounted (or died), keeps the device nodes both make,
# gives up after the timeout, and stops at once on SIGTERM while waiting.
# Needs root (mount, mknod) and /dev/fuse, like fakehw.bats.
# shellcheck disable=SC2030,SC2031,SC2034 # NEXT_PID and FAKEHW_PID are per test, read by helpers

bats_require_minimum_version 1.5.0
load helpers

setup() {
	[[ -c /dev/fuse ]] || skip "no /dev/fuse"
	[[ $(id -u) == 0 ]] || skip "mknod needs CAP_MKNOD"
	setup_dirs
	NEXT_PID=
	NEXT_LOG=$BATS_TEST_TMPDIR/next.log
}

teardown() {
	if [[ -n $NEXT_PID ]]; then
		kill -KILL "$NEXT_PID" 2>/dev/null || true
		wait "$NEXT_PID" 2>/dev/null || true
	fi
	teardown_fakehw
	if [[ -f $NEXT_LOG ]] && grep -qE "ERROR: [A-Za-z]+Sanitizer|runtime error:" "$NEXT_LOG"; then
		cat "$NEXT_LOG" >&2
		return 1
	fi
}

# next_start [ARGS...]: the successor, for node "next", in the background.
next_start() {
	"$FAKEHW" --config "$CONFIGS/bats-small.yaml" --mount "$MNT" --node next --dev-dir "$DEV" \
		--foreground -v 2 "$@" 2>>"$NEXT_LOG" &
	NEXT_PID=$!
}

next_waits() {
	grep -q "another fakehw serves it; waiting up to" "$NEXT_LOG"
}

served_by() {
	[[ $(cat "$MNT/node" 2>/dev/null) == "$1" ]]
}

# now_ms: the wall clock in milliseconds.
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

@test "--takeover-timeout: the successor waits, mounts within a second of the unmount, keeps its device nodes" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node first --dev-dir "$DEV"
	next_start --takeover-timeout 30
	wait_until 50 next_waits
	sleep 0.5
	run -0 kill -0 "$NEXT_PID"
	served_by first

	local t0
	t0=$(now_ms)
	fakehw_stop
	assert_equal "$FAKEHW_STATUS" 0
	wait_until 20 served_by next
	(($(now_ms) - t0 < 2000))
	grep -q "the other fakehw unmounted after [0-9]* ms; taking over" "$NEXT_LOG"
	# The first removed its nodes before it unmounted; the successor's stay.
	run -0 ls "$DEV"
	assert_output "$(printf 'fakegpu%s\n' 0 1)"
	assert_equal "$(attr gpu-1 productName)" "NVIDIA H100 80GB HBM3"

	FAKEHW_PID=$NEXT_PID NEXT_PID=
	fakehw_stop
	assert_equal "$FAKEHW_STATUS" 0
	assert_equal "$(ls -A "$DEV")" ""
}

@test "without --takeover-timeout the successor refuses at once" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node first --dev-dir "$DEV"
	run -1 "$FAKEHW" --config "$CONFIGS/bats-small.yaml" --mount "$MNT" --node next --foreground
	assert_output --partial "mount point $MNT already has a FUSE filesystem mounted"
	served_by first
}

@test "--takeover-timeout expires with a message; the first keeps serving" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node first --dev-dir "$DEV"
	local t0
	t0=$(now_ms)
	run -1 "$FAKEHW" --config "$CONFIGS/bats-small.yaml" --mount "$MNT" --node next \
		--dev-dir "$DEV" --foreground --takeover-timeout 1
	(($(now_ms) - t0 >= 1000))
	assert_output --partial "mount point $MNT: another fakehw still serves it after 1 s (--takeover-timeout)"
	served_by first
	run -0 ls "$DEV"
	assert_output "$(printf 'fakegpu%s\n' 0 1)"
	run -2 "$FAKEHW" --config "$CONFIGS/bats-small.yaml" --mount "$MNT" --takeover-timeout -1
	assert_output --partial "--takeover-timeout -1: must be 0..86400 seconds"
}

@test "SIGTERM while waiting ends the successor at once, cleanly" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node first --dev-dir "$DEV"
	next_start --takeover-timeout 60
	wait_until 50 next_waits
	kill -TERM "$NEXT_PID"
	wait_until 10 process_gone "$NEXT_PID"
	local status=0
	wait "$NEXT_PID" || status=$?
	NEXT_PID=
	assert_equal "$status" 0
	grep -q "while waiting for the mount point $MNT: exiting" "$NEXT_LOG"
	served_by first
	run -0 ls "$DEV"
	assert_output "$(printf 'fakegpu%s\n' 0 1)"
}

@test "a predecessor killed while the successor waits: its stale mount is cleared (--clear-stale)" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node first --dev-dir "$DEV"
	next_start --takeover-timeout 30 --clear-stale
	wait_until 50 next_waits
	fakehw_stop KILL
	wait_until 20 served_by next
	grep -q "clearing a stale FUSE mount" "$NEXT_LOG"
	FAKEHW_PID=$NEXT_PID NEXT_PID=
	fakehw_stop
	assert_equal "$FAKEHW_STATUS" 0
}
