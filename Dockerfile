# SPDX-License-Identifier: Apache-2.0
# fakehw-dra image: fakehw (FUSE fake GPUs), fakehw-kubelet-plugin (the DRA
# kubelet plugin), the static fakegpu-smi and fakehw-podresources (a client
# of the kubelet's PodResources API), for the DaemonSet in
# manifests/base.  Build with `make image` (IMAGE=... to choose the tag).
#
# Stage 1 builds on Debian 12 with exactly the packages `make deps` installs
# (the list is DEBIAN_PACKAGES in the top Makefile; `make deps-debian` skips
# the test tools helm and kustomize, which the image does not need).  Stage 2 is Debian 12
# slim plus the shared libraries the two dynamic programs link, found from
# the built binaries themselves (scripts/runtime-packages.sh).
ARG BUILD_IMAGE=debian:12
ARG RUNTIME_IMAGE=debian:12-slim

FROM ${BUILD_IMAGE} AS build
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update -q \
    && apt-get install -y -q --no-install-recommends make \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what `make deps` reads, so this slow layer survives source edits.
# DEPS_ONLY=1: the Makefile reads none of the build fragments.
COPY Makefile ./
COPY scripts/install-deps.sh scripts/
RUN make deps-debian DEPS_ONLY=1 && rm -rf /var/lib/apt/lists/*
COPY . .
# The commit the programs report (--version, the plugin's build_info): the
# context has no .git, so scripts/image.sh passes git describe's answer.
ARG FAKEHW_GIT_COMMIT=
RUN make -j"$(nproc)" BUILD=build/image FAKEHW_GIT_COMMIT="$FAKEHW_GIT_COMMIT" \
        build/image/bin/fakehw build/image/bin/fakehw-kubelet-plugin build/image/bin/fakegpu-smi \
        build/image/bin/fakehw-podresources \
    && mkdir -p /out/bin \
    && install -m 0755 build/image/bin/fakehw build/image/bin/fakehw-kubelet-plugin \
        build/image/bin/fakegpu-smi build/image/bin/fakehw-podresources /out/bin/ \
    && if ldd /out/bin/fakegpu-smi >/dev/null 2>&1; then \
        echo "fakegpu-smi is dynamically linked; it must be static to run in any container" >&2; exit 1; \
    fi \
    && scripts/runtime-packages.sh /out/bin/fakehw /out/bin/fakehw-kubelet-plugin \
        /out/bin/fakehw-podresources > /out/runtime-packages \
    && echo "runtime packages:" $(cat /out/runtime-packages)

FROM ${RUNTIME_IMAGE}
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=build /out/runtime-packages /tmp/runtime-packages
RUN apt-get update -q \
    && xargs -a /tmp/runtime-packages apt-get install -y -q --no-install-recommends \
    && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages
COPY --from=build /out/bin/ /usr/local/bin/
# Runs as root: the plugin writes into the kubelet's root-owned directories
# and fakehw mounts FUSE.  The DaemonSet drops every capability the plugin
# does not need.
LABEL org.opencontainers.image.title="fakehw-dra" \
      org.opencontainers.image.description="Fake GPUs for Kubernetes DRA: fakehw, fakehw-kubelet-plugin, fakegpu-smi, fakehw-podresources"
CMD ["/usr/local/bin/fakehw-kubelet-plugin", "--help"]
