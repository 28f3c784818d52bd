// SPDX-License-Identifier: Apache-2.0
#include "k8s_names.h"

#include <string.h>

#include "dns_names.h"

static bool is_lower_hex(char c)
{
    return (c >= 'a' && c <= 'f') || (c >= '0' && c <= '9');
}

bool k8s_is_uid(const char *s)
{
    if (s == NULL || strlen(s) != K8S_UID_LEN)
        return false;
    for (int i = 0; i < K8S_UID_LEN; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !is_lower_hex(s[i]))
            return false;
    }
    return true;
}

/* The rule itself lives in common/base/dns_names.c. */
bool k8s_is_dns_label(const char *s)
{
    return dns_label_valid(s);
}

bool k8s_is_dns_subdomain(const char *s)
{
    return dns_subdomain_valid(s);
}

int k8s_check_uid(const char *what, const char *s, struct error *err)
{
    if (k8s_is_uid(s))
        return 0;
    return error_set(err,
                     "%s \"%.80s\": not a UID (want 36 characters: 8-4-4-4-12 lowercase hex "
                     "digits)",
                     what, s ? s : "");
}

/* A name rule of the API: the test, the longest name, what a valid one is. */
struct name_rule {
    bool (*valid)(const char *s);
    int max;
    const char *want;
};

static const struct name_rule dns_label = {
    k8s_is_dns_label, K8S_DNS_LABEL_MAX,
    "a DNS label (lowercase letters, digits and '-', starting and ending with a letter or digit)"};
static const struct name_rule dns_subdomain = {
    k8s_is_dns_subdomain, K8S_DNS_SUBDOMAIN_MAX,
    "a DNS subdomain (dot-separated labels of lowercase letters, digits and '-')"};

/* 0 when s follows r, else the error: too long, or else not what r wants
 * (then s is short enough to be quoted whole). */
static int check_name(const struct name_rule *r, const char *what, const char *s, struct error *err)
{
    if (r->valid(s))
        return 0;
    if (s != NULL && strlen(s) > (size_t)r->max)
        return error_set(err, "%s \"%.80s...\": longer than %d characters", what, s, r->max);
    return error_set(err, "%s \"%s\": not %s", what, s ? s : "", r->want);
}

int k8s_check_dns_label(const char *what, const char *s, struct error *err)
{
    return check_name(&dns_label, what, s, err);
}

int k8s_check_dns_subdomain(const char *what, const char *s, struct error *err)
{
    return check_name(&dns_subdomain, what, s, err);
}

int k8s_check_claim_ref(const char *ns, const char *name, const char *uid, struct error *err)
{
    if (k8s_check_dns_label("namespace", ns, err) < 0 ||
        k8s_check_dns_subdomain("name", name, err) < 0 || k8s_check_uid("uid", uid, err) < 0)
        return -1;
    return 0;
}
