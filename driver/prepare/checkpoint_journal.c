// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_journal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cleanup.h"
#include "k8s_names.h"

#define LINE_FLAGS  (JSON_COMPACT | JSON_SORT_KEYS)
#define CRC_PREFIX  "crc32:"
#define CRC_HEX     8
#define HEADER_SIZE (sizeof(CRC_PREFIX) - 1 + CRC_HEX + 1) /* "crc32:1a2b3c4d " */

/* The body of a removal: what json_dumps makes of {"op", "uid"} with
 * LINE_FLAGS, by hand (an unprepare waits on it) when the uid needs no
 * escaping, as a UID never does.  NULL when it does, or out of memory. */
static char *removal_body(const char *uid)
{
    if (strspn(uid, "0123456789abcdefABCDEF-") != strlen(uid))
        return NULL;
    char *body = NULL;
    return asprintf(&body, "{\"op\":\"%s\",\"uid\":\"%s\"}", CHECKPOINT_OP_UNPREPARED, uid) < 0
               ? NULL
               : body;
}

char *checkpoint_journal_line(const char *uid, const json_t *record, size_t *len, struct error *err)
{
    char *body = record ? NULL : removal_body(uid);
    json_t *change = NULL;
    if (body == NULL) {
        change = record ? json_pack("{s:s, s:s, s:O}", "op", CHECKPOINT_OP_PREPARED, "uid", uid,
                                    "record", (json_t *)record)
                        : json_pack("{s:s, s:s}", "op", CHECKPOINT_OP_UNPREPARED, "uid", uid);
        body = change ? json_dumps(change, LINE_FLAGS) : NULL;
    }
    char *line = NULL;
    int n = body ? asprintf(&line, CRC_PREFIX "%08" PRIx32 " %s\n",
                            checkpoint_crc32(body, strlen(body)), body)
                 : -1;
    free(body);
    json_decref(change);
    if (n < 0) {
        error_set(err, "checkpoint journal: out of memory");
        return NULL;
    }
    *len = (size_t)n;
    return line;
}

/* Checks "crc32:<8 hex> " and the checksum of what follows; n excludes the
 * newline. */
static int check_crc(const char *line, size_t n, struct error *err)
{
    char hex[CRC_HEX + 1];
    if (n < HEADER_SIZE || memcmp(line, CRC_PREFIX, sizeof(CRC_PREFIX) - 1) != 0 ||
        line[HEADER_SIZE - 1] != ' ')
        return error_set(err, "does not start with \"crc32:<8 hex digits> \"");
    memcpy(hex, line + sizeof(CRC_PREFIX) - 1, CRC_HEX);
    hex[CRC_HEX] = '\0';
    if (strspn(hex, "0123456789abcdef") != CRC_HEX)
        return error_set(err, "does not start with \"crc32:<8 hex digits> \"");
    uint32_t want = (uint32_t)strtoul(hex, NULL, 16);
    uint32_t got = checkpoint_crc32(line + HEADER_SIZE, n - HEADER_SIZE);
    if (want != got)
        return error_set(err,
                         "checksum mismatch: the line says crc32:%s, its content hashes to "
                         "crc32:%08" PRIx32,
                         hex, got);
    return 0;
}

/* Applies one change (the JSON after the header) to claims. */
static int apply_change(const char *json, size_t n, const char *driver, json_t *claims,
                        struct error *err)
{
    json_error_t jerr;
    json_auto_t *change = json_loadb(json, n, JSON_REJECT_DUPLICATES, &jerr);
    if (change == NULL)
        return error_set(err, "not valid JSON: column %d: %s", jerr.column, jerr.text);
    const char *op = json_string_value(json_object_get(change, "op"));
    const char *uid = json_string_value(json_object_get(change, "uid"));
    json_t *rec = json_object_get(change, "record");
    bool prepared = op && !strcmp(op, CHECKPOINT_OP_PREPARED);
    bool unprepared = op && !strcmp(op, CHECKPOINT_OP_UNPREPARED);
    if (!json_is_object(change))
        return error_set(err, "not a JSON object");
    if (!prepared && !unprepared)
        return error_set(err, "op must be \"%s\" or \"%s\"", CHECKPOINT_OP_PREPARED,
                         CHECKPOINT_OP_UNPREPARED);
    if (json_object_size(change) != (prepared ? 3u : 2u) || uid == NULL ||
        (prepared && rec == NULL))
        return error_set(err, "want exactly the fields op, uid (a string)%s",
                         prepared ? " and record" : "");
    if (k8s_check_uid("uid", uid, err) < 0)
        return -1;
    if (unprepared) {
        json_object_del(claims, uid);
        return 0;
    }
    if (checkpoint_check_record(driver, uid, rec, err) < 0)
        return -1;
    if (strcmp(json_string_value(json_object_get(rec, "state")), CHECKPOINT_COMPLETED) != 0)
        return error_set(err, "claim %s: state must be %s", uid, CHECKPOINT_COMPLETED);
    if (json_object_set(claims, uid, rec) < 0)
        return error_set(err, "out of memory");
    return 0;
}

int checkpoint_journal_replay(const char *text, size_t len, const char *driver, json_t *claims,
                              struct checkpoint_journal_replay *r, struct error *err)
{
    memset(r, 0, sizeof(*r));
    size_t pos = 0, line = 0;
    while (pos < len) {
        line++;
        const char *start = text + pos;
        const char *nl = memchr(start, '\n', len - pos);
        if (nl == NULL) {
            r->torn_line = line;
            snprintf(r->torn_why, sizeof(r->torn_why), "no newline after its %zu bytes", len - pos);
            return 0;
        }
        size_t n = (size_t)(nl - start);
        struct error e;
        if (check_crc(start, n, &e) < 0) {
            if (pos + n + 1 == len) {
                r->torn_line = line;
                snprintf(r->torn_why, sizeof(r->torn_why), "%s", e.msg);
                return 0;
            }
            return error_set(err, "line %zu: %s", line, e.msg);
        }
        if (apply_change(start + HEADER_SIZE, n - HEADER_SIZE, driver, claims, &e) < 0)
            return error_set(err, "line %zu: %s", line, e.msg);
        pos += n + 1;
        r->lines++;
        r->kept = pos;
    }
    return 0;
}

int checkpoint_journal_load(const char *path, const char *driver, json_t *claims,
                            struct checkpoint_journal_replay *r, int *corrupt, struct error *err)
{
    cleanup_free char *text = NULL;
    size_t len;
    memset(r, 0, sizeof(*r));
    int rc = checkpoint_read_file(path, &text, &len, corrupt, err);
    if (rc != 0)
        return rc;
    rc = checkpoint_journal_replay(text, len, driver, claims, r, err);
    if (rc < 0) {
        *corrupt = 1;
        return error_prefix(err, "%s", path);
    }
    return 0;
}
