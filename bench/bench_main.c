// SPDX-License-Identifier: Apache-2.0
/* fakehw-bench: the benchmarks of `make bench`, on this machine and without
 * a cluster: fakehw, the plugin and the kubelet and API stand-ins, all on
 * loopback.  Every figure is measured in several runs and reported as the
 * median with its spread; see docs/benchmarks.md for the method.
 *
 *   fakehw-bench run --bin DIR [--out DIR] [--runs N] [--suites LIST] [--quick]
 *   fakehw-bench echo-server --socket PATH       (started by the floors suite) */
#include <curl/curl.h>
#include <errno.h>
#include <grpc/grpc.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "driver/grpc/rpc_server.h"
#include "flags.h"
#include "log.h"
#include "machine.h"
#include "proc.h"
#include "suites.h"
#include "world.h"

struct suite {
    const char *name;
    int (*run)(struct bench *b, struct error *err);
    bool needs_plugin;
};

static const struct suite all_suites[] = {
    {"floors", suite_floors, false},  {"prepare", suite_prepare, true},
    {"startup", suite_startup, true}, {"health", suite_health, true},
    {"flap", suite_flap, true},
};
#define N_SUITES (sizeof(all_suites) / sizeof(all_suites[0]))

int bench_world_init(struct bench *b, struct world *w, const char *what, struct error *err)
{
    char name[64];
    snprintf(name, sizeof(name), "%s-%d", what, ++b->world_seq);
    return world_init(w, b->bin_dir, b->base, b->cdi_base, name, err);
}

/* "floors,prepare" -> which suites; -1 with err on an unknown name. */
static int pick_suites(const char *list, bool picked[N_SUITES], struct error *err)
{
    char copy[256];
    snprintf(copy, sizeof(copy), "%s", list);
    memset(picked, 0, N_SUITES * sizeof(bool));
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        bool found = false;
        for (size_t i = 0; i < N_SUITES; i++)
            if (!strcmp(t, all_suites[i].name))
                picked[i] = found = true;
        if (!found)
            return error_set(err,
                             "--suites: unknown suite \"%s\" (known: floors, prepare, "
                             "startup, health, flap)",
                             t);
    }
    return 0;
}

static int parse_sizes(const char *list, struct bench *b, struct error *err)
{
    char copy[256];
    snprintf(copy, sizeof(copy), "%s", list);
    b->n_sizes = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(t, &end, 10);
        if (*end || v < 1 || v > 4096 || b->n_sizes == sizeof(b->sizes) / sizeof(b->sizes[0]))
            return error_set(err,
                             "--sizes: \"%s\" is not a GPU count from 1 to 4096 (at most 8 "
                             "counts)",
                             t);
        b->sizes[b->n_sizes++] = (int)v;
    }
    if (b->n_sizes == 0)
        return error_set(err, "--sizes: no GPU count given");
    return 0;
}

static int check_programs(const char *bin, bool plugin, struct error *err)
{
    const char *need[] = {"apiserver-standin", "fakehw", "fakegpu-smi", "fakehw-kubelet-plugin"};
    size_t n = plugin ? 4 : 1;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", bin, need[i]);
        if (access(path, X_OK) < 0)
            return error_set_errno(err, errno, "%s (build it with make all)", path);
    }
    return 0;
}

/* The flags of fakehw-bench run. */
struct run_opts {
    const char *bin, *out, *suites, *sizes, *work, *cdi_dir;
    long runs, verbosity;
    bool quick, keep;
};

static const struct flags_program run_program = {
    "fakehw-bench run", "--bin DIR [flags]",
    "Runs the benchmark suites and prints the results as Markdown tables."};

/* FLAGS_GO_ON with the options read and checked (suites picked, sizes in
 * b), else the exit status (flags_main). */
static int read_run_flags(int argc, char **argv, struct run_opts *o, bool *picked, struct bench *b)
{
    *o = (struct run_opts){.suites = "floors,prepare,startup,health,flap",
                           .sizes = "8,128,1024,4096",
                           .work = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                           .runs = 5};
    const struct flag flags[] = {
        {"bin", "BENCH_BIN", FLAG_STRING, &o->bin,
         "directory with fakehw, fakehw-kubelet-plugin, apiserver-standin (required)"},
        {"out", "BENCH_OUT", FLAG_STRING, &o->out, "write results.md and results.json here"},
        {"runs", "BENCH_RUNS", FLAG_INT, &o->runs, "repetitions of every figure (3..64)"},
        {"suites", "BENCH_SUITES", FLAG_STRING, &o->suites,
         "comma-separated: floors, prepare, startup, health, flap"},
        {"sizes", "BENCH_SIZES", FLAG_STRING, &o->sizes,
         "GPU counts of the start-up suite, comma-separated (1..4096, at most 8)"},
        {"quick", "BENCH_QUICK", FLAG_BOOL, &o->quick,
         "few operations per run: checks that the suites work; the figures mean little"},
        {"work-dir", "BENCH_WORK_DIR", FLAG_STRING, &o->work,
         "scratch directories go under this (short: socket paths are limited)"},
        {"cdi-dir", "BENCH_CDI_DIR", FLAG_STRING, &o->cdi_dir,
         "CDI roots go under this; default /dev/shm when it is a tmpfs (/var/run/cdi is one on "
         "a node), else --work-dir"},
        {"keep", "BENCH_KEEP", FLAG_BOOL, &o->keep, "keep the scratch directory and its logs"},
        {"v", "BENCH_VERBOSITY", FLAG_INT, &o->verbosity, "log verbosity"},
    };
    int next;
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, &run_program, &next);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    struct error err;
    const char *bad = next != argc     ? "takes no arguments"
                      : o->bin == NULL ? "--bin is required"
                      : o->runs < (o->quick ? 1 : 3) || o->runs > REPORT_MAX_RUNS
                          ? "--runs: 3..64 (1.. with --quick)"
                      : pick_suites(o->suites, picked, &err) < 0 ? err.msg
                      : parse_sizes(o->sizes, b, &err) < 0       ? err.msg
                                                                 : NULL;
    return bad ? flags_usage_error(&run_program, "%s", bad) : FLAGS_GO_ON;
}

