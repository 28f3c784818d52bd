// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the shared idiom: scope-bound cleanup (cleanup.h), the
 * aborting allocator (xalloc.h) and error_setv (error.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "error.h"
#include "grow.h"
#include "xalloc.h"

/* ---------- cleanup.h ---------- */

struct thing {
    int *freed; /* counts thing_free calls */
};

static void thing_free(struct thing *t)
{
    (*t->freed)++;
    free(t);
}
CLEANUP_FUNC(struct thing, thing_free)
#define cleanup_thing __attribute__((cleanup(thing_freep)))

static struct thing *thing_new(int *freed)
{
    struct thing *t = xmalloc(sizeof(*t));
    t->freed = freed;
    return t;
}

static void test_cleanup_func_runs_at_scope_exit(void **state)
{
    (void)state;
    int freed = 0;
    {
        cleanup_thing struct thing *t = thing_new(&freed);
        assert_int_equal(freed, 0);
        (void)t;
    }
    assert_int_equal(freed, 1);
    {
        cleanup_thing struct thing *t = NULL; /* NULL: the free function is not called */
        (void)t;
    }
    assert_int_equal(freed, 1);
}

static struct thing *kept(int *freed)
{
    cleanup_thing struct thing *t = thing_new(freed);
    return steal_pointer(&t);
}

static void test_steal_pointer_hands_ownership_on(void **state)
{
    (void)state;
    int freed = 0;
    struct thing *t = kept(&freed);
    assert_int_equal(freed, 0); /* stolen: the callee's cleanup saw NULL */
    thing_free(t);
    assert_int_equal(freed, 1);
    int *p = xmalloc(sizeof(*p));
    int *q = steal_pointer(&p);
    assert_null(p);
    free(q);
}

static bool fd_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

static int opened_and_kept(void)
{
    cleanup_close int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return steal_fd(&fd);
}

static void test_cleanup_close_and_steal_fd(void **state)
{
    (void)state;
    int seen;
    {
        cleanup_close int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        seen = fd;
        assert_true(fd_open(seen));
        errno = ENOENT; /* an error path's errno survives the close */
    }
    assert_int_equal(errno, ENOENT);
    assert_false(fd_open(seen));
    {
        cleanup_close int fd = -1; /* -1 is not closed */
        (void)fd;
    }
    int kept_fd = opened_and_kept();
    assert_true(fd_open(kept_fd));
    close(kept_fd);
    int fd = 5;
    assert_int_equal(steal_fd(&fd), 5);
    assert_int_equal(fd, -1);
}

static void test_cleanup_fclose(void **state)
{
    (void)state;
    int seen;
    {
        cleanup_fclose FILE *f = fopen("/dev/null", "re");
        assert_non_null(f);
        seen = fileno(f);
        errno = EACCES;
    }
    assert_int_equal(errno, EACCES);
    assert_false(fd_open(seen));
    {
        cleanup_fclose FILE *f = NULL;
        (void)f;
    }
}

static void test_cleanup_free_with_error_path(void **state)
{
    (void)state;
    /* The idiom's point: a plain return on each path, nothing leaks (ASan
     * and valgrind runs of this test check that). */
    for (int fail = 0; fail < 2; fail++) {
        cleanup_free char *a = xstrdup("a");
        cleanup_free char *b = xasprintf("%s-%d", a, fail);
        if (fail)
            continue;
        assert_string_equal(b, "a-0");
    }
}

/* ---------- xalloc.h ---------- */

static void test_xalloc_results(void **state)
{
    (void)state;
    cleanup_free char *s = xasprintf("%s-%03d", "gpu", 7);
    assert_string_equal(s, "gpu-007");
    cleanup_free char *d = xstrdup("fakehw");
    assert_string_equal(d, "fakehw");
    cleanup_free char *n = xstrndup("fakehw", 4);
    assert_string_equal(n, "fake");
    cleanup_free int *z = xcalloc(16, sizeof(int));
    for (int i = 0; i < 16; i++)
        assert_int_equal(z[i], 0);
    cleanup_free char *r = xmalloc(4);
    memcpy(r, "abc", 4);
    r = xrealloc(r, 1 << 20);
    assert_string_equal(r, "abc");
    /* Zero sizes still give a pointer to free, never NULL. */
    cleanup_free void *m0 = xmalloc(0);
    cleanup_free void *c0 = xcalloc(0, 0);
    assert_non_null(m0);
    assert_non_null(c0);
}

/* Runs fn in a child with stderr to a pipe; returns its wait status and
 * what it wrote. */
static int in_child(void (*fn)(void), char *out, size_t size)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(p[1], STDERR_FILENO);
        close(p[0]);
        fn();
        _exit(0);
    }
    close(p[1]);
    size_t len = 0;
    ssize_t r;
    while (len + 1 < size && (r = read(p[0], out + len, size - 1 - len)) > 0)
        len += (size_t)r;
    out[len] = '\0';
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* fn, run in a child, dies of "out of memory" (exit 70, its message on
 * stderr); a failure names what stands for fn. */
