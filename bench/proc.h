// SPDX-License-Identifier: Apache-2.0
/* The processes a benchmark runs (API stand-in, fakehw, the plugin, the
 * echo server) and what /proc says about them: peak and current RSS, CPU
 * time, context switches.  Also the clocks and a wait for a file to appear. */
#ifndef FAKEHW_BENCH_PROC_H
#define FAKEHW_BENCH_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct proc {
    pid_t pid; /* 0: not started or already reaped */
    char name[32];
    char log[4096]; /* where its stdout and stderr go */
    int wstatus;    /* wait status, once reaped */
};

int64_t now_real_ns(void); /* CLOCK_REALTIME, comparable with the API stand-in's event log */
int64_t now_mono_ns(void);

/* Starts argv[0] with stdout and stderr appended to log_path, stdin from
 * /dev/null.  *t_ns (may be NULL) gets CLOCK_REALTIME right before the spawn. */
int proc_spawn(struct proc *p, const char *name, char *const argv[], const char *log_path,
               int64_t *t_ns, struct error *err);

/* SIGTERM, then waits up to timeout_ms, then SIGKILL.  0 when it exited
 * with status 0 after the SIGTERM; -1 with err (naming the log) otherwise.
 * A process that is not running is fine when it was reaped with status 0. */
int proc_stop(struct proc *p, int timeout_ms, struct error *err);

/* Runs argv, a program that prints and exits (e.g. `--help`), with its
 * stdout a full pipe, so it blocks on its first write after it has loaded
 * its libraries and done its work; *kib gets its VmHWM then, *ms the time
 * from the spawn to that point.  Then lets it finish; -1 with err unless it
 * exits 0.  (getrusage's ru_maxrss cannot serve: it includes the memory of
 * the parent before the exec.) */
int proc_peak_at_output(char *const argv[], long *kib, double *ms, struct error *err);

struct proc_mem {
    long hwm_kib;      /* VmHWM: peak resident set */
    long rss_kib;      /* VmRSS now */
    long rss_anon_kib; /* RssAnon now: heap, stacks */
    long rss_file_kib; /* RssFile now: mapped binaries and libraries */
    long threads;
};
int proc_mem(pid_t pid, struct proc_mem *m, struct error *err);

/* utime + stime of the whole process (exited threads included), in clock
 * ticks (sysconf(_SC_CLK_TCK) per second). */
int proc_cpu_ticks(pid_t pid, unsigned long long *ticks, struct error *err);

/* Voluntary + involuntary context switches summed over the live threads: a
 * proxy for wake-ups. */
int proc_ctx_switches(pid_t pid, unsigned long long *n, struct error *err);

/* Waits until path exists, up to timeout_ms, waking on inotify events of its
 * directory.  Fails early, naming owner's log, when owner (may be NULL)
 * exits.  *t_ns (may be NULL) gets CLOCK_REALTIME when it was seen. */
int wait_for_path(const char *path, int timeout_ms, struct proc *owner, int64_t *t_ns,
                  struct error *err);

#endif