/* The scratch directory and the CDI base (on a tmpfs when there is one). */
static int make_scratch(const struct run_opts *o, char *base, char *cdi_base)
{
    const char *cdi_dir = o->cdi_dir;
    struct statfs sfs;
    if (cdi_dir == NULL)
        cdi_dir = statfs("/dev/shm", &sfs) == 0 && sfs.f_type == TMPFS_MAGIC ? "/dev/shm" : o->work;
    snprintf(base, PATH_MAX, "%s/fakehw-bench.XXXXXX", o->work);
    snprintf(cdi_base, PATH_MAX, "%s/fakehw-bench-cdi.XXXXXX", cdi_dir);
    if (mkdtemp(base) == NULL || mkdtemp(cdi_base) == NULL) {
        fprintf(stderr, "fakehw-bench run: creating a directory in %s or %s: %s\n", o->work,
                cdi_dir, strerror(errno));
        rmdir(base);
        return -1;
    }
    return 0;
}

/* Every picked suite in turn, until one fails; then the report, printed
 * and written.  0, or 1 after a failure (said on stderr). */
static int run_suites(struct bench *b, const bool *picked, const struct run_opts *o)
{
    struct report *report = b->report;
    struct error err;
    machine_describe(report, b->base, b->cdi_base);
    const char *commit = getenv("BENCH_COMMIT");
    if (commit && commit[0])
        report_meta(report, "commit", "%s", commit);
    report_meta(report, "runs per figure", "%ld%s", o->runs,
                o->quick ? " (--quick: few operations per run, not figures to keep)" : "");
    int64_t t0 = now_mono_ns();
    int status = 0;
    for (size_t i = 0; i < N_SUITES && status == 0; i++) {
        if (picked[i] && all_suites[i].run(b, &err) < 0) {
            fprintf(stderr, "fakehw-bench: %s: %s\n", all_suites[i].name, err.msg);
            status = 1;
        }
    }
    char load[64];
    machine_loadavg(load, sizeof(load));
    report_meta(report, "load average at end (1, 5, 15 min)", "%s", load);
    report_meta(report, "duration", "%.0f s", (double)(now_mono_ns() - t0) / 1e9);
    if (status != 0)
        return status;
    report_print_markdown(report, stdout);
    fflush(stdout);
    if (o->out && report_write(report, o->out, &err) < 0) {
        fprintf(stderr, "fakehw-bench: %s\n", err.msg);
        return 1;
    }
    if (o->out)
        fprintf(stderr, "bench: results in %s/results.md and %s/results.json\n", o->out, o->out);
    return 0;
}

static int cmd_run(int argc, char **argv, const char *self)
{
    struct run_opts o;
    bool picked[N_SUITES];
    struct bench b = {0};
    int parsed = read_run_flags(argc, argv, &o, picked, &b);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    log_verbosity = (int)o.verbosity;
    bool plugin = false;
    for (size_t i = 0; i < N_SUITES; i++)
        plugin = plugin || (picked[i] && all_suites[i].needs_plugin);
    struct error err;
    if (check_programs(o.bin, plugin, &err) < 0) {
        fprintf(stderr, "fakehw-bench run: %s\n", err.msg);
        return 1;
    }
    char base[PATH_MAX], cdi_base[PATH_MAX], abs_bin[PATH_MAX];
    if (make_scratch(&o, base, cdi_base) < 0)
        return 1;
    if (realpath(o.bin, abs_bin) == NULL)
        snprintf(abs_bin, sizeof(abs_bin), "%s", o.bin);

    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    grpc_init(); /* held for the whole run: clients come and go */
    struct report report = {0};
    b.bin_dir = abs_bin;
    b.self = self;
    b.base = base;
    b.cdi_base = cdi_base;
    b.runs = (int)o.runs;
    b.quick = o.quick;
    b.keep = o.keep;
    b.report = &report;
    b.prepare_floor_ms = NAN;
    int status = run_suites(&b, picked, &o);
    if (status == 0 && !o.keep) {
        if (remove_tree(base, &err) < 0 || remove_tree(cdi_base, &err) < 0)
            fprintf(stderr, "fakehw-bench: %s\n", err.msg);
    } else {
        fprintf(stderr, "bench: logs and scratch files kept in %s (CDI specs in %s)\n", base,
                cdi_base);
    }
    report_free(&report);
    grpc_shutdown();
    curl_global_cleanup();
    return status;
}

int main(int argc, char **argv)
{
    const char *usage = "usage: fakehw-bench run --bin DIR [--out DIR] [--runs N] [--suites "
                        "LIST] [--quick] [--keep]\n"
                        "       fakehw-bench echo-server --socket PATH\n"
                        "`fakehw-bench run --help` lists the flags.\n";
    rpc_process_setup(); /* its clients and echo server as the plugin's */
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage, stdout);
        return 0;
    }
    /* The echo server is this program again: find our own path. */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n < 0) {
        fprintf(stderr, "fakehw-bench: /proc/self/exe: %s\n", strerror(errno));
        return 1;
    }
    self[n] = '\0';
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc - 1, argv + 1, self);
    if (!strcmp(argv[1], "echo-server"))
        return echo_server_main(argc - 1, argv + 1);
    fprintf(stderr, "fakehw-bench: unknown command \"%s\"\n%s", argv[1], usage);
    return 2;
}
