# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the fakehw bats suite: start and stop the daemon on a
# temp mount, wait with bounded loops, clean up whatever a test left.
# shellcheck shell=bash
# The variables set here are read by the .bats files that load this one.
# shellcheck disable=SC2034

bats_load_library bats-support
bats_load_library bats-assert

FAKEHW=${FAKEHW_BIN:?FAKEHW_BIN must point at the build/bin directory}/fakehw
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONFIGS=$TESTS_DIR/configs
POLLWAIT=$TESTS_DIR/pollwait.py
SNAPSHOT_CHECK=$TESTS_DIR/snapshot_check.py
# What fakehw_tree_list reads from a tree (fakehw/tests/tree_dump.c).
TREE_DUMP=$FAKEHW_BIN/../test-bin/fakehw-tree-dump

# setup_dirs: per-test mount point, device node dir and log.
setup_dirs() {
	MNT=$BATS_TEST_TMPDIR/mnt
	DEV=$BATS_TEST_TMPDIR/dev
	LOG=$BATS_TEST_TMPDIR/fakehw.log
	FAKEHW_PID=
	mkdir -p "$MNT"
}

# wait_until TRIES CMD...: runs CMD every 0.1 s until it succeeds, at most
# TRIES times.
wait_until() {
	local tries=$1
	shift
	local i
	for ((i = 0; i < tries; i++)); do
		if "$@"; then
			return 0
		fi
		sleep 0.1
	done
	echo "gave up after $tries tries: $*" >&2
	return 1
}

is_mounted() {
	mountpoint -q "$1" 2>/dev/null
}

tree_ready() {
	[[ -r $MNT/generation ]] && is_mounted "$MNT"
}

# fakehw_start [ARGS...]: runs the daemon in the foreground (in the
# background of the test) on $MNT and waits until the tree is served.
fakehw_start() {
	"$FAKEHW" --mount "$MNT" --foreground -v 2 "$@" 2>>"$LOG" &
	FAKEHW_PID=$!
	local i
	for ((i = 0; i < 100; i++)); do
		if tree_ready; then
			return 0
		fi
		if process_gone "$FAKEHW_PID"; then
			break
		fi
		sleep 0.1
	done
	echo "fakehw did not come up; log:" >&2
	cat "$LOG" >&2
	return 1
}

process_gone() {
	! kill -0 "$1" 2>/dev/null
}

# fakehw_stop [SIGNAL]: signals the daemon, waits for it, sets
# FAKEHW_STATUS to its exit status.
fakehw_stop() {
	local sig=${1:-TERM}
	[[ -n $FAKEHW_PID ]] || return 0
	kill "-$sig" "$FAKEHW_PID"
	wait_until 100 process_gone "$FAKEHW_PID"
	FAKEHW_STATUS=0
	wait "$FAKEHW_PID" || FAKEHW_STATUS=$?
	FAKEHW_PID=
}

# teardown_fakehw: never leave a daemon or a mount behind, whatever failed.
teardown_fakehw() {
	if [[ -n ${FAKEHW_PID:-} ]]; then
		kill -KILL "$FAKEHW_PID" 2>/dev/null || true
		wait "$FAKEHW_PID" 2>/dev/null || true
	fi
	if is_mounted "$MNT" || ! stat "$MNT" >/dev/null 2>&1; then
		fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true
	fi
	# Sanitizer builds (make check) report into the daemon's log.
	if [[ -f $LOG ]] && grep -qE "ERROR: [A-Za-z]+Sanitizer|runtime error:" "$LOG"; then
		echo "sanitizer report in the fakehw log:" >&2
		cat "$LOG" >&2
		return 1
	fi
}

# attr DEVICE FILE: prints one attribute of a device.
attr() {
	cat "$MNT/devices/$1/$2"
}

# attr_is DEVICE FILE VALUE: whether the attribute reads VALUE (for
# wait_until).
attr_is() {
	[[ $(attr "$1" "$2") == "$3" ]]
}

# The suites' own setup and teardown: a temp mount per test, skipped where
# there is no /dev/fuse.  A suite that needs more defines its own after
# loading this file.
setup() {
	[[ -c /dev/fuse ]] || skip "no /dev/fuse"
	setup_dirs
}

teardown() {
	teardown_fakehw
}
