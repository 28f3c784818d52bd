// SPDX-License-Identifier: Apache-2.0
/* Startup recovery (docs/prepare.md, "Recovery rule at start-up"):
 *
 * 1. Load <plugin dir>/checkpoint.json and replay checkpoint.journal onto it
 *    (a torn last journal line is dropped with a warning).  If either is
 *    corrupt (not JSON, wrong checksum, unknown version, bad record, a bad
 *    journal line that is not the last, a journal without a snapshot), log
 *    an error naming the file, the line and the fault, move the files aside
 *    to <name>.corrupt-<UTC time>, and rebuild the claims from the claim CDI
 *    specs in the CDI root, which are complete by construction (the claim
 *    spec is the last file a prepare writes, atomically).  A missing
 *    checkpoint is rebuilt the same way.
 * 2. Roll back claims left PrepareStarted (only checkpoints written before
 *    the journal have them): the kubelet never got an answer for them, so
 *    no container uses their files.
 * 3. Drop claims whose CDI spec or metadata file is missing (a reboot
 *    empties the CDI root; the files are written without fsync): the rule a
 *    repeated prepare applies too, so the kubelet's next prepare prepares
 *    them afresh.
 * 4. Remove files of this driver that no claim owns: spec files, metadata
 *    directories, and temp files of interrupted atomic writes.  A crash
 *    during a prepare leaves only such files, since the claim's journal line
 *    comes after them.
 * The caller then writes the result as a new snapshot with an empty journal. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "checkpoint_journal.h"
#include "claim_allocation.h"
#include "claim_files.h"
#include "claim_record.h"
#include "cleanup.h"
#include "log.h"
#include "owned_files.h"
#include "prepare_state.h"
#include "prepared_claim.h"
#include "record_files.h"
#include "xalloc.h"

/* Value of NAME=... in an env list, or NULL. */
static const char *env_value(const json_t *env, const char *name)
{
    size_t n = strlen(name), i;
    json_t *e;
    json_array_foreach(env, i, e)
    {
        const char *s = json_string_value(e);
        if (s && !strncmp(s, name, n) && s[n] == '=')
            return s + n + 1;
    }
    return NULL;
}

/* Value of FAKEHW_DEVICE_<index>_<field>=... in a device's env list. */
static const char *device_env_value(const json_t *env, const char *field)
{
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e)
    {
        const char *s = json_string_value(e);
        if (s == NULL || strncmp(s, "FAKEHW_DEVICE_", 14) != 0)
            continue;
        s += 14;
        if (*s < '0' || *s > '9')
            continue;
        s += strspn(s, "0123456789");
        size_t n = strlen(field);
        if (*s == '_' && !strncmp(s + 1, field, n) && s[1 + n] == '=')
            return s + 2 + n;
    }
    return NULL;
}

/* One answer device from a CDI device of our claim spec. */
static int answer_device(const struct prepare_state *st, const char *uid, const json_t *dev,
                         struct prepared_device *d, struct error *err)
{
    const char *cdi_name = json_string_value(json_object_get(dev, "name"));
    const json_t *env = json_object_get(json_object_get(dev, "containerEdits"), "env");
    size_t ulen = strlen(uid);
    if (cdi_name == NULL || strncmp(cdi_name, uid, ulen) != 0 || cdi_name[ulen] != '-')
        return error_set(err, "device \"%s\" is not named <uid>-<device>",
                         cdi_name ? cdi_name : "");
    char device[K8S_DNS_LABEL_MAX + 1], base[K8S_DNS_LABEL_MAX + 1];
    const char *rest = cdi_name + ulen + 1;
    size_t dlen = strcspn(rest, "_");
    snprintf(device, sizeof(device), "%.*s", (int)dlen, rest);
    const char *request = device_env_value(env, "REQUEST");
    const char *share = device_env_value(env, "SHARE_ID");
    if (dlen > K8S_DNS_LABEL_MAX || !k8s_is_dns_label(device) || request == NULL ||
        !claim_request_split(request, base))
        return error_set(err, "device \"%s\": no device name or FAKEHW_DEVICE_<i>_REQUEST",
                         cdi_name);
    d->request_names = xcalloc(1, sizeof(*d->request_names));
    d->request_names[0] = xstrdup(base);
    d->n_request_names = 1;
    d->pool_name = xstrdup(st->cfg.node_name);
    d->device_name = xstrdup(device);
    cleanup_free char *id = xasprintf("%s=%s", st->claim_kind, cdi_name);
    prepared_device_add_cdi_id(d, id);
    d->share_id = share ? xstrdup(share) : NULL;
    return 0;
}

