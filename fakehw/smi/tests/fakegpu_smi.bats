#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# fakegpu-smi against plain-directory fakehw trees: exact output of -L, -q
# and the CSV formats, numbering, FAKEHW_VISIBLE_DEVICES, -i, exit codes,
# and that the binary is static.
# shellcheck disable=SC2154 # $stderr is set by bats' run --separate-stderr

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
load tree_helpers

U0=GPU-4a1f5c2e-8d3b-4f6a-9e7c-1b2d3e4f5a60
U1=GPU-0b6e2d41-7c9a-4e35-8f12-3a4b5c6d7e81
U2=GPU-9e8d7c6b-5a49-4382-b716-0f1e2d3c4b52

setup() {
	SMI=${FAKEHW_BIN:?FAKEHW_BIN must name the build bin directory}/fakegpu-smi
	ROOT=$BATS_TEST_TMPDIR/fakehw
	unset FAKEHW_VISIBLE_DEVICES FAKEHW_ROOT
	make_tree "$ROOT"
	# fakehw indexes 3, 5, 7, as a container given three of a node's GPUs
	# sees them; directory names sort differently on purpose.
	make_device "$ROOT" gpu-7 7 "$U2" "NVIDIA H100 80GB HBM3" 85520809984 0000:af:00.0
	make_device "$ROOT" gpu-3 3 "$U0"
	make_device "$ROOT" gpu-5 5 "$U1"
}

@test "-L lists the GPUs numbered 0..n-1 in fakehw index order" {
	run "$SMI" --root "$ROOT" -L
	assert_success
	assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U0)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: $U1)
GPU 2: NVIDIA H100 80GB HBM3 (UUID: $U2)"
	run "$SMI" --root "$ROOT" --list-gpus
	assert_success
	assert_line --index 2 "GPU 2: NVIDIA H100 80GB HBM3 (UUID: $U2)"
}

@test "without flags it lists like -L" {
	run "$SMI" --root "$ROOT"
	assert_success
	assert_line --index 0 "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U0)"
	assert_equal "${#lines[@]}" 3
}

@test "--format=csv prints nvidia-smi's header and MiB units" {
	run "$SMI" --root "$ROOT" --query-gpu=index,uuid,name,memory.total,health --format=csv
	assert_success
	assert_output "index, uuid, name, memory.total [MiB], health
0, $U0, NVIDIA A100-SXM4-80GB, 81920 MiB, healthy
1, $U1, NVIDIA A100-SXM4-80GB, 81920 MiB, healthy
2, $U2, NVIDIA H100 80GB HBM3, 81559 MiB, healthy"
}

@test "--format=csv,noheader drops the header; nounits drops the units" {
	run "$SMI" --root "$ROOT" --query-gpu=index,memory.total --format=csv,noheader
	assert_success
	assert_output "0, 81920 MiB
1, 81920 MiB
2, 81559 MiB"
	run "$SMI" --root "$ROOT" --query-gpu=index,memory.total --format=csv,noheader,nounits
	assert_success
	assert_output "0, 81920
1, 81920
2, 81559"
	# The header keeps its unit, as nvidia-smi's does.
	run "$SMI" --root "$ROOT" --query-gpu=memory.total --format="csv, nounits"
	assert_success
	assert_output "memory.total [MiB]
81920
81920
81559"
}

@test "every field, aliases, N/A values and a flipped device" {
	echo unhealthy >"$ROOT/devices/gpu-7/health"
	echo "XID 79: fallen off the bus" >"$ROOT/devices/gpu-7/healthReason"
	echo -1 >"$ROOT/devices/gpu-7/numaNode"
	echo >"$ROOT/devices/gpu-7/computeCapability"
	run "$SMI" --root "$ROOT" -i 2 --format=csv \
		--query-gpu="index, count, gpu_uuid, gpu_name, pci.bus_id, gpu_bus_id, driver_version, compute_cap, minor_number, numa_node, numa, health, health.reason"
	assert_success
	assert_output "index, count, uuid, name, pci.bus_id, pci.bus_id, driver_version, compute_cap, minor_number, numa_node, numa_node, health, health.reason
2, 3, $U2, NVIDIA H100 80GB HBM3, 00000000:AF:00.0, 00000000:AF:00.0, 550.127.05, [N/A], 7, [N/A], [N/A], unhealthy, XID 79: fallen off the bus"
	run "$SMI" --root "$ROOT" -i 0 --format=csv,noheader --query-gpu=compute_cap,numa_node,health.reason
	assert_success
	assert_output "8.0, 0, [N/A]"
}

