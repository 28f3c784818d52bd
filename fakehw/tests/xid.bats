#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# XIDs on a real FUSE mount: the xid file, fakehw xid, XIDs in the flip
# schedule, partitions, reloads.  Needs root and /dev/fuse, like fakehw.bats.

load helpers

@test "xid: 0 at start, a write reports one, 0 clears it; bad values fail with EINVAL" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n
	assert_equal "$(attr gpu-0 xid)" 0
	assert_equal "$(stat -c %a "$MNT/devices/gpu-0/xid")" 644
	since=$(attr gpu-1 healthSince)
	sleep 1.1 # healthSince has whole seconds
	echo 79 >"$MNT/devices/gpu-1/xid"
	assert_equal "$(attr gpu-1 xid)" 79
	assert_equal "$(cat "$MNT/generation")" 2
	# The XID is not the health state, but it moves healthSince.
	assert_equal "$(attr gpu-1 health)" healthy
	(($(attr gpu-1 healthSince) > since))
	assert_equal "$(attr gpu-0 xid)" 0
	for bad in 100000 079 -1 "XID 79" abc "79 " " 79"; do
		run bash -c "printf '%s' '$bad' >'$MNT/devices/gpu-1/xid'"
		assert_failure
		assert_output --partial "Invalid argument"
	done
	assert_equal "$(attr gpu-1 xid)" 79
	assert_equal "$(cat "$MNT/generation")" 2
	printf 0 >"$MNT/devices/gpu-1/xid"
	assert_equal "$(attr gpu-1 xid)" 0
	assert_equal "$(cat "$MNT/generation")" 3
	grep -q "xid of gpu-1 set by write: 79" "$LOG"
	# In the snapshot, after ofaEngines.
	run grep -A1 '^ofaEngines ' "$MNT/snapshot"
	assert_line "xid 0"
}

@test "fakehw xid reports, shows and clears; explains mistakes" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n
	run "$FAKEHW" xid --mount "$MNT" gpu-1 79
	assert_success
	assert_output "gpu-1: xid 79"
	assert_equal "$(attr gpu-1 xid)" 79
	run "$FAKEHW" xid --mount "$MNT" gpu-1
	assert_success
	assert_output "gpu-1: xid 79"
	run "$FAKEHW" xid --mount "$MNT" all
	assert_success
	assert_output "$(printf 'gpu-0: no xid\ngpu-1: xid 79')"
	run "$FAKEHW" xid gpu-1 --clear --mount "$MNT"
	assert_success
	assert_output "gpu-1: no xid"
	run env FAKEHW_MOUNT="$MNT" "$FAKEHW" xid all 48
	assert_success
	assert_output "$(printf 'gpu-0: xid 48\ngpu-1: xid 48')"
	# One write per device, as a writer of the tree would.
	assert_equal "$(cat "$MNT/generation")" 5

	run "$FAKEHW" xid --mount "$MNT" gpu-7 79
	assert_failure 1
	assert_output "fakehw xid: no device gpu-7 in $MNT/devices"
	for bad in 0 100000 x79 079 7.9; do
		run "$FAKEHW" xid --mount "$MNT" gpu-0 "$bad"
		assert_failure 2
		assert_output --partial "is not an XID (a decimal 1..99999; --clear clears it)"
	done
	run "$FAKEHW" xid --mount "$MNT" gpu-0 79 --clear
	assert_failure 2
	assert_output "fakehw xid: give CODE or --clear, not both"
	run "$FAKEHW" xid --mount "$MNT" ../../x 79
	assert_failure 2
	assert_output --partial "is not a device name"
	run "$FAKEHW" xid --mount "$MNT"
	assert_failure 2
	run "$FAKEHW" xid --mount "$BATS_TEST_TMPDIR" gpu-0 79
	assert_failure 1
	assert_output --partial "is not a fakehw tree"
	assert_equal "$(cat "$MNT/generation")" 5
	run "$FAKEHW" xid --help
	assert_success
	assert_output --partial "--clear"
}

@test "a scheduled XID is reported on time and cleared after for; one with a state flips health too" {
	start=$(date +%s%N)
	fakehw_start --config "$CONFIGS/bats-xid-flips.yaml" --node n
	wait_until 50 attr_is gpu-0 xid 43
	assert_equal "$(attr gpu-0 health)" unhealthy
	assert_equal "$(attr gpu-0 healthReason)" "XID 43: GPU stopped processing"
	wait_until 50 attr_is gpu-1 xid 79
	reported=$(date +%s%N)
	assert_equal "$(attr gpu-1 health)" healthy
	wait_until 50 attr_is gpu-1 xid 0
	cleared=$(date +%s%N)
	assert_equal "$(attr gpu-1 health)" healthy
	# gpu-0 keeps both: no for.
	assert_equal "$(attr gpu-0 xid)" 43
	echo "reported after $(((reported - start) / 1000000)) ms, cleared after $(((cleared - start) / 1000000)) ms"
	(((reported - start) / 1000000 >= 600 && (reported - start) / 1000000 < 3000))
	(((cleared - reported) / 1000000 >= 500 && (cleared - reported) / 1000000 < 3000))
	grep -q "scheduled flip: gpu-1 -> xid 79" "$LOG"
	grep -q "scheduled flip: gpu-1 -> xid cleared" "$LOG"
	run "$FAKEHW" check --config "$CONFIGS/bats-xid-flips.yaml" --node n
	assert_success
	assert_line "flip: gpu-1 -> xid 79 after 700ms for 700ms"
	assert_line "flip: gpu-0 -> unhealthy xid 43 after 300ms (XID 43: GPU stopped processing)"
}

@test "a partition's XID is its own: its GPU's does not reach it; a reload keeps live XIDs" {
	cat >"$BATS_TEST_TMPDIR/mig.yaml" <<-'YAML'
		defaults:
		  devices:
		    - profile: A100-SXM4-80GB
		      mig: {mode: static, instances: [{profile: 3g.40gb}, {profile: 3g.40gb}]}
		    - profile: L4
	YAML
	fakehw_start --config "$BATS_TEST_TMPDIR/mig.yaml" --node n
	"$FAKEHW" xid --mount "$MNT" gpu-0 79
	assert_equal "$(attr gpu-0-mig-3g40gb-0 xid)" 0
	"$FAKEHW" xid --mount "$MNT" gpu-0-mig-3g40gb-4 31
	assert_equal "$(attr gpu-0-mig-3g40gb-4 xid)" 31
	assert_equal "$(attr gpu-0-mig-3g40gb-4 health)" healthy
	# A reload that leaves the devices as they were keeps their XIDs.
	kill -HUP "$FAKEHW_PID"
	wait_until 50 grep -q "reloaded" "$LOG"
	assert_equal "$(attr gpu-0 xid)" 79
	assert_equal "$(attr gpu-0-mig-3g40gb-4 xid)" 31
}

@test "bad XID flips are refused with file:line:column" {
	run "$FAKEHW" check --config "$CONFIGS/bad-flip-xid.yaml"
	assert_failure 1
	assert_output --partial "bad-flip-xid.yaml:7:10: flips[0].xid: 0 is not a valid XID (1..99999)"
	run "$FAKEHW" check --config "$CONFIGS/bad-flip-reason-without-state.yaml"
	assert_failure 1
	assert_output --partial "flips[0]: reason needs a state"
}
