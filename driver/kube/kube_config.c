// SPDX-License-Identifier: Apache-2.0
/* Where the API server is and how to authenticate: a kubeconfig file (YAML,
 * its current context) or the in-cluster service account. */
#include "kube_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cleanup.h"
#include "xalloc.h"
#include "yaml_guard.h"

#define SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBECONFIG_MAX     (4L << 20)

/* Bounds checked before libyaml's loader sees a kubeconfig (its scanner is
 * quadratic in flow nesting, its loader in anchors); kubectl's own files
 * nest 4 deep and use neither anchors nor aliases.  Tags are left alone:
 * kubectl accepts them. */
static const struct yaml_guard kubeconfig_limits = {
    .max_nodes = 1 << 20,
    .max_depth = 64,
    .max_anchors = 128,
    .max_aliases = 4096,
    .max_anchor_len = 64,
    .refuse_tags = false,
    .depth_hint = " (a kubeconfig needs 4)",
};

void kube_config_free(struct kube_config *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->server);
    free(cfg->ca_file);
    free(cfg->ca_data);
    free(cfg->client_cert_file);
    free(cfg->client_cert_data);
    free(cfg->client_key_file);
    free(cfg->client_key_data);
    free(cfg->token);
    free(cfg->token_file);
    memset(cfg, 0, sizeof(*cfg));
}

/* Checks that PEM text (from a file or decoded *-data) holds a PEM block, so
 * a wrong file is reported here rather than as a TLS failure later. */
static int check_pem(const char *text, struct error *err)
{
    if (strstr(text, "-----BEGIN ") == NULL)
        return error_set(err, "no PEM block (\"-----BEGIN ...\") in it");
    return 0;
}

/* Joins a relative path onto dir (the kubeconfig's directory). */
static char *resolve_path(const char *dir, const char *p)
{
    if (p[0] == '/' || dir[0] == '\0')
        return xstrdup(p);
    return xasprintf("%s/%s", dir, p);
}

/* ---------- kubeconfig ---------- */

struct kc {
    const char *path;
    char dir[PATH_MAX];
    yaml_document_t doc;
};

static unsigned long line_of(const yaml_node_t *n)
{
    return (unsigned long)n->start_mark.line + 1;
}

static const char *scalar_of(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *map_get(struct kc *k, yaml_node_t *map, const char *key)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *s = scalar_of(yaml_document_get_node(&k->doc, p->key));
        if (s && !strcmp(s, key))
            return yaml_document_get_node(&k->doc, p->value);
    }
    return NULL;
}

/* The line of key in map (where an error about that field points). */
static unsigned long key_line(struct kc *k, yaml_node_t *map, const char *key)
{
    if (map && map->type == YAML_MAPPING_NODE)
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
             p++) {
            yaml_node_t *kn = yaml_document_get_node(&k->doc, p->key);
            const char *s = scalar_of(kn);
            if (s && !strcmp(s, key))
                return line_of(kn);
        }
    return map ? line_of(map) : 0;
}

/* A string field of map: NULL when absent or null (~ or empty). */
static int get_string(struct kc *k, yaml_node_t *map, const char *key, const char *what,
                      const char **out, struct error *err)
{
    *out = NULL;
    yaml_node_t *n = map_get(k, map, key);
    if (n == NULL)
        return 0;
    const char *s = scalar_of(n);
    if (s == NULL)
        return error_set(err, "kubeconfig %s:%lu: %s: %s must be a string", k->path,
                         key_line(k, map, key), what, key);
    if (s[0] == '\0' || (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                         (!strcmp(s, "~") || !strcmp(s, "null"))))
        return 0;
    *out = s;
    return 0;
}

static int get_bool(struct kc *k, yaml_node_t *map, const char *key, const char *what, bool *out,
                    struct error *err)
{
    const char *s;
    if (get_string(k, map, key, what, &s, err) < 0)
        return -1;
    if (s == NULL)
        return 0;
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
        *out = true;
    else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
        *out = false;
    else
        return error_set(err, "kubeconfig %s:%lu: %s: %s: \"%s\" is not true or false", k->path,
                         key_line(k, map, key), what, key, s);
    return 0;
}

/* Finds the entry named name in the list under list_key ("clusters") and
 * returns its body (the map under item_key, "cluster"); NULL when absent. */
