// SPDX-License-Identifier: Apache-2.0
/* The socket paths of one plugin instance.
 *
 * Alone on a node: <registrar dir>/<driver>-reg.sock and
 * <plugin dir>/dra.sock.  With a rolling-update UID (the pod's UID, kubelet
 * 1.33+), two instances of the driver run side by side during a DaemonSet
 * rolling update, so each names its sockets after its UID:
 *   DRA socket:   <plugin dir>/dra-<uid>.sock
 *   registration: the first of
 *     <driver>-<uid>-reg.sock
 *     <driver>-<base64url(SHA-256(uid)[:8])>-reg.sock
 *     dra-<base64url(SHA-256(driver "\0" uid)[:16])>-reg.sock
 *   whose path fits in SOCKET_PATH_MAX, else the last (base64url without
 *   padding), as RollingUpdateRegistrarSocketFile of the Go helper
 *   (k8s.io/dynamic-resource-allocation/kubeletplugin) chooses them. */
#ifndef FAKEHW_DRIVER_GRPC_SOCKET_NAMES_H
#define FAKEHW_DRIVER_GRPC_SOCKET_NAMES_H

#include <limits.h>

#include "error.h"

/* The longest socket path: sun_path (108) less its NUL, which grpc core
 * needs.  The Go helper allows 108, so the two differ only for a path of
 * exactly 108 bytes. */
#define SOCKET_PATH_MAX 107
/* Pod UIDs are 36-character UUIDs; anything much longer is a mistake. */
#define ROLLING_UPDATE_UID_MAX 128

struct socket_names {
    char registration[PATH_MAX];
    char dra[PATH_MAX];
};

/* Checks a rolling-update UID: 1 to ROLLING_UPDATE_UID_MAX characters of
 * letters, digits, '-', '_' and '.', so it can be part of a file name. */
int socket_names_check_uid(const char *uid, struct error *err);

/* Fills *out for driver in registrar_dir and plugin_dir; uid NULL or ""
 * means no rolling update.  -1 with err for a bad uid or a socket path
 * longer than SOCKET_PATH_MAX. */
int socket_names_build(const char *registrar_dir, const char *plugin_dir, const char *driver,
                       const char *uid, struct socket_names *out, struct error *err);

#endif
