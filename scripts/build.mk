# scripts/: the Makefile's own targets for users (help, unit, install) are
# tested here; the deployment scripts are manifests/build.mk's.
BATS_SUITES += scripts/tests
LINT_SHELL  += $(wildcard scripts/tests/*.bats scripts/tests/*.bash)