@test "no devices: 'No devices were found' and exit 6" {
	rm -rf "$ROOT"/devices/*
	run "$SMI" --root "$ROOT" -L
	assert_failure 6
	assert_output "No devices were found"
	run "$SMI" --root "$ROOT" --query-gpu=index --format=csv
	assert_failure 6
	assert_output "No devices were found"
	# A root with no devices directory: a container given no fakehw device.
	mkdir "$BATS_TEST_TMPDIR/empty-root"
	run "$SMI" --root "$BATS_TEST_TMPDIR/empty-root"
	assert_failure 6
	assert_output "No devices were found"
}

# no_default_tree CMD...: CMD with an empty tmpfs over /var/run (a private
# mount namespace), so the default root holds nothing whatever this
# machine runs.
no_default_tree() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	unshare -m --propagation private bash -c 'mount -t tmpfs none "$(readlink -f /var/run)" && exec "$@"' _ "$@"
}

@test "nothing under the default root: where it looked and how to look elsewhere, on stderr" {
	if [[ $(id -u) != 0 ]] || ! command -v unshare >/dev/null; then
		skip "needs root and unshare"
	fi
	local hint="fakegpu-smi: no fakehw devices under /var/run/fakehw, the default root: give the tree's root with --root DIR or FAKEHW_ROOT (on a node, fakehw's --mount directory)"
	run --separate-stderr no_default_tree "$SMI" -L
	assert_failure 6
	assert_output "No devices were found"
	assert_equal "$stderr" "$hint"
	# An empty devices directory there says the same.
	run --separate-stderr no_default_tree bash -c 'mkdir -p /var/run/fakehw/devices && exec "$@"' _ "$SMI" --query-gpu=index --format=csv
	assert_failure 6
	assert_output "No devices were found"
	assert_equal "$stderr" "$hint"
	# A root that was named, or devices hidden by FAKEHW_VISIBLE_DEVICES:
	# only nvidia-smi's line.
	mkdir "$BATS_TEST_TMPDIR/empty-root"
	run --separate-stderr "$SMI" --root "$BATS_TEST_TMPDIR/empty-root"
	assert_failure 6
	assert_equal "$stderr" ""
	FAKEHW_VISIBLE_DEVICES=none run --separate-stderr "$SMI" --root "$ROOT"
	assert_failure 6
	assert_equal "$stderr" ""
}

@test "a --root or FAKEHW_ROOT that is no directory is named, exit 12" {
	run "$SMI" --root /does/not/exist -L
	assert_failure 12
	assert_output "fakegpu-smi: the fakehw root /does/not/exist (--root or FAKEHW_ROOT) does not exist"
	FAKEHW_ROOT=$BATS_TEST_TMPDIR/nothing-here run "$SMI" -L
	assert_failure 12
	assert_output --partial "the fakehw root $BATS_TEST_TMPDIR/nothing-here (--root or FAKEHW_ROOT) does not exist"
	touch "$BATS_TEST_TMPDIR/a-file"
	run "$SMI" --root "$BATS_TEST_TMPDIR/a-file" -L
	assert_failure 12
	assert_output --partial "a-file (--root or FAKEHW_ROOT) is not a directory"
}

@test "a container's view: only the device directories it was given" {
	# The CDI spec bind-mounts <root>/devices/<name> of each allocated device;
	# node and generation are not there.
	local c=$BATS_TEST_TMPDIR/container
	mkdir -p "$c/devices"
	cp -r "$ROOT/devices/gpu-7" "$ROOT/devices/gpu-5" "$c/devices/"
	FAKEHW_ROOT=$c run "$SMI"
	assert_success
	assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U1)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: $U2)"
}

@test "FAKEHW_VISIBLE_DEVICES lists only those GPUs, renumbered" {
	FAKEHW_VISIBLE_DEVICES="$U2,$U1" run "$SMI" --root "$ROOT" -L
	assert_success
	assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U1)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: $U2)"
	FAKEHW_VISIBLE_DEVICES=" $U2 " run "$SMI" --root "$ROOT" --query-gpu=index,uuid,count --format=csv,noheader
	assert_success
	assert_output "0, $U2, 1"
	FAKEHW_VISIBLE_DEVICES=all run "$SMI" --root "$ROOT" -L
	assert_success
	assert_equal "${#lines[@]}" 3
	FAKEHW_VISIBLE_DEVICES=none run "$SMI" --root "$ROOT" -L
	assert_failure 6
	assert_output "No devices were found"
	FAKEHW_VISIBLE_DEVICES='' run "$SMI" --root "$ROOT" -L
	assert_failure 6
}

@test "FAKEHW_DEVICE_<i>_UUID variables (two claims in one container) win over FAKEHW_VISIBLE_DEVICES" {
	# Two claims' CDI specs each set FAKEHW_VISIBLE_DEVICES; the runtime keeps
	# the last one, but every device keeps its own FAKEHW_DEVICE_<i>_UUID.
	FAKEHW_VISIBLE_DEVICES="$U1" FAKEHW_DEVICE_3_UUID="$U0" FAKEHW_DEVICE_5_UUID="$U1" \
		run "$SMI" --root "$ROOT" -L
	assert_success
	assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U0)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: $U1)"
	FAKEHW_DEVICE_7_UUID="$U2" run "$SMI" --root "$ROOT" -L
	assert_output "GPU 0: NVIDIA H100 80GB HBM3 (UUID: $U2)"
	# Look-alike names do not count.
	FAKEHW_DEVICE_X_UUID="$U2" FAKEHW_DEVICE_7_UUIDS="$U2" run "$SMI" --root "$ROOT" -L
	assert_line --index 2 "GPU 2: NVIDIA H100 80GB HBM3 (UUID: $U2)"
}

@test "a share of a GPU shared by memory: memory.total is the memory it was granted" {
	FAKEHW_DEVICE_5_UUID="$U1" FAKEHW_DEVICE_5_MEMORY=21474836480 \
		run "$SMI" --root "$ROOT" --query-gpu=uuid,memory.total --format=csv,noheader
	assert_success
	assert_output "$U1, 20480 MiB"
	FAKEHW_DEVICE_5_UUID="$U1" FAKEHW_DEVICE_5_MEMORY=lots \
		run --separate-stderr "$SMI" --root "$ROOT" --query-gpu=memory.total --format=csv,noheader
	assert_success
	assert_output "81920 MiB"
	assert_equal "$stderr" 'fakegpu-smi: FAKEHW_DEVICE_5_MEMORY="lots" is not a byte count; ignored'
}

@test "-L shows a share's shareID and granted memory under its GPU; memory.total agrees" {
	FAKEHW_DEVICE_5_UUID="$U1" FAKEHW_DEVICE_5_MEMORY=21474836480 FAKEHW_DEVICE_5_SHARE_ID=3f9c2a7e-share \
		run "$SMI" --root "$ROOT" -L
	assert_success
	assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U1)
  Share 3f9c2a7e-share: 20480 MiB"
	local listed queried
	listed=$(sed -n 's/^  Share [^ ]*: \([0-9]*\) MiB$/\1/p' <<<"$output")
	FAKEHW_DEVICE_5_UUID="$U1" FAKEHW_DEVICE_5_MEMORY=21474836480 FAKEHW_DEVICE_5_SHARE_ID=3f9c2a7e-share \
		run "$SMI" --root "$ROOT" --query-gpu=memory.total --format=csv,noheader,nounits
	assert_success
	queried=$output
	assert_equal "$listed" "$queried"
	# Two GPUs, one shared: the other has no share line.
	FAKEHW_DEVICE_3_UUID="$U0" FAKEHW_DEVICE_5_UUID="$U1" FAKEHW_DEVICE_5_MEMORY=1073741824 \
		run --separate-stderr "$SMI" --root "$ROOT" -L
	assert_success
	assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U0)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: $U1)
  Share -: 1024 MiB"
	assert_equal "$stderr" ""
	# A share id that cannot be printed on one line is left out with a warning.
	FAKEHW_DEVICE_5_UUID="$U1" FAKEHW_DEVICE_5_MEMORY=1073741824 FAKEHW_DEVICE_5_SHARE_ID="a b" \
		run --separate-stderr "$SMI" --root "$ROOT" -L
	assert_success
	assert_line --index 1 "  Share -: 1024 MiB"
	assert_equal "$stderr" 'fakegpu-smi: FAKEHW_DEVICE_5_SHARE_ID="a b" is not a share id (1 to 64 printable characters); ignored'
	# A malformed memory is no share at all.
	FAKEHW_DEVICE_5_UUID="$U1" FAKEHW_DEVICE_5_MEMORY=lots FAKEHW_DEVICE_5_SHARE_ID=s \
		run --separate-stderr "$SMI" --root "$ROOT" -L
	assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U1)"
}

@test "-L shows a share of a MIG partition under the partition; memory.total stays the GPU's" {
	local mig=MIG-1c2d3e4f-5a6b-5c7d-8e9f-0a1b2c3d4e5f
	make_device "$ROOT" gpu-5-mig-3g40gb-4 1005 "$mig" "NVIDIA A100-SXM4-80GB" 42949672960 0000:15:00.0
	echo gpu-5 >"$ROOT/devices/gpu-5-mig-3g40gb-4/parent"
	echo 3g.40gb >"$ROOT/devices/gpu-5-mig-3g40gb-4/migProfile"
	echo 4:4 >"$ROOT/devices/gpu-5-mig-3g40gb-4/migPlacement"
	echo dynamic >"$ROOT/devices/gpu-5/migMode"
	FAKEHW_DEVICE_1005_UUID="$mig" FAKEHW_DEVICE_1005_MEMORY=10737418240 FAKEHW_DEVICE_1005_SHARE_ID=s1 \
		run "$SMI" --root "$ROOT" -L
	assert_success
	assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U1)
  MIG 3g.40gb     Device  0: (UUID: $mig)
    Share s1: 10240 MiB"
	FAKEHW_DEVICE_1005_UUID="$mig" FAKEHW_DEVICE_1005_MEMORY=10737418240 FAKEHW_DEVICE_1005_SHARE_ID=s1 \
		run "$SMI" --root "$ROOT" --query-gpu=memory.total --format=csv,noheader
	assert_output "81920 MiB"
}

@test "-L lists a GPU's MIG devices in fakehw index order (the config's), not by placement" {
	local m4=MIG-00000000-0000-5000-8000-000000000004 m0=MIG-00000000-0000-5000-8000-000000000000 d
	# The config put the instance at placement 4 first: it has the lower index.
	make_device "$ROOT" gpu-5-mig-3g40gb-4 1005 "$m4" "NVIDIA A100-SXM4-80GB" 42949672960 0000:15:00.0
	make_device "$ROOT" gpu-5-mig-3g40gb-0 1006 "$m0" "NVIDIA A100-SXM4-80GB" 42949672960 0000:15:00.0
	for d in gpu-5-mig-3g40gb-4:4 gpu-5-mig-3g40gb-0:0; do
		echo gpu-5 >"$ROOT/devices/${d%:*}/parent"
		echo 3g.40gb >"$ROOT/devices/${d%:*}/migProfile"
		echo "${d#*:}:4" >"$ROOT/devices/${d%:*}/migPlacement"
	done
	echo static >"$ROOT/devices/gpu-5/migMode"
	run "$SMI" --root "$ROOT" -L -i 1
	assert_success
	assert_output "GPU 1: NVIDIA A100-SXM4-80GB (UUID: $U1)
  MIG 3g.40gb     Device  0: (UUID: $m4)
  MIG 3g.40gb     Device  1: (UUID: $m0)"
	run "$SMI" --root "$ROOT" -q -i 1
	assert_line "        MIG Device 0                      : 3g.40gb (UUID: $m4)"
	assert_line "        MIG Device 1                      : 3g.40gb (UUID: $m0)"
}

@test "FAKEHW_VISIBLE_DEVICES naming an absent GPU warns on stderr" {
	FAKEHW_VISIBLE_DEVICES="GPU-00000000-dead-beef-0000-000000000000,$U0" \
		run --separate-stderr "$SMI" --root "$ROOT" -L
	assert_success
	assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U0)"
	[[ $stderr == "fakegpu-smi: FAKEHW_VISIBLE_DEVICES names GPU-00000000-dead-beef-0000-000000000000, which is not in the fakehw tree" ]]
	FAKEHW_VISIBLE_DEVICES="GPU-00000000-dead-beef-0000-000000000000" run "$SMI" --root "$ROOT" -L
	assert_failure 6
}

@test "-i/--id picks GPUs by index, UUID or PCI bus id" {
	run "$SMI" --root "$ROOT" -i 1 -L
	assert_success
	assert_output "GPU 1: NVIDIA A100-SXM4-80GB (UUID: $U1)"
	run "$SMI" --root "$ROOT" --id="$U2,0" --query-gpu=index --format=csv,noheader
	assert_success
	assert_output "0
2"
	run "$SMI" --root "$ROOT" -i 00000000:AF:00.0 --query-gpu=uuid --format=csv,noheader
	assert_success
	assert_output "$U2"
	run --separate-stderr "$SMI" --root "$ROOT" -i 3 -L
	assert_failure 6
	assert_output "No devices were found"
	[[ $stderr == *'"3" matches no GPU'* ]]
}

@test "FAKEHW_ROOT sets the root; --root wins over it" {
	FAKEHW_ROOT=$ROOT run "$SMI" --query-gpu=count --format=csv,noheader -i 0
	assert_success
	assert_output "3"
	FAKEHW_ROOT=/nonexistent run "$SMI" --root "$ROOT" --query-gpu=count --format=csv,noheader -i 0
	assert_success
	assert_output "3"
}

@test "the fields scripts ask nvidia-smi for most: values, zeros and [N/A]" {
	echo static >"$ROOT/devices/gpu-7/migMode"
	echo off >"$ROOT/devices/gpu-5/migMode"
	run "$SMI" --root "$ROOT" --format=csv \
		--query-gpu=name,uuid,index,pci.bus_id,pci.domain,pci.bus,pci.device,driver_version,memory.total,memory.reserved,memory.used,memory.free
	assert_success
	assert_output "name, uuid, index, pci.bus_id, pci.domain, pci.bus, pci.device, driver_version, memory.total [MiB], memory.reserved [MiB], memory.used [MiB], memory.free [MiB]
NVIDIA A100-SXM4-80GB, $U0, 0, 00000000:13:00.0, 0x0000, 0x13, 0x00, 550.127.05, 81920 MiB, 0 MiB, 0 MiB, 81920 MiB
NVIDIA A100-SXM4-80GB, $U1, 1, 00000000:15:00.0, 0x0000, 0x15, 0x00, 550.127.05, 81920 MiB, 0 MiB, 0 MiB, 81920 MiB
NVIDIA H100 80GB HBM3, $U2, 2, 00000000:AF:00.0, 0x0000, 0xAF, 0x00, 550.127.05, 81559 MiB, 0 MiB, 0 MiB, 81559 MiB"
	# Values fakehw has no source for are nvidia-smi's [N/A], with or
	# without units; a tree without migMode (gpu-3) has no MIG mode.
	run "$SMI" --root "$ROOT" --format=csv \
		--query-gpu=temperature.gpu,utilization.gpu,utilization.memory,mig.mode.current,mig.mode.pending,serial,gpu_serial,compute_cap,power.draw,power.limit
	assert_success
	assert_output "temperature.gpu, utilization.gpu [%], utilization.memory [%], mig.mode.current, mig.mode.pending, serial, serial, compute_cap, power.draw [W], power.limit [W]
[N/A], 0 %, 0 %, [N/A], [N/A], [N/A], [N/A], 8.0, [N/A], [N/A]
[N/A], 0 %, 0 %, Disabled, Disabled, [N/A], [N/A], 8.0, [N/A], [N/A]
[N/A], 0 %, 0 %, Enabled, Enabled, [N/A], [N/A], 8.0, [N/A], [N/A]"
	run "$SMI" --root "$ROOT" -i 2 --format=csv,noheader,nounits --query-gpu=memory.used,utilization.gpu,power.draw,temperature.gpu
	assert_success
	assert_output "0, 0, [N/A], [N/A]"
	# A share: total and free are the memory it was granted.
	FAKEHW_DEVICE_5_UUID="$U1" FAKEHW_DEVICE_5_MEMORY=21474836480 \
		run "$SMI" --root "$ROOT" --query-gpu=memory.total,memory.used,memory.free --format=csv,noheader
	assert_output "20480 MiB, 0 MiB, 20480 MiB"
	# timestamp: nvidia-smi's YYYY/MM/DD HH:MM:SS.msec, now.
	run "$SMI" --root "$ROOT" -i 0 --query-gpu=timestamp --format=csv,noheader
	assert_success
	assert_output --regexp '^[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}$'
	[[ ${output:0:10} == "$(date +%Y/%m/%d)" ]] || fail "timestamp $output is not today"
}

@test "an nvidia-smi field fakegpu-smi lacks is not supported; a name nvidia-smi lacks is not valid" {
	local f
	for f in fan.speed pstate clocks.sm ecc.errors.uncorrected.aggregate.total clocks_throttle_reasons.active; do
		run --separate-stderr "$SMI" --root "$ROOT" --query-gpu="index,$f" --format=csv
		assert_failure 2
		assert_output ""
		[[ $stderr == "fakegpu-smi: Field \"$f\" is not supported by fakegpu-smi (supported: timestamp, driver_version, count, name, "*", mig.mode.current, mig.mode.pending, minor_number, numa_node, health, health.reason)"* ]] ||
			fail "$f: $stderr"
	done
	for f in temperature.cpu ecc.errors.uncorrected.aggregate.bogus Name gpu_index; do
		run --separate-stderr "$SMI" --root "$ROOT" --query-gpu="index,$f" --format=csv
		assert_failure 2
		[[ $stderr == "fakegpu-smi: Field \"$f\" is not a valid field to query."* ]] || fail "$f: $stderr"
	done
	# Every field --help-query-gpu lists is accepted.
	local all
	all=$("$SMI" --help-query-gpu | sed -n 's/^  \([a-z][a-z0-9._]*\) .*/\1/p' | paste -sd, -)
	[[ $(tr -cd , <<<"$all" | wc -c) -ge 26 ]] || fail "fields listed: $all"
	run "$SMI" --root "$ROOT" --query-gpu="$all" --format=csv,noheader
	assert_success
	assert_equal "${#lines[@]}" 3
}

