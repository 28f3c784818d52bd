// SPDX-License-Identifier: Apache-2.0
#include "claim_record.h"

#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "grow.h"
#include "prepared_claim.h"
#include "xalloc.h"

struct claim_record *claim_record_new(const struct claim_ref *claim, enum claim_state state)
{
    struct claim_record *r = xcalloc(1, sizeof(*r));
    r->uid = xstrdup(claim->uid);
    r->ns = xstrdup(claim->ns);
    r->name = xstrdup(claim->name);
    r->state = state;
    return r;
}

void claim_record_free(struct claim_record *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n_cdi_specs; i++)
        free(r->cdi_specs[i]);
    free(r->cdi_specs);
    prepared_claim_free(&r->devices);
    free(r->metadata_dir);
    free(r->holds);
    free(r->uid);
    free(r->ns);
    free(r->name);
    free(r);
}

struct claim_ref claim_record_ref(const struct claim_record *r)
{
    return (struct claim_ref){r->ns, r->name, r->uid};
}

bool claim_record_names(const struct claim_record *r, const char *ns, const char *name)
{
    return strcmp(r->ns, ns) == 0 && strcmp(r->name, name) == 0;
}

void claim_record_add_spec(struct claim_record *r, const char *spec_name)
{
    r->cdi_specs = xrealloc(r->cdi_specs, (r->n_cdi_specs + 1) * sizeof(*r->cdi_specs));
    r->cdi_specs[r->n_cdi_specs++] = xstrdup(spec_name);
}

bool claim_record_lists_spec(const struct claim_record *r, const char *spec_name)
{
    for (size_t i = 0; r != NULL && i < r->n_cdi_specs; i++)
        if (strcmp(r->cdi_specs[i], spec_name) == 0)
            return true;
    return false;
}

void claim_record_set_metadata_dir(struct claim_record *r, const char *dirname)
{
    free(r->metadata_dir);
    r->metadata_dir = xstrdup(dirname);
}

const char *claim_state_name(enum claim_state s)
{
    return s == CLAIM_PREPARE_COMPLETED ? CHECKPOINT_COMPLETED : CHECKPOINT_STARTED;
}

/* ---- the checkpoint boundary ---- */

json_t *claim_record_to_json(const struct claim_record *r)
{
    json_auto_t *specs = json_array();
    for (size_t i = 0; specs != NULL && i < r->n_cdi_specs; i++)
        if (json_array_append_new(specs, json_string(r->cdi_specs[i])) < 0)
            return NULL;
    if (specs == NULL)
        return NULL;
    json_auto_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:o, s:O}", "uid", r->uid, "namespace",
                                 r->ns, "name", r->name, "state", claim_state_name(r->state),
                                 "devices", prepared_claim_to_json(&r->devices), "cdiSpecs", specs);
    if (rec == NULL || (r->metadata_dir != NULL &&
                        json_object_set_new(rec, "metadataDir", json_string(r->metadata_dir)) < 0))
        return NULL;
    return json_incref(rec);
}

static const char *field(const json_t *rec, const char *key)
{
    return json_string_value(json_object_get(rec, key));
}

int claim_record_from_json(const char *uid, const json_t *rec, struct claim_record **out,
                           struct error *err)
{
    *out = NULL;
    const char *ns = field(rec, "namespace"), *name = field(rec, "name");
    const char *state = field(rec, "state"), *md = field(rec, "metadataDir");
    const json_t *specs = json_object_get(rec, "cdiSpecs");
    if (ns == NULL || name == NULL || state == NULL || !json_is_array(specs))
        return error_set(err, "claim %s: namespace, name, state and cdiSpecs are required", uid);
    bool completed = strcmp(state, CHECKPOINT_COMPLETED) == 0;
    if (!completed && strcmp(state, CHECKPOINT_STARTED) != 0)
        return error_set(err, "claim %s: state must be %s or %s", uid, CHECKPOINT_STARTED,
                         CHECKPOINT_COMPLETED);
    const struct claim_ref ref = {ns, name, uid};
    cleanup_claim_record struct claim_record *r =
        claim_record_new(&ref, completed ? CLAIM_PREPARE_COMPLETED : CLAIM_PREPARE_STARTED);
    if (prepared_claim_from_json(json_object_get(rec, "devices"), &r->devices, err) < 0)
        return error_prefix(err, "claim %s", uid);
    size_t i;
    const json_t *v;
    json_array_foreach(specs, i, v)
    {
        if (!json_is_string(v))
            return error_set(err, "claim %s: cdiSpecs[%zu]: not a string", uid, i);
        claim_record_add_spec(r, json_string_value(v));
    }
    if (md != NULL)
        claim_record_set_metadata_dir(r, md);
    *out = steal_pointer(&r);
    return 0;
}

/* ---- the set ---- */

static size_t find_index(const struct claim_records *t, const char *uid)
{
    size_t i = 0;
    while (i < t->n && strcmp(t->v[i]->uid, uid) != 0)
        i++;
    return i;
}

struct claim_record *claim_records_find(const struct claim_records *t, const char *uid)
{
    size_t i = find_index(t, uid);
    return i < t->n ? t->v[i] : NULL;
}

static void append(struct claim_records *t, struct claim_record *r)
{
    GROW(t->v, t->cap, t->n + 1);
    t->v[t->n++] = r;
}

void claim_records_put(struct claim_records *t, struct claim_record *r)
{
    size_t i = find_index(t, r->uid);
    if (i < t->n) {
        claim_record_free(t->v[i]);
        t->v[i] = r;
        return;
    }
    append(t, r);
}

void claim_records_remove(struct claim_records *t, const char *uid)
{
    size_t i = find_index(t, uid);
    if (i == t->n)
        return;
    claim_record_free(t->v[i]);
    memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*t->v));
    t->n--;
}

void claim_records_clear(struct claim_records *t)
{
    for (size_t i = 0; i < t->n; i++)
        claim_record_free(t->v[i]);
    free(t->v);
    memset(t, 0, sizeof(*t));
}

json_t *claim_records_to_json(const struct claim_records *t, bool completed_only)
{
    json_auto_t *claims = json_object();
    for (size_t i = 0; claims != NULL && i < t->n; i++) {
        if (completed_only && t->v[i]->state != CLAIM_PREPARE_COMPLETED)
            continue;
        if (json_object_set_new(claims, t->v[i]->uid, claim_record_to_json(t->v[i])) < 0)
            return NULL;
    }
    return json_incref(claims);
}

int claim_records_from_json(const json_t *claims, struct claim_records *t, struct error *err)
{
    claim_records_clear(t);
    const char *uid;
    const json_t *rec;
    json_object_foreach((json_t *)claims, uid, rec)
    {
        struct claim_record *r;
        if (claim_record_from_json(uid, rec, &r, err) < 0) {
            claim_records_clear(t);
            return -1;
        }
        append(t, r); /* the keys of an object are unique: no lookup */
    }
    return 0;
}