/* Adds the metadata spec of (uid, req), on disk, to the record: its name to
 * the specs and its CDI id to the request's first device. */
static void add_metadata_spec(const struct prepare_state *st, struct claim_record *rec,
                              const char *req, const char *spec_name)
{
    for (size_t i = 0; i < rec->devices.n_devices; i++) {
        struct prepared_device *d = &rec->devices.devices[i];
        if (d->n_request_names == 0 || strcmp(d->request_names[0], req) != 0)
            continue;
        cleanup_free char *id = xasprintf("%s=%s_%s", st->metadata_kind, rec->uid, req);
        prepared_device_add_cdi_id(d, id);
        claim_record_add_spec(rec, spec_name);
        return;
    }
    /* no device of that request: not listed, so the sweep removes it */
}

struct spec_names {
    char **names;
    size_t n;
};

/* The record of a claim from its claim spec and the metadata specs on disk,
 * checked by the rules of a checkpoint record. */
static struct claim_record *record_from_spec(const struct prepare_state *st, const char *spec_name,
                                             const char *uid,
                                             const struct spec_names *metadata_specs,
                                             struct error *err)
{
    char path[PATH_MAX];
    json_error_t jerr;
    if (claim_join(st->cfg.cdi_root, spec_name, path, sizeof(path), err) < 0)
        return NULL;
    json_auto_t *spec = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (spec == NULL) {
        error_set(err, "not valid JSON: line %d column %d: %s", jerr.line, jerr.column, jerr.text);
        return NULL;
    }
    const json_t *env = json_object_get(json_object_get(spec, "containerEdits"), "env");
    const char *kind = json_string_value(json_object_get(spec, "kind"));
    const struct claim_ref ref = {env_value(env, "DRA_CLAIM_NAMESPACE"),
                                  env_value(env, "DRA_CLAIM_NAME"), uid};
    const char *spec_uid = env_value(env, "DRA_CLAIM_UID");
    const json_t *devices = json_object_get(spec, "devices");
    if (kind == NULL || strcmp(kind, st->claim_kind) != 0) {
        error_set(err, "kind is not %s", st->claim_kind);
        return NULL;
    }
    if (ref.ns == NULL || ref.name == NULL || spec_uid == NULL || strcmp(spec_uid, uid) != 0 ||
        k8s_check_claim_ref(ref.ns, ref.name, uid, err) < 0) {
        error_set(err, "DRA_CLAIM_NAMESPACE, DRA_CLAIM_NAME and DRA_CLAIM_UID do not name "
                       "the claim of this file");
        return NULL;
    }
    size_t n = json_array_size(devices);
    if (n == 0) {
        error_set(err, "no devices");
        return NULL;
    }
    cleanup_claim_record struct claim_record *rec = claim_record_new(&ref, CLAIM_PREPARE_COMPLETED);
    claim_record_add_spec(rec, spec_name);
    rec->devices.devices = xcalloc(n, sizeof(*rec->devices.devices));
    for (size_t i = 0; i < n; i++) {
        rec->devices.n_devices++;
        if (answer_device(st, uid, json_array_get(devices, i), &rec->devices.devices[i], err) < 0) {
            error_prefix(err, "devices[%zu]", i);
            return NULL;
        }
    }
    for (size_t k = 0; k < metadata_specs->n; k++) {
        char u[K8S_UID_LEN + 1], req[K8S_DNS_LABEL_MAX + 1];
        const char *m = metadata_specs->names[k];
        if (claim_file_kind(st->cfg.driver_name, m, u, req) == CLAIM_FILE_METADATA_SPEC &&
            !strcmp(u, uid) && st->metadata_kind[0])
            add_metadata_spec(st, rec, req, m);
    }
    char dirname[K8S_DNS_LABEL_MAX + K8S_DNS_SUBDOMAIN_MAX + 2], dir[PATH_MAX];
    struct stat sb;
    if (claim_metadata_dir_name(ref.ns, ref.name, dirname, sizeof(dirname), err) < 0 ||
        claim_join(st->metadata_root, dirname, dir, sizeof(dir), err) < 0)
        return NULL;
    if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
        claim_record_set_metadata_dir(rec, dirname);
    /* The same check a record read from the checkpoint passed. */
    json_auto_t *as_json = claim_record_to_json(rec);
    if (as_json == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    if (checkpoint_check_record(st->cfg.driver_name, uid, as_json, err) < 0)
        return NULL;
    return steal_pointer(&rec);
}

static void free_names(struct spec_names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    s->names = NULL;
    s->n = 0;
}

static void add_name(struct spec_names *s, const char *name)
{
    s->names = xrealloc(s->names, (s->n + 1) * sizeof(*s->names));
    s->names[s->n++] = xstrdup(name);
}

/* Lists the claim and metadata spec files of this driver in the CDI root. */
static int list_specs(const struct prepare_state *st, struct spec_names *claim_specs,
                      struct spec_names *metadata_specs, struct error *err)
{
    DIR *d = opendir(st->cfg.cdi_root);
    if (d == NULL)
        return error_set_errno(err, errno, "reading CDI root %s", st->cfg.cdi_root);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char uid[K8S_UID_LEN + 1], req[K8S_DNS_LABEL_MAX + 1];
        enum claim_file_kind k = claim_file_kind(st->cfg.driver_name, e->d_name, uid, req);
        if (k == CLAIM_FILE_CLAIM_SPEC)
            add_name(claim_specs, e->d_name);
        else if (k == CLAIM_FILE_METADATA_SPEC)
            add_name(metadata_specs, e->d_name);
    }
    closedir(d);
    return 0;
}

