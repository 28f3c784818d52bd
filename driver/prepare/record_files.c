// SPDX-License-Identifier: Apache-2.0
/* The files of a claim record: see record_files.h. */
#include "record_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "claim_files.h"
#include "cleanup.h"
#include "device_metadata.h"
#include "owned_files.h"
#include "xalloc.h"

/* A regular file with content at path? */
static bool file_present(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

bool record_files_missing(const struct prepare_state *st, const struct claim_record *rec,
                          char *path, size_t size)
{
    for (size_t i = 0; i < rec->n_cdi_specs; i++) {
        const char *spec = rec->cdi_specs[i];
        char uid[K8S_UID_LEN + 1], req[K8S_DNS_LABEL_MAX + 1];
        snprintf(path, size, "%s/%s", st->cfg.cdi_root, spec);
        if (!file_present(path))
            return true;
        if (rec->metadata_dir == NULL ||
            claim_file_kind(st->cfg.driver_name, spec, uid, req) != CLAIM_FILE_METADATA_SPEC)
            continue;
        snprintf(path, size, "%s/%s/%s/%s", st->metadata_root, rec->metadata_dir, req,
                 DEVICE_METADATA_FILE);
        if (!file_present(path))
            return true;
    }
    return false;
}

int record_files_remove(const struct prepare_state *st, const struct claim_record *rec, bool now,
                        struct error *err)
{
    size_t n = rec->n_cdi_specs;
    cleanup_free const char **names = xcalloc(n ? n : 1, sizeof(*names));
    size_t k = 0;
    for (size_t pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            const char *s = rec->cdi_specs[i];
            char uid[K8S_UID_LEN + 1], req[K8S_DNS_LABEL_MAX + 1];
            bool claim_spec =
                claim_file_kind(st->cfg.driver_name, s, uid, req) == CLAIM_FILE_CLAIM_SPEC;
            if (claim_spec == (pass == 0))
                names[k++] = s;
        }
    if (now)
        return claim_files_remove(st->cfg.cdi_root, names, k, st->cfg.plugin_dir, rec->metadata_dir,
                                  err);
    /* Queued before the record goes, so that a prepare of the same claim,
     * which may start once it is gone, finds them queued. */
    cleanup_free char **paths = xcalloc(k ? k : 1, sizeof(*paths));
    for (size_t i = 0; i < k; i++)
        paths[i] = xasprintf("%s/%s", st->cfg.cdi_root, names[i]);
    if (k > 0 || rec->metadata_dir != NULL)
        claim_reaper_add(st->reaper, rec->uid, rec->metadata_dir, (const char *const *)paths, k);
    for (size_t i = 0; i < k; i++)
        free(paths[i]);
    return 0;
}

int record_files_write(const struct prepare_state *st, const struct prepare_plan *plan,
                       struct error *err)
{
    size_t root_len = strlen(st->metadata_root);
    for (size_t i = 0; i < plan->n_files; i++) {
        const struct plan_file *f = &plan->files[i];
        /* Derived data: atomic for readers, but no fsync.  The journal line
         * makes the claim durable; a file lost in a crash is found missing
         * and the claim prepared afresh.  Metadata files go below the
         * metadata root level by level, never through a planted link. */
        int rc;
        if (f->make_parent && strncmp(f->path, st->metadata_root, root_len) == 0 &&
            f->path[root_len] == '/')
            rc = owned_write_file(st->metadata_root, f->path + root_len + 1, f->text,
                                  strlen(f->text), 0644, err);
        else if (f->make_parent)
            rc = error_set(err, "%s is not below %s", f->path, st->metadata_root);
        else if (f->quiet)
            rc = atomic_create_file_quiet(f->path, f->text, strlen(f->text), 0644, err);
        else
            rc = atomic_write_file_nosync(f->path, f->text, strlen(f->text), 0644, err);
        if (rc < 0)
            return -1;
    }
    return 0;
}
