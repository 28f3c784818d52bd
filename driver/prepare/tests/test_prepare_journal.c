// SPDX-License-Identifier: Apache-2.0
/* Unit tests of the checkpoint journal and its writer: the line format,
 * replay (idempotent, onto an older or a newer snapshot), a torn last line
 * against a bad line in the middle, and the store: appends, compaction at
 * the bound, a short write, and concurrent appends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "driver/prepare/checkpoint.h"
#include "driver/prepare/checkpoint_journal.h"
#include "driver/prepare/checkpoint_store.h"
#include "prepare_fixture.h"
#include "common/tests/test_main.h"
#include "common/tests/test_json.h"

#define SPEC(uid) "k8s.gpu.fakehw.example.com-gpu_" uid ".json"
#define RECORD(uid, name, dev)                                                                     \
    "{\"uid\":\"" uid "\",\"namespace\":\"default\",\"name\":\"" name "\","                        \
    "\"state\":\"PrepareCompleted\",\"devices\":[{\"requestNames\":[\"gpus\"],"                    \
    "\"poolName\":\"node-1\",\"deviceName\":\"" dev "\",\"cdiDeviceIDs\":["                        \
    "\"k8s.gpu.fakehw.example.com/gpu=" uid "-" dev "\"]}],"                                       \
    "\"cdiSpecs\":[\"" SPEC(uid) "\"]}"

/* Appends the line of one change to buf (a malloc'd string). */
static void add_line(char **buf, const char *uid, const char *rec_text)
{
    struct error err;
    json_t *rec = test_json(rec_text);
    size_t len;
    char *line = checkpoint_journal_line(uid, rec, &len, &err);
    assert_non_null(line);
    assert_int_equal(strlen(line), len);
    json_decref(rec);
    char *joined = NULL;
    assert_true(asprintf(&joined, "%s%s", *buf ? *buf : "", line) > 0);
    free(*buf);
    free(line);
    *buf = joined;
}

/* p1 p2 u1 p3: c2 and c3 prepared at the end. */
static char *three_claims_journal(void)
{
    char *j = NULL;
    add_line(&j, UID1, RECORD(UID1, "c1", "gpu-0"));
    add_line(&j, UID2, RECORD(UID2, "c2", "gpu-1"));
    add_line(&j, UID1, NULL);
    add_line(&j, UID3, RECORD(UID3, "c3", "gpu-2"));
    return j;
}

static void expect_state(const json_t *claims, const char *const *uids, size_t n)
{
    assert_int_equal(json_object_size(claims), n);
    for (size_t i = 0; i < n; i++)
        assert_non_null(json_object_get(claims, uids[i]));
}

static void test_line_format(void **state)
{
    (void)state;
    struct error err;
    json_t *rec = test_json(RECORD(UID1, "c1", "gpu-0"));
    size_t len;
    char *line = checkpoint_journal_line(UID1, rec, &len, &err);
    /* crc32:<8 hex> then compact JSON with sorted keys, then one newline. */
    assert_memory_equal(line, "crc32:", 6);
    assert_int_equal(strspn(line + 6, "0123456789abcdef"), 8);
    assert_int_equal(line[14], ' ');
    assert_int_equal(strncmp(line + 15, "{\"op\":\"prepared\",\"record\":{", 27), 0);
    assert_non_null(strstr(line, "\"uid\":\"" UID1 "\"}\n"));
    assert_int_equal(line[len - 1], '\n');
    assert_null(memchr(line, '\n', len - 1));
    unsigned long crc = strtoul(line + 6, NULL, 16);
    assert_int_equal(crc, checkpoint_crc32(line + 15, len - 16));
    free(line);
    line = checkpoint_journal_line(UID1, NULL, &len, &err);
    assert_non_null(strstr(line, " {\"op\":\"unprepared\",\"uid\":\"" UID1 "\"}\n"));
    assert_int_equal(strtoul(line + 6, NULL, 16), checkpoint_crc32(line + 15, len - 16));
    free(line);
    /* A removal is formatted by hand; what needs escaping goes through
     * jansson. */
    line = checkpoint_journal_line("a\"b", NULL, &len, &err);
    assert_non_null(strstr(line, " {\"op\":\"unprepared\",\"uid\":\"a\\\"b\"}\n"));
    free(line);
    json_decref(rec);
}