/* The claims the CDI specs on disk describe, into claims (empty). */
static int rebuild(const struct prepare_state *st, struct claim_records *claims, struct error *err)
{
    struct spec_names claim_specs = {0}, metadata_specs = {0};
    int rc = list_specs(st, &claim_specs, &metadata_specs, err);
    for (size_t i = 0; rc == 0 && i < claim_specs.n; i++) {
        char uid[K8S_UID_LEN + 1], req[K8S_DNS_LABEL_MAX + 1];
        struct error e;
        claim_file_kind(st->cfg.driver_name, claim_specs.names[i], uid, req);
        struct claim_record *rec =
            record_from_spec(st, claim_specs.names[i], uid, &metadata_specs, &e);
        if (rec == NULL) {
            LOG_E("recovery: %s/%s is not a claim spec this driver wrote: %s; it will be removed",
                  st->cfg.cdi_root, claim_specs.names[i], e.msg);
            continue;
        }
        LOG_I("recovery: claim %s/%s (uid %s) is prepared (from %s/%s)", rec->ns, rec->name, uid,
              st->cfg.cdi_root, claim_specs.names[i]);
        claim_records_put(claims, rec);
    }
    free_names(&claim_specs);
    free_names(&metadata_specs);
    return rc;
}

/* checkpoint.json -> checkpoint.json.corrupt-20251122T051300Z[-N]. */
static int move_aside(const char *path, char *aside, size_t size, struct error *err)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
    for (int n = 0; n < 1000; n++) {
        int w = n ? snprintf(aside, size, "%s.corrupt-%s-%d", path, stamp, n)
                  : snprintf(aside, size, "%s.corrupt-%s", path, stamp);
        if (w < 0 || (size_t)w >= size)
            return error_set(err, "path %s is too long", path);
        if (access(aside, F_OK) == 0)
            continue;
        if (rename(path, aside) < 0)
            return error_set_errno(err, errno, "moving %s to %s", path, aside);
        return 0;
    }
    return error_set(err, "moving %s aside: too many corrupt copies", path);
}

/* Moves the snapshot and the journal, those that exist (and the journal only
 * when it is not empty), aside; says what went where in moved ("A to A' and
 * B to B'"). */
static int move_checkpoint_aside(const struct prepare_state *st, char *moved, size_t size,
                                 struct error *err)
{
    const char *paths[] = {st->checkpoint_path, st->journal_path};
    size_t used = 0;
    moved[0] = '\0';
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        char aside[PATH_MAX];
        struct stat sb;
        /* An empty journal holds nothing to look at later. */
        if (stat(paths[i], &sb) != 0 || (i == 1 && sb.st_size == 0))
            continue;
        if (move_aside(paths[i], aside, sizeof(aside), err) < 0)
            return -1;
        int w =
            snprintf(moved + used, size - used, "%s%s to %s", used ? " and " : "", paths[i], aside);
        used = w < 0 || (size_t)w >= size - used ? size - 1 : used + (size_t)w;
    }
    return 0;
}

