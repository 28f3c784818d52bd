#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The fakehw daemon on a real FUSE mount in a temp dir: the tree, flips by
# write, CLI and schedule, poll wake-ups, the snapshot file, bad configs,
# signals, device nodes, stale mounts, reloads.  Needs root (mount, mknod) and /dev/fuse.

load helpers

@test "--help documents every flag and its environment variable" {
	run "$FAKEHW" --help
	assert_success
	for flag in "--config VALUE" "--mount VALUE" "--dev-dir VALUE" "--node VALUE" \
		"--foreground" "--clear-stale" "--takeover-timeout N" "--allow-empty" "-v N" FAKEHW_CONFIG \
		FAKEHW_MOUNT FAKEHW_DEV_DIR NODE_NAME FAKEHW_FOREGROUND FAKEHW_CLEAR_STALE FAKEHW_TAKEOVER_TIMEOUT \
		FAKEHW_ALLOW_EMPTY FAKEHW_VERBOSITY "fakehw flip" "fakehw attach"; do
		assert_output --partial -- "$flag"
	done
	run "$FAKEHW" flip --help
	assert_success
	assert_output --partial "--reason VALUE"
	run "$FAKEHW" --colour red
	assert_failure 2
	assert_output --partial "unknown flag --colour"
	run "$FAKEHW"
	assert_failure 2
	assert_output --partial "--config is required"
}

@test "attributes read back as configured" {
	fakehw_start --config "$CONFIGS/good-cluster.yaml" --node kind-worker
	assert_equal "$(cat "$MNT/node")" kind-worker
	assert_equal "$(cat "$MNT/generation")" 1
	run ls "$MNT/devices"
	assert_output "$(printf 'big-0\ngpu-0\ngpu-1\ngpu-2\ngpu-3')"
	run ls "$MNT/devices/gpu-0"
	assert_output "$(printf '%s\n' architecture attach attachDelayMs attachFailure brand computeCapability copyEngines \
		cudaDriverVersion decoders devicePath driverVersion encoders health healthReason healthSince index iommuGroup jpegEngines \
		memory memorySharing migMode migPlacement migProfile migProfileId minor multiprocessors name numaNode \
		ofaEngines parent pciBusID pciDeviceId pciDeviceName pcieRoot productName uuid vfio vfioDevicePath \
		virtual xid)"
	assert_equal "$(attr big-0 name)" big-0
	assert_equal "$(attr big-0 index)" 4
	assert_equal "$(attr big-0 minor)" 4
	assert_equal "$(attr big-0 productName)" "NVIDIA H100 80GB HBM3"
	assert_equal "$(attr big-0 architecture)" Hopper
	assert_equal "$(attr big-0 brand)" NVIDIA
	assert_equal "$(attr big-0 memory)" $((96 << 30))
	assert_equal "$(attr big-0 computeCapability)" 9.0
	assert_equal "$(attr big-0 driverVersion)" 580.95.05
	assert_equal "$(attr big-0 cudaDriverVersion)" 13.0
	assert_equal "$(attr big-0 pciBusID)" 0000:28:00.0
	assert_equal "$(attr big-0 pcieRoot)" pci0000:27
	assert_equal "$(attr big-0 numaNode)" 1
	assert_equal "$(attr big-0 devicePath)" ""
	assert_equal "$(attr big-0 health)" unhealthy
	assert_equal "$(attr big-0 healthReason)" "XID 79: GPU has fallen off the bus"
	assert_equal "$(attr gpu-3 memory)" $((81920 << 20))
	assert_equal "$(attr gpu-3 productName)" "NVIDIA A100-SXM4-80GB"
	assert_equal "$(attr gpu-3 numaNode)" 0
	assert_equal "$(attr gpu-3 health)" healthy
	assert_equal "$(attr gpu-3 healthReason)" ""
	# The UUID derivation is documented: SHA-256 of domain, seed, name.
	assert_equal "$(attr gpu-0 uuid)" "$(/usr/bin/python3 -c '
import hashlib
d = hashlib.sha256(b"fakehw-gpu-uuid/v1\0kind-worker\0gpu-0").hexdigest()
print("GPU-%s-%s-%s-%s-%s" % (d[:8], d[8:12], d[12:16], d[16:20], d[20:32]))')"
	since=$(attr gpu-0 healthSince)
	((since > $(date +%s) - 60 && since <= $(date +%s)))
	# Each file is exactly one line; sizes match the content.
	assert_equal "$(stat -c %s "$MNT/devices/big-0/productName")" 22
	assert_equal "$(stat -c %a "$MNT/devices/big-0/health")" 644
	assert_equal "$(stat -c %a "$MNT/devices/big-0/uuid")" 444
	run cat "$MNT/devices/nope/uuid"
	assert_failure
	run cat "$MNT/devices/gpu-0/colour"
	assert_failure
}

