// SPDX-License-Identifier: Apache-2.0
/* The fleet's binder devices: see fleet_bind.h. */
#include "fleet_bind.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_pools.h"
#include "log.h"

struct fleet_bind {
    char *prefix;
    struct fleet_node *const *nodes;
    size_t n;
    bool *engaged; /* by node: on the list */
    size_t *list;  /* node indices, nlist of them */
    size_t nlist;
};

struct fleet_bind *fleet_bind_new(const char *prefix, struct fleet_node *const *nodes, size_t n)
{
    struct fleet_bind *fb = calloc(1, sizeof(*fb));
    if (fb == NULL)
        return NULL;
    fb->prefix = strdup(prefix);
    fb->engaged = calloc(n ? n : 1, sizeof(*fb->engaged));
    fb->list = calloc(n ? n : 1, sizeof(*fb->list));
    if (fb->prefix == NULL || fb->engaged == NULL || fb->list == NULL) {
        fleet_bind_free(fb);
        return NULL;
    }
    fb->nodes = nodes;
    fb->n = n;
    return fb;
}

struct fleet_node *fleet_bind_node(const struct fleet_bind *fb, const char *pool)
{
    long i = fleet_pool_index(fb->prefix, fb->nodes, fb->n, pool);
    return i >= 0 ? fb->nodes[i] : NULL;
}

static bool serves(void *ctx, const char *pool)
{
    return fleet_bind_node(ctx, pool) != NULL;
}

static int read_attach(void *ctx, const char *pool, const char *device, enum fakehw_attach *state)
{
    struct fleet_node *node = fleet_bind_node(ctx, pool);
    struct error err = {{0}};
    if (node == NULL) {
        LOG_W("binder: reading the attach state of %s/%s: no such node", pool, device);
        return -1;
    }
    if (fleet_node_attach_state(node, device, state, &err) < 0) {
        LOG_W("binder: %s", err.msg);
        return -1;
    }
    return 0;
}

static int write_attach(void *ctx, const char *pool, const char *device, const char *command)
{
    struct fleet_bind *fb = ctx;
    long i = fleet_pool_index(fb->prefix, fb->nodes, fb->n, pool);
    struct error err = {{0}};
    if (i < 0) {
        LOG_W("binder: writing \"%s\" to %s/%s: no such node", command, pool, device);
        return -1;
    }
    if (fleet_node_write_attach(fb->nodes[i], device, command, &err) < 0) {
        LOG_W("binder: writing \"%s\": %s", command, err.msg);
        return -1;
    }
    if (!fb->engaged[i] && !strcmp(command, "attach")) {
        fb->engaged[i] = true;
        fb->list[fb->nlist++] = (size_t)i;
    }
    return 0;
}

struct node_pass {
    binder_engaged_fn fn;
    void *fctx;
    const char *pool;
    bool any; /* a device of the node is not detached */
};

static void each_device(void *ctx, const char *device, enum fakehw_attach state)
{
    struct node_pass *p = ctx;
    if (state == FAKEHW_ATTACH_NONE || state == FAKEHW_ATTACH_DETACHED)
        return;
    p->any = true;
    p->fn(p->fctx, p->pool, device, state);
}

static void each_engaged(void *ctx, binder_engaged_fn fn, void *fctx)
{
    struct fleet_bind *fb = ctx;
    for (size_t k = 0; k < fb->nlist;) {
        size_t i = fb->list[k];
        struct node_pass p = {fn, fctx, fleet_node_name(fb->nodes[i]), false};
        struct error err = {{0}};
        if (fleet_node_attach_states(fb->nodes[i], each_device, &p, &err) < 0) {
            LOG_W("binder: %s", err.msg);
            p.any = true; /* read it again next time */
        }
        if (!p.any) {
            fb->engaged[i] = false;
            fb->list[k] = fb->list[--fb->nlist];
            continue;
        }
        k++;
    }
}

void fleet_bind_devices(struct fleet_bind *fb, struct binder_devices *dev)
{
    *dev = (struct binder_devices){.serves = serves,
                                   .read_attach = read_attach,
                                   .write_attach = write_attach,
                                   .each_engaged = each_engaged,
                                   .ctx = fb};
}

size_t fleet_bind_engaged_nodes(const struct fleet_bind *fb)
{
    return fb->nlist;
}

void fleet_bind_free(struct fleet_bind *fb)
{
    if (fb == NULL)
        return;
    free(fb->prefix);
    free(fb->engaged);
    free(fb->list);
    free(fb);
}
