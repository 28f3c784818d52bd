# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The upgrade checks start with the cluster suite's own preflight: the same
# cluster, driver and gate checks, the same teardown of the run's namespaces.
# shellcheck source=SCRIPTDIR/../cluster/setup_suite.bash
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/setup_suite.bash"
