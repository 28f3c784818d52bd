# SPDX-License-Identifier: Apache-2.0
# conformance/: the cluster suite (cluster/) and the node suite with its
# kubelet and API server stand-ins (node/), the upgrade checks (upgrade/) and
# NVIDIA's quickstart specs as a check (quickstart/).
include conformance/node/standins/kubelet/build.mk
include conformance/node/standins/apiserver/build.mk
include conformance/node/build.mk
include conformance/cluster/build.mk
include conformance/upgrade/build.mk
include conformance/quickstart/build.mk
