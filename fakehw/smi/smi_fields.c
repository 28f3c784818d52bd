// SPDX-License-Identifier: Apache-2.0
/* The --query-gpu field table and nvidia-smi's CSV and -L output formats. */
#include "smi_fields.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smi_known_fields.h"
#include "text_list.h"

enum field_id {
    F_TIMESTAMP,
    F_DRIVER_VERSION,
    F_COUNT,
    F_NAME,
    F_SERIAL,
    F_UUID,
    F_PCI_BUS_ID,
    F_PCI_DOMAIN,
    F_PCI_BUS,
    F_PCI_DEVICE,
    F_INDEX,
    F_MEMORY_TOTAL,
    F_MEMORY_RESERVED,
    F_MEMORY_USED,
    F_MEMORY_FREE,
    F_COMPUTE_CAP,
    F_UTILIZATION_GPU,
    F_UTILIZATION_MEMORY,
    F_TEMPERATURE_GPU,
    F_POWER_DRAW,
    F_POWER_LIMIT,
    F_MIG_MODE_CURRENT,
    F_MIG_MODE_PENDING,
    F_MINOR_NUMBER,
    F_NUMA_NODE,
    F_HEALTH,
    F_HEALTH_REASON,
};

struct smi_field {
    enum field_id id;
    const char *name;
    const char *alias; /* nvidia-smi's other spelling, or NULL */
    const char *unit;  /* "MiB": header "name [MiB]", value "N MiB" */
    bool fakehw;       /* fakehw's addition, not nvidia-smi's */
    const char *help;
};

/* In the order of nvidia-smi's --help-query-gpu; fakehw's additions last. */
static const struct smi_field fields[] = {
    {F_TIMESTAMP, "timestamp", NULL, NULL, false,
     "when the query was made: YYYY/MM/DD HH:MM:SS.msec, local time"},
    {F_DRIVER_VERSION, "driver_version", NULL, NULL, false, "driver version, e.g. 550.127.05"},
    {F_COUNT, "count", NULL, NULL, false, "number of GPUs visible to this container"},
    {F_NAME, "name", "gpu_name", NULL, false, "product name, e.g. NVIDIA A100-SXM4-80GB"},
    {F_SERIAL, "serial", "gpu_serial", NULL, false, "board serial number: [N/A], fakehw has none"},
    {F_UUID, "uuid", "gpu_uuid", NULL, false,
     "GPU UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)"},
    {F_PCI_BUS_ID, "pci.bus_id", "gpu_bus_id", NULL, false,
     "PCI bus id as nvidia-smi prints it: 00000000:18:00.0"},
    {F_PCI_DOMAIN, "pci.domain", NULL, NULL, false, "PCI domain, in hex: 0x0000"},
    {F_PCI_BUS, "pci.bus", NULL, NULL, false, "PCI bus, in hex: 0x18"},
    {F_PCI_DEVICE, "pci.device", NULL, NULL, false, "PCI device, in hex: 0x00"},
    {F_INDEX, "index", NULL, NULL, false,
     "GPU number as this container sees it: 0..n-1 in the order of the devices' fakehw index"},
    {F_MEMORY_TOTAL, "memory.total", NULL, "MiB", false,
     "total memory in MiB (a share's: the memory it was granted)"},
    {F_MEMORY_RESERVED, "memory.reserved", NULL, "MiB", false,
     "memory the driver reserves: 0 MiB, fakehw reserves none"},
    {F_MEMORY_USED, "memory.used", NULL, "MiB", false,
     "memory in use: 0 MiB, nothing runs on a fake GPU"},
    {F_MEMORY_FREE, "memory.free", NULL, "MiB", false, "free memory: memory.total"},
    {F_COMPUTE_CAP, "compute_cap", NULL, NULL, false, "CUDA compute capability, e.g. 9.0"},
    {F_UTILIZATION_GPU, "utilization.gpu", NULL, "%", false,
     "GPU utilization: 0 %, nothing runs on a fake GPU"},
    {F_UTILIZATION_MEMORY, "utilization.memory", NULL, "%", false,
     "memory utilization: 0 %, nothing runs on a fake GPU"},
    {F_TEMPERATURE_GPU, "temperature.gpu", NULL, NULL, false,
     "core temperature: [N/A], fakehw has no sensor"},
    {F_POWER_DRAW, "power.draw", NULL, "W", false, "power draw: [N/A], fakehw has no sensor"},
    {F_POWER_LIMIT, "power.limit", NULL, "W", false, "power limit: [N/A], fakehw has none"},
    {F_MIG_MODE_CURRENT, "mig.mode.current", NULL, NULL, false,
     "Enabled (fakehw migMode static or dynamic), Disabled (off), [N/A] (a tree without it)"},
    {F_MIG_MODE_PENDING, "mig.mode.pending", NULL, NULL, false,
     "as mig.mode.current: fakehw has no pending mode"},
    {F_MINOR_NUMBER, "minor_number", NULL, NULL, true, "device node minor: /dev/fakegpu<N>"},
    {F_NUMA_NODE, "numa_node", "numa", NULL, true, "NUMA node ([N/A] when the device has none)"},
    {F_HEALTH, "health", NULL, NULL, true, "fakehw health: healthy or unhealthy"},
    {F_HEALTH_REASON, "health.reason", NULL, NULL, true,
     "reason of the last health flip ([N/A] when none)"},
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))
#define NA      "[N/A]"

