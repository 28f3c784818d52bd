// SPDX-License-Identifier: Apache-2.0
#include "gpu_config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_entry.h"
#include "strict_json.h"

/* One parsed config entry of this driver. */
struct entry {
    const json_t *requests; /* array, or NULL = all */
    bool has_sharing;
    enum gpu_sharing_strategy strategy;
    const char *interval;
    long partition_count;
    json_t *env; /* NULL when not given; owned */
};

static const char *const intervals[] = {"Default", "Short", "Medium", "Long"};

const char *gpu_sharing_strategy_name(enum gpu_sharing_strategy s)
{
    return s == GPU_SHARING_SPACE_PARTITIONING ? "SpacePartitioning" : "TimeSlicing";
}

static int parse_time_slicing(const json_t *ts, struct entry *e, struct error *err)
{
    static const char *const fields[] = {"interval", NULL};
    if (strict_json_object_of(ts, "sharing.timeSlicing", fields, err) < 0)
        return -1;
    const json_t *iv = strict_json_field(ts, "interval");
    if (iv == NULL)
        return 0;
    if (strict_json_string(iv, "sharing.timeSlicing.interval", err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(intervals) / sizeof(intervals[0]); i++)
        if (!strcmp(json_string_value(iv), intervals[i])) {
            e->interval = intervals[i];
            return 0;
        }
    return error_set(err,
                     "field \"sharing.timeSlicing.interval\": \"%s\" is not one of Default, "
                     "Short, Medium, Long",
                     json_string_value(iv));
}

static int parse_space_partitioning(const json_t *sp, struct entry *e, struct error *err)
{
    static const char *const fields[] = {"partitionCount", NULL};
    if (strict_json_object_of(sp, "sharing.spacePartitioning", fields, err) < 0)
        return -1;
    const json_t *pc = strict_json_field(sp, "partitionCount");
    if (pc == NULL)
        return 0;
    if (!json_is_integer(pc))
        return error_set(err, "field \"sharing.spacePartitioning.partitionCount\" must be an "
                              "integer");
    json_int_t count = json_integer_value(pc);
    if (count < 1 || count > GPU_CONFIG_PARTITION_MAX)
        return error_set(err,
                         "field \"sharing.spacePartitioning.partitionCount\": %lld is not "
                         "between 1 and %d",
                         (long long)count, GPU_CONFIG_PARTITION_MAX);
    e->partition_count = (long)count;
    return 0;
}

static int parse_sharing(const json_t *sharing, struct entry *e, struct error *err)
{
    static const char *const fields[] = {"strategy", "timeSlicing", "spacePartitioning", NULL};
    if (strict_json_object_of(sharing, "sharing", fields, err) < 0)
        return -1;
    const json_t *strategy = strict_json_field(sharing, "strategy");
    const json_t *ts = strict_json_field(sharing, "timeSlicing");
    const json_t *sp = strict_json_field(sharing, "spacePartitioning");
    if (strategy == NULL)
        return error_set(err, "field \"sharing.strategy\" is required");
    if (strict_json_string(strategy, "sharing.strategy", err) < 0)
        return -1;
    const char *s = json_string_value(strategy);
    e->has_sharing = true;
    e->interval = "Default";
    e->partition_count = 1;
    if (!strcmp(s, "TimeSlicing")) {
        e->strategy = GPU_SHARING_TIME_SLICING;
        if (sp != NULL)
            return error_set(err, "field \"sharing.spacePartitioning\" is not allowed with "
                                  "strategy TimeSlicing");
        return ts ? parse_time_slicing(ts, e, err) : 0;
    }
    if (!strcmp(s, "SpacePartitioning")) {
        e->strategy = GPU_SHARING_SPACE_PARTITIONING;
        if (ts != NULL)
            return error_set(err, "field \"sharing.timeSlicing\" is not allowed with strategy "
                                  "SpacePartitioning");
        return sp ? parse_space_partitioning(sp, e, err) : 0;
    }
    return error_set(err,
                     "field \"sharing.strategy\": \"%s\" is not one of TimeSlicing, "
                     "SpacePartitioning",
                     s);
}

static bool is_env_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > GPU_CONFIG_ENV_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                  (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return false;
    }
    return true;
}

