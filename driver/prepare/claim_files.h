// SPDX-License-Identifier: Apache-2.0
/* The files a prepared claim owns, their names and their removal.
 *
 *   <cdi root>/k8s.<driver>-gpu_<uid>.json              claim CDI spec (the CDI
 *                                                     library's transient spec name)
 *   <cdi root>/<driver>_metadata_<uid>_<request>.json  metadata CDI spec per request
 *   <plugin dir>/dra-device-metadata/<ns>_<name>/      metadata files of the claim
 *
 * Every name is built from validated parts (UID, DNS labels and subdomains),
 * so none can leave its directory. */
#ifndef FAKEHW_PREPARE_CLAIM_FILES_H
#define FAKEHW_PREPARE_CLAIM_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "k8s_names.h"

enum claim_file_kind {
    CLAIM_FILE_OTHER,         /* not a spec of this driver */
    CLAIM_FILE_CLAIM_SPEC,    /* k8s.<driver>-gpu_<uid>.json */
    CLAIM_FILE_METADATA_SPEC, /* <driver>_metadata_<uid>_<request>.json */
};

int claim_spec_name(const char *driver, const char *uid, char *buf, size_t size, struct error *err);
int claim_metadata_spec_name(const char *driver, const char *uid, const char *request, char *buf,
                             size_t size, struct error *err);
/* The claim's directory under <plugin dir>/dra-device-metadata: "<ns>_<name>"
 * as the upstream helper names it, when that fits in one directory name
 * (CLAIM_DIR_NAME_MAX bytes).  Longer ones (a namespace of up to 63 and a
 * name of up to 253 characters make 317) become "<ns>_<name cut>-<hash>",
 * 255 bytes, hash = the first CLAIM_DIR_HASH_HEX hex digits of
 * SHA-256("<ns>/<name>"). */
#define CLAIM_DIR_NAME_MAX 255
#define CLAIM_DIR_HASH_HEX 16
int claim_metadata_dir_name(const char *ns, const char *name, char *buf, size_t size,
                            struct error *err);
/* dir/name, checked for length. */
int claim_join(const char *dir, const char *name, char *buf, size_t size, struct error *err);

/* Recognises a spec file name of this driver; fills uid (and request for a
 * metadata spec) when it is one.  Names with anything else are OTHER. */
enum claim_file_kind claim_file_kind(const char *driver, const char *file,
                                     char uid[K8S_UID_LEN + 1],
                                     char request[K8S_DNS_LABEL_MAX + 1]);

/* Is file (a plain name) one of the two spec names of this claim? */
bool claim_owns_spec(const char *driver, const char *uid, const char *file);

/* Removes <cdi_root>/<spec> for each spec (absent files are fine), then the
 * metadata directory <plugin_dir>/dra-device-metadata/<metadata_dir> with
 * everything in it when metadata_dir is not NULL.  Specs go first, so a
 * runtime stops seeing the claim before its metadata disappears.  Every file
 * is tried even after a failure; err tells the first. */
int claim_files_remove(const char *cdi_root, const char *const *specs, size_t n_specs,
                       const char *plugin_dir, const char *metadata_dir, struct error *err);

/* rm -r of path (no symlinks followed); an absent path is fine. */
int claim_remove_tree(const char *path, struct error *err);

#endif