int prepare_load_checkpoint(const struct prepare_state *st, struct claim_records *records,
                            struct checkpoint_journal_replay *r, int *corrupt, struct error *err)
{
    const char *driver = st->cfg.driver_name;
    json_auto_t *claims = NULL;
    int rc = checkpoint_load(st->checkpoint_path, driver, &claims, corrupt, err);
    if (rc < 0)
        return -1;
    if (rc == 1) {
        struct stat sb;
        if (lstat(st->journal_path, &sb) == 0 && S_ISLNK(sb.st_mode))
            return owned_link_error(AT_FDCWD, st->journal_path, st->journal_path, err);
        if (stat(st->journal_path, &sb) < 0 || sb.st_size == 0)
            return 1;
        *corrupt = 1;
        return error_set(err, "%s: %lld bytes of changes, but there is no %s to apply them to",
                         st->journal_path, (long long)sb.st_size, st->checkpoint_path);
    }
    rc = checkpoint_journal_load(st->journal_path, driver, claims, r, corrupt, err);
    if (rc < 0)
        return -1;
    if (r->torn_line > 0)
        LOG_W("%s: line %zu is torn (%s): an append cut short by a crash, never answered; "
              "dropped it",
              st->journal_path, r->torn_line, r->torn_why);
    if (r->lines > 0)
        LOG_V(1, "%s: replayed %zu change(s)", st->journal_path, r->lines);
    if (claim_records_from_json(claims, records, err) < 0) {
        *corrupt = 1;
        return error_prefix(err, "%s", st->checkpoint_path);
    }
    return 0;
}

static int rollback_started(struct prepare_state *st, struct error *err)
{
    for (size_t i = 0; i < st->claims.n;) {
        const struct claim_record *rec = st->claims.v[i];
        if (rec->state != CLAIM_PREPARE_STARTED) {
            i++;
            continue;
        }
        LOG_W("claim %s/%s (uid %s): its prepare did not complete before the restart; "
              "rolling it back",
              rec->ns, rec->name, rec->uid);
        if (record_files_remove(st, rec, true, err) < 0)
            return error_prefix(err, "rolling back claim %s", rec->uid);
        claim_records_remove(&st->claims, rec->uid);
    }
    return 0;
}

/* Drops claims with a missing or empty CDI spec or metadata file (the
 * rule answer_from_checkpoint applies to a repeated prepare). */
static int drop_incomplete(struct prepare_state *st, struct error *err)
{
    for (size_t i = 0; i < st->claims.n;) {
        const struct claim_record *rec = st->claims.v[i];
        char missing[PATH_MAX];
        if (!record_files_missing(st, rec, missing, sizeof(missing))) {
            i++;
            continue;
        }
        LOG_W("claim %s/%s (uid %s): %s is missing or empty (lost in a reboot or a crash); "
              "dropping the claim, its next prepare prepares it afresh",
              rec->ns, rec->name, rec->uid, missing);
        if (record_files_remove(st, rec, true, err) < 0)
            return error_prefix(err, "dropping claim %s", rec->uid);
        claim_records_remove(&st->claims, rec->uid);
    }
    return 0;
}

static bool owns_metadata_dir(const struct claim_records *claims, const char *dirname)
{
    for (size_t i = 0; i < claims->n; i++) {
        const char *md = claims->v[i]->metadata_dir;
        if (md && !strcmp(md, dirname))
            return true;
    }
    return false;
}

/* Is name a temp file of an interrupted atomic write of base-matching file? */
static bool is_temp_of(const char *name, const struct prepare_state *st, bool spec_dir)
{
    const char *tmp = strstr(name, ".tmp.");
    if (name[0] != '.' || tmp == NULL)
        return false;
    char base[NAME_MAX + 1], uid[K8S_UID_LEN + 1], req[K8S_DNS_LABEL_MAX + 1];
    snprintf(base, sizeof(base), "%.*s", (int)(tmp - name - 1), name + 1);
    if (spec_dir)
        return claim_file_kind(st->cfg.driver_name, base, uid, req) != CLAIM_FILE_OTHER;
    return strcmp(base, CHECKPOINT_FILE) == 0;
}

static int remove_file(const char *dir, const char *name, const char *why, struct error *err)
{
    char path[PATH_MAX];
    if (claim_join(dir, name, path, sizeof(path), err) < 0)
        return -1;
    LOG_W("removing %s: %s", path, why);
    if (unlink(path) < 0 && errno != ENOENT)
        return error_set_errno(err, errno, "removing %s", path);
    return 0;
}

