// SPDX-License-Identifier: Apache-2.0
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int samples_add(struct samples *s, double v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        double *nv = realloc(s->v, cap * sizeof(*nv));
        if (nv == NULL)
            return -1;
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = v;
    return 0;
}

int samples_merge(struct samples *s, const struct samples *from)
{
    for (size_t i = 0; i < from->n; i++)
        if (samples_add(s, from->v[i]) < 0)
            return -1;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double samples_percentile(struct samples *s, double p)
{
    if (s->n == 0 || !(p > 0) || p > 100)
        return NAN;
    qsort(s->v, s->n, sizeof(*s->v), cmp_double);
    /* Nearest rank: ceil(p/100 * n), 1-based.  The small epsilon keeps
     * 50% of 10 samples at rank 5 despite binary rounding. */
    double rank = ceil(p / 100.0 * (double)s->n - 1e-9);
    size_t r = rank < 1 ? 1 : (size_t)rank;
    if (r > s->n)
        r = s->n;
    return s->v[r - 1];
}

void samples_clear(struct samples *s)
{
    s->n = 0;
}

void samples_free(struct samples *s)
{
    free(s->v);
    memset(s, 0, sizeof(*s));
}

void spread_of(const double *values, size_t n, struct spread *out)
{
    out->runs = n;
    if (n == 0) {
        out->median = out->min = out->max = NAN;
        return;
    }
    double *v = malloc(n * sizeof(*v));
    if (v == NULL) {
        out->median = out->min = out->max = NAN;
        return;
    }
    memcpy(v, values, n * sizeof(*v));
    qsort(v, n, sizeof(*v), cmp_double);
    out->min = v[0];
    out->max = v[n - 1];
    out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
}
