// SPDX-License-Identifier: Apache-2.0
/* The fakehw tree over FUSE: see fuse_tree.h. */
#define FUSE_USE_VERSION 314
#include "fuse_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fuse_access.h"
#include "log.h"

enum kind { K_ROOT, K_DEVICES, K_DEVICE_DIR, K_ROOT_FILE, K_DEVICE_FILE };

struct parsed {
    enum kind kind;
    char device[FAKEHW_NAME_MAX]; /* K_DEVICE_DIR, K_DEVICE_FILE */
    char file[FAKEHW_NAME_MAX];   /* K_ROOT_FILE, K_DEVICE_FILE */
};

/* One open file.  Generation files are also on the tree's poll list. */
struct open_file {
    struct parsed p;
    bool is_generation;
    /* snapshot: the whole text, rendered at open; every read serves it. */
    char *text;
    size_t text_len;
    uint64_t gen_read;          /* what this fd last read, or saw at open */
    struct fuse_pollhandle *ph; /* pending poll, to notify on change */
    struct open_file *prev, *next;
    /* The content a read at offset 0 rendered: reads further on serve it, so
     * one pass over the file never mixes two values ("9\n" then "10\n"). */
    pthread_mutex_t snap_lock;
    char snap[INVENTORY_FILE_MAX];
    size_t snap_len;
    bool has_snap;
};

struct fuse_tree {
    struct live_inventory *inv;
    struct fuse *fuse;
    time_t started;
    pthread_mutex_t poll_lock;
    struct open_file *generation_files; /* list of open generation files */
};

static struct fuse_tree *tree(void)
{
    return fuse_get_context()->private_data;
}

static bool is_root_file(const char *name)
{
    return !strcmp(name, FAKEHW_FILE_NODE) || !strcmp(name, FAKEHW_FILE_GENERATION) ||
           !strcmp(name, FAKEHW_FILE_SNAPSHOT);
}

static bool is_snapshot(const struct parsed *p)
{
    return p->kind == K_ROOT_FILE && !strcmp(p->file, FAKEHW_FILE_SNAPSHOT);
}

static bool is_attribute(const char *name)
{
    for (const char *const *a = inventory_attributes(); *a != NULL; a++)
        if (!strcmp(*a, name))
            return true;
    return false;
}

/* Copies the next path component of *path into out; false when it is too
 * long. */
static bool component(const char **path, char *out, size_t size)
{
    const char *s = *path, *end = strchr(s, '/');
    size_t n = end ? (size_t)(end - s) : strlen(s);
    if (n == 0 || n >= size)
        return false;
    memcpy(out, s, n);
    out[n] = '\0';
    *path = end ? end + 1 : s + n;
    return true;
}

/* Maps a path to what it names; -ENOENT for anything not in the tree. */
static int parse_path(struct fuse_tree *t, const char *path, struct parsed *p)
{
    memset(p, 0, sizeof(*p));
    if (!strcmp(path, "/")) {
        p->kind = K_ROOT;
        return 0;
    }
    path++;
    char first[FAKEHW_NAME_MAX];
    if (!component(&path, first, sizeof(first)))
        return -ENOENT;
    if (strcmp(first, FAKEHW_DIR_DEVICES) != 0) {
        if (*path != '\0' || !is_root_file(first))
            return -ENOENT;
        p->kind = K_ROOT_FILE;
        memcpy(p->file, first, sizeof(p->file));
        return 0;
    }
    if (*path == '\0') {
        p->kind = K_DEVICES;
        return 0;
    }
    if (!component(&path, p->device, sizeof(p->device)) || !inventory_has_device(t->inv, p->device))
        return -ENOENT;
    if (*path == '\0') {
        p->kind = K_DEVICE_DIR;
        return 0;
    }
    if (!component(&path, p->file, sizeof(p->file)) || *path != '\0' || !is_attribute(p->file))
        return -ENOENT;
    p->kind = K_DEVICE_FILE;
    return 0;
}

static int render(struct fuse_tree *t, const struct parsed *p, char *buf, size_t size, size_t *len,
                  int64_t *mtime, uint64_t *gen)
{
    struct error err;
    if (inventory_read_file(t->inv, p->kind == K_DEVICE_FILE ? p->device : NULL, p->file, buf, size,
                            len, mtime, gen, &err) < 0)
        return -errno;
    return 0;
}

