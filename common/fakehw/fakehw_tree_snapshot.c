// SPDX-License-Identifier: Apache-2.0
/* The tree reader's <root>/snapshot: the whole tree in one file, one
 * generation (format in fakehw_tree.h), parsed as strictly as the files. */
#include "fakehw_tree_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "dns_names.h"
#include "grow.h"

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
        return tree_fail_errno(err, errno, path);
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
            return tree_fail_errno(err, errno, path);
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
    return tree_quoted(out, size, k);
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
    bool good = tree_store_attr(a, "", value, b->dev, NULL) == 0;
    if (good && (a->kind != FAKEHW_KIND_LABEL || !strcmp(b->dev->name, name)))
        return 0;
    snprintf(where, sizeof(where), "%s line %zu: %s", s->path, s->line, a->file);
    if (!good)
        return tree_store_attr(a, where, value, b->dev, err);
    return error_set_and_errno(err, EINVAL, "%s: %s does not match the %s line (line %zu) \"%s\"",
                               where, tree_quoted(q, sizeof(q), b->dev->name),
                               FAKEHW_SNAPSHOT_DEVICE, b->line, name);
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
    if (!tree_parse_u64(v, &said))
        return error_set_and_errno(err, EINVAL, "%s line %zu: %s: %s is not a device count",
                                   s->path, s->line, FAKEHW_SNAPSHOT_END,
                                   tree_quoted(q, sizeof(q), v));
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
    if (!tree_parse_u64(v, &gen))
        return error_set_and_errno(
            err, EINVAL, "%s line %zu: %s: %s is not a generation counter (decimal)", s->path,
            s->line, FAKEHW_FILE_GENERATION, tree_quoted(q, sizeof(q), v));
    if (expect_line(s, FAKEHW_FILE_NODE, v, sizeof(v), err) < 0)
        return -1;
    snprintf(q, sizeof(q), "%s line %zu: %s", s->path, s->line, FAKEHW_FILE_NODE);
    if (tree_check_printable(q, v, err) < 0)
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
        if (tree_grow(&f->list, f->count, &f->cap, where, name, err) < 0)
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
            s->path, s->line, FAKEHW_SNAPSHOT_DEVICE, tree_quoted(q, sizeof(q), b->dev->name));
    }
    f->count++;
    return 0;
}

int fakehw_tree_parse_snapshot(const char *path, const char *text, size_t len,
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
    return tree_finish_list(path, steal_pointer(&f.list), f.count, devs, n, err);
}

int tree_read_snapshot(const char *path, struct fakehw_device **devs, size_t *n, struct error *err)
{
    cleanup_free char *text = NULL;
    size_t len = 0;
    if (read_whole(path, &text, &len, err) < 0)
        return errno == ENOENT ? 1 : -1;
    return fakehw_tree_parse_snapshot(path, text, len, devs, n, err);
}
