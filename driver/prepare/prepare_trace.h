// SPDX-License-Identifier: Apache-2.0
/* Where the time of one prepare or unprepare goes, step by step, for the
 * debug log (-v 3).  Each mark charges the time since the previous mark to
 * a step, so the steps add up to the whole.  Off, it costs one branch. */
#ifndef FAKEHW_DRIVER_PREPARE_TRACE_H
#define FAKEHW_DRIVER_PREPARE_TRACE_H

#include <stdbool.h>
#include <stddef.h>

/* The verbosity at which the steps are logged. */
#define PREPARE_TRACE_VERBOSITY 3

#define PREPARE_STEPS(X)                                                                           \
    X(WAIT, "wait")             /* for another call on the same claim uid */                       \
    X(CHECKPOINT, "checkpoint") /* answer from the checkpoint, or drop a stale record */           \
    X(CLAIM, "claim")           /* the claim: from the watch cache or a GET */                     \
    X(PLAN, "plan")             /* the CDI specs, metadata and the answer, in memory */            \
    X(FILES, "files")           /* CDI spec and metadata files written or removed */               \
    X(JOURNAL, "journal")       /* the checkpoint journal line, written */                         \
    X(HOOKS, "hooks")           /* the claim-status writer told */

enum prepare_step {
#define PREPARE_STEP_ENUM(id, name) PREPARE_STEP_##id,
    PREPARE_STEPS(PREPARE_STEP_ENUM)
#undef PREPARE_STEP_ENUM
        PREPARE_STEP_COUNT
};

struct prepare_trace {
    bool on;
    long long start_ns, last_ns;
    long long step_ns[PREPARE_STEP_COUNT];
};

/* Starts the clock when the debug log is at PREPARE_TRACE_VERBOSITY. */
void prepare_trace_start(struct prepare_trace *t);
/* Charges the time since the previous mark to step. */
void prepare_trace_mark(struct prepare_trace *t, enum prepare_step step);
/* "claim NS/NAME (uid U): prepare 1.234 ms: wait 0.001, claim 0.400, ..."
 * (only the steps that ran).  what: "prepare" or "unprepare". */
void prepare_trace_log(const struct prepare_trace *t, const char *what, const char *ns,
                       const char *name, const char *uid);

#endif
