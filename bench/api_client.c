// SPDX-License-Identifier: Apache-2.0
#include "api_client.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

struct api_client {
    CURL *h;
    char *base;
    char *buf; /* the last answer's body */
    size_t len, cap;
};

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    struct api_client *c = ctx;
    size_t add = size * n;
    if (c->len + add + 1 > c->cap) {
        size_t cap = (c->len + add + 1) * 2;
        char *nb = realloc(c->buf, cap);
        if (nb == NULL)
            return 0; /* makes curl fail the transfer */
        c->buf = nb;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, data, add);
    c->len += add;
    c->buf[c->len] = '\0';
    return add;
}

struct api_client *api_client_new(const char *base_url, const struct api_client_tls *tls,
                                  struct error *err)
{
    struct api_client *c = calloc(1, sizeof(*c));
    if (c == NULL || (c->base = strdup(base_url)) == NULL || (c->h = curl_easy_init()) == NULL) {
        api_client_free(c);
        error_set(err, "cannot create an HTTP client (out of memory?)");
        return NULL;
    }
    curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(c->h, CURLOPT_USERAGENT, "fakehw-bench");
    if (tls != NULL) {
        curl_easy_setopt(c->h, CURLOPT_CAINFO, tls->ca);
        curl_easy_setopt(c->h, CURLOPT_SSLCERT, tls->cert);
        curl_easy_setopt(c->h, CURLOPT_SSLKEY, tls->key);
    }
    return c;
}

void api_client_free(struct api_client *c)
{
    if (c == NULL)
        return;
    if (c->h)
        curl_easy_cleanup(c->h);
    free(c->base);
    free(c->buf);
    free(c);
}

/* Runs one request; *code gets the HTTP status. */
static int perform(struct api_client *c, const char *method, const char *path,
                   const char *content_type, const char *body, long *code, struct error *err)
{
    char url[2048];
    snprintf(url, sizeof(url), "%s%s", c->base, path);
    struct curl_slist *hdr = NULL;
    char ct[128];
    if (body) {
        snprintf(ct, sizeof(ct), "Content-Type: %s",
                 content_type ? content_type : "application/json");
        hdr = curl_slist_append(hdr, ct);
    }
    c->len = 0;
    curl_easy_setopt(c->h, CURLOPT_URL, url);
    curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c->h, CURLOPT_HTTPGET, body ? 0L : 1L);
    if (body) {
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    }
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdr);
    CURLcode rc = curl_easy_perform(c->h);
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, NULL);
    curl_slist_free_all(hdr);
    if (rc != CURLE_OK)
        return error_set(err, "%s %s%s: %s", method, c->base, path, curl_easy_strerror(rc));
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, code);
    if (*code < 200 || *code > 299)
        return error_set(err, "%s %s: HTTP %ld: %.300s", method, path, *code, c->buf ? c->buf : "");
    return 0;
}

/* One request with an optional JSON body (content_type NULL: application/json).
 * 0 on a 2xx answer, with *resp the decoded body when resp is not NULL (NULL
 * when empty); -1 with err naming method, path, status and the answer. */
static int api_call(struct api_client *c, const char *method, const char *path,
                    const char *content_type, const char *body, json_t **resp, struct error *err)
{
    long code = 0;
    if (resp)
        *resp = NULL;
    if (perform(c, method, path, content_type, body, &code, err) < 0)
        return -1;
    if (resp && c->len > 0) {
        json_error_t je;
        *resp = json_loadb(c->buf, c->len, 0, &je);
        if (*resp == NULL)
            return error_set(err, "%s %s: the answer is not JSON: %s", method, path, je.text);
    }
    return 0;
}

int api_request(struct api_client *c, const char *method, const char *path, const char *body,
                json_t **resp, struct error *err)
{
    return api_call(c, method, path, NULL, body, resp, err);
}

int api_get_discard(struct api_client *c, const char *path, struct error *err)
{
    long code = 0;
    return perform(c, "GET", path, NULL, NULL, &code, err);
}

/* What the API server keeps of who wrote a claim made from a template: the
 * controller's create, the scheduler's allocation.  Only there so that the
 * claim the plugin reads is as large as a real one (about 2 KB). */
