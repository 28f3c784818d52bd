// SPDX-License-Identifier: Apache-2.0
/* fakehw: the fake-GPU FUSE daemon and its small commands.
 *
 *   fakehw --config FILE [--mount DIR] [--dev-dir DIR] [--node NAME] ...
 *   fakehw flip --mount DIR DEVICE STATE [--reason TEXT]
 *   fakehw attach --mount DIR DEVICE [attach|detach|fail FAILURE]
 *   fakehw xid --mount DIR DEVICE [CODE | --clear]
 *   fakehw check --config FILE [--node NAME]
 *   fakehw profiles */
#include <string.h>

#include "cli.h"
#include "fakehw_tree.h"
#include "flags.h"
#include "log.h"
#include "version.h"

/* A day: longer is a mistake, not a rolling update. */
#define TAKEOVER_TIMEOUT_MAX 86400

/* The commands: each on its line, its description on the next indented by
 * 20 or more, which help2man turns into one tagged paragraph per command. */
static const char description[] =
    "Serves fake GPUs, described by a YAML config, as a FUSE filesystem (the fakehw tree:\n"
    "<mount>/node, <mount>/generation, <mount>/devices/<name>/<attribute>), optionally with\n"
    "one null character device per GPU (<dev-dir>/fakegpuN).  SIGTERM/SIGINT unmount and\n"
    "exit; SIGHUP reloads the config.  The config and the tree are described in fakehw.md of\n"
    "the fakehw-dra documentation (share/doc/fakehw-dra once installed, docs/ in the sources).\n"
    "\n"
    "Other commands (each has --help):\n"
    "  fakehw flip --mount DIR DEVICE|all healthy|unhealthy [--reason TEXT]\n"
    "                      set the health of a device, or of all\n"
    "  fakehw attach --mount DIR DEVICE|all [attach|detach|fail next|always|never|delay D]\n"
    "                      show or change the attach state of attachable devices\n"
    "  fakehw xid --mount DIR DEVICE|all [CODE | --clear]\n"
    "                      report an XID on a device, clear it, or show it\n"
    "  fakehw check --config FILE [--node NAME]\n"
    "                      validate a config and print the node's inventory\n"
    "  fakehw profiles\n"
    "                      list the built-in GPU profiles";

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "flip"))
        return flip_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "attach"))
        return attach_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "xid"))
        return xid_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "check"))
        return check_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "profiles"))
        return profiles_main(argc - 1, argv + 1);

    struct daemon_options o = {.mount = FAKEHW_DEFAULT_ROOT};
    long verbosity = 0;
    const struct flag flags[] = {
        {"config", "FAKEHW_CONFIG", FLAG_STRING, &o.config, "YAML config file (required)"},
        {"mount", "FAKEHW_MOUNT", FLAG_STRING, &o.mount, "where to mount the fakehw tree"},
        {"dev-dir", "FAKEHW_DEV_DIR", FLAG_STRING, &o.dev_dir,
         "directory for the fakegpuN device nodes (needs CAP_MKNOD); unset: none"},
        {"node", "NODE_NAME", FLAG_STRING, &o.node,
         "node name to resolve the config for (default: the hostname)"},
        {"foreground", "FAKEHW_FOREGROUND", FLAG_BOOL, &o.foreground,
         "stay in the foreground and log to stderr"},
        {"clear-stale", "FAKEHW_CLEAR_STALE", FLAG_BOOL, &o.clear_stale,
         "lazily unmount a stale mount a dead fakehw left at --mount"},
        {"takeover-timeout", "FAKEHW_TAKEOVER_TIMEOUT", FLAG_INT, &o.takeover_timeout,
         "when another fakehw serves --mount, wait up to this many seconds for it to unmount, "
         "then mount (a rolling update's new pod); 0 = refuse at once"},
        {"allow-empty", "FAKEHW_ALLOW_EMPTY", FLAG_BOOL, &o.allow_empty,
         "serve an empty tree when no nodes entry matches --node and there is no defaults "
         "section (else that is an error)"},
        {"v", "FAKEHW_VERBOSITY", FLAG_INT, &verbosity, "log verbosity"},
        FLAG_VERSION_ENTRY,
    };
    const struct flags_program program = {"fakehw", "--config FILE [flags]", description};
    int parsed =
        flags_main(flags_read_versioned, flags, FLAGS_COUNT(flags), argc, argv, &program, NULL);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    if (o.config == NULL || *o.config == '\0')
        return flags_usage_error(&program, "--config is required (or FAKEHW_CONFIG; see --help)");
    if (o.mount == NULL || *o.mount == '\0')
        return flags_usage_error(&program, "--mount must not be empty");
    if (o.takeover_timeout < 0 || o.takeover_timeout > TAKEOVER_TIMEOUT_MAX)
        return flags_usage_error(&program, "--takeover-timeout %ld: must be 0..%d seconds",
                                 o.takeover_timeout, TAKEOVER_TIMEOUT_MAX);
    log_verbosity = (int)verbosity;
    return daemon_run(&o);
}