/* The size limits of an env object (gpu_config.h); values are strings. */
static int env_check_limits(const json_t *env, struct error *err)
{
    size_t n = json_object_size(env), total = 0;
    if (n > GPU_CONFIG_ENV_ENTRIES_MAX)
        return error_set(err, "%zu variables; the limit is %d", n, GPU_CONFIG_ENV_ENTRIES_MAX);
    const char *name;
    json_t *value;
    json_object_foreach((json_t *)env, name, value)
    {
        size_t len = json_string_length(value);
        if (len > GPU_CONFIG_ENV_VALUE_MAX)
            return error_set(err, "the value of %s has %zu bytes; the limit is %d", name, len,
                             GPU_CONFIG_ENV_VALUE_MAX);
        total += strlen(name) + len;
    }
    if (total > GPU_CONFIG_ENV_TOTAL_MAX)
        return error_set(err, "names and values have %zu bytes; the limit is %d", total,
                         GPU_CONFIG_ENV_TOTAL_MAX);
    return 0;
}

static int parse_env(const json_t *env, struct entry *e, struct error *err)
{
    if (strict_json_object(env, "env", err) < 0)
        return -1;
    const char *name;
    json_t *value;
    json_object_foreach((json_t *)env, name, value)
    {
        char path[GPU_CONFIG_ENV_NAME_MAX + 16];
        snprintf(path, sizeof(path), "env.%s", name);
        if (!is_env_name(name))
            return error_set(err,
                             "field \"env\": \"%s\" is not an environment variable name "
                             "([A-Za-z_][A-Za-z0-9_]*, at most %d characters)",
                             name, GPU_CONFIG_ENV_NAME_MAX);
        if (!strncmp(name, "FAKEHW_", 7) || !strncmp(name, "DRA_", 4))
            return error_set(err,
                             "field \"env\": \"%s\" is reserved (names starting with FAKEHW_ "
                             "or DRA_ are set by the driver)",
                             name);
        if (strict_json_string(value, path, err) < 0)
            return -1;
    }
    if (env_check_limits(env, err) < 0)
        return error_prefix(err, "field \"env\"");
    e->env = json_deep_copy(env);
    if (e->env == NULL)
        return error_set(err, "field \"env\": out of memory");
    return 0;
}

static int parse_parameters(const json_t *params, struct entry *e, struct error *err)
{
    static const char *const fields[] = {"apiVersion", "kind", "sharing", "env", NULL};
    if (!json_is_object(params))
        return error_set(err, "must be a JSON object");
    const json_t *api = json_object_get(params, "apiVersion");
    const json_t *kind = json_object_get(params, "kind");
    if (!json_is_string(api))
        return error_set(err, "field \"apiVersion\" is required (want %s)", GPU_CONFIG_API_VERSION);
    if (strcmp(json_string_value(api), GPU_CONFIG_API_VERSION) != 0)
        return error_set(err, "apiVersion \"%s\" is not supported (want %s)",
                         json_string_value(api), GPU_CONFIG_API_VERSION);
    if (!json_is_string(kind))
        return error_set(err, "field \"kind\" is required (want %s)", GPU_CONFIG_KIND);
    if (strcmp(json_string_value(kind), GPU_CONFIG_KIND) != 0)
        return error_set(err, "kind \"%s\" is not supported (want %s)", json_string_value(kind),
                         GPU_CONFIG_KIND);
    if (strict_json_check_fields(params, "", fields, err) < 0)
        return -1;
    const json_t *sharing = strict_json_field(params, "sharing");
    const json_t *env = strict_json_field(params, "env");
    if (sharing != NULL && parse_sharing(sharing, e, err) < 0)
        return -1;
    if (env != NULL && parse_env(env, e, err) < 0)
        return -1;
    return 0;
}

