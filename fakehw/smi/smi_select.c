// SPDX-License-Identifier: Apache-2.0
/* Visibility (FAKEHW_VISIBLE_DEVICES) and -i/--id selection for fakegpu-smi. */
#include "smi_select.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool item_is(const char *item, size_t len, const char *word)
{
    return strlen(word) == len && !strncmp(item, word, len);
}

struct uuid_match {
    const char *uuid;
    bool found;
};

static int match_uuid(const char *item, size_t len, void *ctx)
{
    struct uuid_match *m = ctx;
    if (item_is(item, len, m->uuid)) {
        m->found = true;
        return -1; /* stop: found */
    }
    return 0;
}

struct warn_ctx {
    const struct fakehw_device *devs;
    size_t n;
    FILE *warn;
};

static int warn_unknown(const char *item, size_t len, void *ctx)
{
    struct warn_ctx *c = ctx;
    if (len == 0)
        return 0;
    for (size_t i = 0; i < c->n; i++)
        if (item_is(item, len, c->devs[i].uuid))
            return 0;
    fprintf(c->warn,
            "fakegpu-smi: FAKEHW_VISIBLE_DEVICES names %.*s, which is not in the fakehw "
            "tree\n",
            (int)len, item);
    return 0;
}

size_t smi_visible(const struct fakehw_device *devs, size_t n, const char *visible,
                   struct smi_gpu *gpus, FILE *warn)
{
    bool all = visible == NULL || !strcmp(visible, "all");
    if (!all && (*visible == '\0' || !strcmp(visible, "none") || !strcmp(visible, "void")))
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (devs[i].parent[0] != '\0')
            continue;
        struct uuid_match m = {devs[i].uuid, false};
        if (!all)
            smi_each_item(visible, match_uuid, &m);
        gpus[k].dev = &devs[i];
        gpus[k].nmig = 0;
        /* Partitions come after every GPU in index order. */
        for (size_t j = 0; j < n; j++) {
            const struct fakehw_device *p = &devs[j];
            if (strcmp(p->parent, devs[i].name) != 0)
                continue;
            struct uuid_match pm = {p->uuid, false};
            if (all)
                pm.found = !strcmp(devs[i].mig_mode, FAKEHW_MIG_STATIC);
            else
                smi_each_item(visible, match_uuid, &pm);
            if (pm.found && gpus[k].nmig < SMI_MIG_MAX)
                gpus[k].migs[gpus[k].nmig++] = p;
        }
        if (all || m.found || gpus[k].nmig > 0) {
            gpus[k].index = (unsigned)k;
            k++;
        }
    }
    if (!all) {
        struct warn_ctx c = {devs, n, warn};
        smi_each_item(visible, warn_unknown, &c);
    }
    return k;
}

/* True when e is "FAKEHW_DEVICE_<digits>_UUID=..."; *value points past '='. */
static bool device_uuid_var(const char *e, const char **value)
{
    static const char prefix[] = "FAKEHW_DEVICE_", suffix[] = "_UUID=";
    if (strncmp(e, prefix, sizeof(prefix) - 1) != 0)
        return false;
    const char *p = e + sizeof(prefix) - 1;
    if (!isdigit((unsigned char)*p))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    if (strncmp(p, suffix, sizeof(suffix) - 1) != 0)
        return false;
    *value = p + sizeof(suffix) - 1;
    return true;
}

const char *smi_visible_from_env(char **envp, char **owned)
{
    *owned = NULL;
    size_t len = 0;
    for (char **e = envp; e != NULL && *e != NULL; e++) {
        const char *v;
        if (device_uuid_var(*e, &v))
            len += strlen(v) + 1;
    }
    if (len == 0)
        return getenv("FAKEHW_VISIBLE_DEVICES");
    char *list = malloc(len);
    if (list == NULL)
        return getenv("FAKEHW_VISIBLE_DEVICES");
    list[0] = '\0';
    for (char **e = envp; *e != NULL; e++) {
        const char *v;
        if (device_uuid_var(*e, &v)) {
            if (list[0] != '\0')
                strcat(list, ",");
            strcat(list, v);
        }
    }
    *owned = list;
    return list;
}