static const struct smi_field *find_field(const char *name, size_t len)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        const struct smi_field *f = &fields[i];
        if ((strlen(f->name) == len && !strncmp(f->name, name, len)) ||
            (f->alias && strlen(f->alias) == len && !strncmp(f->alias, name, len)))
            return f;
    }
    return NULL;
}

int smi_each_item(const char *list, int (*fn)(const char *item, size_t len, void *ctx), void *ctx)
{
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        if (end == NULL)
            end = p + strlen(p);
        const char *b = p, *e = end;
        while (b < e && isspace((unsigned char)*b))
            b++;
        while (e > b && isspace((unsigned char)e[-1]))
            e--;
        if (fn(b, (size_t)(e - b), ctx) < 0)
            return -1;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}

struct query_ctx {
    struct smi_query *q;
    struct error *err;
};

static int add_field(const char *item, size_t len, void *ctx)
{
    struct query_ctx *c = ctx;
    const struct smi_field *f = find_field(item, len);
    if (f == NULL && smi_known_field(item, len)) {
        char supported[1024];
        struct text_list l = text_list_start(supported, sizeof(supported));
        for (size_t i = 0; i < NFIELDS; i++)
            text_list_add(&l, "%s", fields[i].name);
        return error_set(c->err, "Field \"%.*s\" is not supported by fakegpu-smi (supported: %s)",
                         (int)len, item, supported);
    }
    if (f == NULL)
        return error_set(c->err, "Field \"%.*s\" is not a valid field to query.", (int)len, item);
    if (c->q->n == SMI_QUERY_MAX)
        return error_set(c->err, "--query-gpu: more than %d fields", SMI_QUERY_MAX);
    c->q->fields[c->q->n++] = f;
    return 0;
}

int smi_query_parse(const char *list, struct smi_query *q, struct error *err)
{
    struct smi_query tmp = {0};
    struct query_ctx c = {&tmp, err};
    if (smi_each_item(list, add_field, &c) < 0)
        return -1;
    *q = tmp;
    return 0;
}

struct format_ctx {
    struct smi_format *f;
    bool csv;
    const char *text;
    struct error *err;
};

static int add_format_option(const char *item, size_t len, void *ctx)
{
    struct format_ctx *c = ctx;
    if (len == 3 && !strncmp(item, "csv", 3))
        c->csv = true;
    else if (len == 8 && !strncmp(item, "noheader", 8))
        c->f->header = false;
    else if (len == 7 && !strncmp(item, "nounits", 7))
        c->f->units = false;
    else
        return error_set(c->err,
                         "--format=%s: \"%.*s\" is not supported (use csv, optionally with "
                         "noheader and nounits: --format=csv,noheader,nounits)",
                         c->text, (int)len, item);
    return 0;
}

