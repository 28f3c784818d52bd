// SPDX-License-Identifier: Apache-2.0
/* What one claim's prepare writes and answers: claim JSON + inventory ->
 * CDI specs, metadata files, the answer and the checkpoint record.  Nothing
 * here touches the disk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim_allocation.h"
#include "checkpoint.h"
#include "claim_files.h"
#include "driver/device/device_attributes.h"
#include "device_metadata.h"
#include "fakehw_attach.h"
#include "gpu_config.h"
#include "prepare_state.h"
#include "prepared_claim.h"

#define PATH_BUF 4096

static int add_file(struct prepare_plan *p, const char *dir, const char *name, char *text,
                    bool make_parent, struct error *err)
{
    struct plan_file *f = &p->files[p->n_files];
    f->text = text;
    f->make_parent = make_parent;
    if (text == NULL || asprintf(&f->path, "%s/%s", dir, name) < 0) {
        f->path = NULL;
        free(text);
        f->text = NULL;
        return error_set(err, "out of memory");
    }
    p->n_files++;
    return 0;
}

/* One answer device: request, pool, device, the claim CDI id (room for the
 * metadata id that plan_request_metadata may add), shareID. */
static int answer_device(const char *claim_kind, const struct claim_result *r, const char *cdi_name,
                         struct prepared_device *d)
{
    d->request_names = calloc(1, sizeof(char *));
    d->cdi_device_ids = calloc(2, sizeof(char *));
    if (d->request_names == NULL || d->cdi_device_ids == NULL)
        return -1;
    if ((d->request_names[0] = strdup(r->base_request)) == NULL)
        return -1;
    d->n_request_names = 1;
    if (asprintf(&d->cdi_device_ids[0], "%s=%s", claim_kind, cdi_name) < 0) {
        d->cdi_device_ids[0] = NULL;
        return -1;
    }
    d->n_cdi_device_ids = 1;
    d->pool_name = strdup(r->pool);
    d->device_name = strdup(r->device);
    d->share_id = r->share_id ? strdup(r->share_id) : NULL;
    if (!d->pool_name || !d->device_name || (r->share_id && !d->share_id))
        return -1;
    return 0;
}

static int build_answer(const struct prepare_state *st, const struct claim_allocation *a,
                        const struct cdi_claim *cc, struct prepared_claim *ans, struct error *err)
{
    ans->devices = calloc(a->n_results ? a->n_results : 1, sizeof(*ans->devices));
    if (ans->devices == NULL)
        return error_set(err, "out of memory");
    for (size_t i = 0; i < a->n_results; i++) {
        ans->n_devices++;
        if (answer_device(st->claim_kind, &a->results[i], cc->devices[i].cdi_name,
                          &ans->devices[i]) < 0)
            return error_set(err, "out of memory");
    }
    return 0;
}

/* Metadata of one request (base name req): its file, its CDI spec, and its
 * CDI id on the request's first device. */
