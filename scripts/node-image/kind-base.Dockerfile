# SPDX-License-Identifier: Apache-2.0
# The kind base image, made offline: what kind's images/base/Dockerfile does,
# on a debootstrapped Debian root (debian-rootfs.sh) with the programs built
# from their Go modules (go-programs.sh) instead of git clones. The build
# context is assembled by kind-base.sh; nothing here downloads anything.
ARG ROOTFS_IMAGE=fakehw-dra/kind-rootfs:bookworm
FROM ${ROOTFS_IMAGE}
COPY files/ /
COPY bin/ /usr/local/bin/
COPY sbin/runc /usr/local/sbin/runc
COPY cni/ /opt/cni/bin/
RUN chmod 0755 /usr/local/bin/* /usr/local/sbin/runc /opt/cni/bin/* /kind /kind/bin /kind/bin/* \
    && find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete \
    && rm -f /lib/systemd/system/multi-user.target.wants/* \
    && rm -f /etc/systemd/system/*.wants/* \
    && rm -f /lib/systemd/system/local-fs.target.wants/* \
    && rm -f /lib/systemd/system/sockets.target.wants/*udev* \
    && rm -f /lib/systemd/system/sockets.target.wants/*initctl* \
    && rm -f /lib/systemd/system/basic.target.wants/* \
    && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \
    && ln -sf /usr/lib/systemd/systemd /sbin/init \
    && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \
    && systemctl mask systemd-binfmt.service \
    && mkdir -p /etc/kubernetes/manifests \
    && ctr oci spec \
        | jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
        | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json \
    && containerd --version && runc --version && crictl --version
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]
