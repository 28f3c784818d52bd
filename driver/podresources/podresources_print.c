// SPDX-License-Identifier: Apache-2.0
/* Printing PodResources answers: see podresources_print.h. */
#include "podresources_print.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *or_empty(const char *s)
{
    return s != NULL ? s : "";
}

/* Appends item (a new reference; NULL when making it failed) to *list.  On
 * failure the list is freed and *list is NULL, which ends the loop filling it. */
static void append_or_drop(json_t **list, json_t *item)
{
    if (item == NULL || json_array_append_new(*list, item) < 0) {
        json_decref(*list);
        *list = NULL;
    }
}

static json_t *device_json(const V1__ClaimResource *r)
{
    json_t *cdi = json_array();
    for (size_t i = 0; cdi != NULL && i < r->n_cdi_devices; i++)
        append_or_drop(&cdi, json_string(or_empty(r->cdi_devices[i]->name)));
    if (cdi == NULL)
        return NULL;
    json_t *d =
        json_pack("{s:s, s:s, s:s, s:o}", "driver", or_empty(r->driver_name), "pool",
                  or_empty(r->pool_name), "device", or_empty(r->device_name), "cdiDevices", cdi);
    if (d != NULL && r->share_id != NULL && r->share_id[0] != '\0' &&
        json_object_set_new(d, "shareID", json_string(r->share_id)) < 0) {
        json_decref(d);
        return NULL;
    }
    return d;
}

static json_t *claim_json(const V1__DynamicResource *c)
{
    json_t *devices = json_array();
    for (size_t i = 0; devices != NULL && i < c->n_claim_resources; i++)
        append_or_drop(&devices, device_json(c->claim_resources[i]));
    if (devices == NULL)
        return NULL;
    return json_pack("{s:s, s:s, s:o}", "namespace", or_empty(c->claim_namespace), "name",
                     or_empty(c->claim_name), "devices", devices);
}

json_t *podres_json(V1__PodResources *const *pods, size_t n)
{
    json_t *list = json_array();
    for (size_t p = 0; list != NULL && p < n; p++) {
        json_t *containers = json_array();
        for (size_t c = 0; containers != NULL && c < pods[p]->n_containers; c++) {
            const V1__ContainerResources *cr = pods[p]->containers[c];
            if (cr->n_dynamic_resources == 0)
                continue;
            json_t *claims = json_array();
            for (size_t k = 0; claims != NULL && k < cr->n_dynamic_resources; k++)
                append_or_drop(&claims, claim_json(cr->dynamic_resources[k]));
            json_t *entry =
                claims ? json_pack("{s:s, s:o}", "name", or_empty(cr->name), "claims", claims)
                       : NULL;
            append_or_drop(&containers, entry);
        }
        if (containers == NULL) {
            json_decref(list);
            return NULL;
        }
        if (json_array_size(containers) == 0) {
            json_decref(containers);
            continue;
        }
        append_or_drop(&list,
                       json_pack("{s:s, s:s, s:o}", "namespace", or_empty(pods[p]->namespace_),
                                 "name", or_empty(pods[p]->name), "containers", containers));
    }
    return list != NULL ? json_pack("{s:o}", "pods", list) : NULL;
}

#define COLUMNS 8

static const char *const headers[COLUMNS] = {"NAMESPACE", "POD",  "CONTAINER", "CLAIM",
                                             "DRIVER",    "POOL", "DEVICE",    "CDI-DEVICES"};

/* Rows are built from the JSON (one shape for both outputs). */
static int add_row(json_t *rows, const char *const cells[COLUMNS])
{
    json_t *row = json_array();
    for (int i = 0; row != NULL && i < COLUMNS; i++)
        if (json_array_append_new(row, json_string(cells[i])) < 0) {
            json_decref(row);
            row = NULL;
        }
    return row != NULL ? json_array_append_new(rows, row) : -1;
}

static int build_rows(const json_t *doc, json_t *rows)
{
    size_t ip, ic, ik, id;
    const json_t *pod, *ctr, *claim, *dev;
    json_array_foreach(json_object_get(doc, "pods"), ip, pod)
    {
        json_array_foreach(json_object_get(pod, "containers"), ic, ctr)
        {
            json_array_foreach(json_object_get(ctr, "claims"), ik, claim)
            {
                const char *cells[COLUMNS] = {json_string_value(json_object_get(pod, "namespace")),
                                              json_string_value(json_object_get(pod, "name")),
                                              json_string_value(json_object_get(ctr, "name")),
                                              json_string_value(json_object_get(claim, "name")),
                                              "-",
                                              "-",
                                              "-",
                                              "-"};
                const json_t *devices = json_object_get(claim, "devices");
                if (json_array_size(devices) == 0 && add_row(rows, cells) < 0)
                    return -1;
                json_array_foreach(devices, id, dev)
                {
                    char cdi[2048] = "";
                    size_t i;
                    const json_t *name;
                    json_array_foreach(json_object_get(dev, "cdiDevices"), i, name)
                    {
                        size_t used = strlen(cdi);
                        snprintf(cdi + used, sizeof(cdi) - used, "%s%s", used ? "," : "",
                                 json_string_value(name));
                    }
                    cells[4] = json_string_value(json_object_get(dev, "driver"));
                    cells[5] = json_string_value(json_object_get(dev, "pool"));
                    cells[6] = json_string_value(json_object_get(dev, "device"));
                    cells[7] = cdi[0] ? cdi : "-";
                    if (add_row(rows, cells) < 0)
                        return -1;
                }
            }
        }
    }
    return 0;
}

/* The last column is not padded (no trailing blanks). */
static void print_row(FILE *out, const char *const cells[COLUMNS], const size_t width[COLUMNS])
{
    for (int c = 0; c + 1 < COLUMNS; c++)
        fprintf(out, "%-*s  ", (int)width[c], cells[c]);
    fprintf(out, "%s\n", cells[COLUMNS - 1]);
}

int podres_print_text(FILE *out, V1__PodResources *const *pods, size_t n)
{
    json_t *doc = podres_json(pods, n), *rows = json_array();
    if (doc == NULL || rows == NULL || build_rows(doc, rows) < 0) {
        json_decref(doc);
        json_decref(rows);
        return -1;
    }
    if (json_array_size(rows) == 0) {
        fprintf(out, "(no DRA devices)\n");
    } else {
        size_t width[COLUMNS];
        for (int c = 0; c < COLUMNS; c++)
            width[c] = strlen(headers[c]);
        size_t r;
        const json_t *row;
        json_array_foreach(rows, r, row)
        {
            for (int c = 0; c < COLUMNS; c++) {
                size_t w = strlen(json_string_value(json_array_get(row, (size_t)c)));
                if (w > width[c])
                    width[c] = w;
            }
        }
        print_row(out, headers, width);
        json_array_foreach(rows, r, row)
        {
            const char *cells[COLUMNS];
            for (int c = 0; c < COLUMNS; c++)
                cells[c] = json_string_value(json_array_get(row, (size_t)c));
            print_row(out, cells, width);
        }
    }
    json_decref(doc);
    json_decref(rows);
    return 0;
}