@test "-q prints nvidia-smi -q's report: its sections and order, N/A where fakehw has no value" {
	echo static >"$ROOT/devices/gpu-7/migMode"
	echo unhealthy >"$ROOT/devices/gpu-7/health"
	echo "XID 79: fallen off the bus" >"$ROOT/devices/gpu-7/healthReason"
	local mig=MIG-1c2d3e4f-5a6b-5c7d-8e9f-0a1b2c3d4e5f
	make_device "$ROOT" gpu-7-mig-3g40gb-4 1007 "$mig" "NVIDIA H100 80GB HBM3" 42949672960 0000:af:00.0
	echo gpu-7 >"$ROOT/devices/gpu-7-mig-3g40gb-4/parent"
	echo 3g.40gb >"$ROOT/devices/gpu-7-mig-3g40gb-4/migProfile"
	echo 4:4 >"$ROOT/devices/gpu-7-mig-3g40gb-4/migPlacement"
	run "$SMI" --root "$ROOT" -q -i 2
	assert_success
	assert_line --index 0 "==============NVSMI LOG=============="
	assert_line --index 1 --regexp '^Timestamp                                 : [A-Z][a-z]{2} [A-Z][a-z]{2} [ 1-3][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}$'
	# bats' lines drop empty ones: compare the text after the timestamp.
	assert_equal "$(sed '1,4d' <<<"$output")" "Driver Version                            : 550.127.05
CUDA Version                              : 12.4

Attached GPUs                             : 3
GPU 00000000:AF:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Product Brand                         : Nvidia
    Product Architecture                  : Ampere
    Display Mode                          : N/A
    Display Active                        : N/A
    Persistence Mode                      : N/A
    Addressing Mode                       : N/A
    MIG Mode
        Current                           : Enabled
        Pending                           : Enabled
    Accounting Mode                       : N/A
    Accounting Mode Buffer Size           : N/A
    Driver Model
        Current                           : N/A
        Pending                           : N/A
    Serial Number                         : N/A
    GPU UUID                              : $U2
    Minor Number                          : 7
    VBIOS Version                         : N/A
    MultiGPU Board                        : N/A
    Board ID                              : N/A
    Board Part Number                     : N/A
    GPU Part Number                       : N/A
    FRU Part Number                       : N/A
    Module ID                             : N/A
    GPU Operation Mode
        Current                           : N/A
        Pending                           : N/A
    GSP Firmware Version                  : N/A
    GPU Virtualization Mode
        Virtualization Mode               : N/A
        Host VGPU Mode                    : N/A
    PCI
        Bus                               : 0xAF
        Device                            : 0x00
        Domain                            : 0x0000
        Device Id                         : N/A
        Bus Id                            : 00000000:AF:00.0
        Sub System Id                     : N/A
    Fan Speed                             : N/A
    Performance State                     : N/A
    FB Memory Usage
        Total                             : 81559 MiB
        Reserved                          : 0 MiB
        Used                              : 0 MiB
        Free                              : 81559 MiB
    Compute Mode                          : N/A
    Utilization
        Gpu                               : 0 %
        Memory                            : 0 %
        Encoder                           : N/A
        Decoder                           : N/A
    ECC Mode
        Current                           : N/A
        Pending                           : N/A
    Temperature
        GPU Current Temp                  : N/A
    GPU Power Readings
        Power Draw                        : N/A
        Current Power Limit               : N/A
    Clocks
        Graphics                          : N/A
        SM                                : N/A
        Memory                            : N/A
    Processes                             : None
    fakehw
        Device                            : gpu-7
        Health                            : unhealthy
        Health Reason                     : XID 79: fallen off the bus
        NUMA Node                         : 0
        MIG Device 0                      : 3g.40gb (UUID: $mig)"
	# The text starts with an empty line and ends each GPU with one, as
	# nvidia-smi's does.
	[[ $("$SMI" --root "$ROOT" -q -i 2 | head -n 1) == "" ]] || fail "no empty first line"
	[[ $("$SMI" --root "$ROOT" -q -i 2 | tail -c 2 | od -An -c | tr -d ' ') == '\n\n' ]] || fail "no empty last line"
}

