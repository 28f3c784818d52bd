// SPDX-License-Identifier: Apache-2.0
/* What one claim's prepare writes and answers: claim JSON + inventory ->
 * CDI specs, metadata files, the answer and the claim record.  Nothing
 * here touches the disk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocation_checks.h"
#include "claim_allocation.h"
#include "claim_files.h"
#include "cleanup.h"
#include "driver/device/device_attributes.h"
#include "driver/device/nvidia_attributes.h"
#include "device_metadata.h"
#include "fakehw_attach.h"
#include "gpu_config.h"
#include "nvidia_config.h"
#include "prepare_state.h"
#include "prepared_claim.h"
#include "xalloc.h"

#define PATH_BUF 4096

static int add_file(struct prepare_plan *p, const char *dir, const char *name, char *text,
                    bool make_parent, bool quiet, struct error *err)
{
    if (text == NULL)
        return error_set(err, "out of memory");
    p->files[p->n_files++] =
        (struct plan_file){xasprintf("%s/%s", dir, name), text, make_parent, quiet};
    return 0;
}

/* One answer device: request, pool, device, the claim CDI id (the
 * metadata id may follow, plan_request_metadata), shareID. */
static void answer_device(const char *claim_kind, const struct claim_result *r,
                          const char *cdi_name, struct prepared_device *d)
{
    d->request_names = xcalloc(1, sizeof(char *));
    d->request_names[0] = xstrdup(r->base_request);
    d->n_request_names = 1;
    cleanup_free char *id = xasprintf("%s=%s", claim_kind, cdi_name);
    prepared_device_add_cdi_id(d, id);
    d->pool_name = xstrdup(r->pool);
    d->device_name = xstrdup(r->device);
    d->share_id = r->share_id ? xstrdup(r->share_id) : NULL;
}

static void build_answer(const struct prepare_state *st, const struct claim_allocation *a,
                         const struct cdi_claim *cc, struct prepared_claim *ans)
{
    ans->devices = xcalloc(a->n_results ? a->n_results : 1, sizeof(*ans->devices));
    for (size_t i = 0; i < a->n_results; i++) {
        ans->n_devices++;
        answer_device(st->claim_kind, &a->results[i], cc->devices[i].cdi_name, &ans->devices[i]);
    }
}

/* What the metadata planning of one claim works from and adds to. */
struct plan_input {
    const struct prepare_state *st;
    const struct claim_ref *claim;
    const struct claim_allocation *a;
    const struct fakehw_device *devs; /* one per allocation result */
    struct prepare_plan *p;           /* gets files, CDI ids and spec names */
};

/* Metadata of one request (base name req): its file, its CDI spec, and its
 * CDI id on the request's first device. */
static int plan_request_metadata(const struct plan_input *in, const char *req, struct error *err)
{
    const struct prepare_state *st = in->st;
    const struct claim_ref *c = in->claim;
    const struct claim_allocation *a = in->a;
    const struct device_metadata_claim mc = {st->cfg.driver_name, c->ns, c->name, c->uid,
                                             a->pod_claim_name};
    json_auto_t *devices = json_array();
    const char *first_request = NULL;
    size_t first = 0;
    char dir[PATH_BUF], host[PATH_BUF], container[PATH_BUF], spec_name[PATH_BUF];
    if (devices == NULL)
        return error_set(err, "out of memory");
    for (size_t i = 0; i < a->n_results; i++) {
        if (strcmp(a->results[i].base_request, req) != 0)
            continue;
        if (first_request == NULL) {
            first_request = a->results[i].request;
            first = i;
        }
        json_t *attrs = st->cfg.personality == PERSONALITY_NVIDIA
                            ? nvidia_attributes_json(&in->devs[i], err)
                            : device_attributes_json(&in->devs[i], err);
        if (attrs == NULL ||
            device_metadata_add_device(devices, st->cfg.driver_name, a->results[i].pool,
                                       in->devs[i].name, attrs, err) < 0)
            return -1;
    }
    char dirname[K8S_DNS_LABEL_MAX + K8S_DNS_SUBDOMAIN_MAX + 2];
    if (claim_metadata_dir_name(c->ns, c->name, dirname, sizeof(dirname), err) < 0 ||
        snprintf(dir, sizeof(dir), "%s/%s/%s", st->metadata_root, dirname, req) >=
            (int)sizeof(dir) ||
        snprintf(host, sizeof(host), "%s/%s", dir, DEVICE_METADATA_FILE) >= (int)sizeof(host))
        return error_set(err, "metadata path for request %s is too long", req);
    if (device_metadata_container_path(&mc, req, container, sizeof(container), err) < 0 ||
        claim_metadata_spec_name(st->cfg.driver_name, c->uid, req, spec_name, sizeof(spec_name),
                                 err) < 0 ||
        add_file(in->p, dir, DEVICE_METADATA_FILE,
                 device_metadata_stream(&mc, first_request, devices, err), true, false, err) < 0)
        return -1;
    json_auto_t *spec = cdi_metadata_spec(st->cfg.driver_name, c->uid, req, host, container, err);
    if (spec == NULL ||
        add_file(in->p, st->cfg.cdi_root, spec_name, cdi_spec_text(spec), false, true, err) < 0)
        return -1;
    claim_record_add_spec(in->p->record, spec_name);
    cleanup_free char *id = xasprintf("%s=%s_%s", st->metadata_kind, c->uid, req);
    prepared_device_add_cdi_id(&in->p->answer.devices[first], id);
    return 0;
}

