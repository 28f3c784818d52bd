// SPDX-License-Identifier: Apache-2.0
// Scope-bound cleanup, in the style of crun and systemd: a variable declared
// with one of these attributes is released when it goes out of scope, so an
// error path is a plain `return`. Hand ownership on with steal_pointer() or
// steal_fd(), which leave NULL or -1 behind.
#ifndef FAKEHW_COMMON_CLEANUP_H
#define FAKEHW_COMMON_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
    void **pp = (void **)p;
    int saved = errno; // free() keeps errno only since POSIX.1-2024
    free(*pp);
    errno = saved;
}

static inline void cleanup_closep(int *fd)
{
    if (*fd >= 0) {
        int saved = errno; // close() on an error path must not hide the cause
        close(*fd);
        errno = saved;
    }
}

static inline void cleanup_fclosep(FILE **f)
{
    if (*f != NULL) {
        int saved = errno;
        fclose(*f);
        errno = saved;
    }
}

static inline void cleanup_closedirp(DIR **d)
{
    if (*d != NULL) {
        int saved = errno;
        closedir(*d);
        errno = saved;
    }
}

#define cleanup_free     __attribute__((cleanup(cleanup_freep)))
#define cleanup_close    __attribute__((cleanup(cleanup_closep)))
#define cleanup_fclose   __attribute__((cleanup(cleanup_fclosep)))
#define cleanup_closedir __attribute__((cleanup(cleanup_closedirp)))

// Declares a cleanup for a type with a free function: CLEANUP_FUNC(struct x,
// x_free) makes `cleanup_x_free struct x *p` call x_free(p) when p is set.
#define CLEANUP_FUNC(type, fn)                                                                     \
    static inline void fn##p(type **p)                                                             \
    {                                                                                              \
        if (*p != NULL)                                                                            \
            fn(*p);                                                                                \
    }

static inline void *steal_pointer_impl(void *pp)
{
    void **p = (void **)pp;
    void *v = *p;
    *p = NULL;
    return v;
}
#define steal_pointer(pp) steal_pointer_impl((void *)(pp))

static inline int steal_fd(int *fd)
{
    int v = *fd;
    *fd = -1;
    return v;
}

#endif
