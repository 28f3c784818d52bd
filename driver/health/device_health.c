// SPDX-License-Identifier: Apache-2.0
/* Device health classification, taints and health diffs: see device_health.h. */
#include "device_health.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "utf8.h"

static const char *const effect_names[] = {
    [TAINT_EFFECT_NO_SCHEDULE] = "NoSchedule",
    [TAINT_EFFECT_NO_EXECUTE] = "NoExecute",
    [TAINT_EFFECT_NONE] = "None",
};

static const char *const policy_names[] = {
    [UNHEALTHY_POLICY_AUTO] = "auto",
    [UNHEALTHY_POLICY_TAINT] = "taint",
    [UNHEALTHY_POLICY_REMOVE] = "remove",
};

int taint_effect_parse(const char *text, enum taint_effect *out, struct error *err)
{
    for (size_t i = 0; i < sizeof(effect_names) / sizeof(effect_names[0]); i++) {
        if (text != NULL && strcmp(text, effect_names[i]) == 0) {
            *out = (enum taint_effect)i;
            return 0;
        }
    }
    return error_set(err, "taint effect \"%s\" is not one of NoSchedule, NoExecute, None",
                     text ? text : "");
}

const char *taint_effect_name(enum taint_effect e)
{
    return (size_t)e < sizeof(effect_names) / sizeof(effect_names[0]) ? effect_names[e] : "?";
}

int unhealthy_policy_parse(const char *text, enum unhealthy_policy *out, struct error *err)
{
    for (size_t i = 0; i < sizeof(policy_names) / sizeof(policy_names[0]); i++) {
        if (text != NULL && strcmp(text, policy_names[i]) == 0) {
            *out = (enum unhealthy_policy)i;
            return 0;
        }
    }
    return error_set(err, "unhealthy device policy \"%s\" is not one of taint, remove, auto",
                     text ? text : "");
}

const char *unhealthy_policy_name(enum unhealthy_policy p)
{
    return (size_t)p < sizeof(policy_names) / sizeof(policy_names[0]) ? policy_names[p] : "?";
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Finds "XID <n>" (any case; "XID79", "xid=79", "Xid: 79" too) as a word in
 * reason.  Returns the code, or -1. */
static long find_xid(const char *reason)
{
    for (const char *p = reason; *p; p++) {
        if (strncasecmp(p, "xid", 3) != 0 || (p > reason && is_alnum(p[-1])))
            continue;
        const char *q = p + 3;
        for (int skipped = 0; skipped < 3 && (*q == ' ' || *q == ':' || *q == '=' || *q == '#' ||
                                              *q == '-' || *q == '_');
             skipped++)
            q++;
        long code = 0;
        int digits = 0;
        while (*q >= '0' && *q <= '9' && digits < 6) {
            code = code * 10 + (*q - '0');
            q++;
            digits++;
        }
        if (digits > 0 && digits < 6 && !is_alnum(*q))
            return code;
    }
    return -1;
}

void health_taint_value(const char *reason, char *buf, size_t size)
{
    if (size == 0)
        return;
    long xid = reason ? find_xid(reason) : -1;
    if (xid >= 0) {
        snprintf(buf, size, "XID-%ld", xid);
        return;
    }
    size_t limit = size - 1 < LABEL_VALUE_MAX ? size - 1 : LABEL_VALUE_MAX;
    size_t n = 0;
    for (const char *p = reason ? reason : ""; *p && n < limit; p++) {
        char c = *p;
        if (is_alnum(c) || c == '.' || c == '_' || c == '-') {
            buf[n++] = c;
        } else if (n > 0 && buf[n - 1] != '-') {
            buf[n++] = '-';
        }
    }
    buf[n] = '\0';
    /* A label value starts and ends with a letter or digit. */
    while (n > 0 && !is_alnum(buf[n - 1]))
        buf[--n] = '\0';
    size_t start = 0;
    while (start < n && !is_alnum(buf[start]))
        start++;
    memmove(buf, buf + start, n - start + 1);
    if (buf[0] == '\0')
        snprintf(buf, size, "unhealthy");
}

bool label_value_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return true;
    if (n > LABEL_VALUE_MAX || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    }
    return true;
}

bool condition_reason_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > CONDITION_REASON_MAX || !isalpha((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!is_alnum(s[i]) && s[i] != '_' && s[i] != ',' && s[i] != ':')
            return false;
    }
    return true;
}

/* An XID on a device whose health state is healthy: fatal ones make it
 * unhealthy, ignored ones only say so. */
static void classify_xid(const struct fakehw_device *d, const struct health_policy *policy,
                         struct device_health *out)
{
    bool nvidia = policy->personality == PERSONALITY_NVIDIA;
    if (out->xid_ignored) {
        out->healthy = true;
        snprintf(out->reason, sizeof(out->reason), "DeviceHealthy");
        const char *what = xid_policy_ignored_what(d->xid);
        snprintf(out->message, sizeof(out->message),
                 "%s is healthy: XID %ld%s%s%s is an application error, ignored", d->name, d->xid,
                 what ? " (" : "", what ? what : "", what ? ")" : "");
        return;
    }
    if (!nvidia)
        snprintf(out->taint_value, sizeof(out->taint_value), "XID-%ld", d->xid);
    snprintf(out->reason, sizeof(out->reason), "XID%ld", d->xid);
    snprintf(out->message, sizeof(out->message),
             "%s reported XID %ld, a fatal XID (not one of the ignored XIDs)", d->name, d->xid);
}