static int plan_metadata(const struct plan_input *in, struct error *err)
{
    const struct claim_allocation *a = in->a;
    for (size_t i = 0; i < a->n_results; i++) {
        const char *req = a->results[i].base_request;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(a->results[j].base_request, req);
        if (!seen && plan_request_metadata(in, req, err) < 0)
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

/* Looks up each result's device and checks that it can hold the result
 * (allocation_checks.h), within the claim; holds gets one entry per
 * result. */
static int lookup_devices(const struct prepare_state *st, const struct claim_allocation *a,
                          struct fakehw_device *devs, struct device_hold *holds, struct error *err)
{
    for (size_t i = 0; i < a->n_results; i++) {
        if (st->cfg.lookup_device(st->cfg.fetch_ctx, a->results[i].device, &devs[i], err) < 0)
            return error_prefix(err, "allocation result for device %s", a->results[i].device);
        if (strcmp(devs[i].name, a->results[i].device) != 0)
            return error_set(err, "looking up device %s found device %s", a->results[i].device,
                             devs[i].name);
        if (check_attached(&a->results[i], &devs[i], err) < 0 ||
            allocation_check_result(&a->results[i], i, &devs[i], &holds[i], err) < 0)
            return -1;
    }
    const struct claim_holds mine = {NULL, NULL, NULL, holds, a->n_results};
    return allocation_check_claim(&mine, err);
}

/* What a claim's allocation resolves to before anything is planned: this
 * driver's results, their devices and their opaque configs. */
struct plan_parts {
    struct claim_allocation a;
    size_t n; /* results */
    struct fakehw_device *devs;
    const char **requests;
    struct gpu_config *configs; /* the fakehw personality's, resolved when have_configs */
    bool have_configs;
    struct nvidia_config *nv_configs; /* the nvidia personality's */
    struct cdi_claim_device *cdevs;
    struct device_hold *holds; /* goes to the record */
};

static void plan_parts_free(struct plan_parts *pp)
{
    if (pp->have_configs)
        gpu_config_free(pp->configs, pp->n);
    claim_allocation_free(&pp->a);
    free(pp->devs);
    free(pp->requests);
    free(pp->configs);
    free(pp->nv_configs);
    free(pp->cdevs);
    free(pp->holds);
}
#define cleanup_plan_parts __attribute__((cleanup(plan_parts_free)))

static int resolve_parts(const struct prepare_state *st, const struct claim_ref *ref,
                         const json_t *claim, struct plan_parts *pp, struct error *err)
{
    if (claim_allocation_parse(claim, ref->uid, st->cfg.driver_name, st->cfg.node_name, &pp->a,
                               err) < 0)
        return -1;
    size_t n = pp->n = pp->a.n_results, alloc = n ? n : 1;
    pp->devs = xcalloc(alloc, sizeof(*pp->devs));
    pp->requests = xcalloc(alloc, sizeof(*pp->requests));
    pp->configs = xcalloc(alloc, sizeof(*pp->configs));
    pp->nv_configs = xcalloc(alloc, sizeof(*pp->nv_configs));
    pp->cdevs = xcalloc(alloc, sizeof(*pp->cdevs));
    pp->holds = xcalloc(alloc, sizeof(*pp->holds));
    for (size_t i = 0; i < n; i++)
        pp->requests[i] = pp->a.results[i].request;
    if (lookup_devices(st, &pp->a, pp->devs, pp->holds, err) < 0)
        return -1;
    if (st->cfg.personality == PERSONALITY_NVIDIA)
        return nvidia_config_resolve(st->cfg.driver_name, pp->a.config, pp->requests, pp->devs, n,
                                     pp->nv_configs, err);
    if (gpu_config_resolve(st->cfg.driver_name, pp->a.config, pp->requests, n, pp->configs, err) <
        0)
        return -1;
    pp->have_configs = true;
    return 0;
}

/* The record, the answer and the files (metadata files and specs per
 * request, then the claim spec) of the resolved parts. */
static int plan_from_parts(const struct prepare_state *st, const struct claim_ref *ref,
                           struct plan_parts *pp, struct prepare_plan *p, struct error *err)
{
    size_t n = pp->n;
    bool nvidia = st->cfg.personality == PERSONALITY_NVIDIA;
    p->files = xcalloc(2 * n + 1, sizeof(*p->files));
    p->record = claim_record_new(ref, CLAIM_PREPARE_STARTED);
    p->record->holds = steal_pointer(&pp->holds);
    p->record->n_holds = n;
    struct cdi_claim cc = {
        st->cfg.driver_name, ref->ns, ref->name, ref->uid, st->cfg.fakehw_host_root,
        st->cfg.fakegpu_smi, nvidia,  pp->cdevs, n};
    json_auto_t *claim_spec = NULL;
    if (n > 0) {
        for (size_t i = 0; i < n; i++)
            pp->cdevs[i] = (struct cdi_claim_device){&pp->devs[i],
                                                     pp->a.results[i].request,
                                                     pp->a.results[i].share_id,
                                                     &pp->configs[i],
                                                     nvidia ? &pp->nv_configs[i] : NULL,
                                                     pp->a.results[i].consumed_memory,
                                                     ""};
        if ((claim_spec = cdi_claim_spec(&cc, err)) == NULL)
            return -1;
    }
    build_answer(st, &pp->a, &cc, &p->answer);
    if (n > 0 && st->cfg.device_metadata) {
        const struct plan_input in = {st, ref, &pp->a, pp->devs, p};
        char dirname[K8S_DNS_LABEL_MAX + K8S_DNS_SUBDOMAIN_MAX + 2];
        if (plan_metadata(&in, err) < 0 ||
            claim_metadata_dir_name(ref->ns, ref->name, dirname, sizeof(dirname), err) < 0)
            return -1;
        claim_record_set_metadata_dir(p->record, dirname);
    }
    if (n > 0) {
        char spec_name[PATH_BUF];
        if (claim_spec_name(st->cfg.driver_name, ref->uid, spec_name, sizeof(spec_name), err) < 0 ||
            add_file(p, st->cfg.cdi_root, spec_name, cdi_spec_text(claim_spec), false, false, err) <
                0)
            return -1;
        claim_record_add_spec(p->record, spec_name);
    }
    prepared_claim_copy(&p->answer, &p->record->devices);
    return 0;
}

int prepare_plan_build(const struct prepare_state *st, const struct claim_ref *ref,
                       const json_t *claim, struct prepare_plan *p, struct error *err)
{
    memset(p, 0, sizeof(*p));
    cleanup_plan_parts struct plan_parts pp = {0};
    if (resolve_parts(st, ref, claim, &pp, err) < 0 || plan_from_parts(st, ref, &pp, p, err) < 0) {
        prepare_plan_free(p);
        return -1;
    }
    return 0;
}

void prepare_plan_free(struct prepare_plan *p)
{
    for (size_t i = 0; i < p->n_files; i++) {
        free(p->files[i].path);
        free(p->files[i].text);
    }
    free(p->files);
    claim_record_free(p->record);
    prepared_claim_free(&p->answer);
    memset(p, 0, sizeof(*p));
}