@test "per-node sections; UUIDs stable per node, different across nodes" {
	fakehw_start --config "$CONFIGS/good-cluster.yaml" --node kind-worker3
	assert_equal "$(find "$MNT/devices" -mindepth 1 -maxdepth 1 | wc -l)" 8
	assert_equal "$(attr gpu-7 productName)" "NVIDIA H200"
	assert_equal "$(attr gpu-7 memory)" $((143771 << 20))
	assert_equal "$(attr gpu-7 driverVersion)" 570.172.08
	uuid_w3=$(attr gpu-0 uuid)
	fakehw_stop
	assert_equal "$FAKEHW_STATUS" 0

	# Environment variables work as the flags (DaemonSet style).
	FAKEHW_CONFIG=$CONFIGS/good-cluster.yaml NODE_NAME=some-other-node fakehw_start
	assert_equal "$(cat "$MNT/node")" some-other-node
	assert_equal "$(find "$MNT/devices" -mindepth 1 -maxdepth 1 | wc -l)" 2
	assert_equal "$(attr gpu-1 productName)" "NVIDIA A100-SXM4-80GB"
	uuid_other=$(attr gpu-0 uuid)
	fakehw_stop

	fakehw_start --config "$CONFIGS/good-cluster.yaml" --node kind-worker3
	assert_equal "$(attr gpu-0 uuid)" "$uuid_w3"
	[[ $uuid_w3 != "$uuid_other" ]]
	[[ $uuid_w3 =~ ^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]]
}

@test "writing health flips it; bad values fail with EINVAL and change nothing" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n
	echo "unhealthy XID 79: GPU has fallen off the bus" >"$MNT/devices/gpu-1/health"
	assert_equal "$(attr gpu-1 health)" unhealthy
	assert_equal "$(attr gpu-1 healthReason)" "XID 79: GPU has fallen off the bus"
	assert_equal "$(cat "$MNT/generation")" 2
	since=$(attr gpu-1 healthSince)

	run bash -c "echo broken >'$MNT/devices/gpu-1/health'"
	assert_failure
	assert_output --partial "Invalid argument"
	run bash -c "printf 'Healthy' >'$MNT/devices/gpu-1/health'"
	assert_failure
	assert_equal "$(attr gpu-1 health)" unhealthy
	assert_equal "$(attr gpu-1 healthReason)" "XID 79: GPU has fallen off the bus"
	assert_equal "$(attr gpu-1 healthSince)" "$since"
	assert_equal "$(cat "$MNT/generation")" 2

	# Only health is writable, for root too; the tree's shape is fixed.
	run bash -c "echo x >'$MNT/devices/gpu-1/uuid'"
	assert_failure
	assert_output --partial "Permission denied"
	run touch "$MNT/devices/gpu-1/extra"
	assert_failure
	run mkdir "$MNT/devices/gpu-9"
	assert_failure

	# healthy without a reason clears it; the same value again is no change.
	printf 'healthy' >"$MNT/devices/gpu-1/health"
	assert_equal "$(attr gpu-1 health)" healthy
	assert_equal "$(attr gpu-1 healthReason)" ""
	assert_equal "$(cat "$MNT/generation")" 3
	echo healthy >"$MNT/devices/gpu-1/health"
	assert_equal "$(cat "$MNT/generation")" 3
	grep -q "health of gpu-1 set by write: unhealthy XID 79" "$LOG"
}

@test "one pass over a file never mixes two values" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n
	for i in 1 2 3 4 5 6 7 8; do
		echo "unhealthy r$i" >"$MNT/devices/gpu-0/health"
	done
	assert_equal "$(cat "$MNT/generation")" 9
	run /usr/bin/python3 -c '
import os, sys
mnt = sys.argv[1]
fd = os.open(mnt + "/generation", os.O_RDONLY)
first = os.pread(fd, 1, 0)                      # "9"
with open(mnt + "/devices/gpu-0/health", "w") as f:
    f.write("healthy")                          # generation is now 10
