// SPDX-License-Identifier: Apache-2.0
/* Strict reader of the fakehw tree: see fakehw_tree_read.h for the contract. */
#include "fakehw_tree_read.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "dns_names.h"
#include "fakehw_attach.h"
#include "grow.h"
#include "xalloc.h"

#define MAX2(a, b) ((a) > (b) ? (a) : (b))
/* Room for the longest attribute of struct fakehw_device. */
#define VALUE_MAX                                                                                  \
    MAX2(MAX2(FAKEHW_NAME_MAX, FAKEHW_TEXT_MAX), MAX2(FAKEHW_REASON_MAX, FAKEHW_PATH_MAX))

static int fail_errno(struct error *err, int errnum, const char *path)
{
    error_set_errno(err, errnum, "%s", path);
    errno = errnum;
    return -1;
}

/* Returns -1 with errno set to errnum, for callers that act on it. */
static int fail_with(int errnum)
{
    errno = errnum;
    return -1;
}

/* Copies s into out as a printable quoted string for messages: control
 * bytes as \xNN, cut after 64 bytes. */
static const char *quoted(char *out, size_t size, const char *s)
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
        return fail_errno(err, errno, path);

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
            return fail_errno(err, e, path);
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
static int check_printable(const char *path, const char *v, struct error *err)
{
    for (size_t i = 0; v[i] != '\0'; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c == 0x7f) {
            char q[128];
            return error_set_and_errno(err, EINVAL,
                                       "%s: %s holds a control character (byte 0x%02x)", path,
                                       quoted(q, sizeof(q), v), c);
        }
    }
    return 0;
}

/* Decimal digits only: no sign, blanks or base prefixes. */
static bool parse_u64(const char *s, uint64_t *out)
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
    if (!parse_u64(neg ? s + 1 : s, &mag))
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
    return parse_u64(v, field);
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
        if (!parse_u64(part[k], &x[k]))
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
static int store_attr(const struct fakehw_attr *a, const char *path, const char *v,
                      struct fakehw_device *dev, struct error *err)
{
    char *field = (char *)dev + a->offset;
    const struct kind_rule *rule = &kind_rules[a->kind];
    if (check_printable(path, v, err) < 0)
        return -1;
    if (!rule->parse(v, field)) {
        char q[128];
        if (rule->what == NULL)
            return error_set_and_errno(err, EINVAL, "%s: is empty", path);
        return error_set_and_errno(err, EINVAL, "%s: %s is not %s", path, quoted(q, sizeof(q), v),
                                   rule->what);
    }
    /* Text kinds: read_value already bounded v by the field size. */
    if (FAKEHW_KIND_IS_TEXT(a->kind))
        memcpy(field, v, strlen(v) + 1);
    return 0;
}

/* Builds "<a>/<b>" (or "<a>/<b>/<c>" when c is not NULL) into out. */
static int join(char *out, size_t size, const char *a, const char *b, const char *c,
                struct error *err)
{
    int n = c ? snprintf(out, size, "%s/%s/%s", a, b, c) : snprintf(out, size, "%s/%s", a, b);
    if (n < 0 || (size_t)n >= size)
        return error_set_and_errno(err, ENAMETOOLONG, "%s/%s%s%s: path is longer than %zu bytes", a,
                                   b, c ? "/" : "", c ? c : "", size - 1);
    return 0;
}