@test "-q and --query: every GPU, Attached GPUs counts the visible ones, a share, labels to column 42" {
	run "$SMI" --root "$ROOT" --query
	assert_success
	run grep -c '^GPU 00000000:' <<<"$output"
	assert_output 3
	# Every "label : value" line puts its colon after 42 columns of label.
	run bash -c '"$1" --root "$2" -q | grep " : " | grep -v "^.\{42\}: "' _ "$SMI" "$ROOT"
	assert_output ""
	FAKEHW_DEVICE_5_UUID="$U1" FAKEHW_DEVICE_5_MEMORY=21474836480 FAKEHW_DEVICE_5_SHARE_ID=s-1 \
		run "$SMI" --root "$ROOT" -q
	assert_success
	assert_line "Attached GPUs                             : 1"
	assert_line "        Total                             : 20480 MiB"
	assert_line "        Share                             : s-1: 20480 MiB"
	assert_line "    Product Architecture                  : Ampere"
	# A tree without brand or architecture, and a GPU without MIG mode.
	echo >"$ROOT/devices/gpu-3/brand"
	echo -1 >"$ROOT/devices/gpu-3/numaNode"
	run "$SMI" --root "$ROOT" -q -i 0
	assert_line "    Product Brand                         : N/A"
	assert_line "        NUMA Node                         : N/A"
	assert_line "        Health Reason                     : N/A"
	assert_line "        Current                           : N/A"
	assert_line "Attached GPUs                             : 3"
	# Nothing to show, and the flags it does not go with.
	FAKEHW_VISIBLE_DEVICES=none run "$SMI" --root "$ROOT" -q
	assert_failure 6
	assert_output "No devices were found"
	run --separate-stderr "$SMI" --root "$ROOT" -q -L
	assert_failure 2
	[[ $stderr == "fakegpu-smi: -L, -q and --query-gpu cannot be used together"* ]]
	run --separate-stderr "$SMI" --root "$ROOT" -q --query-gpu=index --format=csv
	assert_failure 2
	run --separate-stderr "$SMI" --root "$ROOT" -q --format=csv
	assert_failure 2
	[[ $stderr == *"--format only applies to --query-gpu"* ]]
}