static json_t *managed_fields(void)
{
    static const char text[] =
        "[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\","
        "\"apiVersion\":\"resource.k8s.io/v1\",\"time\":\"2026-11-26T09:00:00Z\","
        "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{},"
        "\"f:resource.kubernetes.io/pod-claim-name\":{}},\"f:generateName\":{},"
        "\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"00000000-0000-4000-8000-"
        "00000000b0d0\\\"}\":{}}},"
        "\"f:spec\":{\"f:devices\":{\"f:requests\":{}}}}},"
        "{\"manager\":\"kube-scheduler\",\"operation\":\"Update\",\"apiVersion\":\"resource.k8s.io/"
        "v1\","
        "\"time\":\"2026-11-26T09:00:01Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{"
        "\"f:allocation\":{\".\":{},\"f:devices\":{\".\":{},\"f:results\":{}},\"f:nodeSelector\":{}"
        "},"
        "\"f:reservedFor\":{\".\":{},\"k:{\\\"resource\\\":\\\"pods\\\",\\\"uid\\\":\\\"00000000-"
        "0000-4000-8000-00000000b0d0\\\"}\":{}}}},"
        "\"subresource\":\"status\"}]";
    return json_loads(text, 0, NULL);
}

/* The allocation results of the claim's devices, all of request "gpu". */
static json_t *allocated_results(const char *driver, const char *pool, char *const *devices,
                                 size_t n)
{
    json_auto_t *results = json_array();
    for (size_t i = 0; results && i < n; i++)
        if (json_array_append_new(results,
                                  json_pack("{s:s, s:s, s:s, s:s}", "request", "gpu", "driver",
                                            driver, "pool", pool, "device", devices[i])) < 0)
            return NULL;
    return steal_pointer(&results);
}

/* Marks claim ns/name allocated (results, the node) and reserved for a pod. */
static int allocate(struct api_client *c, const char *ns, const char *name, const char *pool,
                    const char *uid, json_t *results, struct error *err)
{
    char pod_uid[80], path[512];
    snprintf(pod_uid, sizeof(pod_uid), "%.36s", uid); /* any UID-shaped value */
    json_auto_t *status =
        json_pack("{s:{s:{s:{s:O}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}, s:[{s:s, s:s, s:s}]}}",
                  "status", "allocation", "devices", "results", results, "nodeSelector",
                  "nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator", "In",
                  "values", pool, "reservedFor", "resource", "pods", "name", name, "uid", pod_uid);
    cleanup_free char *text = status ? json_dumps(status, JSON_COMPACT) : NULL;
    if (text == NULL)
        return error_set(err, "out of memory");
    snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s/status",
             ns, name);
    return api_call(c, "PATCH", path, "application/merge-patch+json", text, NULL, err);
}

int api_create_allocated_claim(struct api_client *c, const char *ns, const char *name,
                               const char *driver, const char *pool, char *const *devices, size_t n,
                               char uid[64], struct error *err)
{
    char path[512];
    json_auto_t *claim =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s}, s:[{s:s, s:s, s:s, s:s, s:b, s:b}], s:o},"
                  " s:{s:{s:[{s:s, s:{s:s, s:I}}]}}}",
                  "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata", "name",
                  name, "namespace", ns, "generateName", "bench-pod-gpu-", "annotations",
                  "resource.kubernetes.io/pod-claim-name", "gpu", "ownerReferences", "apiVersion",
                  "v1", "kind", "Pod", "name", "bench-pod", "uid",
                  "00000000-0000-4000-8000-00000000b0d0", "controller", 1, "blockOwnerDeletion", 1,
                  "managedFields", managed_fields(), "spec", "devices", "requests", "name", "gpu",
                  "exactly", "deviceClassName", driver, "count", (json_int_t)n);
    json_auto_t *results = allocated_results(driver, pool, devices, n);
    cleanup_free char *text = claim ? json_dumps(claim, JSON_COMPACT) : NULL;
    if (results == NULL || text == NULL)
        return error_set(err, "out of memory");
    snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims", ns);
    json_auto_t *created = NULL;
    if (api_call(c, "POST", path, NULL, text, &created, err) < 0)
        return -1;
    const char *u = json_string_value(json_object_get(json_object_get(created, "metadata"), "uid"));
    if (u == NULL || strlen(u) >= 64)
        return error_set(err, "POST %s: the created claim has no usable metadata.uid", path);
    snprintf(uid, 64, "%s", u);
    return allocate(c, ns, name, pool, u, results, err) < 0 ? -1 : 0;
}
