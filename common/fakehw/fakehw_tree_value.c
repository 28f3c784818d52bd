// SPDX-License-Identifier: Apache-2.0
/* The tree reader's values: reading one value file, and the rule that checks
 * and stores the text of each attribute kind (fakehw_tree_read.h). */
#include "fakehw_tree_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dns_names.h"
#include "fakehw_attach.h"
int tree_fail_errno(struct error *err, int errnum, const char *path)
{
    error_set_errno(err, errnum, "%s", path);
    errno = errnum;
    return -1;
}

/* Returns -1 with errno set to errnum, for callers that act on it. */
int tree_fail_with(int errnum)
{
    errno = errnum;
    return -1;
}

/* Copies s into out as a printable quoted string for messages: control
 * bytes as \xNN, cut after 64 bytes. */
const char *tree_quoted(char *out, size_t size, const char *s)
{
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; s[i] != '\0' && o + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == 64) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o++] = '"';
    out[o] = '\0';
    return out;
}

int fakehw_tree_read_value(const char *path, char *buf, size_t size, struct error *err)
{
    if (size < 2)
        return error_set_and_errno(err, EINVAL, "%s: no room to read a value", path);
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return tree_fail_errno(err, errno, path);

    /* Fill buf (its NUL byte included, to hold the "\n" of a value of
     * size-1 bytes); then one more byte decides "too long".  A short read is
     * the end: files here are small, and a FUSE daemon that renders a file
     * per read must not be asked twice and have its two answers mixed. */
    size_t got = 0;
    bool more = false;
    for (;;) {
        char extra;
        char *dst = got < size ? buf + got : &extra;
        size_t want = got < size ? size - got : 1;
        ssize_t r = read(fd, dst, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return tree_fail_errno(err, e, path);
        }
        if (r == 0)
            break;
        if (dst == &extra) {
            more = true;
            break;
        }
        got += (size_t)r;
        if ((size_t)r < want)
            break;
    }
    close(fd);

    if (got > 0 && buf[got - 1] == '\n')
        got--;
    if (more || got >= size)
        return error_set_and_errno(err, EOVERFLOW, "%s: value is longer than %zu bytes", path,
                                   size - 1);
    buf[got] = '\0';
    if (memchr(buf, '\0', got) != NULL)
        return error_set_and_errno(err, EINVAL, "%s: value holds a NUL byte", path);
    if (memchr(buf, '\n', got) != NULL)
        return error_set_and_errno(err, EINVAL, "%s: holds more than one line", path);
    return 0;
}

/* Text that may go into messages, slices and CSV: no control bytes. */
int tree_check_printable(const char *path, const char *v, struct error *err)
{
    for (size_t i = 0; v[i] != '\0'; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c == 0x7f) {
            char q[128];
            return error_set_and_errno(err, EINVAL,
                                       "%s: %s holds a control character (byte 0x%02x)", path,
                                       tree_quoted(q, sizeof(q), v), c);
        }
    }
    return 0;
}