rest = os.pread(fd, 64, 1)                      # still the "9\n" of this pass
again = os.pread(fd, 64, 0)                     # a new pass sees 10
print(repr(first + rest), repr(again))' "$MNT"
	assert_success
	assert_output "b'9\\n' b'10\\n'"
}

@test "a write wakes a reader polling generation within 100 ms" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n
	run /usr/bin/python3 "$POLLWAIT" latency "$MNT" gpu-0 5
	assert_success
	read -r median max <<<"$output"
	echo "wake latency: median ${median} ms, max ${max} ms"
	/usr/bin/python3 -c "import sys; sys.exit(0 if float('$median') < 100 else 1)"
	# Without a change, poll keeps waiting (no busy wake-ups).
	run /usr/bin/python3 "$POLLWAIT" wait "$MNT/generation" 0.3 "$BATS_TEST_TMPDIR/ready"
	assert_failure 1
	assert_output "timeout 6"
}

@test "fakehw flip changes health, wakes a waiting reader, explains mistakes" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n
	/usr/bin/python3 "$POLLWAIT" wait "$MNT/generation" 10 "$BATS_TEST_TMPDIR/ready" \
		>"$BATS_TEST_TMPDIR/waiter.out" &
	waiter=$!
	wait_until 50 test -e "$BATS_TEST_TMPDIR/ready"
	run "$FAKEHW" flip --mount "$MNT" gpu-0 unhealthy --reason "XID 48: double-bit ECC error"
	assert_success
	assert_output "gpu-0: unhealthy (XID 48: double-bit ECC error)"
	wait "$waiter"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/waiter.out")" "woke 1 2"
	assert_equal "$(attr gpu-0 healthReason)" "XID 48: double-bit ECC error"

	FAKEHW_MOUNT=$MNT run "$FAKEHW" flip all healthy
	assert_success
	assert_output "$(printf 'gpu-0: healthy\ngpu-1: healthy')"
	assert_equal "$(cat "$MNT/generation")" 3

	run "$FAKEHW" flip --mount "$MNT" gpu-7 unhealthy
	assert_failure 1
	assert_output "fakehw flip: no device gpu-7 in $MNT/devices"
	run "$FAKEHW" flip --mount "$MNT" gpu-0 sick
	assert_failure 2
	assert_output --partial '"sick" is not a health state'
	run "$FAKEHW" flip --mount "$BATS_TEST_TMPDIR" gpu-0 healthy
	assert_failure 1
	assert_output --partial "is not a fakehw tree"
	assert_equal "$(cat "$MNT/generation")" 3
}

# no_default_tree CMD...: CMD where the default mount point holds no tree
# (an empty tmpfs over /var/run in a private mount namespace), whatever
# this machine runs.
no_default_tree() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	unshare -m --propagation private bash -c 'mount -t tmpfs none "$(readlink -f /var/run)" && exec "$@"' _ "$@"
}

@test "flip and attach without --mount, and no tree at the default, name --mount" {
	command -v unshare >/dev/null || skip "needs unshare"
	local hint="no fakehw tree at /var/run/fakehw, the default (no /var/run/fakehw/devices): give the mount point of a running fakehw with --mount DIR (or FAKEHW_MOUNT)"
	run no_default_tree env -u FAKEHW_MOUNT "$FAKEHW" flip gpu-0 unhealthy
	assert_failure 1
	assert_output "fakehw flip: $hint"
	run no_default_tree env -u FAKEHW_MOUNT "$FAKEHW" flip all healthy
	assert_failure 1
	assert_output "fakehw flip: $hint"
	run no_default_tree env -u FAKEHW_MOUNT "$FAKEHW" attach gpu-0
	assert_failure 1
	assert_output "fakehw attach: $hint"
	# A mount point that was named is only said to hold no tree.
	FAKEHW_MOUNT=$BATS_TEST_TMPDIR run "$FAKEHW" flip gpu-0 healthy
	assert_failure 1
	assert_output "fakehw flip: $BATS_TEST_TMPDIR is not a fakehw tree (no $BATS_TEST_TMPDIR/devices)"
}