static int plan_request_metadata(const struct prepare_state *st, const char *ns, const char *name,
                                 const char *uid, const struct claim_allocation *a,
                                 const struct fakehw_device *devs, const char *req,
                                 struct prepare_plan *p, json_t *specs, struct error *err)
{
    const struct device_metadata_claim mc = {st->cfg.driver_name, ns, name, uid, a->pod_claim_name};
    json_t *devices = json_array();
    const char *first_request = NULL;
    size_t first = 0;
    char dir[PATH_BUF], host[PATH_BUF], container[PATH_BUF], spec_name[PATH_BUF];
    int rc = -1;
    if (devices == NULL) {
        error_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < a->n_results; i++) {
        if (strcmp(a->results[i].base_request, req) != 0)
            continue;
        if (first_request == NULL) {
            first_request = a->results[i].request;
            first = i;
        }
        json_t *attrs = device_attributes_json(&devs[i], err);
        if (attrs == NULL ||
            device_metadata_add_device(devices, st->cfg.driver_name, a->results[i].pool,
                                       devs[i].name, attrs, err) < 0)
            goto out;
    }
    char dirname[K8S_DNS_LABEL_MAX + K8S_DNS_SUBDOMAIN_MAX + 2];
    if (claim_metadata_dir_name(ns, name, dirname, sizeof(dirname), err) < 0 ||
        snprintf(dir, sizeof(dir), "%s/%s/%s", st->metadata_root, dirname, req) >=
            (int)sizeof(dir) ||
        snprintf(host, sizeof(host), "%s/%s", dir, DEVICE_METADATA_FILE) >= (int)sizeof(host)) {
        error_set(err, "metadata path for request %s is too long", req);
        goto out;
    }
    if (device_metadata_container_path(&mc, req, container, sizeof(container), err) < 0 ||
        claim_metadata_spec_name(st->cfg.driver_name, uid, req, spec_name, sizeof(spec_name), err) <
            0 ||
        add_file(p, dir, DEVICE_METADATA_FILE,
                 device_metadata_stream(&mc, first_request, devices, err), true, err) < 0)
        goto out;
    json_t *spec = cdi_metadata_spec(st->cfg.driver_name, uid, req, host, container, err);
    if (spec == NULL)
        goto out;
    char *text = cdi_spec_text(spec);
    json_decref(spec);
    if (add_file(p, st->cfg.cdi_root, spec_name, text, false, err) < 0 ||
        json_array_append_new(specs, json_string(spec_name)) < 0)
        goto out;
    struct prepared_device *d = &p->answer.devices[first];
    if (asprintf(&d->cdi_device_ids[1], "%s=%s_%s", st->metadata_kind, uid, req) < 0) {
        d->cdi_device_ids[1] = NULL;
        error_set(err, "out of memory");
        goto out;
    }
    d->n_cdi_device_ids = 2;
    rc = 0;
out:
    json_decref(devices);
    return rc;
}

static int plan_metadata(const struct prepare_state *st, const char *ns, const char *name,
                         const char *uid, const struct claim_allocation *a,
                         const struct fakehw_device *devs, struct prepare_plan *p, json_t *specs,
                         struct error *err)
{
    for (size_t i = 0; i < a->n_results; i++) {
        const char *req = a->results[i].base_request;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(a->results[j].base_request, req);
        if (!seen && plan_request_metadata(st, ns, name, uid, a, devs, req, p, specs, err) < 0)
            return -1;
    }
    return 0;
}

/* A device allocated with binding conditions must be attached: the
 * scheduler binds the pod only once they are True (KEP-5007), so a prepare
 * before that is a manual allocation or a race with a detach.  Refusing it
 * makes the kubelet retry.  A device fakehw no longer makes attachable
 * (attach "none") needs no attach and passes. */
static int check_attached(const struct claim_result *r, const struct fakehw_device *d,
                          struct error *err)
{
    if (r->binding_condition == NULL || d->attach == FAKEHW_ATTACH_NONE ||
        d->attach == FAKEHW_ATTACH_ATTACHED)
        return 0;
    return error_set(err,
                     "device %s is %s, not attached, but was allocated with binding condition "
                     "%.253s: the scheduler binds only once it is True; retry when the device is "
                     "attached",
                     d->name, fakehw_attach_name(d->attach), r->binding_condition);
}

static int lookup_devices(const struct prepare_state *st, const struct claim_allocation *a,
                          struct fakehw_device *devs, struct error *err)
{
    for (size_t i = 0; i < a->n_results; i++) {
        if (st->cfg.lookup_device(st->cfg.fetch_ctx, a->results[i].device, &devs[i], err) < 0)
            return error_prefix(err, "allocation result for device %s", a->results[i].device);
        if (strcmp(devs[i].name, a->results[i].device) != 0)
            return error_set(err, "looking up device %s found device %s", a->results[i].device,
                             devs[i].name);
        if (check_attached(&a->results[i], &devs[i], err) < 0)
            return -1;
    }
    return 0;
}