/* Parses config[i] into *e.  Returns 1 when it is for this driver, 0 when it
 * is not (skipped), -1 on error. */
static int parse_entry(const char *driver, const json_t *item, size_t i, const char **source,
                       struct entry *e, struct error *err)
{
    memset(e, 0, sizeof(*e));
    struct config_entry head;
    int r = config_entry_read(driver, item, i, false, &head, err);
    if (r <= 0)
        return r;
    *source = head.source;
    e->requests = head.requests;
    if (parse_parameters(head.parameters, e, err) < 0) {
        json_decref(e->env);
        e->env = NULL;
        return error_prefix(err, "config[%zu] (%s): parameters", i, *source);
    }
    return 1;
}

static void apply(struct gpu_config *c, const struct entry *e)
{
    if (e->has_sharing) {
        c->strategy = e->strategy;
        c->interval = e->interval;
        c->partition_count = e->partition_count;
    }
    if (e->env != NULL)
        json_object_update(c->env, e->env);
}

/* This driver's entries of a config list, parsed; their env is owned. */
struct entries {
    struct entry *v;
    const char **sources;
    size_t n;
};

static void entries_free(struct entries *e)
{
    for (size_t j = 0; j < e->n; j++)
        json_decref(e->v[j].env);
    free(e->v);
    free(e->sources);
}
#define cleanup_entries __attribute__((cleanup(entries_free)))

/* The config of request: the entries that apply to it merged, FromClass
 * entries first, then FromClaim, each in list order. */
static int resolve_one(struct gpu_config *c, const struct entries *e, const char *request,
                       struct error *err)
{
    c->env = json_object();
    if (c->env == NULL)
        return error_set(err, "config: out of memory");
    for (int pass = 0; pass < 2; pass++)
        for (size_t j = 0; j < e->n; j++)
            if ((strcmp(e->sources[j], "FromClass") == 0) == (pass == 0) &&
                config_entry_names_request(e->v[j].requests, request))
                apply(c, &e->v[j]);
    /* Entries within the limits can still merge to more. */
    if (env_check_limits(c->env, err) < 0)
        return error_prefix(err, "request %s: env merged from its config entries", request);
    return 0;
}

static int resolve_all(const char *driver, const json_t *config, const char *const *requests,
                       size_t n, struct gpu_config *out, struct error *err)
{
    size_t total = json_array_size(config);
    cleanup_entries struct entries e = {calloc(total ? total : 1, sizeof(*e.v)),
                                        calloc(total ? total : 1, sizeof(*e.sources)), 0};
    if (e.v == NULL || e.sources == NULL)
        return error_set(err, "config: out of memory");
    for (size_t i = 0; i < total; i++) {
        int r = parse_entry(driver, json_array_get(config, i), i, &e.sources[e.n], &e.v[e.n], err);
        if (r < 0)
            return -1;
        e.n += (size_t)r;
    }
    for (size_t i = 0; i < n; i++)
        if (resolve_one(&out[i], &e, requests[i], err) < 0)
            return -1;
    return 0;
}

int gpu_config_resolve(const char *driver, const json_t *config, const char *const *requests,
                       size_t n, struct gpu_config *out, struct error *err)
{
    if (config != NULL && !json_is_array(config))
        return error_set(err, "status.allocation.devices.config must be a list");
    for (size_t i = 0; i < n; i++)
        out[i] = (struct gpu_config){GPU_SHARING_TIME_SLICING, "Default", 0, NULL};
    if (resolve_all(driver, config, requests, n, out, err) < 0) {
        gpu_config_free(out, n);
        return -1;
    }
    return 0;
}

void gpu_config_free(struct gpu_config *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_decref(c[i].env);
        c[i].env = NULL;
    }
}
