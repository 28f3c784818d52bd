// SPDX-License-Identifier: Apache-2.0
/* Attachable devices: the state machine behind the `attach` file of the
 * tree (fakehw_tree.h), pure and without locks (the inventory holds its
 * lock around these calls).
 *
 *   detached --attach--> attaching --delay--> attached
 *                                   \-------> failed   (a scripted failure)
 *   any state --detach--> detached;  failed --attach--> attaching (a retry)
 *
 * With a delay of 0 an attach ends at once.  Whether it fails is decided
 * when it ends: "fail next" fails that one attach and then goes back to
 * "never"; "fail always" fails every attach until "fail never".  "delay
 * DURATION" sets how long the attaches after it take (one in progress keeps
 * its end), until a reload of a changed entry. */
#ifndef FAKEHW_ATTACH_H
#define FAKEHW_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gpu.h"

struct attach_live {
    enum fakehw_attach state;
    enum fakehw_attach_failure failure;
    int64_t due_ms;   /* monotonic ms when an attach in progress ends */
    int64_t delay_ms; /* how long the next attach takes: the config's, or "delay" */
};

enum attach_verb { ATTACH_VERB_ATTACH, ATTACH_VERB_DETACH, ATTACH_VERB_FAIL, ATTACH_VERB_DELAY };

/* One write to the attach file: "attach", "detach", "fail FAILURE" or
 * "delay DURATION". */
struct attach_command {
    enum attach_verb verb;
    enum fakehw_attach_failure failure; /* for ATTACH_VERB_FAIL */
    int64_t delay_ms;                   /* for ATTACH_VERB_DELAY */
};

/* The live state a device starts with: none, or detached with the
 * configured scripted failure. */
void attach_init(struct attach_live *l, const struct gpu_attach *cfg);

/* Parses a write: one command, optionally followed by one newline.  EINVAL
 * with a message naming the value otherwise. */
int attach_parse_command(const char *buf, size_t len, struct attach_command *cmd,
                         struct error *err);

/* Applies cmd at now_ms; *changed says whether the state or the scripted
 * failure changed.  EINVAL for a device that is not attachable. */
int attach_apply(struct attach_live *l, const struct gpu_attach *cfg,
                 const struct attach_command *cmd, int64_t now_ms, bool *changed,
                 struct error *err);

/* Ends an attach whose time has come; true when it did. */
bool attach_tick(struct attach_live *l, int64_t now_ms);

#endif
