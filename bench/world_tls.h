// SPDX-License-Identifier: Apache-2.0
/* Certificates for a benchmark node whose API stand-in speaks HTTPS the way
 * a kube-apiserver does: a CA, a serving certificate for 127.0.0.1, and a
 * client certificate for the node (CN system:node:<node>, O system:nodes),
 * RSA 2048 like kubeadm's, made with the openssl command. */
#ifndef FAKEHW_BENCH_WORLD_TLS_H
#define FAKEHW_BENCH_WORLD_TLS_H

#include "error.h"

struct world_certs {
    char ca[2400], server_cert[2400], server_key[2400], client_cert[2400], client_key[2400];
};

/* Writes the files into dir (which exists) and fills certs with their paths.
 * openssl's output goes to dir/openssl.log. */
int world_make_certs(const char *dir, const char *node, struct world_certs *certs,
                     struct error *err);

#endif
