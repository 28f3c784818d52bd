// SPDX-License-Identifier: Apache-2.0
/* fakegpu-smi: shows the fake GPUs a container was given, in the style of
 * nvidia-smi -L, nvidia-smi -q and nvidia-smi --query-gpu=... --format=csv.
 * Linked statically so it runs in any image (busybox too);
 * docs/fakegpu-smi.md. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "error.h"
#include "fakehw_tree.h"
#include "fakehw_tree_read.h"
#include "flags.h"
#include "smi_fields.h"
#include "smi_report.h"
#include "smi_select.h"
#include "version.h"

/* nvidia-smi's exit codes where one fits. */
#define EXIT_USAGE      2   /* bad flag or value */
#define EXIT_NO_DEVICES 6   /* nothing to show ("No devices were found") */
#define EXIT_NO_FAKEHW  9   /* the tree does not answer (fakehw daemon gone) */
#define EXIT_NO_ROOT    12  /* --root or FAKEHW_ROOT names no directory (nvidia-smi: no NVML) */
#define EXIT_OTHER      255 /* the tree is malformed, output failed */

static const char synopsis[] =
    "[-L | -q | --query-gpu=FIELD,... --format=csv[,noheader][,nounits]] "
    "[-i ID,...] [--root DIR]";

static const char description[] =
    "Shows the fake GPUs this container was given: the devices of the fakehw tree\n"
    "(<root>/devices/<name>/), filtered by the FAKEHW_DEVICE_<i>_UUID variables the\n"
    "driver sets per device or, without those, by FAKEHW_VISIBLE_DEVICES (comma-separated\n"
    "UUIDs; unset or \"all\" = every device), and numbered 0..n-1 in the order of their fakehw\n"
    "index, as nvidia-smi numbers the GPUs of a container.  -q prints nvidia-smi -q's\n"
    "report of them (N/A where fakehw has no value).  Without -L, -q or --query-gpu it\n"
    "lists the GPUs as -L does.";

static const char epilogue[] =
    "\nExit codes: 0 success; 2 bad flag or value; 6 no devices were found (none\n"
    "visible, or -i matched none); 9 the fakehw tree does not answer (daemon gone);\n"
    "12 the root that --root or FAKEHW_ROOT names is no directory;\n"
    "255 the tree is malformed or output failed.\n"
    "Run fakegpu-smi --help-query-gpu for the fields of --query-gpu.\n";

static int usage_error(const char *msg)
{
    fprintf(stderr, "fakegpu-smi: %s\n", msg);
    if (strstr(msg, "--help") == NULL) /* flags_parse's messages point there already */
        fprintf(stderr, "Run fakegpu-smi --help for usage.\n");
    return EXIT_USAGE;
}

static int no_devices(void)
{
    printf("No devices were found\n");
    return EXIT_NO_DEVICES;
}

/* Nothing under the default root: say where fakegpu-smi looked and how to
 * look elsewhere (stderr; stdout stays nvidia-smi's line). */
static int no_devices_at_default(const char *root)
{
    fprintf(stderr,
            "fakegpu-smi: no fakehw devices under %s, the default root: give the tree's root "
            "with --root DIR or FAKEHW_ROOT (on a node, fakehw's --mount directory)\n",
            root);
    return no_devices();
}

/* A dead FUSE mount answers with these; anything else means bad contents. */
static bool tree_unreachable(int e)
{
    return e == ENOTCONN || e == EIO || e == ECONNABORTED || e == ENXIO || e == ENODEV ||
           e == ESTALE;
}

struct options {
    const char *root;
    bool root_given; /* by --root or FAKEHW_ROOT, not the default */
    bool list;
    bool report; /* -q */
    const char *query;
    const char *format;
    const char *ids;
    bool help_query;
    struct smi_query q; /* parsed --query-gpu */
    struct smi_format f;
};

