# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The one file every cluster test loads (`load lib/helpers`): parameters,
# kubectl queries, template rendering, feature detection, the per-test
# lifecycle, diagnostics, the fake-driver checks and a container's GPU
# listing.  Each part lives in its own file beside this one.

CONFORMANCE_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# shellcheck source=SCRIPTDIR/params.bash
source "$CONFORMANCE_LIB/params.bash"
# shellcheck source=SCRIPTDIR/api_proxy.bash
source "$CONFORMANCE_LIB/api_proxy.bash"
# shellcheck source=SCRIPTDIR/kube.bash
source "$CONFORMANCE_LIB/kube.bash"
# shellcheck source=SCRIPTDIR/assert.bash
source "$CONFORMANCE_LIB/assert.bash"
# shellcheck source=SCRIPTDIR/quantity.bash
source "$CONFORMANCE_LIB/quantity.bash"
# shellcheck source=SCRIPTDIR/render.bash
source "$CONFORMANCE_LIB/render.bash"
# shellcheck source=SCRIPTDIR/features.bash
source "$CONFORMANCE_LIB/features.bash"
# shellcheck source=SCRIPTDIR/checks.bash
source "$CONFORMANCE_LIB/checks.bash"
# shellcheck source=SCRIPTDIR/scenario.bash
source "$CONFORMANCE_LIB/scenario.bash"
# shellcheck source=SCRIPTDIR/diagnostics.bash
source "$CONFORMANCE_LIB/diagnostics.bash"
# shellcheck source=SCRIPTDIR/fakehw.bash
source "$CONFORMANCE_LIB/fakehw.bash"
# shellcheck source=SCRIPTDIR/smi.bash
source "$CONFORMANCE_LIB/smi.bash"

params_defaults