/* Decimal digits only: no sign, blanks or base prefixes. */
bool tree_parse_u64(const char *s, uint64_t *out)
{
    if (*s == '\0')
        return false;
    uint64_t v = 0;
    for (; *s != '\0'; s++) {
        if (!isdigit((unsigned char)*s))
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool parse_long_min(const char *s, long min, long *out)
{
    bool neg = *s == '-';
    uint64_t mag;
    if (!tree_parse_u64(neg ? s + 1 : s, &mag))
        return false;
    if (mag > (uint64_t)LONG_MAX)
        return false; /* LONG_MIN itself is left out: no meaningful value here */
    long v = neg ? -(long)mag : (long)mag;
    if (v < min)
        return false;
    *out = v;
    return true;
}

static bool is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* "DDDD:BB:DD.F" (domain of 4 to 8 hex digits), as sysfs and nvidia-smi write it. */
static bool is_pci_bus_id(const char *s)
{
    const char *colon = strchr(s, ':');
    if (colon == NULL)
        return false;
    size_t dom = (size_t)(colon - s);
    const char *rest = colon + 1;
    return dom >= 4 && dom <= 8 && is_hex(s, dom) && strlen(rest) == 7 && is_hex(rest, 2) &&
           rest[2] == ':' && is_hex(rest + 3, 2) && rest[5] == '.' && rest[6] >= '0' &&
           rest[6] <= '7';
}

/* "MAJOR.MINOR" with decimal numbers, like "9.0". */
static bool is_compute_capability(const char *s)
{
    const char *dot = strchr(s, '.');
    if (dot == NULL || dot == s || dot[1] == '\0')
        return false;
    for (const char *p = s; *p != '\0'; p++)
        if (p != dot && !isdigit((unsigned char)*p))
            return false;
    return true;
}

#define TABLE_ROW(id, file, kind, field, since, slice)                                             \
    [FAKEHW_ATTR_ID_##id] = {                                                                      \
        file, FAKEHW_KIND_##kind, offsetof(struct fakehw_device, field),                           \
        FAKEHW_KIND_IS_TEXT(FAKEHW_KIND_##kind) ? sizeof(((struct fakehw_device *)0)->field) : 0,  \
        SINCE_##since},
#define SINCE_FIRST false
#define SINCE_LATER true
const struct fakehw_attr fakehw_device_attributes[FAKEHW_ATTR_COUNT] = {
    FAKEHW_DEVICE_ATTRIBUTES(TABLE_ROW)};
#undef TABLE_ROW

/* ---- one attribute's text: a rule per kind ---- */

/* Checks v, the text of an attribute of one kind, and stores the typed kinds
 * in field; false when v is not valid.  Text kinds are copied by store_attr. */
typedef bool kind_parse(const char *v, void *field);

static bool parse_label(const char *v, void *field)
{
    (void)field;
    return dns_label_valid(v);
}

static bool parse_text(const char *v, void *field)
{
    (void)field;
    return *v != '\0';
}

static bool parse_text_opt(const char *v, void *field)
{
    (void)v;
    (void)field;
    return true;
}

static bool parse_uuid(const char *v, void *field)
{
    (void)field;
    return *v != '\0' && strpbrk(v, " ,") == NULL;
}

static bool parse_count(const char *v, void *field)
{
    return parse_long_min(v, 0, field);
}

static bool parse_numa(const char *v, void *field)
{
    return parse_long_min(v, -1, field);
}

static bool parse_bytes(const char *v, void *field)
{
    return tree_parse_u64(v, field);
}

static bool parse_pci(const char *v, void *field)
{
    (void)field;
    return is_pci_bus_id(v);
}

static bool parse_cc(const char *v, void *field)
{
    (void)field;
    return *v == '\0' || is_compute_capability(v);
}

static bool parse_path_opt(const char *v, void *field)
{
    (void)field;
    return *v == '\0' || *v == '/';
}

static bool parse_health(const char *v, void *field)
{
    bool healthy = !strcmp(v, FAKEHW_HEALTHY);
    if (!healthy && strcmp(v, FAKEHW_UNHEALTHY) != 0)
        return false;
    *(bool *)field = healthy;
    return true;
}

static bool parse_seconds_or_millis(const char *v, void *field)
{
    long t;
    if (!parse_long_min(v, 0, &t))
        return false;
    *(int64_t *)field = t;
    return true;
}

static bool parse_attach(const char *v, void *field)
{
    return fakehw_attach_parse(v, field);
}

static bool parse_attach_failure(const char *v, void *field)
{
    return fakehw_attach_failure_parse(v, field);
}

static bool parse_bool(const char *v, void *field)
{
    bool yes = !strcmp(v, "true");
    if (!yes && strcmp(v, "false") != 0)
        return false;
    *(bool *)field = yes;
    return true;
}

static bool parse_label_opt(const char *v, void *field)
{
    (void)field;
    return *v == '\0' || dns_label_valid(v);
}

static bool parse_mig_mode(const char *v, void *field)
{
    (void)field;
    return *v == '\0' || !strcmp(v, FAKEHW_MIG_OFF) || !strcmp(v, FAKEHW_MIG_DYNAMIC) ||
           !strcmp(v, FAKEHW_MIG_STATIC);
}

/* "START:SIZE" within 8 memory slices into long[2]; empty is 0:0. */
static bool parse_placement(const char *v, void *field)
{
    long *pl = field;
    if (*v == '\0') {
        pl[0] = pl[1] = 0;
        return true;
    }
    char num[24];
    const char *colon = strchr(v, ':');
    size_t k = colon ? (size_t)(colon - v) : 0;
    long start, size;
    if (colon == NULL || k == 0 || k >= sizeof(num))
        return false;
    memcpy(num, v, k);
    num[k] = '\0';
    if (!parse_long_min(num, 0, &start) || !parse_long_min(colon + 1, 1, &size) || start > 7 ||
        size > 8 || start + size > 8)
        return false;
    pl[0] = start;
    pl[1] = size;
    return true;
}

/* "DEFAULT MIN STEP" bytes into uint64_t[3]; empty is all 0. */
static bool parse_sharing(const char *v, void *field)
{
    uint64_t *sh = field;
    if (*v == '\0') {
        sh[0] = sh[1] = sh[2] = 0;
        return true;
    }
    char part[3][24];
    uint64_t x[3];
    const char *p = v;
    for (int k = 0; k < 3; k++) {
        size_t len = strcspn(p, " ");
        if (len == 0 || len >= sizeof(part[k]) || (k < 2 && p[len] != ' ') ||
            (k == 2 && p[len] != '\0'))
            return false;
        memcpy(part[k], p, len);
        part[k][len] = '\0';
        if (!tree_parse_u64(part[k], &x[k]))
            return false;
        p += len + (k < 2);
    }
    if (x[0] == 0 || x[1] > x[0] || x[2] == 0)
        return false;
    memcpy(sh, x, sizeof(x));
    return true;
}

/* A kind's check, and what a bad value is not: "<path>: <value> is not <what>". */
struct kind_rule {
    kind_parse *parse;
    const char *what;
};

#define QUOTE(s) "\"" s "\""
static const struct kind_rule kind_rules[FAKEHW_KINDS] = {
    [FAKEHW_KIND_LABEL] = {parse_label,
                           "a DNS label (1-63 of a-z, 0-9, '-', alphanumeric at the ends)"},
    [FAKEHW_KIND_TEXT] = {parse_text, NULL}, /* the one failure: "is empty" */
    [FAKEHW_KIND_TEXT_OPT] = {parse_text_opt, NULL},
    [FAKEHW_KIND_UUID] = {parse_uuid, "a UUID (non-empty, no blanks or commas)"},
    [FAKEHW_KIND_COUNT] = {parse_count, "a non-negative integer"},
    [FAKEHW_KIND_NUMA] = {parse_numa, "a NUMA node (an integer >= -1)"},
    [FAKEHW_KIND_BYTES] = {parse_bytes, "a byte count"},
    [FAKEHW_KIND_PCI] = {parse_pci, "a PCI bus id like \"0000:18:00.0\""},
    [FAKEHW_KIND_CC] = {parse_cc, "a compute capability like \"9.0\""},
    [FAKEHW_KIND_PATH_OPT] = {parse_path_opt, "an absolute path"},
    [FAKEHW_KIND_HEALTH] = {parse_health, QUOTE(FAKEHW_HEALTHY) " or " QUOTE(FAKEHW_UNHEALTHY)},
    [FAKEHW_KIND_UNIX_TIME] = {parse_seconds_or_millis, "a Unix time in seconds"},
    [FAKEHW_KIND_MILLIS] = {parse_seconds_or_millis, "a number of milliseconds"},
    [FAKEHW_KIND_ATTACH] = {parse_attach,
                            "an attach state (none, detached, attaching, attached, failed)"},
    [FAKEHW_KIND_ATTACH_FAILURE] = {parse_attach_failure,
                                    "an attach failure (never, next, always)"},
    [FAKEHW_KIND_BOOL] = {parse_bool, "\"true\" or \"false\""},
    [FAKEHW_KIND_LABEL_OPT] = {parse_label_opt, "empty or a DNS label"},
    [FAKEHW_KIND_MIG_MODE] = {parse_mig_mode, "a MIG mode (off, dynamic, static or empty)"},
    [FAKEHW_KIND_PLACEMENT] = {parse_placement,
                               "a MIG placement (START:SIZE within 8 memory slices)"},
    [FAKEHW_KIND_SHARING] = {parse_sharing,
                             "\"DEFAULT MIN STEP\" (bytes, 0 < MIN <= DEFAULT, STEP > 0)"},
};
#undef QUOTE

/* Checks the text v of one attribute read from path and stores it in dev. */
int tree_store_attr(const struct fakehw_attr *a, const char *path, const char *v,
                    struct fakehw_device *dev, struct error *err)
{
    char *field = (char *)dev + a->offset;
    const struct kind_rule *rule = &kind_rules[a->kind];
    if (tree_check_printable(path, v, err) < 0)
        return -1;
    if (!rule->parse(v, field)) {
        char q[128];
        if (rule->what == NULL)
            return error_set_and_errno(err, EINVAL, "%s: is empty", path);
        return error_set_and_errno(err, EINVAL, "%s: %s is not %s", path,
                                   tree_quoted(q, sizeof(q), v), rule->what);
    }
    /* Text kinds: read_value already bounded v by the field size. */
    if (FAKEHW_KIND_IS_TEXT(a->kind))
        memcpy(field, v, strlen(v) + 1);
    return 0;
}
