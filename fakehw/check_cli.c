// SPDX-License-Identifier: Apache-2.0
/* fakehw check and fakehw profiles: look at a config or the catalogue
 * without mounting anything. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "catalogue.h"
#include "cli.h"
#include "config.h"
#include "fakehw_attach.h"
#include "flags.h"
#include "quantity.h"

static const char check_description[] =
    "Loads and validates FILE as the daemon would (every section is checked) and prints the\n"
    "devices and flips NAME would get.  Exits non-zero with the error (file:line:column: key:\n"
    "what) when the config is bad.";

int check_main(int argc, char **argv)
{
    const char *config = NULL, *node = NULL;
    const struct flag flags[] = {
        {"config", "FAKEHW_CONFIG", FLAG_STRING, &config, "YAML config file (required)"},
        {"node", "NODE_NAME", FLAG_STRING, &node, "node name (default: the hostname)"},
    };
    const struct flags_program program = {"fakehw check", "--config FILE [--node NAME]",
                                          check_description};
    int next;
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, &program, &next);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    if (next < argc || config == NULL)
        return flags_usage_error(&program, "usage: fakehw check --config FILE [--node NAME]");
    char hostname[256];
    if (node == NULL || *node == '\0') {
        if (default_node_name(hostname, sizeof(hostname)) < 0)
            return flags_usage_error(&program, "no --node given and the hostname is unknown");
        node = hostname;
    }
    struct error err;
    struct config cfg;
    if (config_load_file(config, node, &cfg, &err) < 0) {
        fprintf(stderr, "fakehw check: %s\n", err.msg);
        return 1;
    }
    printf("node %s: %zu devices from %s, UUID seed \"%s\"\n", node, cfg.ndevices, cfg.section,
           cfg.seed);
    printf("%-12s %-5s %-40s %-24s %-9s %-4s %-12s %-10s %-4s %-18s %-7s %s\n", "NAME", "INDEX",
           "UUID", "PRODUCT", "MEMORY", "CC", "PCI", "ROOT", "NUMA", "ATTACH", "VIRTUAL", "HEALTH");
    for (size_t i = 0; i < cfg.ndevices; i++) {
        const struct gpu_device *d = &cfg.devices[i];
        char mem[QUANTITY_STR_MAX];
        quantity_format_bytes(d->memory_bytes, mem, sizeof(mem));
        /* ATTACH: "-" for a plain device, else the delay in ms and the
         * scripted failure at start, as the config says them. */
        char attach[40] = "-";
        if (d->attach.attachable)
            snprintf(attach, sizeof(attach), "%" PRId64 "ms/fail-%s", d->attach.delay_ms,
                     fakehw_attach_failure_name(d->attach.failure));
        printf("%-12s %-5ld %-40s %-24s %-9s %-4s %-12s %-10s %-4ld %-18s %-7s %s%s%s\n", d->name,
               d->index, d->uuid, d->product_name, mem, d->compute_capability, d->pci_bus_id,
               d->pcie_root, d->numa_node, attach, d->virtual_gpu ? "true" : "false",
               d->healthy ? "healthy" : "unhealthy", d->health_reason[0] ? ": " : "",
               d->health_reason);
    }
    for (size_t i = 0; i < cfg.nflips; i++) {
        const struct flip *f = &cfg.flips[i];
        printf("flip: %s ->", f->device);
        if (f->has_state)
            printf(" %s", f->healthy ? "healthy" : "unhealthy");
        if (f->xid > 0)
            printf(" xid %ld", f->xid);
        printf(" after %" PRId64 "ms", f->after_ms);
        if (f->for_ms > 0)
            printf(" for %" PRId64 "ms", f->for_ms);
        if (f->reason[0])
            printf(" (%s)", f->reason);
        putchar('\n');
    }
    config_free(&cfg);
    return 0;
}

int profiles_main(int argc, char **argv)
{
    if (argc > 1) {
        if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
            printf("Usage: fakehw profiles\n\nLists the built-in GPU profiles a config can name "
                   "with `profile:`.\n");
            return 0;
        }
        fprintf(stderr, "fakehw profiles: unexpected argument \"%s\"\n", argv[1]);
        return EXIT_USAGE;
    }
    printf("%-16s %-24s %-14s %-7s %-10s %s\n", "PROFILE", "PRODUCT NAME", "ARCHITECTURE", "BRAND",
           "MEMORY", "COMPUTE CAPABILITY");
    for (size_t i = 0; i < catalogue_size(); i++) {
        const struct gpu_profile *p = catalogue_at(i);
        char mem[QUANTITY_STR_MAX];
        quantity_format_bytes(p->memory_mib * 1024 * 1024, mem, sizeof(mem));
        printf("%-16s %-24s %-14s %-7s %-10s %s\n", p->name, p->product_name, p->architecture,
               p->brand, mem, p->compute_capability);
    }
    return 0;
}