static void test_replay(void **state)
{
    (void)state;
    struct error err;
    struct checkpoint_journal_replay r;
    char *j = three_claims_journal();
    json_t *claims = json_object();
    assert_int_equal(checkpoint_journal_replay(j, strlen(j), FIXTURE_DRIVER, claims, &r, &err), 0);
    const char *want[] = {UID2, UID3};
    expect_state(claims, want, 2);
    assert_int_equal(r.lines, 4);
    assert_int_equal(r.kept, strlen(j));
    assert_int_equal(r.torn_line, 0);
    json_t *rec2 = test_json(RECORD(UID2, "c2", "gpu-1"));
    assert_true(json_equal(json_object_get(claims, UID2), rec2));
    json_decref(rec2);

    /* Twice: the same.  Onto the snapshot written after these lines (a
     * compaction that stopped before emptying the journal): the same. */
    json_t *again = json_deep_copy(claims);
    assert_int_equal(checkpoint_journal_replay(j, strlen(j), FIXTURE_DRIVER, again, &r, &err), 0);
    assert_true(json_equal(again, claims));
    json_decref(again);
    /* Onto a snapshot that still has c1 (written before the unprepare). */
    json_t *older = json_object();
    json_object_set_new(older, UID1, test_json(RECORD(UID1, "c1", "gpu-0")));
    assert_int_equal(checkpoint_journal_replay(j, strlen(j), FIXTURE_DRIVER, older, &r, &err), 0);
    assert_true(json_equal(older, claims));
    json_decref(older);
    /* An unprepare of an unknown claim changes nothing. */
    char *u = NULL;
    add_line(&u, UID1, NULL);
    assert_int_equal(checkpoint_journal_replay(u, strlen(u), FIXTURE_DRIVER, claims, &r, &err), 0);
    expect_state(claims, want, 2);
    /* An empty journal is fine. */
    assert_int_equal(checkpoint_journal_replay("", 0, FIXTURE_DRIVER, claims, &r, &err), 0);
    assert_int_equal(r.lines, 0);
    free(u);
    json_decref(claims);
    free(j);
}

/* Replays text onto an empty table; the last line must be reported torn. */
static void expect_torn(const char *text, size_t len, size_t line, const char *why,
                        size_t kept_lines)
{
    struct error err;
    struct checkpoint_journal_replay r;
    json_t *claims = json_object();
    if (checkpoint_journal_replay(text, len, FIXTURE_DRIVER, claims, &r, &err) < 0)
        fail_msg("replay: %s", err.msg);
    assert_int_equal(r.torn_line, line);
    if (strstr(r.torn_why, why) == NULL)
        fail_msg("torn_why \"%s\" does not contain \"%s\"", r.torn_why, why);
    assert_int_equal(r.lines, kept_lines);
    json_decref(claims);
}

static void test_torn_last_line(void **state)
{
    (void)state;
    char *j = three_claims_journal();
    size_t len = strlen(j);
    const char *last = j + len - 1;
    while (last > j && last[-1] != '\n')
        last--;
    size_t start = (size_t)(last - j); /* offset of line 4 */

    /* Cut anywhere inside the last line, even right after the previous newline
     * or right before its own. */
    expect_torn(j, start + 1, 4, "no newline after its 1 bytes", 3);
    expect_torn(j, start + 20, 4, "no newline", 3);
    expect_torn(j, len - 1, 4, "no newline", 3);
    /* Complete, but its checksum does not match (bit rot while it was being
     * written, zeros from a crash). */
    char *flipped = strdup(j);
    flipped[len - 5] ^= 0x01;
    expect_torn(flipped, len, 4, "checksum mismatch", 3);
    memset(flipped + start, 0, len - start - 1);
    expect_torn(flipped, len, 4, "does not start with", 3);
    /* Zeros without a newline after the last good line. */
    char zeros[16] = {0};
    char *padded = malloc(start + sizeof(zeros));
    memcpy(padded, j, start);
    memcpy(padded + start, zeros, sizeof(zeros));
    expect_torn(padded, start + sizeof(zeros), 4, "no newline after its 16 bytes", 3);
    /* The kept prefix ends at the last good line. */
    struct error err;
    struct checkpoint_journal_replay r;
    json_t *claims = json_object();
    assert_int_equal(checkpoint_journal_replay(j, start + 7, FIXTURE_DRIVER, claims, &r, &err), 0);
    assert_int_equal(r.kept, start);
    const char *want[] = {UID2};
    expect_state(claims, want, 1); /* p1 p2 u1 applied; p3 dropped */
    json_decref(claims);
    free(padded);
    free(flipped);
    free(j);
}

