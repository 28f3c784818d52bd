// SPDX-License-Identifier: Apache-2.0
/* Unit tests for common/: error idiom, flags with env fallbacks, atomic writes,
 * DNS names, the version line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "dns_names.h"
#include "error.h"
#include "flags.h"
#include "version.h"
#include "common/tests/check_valid.h"
#include "common/tests/test_main.h"
#include "common/tests/tmp_dir.h"

/* Each test gets a scratch directory, *state its path. */
static char scratch[64];

static int scratch_setup(void **state)
{
    *state = scratch;
    return tmp_dir_make(scratch, sizeof(scratch), "test_common") ? 0 : -1;
}

static int scratch_teardown(void **state)
{
    (void)state;
    return tmp_dir_remove(scratch);
}

static void test_error_prefix_chain(void **state)
{
    (void)state;
    struct error err;
    assert_int_equal(error_set(&err, "devices[%d]: unknown key \"%s\"", 2, "colour"), -1);
    assert_int_equal(error_prefix(&err, "fakehw.yaml:%d:%d", 12, 5), -1);
    assert_string_equal(err.msg, "fakehw.yaml:12:5: devices[2]: unknown key \"colour\"");
    assert_int_equal(error_set(NULL, "ignored"), -1);
}

static void test_error_errno(void **state)
{
    (void)state;
    struct error err;
    error_set_errno(&err, 2, "opening %s", "/x");
    assert_string_equal(err.msg, "opening /x: No such file or directory");
}

static void test_error_and_errno(void **state)
{
    (void)state;
    struct error err;
    errno = 0;
    assert_int_equal(error_set_and_errno(&err, EINVAL, "%s: holds a NUL byte", "/t/name"), -1);
    assert_string_equal(err.msg, "/t/name: holds a NUL byte");
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_int_equal(error_set_and_errno(NULL, ENOENT, "ignored"), -1);
    assert_int_equal(errno, ENOENT);
}

static void test_dns_names(void **state)
{
    (void)state;
    char label[DNS_LABEL_MAX + 2], sub[DNS_SUBDOMAIN_MAX + 2];
    CHECK_VALID(dns_label_valid, OK("gpu-0", "0"),
                BAD(NULL, "", "-gpu", "gpu-", "Gpu", "gpu.0", "gpu_0", "g\xc3\xbc"));
    memset(label, 'a', DNS_LABEL_MAX);
    label[DNS_LABEL_MAX] = '\0';
    assert_true(dns_label_valid(label));
    strcat(label, "a");
    assert_false(dns_label_valid(label));

    CHECK_VALID(dns_subdomain_valid, OK("gpu.fakehw.example.com", "node-a"),
                BAD(NULL, "", "a..b", ".a", "a.", "a.-b", "../etc"));
    /* 4 labels of 63 + 3 dots = 255: too long, though every label is fine. */
    memset(sub, 'a', sizeof(sub));
    for (size_t i = 63; i < DNS_SUBDOMAIN_MAX; i += 64)
        sub[i] = '.';
    sub[DNS_SUBDOMAIN_MAX] = '\0';
    assert_true(dns_subdomain_valid(sub));
    sub[DNS_SUBDOMAIN_MAX] = 'a';
    sub[DNS_SUBDOMAIN_MAX + 1] = '\0';
    assert_false(dns_subdomain_valid(sub));

    /* The _n forms look at n characters only. */
    assert_true(dns_label_valid_n("gpu-0/rest", 5));
    assert_false(dns_label_valid_n("gpu-/rest", 4));
    assert_true(dns_subdomain_valid_n("example.com/x", 11));
    assert_false(dns_subdomain_valid_n("example./x", 8));
    assert_false(dns_subdomain_valid_n("x", 0));
}

struct opts {
    const char *name;
    long count;
    bool on;
};

static int parse(struct opts *o, int argc, char **argv, int *next, struct error *err)
{
    const struct flag flags[] = {
        {"driver-name", "TEST_DRIVER_NAME", FLAG_STRING, &o->name, "driver"},
        {"v", "TEST_V", FLAG_INT, &o->count, "verbosity"},
        {"device-status", "TEST_STATUS", FLAG_BOOL, &o->on, "status"},
    };
    return flags_parse(flags, 3, argc, argv, next, err);
}

