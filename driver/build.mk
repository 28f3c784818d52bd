# SPDX-License-Identifier: Apache-2.0
# driver/: the DRA kubelet plugin.  Each part has its own fragment:
#   device/   the device snapshot and the attributes devices are published with
#   grpc/     gRPC server on grpc core, registration + DRA + health services
#   kube/     Kubernetes API client (libcurl + jansson)
#   prepare/  claims, opaque config, CDI specs, device metadata, checkpoint
#   publish/  ResourceSlice building and publishing
#   claims/   the claim watch, the claim work queue, claim reads and status PATCHes
#   health/   health state, taints, claim device status
#   metrics/  Prometheus metrics and their HTTP endpoint
#   bind/     binding conditions of attachable devices
# driver/main.c wires them into build/bin/fakehw-kubelet-plugin.
include driver/device/build.mk
include driver/grpc/build.mk
include driver/kube/build.mk
include driver/prepare/build.mk
include driver/publish/build.mk
include driver/claims/build.mk
include driver/health/build.mk
include driver/metrics/build.mk
include driver/bind/build.mk
include driver/podresources/build.mk
include driver/plugin.mk
