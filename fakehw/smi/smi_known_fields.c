// SPDX-License-Identifier: Apache-2.0
/* nvidia-smi's --query-gpu names: see smi_known_fields.h. */
#include "smi_known_fields.h"

#include <stdio.h>
#include <string.h>

/* Every name and alias nvidia-smi's --help-query-gpu lists (driver 535 and
 * later), but the ecc.errors.* family, which is built below. */
static const char *const known[] = {
    "timestamp",
    "driver_version",
    "vgpu_driver_capability.heterogenous_multivGPU",
    "count",
    "name",
    "gpu_name",
    "serial",
    "gpu_serial",
    "uuid",
    "gpu_uuid",
    "pci.bus_id",
    "gpu_bus_id",
    "pci.domain",
    "pci.bus",
    "pci.device",
    "pci.device_id",
    "pci.sub_device_id",
    "vgpu_device_capability.fractional_multiVgpu",
    "vgpu_device_capability.heterogeneous_timeSlice_profile",
    "vgpu_device_capability.heterogeneous_timeSlice_sizes",
    "pcie.link.gen.current",
    "pcie.link.gen.gpucurrent",
    "pcie.link.gen.max",
    "pcie.link.gen.gpumax",
    "pcie.link.gen.hostmax",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "index",
    "display_mode",
    "display_active",
    "persistence_mode",
    "addressing_mode",
    "accounting.mode",
    "accounting.buffer_size",
    "driver_model.current",
    "driver_model.pending",
    "vbios_version",
    "inforom.img",
    "inforom.image",
    "inforom.oem",
    "inforom.ecc",
    "inforom.pwr",
    "inforom.power",
    "reset_status.reset_required",
    "reset_status.drain_and_reset_recommended",
    "gom.current",
    "gpu_operation_mode.current",
    "gom.pending",
    "gpu_operation_mode.pending",
    "fan.speed",
    "pstate",
    "clocks_event_reasons.supported",
    "clocks_throttle_reasons.supported",
    "clocks_event_reasons.active",
    "clocks_throttle_reasons.active",
    "clocks_event_reasons.gpu_idle",
    "clocks_throttle_reasons.gpu_idle",
    "clocks_event_reasons.applications_clocks_setting",
    "clocks_throttle_reasons.applications_clocks_setting",
    "clocks_event_reasons.sw_power_cap",
    "clocks_throttle_reasons.sw_power_cap",
    "clocks_event_reasons.hw_slowdown",
    "clocks_throttle_reasons.hw_slowdown",
    "clocks_event_reasons.hw_thermal_slowdown",
    "clocks_throttle_reasons.hw_thermal_slowdown",
    "clocks_event_reasons.hw_power_brake_slowdown",
    "clocks_throttle_reasons.hw_power_brake_slowdown",
    "clocks_event_reasons.sw_thermal_slowdown",
    "clocks_throttle_reasons.sw_thermal_slowdown",
    "clocks_event_reasons.sync_boost",
    "clocks_throttle_reasons.sync_boost",
    "memory.total",
    "memory.reserved",
    "memory.used",
    "memory.free",
    "compute_mode",
    "compute_cap",
    "utilization.gpu",
    "utilization.memory",
    "utilization.encoder",
    "utilization.decoder",
    "utilization.jpeg",
    "utilization.ofa",
    "encoder.stats.sessionCount",
    "encoder.stats.averageFps",
    "encoder.stats.averageLatency",
    "ecc.mode.current",
    "ecc.mode.pending",
    "retired_pages.single_bit_ecc.count",
    "retired_pages.sbe",
    "retired_pages.double_bit.count",
    "retired_pages.dbe",
    "retired_pages.pending",
    "temperature.gpu",
    "temperature.gpu.tlimit",
    "temperature.memory",
    "power.management",
    "power.draw",
    "power.draw.average",
    "power.draw.instant",
    "power.limit",
    "enforced.power.limit",
    "power.default_limit",
    "power.min_limit",
    "power.max_limit",
    "clocks.current.graphics",
    "clocks.gr",
    "clocks.current.sm",
    "clocks.sm",
    "clocks.current.memory",
    "clocks.mem",
    "clocks.current.video",
    "clocks.video",
    "clocks.applications.graphics",
    "clocks.applications.gr",
    "clocks.applications.memory",
    "clocks.applications.mem",
    "clocks.default_applications.graphics",
    "clocks.default_applications.gr",
    "clocks.default_applications.memory",
    "clocks.default_applications.mem",
    "clocks.max.graphics",
    "clocks.max.gr",
    "clocks.max.sm",
    "clocks.max.memory",
    "clocks.max.mem",
    "mig.mode.current",
    "mig.mode.pending",
    "gsp.mode.current",
    "gsp.mode.default",
    "protected_memory.total",
    "protected_memory.used",
    "protected_memory.free",
    "fabric.state",
    "fabric.status",
};

/* ecc.errors.<corrected|uncorrected>.<volatile|aggregate>.<location> */
static const char *const ecc_kinds[] = {"corrected", "uncorrected"};
static const char *const ecc_spans[] = {"volatile", "aggregate"};
static const char *const ecc_locations[] = {
    "device_memory",  "dram", "register_file", "l1_cache", "l2_cache",
    "texture_memory", "cbu",  "sram",          "total",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool is(const char *name, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(name, word, len) == 0;
}

bool smi_known_field(const char *name, size_t len)
{
    for (size_t i = 0; i < COUNT(known); i++)
        if (is(name, len, known[i]))
            return true;
    for (size_t k = 0; k < COUNT(ecc_kinds); k++)
        for (size_t s = 0; s < COUNT(ecc_spans); s++)
            for (size_t l = 0; l < COUNT(ecc_locations); l++) {
                char full[96];
                snprintf(full, sizeof(full), "ecc.errors.%s.%s.%s", ecc_kinds[k], ecc_spans[s],
                         ecc_locations[l]);
                if (is(name, len, full))
                    return true;
            }
    return false;
}