int smi_format_parse(const char *text, struct smi_format *f, struct error *err)
{
    struct smi_format tmp = {.header = true, .units = true};
    struct format_ctx c = {&tmp, false, text, err};
    if (smi_each_item(text, add_format_option, &c) < 0)
        return -1;
    if (!c.csv)
        return error_set(err, "--format=%s: csv is required (--format=csv[,noheader][,nounits])",
                         text);
    *f = tmp;
    return 0;
}

int smi_pci_parts(const char *id, unsigned parts[4])
{
    int used = 0;
    if (sscanf(id, "%8x:%2x:%2x.%1x%n", &parts[0], &parts[1], &parts[2], &parts[3], &used) != 4 ||
        id[used] != '\0')
        return -1;
    return 0;
}

int smi_pci_bus_id(const char *id, char *out, size_t size)
{
    unsigned p[4];
    if (smi_pci_parts(id, p) < 0)
        return -1;
    snprintf(out, size, "%08X:%02X:%02X.%X", p[0], p[1], p[2], p[3]);
    return 0;
}

uint64_t smi_memory_mib(const struct smi_gpu *g)
{
    return (g->share.memory ? g->share.memory : g->dev->memory_bytes) / (1024 * 1024);
}

const char *smi_mig_mode(const struct fakehw_device *d)
{
    if (!strcmp(d->mig_mode, FAKEHW_MIG_STATIC) || !strcmp(d->mig_mode, FAKEHW_MIG_DYNAMIC))
        return "Enabled";
    if (!strcmp(d->mig_mode, FAKEHW_MIG_OFF))
        return "Disabled";
    return NULL;
}

/* "2026/11/28 12:00:00.123", local time, as nvidia-smi's timestamp. */
static void timestamp(char *out, size_t size)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    char date[32];
    strftime(date, sizeof(date), "%Y/%m/%d %H:%M:%S", &tm);
    snprintf(out, size, "%s.%03ld", date, ts.tv_nsec / 1000000);
}

/* value with its unit (" MiB") unless nounits; "[N/A]" never has one. */
static void with_unit(char *out, size_t size, const char *value, const struct smi_field *f,
                      bool units)
{
    snprintf(out, size, "%s%s%s", value, units && f->unit ? " " : "",
             units && f->unit ? f->unit : "");
}

/* pci.domain, pci.bus or pci.device, as nvidia-smi prints them. */
static void pci_part(enum field_id id, const struct fakehw_device *d, char *out, size_t size)
{
    unsigned pci[4] = {0, 0, 0, 0};
    smi_pci_parts(d->pci_bus_id, pci); /* the reader checked it */
    if (id == F_PCI_DOMAIN)
        snprintf(out, size, "0x%04X", pci[0]);
    else
        snprintf(out, size, "0x%02X", id == F_PCI_BUS ? pci[1] : pci[2]);
}

/* s, or NA where fakehw has no value (s NULL or empty). */
static void text_or_na(char *out, size_t size, const char *s)
{
    snprintf(out, size, "%s", s != NULL && s[0] != '\0' ? s : NA);
}