int fakehw_tree_read_device(const char *root, const char *name, struct fakehw_device *dev,
                            struct error *err)
{
    char dir[PATH_MAX];
    if (join(dir, sizeof(dir), root, FAKEHW_DIR_DEVICES, name, err) < 0)
        return -1;
    if (!dns_label_valid(name)) {
        char q[128];
        return error_set_and_errno(err, EINVAL, "%s: device directory name %s is not a DNS label",
                                   dir, quoted(q, sizeof(q), name));
    }
    /* Filled here and copied out only when every attribute is good. */
    struct fakehw_device d;
    memset(&d, 0, sizeof(d));
    char value[VALUE_MAX];
    for (size_t i = 0; i < FAKEHW_ATTR_COUNT; i++) {
        const struct fakehw_attr *a = &fakehw_device_attributes[i];
        char path[PATH_MAX];
        if (join(path, sizeof(path), dir, a->file, NULL, err) < 0)
            return -1;
        size_t cap = a->size ? a->size : FAKEHW_TEXT_MAX;
        if (fakehw_tree_read_value(path, value, cap, err) < 0) {
            if (a->optional && errno == ENOENT)
                continue;
            return -1;
        }
        if (store_attr(a, path, value, &d, err) < 0)
            return -1;
    }
    if (strcmp(d.name, name) != 0) {
        char q[128];
        return error_set_and_errno(err, EINVAL,
                                   "%s/%s: %s does not match the directory name \"%s\"", dir,
                                   FAKEHW_ATTR(NAME), quoted(q, sizeof(q), d.name), name);
    }
    *dev = d;
    return 0;
}

static int compare_devices(const void *pa, const void *pb)
{
    const struct fakehw_device *a = pa, *b = pb;
    if (a->index != b->index)
        return a->index < b->index ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* For finding equal uuids: sorted by uuid, then position. */
static int compare_uuid_refs(const void *pa, const void *pb)
{
    const struct fakehw_device *a = *(const struct fakehw_device *const *)pa;
    const struct fakehw_device *b = *(const struct fakehw_device *const *)pb;
    int c = strcmp(a->uuid, b->uuid);
    return c != 0 ? c : (a < b ? -1 : a > b);
}

/* Same index or uuid twice means the tree is inconsistent: consumers key on
 * both.  devs is sorted by index; where names the tree in messages.  Sorting
 * keeps this O(n log n): 4,096 devices pairwise would cost more than reading
 * them. */
static int check_unique(const char *where, const struct fakehw_device *devs, size_t n,
                        struct error *err)
{
    for (size_t i = 1; i < n; i++)
        if (devs[i - 1].index == devs[i].index)
            return error_set_and_errno(err, EINVAL, "%s: devices %s and %s both have index %ld",
                                       where, devs[i - 1].name, devs[i].name, devs[i].index);
    if (n < 2)
        return 0;
    const struct fakehw_device **refs = malloc(n * sizeof(*refs));
    if (refs == NULL)
        return error_set_and_errno(err, ENOMEM, "%s: out of memory for %zu devices", where, n);
    for (size_t i = 0; i < n; i++)
        refs[i] = &devs[i];
    qsort(refs, n, sizeof(*refs), compare_uuid_refs);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (!strcmp(refs[i - 1]->uuid, refs[i]->uuid))
            rc = error_set_and_errno(err, EINVAL, "%s: devices %s and %s both have uuid %s", where,
                                     refs[i - 1]->name, refs[i]->name, refs[i]->uuid);
    free(refs);
    return rc;
}

/* Makes room for one more device in *list, growing with what was read so
 * far (never from a count the input declares), up to
 * FAKEHW_TREE_MAX_DEVICES; where names the line or directory for the error
 * beyond that. */
static int grow(struct fakehw_device **list, size_t count, size_t *cap, const char *where,
                const char *name, struct error *err)
{
    if (count >= FAKEHW_TREE_MAX_DEVICES)
        return error_set_and_errno(err, EOVERFLOW, "%s: device %s: more than %d devices", where,
                                   name, FAKEHW_TREE_MAX_DEVICES);
    GROW(*list, *cap, count + 1);
    return 0;
}

/* Sorts and checks what either way of reading found, and hands it out;
 * takes list either way. */
static int finish_list(const char *where, struct fakehw_device *taken, size_t count,
                       struct fakehw_device **devs, size_t *n, struct error *err)
{
    cleanup_free struct fakehw_device *list = taken;
    if (count > 1)
        qsort(list, count, sizeof(*list), compare_devices);
    if (check_unique(where, list, count, err) < 0)
        return -1;
    *devs = count > 0 ? steal_pointer(&list) : NULL;
    *n = count;
    return 0;
}

/* ---- the per-file walk: a plain directory, or a fakehw without snapshot ---- */

/* One entry of <root>/devices: a device directory, read into list[*count].
 * 0 also for an entry gone since readdir, which adds nothing. */
static int walk_entry(const char *root, const char *devdir, DIR *d, const char *name,
                      struct fakehw_device **list, size_t *count, size_t *cap, struct error *err)
{
    char q[128];
    if (!dns_label_valid(name))
        return error_set_and_errno(err, EINVAL,
                                   "%s: entry %s is not a DNS label (a device directory name)",
                                   devdir, quoted(q, sizeof(q), name));
    struct stat st;
    if (fstatat(dirfd(d), name, &st, 0) < 0) {
        if (errno == ENOENT)
            return 0; /* removed since readdir */
        int saved = errno;
        error_set_errno(err, saved, "%s/%s", devdir, name);
        return fail_with(saved);
    }
    if (!S_ISDIR(st.st_mode))
        return error_set_and_errno(err, ENOTDIR, "%s/%s: is not a directory", devdir, name);
    if (grow(list, *count, cap, devdir, name, err) < 0)
        return -1;
    if (fakehw_tree_read_device(root, name, &(*list)[*count], err) < 0) {
        int saved = errno;
        if (saved == ENOENT && fstatat(dirfd(d), name, &st, 0) < 0 && errno == ENOENT)
            return 0; /* the whole device went away while we read it */
        return fail_with(saved);
    }
    (*count)++;
    return 0;
}

static int list_walk(const char *root, struct fakehw_device **devs, size_t *n, struct error *err)
{
    char devdir[PATH_MAX];
    if (join(devdir, sizeof(devdir), root, FAKEHW_DIR_DEVICES, NULL, err) < 0)
        return -1;
    cleanup_closedir DIR *d = opendir(devdir);
    if (d == NULL)
        return fail_errno(err, errno, devdir);
    cleanup_free struct fakehw_device *list = NULL;
    size_t count = 0, cap = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL && errno != 0)
            return fail_errno(err, errno, devdir);
        if (de == NULL)
            break;
        if (de->d_name[0] != '.' &&
            walk_entry(root, devdir, d, de->d_name, &list, &count, &cap, err) < 0)
            return -1;
    }
    return finish_list(devdir, steal_pointer(&list), count, devs, n, err);
}

