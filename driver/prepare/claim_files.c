// SPDX-License-Identifier: Apache-2.0
#include "claim_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device_metadata.h"
#include "sha256.h"

#define SPEC_SUFFIX ".json"

static int fit(int n, size_t size, const char *what, struct error *err)
{
    if (n < 0 || (size_t)n >= size)
        return error_set(err, "%s is too long", what);
    return 0;
}

int claim_spec_name(const char *driver, const char *uid, char *buf, size_t size, struct error *err)
{
    return fit(snprintf(buf, size, "k8s.%s-gpu_%s" SPEC_SUFFIX, driver, uid), size,
               "CDI spec file name", err);
}

int claim_metadata_spec_name(const char *driver, const char *uid, const char *request, char *buf,
                             size_t size, struct error *err)
{
    return fit(snprintf(buf, size, "%s_metadata_%s_%s" SPEC_SUFFIX, driver, uid, request), size,
               "metadata CDI spec file name", err);
}

int claim_metadata_dir_name(const char *ns, const char *name, char *buf, size_t size,
                            struct error *err)
{
    size_t nl = strlen(ns), ml = strlen(name);
    if (nl + 1 + ml <= CLAIM_DIR_NAME_MAX)
        return fit(snprintf(buf, size, "%s_%s", ns, name), size, "metadata directory name", err);
    /* Too long for one directory name (a 253-character claim name in a long
     * namespace): the name is cut and the digest of the whole "<ns>/<name>"
     * keeps it apart from every other claim.  Names are DNS subdomains, so
     * the cut is between characters. */
    if (nl + 2 + CLAIM_DIR_HASH_HEX >= CLAIM_DIR_NAME_MAX)
        return error_set(err, "namespace %s is too long for a metadata directory name", ns);
    struct sha256 h;
    uint8_t digest[SHA256_DIGEST_LEN];
    sha256_init(&h);
    sha256_update(&h, ns, nl);
    sha256_update(&h, "/", 1);
    sha256_update(&h, name, ml);
    sha256_final(&h, digest);
    char hex[CLAIM_DIR_HASH_HEX + 1];
    for (int i = 0; i < CLAIM_DIR_HASH_HEX / 2; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    int keep = (int)(CLAIM_DIR_NAME_MAX - nl - 2 - CLAIM_DIR_HASH_HEX);
    return fit(snprintf(buf, size, "%s_%.*s-%s", ns, keep, name, hex), size,
               "metadata directory name", err);
}

int claim_join(const char *dir, const char *name, char *buf, size_t size, struct error *err)
{
    if (snprintf(buf, size, "%s/%s", dir, name) >= (int)size)
        return error_set(err, "path %s/%s is too long", dir, name);
    return 0;
}

/* If s starts with prefix, returns what follows it. */
static const char *after(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* Reads "<uid>" at the start of s into uid; returns what follows. */
static const char *take_uid(const char *s, char *uid)
{
    if (strlen(s) < K8S_UID_LEN)
        return NULL;
    memcpy(uid, s, K8S_UID_LEN);
    uid[K8S_UID_LEN] = '\0';
    return k8s_is_uid(uid) ? s + K8S_UID_LEN : NULL;
}

enum claim_file_kind claim_file_kind(const char *driver, const char *file,
                                     char uid[K8S_UID_LEN + 1], char request[K8S_DNS_LABEL_MAX + 1])
{
    char prefix[300];
    snprintf(prefix, sizeof(prefix), "k8s.%s-gpu_", driver);
    const char *rest = after(file, prefix);
    if (rest && (rest = take_uid(rest, uid)) && !strcmp(rest, SPEC_SUFFIX))
        return CLAIM_FILE_CLAIM_SPEC;
    snprintf(prefix, sizeof(prefix), "%s_metadata_", driver);
    rest = after(file, prefix);
    if (rest == NULL || (rest = take_uid(rest, uid)) == NULL || *rest != '_')
        return CLAIM_FILE_OTHER;
    rest++;
    size_t n = strlen(rest);
    size_t suffix = strlen(SPEC_SUFFIX);
    if (n <= suffix || n - suffix > K8S_DNS_LABEL_MAX || strcmp(rest + n - suffix, SPEC_SUFFIX))
        return CLAIM_FILE_OTHER;
    memcpy(request, rest, n - suffix);
    request[n - suffix] = '\0';
    return k8s_is_dns_label(request) ? CLAIM_FILE_METADATA_SPEC : CLAIM_FILE_OTHER;
}

bool claim_owns_spec(const char *driver, const char *uid, const char *file)
{
    char u[K8S_UID_LEN + 1], req[K8S_DNS_LABEL_MAX + 1];
    return claim_file_kind(driver, file, u, req) != CLAIM_FILE_OTHER && !strcmp(u, uid);
}

/* Removes name in dirfd and, for a directory, all it holds.  path names it
 * in errors. */
static int remove_at(int dirfd, const char *name, const char *path, struct error *err)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : error_set_errno(err, errno, "stat %s", path);
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
            return error_set_errno(err, errno, "removing %s", path);
        return 0;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return error_set_errno(err, errno, "opening directory %s", path);
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return error_set_errno(err, errno, "reading directory %s", path);
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char child[4096];
        snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
        rc = remove_at(fd, e->d_name, child, err);
    }
    closedir(d);
    if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        rc = error_set_errno(err, errno, "removing directory %s", path);
    return rc;
}

int claim_remove_tree(const char *path, struct error *err)
{
    return remove_at(AT_FDCWD, path, path, err);
}

int claim_files_remove(const char *cdi_root, const char *const *specs, size_t n_specs,
                       const char *plugin_dir, const char *metadata_dir, struct error *err)
{
    /* Best effort: every file is tried, the first failure is reported. */
    char path[4096];
    struct error e;
    int rc = 0;
    for (size_t i = 0; i < n_specs; i++) {
        if (claim_join(cdi_root, specs[i], path, sizeof(path), &e) < 0 ||
            (unlink(path) < 0 && errno != ENOENT &&
             error_set_errno(&e, errno, "removing %s", path) < 0)) {
            if (rc == 0)
                error_set(err, "%s", e.msg);
            rc = -1;
        }
    }
    if (metadata_dir == NULL)
        return rc;
    char dir[4096];
    if (claim_join(plugin_dir, DEVICE_METADATA_DIR, dir, sizeof(dir), &e) < 0 ||
        claim_join(dir, metadata_dir, path, sizeof(path), &e) < 0 ||
        claim_remove_tree(path, &e) < 0) {
        if (rc == 0)
            error_set(err, "%s", e.msg);
        rc = -1;
    }
    return rc;
}
