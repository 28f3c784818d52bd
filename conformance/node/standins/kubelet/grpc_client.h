// SPDX-License-Identifier: Apache-2.0
/* A minimal gRPC client on grpc core for the kubelet stand-in: unary calls
 * and server-streaming calls over a unix socket, with deadlines, on raw
 * packed messages.  Like the kubelet: insecure credentials, "unix:" + path,
 * fail fast when nothing listens (UNAVAILABLE, no waiting for ready). */
#ifndef FAKEHW_STANDIN_GRPC_CLIENT_H
#define FAKEHW_STANDIN_GRPC_CLIENT_H

#include <grpc/status.h>
#include <stddef.h>
#include <stdint.h>

#include "grpc_wire.h" /* wire_status_name */
#include "cleanup.h"
#include "error.h"

struct rpc_client;
struct rpc_client_stream;

/* The outcome of a unary call that reached a status. */
struct rpc_answer {
    grpc_status_code status;
    char *details; /* status message, "" when none */
    uint8_t *data; /* the response message (OK only), NULL when none */
    size_t len;
};

/* A channel to the unix socket at path (connects lazily). */
struct rpc_client *rpc_client_new(const char *socket_path, struct error *err);
void rpc_client_free(struct rpc_client *c);
CLEANUP_FUNC(struct rpc_client, rpc_client_free)
#define cleanup_rpc_client __attribute__((cleanup(rpc_client_freep)))

/* Calls method with the packed request; timeout in seconds (<= 0: none).
 * Returns 0 once the call ended with any status (see a->status), -1 with
 * err only when the call could not be made at all. */
int rpc_client_call(struct rpc_client *c, const char *method, const void *req, size_t len,
                    double timeout, struct rpc_answer *a, struct error *err);
void rpc_answer_free(struct rpc_answer *a);

/* Opens a server-streaming call; timeout bounds the whole stream. */
struct rpc_client_stream *rpc_client_stream_open(struct rpc_client *c, const char *method,
                                                 const void *req, size_t len, double timeout,
                                                 struct error *err);

/* Waits for the next message: 1 with *data (malloc'd), 0 when the stream is
 * over (see rpc_client_stream_status). */
int rpc_client_stream_next(struct rpc_client_stream *s, uint8_t **data, size_t *len);

/* Status of a finished stream; details stays valid until close. */
grpc_status_code rpc_client_stream_status(struct rpc_client_stream *s, const char **details);

/* Cancels the stream if it is still open, waits for its operations, frees. */
void rpc_client_stream_close(struct rpc_client_stream *s);
CLEANUP_FUNC(struct rpc_client_stream, rpc_client_stream_close)
#define cleanup_rpc_client_stream __attribute__((cleanup(rpc_client_stream_closep)))

#endif
