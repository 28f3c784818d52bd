// SPDX-License-Identifier: Apache-2.0
/* The client object: its copy of the config, a small pool of curl handles,
 * the options and headers every transfer shares, and HTTP error text. */
#include "grow.h"
#include "kube_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "xalloc.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static char *copy_str(const char *src)
{
    return src != NULL ? xstrdup(src) : NULL;
}

/* curl_slist_append, with out of memory fatal like every allocation here. */
static struct curl_slist *slist_add(struct curl_slist *h, const char *line)
{
    struct curl_slist *t = curl_slist_append(h, line);
    if (t == NULL)
        xalloc_die();
    return t;
}

static void config_copy(struct kube_config *dst, const struct kube_config *src)
{
    dst->server = copy_str(src->server);
    dst->ca_file = copy_str(src->ca_file);
    dst->ca_data = copy_str(src->ca_data);
    dst->client_cert_file = copy_str(src->client_cert_file);
    dst->client_cert_data = copy_str(src->client_cert_data);
    dst->client_key_file = copy_str(src->client_key_file);
    dst->client_key_data = copy_str(src->client_key_data);
    dst->token = copy_str(src->token);
    dst->token_file = copy_str(src->token_file);
    dst->insecure_skip_tls_verify = src->insecure_skip_tls_verify;
}

struct kube_client *kube_client_new(const struct kube_config *cfg,
                                    const struct kube_client_options *opts, struct error *err)
{
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK) {
        error_set(err, "initialising libcurl: %s", curl_easy_strerror(curl_init_rc));
        return NULL;
    }
    if (cfg->server == NULL || cfg->server[0] == '\0') {
        error_set(err, "kube client: no server URL in the config");
        return NULL;
    }
    struct kube_client *c = xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->sock_lock, NULL);
    atomic_init(&c->deadline_ms, 0);
    const char *ua = opts && opts->user_agent ? opts->user_agent : "fakehw-dra/kube-client";
    config_copy(&c->cfg, cfg);
    c->user_agent = copy_str(ua);
    size_t n = strlen(c->cfg.server);
    while (n > 0 && c->cfg.server[n - 1] == '/')
        c->cfg.server[--n] = '\0';

    struct kube_client_options o = {0};
    if (opts)
        o = *opts;
    if (o.timeout_ms <= 0)
        o.timeout_ms = 10000;
    if (o.max_attempts <= 0)
        o.max_attempts = 5;
    if (o.backoff_base_ms <= 0)
        o.backoff_base_ms = 100;
    if (o.backoff_max_ms <= 0)
        o.backoff_max_ms = 5000;
    if (o.backoff_max_ms < o.backoff_base_ms)
        o.backoff_max_ms = o.backoff_base_ms;
    o.user_agent = c->user_agent;
    c->opts = o;
    return c;
}

void kube_client_free(struct kube_client *c)
{
    if (c == NULL)
        return;
    for (int i = 0; i < c->nidle; i++)
        curl_easy_cleanup(c->idle[i]);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->sock_lock);
    free(c->socks);
    kube_config_free(&c->cfg);
    free(c->user_agent);
    free(c);
}

CURL *kube_handle_get(struct kube_client *c)
{
    CURL *h = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->nidle > 0)
        h = c->idle[--c->nidle];
    pthread_mutex_unlock(&c->lock);
    if (h == NULL)
        return curl_easy_init();
    /* Reset keeps the handle's open connections, so the next request reuses them. */
    curl_easy_reset(h);
    return h;
}

void kube_handle_put(struct kube_client *c, CURL *h)
{
    if (h == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    if (c->nidle < KUBE_POOL_MAX) {
        c->idle[c->nidle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (h)
        curl_easy_cleanup(h);
}

static void set_blob(CURL *h, CURLoption opt, const char *pem)
{
    /* The client owns the PEM text for longer than any transfer: no copy. */
    struct curl_blob b = {(void *)pem, strlen(pem), CURL_BLOB_NOCOPY};
    curl_easy_setopt(h, opt, &b);
}

void kube_http_setup(struct kube_client *c, CURL *h, long timeout_ms)
{
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, kube_client_remaining_ms(c, c->opts.timeout_ms));
    timeout_ms = kube_client_remaining_ms(c, timeout_ms);
    if (timeout_ms > 0)
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    kube_cancel_setup(c, h);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    /* kubeconfig semantics: a given CA replaces the system trust store. */
    if (c->cfg.ca_data) {
        curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
        set_blob(h, CURLOPT_CAINFO_BLOB, c->cfg.ca_data);
    } else if (c->cfg.ca_file) {
        curl_easy_setopt(h, CURLOPT_CAINFO, c->cfg.ca_file);
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
    }
    if (c->cfg.insecure_skip_tls_verify) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (c->cfg.client_cert_data)
        set_blob(h, CURLOPT_SSLCERT_BLOB, c->cfg.client_cert_data);
    else if (c->cfg.client_cert_file)
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->cfg.client_cert_file);
    if (c->cfg.client_key_data)
        set_blob(h, CURLOPT_SSLKEY_BLOB, c->cfg.client_key_data);
    else if (c->cfg.client_key_file)
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->cfg.client_key_file);
}

struct curl_slist *kube_http_headers(struct kube_client *c, const char *content_type,
                                     struct error *err)
{
    struct curl_slist *h = NULL;
    cleanup_free char *token = NULL;
    struct error ferr;
    if (c->cfg.token_file) {
        /* Projected service-account tokens rotate: read the file every time,
         * falling back to a static token when the file is gone. */
        if (kube_read_token(c->cfg.token_file, &token, &ferr) < 0 && c->cfg.token == NULL) {
            error_set(err, "reading the bearer token: %s", ferr.msg);
            return NULL;
        }
    }
    const char *tok = token ? token : c->cfg.token;
    h = slist_add(h, "Accept: application/json");
    /* No "Expect: 100-continue" round trip before large bodies. */
    h = slist_add(h, "Expect:");
    if (content_type) {
        cleanup_free char *line = xasprintf("Content-Type: %s", content_type);
        h = slist_add(h, line);
    }
    if (tok) {
        cleanup_free char *line = xasprintf("Authorization: Bearer %s", tok);
        h = slist_add(h, line);
    }
    return h;
}

const char *kube_http_reason(long status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "Request Entity Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Entity";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    }
    return "";
}

void kube_http_status_error(struct error *err, const char *method, const char *path, long status,
                            const json_t *body, const char *raw, size_t raw_len)
{
    const char *reason = kube_http_reason(status);
    const char *msg = json_string_value(json_object_get(body, "message"));
    if (msg && msg[0]) {
        error_set(err, "%s %s: %ld%s%s: %s", method, path, status, reason[0] ? " " : "", reason,
                  msg);
        return;
    }
    /* Not a Status object: quote the start of the text (a proxy's error page). */
    size_t n = 0;
    if (body == NULL && raw) {
        while (n < raw_len && n < 200 && raw[n] != '\n' && raw[n] != '\0')
            n++;
    }
    if (n > 0)
        error_set(err, "%s %s: %ld%s%s: %.*s", method, path, status, reason[0] ? " " : "", reason,
                  (int)n, raw);
    else
        error_set(err, "%s %s: %ld%s%s", method, path, status, reason[0] ? " " : "", reason);
}

int kube_buf_append(struct kube_buf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > (size_t)b->limit) {
        b->overflow = true;
        return -1;
    }
    GROW(b->data, b->cap, b->len + n + 1);
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

void kube_buf_free(struct kube_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}
