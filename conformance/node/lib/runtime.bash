# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# A real container runtime for the node suite: proves that a CDI spec written
# by the kubelet plugin is accepted by podman (its own CDI code, with runc) and
# injects what it should.  bats files `load ../lib/runtime`, call
# runtime_setup_file in setup_file and runtime_require in setup (bats 1.8
# cannot skip from setup_file); only runtime_require needs bats.
#
#   runtime_setup_file                 probe once for all tests of the file
#                                      (exported); fails only when
#                                      FAKEHW_REQUIRE_RUNTIME=1 and none works
#   runtime_require                    skip (or fail, FAKEHW_REQUIRE_RUNTIME=1)
#                                      with the reason when no runtime works here
#   runtime_unavailable_reason         print why no runtime works and return 0;
#                                      return 1, printing nothing, when one works
#   runtime_probe                      0 when the runtime works (builds the image
#                                      once); else 1 with $RUNTIME_UNAVAILABLE set;
#                                      either answer is exported and reused
#   run_with_cdi DIR [ID...] -- CMD... run CMD in a busybox container given the
#                                      CDI devices ID... of the specs in DIR; its
#                                      stdout/stderr and exit status, or podman's
#                                      error and status (125 podman, 126 the OCI
#                                      runtime or CDI injection, 127 no such CMD)
#   runtime_podman ARGS...             podman on the harness's private storage
#   runtime_cleanup                    force-remove the containers started by this
#                                      test (teardown); normally there are none
#
# How, and why (docs/troubleshooting.md has the errors behind each choice):
# - Podman 4.3 (Debian 12) reads CDI specs only from /etc/cdi and /var/run/cdi;
#   it ignores containers.conf cdi_spec_dirs and has no --cdi-spec-dir.  So
#   every run happens in a private mount namespace where DIR is bind-mounted
#   over /var/run/cdi and an empty directory over /etc/cdi: podman's CDI code
#   sees exactly DIR, and the host's spec directories are neither read nor
#   changed.  A bind mount needs a mount point: /var/run/cdi is created, empty,
#   when the host has none (the plugin's default --cdi-root; runc likewise
#   creates /run/runc).
# - Nothing of the host's podman setup takes part: CONTAINERS_CONF and
#   CONTAINERS_STORAGE_CONF name files in the cache directory (each replaces
#   the host's files), file locks instead of the host-wide /dev/shm/libpod_lock,
#   an empty hooks directory, private --root/--runroot/--tmpdir.  The
#   per-boot state (--runroot, --tmpdir) lives in /run/fakehw-podman/<hash of
#   the store path>: podman 4.3 refuses a runroot longer than 50 characters,
#   and it belongs on the volatile /run anyway.
# - The image: a busybox-static rootfs, `podman import`ed once per busybox
#   binary and podman version into that storage.  vfs storage driver: works on
#   any backing filesystem and mounts nothing per container.
# - --ulimit nofile/nproc: podman asks for 1048576 open files and processes for
#   root; where root lacks CAP_SYS_RESOURCE runc then fails with "error setting
#   rlimit type 7: operation not permitted".
# - --network=none (no CNI, slirp4netns or netavark), --pull=never (no
#   registry), --events-backend none (nothing that grows in the cache),
#   --log-level error (podman's warnings would mix into the command's output),
#   --security-opt label=disable (on SELinux hosts the spec's bind mounts of
#   test directories would be unreadable; CDI mounts cannot ask for :z).
#
# Environment:
#   FAKEHW_PODMAN_CACHE      cache root (default ${TMPDIR:-/tmp}/fakehw-podman-cache);
#                            one subdirectory per busybox + podman version
#   FAKEHW_BUSYBOX           static busybox for the image (default /bin/busybox)
#   FAKEHW_RUNTIME_TIMEOUT   seconds one container may take (default 30); then
#                            it is killed and removed, and run_with_cdi fails
#   FAKEHW_PODMAN_LOG_LEVEL  podman's --log-level (default error); "debug"
#                            shows why podman dropped a CDI spec
#   FAKEHW_REQUIRE_RUNTIME   1: fail instead of skipping where no runtime works (CI)

RUNTIME_ULIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

# Seconds to wait for the store lock: the image build takes about a second,
# but a shared holder may be a container that runs into its timeout.
RUNTIME_LOCK_WAIT=120

