// SPDX-License-Identifier: Apache-2.0
#include "claim_patch.h"

#include <stdio.h>
#include <string.h>

#include "claim_json.h"

#define PATH_SIZE KUBE_PATH_MAX

enum claim_read claim_patch_read(struct kube_client *kc, const struct claim_work *w, json_t **claim,
                                 struct error *err)
{
    char path[PATH_SIZE];
    long status = 0;
    *claim = NULL;
    if (!claim_work_path(w, path, sizeof(path)))
        return CLAIM_READ_INVALID;
    if (kube_request(kc, KUBE_GET, path, NULL, NULL, &status, claim, err) < 0) {
        json_decref(*claim);
        *claim = NULL;
        return status == 404 ? CLAIM_READ_GONE : CLAIM_READ_FAILED;
    }
    const char *uid = claim_meta(*claim, "uid");
    return uid != NULL && strcmp(uid, w->uid) == 0 ? CLAIM_READ_OK : CLAIM_READ_REPLACED;
}

int claim_patch_devices(struct kube_client *kc, const struct claim_work *w, const json_t *claim,
                        const json_t *devices, json_t **answer, enum claim_write_result *failed,
                        struct error *err)
{
    char path[PATH_SIZE + sizeof("/status")];
    long status = 0;
    *answer = NULL;
    *failed = CLAIM_WRITE_RETRY;
    if (!claim_work_path(w, path, PATH_SIZE)) {
        *failed = CLAIM_WRITE_DONE;
        return error_set(err, "claim %s/%s: not a valid namespace/name", w->ns, w->name);
    }
    strcat(path, "/status");
    json_auto_t *patch = claim_devices_patch(claim, devices);
    if (patch == NULL)
        return error_set(err, "out of memory");
    if (kube_request(kc, KUBE_PATCH, path, patch, "application/merge-patch+json", &status, answer,
                     err) < 0) {
        json_decref(*answer);
        *answer = NULL;
        *failed = status == 409   ? CLAIM_WRITE_CONFLICT
                  : status == 404 ? CLAIM_WRITE_DONE
                                  : CLAIM_WRITE_RETRY;
        return -1;
    }
    return 0;
}