@test "bad flags and values exit 2 with a message" {
	run --separate-stderr "$SMI" --root "$ROOT" --query-gpu=index,temperature.cpu --format=csv
	assert_failure 2
	[[ $stderr == *'Field "temperature.cpu" is not a valid field to query.'* ]]
	run --separate-stderr "$SMI" --root "$ROOT" --query-gpu=index --format=xml
	assert_failure 2
	[[ $stderr == *'"xml" is not supported'* ]]
	run --separate-stderr "$SMI" --root "$ROOT" --query-gpu=index
	assert_failure 2
	[[ $stderr == *"--query-gpu needs --format"* ]]
	run --separate-stderr "$SMI" --root "$ROOT" --format=csv
	assert_failure 2
	run --separate-stderr "$SMI" --root "$ROOT" -L --query-gpu=index --format=csv
	assert_failure 2
	[[ $stderr == *"-L, -q and --query-gpu cannot be used together"* ]]
	run --separate-stderr "$SMI" --colour
	assert_failure 2
	[[ $stderr == "fakegpu-smi: unknown flag --colour (see --help)" ]]
	run --separate-stderr "$SMI" --root "$ROOT" extra
	assert_failure 2
	[[ $stderr == *'unexpected argument "extra"'* ]]
	# Bad fields are usage errors even when no GPU is visible.
	run "$SMI" --root /nonexistent --query-gpu=bogus --format=csv
	assert_failure 2
}