@test "flip and attach take device names only: no path outside the tree, usage errors exit 2" {
	# A plain directory as the tree, and files named health and attach beside it.
	mkdir -p "$BATS_TEST_TMPDIR/tree/devices/gpu-0" "$BATS_TEST_TMPDIR/x"
	echo keep >"$BATS_TEST_TMPDIR/x/health"
	echo keep >"$BATS_TEST_TMPDIR/x/attach"
	local rule="is not a device name (a DNS label: lowercase letters, digits and '-', at most 63) or \"all\""
	run "$FAKEHW" flip --mount "$BATS_TEST_TMPDIR/tree" ../../x unhealthy
	assert_failure 2
	assert_output "fakehw flip: \"../../x\" $rule"
	run "$FAKEHW" attach --mount "$BATS_TEST_TMPDIR/tree" ../../x detach
	assert_failure 2
	assert_output "fakehw attach: \"../../x\" $rule"
	run "$FAKEHW" attach --mount "$BATS_TEST_TMPDIR/tree" ../../x
	assert_failure 2
	for bad in "" . .. "gpu-0/../../../x" GPU-0 "gpu-0 " "-gpu"; do
		run "$FAKEHW" attach --mount "$BATS_TEST_TMPDIR/tree" "$bad"
		assert_failure 2
		run "$FAKEHW" flip --mount "$BATS_TEST_TMPDIR/tree" "$bad" healthy
		assert_failure 2
	done
	assert_equal "$(cat "$BATS_TEST_TMPDIR/x/health" "$BATS_TEST_TMPDIR/x/attach")" "$(printf 'keep\nkeep')"
}

@test "a scheduled flip happens on time and flips back" {
	start=$(date +%s%N)
	fakehw_start --config "$CONFIGS/bats-flips.yaml" --node n
	assert_equal "$(attr gpu-1 health)" healthy
	wait_until 50 attr_is gpu-1 health unhealthy
	flipped=$(date +%s%N)
	assert_equal "$(attr gpu-1 healthReason)" "XID 79: GPU has fallen off the bus"
	assert_equal "$(attr gpu-0 health)" healthy
	wait_until 50 attr_is gpu-1 health healthy
	back=$(date +%s%N)
	assert_equal "$(attr gpu-1 healthReason)" ""
	assert_equal "$(cat "$MNT/generation")" 3
	# after: 700ms, for: 700ms; allow the 0.1 s polling step and start-up.
	echo "flipped after $(((flipped - start) / 1000000)) ms, back after $(((back - start) / 1000000)) ms"
	(((flipped - start) / 1000000 >= 600 && (flipped - start) / 1000000 < 3000))
	(((back - flipped) / 1000000 >= 500 && (back - flipped) / 1000000 < 3000))
	grep -q "scheduled flip: gpu-1 -> unhealthy: XID 79" "$LOG"
}