static int find_named(struct kc *k, const char *list_key, const char *item_key, const char *name,
                      yaml_node_t **out, struct error *err)
{
    *out = NULL;
    yaml_node_t *root = yaml_document_get_root_node(&k->doc);
    yaml_node_t *list = map_get(k, root, list_key);
    if (list == NULL)
        return 0;
    if (list->type != YAML_SEQUENCE_NODE)
        return error_set(err, "kubeconfig %s:%lu: %s must be a list", k->path, line_of(list),
                         list_key);
    int i = 0;
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++, i++) {
        yaml_node_t *entry = yaml_document_get_node(&k->doc, *it);
        if (entry == NULL || entry->type != YAML_MAPPING_NODE)
            return error_set(err, "kubeconfig %s:%lu: %s[%d] must be a mapping", k->path,
                             entry ? line_of(entry) : 0, list_key, i);
        const char *n = scalar_of(map_get(k, entry, "name"));
        if (n == NULL || strcmp(n, name))
            continue;
        yaml_node_t *body = map_get(k, entry, item_key);
        if (body == NULL || body->type != YAML_MAPPING_NODE)
            return error_set(err, "kubeconfig %s:%lu: %s[%d] \"%s\": %s must be a mapping", k->path,
                             line_of(entry), list_key, i, name, item_key);
        *out = body;
        return 0;
    }
    return 0;
}

/* A PEM credential given either as a file (relative to the kubeconfig) or
 * as base64 *-data.  Both at once is an error, as in kubectl. */
static int get_pem(struct kc *k, yaml_node_t *map, const char *what, const char *file_key,
                   char **file_out, char **data_out, struct error *err)
{
    char data_key[64];
    snprintf(data_key, sizeof(data_key), "%s-data", file_key);
    const char *file, *data;
    if (get_string(k, map, file_key, what, &file, err) < 0 ||
        get_string(k, map, data_key, what, &data, err) < 0)
        return -1;
    if (file && data)
        return error_set(err, "kubeconfig %s:%lu: %s: %s and %s are both set; use one", k->path,
                         key_line(k, map, file_key), what, file_key, data_key);
    if (data) {
        unsigned long line = key_line(k, map, data_key);
        size_t len;
        if (kube_base64_decode(data, data_out, &len, err) < 0)
            return error_prefix(err, "kubeconfig %s:%lu: %s: %s", k->path, line, what, data_key);
        /* The same bound as for the file form. */
        if (len > (size_t)KUBE_MAX_PEM)
            return error_set(err,
                             "kubeconfig %s:%lu: %s: %s: %zu bytes decoded, more than the "
                             "limit of %ld",
                             k->path, line, what, data_key, len, KUBE_MAX_PEM);
        if (check_pem(*data_out, err) < 0)
            return error_prefix(err, "kubeconfig %s:%lu: %s: %s", k->path, line, what, data_key);
    }
    if (file) {
        unsigned long line = key_line(k, map, file_key);
        cleanup_free char *text = NULL;
        *file_out = resolve_path(k->dir, file);
        if (kube_read_file(*file_out, KUBE_MAX_PEM, &text, NULL, err) < 0)
            return error_prefix(err, "kubeconfig %s:%lu: %s: %s", k->path, line, what, file_key);
        if (check_pem(text, err) < 0)
            return error_prefix(err, "kubeconfig %s:%lu: %s: %s %s", k->path, line, what, file_key,
                                *file_out);
    }
    return 0;
}

