// SPDX-License-Identifier: Apache-2.0
/* Reading credentials: whole regular files with a size bound, tokens,
 * base64. */
#include "grow.h"
#include "kube_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "xalloc.h"

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a plain file";
}

int kube_read_file(const char *path, long max, char **out, size_t *out_len, struct error *err)
{
    *out = NULL;
    if (out_len)
        *out_len = 0;
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer, with
     * the plugin's SIGTERM handling not yet in place. */
    cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return error_set_errno(err, errno, "%s", path);
    struct stat st;
    if (fstat(fd, &st) < 0)
        return error_set_errno(err, errno, "%s", path);
    if (!S_ISREG(st.st_mode))
        return error_set(err, "%s: %s, not a regular file", path, file_kind(st.st_mode));
    if (st.st_size > max)
        return error_set(err, "%s: %lld bytes, more than the limit of %ld", path,
                         (long long)st.st_size, max);
    cleanup_free char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        GROW(buf, cap, len + 4096 + 1);
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return error_set_errno(err, errno, "%s", path);
        }
        if (r == 0)
            break;
        len += (size_t)r;
        /* The file may grow after the fstat. */
        if ((long)len > max)
            return error_set(err, "%s: more than the limit of %ld bytes", path, max);
    }
    buf[len] = '\0';
    *out = steal_pointer(&buf);
    if (out_len)
        *out_len = len;
    return 0;
}

int kube_check_token(const char *token, size_t len, struct error *err)
{
    if (len > KUBE_MAX_TOKEN)
        return error_set(err, "the token has %zu bytes, more than the limit of %ld", len,
                         KUBE_MAX_TOKEN);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)token[i] < 0x20 || token[i] == 0x7f)
            return error_set(err, "the token contains a control character (0x%02x) at byte %zu",
                             (unsigned char)token[i], i);
    return 0;
}

int kube_read_token(const char *path, char **token, struct error *err)
{
    cleanup_free char *buf = NULL;
    size_t len;
    if (kube_read_file(path, KUBE_MAX_TOKEN, &buf, &len, err) < 0)
        return -1;
    size_t start = strspn(buf, " \t\r\n");
    while (len > start && strchr(" \t\r\n", buf[len - 1]))
        len--;
    if (len == start)
        return error_set(err, "%s: the token file is empty", path);
    if (kube_check_token(buf + start, len - start, err) < 0)
        return error_prefix(err, "%s", path);
    memmove(buf, buf + start, len - start);
    buf[len - start] = '\0';
    *token = steal_pointer(&buf);
    return 0;
}

static int b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

int kube_base64_decode(const char *in, char **out, size_t *out_len, struct error *err)
{
    size_t n = strlen(in);
    cleanup_free char *buf = xmalloc(n / 4 * 3 + 4);
    size_t len = 0, pad = 0, digits = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)in[i];
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')
            continue;
        if (ch == '=') {
            pad++;
            continue;
        }
        int v = b64_value(ch);
        if (v < 0 || pad > 0) {
            if (pad > 0)
                return error_set(err, "invalid base64: data after the '=' padding at offset %zu",
                                 i);
            return error_set(err, "invalid base64: character '%c' (0x%02x) at offset %zu",
                             ch >= 0x20 && ch < 0x7f ? ch : '?', ch, i);
        }
        acc = acc << 6 | (uint32_t)v;
        if (++digits % 4 == 0) {
            buf[len++] = (char)(acc >> 16);
            buf[len++] = (char)(acc >> 8);
            buf[len++] = (char)acc;
            acc = 0;
        }
    }
    switch (digits % 4) {
    case 1:
        return error_set(err, "invalid base64: truncated (%zu digits)", digits);
    case 2:
        buf[len++] = (char)(acc >> 4);
        break;
    case 3:
        buf[len++] = (char)(acc >> 10);
        buf[len++] = (char)(acc >> 2);
        break;
    }
    if (pad > 2 || (pad > 0 && (digits + pad) % 4 != 0))
        return error_set(err, "invalid base64: wrong padding");
    buf[len] = '\0';
    *out = steal_pointer(&buf);
    if (out_len)
        *out_len = len;
    return 0;
}