/* ---- <root>/snapshot: the whole tree in one file (format in fakehw_tree.h) ---- */

/* Far above any real inventory: 4,096 devices take about 1.6 MiB, 6 MiB
 * with every health reason at its 511-byte maximum.  The buffer grows with
 * what read(2) returns, so a short file never costs more than its size. */
#define SNAPSHOT_MAX (16u << 20)

/* Reads the whole file with as few read(2)s as the kernel allows.  On
 * failure errno is the cause (ENOENT: there is no snapshot). */
static int read_whole(const char *path, char **text, size_t *len, struct error *err)
{
    cleanup_close int fd = -1;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return fail_errno(err, errno, path);
    cleanup_free char *buf = NULL;
    size_t cap = 0, got = 0;
    GROW(buf, cap, 256u << 10);
    for (;;) {
        if (got == cap) {
            if (cap >= SNAPSHOT_MAX)
                return error_set_and_errno(err, EOVERFLOW, "%s: larger than 16 MiB", path);
            GROW(buf, cap, cap * 2);
        }
        /* The file is rendered once per open, so reading on after a short
         * read never mixes two versions: read until EOF. */
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return fail_errno(err, errno, path);
        if (r == 0)
            break;
        got += (size_t)r;
    }
    *text = steal_pointer(&buf);
    *len = got;
    return 0;
}

/* A cursor over the lines of a snapshot; errors name path and line. */
struct snap {
    const char *path;
    const char *text;
    size_t len, pos;
    size_t line; /* number of the current line, from 1 */
    const char *key, *value;
    size_t key_len, value_len;
};