# _rt_unavailable REASON: record why the runtime cannot be used; returns 1.
_rt_unavailable() {
    export RUNTIME_UNAVAILABLE=$1
    return 1
}

# _rt_locate: set RUNTIME_STORE (this busybox + podman's cache directory),
# RUNTIME_RUN (its per-boot state) and RUNTIME_IMAGE.  A new busybox or podman
# gets a fresh store and image.
_rt_locate() {
    local busybox=${FAKEHW_BUSYBOX:-/bin/busybox} root sum version
    root=${FAKEHW_PODMAN_CACHE:-${TMPDIR:-/tmp}/fakehw-podman-cache}
    [[ $root == /* ]] || root=$PWD/$root
    sum=$(sha256sum <"$busybox") || return 1
    version=$(podman --version) || return 1
    version=${version##* }
    RUNTIME_STORE=$root/busybox-${sum:0:12}-podman-${version//[^A-Za-z0-9._-]/_}
    RUNTIME_IMAGE=localhost/fakehw-busybox:${sum:0:12}
    sum=$(sha256sum <<<"$RUNTIME_STORE") || return 1
    RUNTIME_RUN=/run/fakehw-podman/${sum:0:12}
}

# _rt_podman_argv: fill _RT_PODMAN with the podman command line (environment
# and global flags) of the private store.
_rt_podman_argv() {
    local s=$RUNTIME_STORE r=$RUNTIME_RUN
    _RT_PODMAN=(env -u CONTAINER_HOST -u CONTAINER_CONNECTION
        "CONTAINERS_CONF=$s/containers.conf" "CONTAINERS_STORAGE_CONF=$s/storage.conf"
        "TMPDIR=$s/tmp"
        podman --root "$s/root" --runroot "$r/runroot" --tmpdir "$r/libpod"
        --volumepath "$s/volumes" --hooks-dir "$s/hooks.d" --storage-driver vfs
        --runtime runc --cgroup-manager cgroupfs --events-backend none
        --log-level "${FAKEHW_PODMAN_LOG_LEVEL:-error}")
}

# runtime_podman ARGS...: podman with the harness's private configuration and
# storage (after runtime_probe), e.g. `runtime_podman ps -a`.
runtime_podman() {
    if [[ -z ${RUNTIME_STORE-} ]]; then
        echo "runtime_podman: no runtime store yet (call runtime_probe first)" >&2
        return 2
    fi
    _rt_podman_argv
    "${_RT_PODMAN[@]}" "$@"
}

# _rt_write_config: the private containers.conf and storage.conf.
_rt_write_config() {
    local s=$RUNTIME_STORE
    mkdir -p "$s/tmp" "$s/hooks.d" "$s/cdi-none" || return 1
    cat >"$s/containers.conf" <<'EOF' || return 1
# Written by conformance/node/lib/runtime.bash.  CONTAINERS_CONF names this
# file, so no containers.conf of the host applies.  File locks live in the
# private --tmpdir; the default shm locks are shared with the host's podman.
[engine]
lock_type = "file"
EOF
    cat >"$s/storage.conf" <<EOF || return 1
# Written by conformance/node/lib/runtime.bash (CONTAINERS_STORAGE_CONF).
[storage]
driver = "vfs"
graphroot = "$s/root"
runroot = "$RUNTIME_RUN/runroot"
EOF
}

# _rt_build_image: import a busybox rootfs as $RUNTIME_IMAGE (store locked).
_rt_build_image() {
    local busybox=${FAKEHW_BUSYBOX:-/bin/busybox} rootfs applet out rc
    rootfs=$(mktemp -d "$RUNTIME_STORE/rootfs.XXXXXX") || return 1
    if ! { mkdir -p "$rootfs"/{bin,dev,etc,proc,root,run,sys,tmp,usr/bin,var} &&
        chmod 1777 "$rootfs/tmp" &&
        ln -s ../run "$rootfs/var/run" &&
        cp "$busybox" "$rootfs/bin/busybox" &&
        printf 'root:x:0:0:root:/root:/bin/sh\n' >"$rootfs/etc/passwd" &&
        printf 'root:x:0:\n' >"$rootfs/etc/group"; }; then
        rm -rf "$rootfs"
        return 1
    fi
    for applet in $("$busybox" --list); do
        [[ $applet == busybox ]] || ln -s busybox "$rootfs/bin/$applet"
    done
    # Importing copies through containers/image, which records the layer in
    # the host's blob info cache (/var/lib/containers/cache) whatever --root
    # says.  In a mount namespace where the nearest existing directory of
    # that path is read-only, it falls back to a memory-only cache instead.
    local guard=/var/lib/containers/cache
    while [[ -n $guard && ! -d $guard ]]; do
        guard=${guard%/*}
    done
    [[ $RUNTIME_STORE/ == "$guard"/* ]] && guard=''
    _rt_podman_argv
    # shellcheck disable=SC2016 # $1 belongs to the inner shell
    out=$(tar --numeric-owner --owner=0 --group=0 -C "$rootfs" -cf "$rootfs.tar" . 2>&1 &&
        unshare --mount --propagation private -- /bin/sh -c '
            if [ -n "$1" ]; then
                mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 125
            fi
            shift
            exec "$@"' sh "$guard" "${_RT_PODMAN[@]}" import --quiet "$rootfs.tar" "$RUNTIME_IMAGE" 2>&1)
    rc=$?
    rm -rf "$rootfs" "$rootfs.tar"
    ((rc == 0)) || echo "$out" >&2
    return "$rc"
}

# _rt_container CDI_DIR NAME [ID...] -- CMD...: run CMD in a new container
# named NAME given the CDI devices ID... of CDI_DIR.  It holds the store lock
# shared while the container runs, so no rebuild can wipe the store under it.
_rt_container() {
    local cdi_dir=$1 name=$2 limit=${FAKEHW_RUNTIME_TIMEOUT:-30}
    shift 2
    local -a run=(run --rm --name "$name" --network=none --pull=never
        "${RUNTIME_ULIMITS[@]}" --security-opt label=disable --log-driver k8s-file)
    while [[ $1 != -- ]]; do
        run+=(--device "$1")
        shift
    done
    shift
    _rt_podman_argv
    # The mount namespace ends with its last process (the container and
    # conmon included), and with it the bind mounts.
    # shellcheck disable=SC2016 # $1 and $2 belong to the inner shell
    flock --shared --wait "$RUNTIME_LOCK_WAIT" --conflict-exit-code 125 "$RUNTIME_STORE/lock" \
        timeout --kill-after=2 "$limit" \
        unshare --mount --propagation private -- /bin/sh -c '
            mount --bind "$1" /var/run/cdi || {
                echo "run_with_cdi: cannot bind-mount $1 over /var/run/cdi" >&2
                exit 125
            }
            if [ -d /etc/cdi ] && ! mount --bind "$2" /etc/cdi; then
                echo "run_with_cdi: cannot hide /etc/cdi" >&2
                exit 125
            fi
            shift 2
            exec "$@"' sh "$cdi_dir" "$RUNTIME_STORE/cdi-none" \
        "${_RT_PODMAN[@]}" "${run[@]}" "$RUNTIME_IMAGE" "$@"
}

# _rt_smoke: one container, no CDI device; prints podman's error on failure.
_rt_smoke() {
    local out name=fakehw-rt-probe-$BASHPID-${EPOCHREALTIME/./}
    out=$(_rt_container "$RUNTIME_STORE/cdi-none" "$name" -- /bin/busybox true 2>&1) && return 0
    runtime_podman rm --force --time 0 --ignore "$name" >/dev/null 2>&1
    printf '%s\n' "$out" | sed '/^[[:space:]]*$/d' | tail -n 3 | paste -sd ' '
    return 1
}

# _rt_prepare_store REBUILD: config files and image, under the store's
# exclusive lock; REBUILD=1 wipes the store first.
_rt_prepare_store() {
    local rebuild=$1 fd rc=0 out
    if ! mkdir -p "$RUNTIME_STORE" || ! exec {fd}>>"$RUNTIME_STORE/lock"; then
        echo "cannot create the store lock $RUNTIME_STORE/lock"
        return 1
    fi
    if ! flock --wait "$RUNTIME_LOCK_WAIT" "$fd"; then
        exec {fd}>&-
        echo "the store lock $RUNTIME_STORE/lock is held by another run for more than ${RUNTIME_LOCK_WAIT}s"
        return 1
    fi
    # A new or wiped store must not meet per-boot state of an older one.
    if ((rebuild)) || [[ ! -d $RUNTIME_STORE/root ]]; then
        rm -rf "${RUNTIME_STORE:?}"/{root,volumes,tmp} "${RUNTIME_RUN:?}"
    fi
    # Podman 4.3 leaves the empty file lock of every removed container
    # behind.  With no container in the store they are all stale, and none
    # can be created meanwhile: runs hold this lock shared.
    if [[ -d $RUNTIME_RUN/libpod/locks && -z $(runtime_podman ps --all --quiet 2>/dev/null) ]]; then
        find "$RUNTIME_RUN/libpod/locks" -mindepth 1 -maxdepth 1 -type f -delete
    fi
    if ! _rt_write_config; then
        echo "cannot write the podman configuration into $RUNTIME_STORE"
        rc=1
    elif ! runtime_podman image exists "$RUNTIME_IMAGE" 2>/dev/null; then
        if ! out=$(_rt_build_image 2>&1); then
            echo "cannot import the busybox image into $RUNTIME_STORE: $out"
            rc=1
        fi
    fi
    exec {fd}>&-
    return "$rc"
}

# runtime_probe: 0 when podman can run containers with CDI devices here,
# building the image on first use; else 1 with the reason in
# $RUNTIME_UNAVAILABLE.  The answer is exported (RUNTIME_READY or
# RUNTIME_UNAVAILABLE), so later calls, and bats tests after setup_file,
# reuse it; unset both to probe again.
runtime_probe() {
    if [[ -n ${RUNTIME_READY-} && $RUNTIME_READY == "${RUNTIME_STORE-}" ]]; then
        return 0
    fi
    [[ -z ${RUNTIME_UNAVAILABLE-} ]] || return 1
    ((EUID == 0)) || _rt_unavailable "needs root (rootful podman, a private mount namespace for the CDI spec directory); running as uid $EUID" || return 1
    local cmd out busybox=${FAKEHW_BUSYBOX:-/bin/busybox}
    for cmd in podman runc conmon unshare mount flock timeout sha256sum tar; do
        command -v "$cmd" >/dev/null ||
            _rt_unavailable "$cmd is not installed (Debian: apt-get install podman runc busybox-static)" || return 1
    done
    [[ -x $busybox ]] ||
        _rt_unavailable "no busybox at $busybox (Debian: apt-get install busybox-static, or set FAKEHW_BUSYBOX)" || return 1
    # A dynamically linked busybox would not run in an image without libc.
    ! ldd "$busybox" 2>/dev/null | grep -q '=>' ||
        _rt_unavailable "$busybox is dynamically linked; the image needs a static one (Debian: busybox-static)" || return 1
    out=$(unshare --mount --propagation private true 2>&1) ||
        _rt_unavailable "cannot create a private mount namespace: $out" || return 1
    out=$(mkdir -p /var/run/cdi 2>&1) ||
        _rt_unavailable "cannot create the mount point /var/run/cdi: $out" || return 1
    _rt_locate || _rt_unavailable "cannot read $busybox or run podman --version" || return 1

    out=$(_rt_prepare_store 0) || _rt_unavailable "$out" || return 1
    if ! _rt_smoke >/dev/null; then
        # A damaged cache (say, tmp cleaners) heals by a rebuild; a runtime
        # that cannot run containers fails again, with podman's error.
        out=$(_rt_prepare_store 1) || _rt_unavailable "$out" || return 1
        out=$(_rt_smoke) || _rt_unavailable "podman cannot run a container: $out" || return 1
    fi
    export RUNTIME_STORE RUNTIME_RUN RUNTIME_IMAGE RUNTIME_READY=$RUNTIME_STORE
}

# runtime_unavailable_reason: print why the runtime cannot be used and return
# 0; return 1 and print nothing when it can.
runtime_unavailable_reason() {
    if runtime_probe; then
        return 1
    fi
    printf '%s\n' "$RUNTIME_UNAVAILABLE"
}

# runtime_setup_file: for bats setup_file.  Probes once for every test of
# the file; fails only when no runtime works and FAKEHW_REQUIRE_RUNTIME=1,
# otherwise the tests skip in runtime_require.
runtime_setup_file() {
    runtime_probe && return 0
    if [[ ${FAKEHW_REQUIRE_RUNTIME-} == 1 ]]; then
        echo "container runtime unavailable (FAKEHW_REQUIRE_RUNTIME=1): $RUNTIME_UNAVAILABLE" >&2
        return 1
    fi
    return 0
}

# runtime_require: for bats setup.  Skips with the reason when the runtime
# cannot be used, or fails when FAKEHW_REQUIRE_RUNTIME=1.
runtime_require() {
    runtime_probe && return 0
    if [[ ${FAKEHW_REQUIRE_RUNTIME-} == 1 ]]; then
        echo "container runtime unavailable (FAKEHW_REQUIRE_RUNTIME=1): $RUNTIME_UNAVAILABLE" >&2
        return 1
    fi
    skip "container runtime unavailable: $RUNTIME_UNAVAILABLE"
}

# _rt_names_file: where this test records the names of its containers.
_rt_names_file() {
    if [[ -n ${BATS_TEST_TMPDIR-} ]]; then
        printf '%s\n' "$BATS_TEST_TMPDIR/.fakehw-runtime-containers"
    else
        printf '%s\n' "${TMPDIR:-/tmp}/fakehw-runtime-containers.$$"
    fi
}

# run_with_cdi CDI_DIR [CDI_ID...] -- CMD [ARG...]
# Runs CMD in a fresh busybox container given the CDI devices CDI_ID...
# (fully qualified: vendor/class=name) as podman resolves them from the specs
# in CDI_DIR and nowhere else.  The container is removed afterwards.  Its
# stdout and stderr travel separately (conmon), so their interleaving is lost:
# merge them inside the container (2>&1) when the order matters.
run_with_cdi() {
    if (($# < 2)); then
        echo "usage: run_with_cdi CDI_DIR [CDI_ID...] -- CMD [ARG...]" >&2
        return 2
    fi
    local cdi_dir=$1 limit=${FAKEHW_RUNTIME_TIMEOUT:-30} name start rc
    shift
    local -a ids=()
    while (($#)) && [[ $1 != -- ]]; do
        ids+=("$1")
        shift
    done
    if [[ ${1-} != -- || $# -lt 2 ]]; then
        echo "run_with_cdi: expected -- and a command after the CDI device ids" >&2
        return 2
    fi
    shift
    if [[ ! -d $cdi_dir ]]; then
        echo "run_with_cdi: CDI spec directory $cdi_dir does not exist" >&2
        return 2
    fi
    cdi_dir=$(cd "$cdi_dir" && pwd -P) || return 2
    if ! runtime_probe; then
        echo "run_with_cdi: container runtime unavailable: $RUNTIME_UNAVAILABLE" >&2
        return 125
    fi
    name=fakehw-rt-$BASHPID-${EPOCHREALTIME/./}
    echo "$name" >>"$(_rt_names_file)"
    start=${EPOCHREALTIME/./}
    _rt_container "$cdi_dir" "$name" "${ids[@]}" -- "$@"
    rc=$?
    # timeout exits 124 (TERM sufficed) or 137 (needed KILL); the command may
    # exit so itself, so the clock decides.
    if ((rc == 124 || rc == 137)) && ((${EPOCHREALTIME/./} - start >= limit * 1000000)); then
        echo "run_with_cdi: the container did not finish within ${limit}s (FAKEHW_RUNTIME_TIMEOUT); removed it" >&2
        _rt_podman_argv
        timeout 60 "${_RT_PODMAN[@]}" rm --force --time 0 --ignore "$name" >/dev/null 2>&1
    fi
    return "$rc"
}

# runtime_cleanup: force-remove every container run_with_cdi started in this
# test (bats teardown).  After a normal run there is none left: --rm.
runtime_cleanup() {
    local file
    file=$(_rt_names_file)
    [[ -s $file && -n ${RUNTIME_STORE-} ]] || {
        rm -f "$file"
        return 0
    }
    local -a names
    mapfile -t names <"$file"
    _rt_podman_argv
    timeout 60 "${_RT_PODMAN[@]}" rm --force --time 0 --ignore "${names[@]}" >/dev/null
    local rc=$?
    rm -f "$file"
    return "$rc"
}

# runtime_leftovers: names of the containers run_with_cdi started in this test
# that still exist (none, when every run cleaned up after itself).
runtime_leftovers() {
    local file
    file=$(_rt_names_file)
    [[ -s $file ]] || return 0
    runtime_podman ps --all --format '{{.Names}}' | grep -Fx -f "$file"
    return 0
}