/* The share of device index from its environment. */
static void read_share(long index, struct smi_share *s, FILE *warn)
{
    memset(s, 0, sizeof(*s));
    char name[64];
    snprintf(name, sizeof(name), "FAKEHW_DEVICE_%ld_MEMORY", index);
    const char *v = getenv(name);
    if (v == NULL)
        return;
    char *end;
    errno = 0;
    unsigned long long b = strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || b == 0) {
        fprintf(warn, "fakegpu-smi: %s=\"%.64s\" is not a byte count; ignored\n", name, v);
        return;
    }
    s->memory = b;
    snprintf(name, sizeof(name), "FAKEHW_DEVICE_%ld_SHARE_ID", index);
    const char *id = getenv(name);
    bool ok = id != NULL && id[0] != '\0' && strlen(id) <= SMI_SHARE_ID_MAX;
    for (const char *p = id; ok && *p; p++)
        ok = isgraph((unsigned char)*p);
    if (ok)
        snprintf(s->id, sizeof(s->id), "%s", id);
    else if (id != NULL)
        fprintf(warn,
                "fakegpu-smi: %s=\"%.64s\" is not a share id (1 to %d printable characters); "
                "ignored\n",
                name, id, SMI_SHARE_ID_MAX);
}

void smi_shares(struct smi_gpu *gpus, size_t n, FILE *warn)
{
    for (size_t i = 0; i < n; i++) {
        read_share(gpus[i].dev->index, &gpus[i].share, warn);
        for (size_t m = 0; m < gpus[i].nmig; m++)
            read_share(gpus[i].migs[m]->index, &gpus[i].mig_shares[m], warn);
    }
}

struct id_ctx {
    const struct smi_gpu *gpus;
    size_t n;
    bool *keep;
    struct error *err;
};

static bool gpu_matches(const struct smi_gpu *g, const char *id)
{
    bool digits = *id != '\0';
    for (const char *p = id; *p != '\0'; p++)
        if (!isdigit((unsigned char)*p))
            digits = false;
    if (digits)
        return strtoul(id, NULL, 10) == g->index && strlen(id) < 10;
    if (!strcmp(id, g->dev->uuid))
        return true;
    char want[32], have[32];
    return smi_pci_bus_id(id, want, sizeof(want)) == 0 &&
           smi_pci_bus_id(g->dev->pci_bus_id, have, sizeof(have)) == 0 && !strcmp(want, have);
}

static int keep_id(const char *item, size_t len, void *ctx)
{
    struct id_ctx *c = ctx;
    char id[FAKEHW_TEXT_MAX];
    if (len == 0 || len >= sizeof(id))
        return error_set(c->err, "-i/--id: \"%.*s\" is not a GPU index, UUID or PCI bus id",
                         (int)len, item);
    memcpy(id, item, len);
    id[len] = '\0';
    bool any = false;
    for (size_t i = 0; i < c->n; i++)
        if (gpu_matches(&c->gpus[i], id))
            c->keep[i] = any = true;
    if (!any)
        return error_set(c->err,
                         "-i/--id: \"%s\" matches no GPU (give an index as -L shows it, a "
                         "UUID or a PCI bus id)",
                         id);
    return 0;
}

int smi_select_ids(struct smi_gpu *gpus, size_t *n, const char *ids, struct error *err)
{
    bool *keep = calloc(*n ? *n : 1, sizeof(*keep));
    if (keep == NULL)
        return error_set(err, "-i/--id: out of memory");
    struct id_ctx c = {gpus, *n, keep, err};
    int rc = smi_each_item(ids, keep_id, &c);
    if (rc == 0) {
        size_t k = 0;
        for (size_t i = 0; i < *n; i++)
            if (keep[i])
                gpus[k++] = gpus[i];
        *n = k;
    }
    free(keep);
    return rc;
}