static bool key_is(const struct snap *s, const char *key)
{
    return s->key_len == strlen(key) && !memcmp(s->key, key, s->key_len);
}

/* The current key, quoted for messages. */
static const char *key_quoted(const struct snap *s, char *out, size_t size)
{
    char k[80];
    size_t n = s->key_len < sizeof(k) - 1 ? s->key_len : sizeof(k) - 1;
    memcpy(k, s->key, n);
    k[n] = '\0';
    return quoted(out, size, k);
}

/* Moves to the next line: 1, or 0 at the end of the text, or -1 with err
 * for a line that is cut short, holds a NUL or has no "KEY VALUE" shape. */
static int next_line(struct snap *s, struct error *err)
{
    if (s->pos == s->len)
        return 0;
    s->line++;
    const char *p = s->text + s->pos;
    const char *nl = memchr(p, '\n', s->len - s->pos);
    if (nl == NULL)
        return error_set_and_errno(err, EINVAL,
                                   "%s line %zu: cut short (no newline at the end of the file)",
                                   s->path, s->line);
    size_t n = (size_t)(nl - p);
    s->pos += n + 1;
    if (memchr(p, '\0', n) != NULL)
        return error_set_and_errno(err, EINVAL, "%s line %zu: holds a NUL byte", s->path, s->line);
    const char *space = memchr(p, ' ', n);
    if (space == NULL) {
        char q[128];
        s->key = p;
        s->key_len = n;
        if (n == 0)
            return error_set_and_errno(err, EINVAL, "%s line %zu: is empty", s->path, s->line);
        return error_set_and_errno(err, EINVAL,
                                   "%s line %zu: %s has no space and value after the key", s->path,
                                   s->line, key_quoted(s, q, sizeof(q)));
    }
    s->key = p;
    s->key_len = (size_t)(space - p);
    s->value = space + 1;
    s->value_len = n - s->key_len - 1;
    return 1;
}

/* Copies the current value into buf (size bytes, NUL included). */
static int take_value(const struct snap *s, const char *field, char *buf, size_t size,
                      struct error *err)
{
    if (s->value_len >= size)
        return error_set_and_errno(err, EOVERFLOW,
                                   "%s line %zu: %s: value is longer than %zu bytes", s->path,
                                   s->line, field, size - 1);
    memcpy(buf, s->value, s->value_len);
    buf[s->value_len] = '\0';
    return 0;
}

/* Reads the line that must come next: KEY VALUE with this key. */
static int expect_line(struct snap *s, const char *key, char *buf, size_t size, struct error *err)
{
    int r = next_line(s, err);
    if (r < 0)
        return -1;
    if (r == 0 && s->line == 0)
        return error_set_and_errno(err, EINVAL, "%s: is empty (no %s line)", s->path, key);
    if (r == 0)
        return error_set_and_errno(err, EINVAL,
                                   "%s: ends after line %zu, before the %s line (cut short)",
                                   s->path, s->line, key);
    if (!key_is(s, key)) {
        char q[128];
        return error_set_and_errno(err, EINVAL, "%s line %zu: expected the %s line, found key %s",
                                   s->path, s->line, key, key_quoted(s, q, sizeof(q)));
    }
    return take_value(s, key, buf, size, err);
}

/* The attribute the current key names, trying first the one after the
 * previous line's (fakehw writes them in table order), so a line costs one
 * comparison instead of up to 18. */
static const struct fakehw_attr *find_attr(const struct snap *s, size_t hint)
{
    for (size_t k = 0; k < FAKEHW_ATTR_COUNT; k++) {
        size_t i = (hint + k) % FAKEHW_ATTR_COUNT;
        if (key_is(s, fakehw_device_attributes[i].file))
            return &fakehw_device_attributes[i];
    }
    return NULL;
}

/* The device block being read. */
struct block {
    struct fakehw_device *dev; /* NULL before the first device line */
    size_t line;               /* of its device line */
    bool seen[FAKEHW_ATTR_COUNT];
    size_t next; /* index of the attribute after the last one read */
};