static bool writable(const struct parsed *p)
{
    return p->kind == K_DEVICE_FILE && inventory_attribute_writable(p->file);
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    /* Values change behind the kernel's back: never cache names, attributes
     * or data. */
    cfg->entry_timeout = 0;
    cfg->negative_timeout = 0;
    cfg->attr_timeout = 0;
    cfg->kernel_cache = 0;
    cfg->direct_io = 1;
    return tree();
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    (void)fi;
    struct fuse_tree *t = tree();
    struct parsed p;
    int rc = parse_path(t, path, &p);
    if (rc < 0)
        return rc;
    memset(st, 0, sizeof(*st));
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_atime = st->st_mtime = st->st_ctime = t->started;
    if (p.kind == K_ROOT || p.kind == K_DEVICES || p.kind == K_DEVICE_DIR) {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
        return 0;
    }
    char buf[INVENTORY_FILE_MAX];
    size_t len;
    int64_t mtime;
    uint64_t gen;
    /* snapshot is only rendered at open: its size is 0 here, as for /proc
     * files (direct I/O reads to EOF anyway), its time that of generation. */
    struct parsed gp = {.kind = K_ROOT_FILE, .file = FAKEHW_FILE_GENERATION};
    if ((rc = render(t, is_snapshot(&p) ? &gp : &p, buf, sizeof(buf), &len, &mtime, &gen)) < 0)
        return rc;
    st->st_mode = S_IFREG | (writable(&p) ? 0644 : 0444);
    st->st_nlink = 1;
    st->st_size = is_snapshot(&p) ? 0 : (off_t)len;
    st->st_mtime = st->st_ctime = (time_t)mtime;
    return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off;
    (void)fi;
    (void)flags;
    struct fuse_tree *t = tree();
    struct parsed p;
    int rc = parse_path(t, path, &p);
    if (rc < 0)
        return rc;
    if (p.kind == K_ROOT_FILE || p.kind == K_DEVICE_FILE)
        return -ENOTDIR;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    if (p.kind == K_ROOT) {
        fill(buf, FAKEHW_FILE_NODE, NULL, 0, 0);
        fill(buf, FAKEHW_FILE_GENERATION, NULL, 0, 0);
        fill(buf, FAKEHW_FILE_SNAPSHOT, NULL, 0, 0);
        fill(buf, FAKEHW_DIR_DEVICES, NULL, 0, 0);
    } else if (p.kind == K_DEVICE_DIR) {
        for (const char *const *a = inventory_attributes(); *a != NULL; a++)
            fill(buf, *a, NULL, 0, 0);
    } else {
        char(*names)[FAKEHW_NAME_MAX];
        size_t n;
        struct error err;
        if (inventory_device_names(t->inv, &names, &n, &err) < 0)
            return -ENOMEM;
        for (size_t i = 0; i < n; i++)
            fill(buf, names[i], NULL, 0, 0);
        free(names);
    }
    return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
    struct fuse_tree *t = tree();
    struct parsed p;
    int rc = parse_path(t, path, &p);
    if (rc < 0)
        return rc;
    if (p.kind != K_ROOT_FILE && p.kind != K_DEVICE_FILE)
        return -EISDIR;
    /* Root passes default_permissions' mode check: refuse writes here too. */
    if ((fi->flags & O_ACCMODE) != O_RDONLY && !writable(&p))
        return -EACCES;
    struct open_file *of = calloc(1, sizeof(*of));
    if (of == NULL)
        return -ENOMEM;
    if (is_snapshot(&p)) {
        /* One generation for the whole open, however it is read. */
        struct error err;
        uint64_t gen;
        if (inventory_render_snapshot(t->inv, &of->text, &of->text_len, &gen, &err) < 0) {
            int e = errno;
            LOG_E("%s", err.msg);
            free(of);
            return -e;
        }
    }
    of->p = p;
    pthread_mutex_init(&of->snap_lock, NULL);
    of->is_generation = p.kind == K_ROOT_FILE && !strcmp(p.file, FAKEHW_FILE_GENERATION);
    fi->fh = (uint64_t)(uintptr_t)of;
    fi->direct_io = 1;
    fi->keep_cache = 0;
    if (of->is_generation) {
        pthread_mutex_lock(&t->poll_lock);
        of->gen_read = inventory_generation(t->inv);
        of->next = t->generation_files;
        if (of->next != NULL)
            of->next->prev = of;
        t->generation_files = of;
        pthread_mutex_unlock(&t->poll_lock);
    }
    return 0;
}

static struct open_file *open_file_of(struct fuse_file_info *fi)
{
    return (struct open_file *)(uintptr_t)fi->fh;
}

