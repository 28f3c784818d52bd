// SPDX-License-Identifier: Apache-2.0
/* What the programs' mains lean on: flags_main and flags_usage_error
 * (flags.h), and stop_signals.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "flags.h"
#include "stop_signals.h"

static const struct flags_program program = {"prog", "[flags] [ARG]", "Tests flags_main."};

static long count;
static const struct flag flags[] = {
    {"count", NULL, FLAG_INT, &count, "how many"},
    FLAG_VERSION_ENTRY,
};

/* One of stdout or stderr sent to a file while a call runs. */
struct capture {
    int fd, saved;
    FILE *file;
    char text[2048]; /* what was written, once capture_end ran */
};

static void capture_begin(struct capture *c, int fd)
{
    c->fd = fd;
    c->file = tmpfile();
    assert_non_null(c->file);
    fflush(NULL);
    c->saved = dup(fd);
    assert_true(c->saved >= 0 && dup2(fileno(c->file), fd) >= 0);
}

static void capture_end(struct capture *c)
{
    fflush(NULL);
    dup2(c->saved, c->fd);
    close(c->saved);
    rewind(c->file);
    c->text[fread(c->text, 1, sizeof(c->text) - 1, c->file)] = '\0';
    fclose(c->file);
}

/* flags_read answering --version as flags_read_versioned (version.h) does,
 * with a fixed line. */
static int read_versioned(const struct flag *table, size_t n, int argc, char **argv,
                          const struct flags_program *p, int *next, struct error *err)
{
    int rc = flags_read(table, n, argc, argv, p, next, err);
    if (rc == FLAGS_VERSION)
        fputs("prog 1.0\n", stdout);
    return rc;
}

/* flags_main on args, what it wrote to fd in c. */
static int run(struct capture *c, int fd, flags_reader *reader, char **args, int *next)
{
    int argc = 0;
    while (args[argc] != NULL)
        argc++;
    count = 1;
    capture_begin(c, fd);
    int status = flags_main(reader, flags, FLAGS_COUNT(flags), argc, args, &program, next);
    capture_end(c);
    return status;
}

/* Flags read: go on, *next at the first argument, nothing said. */
static void test_go_on(void **state)
{
    (void)state;
    struct capture c;
    int next = 0;
    char *args[] = {"prog", "--count", "3", "arg", NULL};
    assert_int_equal(run(&c, STDERR_FILENO, flags_read, args, &next), FLAGS_GO_ON);
    assert_int_equal(count, 3);
    assert_int_equal(next, 3);
    assert_string_equal(c.text, "");
    char *none[] = {"prog", "--count=4", NULL};
    assert_int_equal(run(&c, STDERR_FILENO, flags_read, none, NULL), FLAGS_GO_ON);
    assert_int_equal(count, 4);
}

/* --help and --version: their text on stdout, and exit 0. */
static void test_help_and_version(void **state)
{
    (void)state;
    struct capture c;
    char *help[] = {"prog", "--help", NULL};
    assert_int_equal(run(&c, STDOUT_FILENO, flags_read, help, NULL), 0);
    assert_non_null(strstr(c.text, "Usage: prog [flags] [ARG]\n\nTests flags_main.\n"));
    char *version[] = {"prog", "--version", NULL};
    assert_int_equal(run(&c, STDOUT_FILENO, read_versioned, version, NULL), 0);
    assert_string_equal(c.text, "prog 1.0\n");
}

/* A bad flag, or an argument where the program takes none: one line on
 * stderr that names the program, and FLAGS_EXIT_USAGE. */
static void test_usage_errors(void **state)
{
    (void)state;
    struct capture c;
    int next;
    char *bogus[] = {"prog", "--bogus", NULL};
    assert_int_equal(run(&c, STDERR_FILENO, flags_read, bogus, &next), FLAGS_EXIT_USAGE);
    assert_string_equal(c.text, "prog: unknown flag --bogus (see --help)\n");
    char *nan[] = {"prog", "--count", "many", NULL};
    assert_int_equal(run(&c, STDERR_FILENO, flags_read, nan, &next), FLAGS_EXIT_USAGE);
    assert_string_equal(c.text, "prog: flag --count: \"many\" is not an integer\n");
    char *extra[] = {"prog", "--count", "2", "extra", NULL};
    assert_int_equal(run(&c, STDERR_FILENO, flags_read, extra, NULL), FLAGS_EXIT_USAGE);
    assert_string_equal(c.text, "prog: unexpected argument \"extra\" (see --help)\n");

    capture_begin(&c, STDERR_FILENO);
    int status = flags_usage_error(&program, "--count %ld: at most %d", 7L, 5);
    capture_end(&c);
    assert_int_equal(status, FLAGS_EXIT_USAGE);
    assert_string_equal(c.text, "prog: --count 7: at most 5\n");
}

/* SIGTERM and SIGINT, blocked, wait until stop_signals_wait takes them. */
static void test_stop_signals(void **state)
{
    (void)state;
    sigset_t set, pending;
    stop_signals_block(&set);
    assert_true(sigismember(&set, SIGTERM) && sigismember(&set, SIGINT));
    assert_false(sigismember(&set, SIGHUP));
    assert_int_equal(raise(SIGINT), 0);
    assert_int_equal(sigpending(&pending), 0);
    assert_true(sigismember(&pending, SIGINT));
    assert_int_equal(stop_signals_wait(&set), SIGINT);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(stop_signals_wait(&set), SIGTERM);
    assert_int_equal(sigpending(&pending), 0);
    assert_false(sigismember(&pending, SIGTERM));
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* A pending stop signal is taken without waiting; none pending is 0 at
 * once. */
static void test_stop_signals_take_pending(void **state)
{
    (void)state;
    sigset_t set;
    stop_signals_block(&set);
    assert_int_equal(stop_signals_take_pending(&set), 0);
    assert_int_equal(raise(SIGTERM), 0);
    assert_int_equal(stop_signals_take_pending(&set), SIGTERM);
    assert_int_equal(stop_signals_take_pending(&set), 0);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_go_on),
        cmocka_unit_test(test_help_and_version),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_stop_signals),
        cmocka_unit_test(test_stop_signals_take_pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