/* A block ends (at the next device line or the end line): it must have had
 * every attribute. */
static int end_block(const struct snap *s, const struct block *b, struct error *err)
{
    if (b->dev == NULL)
        return 0;
    for (size_t i = 0; i < FAKEHW_ATTR_COUNT; i++)
        if (!b->seen[i] && !fakehw_device_attributes[i].optional)
            return error_set_and_errno(err, EINVAL,
                                       "%s line %zu: device %s: no %s line in its block", s->path,
                                       b->line, b->dev->name, fakehw_device_attributes[i].file);
    return 0;
}

/* An attribute line of the current block. */
static int attr_line(const struct snap *s, struct block *b, struct error *err)
{
    char q[128], where[PATH_MAX + 128], value[VALUE_MAX];
    const struct fakehw_attr *a = find_attr(s, b->next);
    if (a == NULL && (key_is(s, FAKEHW_FILE_GENERATION) || key_is(s, FAKEHW_FILE_NODE)))
        return error_set_and_errno(err, EINVAL, "%s line %zu: a second %s line", s->path, s->line,
                                   key_is(s, FAKEHW_FILE_NODE) ? FAKEHW_FILE_NODE
                                                               : FAKEHW_FILE_GENERATION);
    if (a == NULL)
        return error_set_and_errno(err, EINVAL, "%s line %zu: unknown key %s", s->path, s->line,
                                   key_quoted(s, q, sizeof(q)));
    if (b->dev == NULL)
        return error_set_and_errno(err, EINVAL, "%s line %zu: %s: comes before the first %s line",
                                   s->path, s->line, a->file, FAKEHW_SNAPSHOT_DEVICE);
    size_t i = (size_t)(a - fakehw_device_attributes);
    if (b->seen[i])
        return error_set_and_errno(err, EINVAL, "%s line %zu: %s: a second %s line for device %s",
                                   s->path, s->line, a->file, a->file, b->dev->name);
    b->seen[i] = true;
    b->next = i + 1;
    if (take_value(s, a->file, value, a->size ? a->size : FAKEHW_TEXT_MAX, err) < 0)
        return -1;
    char name[FAKEHW_NAME_MAX];
    memcpy(name, b->dev->name, sizeof(name));
    /* Messages read "<where>: <claim>"; where is only built for a bad value
     * (formatting it for each of 73,728 lines would cost more than the
     * parse), and store_attr is called again to fill err. */
    bool good = store_attr(a, "", value, b->dev, NULL) == 0;
    if (good && (a->kind != FAKEHW_KIND_LABEL || !strcmp(b->dev->name, name)))
        return 0;
    snprintf(where, sizeof(where), "%s line %zu: %s", s->path, s->line, a->file);
    if (!good)
        return store_attr(a, where, value, b->dev, err);
    return error_set_and_errno(err, EINVAL, "%s: %s does not match the %s line (line %zu) \"%s\"",
                               where, quoted(q, sizeof(q), b->dev->name), FAKEHW_SNAPSHOT_DEVICE,
                               b->line, name);
}

/* For finding a device named twice: sorted by name, then line. */
struct named_line {
    const char *name;
    size_t line;
};

static int compare_named_lines(const void *pa, const void *pb)
{
    const struct named_line *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c != 0 ? c : (a->line < b->line ? -1 : a->line > b->line);
}

static int check_names_unique(const struct snap *s, const struct fakehw_device *list,
                              const size_t *lines, size_t count, struct error *err)
{
    if (count < 2)
        return 0;
    struct named_line *nl = malloc(count * sizeof(*nl));
    if (nl == NULL)
        return error_set_and_errno(err, ENOMEM, "%s: out of memory for %zu devices", s->path,
                                   count);
    for (size_t i = 0; i < count; i++)
        nl[i] = (struct named_line){list[i].name, lines[i]};
    qsort(nl, count, sizeof(*nl), compare_named_lines);
    int rc = 0;
    for (size_t i = 1; i < count && rc == 0; i++)
        if (!strcmp(nl[i - 1].name, nl[i].name))
            rc = error_set_and_errno(err, EINVAL,
                                     "%s line %zu: device %s: a second block for it (the first "
                                     "is at line %zu)",
                                     s->path, nl[i].line, nl[i].name, nl[i - 1].line);
    free(nl);
    return rc;
}