@test "a malformed tree exits 255 naming the file and the claim" {
	echo 80Gx >"$ROOT/devices/gpu-5/memory"
	run --separate-stderr "$SMI" --root "$ROOT" -L
	assert_failure 255
	assert_output ""
	[[ $stderr == "fakegpu-smi: the fakehw tree is malformed: $ROOT/devices/gpu-5/memory: \"80Gx\" is not a byte count" ]]
}

teardown() {
	if [[ -n ${FAKEHW_PID:-} ]]; then
		kill -KILL "$FAKEHW_PID" 2>/dev/null || true
		wait "$FAKEHW_PID" 2>/dev/null || true
	fi
	if [[ -n ${DEAD_MOUNT:-} ]]; then
		umount -l "$DEAD_MOUNT" || true
	fi
}

@test "a dead FUSE mount (fakehw daemon killed) exits 9" {
	if [[ $(id -u) != 0 || ! -w /dev/fuse ]]; then
		skip "needs root and /dev/fuse to mount"
	fi
	# The whole tree, as on the node: its snapshot file is the first read,
	# and a dead mount is an error there, not a reason to walk the files.
	DEAD_MOUNT=$BATS_TEST_TMPDIR/dead
	mkdir -p "$DEAD_MOUNT"
	"$BATS_TEST_DIRNAME/dead_fuse_mount.py" "$DEAD_MOUNT"
	run --separate-stderr "$SMI" --root "$DEAD_MOUNT" -L
	assert_failure 9
	[[ $stderr == "fakegpu-smi has failed because it couldn't read the fakehw tree: $DEAD_MOUNT/snapshot: Transport endpoint is not connected" ]]
	umount -l "$DEAD_MOUNT"
	# One device directory, as a container sees its bind mount.
	DEAD_MOUNT=$ROOT/devices/gpu-5
	"$BATS_TEST_DIRNAME/dead_fuse_mount.py" "$DEAD_MOUNT"
	run --separate-stderr "$SMI" --root "$ROOT" -L
	assert_failure 9
	[[ $stderr == *"$ROOT/devices/gpu-5: Transport endpoint is not connected" ]]
}

