// SPDX-License-Identifier: Apache-2.0
/* The CDI specs of a prepared claim (cdiVersion 0.5.0: device names start
 * with the claim UID, which may start with a digit; no annotations).
 *
 * Claim spec, kind "k8s.<driver>/gpu" (vendor k8s.<driver>, class gpu, as
 * the example driver does), one CDI device per allocation result of the
 * driver, named "<uid>-<device>" ("<uid>-<device>_<k>" for the k-th repeat
 * of a device, k >= 1: '_' cannot occur in a device name, so names never
 * clash).  The UID in every name means a runtime's cached spec is never
 * mistaken for a newer claim's.
 *
 *   containerEdits (once per container that gets any device of the claim):
 *     env    DRA_RESOURCE_DRIVER_NAME, DRA_CLAIM_NAMESPACE, DRA_CLAIM_NAME,
 *            DRA_CLAIM_UID, FAKEHW_ROOT=<fakehw host root>,
 *            FAKEHW_VISIBLE_DEVICES=<UUIDs of all the claim's devices, comma-separated>
 *     mounts <fakegpu-smi> -> /usr/bin/fakegpu-smi (ro, bind), unless not configured
 *   devices[i].containerEdits (I = the device's fakehw index):
 *     env    FAKEHW_DEVICE_<I>_UUID, _NAME, _REQUEST (as allocated, "req/sub"),
 *            _SHARE_ID (when allocated with one), _SHARING_STRATEGY, and
 *            _TIMESLICE_INTERVAL or _PARTITION_COUNT; the same sharing values
 *            without the device prefix (FAKEHW_SHARING_STRATEGY, ...); then the
 *            config's env map, sorted by name
 *     deviceNodes /dev/fakegpu<minor> from hostPath devicePath (none when empty)
 *     mounts <fakehw host root>/devices/<name> at the same path (ro, bind)
 *
 *   A VFIO device (the nvidia personality, a GPU fakehw bound to vfio-pci)
 *   gets, as NVIDIA's driver gives it (vfio-cdi.go), no fakegpu node, tree
 *   directory or smi: its env above and deviceNodes /dev/vfio/<iommu group>
 *   from hostPath vfioDevicePath; the claim's edits add
 *   NVIDIA_VISIBLE_DEVICES=void and, with iommu.enableAPIDevice,
 *   /dev/vfio/vfio; fakegpu-smi (and nvidia-smi) only when the claim has a
 *   device that is not passed through.
 *
 * Metadata spec (KEP-5304), kind "<driver>/metadata", one device
 * "<uid>_<request>" that bind-mounts the request's metadata file read-only. */
#ifndef FAKEHW_PREPARE_CDI_SPEC_H
#define FAKEHW_PREPARE_CDI_SPEC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fakehw_tree.h"
#include "gpu_config.h"
#include "nvidia_config.h"

#define CDI_CLAIM_CLASS     "gpu"
#define CDI_METADATA_CLASS  "metadata"
#define CDI_SMI_PATH        "/usr/bin/fakegpu-smi"
#define CDI_NVIDIA_SMI_PATH "/usr/bin/nvidia-smi" /* the same binary, in the nvidia personality */
#define CDI_VFIO_DIR        "/dev/vfio"
#define CDI_VFIO_CONTROL    "vfio" /* /dev/vfio/vfio, the VFIO container node */
#define CDI_NAME_MAX        160    /* kinds, device names and qualified ids */
#define CDI_QUALIFIED_MAX   (2 * CDI_NAME_MAX)

struct cdi_claim_device {
    const struct fakehw_device *dev;
    const char *request;                /* "req" or "req/sub" */
    const char *share_id;               /* NULL when none */
    const struct gpu_config *config;    /* the fakehw personality's */
    const struct nvidia_config *nvidia; /* the nvidia personality's, else NULL */
    uint64_t memory;                    /* consumed memory of a share; 0 = the whole device */
    char cdi_name[CDI_NAME_MAX];        /* filled by cdi_claim_spec */
};

struct cdi_claim {
    const char *driver, *ns, *name, *uid;
    const char *fakehw_host_root; /* the tree on the host, mounted at the same path */
    const char *fakegpu_smi;      /* host path; NULL or "" = not mounted */
    bool nvidia_smi;              /* mount it as nvidia-smi too (the nvidia personality) */
    struct cdi_claim_device *devices;
    size_t n_devices; /* at least 1 */
};

/* "k8s.<driver>/gpu" and "<driver>/metadata", checked against the CDI rules:
 * -1 with err when the driver name does not make a valid kind. */
int cdi_claim_kind(const char *driver, char *buf, size_t size, struct error *err);
int cdi_metadata_kind(const char *driver, char *buf, size_t size, struct error *err);

/* Builds the claim spec and fills devices[i].cdi_name.  NULL with err. */
json_t *cdi_claim_spec(struct cdi_claim *c, struct error *err);

/* Builds the metadata spec of one request; its device is "<uid>_<request>". */
json_t *cdi_metadata_spec(const char *driver, const char *uid, const char *request,
                          const char *host_path, const char *container_path, struct error *err);

/* The text of a spec as written to disk (indented JSON, "\n" at the end).
 * Caller frees.  NULL when out of memory. */
char *cdi_spec_text(const json_t *spec);

#endif
