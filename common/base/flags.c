// SPDX-License-Identifier: Apache-2.0
#include "flags.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int parse_bool(const char *s, bool *out)
{
    if (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "yes")) {
        *out = true;
        return 0;
    }
    if (!strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "no")) {
        *out = false;
        return 0;
    }
    return -1;
}

/* Stores text into the flag's value; `origin` names where it came from. */
static int set_value(const struct flag *f, const char *text, const char *origin, struct error *err)
{
    switch (f->type) {
    case FLAG_STRING:
        *(const char **)f->value = text;
        return 0;
    case FLAG_INT: {
        char *end;
        errno = 0;
        long v = strtol(text, &end, 10);
        if (errno != 0 || end == text || *end != '\0')
            return error_set(err, "%s: \"%s\" is not an integer", origin, text);
        *(long *)f->value = v;
        return 0;
    }
    case FLAG_BOOL:
        if (parse_bool(text, (bool *)f->value) < 0)
            return error_set(err, "%s: \"%s\" is not a boolean (true or false)", origin, text);
        return 0;
    case FLAG_VERSION:
        return error_set(err, "%s takes no value", origin);
    }
    return error_set(err, "%s: unknown flag type", origin);
}

static const struct flag *find_flag(const struct flag *flags, size_t nflags, const char *name,
                                    size_t len)
{
    for (size_t i = 0; i < nflags; i++)
        if (strlen(flags[i].name) == len && !strncmp(flags[i].name, name, len))
            return &flags[i];
    return NULL;
}

int flags_parse(const struct flag *flags, size_t nflags, int argc, char **argv, int *next,
                struct error *err)
{
    for (size_t i = 0; i < nflags; i++) {
        const char *v = flags[i].env && flags[i].type != FLAG_VERSION ? getenv(flags[i].env) : NULL;
        if (v != NULL && *v != '\0') {
            char origin[128];
            snprintf(origin, sizeof(origin), "environment variable %s", flags[i].env);
            if (set_value(&flags[i], v, origin, err) < 0)
                return -1;
        }
    }
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return FLAGS_HELP;
        const char *name = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const struct flag *f = find_flag(flags, nflags, name, len);
        if (f == NULL)
            return error_set(err, "unknown flag %.*s (see --help)", (int)(len + (size_t)(name - a)),
                             a);
        char origin[128];
        snprintf(origin, sizeof(origin), "flag --%s", f->name);
        if (f->type == FLAG_VERSION && eq == NULL) {
            return FLAGS_VERSION;
        } else if (eq != NULL) {
            if (set_value(f, eq + 1, origin, err) < 0)
                return -1;
        } else if (f->type == FLAG_BOOL) {
            *(bool *)f->value = true;
        } else {
            if (i + 1 >= argc)
                return error_set(err, "%s needs a value", origin);
            if (set_value(f, argv[++i], origin, err) < 0)
                return -1;
        }
    }
    *next = i;
    return 0;
}

void flags_usage(FILE *out, const char *prog, const char *synopsis, const char *description,
                 const struct flag *flags, size_t nflags)
{
    fprintf(out, "Usage: %s %s\n\n%s\n\nFlags (environment variable in brackets):\n", prog,
            synopsis, description);
    for (size_t i = 0; i < nflags; i++) {
        const struct flag *f = &flags[i];
        if (f->type == FLAG_VERSION)
            continue;
        char lhs[96];
        snprintf(lhs, sizeof(lhs), "%s%s%s", strlen(f->name) == 1 ? "-" : "--", f->name,
                 f->type == FLAG_BOOL  ? ""
                 : f->type == FLAG_INT ? " N"
                                       : " VALUE");
        /* Long flag names get the help text on the next line, aligned. */
        if (strlen(lhs) > 34)
            fprintf(out, "  %s\n  %-34s %s", lhs, "", f->help);
        else
            fprintf(out, "  %-34s %s", lhs, f->help);
        if (f->env)
            fprintf(out, " [%s]", f->env);
        switch (f->type) {
        case FLAG_STRING:
            if (*(const char **)f->value)
                fprintf(out, " (default \"%s\")", *(const char **)f->value);
            break;
        case FLAG_INT:
            fprintf(out, " (default %ld)", *(long *)f->value);
            break;
        case FLAG_BOOL:
            fprintf(out, " (default %s)", *(bool *)f->value ? "true" : "false");
            break;
        case FLAG_VERSION:
            break;
        }
        fputc('\n', out);
    }
    fprintf(out, "  %-34s %s\n", "-h, --help", "show this help and exit");
    for (size_t i = 0; i < nflags; i++)
        if (flags[i].type == FLAG_VERSION)
            fprintf(out, "  --%-32s %s\n", flags[i].name, flags[i].help);
}

int flags_read(const struct flag *flags, size_t nflags, int argc, char **argv,
               const struct flags_program *program, int *next, struct error *err)
{
    int rc = flags_parse(flags, nflags, argc, argv, next, err);
    if (rc == FLAGS_HELP) {
        flags_usage(stdout, program->name, program->synopsis, program->description, flags, nflags);
        fflush(stdout);
    }
    return rc;
}

/* flags_read_all's check of what follows the flags. */
static int no_arguments(int argc, char **argv, int next, struct error *err)
{
    if (next != argc)
        return error_set(err, "unexpected argument \"%s\" (see --help)", argv[next]);
    return 0;
}

int flags_read_all(const struct flag *flags, size_t nflags, int argc, char **argv,
                   const struct flags_program *program, struct error *err)
{
    int next;
    int rc = flags_read(flags, nflags, argc, argv, program, &next, err);
    return rc == 0 ? no_arguments(argc, argv, next, err) : rc;
}

int flags_main(flags_reader *reader, const struct flag *flags, size_t nflags, int argc, char **argv,
               const struct flags_program *program, int *next)
{
    struct error err;
    int first;
    int rc = reader(flags, nflags, argc, argv, program, &first, &err);
    if (rc == 0 && next == NULL)
        rc = no_arguments(argc, argv, first, &err);
    if (rc == FLAGS_HELP || rc == FLAGS_VERSION)
        return 0;
    if (rc < 0)
        return flags_usage_error(program, "%s", err.msg);
    if (next != NULL)
        *next = first;
    return FLAGS_GO_ON;
}

int flags_usage_error(const struct flags_program *program, const char *fmt, ...)
{
    struct error what;
    va_list ap;
    va_start(ap, fmt);
    error_setv(&what, fmt, ap);
    va_end(ap);
    /* One write, so that the line is never split by another writer. */
    fprintf(stderr, "%s: %s\n", program->name, what.msg);
    return FLAGS_EXIT_USAGE;
}