void device_health_classify(const struct fakehw_device *d, bool tree_up,
                            const struct health_policy *policy, struct device_health *out)
{
    static const struct health_policy zero;
    if (policy == NULL)
        policy = &zero;
    memset(out, 0, sizeof(*out));
    if (!tree_up) {
        snprintf(out->taint_value, sizeof(out->taint_value), "fakehw-unavailable");
        snprintf(out->reason, sizeof(out->reason), "FakehwUnavailable");
        if (d->health_reason[0] != '\0')
            utf8_copy_clean(out->message, sizeof(out->message), d->health_reason);
        else
            snprintf(out->message, sizeof(out->message),
                     "the fakehw tree is not available, %s cannot be checked", d->name);
        return;
    }
    if (d->xid > 0) {
        out->xid_ignored = xid_policy_ignored(policy->xids, d->xid);
        if (policy->personality == PERSONALITY_NVIDIA)
            out->xid_taint = d->xid;
    }
    if (d->healthy && d->xid > 0) {
        classify_xid(d, policy, out);
        return;
    }
    if (d->healthy) {
        out->healthy = true;
        snprintf(out->reason, sizeof(out->reason), "DeviceHealthy");
        snprintf(out->message, sizeof(out->message), "%s is healthy", d->name);
        return;
    }
    health_taint_value(d->health_reason, out->taint_value, sizeof(out->taint_value));
    long xid = find_xid(d->health_reason);
    if (xid >= 0)
        snprintf(out->reason, sizeof(out->reason), "XID%ld", xid);
    else
        snprintf(out->reason, sizeof(out->reason), "DeviceUnhealthy");
    /* A hand-made tree may hold any bytes: the message goes to the health
     * stream and the claim status, which both need UTF-8 (one rule, utf8.h). */
    if (d->health_reason[0] != '\0')
        utf8_copy_clean(out->message, sizeof(out->message), d->health_reason);
    else
        snprintf(out->message, sizeof(out->message), "%s is unhealthy (no reason given)", d->name);
}

void device_health_removed(const char *device_name, struct device_health *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->taint_value, sizeof(out->taint_value), "removed");
    snprintf(out->reason, sizeof(out->reason), "DeviceRemoved");
    snprintf(out->message, sizeof(out->message), "%s is no longer in the fakehw inventory",
             device_name);
}

bool device_health_tainted(const struct device_health *h)
{
    return h->taint_value[0] != '\0' || h->xid_taint > 0;
}

/* Appends {"key": <driver><suffix>, "value": value, "effect": effect}. */
static int append_taint(json_t *list, const char *driver, const char *suffix, const char *value,
                        enum taint_effect effect)
{
    char key[256];
    snprintf(key, sizeof(key), "%s%s", driver, suffix);
    return json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "key", key, "value", value,
                                                 "effect", taint_effect_name(effect)));
}

json_t *device_health_taints_json(const char *driver, const struct device_health *h,
                                  enum taint_effect effect)
{
    if (!device_health_tainted(h))
        return NULL;
    json_t *list = json_array();
    if (list == NULL)
        return NULL;
    char code[24];
    snprintf(code, sizeof(code), "%ld", h->xid_taint);
    if ((h->taint_value[0] != '\0' &&
         append_taint(list, driver, DEVICE_HEALTH_TAINT_SUFFIX, h->taint_value, effect) < 0) ||
        (h->xid_taint > 0 && append_taint(list, driver, DEVICE_HEALTH_XID_TAINT_SUFFIX, code,
                                          h->xid_ignored ? TAINT_EFFECT_NONE : effect) < 0)) {
        json_decref(list);
        return NULL;
    }
    return list;
}

static const struct fakehw_device *find_device(const struct fakehw_device *devs, size_t n,
                                               const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(devs[i].name, name) == 0)
            return &devs[i];
    }
    return NULL;
}

static bool same_published(const struct fakehw_device *a, bool a_up, const struct fakehw_device *b,
                           bool b_up, const struct health_policy *policy)
{
    struct device_health ha, hb;
    device_health_classify(a, a_up, policy, &ha);
    device_health_classify(b, b_up, policy, &hb);
    return ha.healthy == hb.healthy && strcmp(ha.taint_value, hb.taint_value) == 0 &&
           ha.xid_taint == hb.xid_taint && ha.xid_ignored == hb.xid_ignored &&
           strcmp(ha.reason, hb.reason) == 0 && strcmp(ha.message, hb.message) == 0 &&
           strcmp(a->uuid, b->uuid) == 0 && strcmp(a->product_name, b->product_name) == 0 &&
           a->memory_bytes == b->memory_bytes;
}

void device_health_diff(const struct fakehw_device *old_devs, size_t n_old, bool old_up,
                        const struct fakehw_device *new_devs, size_t n_new, bool new_up,
                        const struct health_policy *policy, health_change_fn fn, void *ctx)
{
    for (size_t i = 0; i < n_new; i++) {
        const struct fakehw_device *o = find_device(old_devs, n_old, new_devs[i].name);
        if (o == NULL || !same_published(o, old_up, &new_devs[i], new_up, policy))
            fn(ctx, new_devs[i].name);
    }
    for (size_t i = 0; i < n_old; i++) {
        if (find_device(new_devs, n_new, old_devs[i].name) == NULL)
            fn(ctx, old_devs[i].name);
    }
}