/* The end line: the count of device blocks, then nothing more. */
static int end_line(struct snap *s, size_t count, struct error *err)
{
    char v[32], q[128];
    uint64_t said;
    if (take_value(s, FAKEHW_SNAPSHOT_END, v, sizeof(v), err) < 0)
        return -1;
    if (!parse_u64(v, &said))
        return error_set_and_errno(err, EINVAL, "%s line %zu: %s: %s is not a device count",
                                   s->path, s->line, FAKEHW_SNAPSHOT_END, quoted(q, sizeof(q), v));
    if (said != count)
        return error_set_and_errno(
            err, EINVAL, "%s line %zu: %s: says %" PRIu64 " devices, the snapshot has %zu", s->path,
            s->line, FAKEHW_SNAPSHOT_END, said, count);
    size_t at = s->line;
    int r = next_line(s, err);
    if (r != 0)
        return r < 0 ? -1
                     : error_set_and_errno(err, EINVAL,
                                           "%s line %zu: comes after the %s line (line %zu)",
                                           s->path, s->line, FAKEHW_SNAPSHOT_END, at);
    return 0;
}

/* The generation and node lines that open a snapshot. */
static int header_lines(struct snap *s, struct error *err)
{
    char v[256], q[128];
    uint64_t gen;
    if (expect_line(s, FAKEHW_FILE_GENERATION, v, 32, err) < 0)
        return -1;
    if (!parse_u64(v, &gen))
        return error_set_and_errno(
            err, EINVAL, "%s line %zu: %s: %s is not a generation counter (decimal)", s->path,
            s->line, FAKEHW_FILE_GENERATION, quoted(q, sizeof(q), v));
    if (expect_line(s, FAKEHW_FILE_NODE, v, sizeof(v), err) < 0)
        return -1;
    snprintf(q, sizeof(q), "%s line %zu: %s", s->path, s->line, FAKEHW_FILE_NODE);
    if (check_printable(q, v, err) < 0)
        return -1;
    if (v[0] == '\0')
        return error_set_and_errno(err, EINVAL, "%s: is empty", q);
    return 0;
}

/* The devices read so far, and the line of each one's device line. */
struct found {
    struct fakehw_device *list;
    size_t *lines;
    size_t count, cap, lines_cap;
};

static void found_clear(struct found *f)
{
    free(f->list);
    free(f->lines);
}

/* A device line: ends the block before it and opens the next one.  The list
 * grows with the blocks read (a block must be complete before the next one
 * starts), never from the number of device lines the text claims: a hostile
 * snapshot of bare device lines fails at its first block without reserving
 * anything for the rest. */
static int device_line(const struct snap *s, struct block *b, struct found *f, struct error *err)
{
    if (end_block(s, b, err) < 0)
        return -1;
    if (f->count == f->cap || f->count >= FAKEHW_TREE_MAX_DEVICES) {
        char where[PATH_MAX + 32], name[FAKEHW_NAME_MAX];
        snprintf(where, sizeof(where), "%s line %zu", s->path, s->line);
        snprintf(name, sizeof(name), "%.*s", (int)s->value_len, s->value);
        if (grow(&f->list, f->count, &f->cap, where, name, err) < 0)
            return -1;
    }
    GROW(f->lines, f->lines_cap, f->count + 1);
    memset(b, 0, sizeof(*b));
    b->dev = &f->list[f->count];
    b->line = s->line;
    f->lines[f->count] = s->line;
    memset(b->dev, 0, sizeof(*b->dev));
    if (take_value(s, FAKEHW_SNAPSHOT_DEVICE, b->dev->name, sizeof(b->dev->name), err) < 0)
        return -1;
    if (!dns_label_valid(b->dev->name)) {
        char q[128];
        return error_set_and_errno(
            err, EINVAL, "%s line %zu: %s: %s is not a DNS label (a device directory name)",
            s->path, s->line, FAKEHW_SNAPSHOT_DEVICE, quoted(q, sizeof(q), b->dev->name));
    }
    f->count++;
    return 0;
}