static void expect_out_of_memory(void (*fn)(void), const char *what)
{
    char out[256];
    int status = in_child(fn, out, sizeof(out));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 70)
        fail_msg("%s: wait status %#x, not exit 70", what, status);
    if (strcmp(out, "fatal: out of memory\n") != 0)
        fail_msg("%s: said \"%s\"", what, out);
}

static void die(void)
{
    xalloc_die();
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifndef UNDER_ASAN
static void huge(void)
{
    /* Bigger than any address space: malloc fails without trying. */
    void *p = xmalloc(SIZE_MAX / 2);
    free(p);
}
#endif

static void test_out_of_memory_is_fatal(void **state)
{
    (void)state;
    expect_out_of_memory(die, "xalloc_die");
#ifndef UNDER_ASAN /* ASan reports a huge malloc itself instead of returning NULL */
    expect_out_of_memory(huge, "xmalloc(SIZE_MAX / 2)");
#endif
}

/* ---------- GROW ---------- */

struct wide {
    char name[300];
    int n;
};

static void test_grow_keeps_items_and_doubles(void **state)
{
    (void)state;
    cleanup_free int *v = NULL;
    size_t cap = 0;
    GROW(v, cap, 0); /* even no need allocates: the array is never NULL after GROW */
    assert_non_null(v);
    assert_int_equal(cap, 1024 / sizeof(int));
    for (int i = 0; i < 10000; i++) {
        GROW(v, cap, (size_t)i + 1);
        assert_true(cap >= (size_t)i + 1);
        v[i] = i;
    }
    assert_int_equal(cap, 16384); /* 256 doubled six times: no exact fits */
    for (int i = 0; i < 10000; i++)
        assert_int_equal(v[i], i);
    int *before = v;
    GROW(v, cap, 16384);
    assert_ptr_equal(v, before); /* room enough: nothing moves */

    /* Large elements start at 8, and the size is the element's. */
    cleanup_free struct wide *w = NULL;
    size_t wcap = 0;
    GROW(w, wcap, 9);
    assert_int_equal(wcap, 16);
    w[15].n = 15;
    assert_int_equal(w[15].n, 15);
}

static void grow_overflow(void)
{
    cleanup_free struct wide *w = NULL;
    size_t cap = 0;
    GROW(w, cap, SIZE_MAX / 64); /* its bytes overflow a size_t */
}

static void test_grow_overflow_is_fatal(void **state)
{
    (void)state;
    expect_out_of_memory(grow_overflow, "GROW to SIZE_MAX / 64 elements");
}

/* ---------- error_setv ---------- */

/* A wrapper with its own format, the case error_setv is for. */
static int __attribute__((format(printf, 3, 4)))
claim_error(struct error *err, const char *claim, const char *fmt, ...)
{
    char full[256];
    snprintf(full, sizeof(full), "claim %s: %s", claim, fmt);
    va_list ap;
    va_start(ap, fmt);
    int rc = error_setv(err, full, ap);
    va_end(ap);
    return rc;
}

static void test_error_setv(void **state)
{
    (void)state;
    struct error err;
    assert_int_equal(claim_error(&err, "default/c1", "%d devices, want %s", 3, "2"), -1);
    assert_string_equal(err.msg, "claim default/c1: 3 devices, want 2");
    assert_int_equal(claim_error(NULL, "x", "%s", "ignored"), -1);
    /* A message longer than the buffer is cut, still NUL-terminated. */
    char big[ERROR_MSG_MAX * 2];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(claim_error(&err, "c", "%s", big), -1);
    assert_int_equal(strlen(err.msg), ERROR_MSG_MAX - 1);
    assert_memory_equal(err.msg, "claim c: xxx", 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cleanup_func_runs_at_scope_exit),
        cmocka_unit_test(test_steal_pointer_hands_ownership_on),
        cmocka_unit_test(test_cleanup_close_and_steal_fd),
        cmocka_unit_test(test_cleanup_fclose),
        cmocka_unit_test(test_cleanup_free_with_error_path),
        cmocka_unit_test(test_xalloc_results),
        cmocka_unit_test(test_out_of_memory_is_fatal),
        cmocka_unit_test(test_grow_keeps_items_and_doubles),
        cmocka_unit_test(test_grow_overflow_is_fatal),
        cmocka_unit_test(test_error_setv),
    };
    return cmocka_run_group_tests_name("idiom", tests, NULL, NULL);
}