@test "bad configs exit non-zero with file:line:column: key and mount nothing" {
	for case in \
		"bad-unknown-key.yaml|bad-unknown-key.yaml:5:7: defaults.devices[0].colour: unknown key" \
		"bad-negative-count.yaml|bad-negative-count.yaml:6:16: nodes[0].devices[1].count: -3 is not a valid count (0..4096)" \
		"bad-absurd-count.yaml|bad-absurd-count.yaml:3:14: defaults.devices[0].count: 100000 is not a valid count (0..4096)" \
		"bad-count-type.yaml|bad-count-type.yaml:3:14: defaults.devices[0].count: \"four\" is not an integer" \
		"bad-duplicate-name.yaml|bad-duplicate-name.yaml:5:13: defaults.devices[1].name: duplicate device name \"gpu-1\"" \
		"bad-unknown-profile.yaml|bad-unknown-profile.yaml:4:16: defaults.devices[0].profile: unknown profile \"A100-SXM4-96GB\"" \
		"bad-quantity.yaml|bad-quantity.yaml:5:15: defaults.devices[0].memory: \"80Gx\" is not a valid quantity" \
		"bad-syntax.yaml|bad-syntax.yaml:4:6: YAML syntax error" \
		"bad-flip-device.yaml|bad-flip-device.yaml:7:17: nodes[0].flips[0].device: no device \"gpu-2\"" \
		"bad-other-node.yaml|bad-other-node.yaml:14:19: nodes[1].devices[0].numaNode: 2000 is not a valid NUMA node"; do
		file=${case%%|*}
		want=${case#*|}
		run "$FAKEHW" --config "$CONFIGS/$file" --mount "$MNT" --dev-dir "$DEV" --node node-a \
			--foreground
		assert_failure 1
		assert_output --partial "$CONFIGS/$want"
		run is_mounted "$MNT"
		assert_failure
		[[ ! -e $DEV ]] || [[ -z $(ls -A "$DEV") ]]
	done
	run "$FAKEHW" --config "$BATS_TEST_TMPDIR/missing.yaml" --mount "$MNT" --foreground
	assert_failure 1
	assert_output --partial "reading config $BATS_TEST_TMPDIR/missing.yaml: No such file or directory"
	run "$FAKEHW" check --config "$CONFIGS/bad-health.yaml" --node n
	assert_failure 1
	assert_output --partial 'defaults.devices[0].health: "sick" is not a health state'
}

# fakehw_no_privileges ARGS...: fakehw as root with every capability
# dropped, as in a container that is not privileged.
fakehw_no_privileges() {
	setpriv --inh-caps=-all --bounding-set=-all "$FAKEHW" "$@"
}

@test "a failed mount says whether the FUSE device is missing or it is a permission problem" {
	command -v unshare >/dev/null && command -v setpriv >/dev/null || skip "needs unshare and setpriv"
	local args=(--config "$CONFIGS/bats-small.yaml" --node n --mount "$MNT" --foreground)
	# /dev/fuse opens, the mount is refused: no CAP_SYS_ADMIN.
	run fakehw_no_privileges "${args[@]}"
	assert_failure 1
	assert_output --partial "mounting $MNT failed: /dev/fuse opens: a permission problem: mounting needs root or CAP_SYS_ADMIN"
	# /dev/fuse cannot be opened (a private mount namespace puts a file of
	# mode 0 over it): a permission problem, not a missing device.
	: >"$BATS_TEST_TMPDIR/fuse"
	chmod 0 "$BATS_TEST_TMPDIR/fuse"
	run unshare -m --propagation private bash -c "mount --bind \"\$1\" /dev/fuse && shift && exec setpriv --inh-caps=-all --bounding-set=-all \"\$@\"" \
		_ "$BATS_TEST_TMPDIR/fuse" "$FAKEHW" "${args[@]}"
	assert_failure 1
	assert_output --partial "opening /dev/fuse: Permission denied: a permission problem, not a missing device: run fakehw as root or with CAP_SYS_ADMIN; in a container, run it privileged"
	refute_output --partial "modprobe"
	# No /dev/fuse at all (an empty /dev).
	run unshare -m --propagation private bash -c 'mount -t tmpfs none /dev && shift && exec "$@"' _ _ "$FAKEHW" "${args[@]}"
	assert_failure 1
	assert_output --partial "opening /dev/fuse: No such file or directory: there is no FUSE device: load the fuse module (modprobe fuse)"
	is_mounted "$MNT" && fail "something is mounted at $MNT"
	true
}

@test "a --node that no section matches is an error unless --allow-empty" {
	printf 'nodes:\n  - name: worker-1\n    devices:\n      - {count: 1, profile: L4}\n' >"$BATS_TEST_TMPDIR/one.yaml"
	run "$FAKEHW" --config "$BATS_TEST_TMPDIR/one.yaml" --mount "$MNT" --node worker-2 --foreground
	assert_failure 1
	assert_output --partial "one.yaml: no nodes entry matches node \"worker-2\" and there is no defaults section; check --node (or NODE_NAME), or pass --allow-empty"
	run is_mounted "$MNT"
	assert_failure
	fakehw_start --config "$BATS_TEST_TMPDIR/one.yaml" --node worker-2 --allow-empty
	run ls -A "$MNT/devices"
	assert_success
	assert_output ""
	# A reload that loses the node's section keeps the inventory, unless allowed.
	fakehw_stop
	fakehw_start --config "$BATS_TEST_TMPDIR/one.yaml" --node worker-1
	sed -i 's/worker-1/worker-3/' "$BATS_TEST_TMPDIR/one.yaml"
	kill -HUP "$FAKEHW_PID"
	wait_until 50 grep -q "reload failed, keeping the current inventory: .*no nodes entry matches node \"worker-1\"" "$LOG"
	run ls "$MNT/devices"
	assert_output "gpu-0"
}

@test "SIGTERM and SIGINT unmount cleanly" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n
	# An open, polled generation fd does not hold the daemon up.
	/usr/bin/python3 "$POLLWAIT" wait "$MNT/generation" 30 "$BATS_TEST_TMPDIR/ready" \
		>/dev/null 2>&1 &
	waiter=$!
	wait_until 50 test -e "$BATS_TEST_TMPDIR/ready"
	fakehw_stop TERM
	assert_equal "$FAKEHW_STATUS" 0
	run is_mounted "$MNT"
	assert_failure
	grep -q "unmounted $MNT" "$LOG"
	kill "$waiter" 2>/dev/null || true
	wait "$waiter" 2>/dev/null || true

	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n
	fakehw_stop INT
	assert_equal "$FAKEHW_STATUS" 0
	run is_mounted "$MNT"
	assert_failure
}

