# SPDX-License-Identifier: Apache-2.0
# Builds plain-directory fakehw trees (layout: common/fakehw/fakehw_tree.h) for the
# fakegpu-smi tests.

# make_device ROOT NAME INDEX UUID [PRODUCT] [MEMORY_BYTES] [PCI_BUS_ID]
make_device() {
	local root=$1 name=$2 index=$3 uuid=$4
	local product=${5:-NVIDIA A100-SXM4-80GB} memory=${6:-85899345920}
	local pci=${7:-0000:$((index + 10)):00.0}
	local d=$root/devices/$name
	mkdir -p "$d"
	echo "$name" >"$d/name"
	echo "$index" >"$d/index"
	echo "$uuid" >"$d/uuid"
	echo "$product" >"$d/productName"
	echo Ampere >"$d/architecture"
	echo Nvidia >"$d/brand"
	echo "$memory" >"$d/memory"
	echo 8.0 >"$d/computeCapability"
	echo 550.127.05 >"$d/driverVersion"
	echo 12.4 >"$d/cudaDriverVersion"
	echo "$pci" >"$d/pciBusID"
	echo pci0000:00 >"$d/pcieRoot"
	echo 0 >"$d/numaNode"
	echo "$index" >"$d/minor"
	echo "/dev/fakegpu$index" >"$d/devicePath"
	echo healthy >"$d/health"
	echo >"$d/healthReason"
	echo 1732252380 >"$d/healthSince"
}

# make_tree ROOT: node, generation and an empty devices/ directory.
make_tree() {
	mkdir -p "$1/devices"
	echo kind-worker >"$1/node"
	echo 1 >"$1/generation"
}
