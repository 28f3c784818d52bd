// SPDX-License-Identifier: Apache-2.0
/* The plugin's personality: see personality.h. */
#include "personality.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "dns_names.h"
#include "nvidia_vfio.h"

/* One row per personality: its flag value and the driver it stands in for. */
static const struct {
    const char *name;
    const char *driver;
} personalities[] = {
    [PERSONALITY_FAKEHW] = {"fakehw", "gpu.fakehw.example.com"},
    [PERSONALITY_NVIDIA] = {"nvidia", "gpu.nvidia.com"},
};

#define N_PERSONALITIES (sizeof(personalities) / sizeof(personalities[0]))

int personality_parse(const char *name, enum personality *out, struct error *err)
{
    for (size_t i = 0; i < N_PERSONALITIES; i++)
        if (name != NULL && !strcmp(name, personalities[i].name)) {
            *out = (enum personality)i;
            return 0;
        }
    return error_set(err, "personality \"%s\" is not one of fakehw, nvidia", name ? name : "");
}

const char *personality_name(enum personality p)
{
    return (size_t)p < N_PERSONALITIES ? personalities[p].name : "?";
}

const char *personality_driver_name(enum personality p)
{
    return (size_t)p < N_PERSONALITIES ? personalities[p].driver : personalities[0].driver;
}

/* NVIDIA's canonical MIG name: the profile lower-cased, without dots, any
 * other character outside [a-z0-9-] a dash (its toRFC1123Compliant). */
static void compact_profile(const char *profile, char *out, size_t size)
{
    size_t k = 0;
    for (const char *p = profile; *p && k + 1 < size; p++) {
        char c = *p;
        if (c == '.')
            continue;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        out[k++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-';
    }
    out[k] = '\0';
    /* Trim dashes at both ends, as the real driver does. */
    size_t start = strspn(out, "-");
    memmove(out, out + start, strlen(out + start) + 1);
    for (k = strlen(out); k > 0 && out[k - 1] == '-'; k--)
        out[k - 1] = '\0';
}

int personality_device_name(enum personality p, const struct fakehw_device *d, char *buf,
                            size_t size, struct error *err)
{
    int n;
    if (p != PERSONALITY_NVIDIA) {
        n = snprintf(buf, size, "%s", d->name);
    } else if (d->parent[0] == '\0') {
        n = snprintf(buf, size, "gpu-%ld", d->minor);
    } else {
        char profile[FAKEHW_NAME_MAX];
        compact_profile(d->mig_profile, profile, sizeof(profile));
        n = snprintf(buf, size, "gpu-%ld-mig-%s-%ld-%ld", d->minor, profile, d->mig_profile_id,
                     d->mig_placement[0]);
    }
    if (n < 0 || (size_t)n >= size || n > 63 || !dns_label_valid(buf))
        return error_set(err,
                         "device %s: its %s name would not be a DNS label of at most 63 "
                         "characters",
                         d->name, personality_name(p));
    return 0;
}

/* A vfio GPU's NVIDIA name, gpu-vfio-<i>: i is its position among the
 * GPUs of devs by PCI bus id (fakehw's are all of one width, so the text
 * order is the numeric order the real driver sorts by). */
static void vfio_name(const struct fakehw_device *devs, size_t n, size_t i, char *buf, size_t size)
{
    size_t rank = 0;
    for (size_t j = 0; j < n; j++)
        if (j != i && devs[j].parent[0] == '\0' &&
            strcmp(devs[j].pci_bus_id, devs[i].pci_bus_id) < 0)
            rank++;
    snprintf(buf, size, "gpu-vfio-%zu", rank);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int personality_rename(enum personality p, struct fakehw_device *devs, size_t n, struct error *err)
{
    if (p == PERSONALITY_FAKEHW || n == 0)
        return 0;
    cleanup_free char(*names)[FAKEHW_NAME_MAX] = calloc(n, sizeof(*names));
    cleanup_free const char **sorted = calloc(n, sizeof(*sorted));
    if (names == NULL || sorted == NULL)
        return error_set(err, "out of memory renaming %zu devices", n);
    for (size_t i = 0; i < n; i++) {
        if (p == PERSONALITY_NVIDIA && nvidia_is_vfio(&devs[i]))
            vfio_name(devs, n, i, names[i], sizeof(names[i]));
        else if (personality_device_name(p, &devs[i], names[i], sizeof(names[i]), err) < 0)
            return -1;
        sorted[i] = names[i];
    }
    qsort(sorted, n, sizeof(*sorted), by_name);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(sorted[i - 1], sorted[i]))
            return error_set(err, "two devices would both be published as %s (%s personality)",
                             sorted[i], personality_name(p));
    /* A partition's parent takes its GPU's new name: look it up by the
     * tree's name before any is changed. */
    for (size_t i = 0; i < n; i++) {
        snprintf(devs[i].dir, sizeof(devs[i].dir), "%s", devs[i].name);
        snprintf(devs[i].parent_dir, sizeof(devs[i].parent_dir), "%s", devs[i].parent);
    }
    for (size_t i = 0; i < n; i++) {
        if (devs[i].parent_dir[0] == '\0')
            continue;
        for (size_t j = 0; j < n; j++)
            if (!strcmp(devs[j].dir, devs[i].parent_dir)) {
                snprintf(devs[i].parent, sizeof(devs[i].parent), "%s", names[j]);
                break;
            }
    }
    for (size_t i = 0; i < n; i++)
        snprintf(devs[i].name, sizeof(devs[i].name), "%s", names[i]);
    return 0;
}

const char *fakehw_device_dir(const struct fakehw_device *d)
{
    return d->dir[0] ? d->dir : d->name;
}

const char *fakehw_device_parent_dir(const struct fakehw_device *d)
{
    return d->dir[0] ? d->parent_dir : d->parent;
}