@test "device nodes are null devices, named by minor, removed on exit" {
	[[ $(id -u) == 0 ]] || skip "mknod needs CAP_MKNOD"
	fakehw_start --config "$CONFIGS/good-cluster.yaml" --node kind-worker --dev-dir "$DEV"
	run ls "$DEV"
	assert_output "$(printf 'fakegpu%s\n' 0 1 2 3 4)"
	assert_equal "$(stat -c '%F %t:%T %a' "$DEV/fakegpu4")" "character special file 1:3 666"
	assert_equal "$(attr big-0 devicePath)" "$DEV/fakegpu4"
	echo discarded >"$DEV/fakegpu4"
	assert_equal "$(wc -c <"$DEV/fakegpu4")" 0
	fakehw_stop
	assert_equal "$FAKEHW_STATUS" 0
	assert_equal "$(ls -A "$DEV")" ""
}

@test "a stale mount is reported, and cleared with --clear-stale" {
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n --dev-dir "$DEV"
	fakehw_stop KILL
	run stat "$MNT"
	assert_failure
	assert_output --partial "Transport endpoint is not connected"

	run "$FAKEHW" --config "$CONFIGS/bats-small.yaml" --mount "$MNT" --node n --foreground
	assert_failure 1
	assert_output --partial "mount point $MNT: a stale FUSE mount is left there"
	assert_output --partial "fusermount3 -u -z $MNT"
	assert_output --partial "--clear-stale"

	# Device nodes left by the crash are taken over, not refused.
	fakehw_start --config "$CONFIGS/bats-small.yaml" --node n --dev-dir "$DEV" --clear-stale
	assert_equal "$(attr gpu-0 productName)" "NVIDIA H100 80GB HBM3"
	grep -q "clearing a stale FUSE mount" "$LOG"

	# A live mount is another fakehw: refused, and left alone.
	run "$FAKEHW" --config "$CONFIGS/bats-small.yaml" --mount "$MNT" --node n --foreground
	assert_failure 1
	assert_output --partial "already has a FUSE filesystem mounted"
	assert_equal "$(cat "$MNT/node")" n
	fakehw_stop
	assert_equal "$(ls -A "$DEV")" ""
}

@test "SIGHUP reloads: devices come and go, health of unchanged ones stays" {
	cfg=$BATS_TEST_TMPDIR/fakehw.yaml
	cat >"$cfg" <<-EOF
		defaults:
		  devices:
		    - count: 3
		      profile: L4
	EOF
	fakehw_start --config "$cfg" --node n --dev-dir "$DEV"
	echo "unhealthy XID 79" >"$MNT/devices/gpu-0/health"
	assert_equal "$(cat "$MNT/generation")" 2

	cat >"$cfg" <<-EOF
		defaults:
		  devices:
		    - count: 2
		      profile: L4
		    - name: big-0
		      profile: B200
	EOF
	kill -HUP "$FAKEHW_PID"
	wait_until 50 test -d "$MNT/devices/big-0"
	assert_equal "$(cat "$MNT/generation")" 3
	assert_equal "$(attr big-0 productName)" "NVIDIA B200"
	run ls "$MNT/devices"
	assert_output "$(printf 'big-0\ngpu-0\ngpu-1')"
	assert_equal "$(attr gpu-0 health)" unhealthy
	assert_equal "$(attr gpu-0 healthReason)" "XID 79"
	[[ -c $DEV/fakegpu2 ]]
	run diff -u <(expected_snapshot) "$MNT/snapshot"
	assert_success
	assert_equal "$(grep -c '^device ' "$MNT/snapshot")" 3

	# A bad config on reload is logged; the old inventory stays.
	echo "defaults: {devices: [{count: -1, profile: L4}]}" >"$cfg"
	kill -HUP "$FAKEHW_PID"
	wait_until 50 grep -q "reload failed, keeping the current inventory" "$LOG"
	assert_equal "$(cat "$MNT/generation")" 3
	assert_equal "$(attr big-0 productName)" "NVIDIA B200"

	cat >"$cfg" <<-EOF
		defaults:
		  devices:
		    - count: 1
		      profile: L4
	EOF
	kill -HUP "$FAKEHW_PID"
	wait_until 50 test ! -e "$MNT/devices/gpu-1"
	assert_equal "$(cat "$MNT/generation")" 4
	wait_until 50 test ! -e "$DEV/fakegpu1"
	run ls "$DEV"
	assert_output fakegpu0
}