static int op_read(const char *path, char *out, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    struct fuse_tree *t = tree();
    struct open_file *of = open_file_of(fi);
    if (off < 0)
        return -EINVAL;
    if (of->text != NULL) {
        size_t n = 0;
        if ((size_t)off < of->text_len) {
            n = of->text_len - (size_t)off < size ? of->text_len - (size_t)off : size;
            memcpy(out, of->text + off, n);
        }
        return (int)n;
    }
    pthread_mutex_lock(&of->snap_lock);
    if (off == 0 || !of->has_snap) {
        int64_t mtime;
        uint64_t gen;
        int rc = render(t, &of->p, of->snap, sizeof(of->snap), &of->snap_len, &mtime, &gen);
        if (rc < 0) {
            of->has_snap = false;
            pthread_mutex_unlock(&of->snap_lock);
            return rc;
        }
        of->has_snap = true;
        if (of->is_generation) {
            pthread_mutex_lock(&t->poll_lock);
            of->gen_read = gen;
            pthread_mutex_unlock(&t->poll_lock);
        }
    }
    size_t n = 0;
    if ((size_t)off < of->snap_len) {
        n = of->snap_len - (size_t)off < size ? of->snap_len - (size_t)off : size;
        memcpy(out, of->snap + off, n);
    }
    pthread_mutex_unlock(&of->snap_lock);
    return (int)n;
}

static int op_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    (void)path;
    (void)off; /* each write(2) is one command, as in sysfs */
    struct fuse_tree *t = tree();
    struct open_file *of = open_file_of(fi);
    if (!writable(&of->p))
        return -EACCES;
    struct error err;
    /* The writable files and what applies a write to each. */
    static const struct {
        enum fakehw_attr_id attr;
        int (*write)(struct live_inventory *, const char *, const char *, size_t, struct error *);
    } writers[] = {
        {FAKEHW_ATTR_ID_HEALTH, inventory_write_health},
        {FAKEHW_ATTR_ID_ATTACH, inventory_write_attach},
        {FAKEHW_ATTR_ID_XID, inventory_write_xid},
    };
    size_t w = 0;
    while (w + 1 < sizeof(writers) / sizeof(writers[0]) &&
           strcmp(of->p.file, fakehw_device_attributes[writers[w].attr].file) != 0)
        w++;
    if (writers[w].write(t->inv, of->p.device, buf, size, &err) < 0) {
        int e = errno;
        LOG_W("write to %s/%s refused: %s", of->p.device, of->p.file, err.msg);
        return -e;
    }
    LOG_I("%s of %s set by write: %.*s", of->p.file, of->p.device,
          (int)(size > 0 && buf[size - 1] == '\n' ? size - 1 : size), buf);
    return (int)size;
}

/* O_TRUNC reaches us as a truncate when the kernel lacks atomic_o_trunc;
 * harmless on health, refused elsewhere. */
static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    (void)size;
    (void)fi;
    struct parsed p;
    int rc = parse_path(tree(), path, &p);
    if (rc < 0)
        return rc;
    return writable(&p) ? 0 : -EACCES;
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    struct fuse_tree *t = tree();
    struct open_file *of = open_file_of(fi);
    if (of->is_generation) {
        pthread_mutex_lock(&t->poll_lock);
        if (of->prev != NULL)
            of->prev->next = of->next;
        else
            t->generation_files = of->next;
        if (of->next != NULL)
            of->next->prev = of->prev;
        if (of->ph != NULL)
            fuse_pollhandle_destroy(of->ph);
        pthread_mutex_unlock(&t->poll_lock);
    }
    pthread_mutex_destroy(&of->snap_lock);
    free(of->text);
    free(of);
    return 0;
}

static int op_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph,
                   unsigned *reventsp)
{
    (void)path;
    struct fuse_tree *t = tree();
    struct open_file *of = open_file_of(fi);
    if (!of->is_generation) {
        /* Attribute files are always readable; they do not notify. */
        if (ph != NULL)
            fuse_pollhandle_destroy(ph);
        *reventsp = POLLIN;
        return 0;
    }
    pthread_mutex_lock(&t->poll_lock);
    if (inventory_generation(t->inv) != of->gen_read) {
        *reventsp = POLLIN | POLLPRI;
        if (ph != NULL)
            fuse_pollhandle_destroy(ph);
    } else {
        *reventsp = 0;
        if (ph != NULL) {
            if (of->ph != NULL)
                fuse_pollhandle_destroy(of->ph);
            of->ph = ph;
        }
    }
    pthread_mutex_unlock(&t->poll_lock);
    return 0;
}

