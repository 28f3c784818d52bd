# SPDX-License-Identifier: Apache-2.0
# scripts/: the Makefile's own targets for users (help, unit, install) and
# the README's tour (demo.sh, readme-tour.sh) are tested here; the
# deployment scripts are manifests/build.mk's.
BATS_SUITES += scripts/tests
LINT_SHELL  += scripts/demo.sh scripts/readme-tour.sh scripts/install-go-tools.sh scripts/check-spdx.sh scripts/check-conformance-deps.sh $(wildcard scripts/tests/*.bats scripts/tests/*.bash)