@test "without --foreground it returns once mounted and exits on unmount" {
	run "$FAKEHW" --config "$CONFIGS/bats-small.yaml" --mount "$MNT" --node n --dev-dir "$DEV"
	assert_success
	assert_equal "$(cat "$MNT/node")" n
	[[ -c $DEV/fakegpu1 ]]
	fusermount3 -u "$MNT"
	# The daemon notices the unmount, removes its device nodes and exits.
	wait_until 50 test ! -e "$DEV/fakegpu1"
	run is_mounted "$MNT"
	assert_failure
}

# expected_snapshot: the snapshot as the files of $MNT say it must be.
expected_snapshot() {
	local d dev a n=0
	printf 'generation %s\nnode %s\n' "$(cat "$MNT/generation")" "$(cat "$MNT/node")"
	# Devices come in index order.
	for d in "$MNT"/devices/*; do
		printf '%s %s\n' "$(attr "${d##*/}" index)" "${d##*/}"
	done | sort -n | while read -r _ dev; do
		printf 'device %s\n' "$dev"
		for a in name index uuid productName architecture brand memory computeCapability \
			driverVersion cudaDriverVersion pciBusID pcieRoot numaNode minor devicePath health \
			healthReason healthSince attach attachFailure attachDelayMs virtual migMode parent migProfile migPlacement memorySharing \
			migProfileId multiprocessors copyEngines decoders encoders jpegEngines ofaEngines xid vfio iommuGroup \
			vfioDevicePath pciDeviceId pciDeviceName; do
			printf '%s %s\n' "$a" "$(attr "$dev" "$a")"
		done
	done
	n=$(find "$MNT/devices" -mindepth 1 -maxdepth 1 | wc -l)
	printf 'end %s\n' "$n"
}

# walk_mirror DIR: a plain directory whose node, generation and devices are
# symlinks into $MNT and which has no snapshot, so readers walk the FUSE files.
walk_mirror() {
	mkdir -p "$1"
	ln -s "$MNT/node" "$1/node"
	ln -s "$MNT/generation" "$1/generation"
	ln -s "$MNT/devices" "$1/devices"
}

@test "snapshot holds the whole tree as one generation; readers get the same devices from it" {
	fakehw_start --config "$CONFIGS/good-cluster.yaml" --node kind-worker
	run ls "$MNT"
	assert_output "$(printf 'devices\ngeneration\nnode\nsnapshot')"
	# Like a /proc file: size 0 in stat, read to EOF.
	assert_equal "$(stat -c '%a %s' "$MNT/snapshot")" "444 0"
	echo "unhealthy XID 79:  two  spaces " >"$MNT/devices/gpu-1/health"
	assert_equal "$(cat "$MNT/generation")" 2
	cat "$MNT/snapshot" >"$BATS_TEST_TMPDIR/snapshot"
	expected_snapshot >"$BATS_TEST_TMPDIR/expected"
	run diff -u "$BATS_TEST_TMPDIR/expected" "$BATS_TEST_TMPDIR/snapshot"
	assert_success
	run head -n 4 "$BATS_TEST_TMPDIR/snapshot"
	assert_output "$(printf 'generation 2\nnode kind-worker\ndevice gpu-0\nname gpu-0')"
	grep -qx "healthReason XID 79:  two  spaces " "$BATS_TEST_TMPDIR/snapshot"
	grep -qx "devicePath " "$BATS_TEST_TMPDIR/snapshot"
	assert_equal "$(tail -n 1 "$BATS_TEST_TMPDIR/snapshot")" "end 5"
	# Reading it is no change, and it cannot be written.
	cat "$MNT/snapshot" "$MNT/snapshot" >/dev/null
	assert_equal "$(cat "$MNT/generation")" 2
	run bash -c "echo x >'$MNT/snapshot'"
	assert_failure
	assert_output --partial "Permission denied"

	# fakehw_tree_list gives the same devices from the snapshot as from the files.
	walk_mirror "$BATS_TEST_TMPDIR/walk"
	"$TREE_DUMP" "$MNT" >"$BATS_TEST_TMPDIR/from-snapshot"
	"$TREE_DUMP" "$BATS_TEST_TMPDIR/walk" >"$BATS_TEST_TMPDIR/from-files"
	run diff -u "$BATS_TEST_TMPDIR/from-files" "$BATS_TEST_TMPDIR/from-snapshot"
	assert_success
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/from-snapshot")" $((5 * 22))
	grep -qx "gpu-1 healthReason XID 79:  two  spaces " "$BATS_TEST_TMPDIR/from-snapshot"
	grep -qx "gpu-1 devicePath " "$BATS_TEST_TMPDIR/from-snapshot"
}