static int load_cluster(struct kc *k, yaml_node_t *cluster, const char *name,
                        struct kube_config *cfg, struct error *err)
{
    char what[300];
    snprintf(what, sizeof(what), "cluster \"%s\"", name);
    const char *server;
    if (get_string(k, cluster, "server", what, &server, err) < 0)
        return -1;
    if (server == NULL)
        return error_set(err, "kubeconfig %s:%lu: %s: server is not set", k->path, line_of(cluster),
                         what);
    for (const char *c = server; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return error_set(err,
                             "kubeconfig %s:%lu: %s: server contains a control character (0x%02x) "
                             "at byte %td",
                             k->path, key_line(k, cluster, "server"), what, (unsigned char)*c,
                             c - server);
    /* A bare host:port means https, as in client-go. */
    if (strstr(server, "://") == NULL) {
        cfg->server = xasprintf("https://%s", server);
    } else if (strncmp(server, "https://", 8) && strncmp(server, "http://", 7)) {
        return error_set(err, "kubeconfig %s:%lu: %s: server \"%s\" is not an http(s) URL", k->path,
                         key_line(k, cluster, "server"), what, server);
    } else {
        cfg->server = xstrdup(server);
    }
    size_t n = strlen(cfg->server);
    while (n > 0 && cfg->server[n - 1] == '/')
        cfg->server[--n] = '\0';
    if (get_bool(k, cluster, "insecure-skip-tls-verify", what, &cfg->insecure_skip_tls_verify,
                 err) < 0)
        return -1;
    if (get_pem(k, cluster, what, "certificate-authority", &cfg->ca_file, &cfg->ca_data, err) < 0)
        return -1;
    if (cfg->insecure_skip_tls_verify && (cfg->ca_file || cfg->ca_data))
        return error_set(err,
                         "kubeconfig %s:%lu: %s: insecure-skip-tls-verify cannot be combined "
                         "with a certificate authority",
                         k->path, key_line(k, cluster, "insecure-skip-tls-verify"), what);
    return 0;
}

static int load_user(struct kc *k, yaml_node_t *user, const char *name, struct kube_config *cfg,
                     struct error *err)
{
    char what[300];
    snprintf(what, sizeof(what), "user \"%s\"", name);
    if (get_pem(k, user, what, "client-certificate", &cfg->client_cert_file, &cfg->client_cert_data,
                err) < 0 ||
        get_pem(k, user, what, "client-key", &cfg->client_key_file, &cfg->client_key_data, err) < 0)
        return -1;
    bool has_cert = cfg->client_cert_file || cfg->client_cert_data;
    bool has_key = cfg->client_key_file || cfg->client_key_data;
    if (has_cert != has_key)
        return error_set(err, "kubeconfig %s:%lu: %s: %s is set but %s is not", k->path,
                         line_of(user), what, has_cert ? "client-certificate" : "client-key",
                         has_cert ? "client-key" : "client-certificate");
    const char *token, *token_file;
    if (get_string(k, user, "token", what, &token, err) < 0 ||
        get_string(k, user, "tokenFile", what, &token_file, err) < 0)
        return -1;
    if (token) {
        /* Checked as a token file's content is: it goes into every request. */
        if (kube_check_token(token, strlen(token), err) < 0)
            return error_prefix(err, "kubeconfig %s:%lu: %s: token", k->path,
                                key_line(k, user, "token"), what);
        cfg->token = xstrdup(token);
    }
    if (token_file) {
        cleanup_free char *t = NULL;
        cfg->token_file = resolve_path(k->dir, token_file);
        if (kube_read_token(cfg->token_file, &t, err) < 0)
            return error_prefix(err, "kubeconfig %s:%lu: %s: tokenFile", k->path,
                                key_line(k, user, "tokenFile"), what);
    }
    if (has_cert || cfg->token || cfg->token_file)
        return 0;
    /* Credential plugins and basic auth need machinery this client does not have. */
    static const char *const unsupported[] = {"exec", "auth-provider", "username", "password"};
    for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
        if (map_get(k, user, unsupported[i]))
            return error_set(err,
                             "kubeconfig %s:%lu: %s: %s credentials are not supported; use a "
                             "token, tokenFile or client certificate",
                             k->path, key_line(k, user, unsupported[i]), what, unsupported[i]);
    }
    return 0;
}

/* Scope cleanups for libyaml's parser and document: the pointer is set once
 * the object is initialised. */
static void parser_deletep(yaml_parser_t **p)
{
    if (*p != NULL)
        yaml_parser_delete(*p);
}

static void document_deletep(yaml_document_t **d)
{
    if (*d != NULL)
        yaml_document_delete(*d);
}

/* current-context: its cluster and its user, as the config takes them. */
static int load_current_context(struct kc *k, yaml_node_t *root, struct kube_config *cfg,
                                struct error *err)
{
    const char *ctx_name, *cluster_name, *user_name;
    if (get_string(k, root, "current-context", "kubeconfig", &ctx_name, err) < 0)
        return -1;
    if (ctx_name == NULL)
        return error_set(err, "kubeconfig %s: current-context is not set", k->path);
    yaml_node_t *ctx, *cluster, *user = NULL;
    if (find_named(k, "contexts", "context", ctx_name, &ctx, err) < 0)
        return -1;
    if (ctx == NULL)
        return error_set(err, "kubeconfig %s: current-context \"%s\": no such entry in contexts",
                         k->path, ctx_name);
    char what[300];
    snprintf(what, sizeof(what), "context \"%s\"", ctx_name);
    if (get_string(k, ctx, "cluster", what, &cluster_name, err) < 0 ||
        get_string(k, ctx, "user", what, &user_name, err) < 0)
        return -1;
    if (cluster_name == NULL)
        return error_set(err, "kubeconfig %s:%lu: %s: cluster is not set", k->path, line_of(ctx),
                         what);
    if (find_named(k, "clusters", "cluster", cluster_name, &cluster, err) < 0)
        return -1;
    if (cluster == NULL)
        return error_set(err, "kubeconfig %s: %s: cluster \"%s\" not found in clusters", k->path,
                         what, cluster_name);
    if (user_name) {
        if (find_named(k, "users", "user", user_name, &user, err) < 0)
            return -1;
        if (user == NULL)
            return error_set(err, "kubeconfig %s: %s: user \"%s\" not found in users", k->path,
                             what, user_name);
    }
    if (load_cluster(k, cluster, cluster_name, cfg, err) < 0)
        return -1;
    if (user && load_user(k, user, user_name, cfg, err) < 0)
        return -1;
    return 0;
}