static int sweep_dir(const struct prepare_state *st, const char *dir, bool spec_dir,
                     struct error *err)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return error_set_errno(err, errno, "reading directory %s", dir);
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char uid[K8S_UID_LEN + 1], req[K8S_DNS_LABEL_MAX + 1];
        if (is_temp_of(e->d_name, st, spec_dir))
            rc = remove_file(dir, e->d_name, "left by an interrupted write", err);
        else if (spec_dir &&
                 claim_file_kind(st->cfg.driver_name, e->d_name, uid, req) != CLAIM_FILE_OTHER &&
                 !claim_record_lists_spec(claim_records_find(&st->claims, uid), e->d_name))
            rc = remove_file(dir, e->d_name, "no prepared claim owns it", err);
    }
    closedir(d);
    return rc;
}

/* A link planted in a directory of the plugin: reported and removed (the
 * link only; what it points to is never touched).  1 when name was one. */
static int drop_link(int dirfd, const char *name, const char *path, struct error *err)
{
    struct stat sb;
    if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(sb.st_mode))
        return 0;
    struct error why;
    owned_link_error(dirfd, name, path, &why);
    LOG_E("%s; removing the link", why.msg);
    if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
        return error_set_errno(err, errno, "removing the link %s", path);
    return 1;
}

/* Removes the links below an owned metadata directory (depth: the request
 * directories, then their files); the claim's files are then found missing
 * and it is prepared afresh. */
static int drop_links_below(int dirfd, const char *name, const char *path, int depth,
                            struct error *err)
{
    int fd = owned_open_dir(dirfd, name, path, err);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return error_set_errno(err, errno, "reading %s", path);
    }
    struct dirent *e;
    int rc = 0;
    while (rc >= 0 && (e = readdir(d)) != NULL) {
        char child[PATH_MAX];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            claim_join(path, e->d_name, child, sizeof(child), err) < 0)
            continue;
        rc = drop_link(fd, e->d_name, child, err);
        if (rc == 0 && depth > 1 && e->d_type == DT_DIR)
            rc = drop_links_below(fd, e->d_name, child, depth - 1, err);
    }
    closedir(d);
    return rc < 0 ? -1 : 0;
}

static int sweep_metadata(const struct prepare_state *st, struct error *err)
{
    struct stat sb;
    if (lstat(st->metadata_root, &sb) < 0 && errno == ENOENT)
        return 0;
    int fd = owned_open_dir(AT_FDCWD, st->metadata_root, st->metadata_root, err);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return error_set_errno(err, errno, "reading %s", st->metadata_root);
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char path[PATH_MAX];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        rc = claim_join(st->metadata_root, e->d_name, path, sizeof(path), err);
        if (rc == 0)
            rc = drop_link(fd, e->d_name, path, err);
        if (rc != 0) {
            rc = rc < 0 ? -1 : 0;
            continue;
        }
        if (owns_metadata_dir(&st->claims, e->d_name)) {
            rc = drop_links_below(fd, e->d_name, path, 2, err);
            continue;
        }
        LOG_W("removing %s: no prepared claim owns it", path);
        rc = claim_remove_tree(path, err);
    }
    closedir(d);
    return rc;
}

int prepare_recover(struct prepare_state *st, struct error *err)
{
    int corrupt = 0;
    struct checkpoint_journal_replay replay;
    int rc = prepare_load_checkpoint(st, &st->claims, &replay, &corrupt, err);
    if (rc < 0 && !corrupt)
        return -1;
    if (rc != 0) {
        if (corrupt) {
            char why[ERROR_MSG_MAX], moved[3 * PATH_MAX];
            snprintf(why, sizeof(why), "%s", err->msg);
            if (move_checkpoint_aside(st, moved, sizeof(moved), err) < 0)
                return error_prefix(err, "checkpoint is corrupt (%s)", why);
            LOG_E("checkpoint is corrupt: %s; moved %s; rebuilding the prepared claims from the "
                  "CDI specs in %s",
                  why, moved, st->cfg.cdi_root);
        }
        claim_records_clear(&st->claims);
        if (rebuild(st, &st->claims, err) < 0)
            return error_prefix(err, "rebuilding the prepared claims");
        if (corrupt || st->claims.n > 0)
            LOG_W("%s: %zu prepared claim(s) rebuilt from the CDI specs in %s", st->checkpoint_path,
                  st->claims.n, st->cfg.cdi_root);
    }
    if (rollback_started(st, err) < 0 || drop_incomplete(st, err) < 0 ||
        sweep_dir(st, st->cfg.cdi_root, true, err) < 0 ||
        sweep_dir(st, st->cfg.plugin_dir, false, err) < 0 || sweep_metadata(st, err) < 0)
        return -1;
    return 0;
}
