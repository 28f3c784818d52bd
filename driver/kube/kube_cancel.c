// SPDX-License-Identifier: Apache-2.0
/* Shutdown deadlines: a client-wide time after which no request starts or
 * retries and the transfers in flight end.
 *
 * A transfer in curl_easy_perform cannot be woken from outside, and its
 * progress callback may run only once a second while the server is silent,
 * which is too coarse for a 2 s shutdown budget.  So the client opens its
 * sockets itself (CURLOPT_OPENSOCKETFUNCTION) and keeps their descriptors:
 * an expired deadline shuts every one of them down, which ends the poll of
 * any transfer on them at once (curl copies the close callback into each
 * connection, so a descriptor leaves the list exactly when curl closes it).
 * The progress callback and the capped CURLOPT_TIMEOUT_MS cover transfers
 * that start while a future deadline runs out. */
#include "grow.h"
#include "kube_internal.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "monotonic.h"
#include "xalloc.h"

static long long deadline_of(struct kube_client *c)
{
    return atomic_load_explicit(&c->deadline_ms, memory_order_acquire);
}

bool kube_client_expired(struct kube_client *c)
{
    long long d = deadline_of(c);
    return d != 0 && monotonic_ms() >= d;
}

long kube_client_remaining_ms(struct kube_client *c, long want_ms)
{
    long long d = deadline_of(c);
    if (d == 0)
        return want_ms;
    long long left = d - monotonic_ms();
    if (left < 1)
        left = 1;
    return want_ms > 0 && want_ms < left ? want_ms : (long)left;
}

void kube_client_set_deadline(struct kube_client *c, long long deadline_ms)
{
    atomic_store_explicit(&c->deadline_ms, deadline_ms, memory_order_release);
    if (deadline_ms == 0 || monotonic_ms() < deadline_ms)
        return;
    pthread_mutex_lock(&c->sock_lock);
    for (size_t i = 0; i < c->nsocks; i++)
        shutdown(c->socks[i], SHUT_RDWR);
    pthread_mutex_unlock(&c->sock_lock);
}

static curl_socket_t open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
    (void)purpose;
    struct kube_client *c = clientp;
    if (kube_client_expired(c))
        return CURL_SOCKET_BAD;
    int fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    if (fd < 0)
        return CURL_SOCKET_BAD;
    pthread_mutex_lock(&c->sock_lock);
    GROW(c->socks, c->capsocks, c->nsocks + 1);
    c->socks[c->nsocks++] = fd;
    pthread_mutex_unlock(&c->sock_lock);
    return fd;
}

static int close_socket(void *clientp, curl_socket_t fd)
{
    struct kube_client *c = clientp;
    pthread_mutex_lock(&c->sock_lock);
    for (size_t i = 0; i < c->nsocks; i++)
        if (c->socks[i] == fd) {
            c->socks[i] = c->socks[--c->nsocks];
            break;
        }
    pthread_mutex_unlock(&c->sock_lock);
    return close(fd);
}

static int on_progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    return kube_client_expired(clientp) ? 1 : 0;
}

void kube_cancel_setup(struct kube_client *c, CURL *h)
{
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, c);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, c);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
}