/* The inventory changed: wake every poll waiting on an older generation. */
static void on_change(void *ctx, uint64_t generation)
{
    struct fuse_tree *t = ctx;
    pthread_mutex_lock(&t->poll_lock);
    for (struct open_file *of = t->generation_files; of != NULL; of = of->next) {
        if (of->ph != NULL && of->gen_read != generation) {
            fuse_notify_poll(of->ph);
            fuse_pollhandle_destroy(of->ph);
            of->ph = NULL;
        }
    }
    pthread_mutex_unlock(&t->poll_lock);
    LOG_V(2, "generation %llu", (unsigned long long)generation);
}

static int op_refuse(const char *path, mode_t mode)
{
    (void)path;
    (void)mode;
    return -EPERM;
}

static int op_refuse_path(const char *path)
{
    (void)path;
    return -EPERM;
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    (void)fi;
    return op_refuse(path, mode);
}

static int op_mknod(const char *path, mode_t mode, dev_t dev)
{
    (void)dev;
    return op_refuse(path, mode);
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
    (void)to;
    (void)flags;
    return op_refuse_path(from);
}

static const struct fuse_operations ops = {
    .init = op_init,
    .getattr = op_getattr,
    .readdir = op_readdir,
    .open = op_open,
    .read = op_read,
    .write = op_write,
    .truncate = op_truncate,
    .release = op_release,
    .poll = op_poll,
    .create = op_create,
    .mknod = op_mknod,
    .mkdir = op_refuse,
    .unlink = op_refuse_path,
    .rmdir = op_refuse_path,
    .rename = op_rename,
};

/* Frees a tree that did not mount: fuse_tree_mount's failures. */
static void unmounted_free(struct fuse_tree *t)
{
    if (t->fuse != NULL)
        fuse_destroy(t->fuse);
    pthread_mutex_destroy(&t->poll_lock);
    free(t);
}
CLEANUP_FUNC(struct fuse_tree, unmounted_free)

struct fuse_tree *fuse_tree_mount(struct live_inventory *inv, const char *mountpoint,
                                  bool allow_other, struct error *err)
{
    __attribute__((cleanup(unmounted_freep))) struct fuse_tree *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    t->inv = inv;
    t->started = time(NULL);
    pthread_mutex_init(&t->poll_lock, NULL);
    char opts[128];
    snprintf(opts, sizeof(opts), "fsname=fakehw,subtype=fakehw,default_permissions%s",
             allow_other ? ",allow_other" : "");
    char *argv[] = {"fakehw", "-o", opts, NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, argv);
    t->fuse = fuse_new(&args, &ops, sizeof(ops), t);
    fuse_opt_free_args(&args);
    if (t->fuse == NULL) {
        error_set(err, "mounting %s: libfuse refused the options %s", mountpoint, opts);
        return NULL;
    }
    if (fuse_mount(t->fuse, mountpoint) != 0) {
        char why[512];
        fuse_mount_diagnose(FUSE_DEVICE, why, sizeof(why));
        error_set(err, "mounting %s failed: %s", mountpoint, why);
        return NULL;
    }
    inventory_set_listener(inv, on_change, t);
    return steal_pointer(&t);
}

int fuse_tree_loop(struct fuse_tree *t, struct error *err)
{
    struct fuse_loop_config *cfg = fuse_loop_cfg_create();
    if (cfg == NULL)
        return error_set(err, "out of memory");
    int rc = fuse_loop_mt(t->fuse, cfg);
    fuse_loop_cfg_destroy(cfg);
    if (rc != 0)
        return error_set(err, "the FUSE session ended with an error (%d)", rc);
    return 0;
}

void fuse_tree_exit(struct fuse_tree *t)
{
    fuse_session_exit(fuse_get_session(t->fuse));
}

void fuse_tree_unmount(struct fuse_tree *t)
{
    if (t == NULL)
        return;
    inventory_set_listener(t->inv, NULL, NULL);
    fuse_unmount(t->fuse);
    fuse_destroy(t->fuse);
    /* The unmount is lazy: files still open are never released to us. */
    for (struct open_file *of = t->generation_files, *next; of != NULL; of = next) {
        next = of->next;
        if (of->ph != NULL)
            fuse_pollhandle_destroy(of->ph);
        pthread_mutex_destroy(&of->snap_lock);
        free(of);
    }
    pthread_mutex_destroy(&t->poll_lock);
    free(t);
}
