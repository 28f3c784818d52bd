// SPDX-License-Identifier: Apache-2.0
#include "load.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "proc.h"

struct load {
    load_op_fn op;
    void *ctx;
    int iterations, n_sets;
    pthread_mutex_t lock;
    pthread_cond_t go_cond;
    bool go;
    bool failed;
    struct error err;
};

struct caller {
    struct load *load;
    int index;
    struct samples sets[LOAD_MAX_SETS];
    int64_t end_ns;
};

double ms_since(int64_t t0_ns)
{
    return (double)(now_mono_ns() - t0_ns) / 1e6;
}

static void *caller_main(void *arg)
{
    struct caller *c = arg;
    struct load *l = c->load;
    pthread_mutex_lock(&l->lock);
    while (!l->go)
        pthread_cond_wait(&l->go_cond, &l->lock);
    pthread_mutex_unlock(&l->lock);
    for (int i = 0; i < l->iterations; i++) {
        pthread_mutex_lock(&l->lock);
        bool stop = l->failed;
        pthread_mutex_unlock(&l->lock);
        if (stop)
            break;
        struct error e;
        if (l->op(l->ctx, c->index, i, c->sets, &e) < 0) {
            pthread_mutex_lock(&l->lock);
            if (!l->failed) {
                l->failed = true;
                l->err = e;
            }
            pthread_mutex_unlock(&l->lock);
            break;
        }
    }
    c->end_ns = now_mono_ns();
    return NULL;
}

int load_run(int callers, int iterations, load_op_fn op, void *ctx, int n_sets, struct samples *out,
             double *wall_ms, struct error *err)
{
    if (callers < 1 || callers > LOAD_MAX_CALLERS || n_sets < 1 || n_sets > LOAD_MAX_SETS)
        return error_set(err, "load: %d callers, %d sample sets: out of range", callers, n_sets);
    struct load l = {.op = op, .ctx = ctx, .iterations = iterations, .n_sets = n_sets};
    struct caller cs[LOAD_MAX_CALLERS];
    pthread_t th[LOAD_MAX_CALLERS];
    memset(cs, 0, sizeof(cs));
    pthread_mutex_init(&l.lock, NULL);
    pthread_cond_init(&l.go_cond, NULL);
    int started = 0;
    for (; started < callers; started++) {
        cs[started] = (struct caller){.load = &l, .index = started};
        if (pthread_create(&th[started], NULL, caller_main, &cs[started]) != 0)
            break;
    }
    /* Release every caller at once (or, if one could not start, let the
     * others see the failure and return). */
    pthread_mutex_lock(&l.lock);
    if (started < callers) {
        l.failed = true;
        error_set(&l.err, "load: cannot start caller thread %d", started);
    }
    l.go = true;
    int64_t t0 = now_mono_ns();
    pthread_cond_broadcast(&l.go_cond);
    pthread_mutex_unlock(&l.lock);
    int64_t end = t0;
    for (int k = 0; k < started; k++) {
        pthread_join(th[k], NULL);
        if (cs[k].end_ns > end)
            end = cs[k].end_ns;
    }
    *wall_ms = (double)(end - t0) / 1e6;
    for (int k = 0; k < started; k++)
        for (int s = 0; s < n_sets; s++) {
            if (samples_merge(&out[s], &cs[k].sets[s]) < 0 && !l.failed) {
                l.failed = true;
                error_set(&l.err, "out of memory");
            }
            samples_free(&cs[k].sets[s]);
        }
    pthread_cond_destroy(&l.go_cond);
    pthread_mutex_destroy(&l.lock);
    if (l.failed) {
        *err = l.err;
        return -1;
    }
    return 0;
}
