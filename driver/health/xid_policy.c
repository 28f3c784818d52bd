// SPDX-License-Identifier: Apache-2.0
/* Fatal and ignored XIDs: see xid_policy.h. */
#include "xid_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakehw_tree.h"
#include "text_list.h"

static const struct {
    long code;
    const char *what;
} defaults[] = {
#define XID_ROW(code, what) {code, what},
    XID_POLICY_IGNORED(XID_ROW)
#undef XID_ROW
};

enum { N_DEFAULTS = sizeof(defaults) / sizeof(defaults[0]) };

/* The policy without additional XIDs (the table is in ascending order:
 * test_xid_policy checks it equals xid_policy_init's). */
static const struct xid_policy default_policy = {
    .n = N_DEFAULTS,
    .ignored =
        {
#define XID_CODE(code, what) code,
            XID_POLICY_IGNORED(XID_CODE)
#undef XID_CODE
        },
};

const struct xid_policy *xid_policy_default(void)
{
    return &default_policy;
}

static int compare_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* One item of the list, blanks trimmed: "" (skipped) or a code. */
static int parse_item(const char *s, size_t len, size_t index, long *code, struct error *err)
{
    while (len > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    *code = 0;
    if (len == 0)
        return 0;
    long v = 0;
    bool ok = len <= 5;
    for (size_t i = 0; ok && i < len; i++) {
        ok = s[i] >= '0' && s[i] <= '9';
        v = v * 10 + (s[i] - '0');
    }
    if (!ok || v < 1 || v > FAKEHW_XID_MAX)
        return error_set(err, "item %zu \"%.*s%s\" is not an XID (a decimal 1..%d)", index + 1,
                         (int)(len < 16 ? len : 16), s, len > 16 ? "..." : "", FAKEHW_XID_MAX);
    *code = v;
    return 0;
}

int xid_policy_init(struct xid_policy *p, const char *additional, struct error *err)
{
    memset(p, 0, sizeof(*p));
    for (size_t i = 0; i < N_DEFAULTS; i++)
        p->ignored[p->n++] = defaults[i].code;
    const char *s = additional ? additional : "";
    for (size_t index = 0;; index++) {
        size_t len = strcspn(s, ",");
        long code;
        if (parse_item(s, len, index, &code, err) < 0)
            return -1;
        if (code > 0) {
            if (p->n == N_DEFAULTS + XID_POLICY_ADDITIONAL_MAX)
                return error_set(err, "more than %d XIDs", XID_POLICY_ADDITIONAL_MAX);
            p->ignored[p->n++] = code;
        }
        if (s[len] == '\0')
            break;
        s += len + 1;
    }
    qsort(p->ignored, p->n, sizeof(p->ignored[0]), compare_long);
    size_t kept = 0;
    for (size_t i = 0; i < p->n; i++)
        if (kept == 0 || p->ignored[kept - 1] != p->ignored[i])
            p->ignored[kept++] = p->ignored[i];
    p->n = kept;
    return 0;
}

bool xid_policy_ignored(const struct xid_policy *p, long xid)
{
    if (p == NULL)
        p = &default_policy;
    return bsearch(&xid, p->ignored, p->n, sizeof(p->ignored[0]), compare_long) != NULL;
}

const char *xid_policy_ignored_what(long xid)
{
    for (size_t i = 0; i < N_DEFAULTS; i++)
        if (defaults[i].code == xid)
            return defaults[i].what;
    return NULL;
}

void xid_policy_format(const struct xid_policy *p, char *buf, size_t size)
{
    struct text_list l = text_list_start(buf, size);
    for (size_t i = 0; i < p->n; i++)
        text_list_add(&l, "%ld", p->ignored[i]);
}
