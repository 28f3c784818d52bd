// SPDX-License-Identifier: Apache-2.0
/* See prepare_trace.h. */
#include "driver/prepare/prepare_trace.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "monotonic.h"
#include "text_list.h"

static const char *const step_names[PREPARE_STEP_COUNT] = {
#define PREPARE_STEP_NAME(id, name) [PREPARE_STEP_##id] = name,
    PREPARE_STEPS(PREPARE_STEP_NAME)
#undef PREPARE_STEP_NAME
};

void prepare_trace_start(struct prepare_trace *t)
{
    memset(t, 0, sizeof(*t));
    t->on = log_verbosity >= PREPARE_TRACE_VERBOSITY;
    if (t->on)
        t->start_ns = t->last_ns = monotonic_ns();
}

void prepare_trace_mark(struct prepare_trace *t, enum prepare_step step)
{
    if (!t->on)
        return;
    long long now = monotonic_ns();
    t->step_ns[step] += now - t->last_ns;
    t->last_ns = now;
}

/* "wait 0.001, claim 0.400, ..." into buf; the total in *total_ms. */
static void format_steps(const struct prepare_trace *t, char *buf, size_t size, double *total_ms)
{
    struct text_list l = text_list_start(buf, size);
    for (int s = 0; s < PREPARE_STEP_COUNT; s++)
        if (t->step_ns[s] != 0)
            text_list_add(&l, "%s %.3f", step_names[s], (double)t->step_ns[s] / 1e6);
    *total_ms = (double)(t->last_ns - t->start_ns) / 1e6;
}

void prepare_trace_log(const struct prepare_trace *t, const char *what, const char *ns,
                       const char *name, const char *uid)
{
    if (!t->on)
        return;
    char steps[256];
    double total;
    format_steps(t, steps, sizeof(steps), &total);
    LOG_V(PREPARE_TRACE_VERBOSITY, "claim %s/%s (uid %s): %s %.3f ms: %s", ns, name, uid, what,
          total, steps);
}
