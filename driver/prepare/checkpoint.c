// SPDX-License-Identifier: Apache-2.0
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "claim_files.h"
#include "k8s_names.h"
#include "prepared_claim.h"
#include "owned_files.h"

#define CANONICAL_FLAGS (JSON_COMPACT | JSON_SORT_KEYS)
#define CHECKPOINT_MAX  (64 << 20) /* far above any real checkpoint; guards the read */

uint32_t checkpoint_crc32(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static int checksum_of(const json_t *claims, char *buf, size_t size, struct error *err)
{
    char *canon = json_dumps(claims, CANONICAL_FLAGS);
    if (canon == NULL)
        return error_set(err, "checkpoint: out of memory");
    snprintf(buf, size, "crc32:%08" PRIx32, checkpoint_crc32(canon, strlen(canon)));
    free(canon);
    return 0;
}

char *checkpoint_encode(const json_t *claims, struct error *err)
{
    char sum[32];
    if (checksum_of(claims, sum, sizeof(sum), err) < 0)
        return NULL;
    json_t *root = json_pack("{s:i, s:s, s:O}", "version", CHECKPOINT_VERSION, "checksum", sum,
                             "claims", claims);
    char *body = root ? json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    char *text = NULL;
    if (body == NULL || asprintf(&text, "%s\n", body) < 0) {
        text = NULL;
        error_set(err, "checkpoint: out of memory");
    }
    free(body);
    json_decref(root);
    return text;
}

static const char *str(const json_t *rec, const char *key)
{
    return json_string_value(json_object_get(rec, key));
}

int checkpoint_check_record(const char *driver, const char *uid, const json_t *rec,
                            struct error *err)
{
    static const char *const fields[] = {"uid",     "namespace", "name",        "state",
                                         "devices", "cdiSpecs",  "metadataDir", NULL};
    if (!json_is_object(rec))
        return error_set(err, "claim %s: not an object", uid);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)rec, key, v)
    {
        const char *const *f = fields;
        while (*f && strcmp(*f, key) != 0)
            f++;
        if (*f == NULL)
            return error_set(err, "claim %s: unknown field \"%s\"", uid, key);
    }
    const char *ns = str(rec, "namespace"), *name = str(rec, "name"), *state = str(rec, "state");
    if (k8s_check_uid("claim key", uid, err) < 0)
        return -1;
    if (str(rec, "uid") == NULL || strcmp(str(rec, "uid"), uid) != 0)
        return error_set(err, "claim %s: uid field does not match its key", uid);
    if (k8s_check_claim_ref(ns, name, uid, err) < 0)
        return error_prefix(err, "claim %s", uid);
    if (state == NULL ||
        (strcmp(state, CHECKPOINT_STARTED) != 0 && strcmp(state, CHECKPOINT_COMPLETED) != 0))
        return error_set(err, "claim %s: state must be %s or %s", uid, CHECKPOINT_STARTED,
                         CHECKPOINT_COMPLETED);
    struct prepared_claim pc;
    if (prepared_claim_from_json(json_object_get(rec, "devices"), &pc, err) < 0)
        return error_prefix(err, "claim %s", uid);
    prepared_claim_free(&pc);
    const json_t *specs = json_object_get(rec, "cdiSpecs");
    if (!json_is_array(specs))
        return error_set(err, "claim %s: cdiSpecs: not a list", uid);
    size_t i;
    json_array_foreach(specs, i, v)
    {
        if (!json_is_string(v) || !claim_owns_spec(driver, uid, json_string_value(v)))
            return error_set(err, "claim %s: cdiSpecs[%zu] is not a CDI spec name of this claim",
                             uid, i);
    }
    const json_t *md = json_object_get(rec, "metadataDir");
    if (md != NULL) {
        char want[K8S_DNS_LABEL_MAX + K8S_DNS_SUBDOMAIN_MAX + 2];
        claim_metadata_dir_name(ns, name, want, sizeof(want), NULL);
        if (!json_is_string(md) || strcmp(json_string_value(md), want) != 0)
            return error_set(err, "claim %s: metadataDir must be \"%s\"", uid, want);
    }
    return 0;
}

int checkpoint_decode(const char *text, size_t len, const char *driver, json_t **claims,
                      struct error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return error_set(err, "not valid JSON: line %d column %d: %s", jerr.line, jerr.column,
                         jerr.text);
    int rc = -1;
    const json_t *version = json_object_get(root, "version");
    const json_t *sum = json_object_get(root, "checksum");
    json_t *c = json_object_get(root, "claims");
    char want[32];
    if (!json_is_object(root)) {
        error_set(err, "not a JSON object");
    } else if (!json_is_integer(version)) {
        error_set(err, "no version number");
    } else if (json_integer_value(version) != CHECKPOINT_VERSION) {
        error_set(err, "version %" JSON_INTEGER_FORMAT " is not supported (this driver reads %d)",
                  json_integer_value(version), CHECKPOINT_VERSION);
    } else if (json_object_size(root) != 3 || !json_is_string(sum) || !json_is_object(c)) {
        error_set(err, "want exactly the fields version, checksum (a string) and claims (an "
                       "object)");
    } else if (checksum_of(c, want, sizeof(want), err) == 0) {
        if (strcmp(json_string_value(sum), want) != 0) {
            error_set(err, "checksum mismatch: the file says %.40s, its claims hash to %s",
                      json_string_value(sum), want);
        } else {
            const char *uid;
            json_t *rec;
            rc = 0;
            json_object_foreach(c, uid, rec)
            {
                if (checkpoint_check_record(driver, uid, rec, err) < 0) {
                    rc = -1;
                    break;
                }
            }
        }
    }
    if (rc == 0)
        *claims = json_incref(c);
    json_decref(root);
    return rc;
}

int checkpoint_read_file(const char *path, char **text, size_t *len, int *corrupt,
                         struct error *err)
{
    *corrupt = 0;
    *text = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        if (errno == ELOOP)
            return owned_link_error(AT_FDCWD, path, path, err);
        return error_set_errno(err, errno, "opening %s", path);
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return error_set_errno(err, e, "stat %s", path);
    }
    if (st.st_size > CHECKPOINT_MAX) {
        close(fd);
        *corrupt = 1;
        return error_set(err, "%s: %lld bytes, more than a checkpoint can be", path,
                         (long long)st.st_size);
    }
    size_t size = (size_t)st.st_size, got = 0;
    char *buf = malloc(size + 1);
    if (buf == NULL) {
        close(fd);
        return error_set(err, "%s: out of memory", path);
    }
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return error_set_errno(err, e, "reading %s", path);
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return 0;
}

int checkpoint_load(const char *path, const char *driver, json_t **claims, int *corrupt,
                    struct error *err)
{
    char *text;
    size_t len;
    int rc = checkpoint_read_file(path, &text, &len, corrupt, err);
    if (rc != 0)
        return rc;
    rc = checkpoint_decode(text, len, driver, claims, err);
    free(text);
    if (rc < 0) {
        *corrupt = 1;
        return error_prefix(err, "%s", path);
    }
    return 0;
}

int checkpoint_write(const char *path, const char *text, struct error *err)
{
    if (atomic_write_file(path, text, strlen(text), 0600, err) < 0)
        return error_prefix(err, "writing checkpoint");
    return 0;
}