static void test_flags_precedence(void **state)
{
    (void)state;
    struct opts o = {"default.example.com", 0, true};
    struct error err;
    int next;
    setenv("TEST_DRIVER_NAME", "env.example.com", 1);
    setenv("TEST_V", "3", 1);
    char *argv[] = {"prog", "--driver-name=cli.example.com", "--device-status=false", "rest", NULL};
    assert_int_equal(parse(&o, 4, argv, &next, &err), 0);
    assert_string_equal(o.name, "cli.example.com");
    assert_int_equal(o.count, 3);
    assert_false(o.on);
    assert_int_equal(next, 3);
    unsetenv("TEST_DRIVER_NAME");
    unsetenv("TEST_V");
}

static void test_flags_errors(void **state)
{
    (void)state;
    struct opts o = {NULL, 0, false};
    struct error err;
    int next;
    char *bad_int[] = {"prog", "-v", "x1", NULL};
    assert_int_equal(parse(&o, 3, bad_int, &next, &err), -1);
    assert_string_equal(err.msg, "flag --v: \"x1\" is not an integer");
    char *unknown[] = {"prog", "--colour=red", NULL};
    assert_int_equal(parse(&o, 2, unknown, &next, &err), -1);
    assert_string_equal(err.msg, "unknown flag --colour (see --help)");
    char *missing[] = {"prog", "--driver-name", NULL};
    assert_int_equal(parse(&o, 2, missing, &next, &err), -1);
    assert_string_equal(err.msg, "flag --driver-name needs a value");
    setenv("TEST_STATUS", "maybe", 1);
    char *none[] = {"prog", NULL};
    assert_int_equal(parse(&o, 1, none, &next, &err), -1);
    assert_string_equal(err.msg, "environment variable TEST_STATUS: \"maybe\" is not a boolean "
                                 "(true or false)");
    unsetenv("TEST_STATUS");
    char *help[] = {"prog", "--help", NULL};
    assert_int_equal(parse(&o, 2, help, &next, &err), FLAGS_HELP);
}

/* Runs fn into a memory stream: *text, malloc'ed. */
static void capture(void (*fn)(FILE *out, void *ctx), void *ctx, char **text)
{
    size_t len = 0;
    FILE *f = open_memstream(text, &len);
    assert_non_null(f);
    fn(f, ctx);
    assert_int_equal(fclose(f), 0);
}

static const struct flag version_flags[] = {
    {"root", "TEST_ROOT", FLAG_STRING, &(const char *){"/r"}, "the root"},
    FLAG_VERSION_ENTRY,
};

static void print_version_usage(FILE *out, void *ctx)
{
    (void)ctx;
    flags_usage(out, "prog", "[flags]", "Does things.", version_flags, 2);
}

static void print_version(FILE *out, void *ctx)
{
    version_print(out, ctx);
}

/* flags_read: --help prints the usage on stdout and says FLAGS_HELP; other
 * arguments parse as with flags_parse. */
static void test_flags_read(void **state)
{
    (void)state;
    static const struct flags_program program = {"prog", "[flags]", "Reads flags."};
    struct error err;
    int next;
    char tmpl[] = "/tmp/test_flags_read.XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    assert_true(dup2(fd, STDOUT_FILENO) >= 0);
    char *help[] = {"prog", "--help", NULL};
    int rc = flags_read(version_flags, FLAGS_COUNT(version_flags), 2, help, &program, &next, &err);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_int_equal(rc, FLAGS_HELP);
    char text[4096] = "";
    assert_true(pread(fd, text, sizeof(text) - 1, 0) > 0);
    close(fd);
    unlink(tmpl);
    assert_non_null(strstr(text, "Usage: prog [flags]\n\nReads flags.\n"));
    assert_non_null(strstr(text, "  --root "));

    const char *root = "/r";
    const struct flag flags[] = {{"root", NULL, FLAG_STRING, &root, "the root"}};
    char *args[] = {"prog", "--root", "/x", "rest", NULL};
    assert_int_equal(flags_read(flags, FLAGS_COUNT(flags), 4, args, &program, &next, &err), 0);
    assert_string_equal(root, "/x");
    assert_int_equal(next, 3);
}

