// SPDX-License-Identifier: Apache-2.0
/* The attach state machine: see attach.h. */
#include "attach.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "fakehw_attach.h"

void attach_init(struct attach_live *l, const struct gpu_attach *cfg)
{
    memset(l, 0, sizeof(*l));
    if (cfg->attachable) {
        l->state = FAKEHW_ATTACH_DETACHED;
        l->failure = cfg->failure;
        l->delay_ms = cfg->delay_ms;
    }
}

int attach_parse_command(const char *buf, size_t len, struct attach_command *cmd, struct error *err)
{
    if (len > 0 && buf[len - 1] == '\n')
        len--;
    char text[32];
    if (len >= sizeof(text) || memchr(buf, '\0', len) != NULL || memchr(buf, '\n', len) != NULL)
        return error_set_and_errno(
            err, EINVAL,
            "attach: not a command (attach, detach, fail next|always|never, delay DURATION)");
    memcpy(text, buf, len);
    text[len] = '\0';
    if (!strcmp(text, "attach")) {
        cmd->verb = ATTACH_VERB_ATTACH;
        return 0;
    }
    if (!strcmp(text, "detach")) {
        cmd->verb = ATTACH_VERB_DETACH;
        return 0;
    }
    if (!strncmp(text, "fail ", 5) && fakehw_attach_failure_parse(text + 5, &cmd->failure)) {
        cmd->verb = ATTACH_VERB_FAIL;
        return 0;
    }
    if (!strncmp(text, "delay ", 6)) {
        struct error derr;
        if (duration_parse_ms(text + 6, &cmd->delay_ms, &derr) < 0)
            return error_set_and_errno(err, EINVAL, "attach: delay: %s", derr.msg);
        cmd->verb = ATTACH_VERB_DELAY;
        return 0;
    }
    return error_set_and_errno(
        err, EINVAL,
        "attach: \"%s\" is not a command (attach, detach, fail next|always|never, delay DURATION)",
        text);
}

/* Ends the attach in progress: scripted failure or success. */
static void finish(struct attach_live *l)
{
    if (l->failure == FAKEHW_ATTACH_FAIL_NEVER) {
        l->state = FAKEHW_ATTACH_ATTACHED;
        return;
    }
    l->state = FAKEHW_ATTACH_FAILED;
    if (l->failure == FAKEHW_ATTACH_FAIL_NEXT)
        l->failure = FAKEHW_ATTACH_FAIL_NEVER;
}

int attach_apply(struct attach_live *l, const struct gpu_attach *cfg,
                 const struct attach_command *cmd, int64_t now_ms, bool *changed, struct error *err)
{
    *changed = false;
    if (!cfg->attachable)
        return error_set_and_errno(err, EINVAL,
                                   "attach: the device is not attachable (its config has no "
                                   "attach)");
    switch (cmd->verb) {
    case ATTACH_VERB_ATTACH:
        if (l->state == FAKEHW_ATTACH_ATTACHING || l->state == FAKEHW_ATTACH_ATTACHED)
            return 0; /* already on its way or there */
        *changed = true;
        if (l->delay_ms == 0) {
            finish(l);
            return 0;
        }
        l->state = FAKEHW_ATTACH_ATTACHING;
        l->due_ms = now_ms + l->delay_ms;
        return 0;
    case ATTACH_VERB_DETACH:
        *changed = l->state != FAKEHW_ATTACH_DETACHED;
        l->state = FAKEHW_ATTACH_DETACHED;
        return 0;
    case ATTACH_VERB_FAIL:
        *changed = l->failure != cmd->failure;
        l->failure = cmd->failure;
        return 0;
    case ATTACH_VERB_DELAY:
        *changed = l->delay_ms != cmd->delay_ms;
        l->delay_ms = cmd->delay_ms;
        return 0;
    }
    return error_set_and_errno(err, EINVAL, "attach: unknown command");
}

bool attach_tick(struct attach_live *l, int64_t now_ms)
{
    if (l->state != FAKEHW_ATTACH_ATTACHING || l->due_ms > now_ms)
        return false;
    finish(l);
    return true;
}