static void expect_corrupt(const char *text, const char *want)
{
    struct error err;
    struct checkpoint_journal_replay r;
    json_t *claims = json_object();
    if (checkpoint_journal_replay(text, strlen(text), FIXTURE_DRIVER, claims, &r, &err) == 0)
        fail_msg("replayed without an error (want \"%s\"): %s", want, text);
    if (strstr(err.msg, want) == NULL)
        fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
    json_decref(claims);
}

/* A line with a good checksum around json (as a writer would make it). */
static char *line_of(const char *json)
{
    char *line = NULL;
    assert_true(asprintf(&line, "crc32:%08x %s\n", (unsigned)checkpoint_crc32(json, strlen(json)),
                         json) > 0);
    return line;
}

static void test_corrupt_lines(void **state)
{
    (void)state;
    char *j = three_claims_journal();
    /* A bad checksum before the last line. */
    char *bad = strdup(j);
    *strstr(bad, "gpu-1") = 'G';
    expect_corrupt(bad, "line 2: checksum mismatch: the line says crc32:");
    free(bad);
    bad = strdup(j);
    memcpy(bad, "CRC32", 5);
    expect_corrupt(bad, "line 1: does not start with \"crc32:<8 hex digits> \"");
    free(bad);
    /* An empty line in the middle. */
    char *nl = strchr(j, '\n');
    char *gap = NULL;
    assert_true(asprintf(&gap, "%.*s\n%s", (int)(nl - j + 1), j, nl + 1) > 0);
    expect_corrupt(gap, "line 2: does not start with");
    free(gap);

    /* Good checksums around bad content are corruption, even on the last
     * line: the writer never makes them. */
    struct {
        const char *json, *want;
    } cases[] = {
        {"{\"op\":\"prepared\"", "line 5: not valid JSON"},
        {"[1]", "line 5: not a JSON object"},
        {"{\"op\":\"deleted\",\"uid\":\"" UID1 "\"}", "line 5: op must be \"prepared\" or "},
        {"{\"op\":\"unprepared\",\"uid\":\"" UID1 "\",\"x\":1}",
         "line 5: want exactly the fields op, uid (a string)"},
        {"{\"op\":\"prepared\",\"uid\":\"" UID1 "\"}",
         "line 5: want exactly the fields op, uid (a string) and record"},
        {"{\"op\":\"unprepared\",\"uid\":\"../x\"}", "line 5: uid \"../x\": not a UID"},
        {"{\"op\":\"prepared\",\"uid\":\"" UID2 "\",\"record\":" RECORD(UID1, "c1", "gpu-0") "}",
         "line 5: claim " UID2 ": uid field does not match its key"},
        {"{\"op\":\"prepared\",\"uid\":\"" UID1 "\",\"record\":" RECORD(UID1, "../c1", "gpu-0") "}",
         "line 5: claim " UID1 ": name \"../c1\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *line = line_of(cases[i].json), *text = NULL;
        assert_true(asprintf(&text, "%s%s", j, line) > 0);
        expect_corrupt(text, cases[i].want);
        free(text);
        free(line);
    }
    /* A PrepareStarted record is never journaled. */
    json_t *r = test_json(RECORD(UID1, "c1", "gpu-0"));
    json_object_set_new(r, "state", json_string(CHECKPOINT_STARTED));
    json_t *change = json_pack("{s:s, s:s, s:o}", "op", "prepared", "uid", UID1, "record", r);
    char *js = json_dumps(change, JSON_COMPACT | JSON_SORT_KEYS);
    char *line = line_of(js);
    expect_corrupt(line, "line 1: claim " UID1 ": state must be PrepareCompleted");
    free(line);
    free(js);
    json_decref(change);
    free(j);
}

/* ---- the store ---- */

struct model {
    pthread_mutex_t mu;
    json_t *claims; /* what the caller keeps in memory */
    int snapshots;  /* calls of the snapshot callback */
};

static char *model_snapshot(void *ctx, struct error *err)
{
    struct model *m = ctx;
    pthread_mutex_lock(&m->mu);
    m->snapshots++;
    char *text = checkpoint_encode(m->claims, err);
    pthread_mutex_unlock(&m->mu);
    return text;
}

struct model_change {
    struct model *m;
    const char *uid;
    const char *rec_text; /* NULL = unprepared */
};

static void model_apply(void *ctx)
{
    struct model_change *c = ctx;
    pthread_mutex_lock(&c->m->mu);
    if (c->rec_text)
        json_object_set_new(c->m->claims, c->uid, test_json(c->rec_text));
    else
        json_object_del(c->m->claims, c->uid);
    pthread_mutex_unlock(&c->m->mu);
}

static int model_append(struct checkpoint_store *s, struct model *m, const char *uid,
                        const char *rec_text, struct error *err)
{
    json_t *rec = test_json(rec_text);
    size_t len;
    char *line = checkpoint_journal_line(uid, rec, &len, err);
    json_decref(rec);
    assert_non_null(line);
    struct model_change c = {m, uid, rec_text};
    int rc = checkpoint_store_append(s, line, len, model_apply, &c, err);
    free(line);
    return rc;
}

/* Appends claim k (1 to 3: UID<k>, "c<k>" on gpu-<k-1>) to s and m, which
 * must work. */
static void put(struct checkpoint_store *s, struct model *m, int k)
{
    static const char *const uids[] = {UID1, UID2, UID3};
    static const char *const records[] = {RECORD(UID1, "c1", "gpu-0"), RECORD(UID2, "c2", "gpu-1"),
                                          RECORD(UID3, "c3", "gpu-2")};
    struct error err;
    if (model_append(s, m, uids[k - 1], records[k - 1], &err) != 0)
        fail_msg("appending c%d: %s", k, err.msg);
}

/* Appends the removal of uid to s and m, which must work. */
static void drop(struct checkpoint_store *s, struct model *m, const char *uid)
{
    struct error err;
    if (model_append(s, m, uid, NULL, &err) != 0)
        fail_msg("removing %s: %s", uid, err.msg);
}

/* What the directory holds: snapshot + journal, replayed. */
static json_t *disk_state(const char *dir, struct checkpoint_journal_replay *r)
{
    char path[PATH_MAX];
    struct error err;
    json_t *claims = NULL;
    int corrupt;
    fixture_path(path, sizeof(path), dir, CHECKPOINT_FILE);
    if (checkpoint_load(path, FIXTURE_DRIVER, &claims, &corrupt, &err) != 0)
        fail_msg("%s", err.msg);
    fixture_path(path, sizeof(path), dir, CHECKPOINT_JOURNAL_FILE);
    if (checkpoint_journal_load(path, FIXTURE_DRIVER, claims, r, &corrupt, &err) != 0)
        fail_msg("%s", err.msg);
    return claims;
}

/* The disk holds what m holds in memory; returns what the replay saw. */
static struct checkpoint_journal_replay expect_disk_is_model(const char *dir, struct model *m)
{
    struct checkpoint_journal_replay r;
    json_t *disk = disk_state(dir, &r);
    assert_true(json_equal(disk, m->claims));
    json_decref(disk);
    return r;
}

/* An empty model, and a store on it in f's plugin dir with these bounds. */
static struct checkpoint_store *open_store(struct fixture *f, struct model *m, size_t max_lines,
                                           size_t max_bytes)
{
    struct error err;
    *m = (struct model){.claims = json_object()};
    pthread_mutex_init(&m->mu, NULL);
    assert_int_equal(mkdir_p(f->plugin_dir, 0755, &err), 0);
    struct checkpoint_store *s =
        checkpoint_store_open(f->plugin_dir, max_lines, max_bytes, model_snapshot, m, &err);
    if (s == NULL)
        fail_msg("opening the store: %s", err.msg);
    return s;
}

/* The stat of f's checkpoint.journal, which must be there. */
static void journal_stat(const struct fixture *f, struct stat *sb)
{
    char journal[PATH_MAX];
    fixture_path(journal, sizeof(journal), f->plugin_dir, CHECKPOINT_JOURNAL_FILE);
    if (stat(journal, sb) != 0)
        fail_msg("stat %s: %s", journal, strerror(errno));
}

static void close_store(struct checkpoint_store *s, struct model *m)
{
    checkpoint_store_close(s);
    json_decref(m->claims);
    pthread_mutex_destroy(&m->mu);
}

static void test_store_append_and_compact(void **state)
{
    struct fixture *f = *state;
    struct error err;
    struct model m;
    struct checkpoint_store *s = open_store(f, &m, 3, 0);
    /* Opening wrote the snapshot and created the empty journal. */
    assert_int_equal(m.snapshots, 1);
    struct stat sb;
    journal_stat(f, &sb);
    assert_int_equal(sb.st_size, 0);
    assert_int_equal(sb.st_mode & 0777, 0600);

    put(s, &m, 1);
    assert_non_null(json_object_get(m.claims, UID1)); /* applied */
    put(s, &m, 2);
    drop(s, &m, UID1);
    assert_int_equal(checkpoint_store_lines(s), 3);
    assert_int_equal(m.snapshots, 1);
    assert_int_equal(expect_disk_is_model(f->plugin_dir, &m).lines, 3);
    /* The fourth line passes the bound of 3: compacted. */
    put(s, &m, 3);
    assert_int_equal(m.snapshots, 2);
    assert_int_equal(checkpoint_store_lines(s), 0);
    journal_stat(f, &sb);
    assert_int_equal(sb.st_size, 0);
    expect_disk_is_model(f->plugin_dir, &m);
    assert_int_equal(json_object_size(m.claims), 2);
    /* Appends continue at the start of the emptied journal. */
    drop(s, &m, UID2);
    assert_int_equal(expect_disk_is_model(f->plugin_dir, &m).lines, 1);
    checkpoint_store_close(s);

    /* The byte bound works the same way. */
    s = checkpoint_store_open(f->plugin_dir, 0, 100, model_snapshot, &m, &err);
    assert_non_null(s);
    put(s, &m, 1);
    assert_int_equal(checkpoint_store_lines(s), 0);
    close_store(s, &m);
}

/* A write cut short (here by the file size limit): the change fails and is
 * not applied, the partial line is cut off again, and the next append
 * works on a clean journal. */
static void test_store_short_write(void **state)
{
    struct fixture *f = *state;
    struct model m;
    struct checkpoint_store *s = open_store(f, &m, 0, 0);
    put(s, &m, 1);
    struct stat sb;
    journal_stat(f, &sb);
    off_t good = sb.st_size;

    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = (rlim_t)good + 40;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    struct error err;
    int rc = model_append(s, &m, UID2, RECORD(UID2, "c2", "gpu-1"), &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    assert_int_equal(rc, -1);
    if (strstr(err.msg, "appending to") == NULL || strstr(err.msg, "checkpoint.journal") == NULL)
        fail_msg("unexpected error: %s", err.msg);
    assert_null(json_object_get(m.claims, UID2));
    journal_stat(f, &sb);
    assert_int_equal(sb.st_size, good);

    put(s, &m, 3);
    struct checkpoint_journal_replay r = expect_disk_is_model(f->plugin_dir, &m);
    assert_int_equal(r.torn_line, 0);
    assert_int_equal(r.lines, 2);
    close_store(s, &m);
}

/* A compaction whose snapshot cannot be written (a non-empty directory in
 * the way of checkpoint.json) must not empty the journal: the appends go on,
 * every line stays, and the state replays from the old snapshot. */
static void test_store_compaction_fails(void **state)
{
    struct fixture *f = *state;
    struct error err;
    struct model m;
    struct checkpoint_store *s = open_store(f, &m, 2, 0);
    char snap[PATH_MAX], inside[PATH_MAX];
    fixture_path(snap, sizeof(snap), f->plugin_dir, CHECKPOINT_FILE);
    char *old = fixture_read(snap);
    assert_int_equal(unlink(snap), 0);
    fixture_block(snap, inside, sizeof(inside));
    put(s, &m, 1);
    put(s, &m, 2);
    drop(s, &m, UID1); /* past the bound: fails */
    assert_int_equal(m.snapshots, 2);
    assert_int_equal(checkpoint_store_lines(s), 3);
    assert_int_equal(checkpoint_store_compact(s, &err), -1);
    assert_non_null(strstr(err.msg, "checkpoint"));
    assert_int_equal(checkpoint_store_lines(s), 3);
    /* The way is clear again: the old snapshot plus the lines are the state. */
    fixture_unblock(snap, inside);
    assert_int_equal(atomic_write_file(snap, old, strlen(old), 0600, &err), 0);
    assert_int_equal(expect_disk_is_model(f->plugin_dir, &m).lines, 3);
    /* And the next compaction works. */
    put(s, &m, 3);
    assert_int_equal(checkpoint_store_lines(s), 0);
    expect_disk_is_model(f->plugin_dir, &m);
    free(old);
    close_store(s, &m);
}

#define APPENDERS 8
#define APPENDS   25

struct appender {
    struct checkpoint_store *s;
    struct model *m;
    char uid[40];
    char rec[1024];
    int failures;
};

static void *append_many(void *arg)
{
    struct appender *a = arg;
    struct error err;
    for (int i = 0; i < APPENDS; i++)
        if (model_append(a->s, a->m, a->uid, i % 2 == 0 ? a->rec : NULL, &err) < 0)
            a->failures++;
    return NULL;
}

/* Appends from 8 threads, with compactions among them: every change lands
 * once, the disk equals the memory after each, and a change is applied only
 * once durable (checked at the end: disk == memory). */
static void test_store_concurrent(void **state)
{
    struct fixture *f = *state;
    struct model m;
    struct checkpoint_store *s = open_store(f, &m, 7, 0);
    struct appender a[APPENDERS];
    pthread_t t[APPENDERS];
    for (int i = 0; i < APPENDERS; i++) {
        a[i] = (struct appender){.s = s, .m = &m};
        snprintf(a[i].uid, sizeof(a[i].uid), "%08x-1111-4222-8333-%012x", 0xabcd0000u + i, i);
        /* A record of this uid: RECORD with its uid spliced in. */
        json_t *r = test_json(RECORD(UID1, "c1", "gpu-0"));
        char name[16], spec[128], id[128];
        snprintf(name, sizeof(name), "c%d", i);
        snprintf(spec, sizeof(spec), "k8s.gpu.fakehw.example.com-gpu_%s.json", a[i].uid);
        snprintf(id, sizeof(id), "k8s.gpu.fakehw.example.com/gpu=%s-gpu-0", a[i].uid);
        json_object_set_new(r, "uid", json_string(a[i].uid));
        json_object_set_new(r, "name", json_string(name));
        json_object_set_new(r, "cdiSpecs", json_pack("[s]", spec));
        json_t *d = json_array_get(json_object_get(r, "devices"), 0);
        json_object_set_new(d, "cdiDeviceIDs", json_pack("[s]", id));
        char *text = json_dumps(r, JSON_COMPACT);
        snprintf(a[i].rec, sizeof(a[i].rec), "%s", text);
        free(text);
        json_decref(r);
    }
    for (int i = 0; i < APPENDERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, append_many, &a[i]), 0);
    for (int i = 0; i < APPENDERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(a[i].failures, 0);
    }
    /* APPENDS is odd: each uid ends prepared. */
    assert_int_equal(json_object_size(m.claims), APPENDERS);
    assert_true(m.snapshots > 1);
    assert_true(expect_disk_is_model(f->plugin_dir, &m).lines <= 7);
    close_store(s, &m);
}

/* The journal cannot be opened: the store does not open, and says which
 * file. */
static void test_store_open_fails(void **state)
{
    struct fixture *f = *state;
    struct error err;
    struct model m = {.claims = json_object()};
    pthread_mutex_init(&m.mu, NULL);
    char journal[PATH_MAX];
    fixture_path(journal, sizeof(journal), f->plugin_dir, CHECKPOINT_JOURNAL_FILE);
    assert_int_equal(mkdir_p(journal, 0755, &err), 0); /* a directory in its place */
    assert_null(checkpoint_store_open(f->plugin_dir, 0, 0, model_snapshot, &m, &err));
    assert_non_null(strstr(err.msg, "checkpoint.journal"));
    json_decref(m.claims);
    pthread_mutex_destroy(&m.mu);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)
TEST_MAIN_LIST("prepare journal", cmocka_unit_test(test_line_format), cmocka_unit_test(test_replay),
               cmocka_unit_test(test_torn_last_line), cmocka_unit_test(test_corrupt_lines),
               T(test_store_append_and_compact), T(test_store_short_write),
               T(test_store_compaction_fails), T(test_store_concurrent), T(test_store_open_fails))