/* flags_read_all: flags alone are fine; an argument after them is an error
 * that names it. */
static void test_flags_read_all(void **state)
{
    (void)state;
    static const struct flags_program program = {"prog", "[flags]", "Reads flags."};
    struct error err;
    const char *root = "/r";
    const struct flag flags[] = {{"root", NULL, FLAG_STRING, &root, "the root"}};
    char *args[] = {"prog", "--root", "/x", "rest", NULL};
    assert_int_equal(flags_read_all(flags, FLAGS_COUNT(flags), 3, args, &program, &err), 0);
    assert_string_equal(root, "/x");
    assert_int_equal(flags_read_all(flags, FLAGS_COUNT(flags), 4, args, &program, &err), -1);
    assert_string_equal(err.msg, "unexpected argument \"rest\" (see --help)");
}

/* --version only where the table has it, never with a value or from the
 * environment; --help lists it after -h, --help. */
static void test_flags_version(void **state)
{
    (void)state;
    struct error err;
    int next;
    char *version[] = {"prog", "--root", "x", "--version", "--bogus", NULL};
    assert_int_equal(flags_parse(version_flags, 2, 5, version, &next, &err), FLAGS_VERSION);
    char *valued[] = {"prog", "--version=yes", NULL};
    assert_int_equal(flags_parse(version_flags, 2, 2, valued, &next, &err), -1);
    assert_string_equal(err.msg, "flag --version takes no value");
    struct opts o = {NULL, 0, false};
    char *without[] = {"prog", "--version", NULL};
    assert_int_equal(parse(&o, 2, without, &next, &err), -1);
    assert_string_equal(err.msg, "unknown flag --version (see --help)");

    char *usage = NULL;
    capture(print_version_usage, NULL, &usage);
    const char *help = strstr(usage, "  -h, --help ");
    assert_non_null(help);
    const char *line = strstr(usage, "\n  --version ");
    assert_non_null(line);
    assert_true(line > help);
    assert_non_null(strstr(line, " print the version and exit\n"));
    assert_null(strstr(line, "default"));
    free(usage);

    char *text = NULL;
    capture(print_version, "fakehw", &text);
    char want[128];
    snprintf(want, sizeof(want), "fakehw %s (git %s)\n", FAKEHW_DRA_VERSION, fakehw_git_commit);
    assert_string_equal(text, want);
    assert_true(fakehw_git_commit[0] != '\0');
    free(text);
}

/* path holds exactly text, with mode. */
static void assert_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[64] = {0};
    assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f), strlen(text));
    fclose(f);
    assert_string_equal(buf, text);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, mode);
}

static void test_atomic_write_replaces(void **state)
{
    const char *dir = *state;
    char sub[256], path[300];
    snprintf(sub, sizeof(sub), "%s/a/b", dir);
    struct error err;
    assert_int_equal(mkdir_p(sub, 0700, &err), 0);
    snprintf(path, sizeof(path), "%s/state.json", sub);
    assert_int_equal(atomic_write_file(path, "one", 3, 0600, &err), 0);
    assert_int_equal(atomic_write_file(path, "second", 6, 0640, &err), 0);
    assert_file(path, "second", 0640);
    /* A write into a missing directory fails and names the file. */
    char bad[320];
    snprintf(bad, sizeof(bad), "%s/missing/x.json", dir);
    assert_int_equal(atomic_write_file(bad, "x", 1, 0600, &err), -1);
    assert_non_null(strstr(err.msg, "x.json"));
}

/* The variant without fsync replaces the same way: whole content, mode,
 * no temp file left, and a failure names the file and leaves nothing. */