static int parse_snapshot(const char *path, const char *text, size_t len,
                          struct fakehw_device **devs, size_t *n, struct error *err)
{
    struct snap s = {.path = path, .text = text, .len = len};
    if (header_lines(&s, err) < 0)
        return -1;
    __attribute__((cleanup(found_clear))) struct found f = {0};
    struct block b = {0};
    for (;;) {
        int r = next_line(&s, err);
        if (r < 0)
            return -1;
        if (r == 0)
            return error_set_and_errno(err, EINVAL,
                                       "%s: ends after line %zu without the %s line (cut short)",
                                       path, s.line, FAKEHW_SNAPSHOT_END);
        if (key_is(&s, FAKEHW_SNAPSHOT_END))
            break;
        r = key_is(&s, FAKEHW_SNAPSHOT_DEVICE) ? device_line(&s, &b, &f, err)
                                               : attr_line(&s, &b, err);
        if (r < 0)
            return -1;
    }
    if (end_block(&s, &b, err) < 0 || check_names_unique(&s, f.list, f.lines, f.count, err) < 0 ||
        end_line(&s, f.count, err) < 0)
        return -1;
    return finish_list(path, steal_pointer(&f.list), f.count, devs, n, err);
}

int fakehw_tree_list(const char *root, struct fakehw_device **devs, size_t *n, struct error *err)
{
    char path[PATH_MAX];
    if (join(path, sizeof(path), root, FAKEHW_FILE_SNAPSHOT, NULL, err) < 0)
        return -1;
    cleanup_free char *text = NULL;
    size_t len = 0;
    if (read_whole(path, &text, &len, err) < 0)
        return errno == ENOENT ? list_walk(root, devs, n, err) : -1;
    return parse_snapshot(path, text, len, devs, n, err);
}

int fakehw_tree_read_node(const char *root, char *buf, size_t size, struct error *err)
{
    char path[PATH_MAX];
    if (join(path, sizeof(path), root, FAKEHW_FILE_NODE, NULL, err) < 0)
        return -1;
    cleanup_free char *tmp = xmalloc(size);
    if (fakehw_tree_read_value(path, tmp, size, err) < 0 || check_printable(path, tmp, err) < 0)
        return -1;
    if (*tmp == '\0')
        return error_set_and_errno(err, EINVAL, "%s: is empty", path);
    memcpy(buf, tmp, strlen(tmp) + 1);
    return 0;
}

int fakehw_tree_parse_generation(const char *path, const char *text, size_t len, uint64_t *gen,
                                 struct error *err)
{
    char buf[32];
    if (len > 0 && text[len - 1] == '\n')
        len--;
    if (len >= sizeof(buf))
        return error_set_and_errno(err, EOVERFLOW, "%s: value is longer than %zu bytes", path,
                                   sizeof(buf) - 1);
    memcpy(buf, text, len);
    buf[len] = '\0';
    uint64_t v;
    if (memchr(text, '\0', len) != NULL || !parse_u64(buf, &v)) {
        char q[128];
        return error_set_and_errno(err, EINVAL, "%s: %s is not a generation counter (decimal)",
                                   path, quoted(q, sizeof(q), buf));
    }
    *gen = v;
    return 0;
}

int fakehw_tree_read_generation(const char *root, uint64_t *gen, struct error *err)
{
    char path[PATH_MAX];
    if (join(path, sizeof(path), root, FAKEHW_FILE_GENERATION, NULL, err) < 0)
        return -1;
    char buf[32];
    if (fakehw_tree_read_value(path, buf, sizeof(buf), err) < 0)
        return -1;
    return fakehw_tree_parse_generation(path, buf, strlen(buf), gen, err);
}
