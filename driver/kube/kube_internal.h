// SPDX-License-Identifier: Apache-2.0
/* Internals shared by the files of driver/kube and by its tests; not part of
 * the client's contract (that is kube_client.h). */
#ifndef FAKEHW_DRIVER_KUBE_INTERNAL_H
#define FAKEHW_DRIVER_KUBE_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "kube_client.h"

/* Idle curl handles kept for reuse (each keeps its own connection cache). */
#define KUBE_POOL_MAX 8
/* Bounds on what the client reads into memory. */
#define KUBE_MAX_BODY       (64L << 20) /* one response body */
#define KUBE_MAX_WATCH_LINE (16L << 20) /* one watch event */
#define KUBE_MAX_TOKEN      (64L << 10) /* a bearer token file */
#define KUBE_MAX_PEM        (1L << 20)  /* a certificate or key file */
/* A watch asks the server to end it after this many seconds unless the path
 * names its own timeoutSeconds; the client gives up 30 s after that. */
#define KUBE_WATCH_TIMEOUT_S 300

struct kube_client {
    struct kube_config cfg; /* its own copy; server without a trailing slash */
    char *user_agent;
    struct kube_client_options opts; /* defaults filled in */

    pthread_mutex_t lock; /* guards idle[] */
    CURL *idle[KUBE_POOL_MAX];
    int nidle;

    atomic_llong deadline_ms;  /* kube_client_set_deadline; 0: none */
    pthread_mutex_t sock_lock; /* guards socks */
    int *socks;                /* every socket curl has open for this client */
    size_t nsocks, capsocks;
};

/* --- kube_http.c: handles and the options every transfer shares --- */

/* A handle from the pool (or a new one), reset.  NULL when curl cannot make one. */
CURL *kube_handle_get(struct kube_client *c);
/* Gives h back to the pool (or frees it when the pool is full). */
void kube_handle_put(struct kube_client *c, CURL *h);
/* Sets TLS, timeouts, user agent and the no-signal mode on a reset handle. */
void kube_http_setup(struct kube_client *c, CURL *h, long timeout_ms);
/* Accept, Content-Type (when content_type is not NULL) and the bearer token,
 * re-read from the token file on every call.  NULL with err on failure. */
struct curl_slist *kube_http_headers(struct kube_client *c, const char *content_type,
                                     struct error *err);
/* Fills err with "METHOD PATH: 404 Not Found: <the Status message>"; body is
 * the decoded answer (may be NULL), raw the undecoded one for non-JSON text. */
void kube_http_status_error(struct error *err, const char *method, const char *path, long status,
                            const json_t *body, const char *raw, size_t raw_len);
/* "Not Found" for 404 and so on; "" for codes it does not know. */
const char *kube_http_reason(long status);

/* Growing buffer for curl write callbacks, bounded by limit. */
struct kube_buf {
    char *data;
    size_t len, cap, limit;
    bool overflow;
};
int kube_buf_append(struct kube_buf *b, const char *p, size_t n);
void kube_buf_free(struct kube_buf *b);

/* --- kube_cancel.c: the shutdown deadline --- */

/* Opens the handle's sockets through the client (so an expired deadline can
 * shut them down) and aborts its transfer once the deadline passed. */
void kube_cancel_setup(struct kube_client *c, CURL *h);
/* want_ms capped at the time left before the deadline (at least 1 ms);
 * want_ms unchanged without a deadline.  want_ms <= 0: no cap wanted. */
long kube_client_remaining_ms(struct kube_client *c, long want_ms);

/* --- kube_cancel_token.c: the watches' cancel token --- */

/* A watch waiting on a token: kube_cancel_fire wakes its multi handle. */
struct kube_cancel_waiter {
    CURLM *multi;
    struct kube_cancel_waiter *next;
};
/* Both do nothing when t is NULL. */
void kube_cancel_attach(struct kube_cancel *t, struct kube_cancel_waiter *w);
void kube_cancel_detach(struct kube_cancel *t, struct kube_cancel_waiter *w);

/* --- kube_files.c --- */

/* Decodes standard base64 (padding optional, whitespace ignored).  *out is
 * NUL-terminated, caller frees.  err says which character is wrong. */
int kube_base64_decode(const char *in, char **out, size_t *out_len, struct error *err);
/* Reads a whole regular file of at most max bytes, NUL-terminated; caller
 * frees.  It is opened with O_NONBLOCK and checked with fstat before any
 * read, so a FIFO (or a device) named in a kubeconfig is an error, not a
 * start-up blocked in open(2).  err: "<path>: <strerror>", "<path>: a FIFO,
 * not a regular file" or "<path>: N bytes, more than the limit of M". */
int kube_read_file(const char *path, long max, char **out, size_t *out_len, struct error *err);
/* Reads a bearer token file: surrounding whitespace trimmed; empty is an
 * error, and so is a token kube_check_token refuses. */
int kube_read_token(const char *path, char **token, struct error *err);
/* A bearer token goes into a header line of every request: at most
 * KUBE_MAX_TOKEN bytes, no control characters (a CR or LF would start a
 * header of its own).  err: "the token has N bytes, more than the limit of
 * M" or "the token contains a control character (0x0a) at byte N". */
int kube_check_token(const char *token, size_t len, struct error *err);

#endif