/* Reads the devices, picks the visible ones and prints them. */
static int run(const struct options *o)
{
    char devdir[PATH_MAX];
    if (snprintf(devdir, sizeof(devdir), "%s/%s", o->root, FAKEHW_DIR_DEVICES) >=
        (int)sizeof(devdir))
        return usage_error("--root: path is too long");
    struct stat st;
    /* A root the user named must be there; the default one is missing in a
     * container that was given no fakehw device, which is "no devices". */
    if (o->root_given) {
        const char *why = NULL;
        if (stat(o->root, &st) < 0)
            why = errno == ENOENT    ? "does not exist"
                  : errno == ENOTDIR ? "is not a directory"
                                     : NULL;
        else if (!S_ISDIR(st.st_mode))
            why = "is not a directory";
        if (why != NULL) { /* other errors (a dead mount) are the tree reader's to report */
            fprintf(stderr, "fakegpu-smi: the fakehw root %s (--root or FAKEHW_ROOT) %s\n", o->root,
                    why);
            return EXIT_NO_ROOT;
        }
    }
    if (stat(devdir, &st) < 0 && (errno == ENOENT || errno == ENOTDIR))
        /* nothing of fakehw was given to this container, or this is a host
         * whose tree is elsewhere */
        return o->root_given ? no_devices() : no_devices_at_default(o->root);

    cleanup_free struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    if (fakehw_tree_list(o->root, &devs, &n, &err) < 0) {
        int e = errno;
        if (tree_unreachable(e)) {
            fprintf(stderr, "fakegpu-smi has failed because it couldn't read the fakehw tree: %s\n",
                    err.msg);
            return EXIT_NO_FAKEHW;
        }
        fprintf(stderr, "fakegpu-smi: the fakehw tree is malformed: %s\n", err.msg);
        return EXIT_OTHER;
    }

    cleanup_free struct smi_gpu *gpus = calloc(n ? n : 1, sizeof(*gpus));
    if (gpus == NULL) {
        fprintf(stderr, "fakegpu-smi: out of memory for %zu devices\n", n);
        return EXIT_OTHER;
    }
    char *visible_list = NULL;
    const char *visible = smi_visible_from_env(environ, &visible_list);
    size_t count = smi_visible(devs, n, visible, gpus, stderr);
    free(visible_list);
    smi_shares(gpus, count, stderr);
    size_t shown = count;
    if (count == 0)
        return n == 0 && !o->root_given ? no_devices_at_default(o->root) : no_devices();
    if (o->ids != NULL && smi_select_ids(gpus, &shown, o->ids, &err) < 0) {
        fprintf(stderr, "fakegpu-smi: %s\n", err.msg);
        return no_devices();
    }
    if (o->query != NULL)
        smi_print_csv(stdout, &o->q, &o->f, gpus, shown, count);
    else if (o->report)
        smi_print_report(stdout, gpus, shown, count);
    else
        smi_print_list(stdout, gpus, shown);
    return 0;
}

int main(int argc, char **argv)
{
    static const char default_root[] = FAKEHW_DEFAULT_ROOT;
    struct options o = {.root = default_root};
    const struct flag flags[] = {
        {"L", NULL, FLAG_BOOL, &o.list, "list the GPUs: GPU <i>: <name> (UUID: <uuid>)"},
        {"list-gpus", NULL, FLAG_BOOL, &o.list, "same as -L"},
        {"q", NULL, FLAG_BOOL, &o.report,
         "print nvidia-smi -q's report of the GPUs: its sections, N/A where fakehw has no value"},
        {"query", NULL, FLAG_BOOL, &o.report, "same as -q"},
        {"query-gpu", NULL, FLAG_STRING, &o.query,
         "print these fields of each GPU (see --help-query-gpu); needs --format"},
        {"format", NULL, FLAG_STRING, &o.format,
         "output format of --query-gpu: csv, optionally with noheader and nounits"},
        {"i", NULL, FLAG_STRING, &o.ids,
         "only these GPUs: indexes as -L shows them, UUIDs or PCI bus ids, comma-separated"},
        {"id", NULL, FLAG_STRING, &o.ids, "same as -i"},
        {"root", "FAKEHW_ROOT", FLAG_STRING, &o.root, "root of the fakehw tree"},
        {"help-query-gpu", NULL, FLAG_BOOL, &o.help_query, "list the fields of --query-gpu"},
        FLAG_VERSION_ENTRY,
    };
    const size_t nflags = sizeof(flags) / sizeof(flags[0]);
    struct error err;
    int next = 0;
    int r = flags_parse(flags, nflags, argc, argv, &next, &err);
    if (r == FLAGS_HELP) {
        flags_usage(stdout, "fakegpu-smi", synopsis, description, flags, nflags);
        fputs(epilogue, stdout);
        return 0;
    }
    if (r == FLAGS_VERSION) {
        version_print(stdout, "fakegpu-smi");
        return 0;
    }
    if (r < 0)
        return usage_error(err.msg);
    if (next < argc) {
        char msg[256];
        snprintf(msg, sizeof(msg), "unexpected argument \"%s\"", argv[next]);
        return usage_error(msg);
    }
    if (o.help_query) {
        smi_print_fields_help(stdout);
        return 0;
    }
    if ((o.list ? 1 : 0) + (o.report ? 1 : 0) + (o.query != NULL ? 1 : 0) > 1)
        return usage_error("-L, -q and --query-gpu cannot be used together");
    if (o.query != NULL && o.format == NULL)
        return usage_error("--query-gpu needs --format=csv[,noheader][,nounits]");
    if (o.format != NULL && o.query == NULL)
        return usage_error("--format only applies to --query-gpu");
    /* Parsed before the tree is read: bad fields are usage errors even with no GPUs. */
    if (o.query != NULL &&
        (smi_query_parse(o.query, &o.q, &err) < 0 || smi_format_parse(o.format, &o.f, &err) < 0))
        return usage_error(err.msg);

    o.root_given = o.root != default_root;
    int rc = run(&o);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "fakegpu-smi: writing the output: %s\n", strerror(errno));
        return EXIT_OTHER;
    }
    return rc;
}
