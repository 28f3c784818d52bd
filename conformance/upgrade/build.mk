# SPDX-License-Identifier: Apache-2.0
# conformance/upgrade: workloads held across a cluster upgrade and the checks
# after each step (run.sh); scripts/upgrade-test.sh drives a kind cluster
# through the upgrade with them (`make upgrade-test`, docs/upgrades.md).

BATS_SUITES += conformance/upgrade/selftest
LINT_SHELL += conformance/upgrade/run.sh conformance/upgrade/hold.bash \
  conformance/upgrade/setup_suite.bash conformance/upgrade/checks.bats \
  conformance/upgrade/selftest/hold.bats