static int load_kubeconfig(const char *path, struct kube_config *cfg, struct error *err)
{
    struct kc k = {.path = path};
    yaml_parser_t parser;
    /* Set once initialised; released in reverse order at every return. */
    __attribute__((cleanup(parser_deletep))) yaml_parser_t *parser_open = NULL;
    __attribute__((cleanup(document_deletep))) yaml_document_t *doc_open = NULL;
    cleanup_free char *text = NULL;
    size_t len;

    snprintf(k.dir, sizeof(k.dir), "%s", path);
    char *slash = strrchr(k.dir, '/');
    if (slash == k.dir)
        k.dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        k.dir[0] = '\0';

    if (kube_read_file(path, KUBECONFIG_MAX, &text, &len, err) < 0) {
        if (strchr(path, ':'))
            return error_prefix(err, "kubeconfig (a list of files is not supported)");
        return error_prefix(err, "kubeconfig");
    }
    char label[PATH_MAX + 16];
    snprintf(label, sizeof(label), "kubeconfig %s", path);
    if (yaml_guard_check(text, len, label, &kubeconfig_limits, err) < 0)
        return -1;
    if (!yaml_parser_initialize(&parser))
        return error_set(err, "kubeconfig %s: cannot initialise the YAML parser", path);
    parser_open = &parser;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &k.doc))
        return error_set(err, "kubeconfig %s:%lu:%lu: invalid YAML: %s", path,
                         (unsigned long)parser.problem_mark.line + 1,
                         (unsigned long)parser.problem_mark.column + 1,
                         parser.problem ? parser.problem : "syntax error");
    doc_open = &k.doc;
    yaml_node_t *root = yaml_document_get_root_node(&k.doc);
    if (root == NULL)
        return error_set(err, "kubeconfig %s: the file is empty", path);
    if (root->type != YAML_MAPPING_NODE)
        return error_set(err, "kubeconfig %s:%lu: the top level must be a mapping", path,
                         line_of(root));

    return load_current_context(&k, root, cfg, err);
}

/* ---------- in-cluster ---------- */

static int load_in_cluster(struct kube_config *cfg, struct error *err)
{
    const char *dir = getenv("KUBE_SERVICEACCOUNT_DIR");
    if (dir == NULL || dir[0] == '\0')
        dir = SERVICEACCOUNT_DIR;
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0')
        return error_set(err, "in-cluster config: KUBERNETES_SERVICE_HOST and "
                              "KUBERNETES_SERVICE_PORT are not set (not running in a pod? give a "
                              "kubeconfig instead)");
    char *end;
    errno = 0;
    long p = strtol(port, &end, 10);
    if (errno || end == port || *end != '\0' || p < 1 || p > 65535)
        return error_set(err, "in-cluster config: KUBERNETES_SERVICE_PORT \"%s\" is not a port",
                         port);
    /* An IPv6 address goes in brackets inside a URL. */
    bool v6 = strchr(host, ':') != NULL && host[0] != '[';
    cfg->server = xasprintf(v6 ? "https://[%s]:%ld" : "https://%s:%ld", host, p);
    cfg->token_file = xasprintf("%s/token", dir);
    cfg->ca_file = xasprintf("%s/ca.crt", dir);
    cleanup_free char *token = NULL;
    if (kube_read_token(cfg->token_file, &token, err) < 0)
        return error_prefix(err, "in-cluster config: service account token");
    cleanup_free char *ca = NULL;
    if (kube_read_file(cfg->ca_file, KUBE_MAX_PEM, &ca, NULL, err) < 0)
        return error_prefix(err, "in-cluster config: service account CA");
    if (check_pem(ca, err) < 0)
        return error_prefix(err, "in-cluster config: service account CA %s", cfg->ca_file);
    return 0;
}

int kube_config_load(const char *kubeconfig_path, struct kube_config *cfg, struct error *err)
{
    memset(cfg, 0, sizeof(*cfg));
    int rc = kubeconfig_path && kubeconfig_path[0] ? load_kubeconfig(kubeconfig_path, cfg, err)
                                                   : load_in_cluster(cfg, err);
    if (rc < 0)
        kube_config_free(cfg);
    return rc;
}