@test "--help and --help-query-gpu" {
	run "$SMI" --help
	assert_success
	assert_line --partial "Usage: fakegpu-smi"
	assert_line --partial "--root VALUE"
	assert_line --partial "FAKEHW_ROOT"
	run "$SMI" --help-query-gpu
	assert_success
	assert_line --partial "memory.total"
	assert_line --partial "pci.bus_id [gpu_bus_id]"
}

@test "the binary is static and runs with no libc around it" {
	run file "$SMI"
	assert_output --partial "statically linked"
	run ldd "$SMI"
	assert_failure
	assert_output --partial "not a dynamic executable"
	if [[ $(id -u) != 0 ]]; then
		skip "chroot needs root"
	fi
	# An empty root with just the binary and a tree: nothing to load from.
	local jail=$BATS_TEST_TMPDIR/jail
	mkdir -p "$jail/bin" "$jail/var/run"
	cp "$SMI" "$jail/bin/fakegpu-smi"
	cp -r "$ROOT" "$jail/var/run/fakehw"
	run chroot "$jail" /bin/fakegpu-smi -L
	assert_success
	assert_line --index 0 "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U0)"
}

@test "against a real fakehw mount: list, flip, daemon killed" {
	if [[ ! -x $FAKEHW_BIN/fakehw ]]; then
		skip "the fakehw daemon is not built in $FAKEHW_BIN"
	fi
	if [[ $(id -u) != 0 || ! -w /dev/fuse ]]; then
		skip "needs root and /dev/fuse to mount"
	fi
	cat >"$BATS_TEST_TMPDIR/fakehw.yaml" <<-YAML
		defaults:
		  devices:
		    - profile: A100-SXM4-80GB
		      count: 2
	YAML
	local mnt=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$mnt"
	DEAD_MOUNT=$mnt # teardown unmounts it whatever happens
	"$FAKEHW_BIN/fakehw" --config "$BATS_TEST_TMPDIR/fakehw.yaml" --mount "$mnt" \
		--node smi-test --foreground >"$BATS_TEST_TMPDIR/fakehw.log" 2>&1 3>&- &
	FAKEHW_PID=$!
	for _ in $(seq 100); do
		[[ -e $mnt/generation ]] && break
		sleep 0.1
	done
	[[ -e $mnt/generation ]] || fail "fakehw did not mount: $(cat "$BATS_TEST_TMPDIR/fakehw.log")"

	run "$SMI" --root "$mnt" -L
	assert_success
	assert_equal "${#lines[@]}" 2
	assert_line --index 0 --regexp '^GPU 0: NVIDIA A100-SXM4-80GB \(UUID: GPU-[0-9a-f-]{36}\)$'
	assert_line --index 1 --regexp '^GPU 1: NVIDIA A100-SXM4-80GB \(UUID: GPU-[0-9a-f-]{36}\)$'
	run "$SMI" --root "$mnt" --query-gpu=index,memory.total,health --format=csv,noheader
	assert_success
	assert_output "0, 81920 MiB, healthy
1, 81920 MiB, healthy"

	# A flip written to the health file shows at once (fresh value per open).
	local uuid dev
	uuid=$("$SMI" --root "$mnt" -i 1 --query-gpu=uuid --format=csv,noheader)
	dev=$(dirname "$(grep -lx -- "$uuid" "$mnt"/devices/*/uuid)")
	echo "unhealthy XID 79" >"$dev/health"
	run "$SMI" --root "$mnt" --query-gpu=index,health,health.reason --format=csv,noheader
	assert_success
	assert_output "0, healthy, [N/A]
1, unhealthy, XID 79"

	kill -KILL "$FAKEHW_PID"
	wait "$FAKEHW_PID" || true
	FAKEHW_PID=
	run "$SMI" --root "$mnt" -L
	assert_failure 9
}
