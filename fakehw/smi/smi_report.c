// SPDX-License-Identifier: Apache-2.0
/* nvidia-smi -q's layout: see smi_report.h. */
#include "smi_report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

/* nvidia-smi pads every label, indentation included, to this width and
 * puts ": value" after it. */
#define LABEL_WIDTH 42
#define NA          "N/A"

/* "<indent><label><pad>: <value>" */
static void field(FILE *out, int depth, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void field(FILE *out, int depth, const char *label, const char *fmt, ...)
{
    int indent = 4 * depth, width = LABEL_WIDTH - indent;
    if ((int)strlen(label) >= width)
        width = (int)strlen(label) + 1;
    fprintf(out, "%*s%-*s: ", indent, "", width, label);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

static void section(FILE *out, int depth, const char *title)
{
    fprintf(out, "%*s%s\n", 4 * depth, "", title);
}

static const char *or_na(const char *text)
{
    return text[0] != '\0' ? text : NA;
}

/* The fakehw section: what the tree has and nvidia-smi's report does not. */
static void fakehw_section(FILE *out, const struct smi_gpu *g)
{
    const struct fakehw_device *d = g->dev;
    section(out, 1, "fakehw");
    field(out, 2, "Device", "%s", d->name);
    field(out, 2, "Health", "%s", d->healthy ? FAKEHW_HEALTHY : FAKEHW_UNHEALTHY);
    field(out, 2, "Health Reason", "%s", or_na(d->health_reason));
    if (d->numa_node >= 0)
        field(out, 2, "NUMA Node", "%ld", d->numa_node);
    else
        field(out, 2, "NUMA Node", NA);
    if (g->share.memory > 0)
        field(out, 2, "Share", "%s: %" PRIu64 " MiB", g->share.id[0] ? g->share.id : "-",
              g->share.memory / (1024 * 1024));
    for (size_t m = 0; m < g->nmig; m++) {
        char label[32];
        snprintf(label, sizeof(label), "MIG Device %zu", m);
        field(out, 2, label, "%s (UUID: %s)", g->migs[m]->mig_profile, g->migs[m]->uuid);
    }
}

/* A section of two rows, Current and Pending, that show the same value. */
static void current_pending(FILE *out, const char *title, const char *value)
{
    section(out, 1, title);
    field(out, 2, "Current", "%s", value);
    field(out, 2, "Pending", "%s", value);
}

/* The identity rows of a GPU's block, Product Name to Module ID. */
static void identity_rows(FILE *out, const struct fakehw_device *d, const char *mig)
{
    field(out, 1, "Product Name", "%s", d->product_name);
    field(out, 1, "Product Brand", "%s", or_na(d->brand));
    field(out, 1, "Product Architecture", "%s", or_na(d->architecture));
    field(out, 1, "Display Mode", NA);
    field(out, 1, "Display Active", NA);
    field(out, 1, "Persistence Mode", NA);
    field(out, 1, "Addressing Mode", NA);
    current_pending(out, "MIG Mode", mig ? mig : NA);
    field(out, 1, "Accounting Mode", NA);
    field(out, 1, "Accounting Mode Buffer Size", NA);
    current_pending(out, "Driver Model", NA);
    field(out, 1, "Serial Number", NA);
    field(out, 1, "GPU UUID", "%s", d->uuid);
    field(out, 1, "Minor Number", "%ld", d->minor);
    field(out, 1, "VBIOS Version", NA);
    field(out, 1, "MultiGPU Board", NA);
    field(out, 1, "Board ID", NA);
    field(out, 1, "Board Part Number", NA);
    field(out, 1, "GPU Part Number", NA);
    field(out, 1, "FRU Part Number", NA);
    field(out, 1, "Module ID", NA);
}

/* The rows from GPU Operation Mode to PCI. */
static void mode_and_pci_rows(FILE *out, const char *bus_id, const unsigned pci[4])
{
    current_pending(out, "GPU Operation Mode", NA);
    field(out, 1, "GSP Firmware Version", NA);
    section(out, 1, "GPU Virtualization Mode");
    field(out, 2, "Virtualization Mode", NA);
    field(out, 2, "Host VGPU Mode", NA);
    section(out, 1, "PCI");
    field(out, 2, "Bus", "0x%02X", pci[1]);
    field(out, 2, "Device", "0x%02X", pci[2]);
    field(out, 2, "Domain", "0x%04X", pci[0]);
    field(out, 2, "Device Id", NA);
    field(out, 2, "Bus Id", "%s", bus_id);
    field(out, 2, "Sub System Id", NA);
}

/* The rows of what the GPU does, Fan Speed to Processes: nothing runs on a
 * fake GPU, so none of its memory is used or reserved. */
static void usage_rows(FILE *out, uint64_t mib)
{
    field(out, 1, "Fan Speed", NA);
    field(out, 1, "Performance State", NA);
    section(out, 1, "FB Memory Usage");
    field(out, 2, "Total", "%" PRIu64 " MiB", mib);
    field(out, 2, "Reserved", "0 MiB");
    field(out, 2, "Used", "0 MiB");
    field(out, 2, "Free", "%" PRIu64 " MiB", mib);
    field(out, 1, "Compute Mode", NA);
    section(out, 1, "Utilization");
    field(out, 2, "Gpu", "0 %%");
    field(out, 2, "Memory", "0 %%");
    field(out, 2, "Encoder", NA);
    field(out, 2, "Decoder", NA);
    current_pending(out, "ECC Mode", NA);
    section(out, 1, "Temperature");
    field(out, 2, "GPU Current Temp", NA);
    section(out, 1, "GPU Power Readings");
    field(out, 2, "Power Draw", NA);
    field(out, 2, "Current Power Limit", NA);
    section(out, 1, "Clocks");
    field(out, 2, "Graphics", NA);
    field(out, 2, "SM", NA);
    field(out, 2, "Memory", NA);
    field(out, 1, "Processes", "None");
}

static void gpu_block(FILE *out, const struct smi_gpu *g)
{
    const struct fakehw_device *d = g->dev;
    char bus_id[32];
    unsigned pci[4] = {0, 0, 0, 0};
    if (smi_pci_bus_id(d->pci_bus_id, bus_id, sizeof(bus_id)) < 0) /* the reader checked it */
        snprintf(bus_id, sizeof(bus_id), "%s", d->pci_bus_id);
    smi_pci_parts(d->pci_bus_id, pci);
    fprintf(out, "GPU %s\n", bus_id);
    identity_rows(out, d, smi_mig_mode(d));
    mode_and_pci_rows(out, bus_id, pci);
    usage_rows(out, smi_memory_mib(g));
    fakehw_section(out, g);
    fputc('\n', out);
}

void smi_print_report(FILE *out, const struct smi_gpu *gpus, size_t n, size_t count)
{
    char stamp[64] = "";
    time_t now = time(NULL);
    struct tm tm;
    /* asctime's form, as nvidia-smi's: "Sat Nov 28 12:00:00 2026" */
    if (localtime_r(&now, &tm) != NULL)
        strftime(stamp, sizeof(stamp), "%a %b %e %H:%M:%S %Y", &tm);
    fputs("\n==============NVSMI LOG==============\n\n", out);
    field(out, 0, "Timestamp", "%s", stamp);
    /* One driver for the node: the first GPU's. */
    field(out, 0, "Driver Version", "%s", n > 0 ? gpus[0].dev->driver_version : NA);
    field(out, 0, "CUDA Version", "%s", n > 0 ? or_na(gpus[0].dev->cuda_driver_version) : NA);
    fputc('\n', out);
    field(out, 0, "Attached GPUs", "%zu", count);
    for (size_t i = 0; i < n; i++)
        gpu_block(out, &gpus[i]);
}