static void test_atomic_write_nosync(void **state)
{
    const char *dir = *state;
    char path[300], bad[320];
    snprintf(path, sizeof(path), "%s/spec.json", dir);
    struct error err;
    assert_int_equal(atomic_write_file_nosync(path, "first", 5, 0600, &err), 0);
    assert_int_equal(atomic_write_file_nosync(path, "2nd", 3, 0644, &err), 0);
    assert_file(path, "2nd", 0644);
    /* A directory in the way: the rename fails, the temp file is removed. */
    snprintf(bad, sizeof(bad), "%s/blocked", dir);
    assert_int_equal(mkdir(bad, 0700), 0);
    snprintf(path, sizeof(path), "%s/x", bad);
    assert_int_equal(atomic_write_file_nosync(path, "x", 1, 0600, &err), 0);
    assert_int_equal(atomic_write_file_nosync(bad, "x", 1, 0600, &err), -1);
    assert_non_null(strstr(err.msg, "blocked"));
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int entries = 0;
    while ((e = readdir(d)) != NULL)
        entries += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(entries, 2); /* spec.json, blocked: no temp file */
}

/* The inotify events on a watched directory since the last call: the mask
 * of those naming name, and in *other the mask of those naming anything
 * else (an O_TMPFILE file shows as "#<inode>" while it is written). */
static uint32_t events_for(int fd, const char *name, uint32_t *other)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    uint32_t seen = 0;
    ssize_t n;
    *other = 0;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (ev->len > 0 && strcmp(ev->name, name) == 0)
                seen |= ev->mask;
            else if (ev->len > 0)
                *other |= ev->mask;
            p += sizeof(*ev) + ev->len;
        }
    return seen;
}

/* A quiet create: the file appears whole, with its mode, and a watcher of
 * the directory sees nothing a CDI cache re-reads the directory for (a
 * rename or a removal of any name, a write to a .json file): only the
 * file's creation.  An existing file is replaced, the usual way. */
static void test_atomic_create_quiet(void **state)
{
    const char *dir = *state;
    char path[300];
    snprintf(path, sizeof(path), "%s/spec.json", dir);
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    assert_true(fd >= 0);
    assert_true(inotify_add_watch(fd, dir, IN_ALL_EVENTS) >= 0);
    struct error err;
    uint32_t other;
    assert_int_equal(atomic_create_file_quiet(path, "first", 5, 0644, &err), 0);
    uint32_t seen = events_for(fd, "spec.json", &other);
    assert_true(seen & IN_CREATE);
    assert_int_equal(seen & (IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE), 0);
    assert_int_equal(other & (IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_CREATE), 0);
    assert_file(path, "first", 0644);

    assert_int_equal(atomic_create_file_quiet(path, "2nd", 3, 0600, &err), 0);
    seen = events_for(fd, "spec.json", &other);
    assert_true(seen & IN_MOVED_TO); /* replaced through a temp file */
    assert_file(path, "2nd", 0600);
    close(fd);
}

/* mkdir_p: deep paths, existing ones, a trailing slash, the mode of what it
 * creates, and a file in the way. */
static void test_mkdir_p(void **state)
{
    const char *dir = *state;
    char path[300], file[300];
    struct error err;
    snprintf(path, sizeof(path), "%s/a/b/c/", dir);
    assert_int_equal(mkdir_p(path, 0750, &err), 0);
    assert_int_equal(mkdir_p(path, 0750, &err), 0);
    struct stat st;
    snprintf(path, sizeof(path), "%s/a/b", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0750 & ~mask);
    snprintf(file, sizeof(file), "%s/a/f", dir);
    assert_int_equal(atomic_write_file(file, "x", 1, 0600, &err), 0);
    assert_int_equal(mkdir_p(file, 0755, &err), -1);
    assert_non_null(strstr(err.msg, "is not a directory"));
    snprintf(path, sizeof(path), "%s/a/f/sub", dir);
    assert_int_equal(mkdir_p(path, 0755, &err), -1);
    assert_non_null(strstr(err.msg, "creating directory"));
    assert_non_null(strstr(err.msg, "a/f/sub"));
    unlink(file);
    const char *dirs[] = {"a/b/c", "a/b", "a"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, dirs[i]);
        assert_int_equal(rmdir(path), 0);
    }
}

TEST_MAIN_FIXTURE("common", scratch_setup, scratch_teardown, test_error_prefix_chain,
                  test_error_errno, test_flags_precedence, test_flags_errors,
                  test_atomic_write_replaces, test_atomic_write_nosync, test_atomic_create_quiet,
                  test_mkdir_p, test_error_and_errno, test_dns_names, test_flags_version,
                  test_flags_read, test_flags_read_all)