static void field_value(const struct smi_field *f, const struct smi_gpu *g, size_t count,
                        bool units, char *out, size_t size)
{
    const struct fakehw_device *d = g->dev;
    char num[32];
    switch (f->id) {
    case F_TIMESTAMP:
        timestamp(out, size);
        return;
    case F_DRIVER_VERSION:
        snprintf(out, size, "%s", d->driver_version);
        return;
    case F_COUNT:
        snprintf(out, size, "%zu", count);
        return;
    case F_NAME:
        snprintf(out, size, "%s", d->product_name);
        return;
    case F_UUID:
        snprintf(out, size, "%s", d->uuid);
        return;
    case F_PCI_BUS_ID:
        if (smi_pci_bus_id(d->pci_bus_id, out, size) < 0)
            snprintf(out, size, "%s", d->pci_bus_id); /* the reader checked it: not reached */
        return;
    case F_PCI_DOMAIN:
    case F_PCI_BUS:
    case F_PCI_DEVICE:
        pci_part(f->id, d, out, size);
        return;
    case F_INDEX:
        snprintf(out, size, "%u", g->index);
        return;
    case F_MEMORY_TOTAL:
    case F_MEMORY_FREE:
        snprintf(num, sizeof(num), "%" PRIu64, smi_memory_mib(g));
        with_unit(out, size, num, f, units);
        return;
    case F_MEMORY_RESERVED:
    case F_MEMORY_USED:
    case F_UTILIZATION_GPU:
    case F_UTILIZATION_MEMORY:
        with_unit(out, size, "0", f, units);
        return;
    case F_COMPUTE_CAP:
        text_or_na(out, size, d->compute_capability);
        return;
    case F_MIG_MODE_CURRENT:
    case F_MIG_MODE_PENDING:
        text_or_na(out, size, smi_mig_mode(d));
        return;
    case F_MINOR_NUMBER:
        snprintf(out, size, "%ld", d->minor);
        return;
    case F_NUMA_NODE:
        if (d->numa_node < 0)
            snprintf(out, size, NA);
        else
            snprintf(out, size, "%ld", d->numa_node);
        return;
    case F_HEALTH:
        snprintf(out, size, "%s", d->healthy ? FAKEHW_HEALTHY : FAKEHW_UNHEALTHY);
        return;
    case F_HEALTH_REASON:
        text_or_na(out, size, d->health_reason);
        return;
    case F_SERIAL:
    case F_TEMPERATURE_GPU:
    case F_POWER_DRAW:
    case F_POWER_LIMIT:
        break; /* fakehw has no such value */
    }
    snprintf(out, size, NA);
}

void smi_print_csv(FILE *out, const struct smi_query *q, const struct smi_format *f,
                   const struct smi_gpu *gpus, size_t n, size_t count)
{
    if (f->header) {
        for (size_t i = 0; i < q->n; i++) {
            const struct smi_field *fl = q->fields[i];
            fprintf(out, "%s%s", i ? ", " : "", fl->name);
            if (fl->unit)
                fprintf(out, " [%s]", fl->unit);
        }
        fputc('\n', out);
    }
    for (size_t g = 0; g < n; g++) {
        for (size_t i = 0; i < q->n; i++) {
            char value[FAKEHW_REASON_MAX + 16];
            field_value(q->fields[i], &gpus[g], count, f->units, value, sizeof(value));
            fprintf(out, "%s%s", i ? ", " : "", value);
        }
        fputc('\n', out);
    }
}

static void print_share(FILE *out, const char *indent, const struct smi_share *s)
{
    if (s->memory > 0)
        fprintf(out, "%sShare %s: %" PRIu64 " MiB\n", indent, s->id[0] ? s->id : "-",
                s->memory / (1024 * 1024));
}

void smi_print_list(FILE *out, const struct smi_gpu *gpus, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "GPU %u: %s (UUID: %s)\n", gpus[i].index, gpus[i].dev->product_name,
                gpus[i].dev->uuid);
        print_share(out, "  ", &gpus[i].share);
        for (size_t m = 0; m < gpus[i].nmig; m++) {
            fprintf(out, "  MIG %-12sDevice %2zu: (UUID: %s)\n", gpus[i].migs[m]->mig_profile, m,
                    gpus[i].migs[m]->uuid);
            print_share(out, "    ", &gpus[i].mig_shares[m]);
        }
    }
}

void smi_print_fields_help(FILE *out)
{
    fprintf(out, "Fields for --query-gpu (comma-separated; aliases in brackets):\n\n");
    for (size_t i = 0; i < NFIELDS; i++) {
        char lhs[64];
        snprintf(lhs, sizeof(lhs), "%s%s%s%s", fields[i].name, fields[i].alias ? " [" : "",
                 fields[i].alias ? fields[i].alias : "", fields[i].alias ? "]" : "");
        fprintf(out, "  %-28s %s%s\n", lhs, fields[i].fakehw ? "(fakehw) " : "", fields[i].help);
    }
    fprintf(out, "\nThe others of nvidia-smi's fields are refused as not supported by "
                 "fakegpu-smi;\n(fakehw) marks fakehw's additions.\n");
}