@test "snapshot with device nodes reads the same as the files" {
	[[ $(id -u) == 0 ]] || skip "mknod needs CAP_MKNOD"
	fakehw_start --config "$CONFIGS/good-cluster.yaml" --node kind-worker --dev-dir "$DEV"
	"$FAKEHW" flip --mount "$MNT" all unhealthy --reason "maintenance window 3"
	run diff -u <(expected_snapshot) "$MNT/snapshot"
	assert_success
	grep -qx "devicePath $DEV/fakegpu4" "$MNT/snapshot"
	walk_mirror "$BATS_TEST_TMPDIR/walk"
	run diff -u <("$TREE_DUMP" "$BATS_TEST_TMPDIR/walk") <("$TREE_DUMP" "$MNT")
	assert_success
	assert_equal "$(grep -c "healthReason maintenance window 3$" <("$TREE_DUMP" "$MNT"))" 5
}

@test "snapshot is one generation under concurrent flips, read in small pieces" {
	cfg=$BATS_TEST_TMPDIR/fakehw.yaml
	printf 'defaults:\n  devices:\n    - count: 8\n      profile: L4\n' >"$cfg"
	fakehw_start --config "$cfg" --node n
	run /usr/bin/python3 "$SNAPSHOT_CHECK" "$MNT" 400 97
	assert_success
	read -r reads generations <<<"$output"
	echo "$reads snapshots showed $generations generations"
	# The reads really overlapped the flips.
	((generations > 2))
	assert_equal "$(cat "$MNT/generation")" 401
}

@test "4096 devices are served" {
	fakehw_start --config "$CONFIGS/good-4096.yaml" --node bench
	assert_equal "$(find "$MNT/devices" -mindepth 1 -maxdepth 1 | wc -l)" 4096
	assert_equal "$(attr gpu-4095 pciBusID)" 007f:f9:00.0
	assert_equal "$(attr gpu-4095 productName)" "NVIDIA B200"
	echo unhealthy >"$MNT/devices/gpu-4095/health"
	assert_equal "$(cat "$MNT/generation")" 2
	# The snapshot of all of them reads fully, in one open.
	cat "$MNT/snapshot" >"$BATS_TEST_TMPDIR/snapshot"
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/snapshot")" $((2 + 4096 * 41 + 1))
	assert_equal "$(head -n 1 "$BATS_TEST_TMPDIR/snapshot")" "generation 2"
	assert_equal "$(tail -n 1 "$BATS_TEST_TMPDIR/snapshot")" "end 4096"
	"$TREE_DUMP" "$MNT" >"$BATS_TEST_TMPDIR/dump"
	assert_equal "$(wc -l <"$BATS_TEST_TMPDIR/dump")" $((4096 * 22))
	grep -qx "gpu-4095 health unhealthy" "$BATS_TEST_TMPDIR/dump"
	grep -qx "gpu-4094 health healthy" "$BATS_TEST_TMPDIR/dump"
	"$TREE_DUMP" --time 5 "$MNT"
	assert_equal "$(cat "$MNT/generation")" 2
}

@test "check and profiles print without mounting" {
	run "$FAKEHW" check --config "$CONFIGS/good-cluster.yaml" --node kind-worker
	assert_success
	assert_line --index 0 'node kind-worker: 5 devices from nodes[0] (kind-worker), UUID seed "kind-worker"'
	assert_output --partial "big-0"
	assert_output --partial "flip: gpu-1 -> unhealthy after 30000ms for 60000ms"
	run "$FAKEHW" profiles
	assert_success
	for p in A100-SXM4-40GB A100-SXM4-80GB H100-SXM5-80GB H200 GB200 B200 L40S L4 T4; do
		assert_output --partial "$p "
	done
	assert_output --partial "Tesla T4"
}