int prepare_plan_build(const struct prepare_state *st, const char *ns, const char *name,
                       const char *uid, const json_t *claim, struct prepare_plan *p,
                       struct error *err)
{
    memset(p, 0, sizeof(*p));
    struct claim_allocation a;
    if (claim_allocation_parse(claim, uid, st->cfg.driver_name, st->cfg.node_name, &a, err) < 0)
        return -1;
    size_t n = a.n_results;
    struct fakehw_device *devs = calloc(n ? n : 1, sizeof(*devs));
    struct gpu_config *configs = calloc(n ? n : 1, sizeof(*configs));
    const char **requests = calloc(n ? n : 1, sizeof(*requests));
    struct cdi_claim_device *cdevs = calloc(n ? n : 1, sizeof(*cdevs));
    json_t *specs = json_array();
    json_t *claim_spec = NULL;
    bool have_configs = false;
    int rc = -1;
    /* Metadata file and spec per request, and the claim spec. */
    p->files = calloc(2 * n + 1, sizeof(*p->files));
    if (!devs || !configs || !requests || !cdevs || !specs || !p->files) {
        error_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        requests[i] = a.results[i].request;
    if (lookup_devices(st, &a, devs, err) < 0 ||
        gpu_config_resolve(st->cfg.driver_name, a.config, requests, n, configs, err) < 0)
        goto out;
    have_configs = true;

    p->record = json_pack("{s:s, s:s, s:s, s:s}", "uid", uid, "namespace", ns, "name", name,
                          "state", CHECKPOINT_STARTED);
    if (p->record == NULL) {
        error_set(err, "out of memory");
        goto out;
    }
    struct cdi_claim cc = {st->cfg.driver_name, ns,    name, uid, st->cfg.fakehw_root,
                           st->cfg.fakegpu_smi, cdevs, n};
    if (n > 0) {
        for (size_t i = 0; i < n; i++)
            cdevs[i] = (struct cdi_claim_device){
                &devs[i],    a.results[i].request,         a.results[i].share_id,
                &configs[i], a.results[i].consumed_memory, ""};
        if ((claim_spec = cdi_claim_spec(&cc, err)) == NULL)
            goto out;
    }
    if (build_answer(st, &a, &cc, &p->answer, err) < 0)
        goto out;
    if (n > 0 && st->cfg.device_metadata) {
        char dirname[K8S_DNS_LABEL_MAX + K8S_DNS_SUBDOMAIN_MAX + 2];
        if (plan_metadata(st, ns, name, uid, &a, devs, p, specs, err) < 0 ||
            claim_metadata_dir_name(ns, name, dirname, sizeof(dirname), err) < 0 ||
            json_object_set_new(p->record, "metadataDir", json_string(dirname)) < 0)
            goto out;
    }
    if (n > 0) {
        char spec_name[PATH_BUF];
        if (claim_spec_name(st->cfg.driver_name, uid, spec_name, sizeof(spec_name), err) < 0 ||
            add_file(p, st->cfg.cdi_root, spec_name, cdi_spec_text(claim_spec), false, err) < 0 ||
            json_array_append_new(specs, json_string(spec_name)) < 0)
            goto out;
    }
    if (json_object_set_new(p->record, "devices", prepared_claim_to_json(&p->answer)) < 0 ||
        json_object_set(p->record, "cdiSpecs", specs) < 0) {
        error_set(err, "out of memory");
        goto out;
    }
    rc = 0;
out:
    json_decref(claim_spec);
    if (have_configs)
        gpu_config_free(configs, n);
    free(configs);
    free(requests);
    free(cdevs);
    free(devs);
    json_decref(specs);
    claim_allocation_free(&a);
    if (rc < 0)
        prepare_plan_free(p);
    return rc;
}

void prepare_plan_free(struct prepare_plan *p)
{
    for (size_t i = 0; i < p->n_files; i++) {
        free(p->files[i].path);
        free(p->files[i].text);
    }
    free(p->files);
    json_decref(p->record);
    prepared_claim_free(&p->answer);
    memset(p, 0, sizeof(*p));
}
