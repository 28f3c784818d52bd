// SPDX-License-Identifier: Apache-2.0
/* The fakehw tree: the contract between the fakehw FUSE daemon (which serves
 * it), the kubelet plugin and fakegpu-smi (which read it).  docs/fakehw.md
 * documents it for people; this header is the single place in code that names
 * the files.  The same layout on a plain directory must work for readers.
 *
 *   <root>/node                   node name the inventory was built for
 *   <root>/generation             change counter (decimal); bumps on every change
 *                                 to any device or to the device set; poll(2) on
 *                                 an open fd wakes when it moved past what that fd read
 *   <root>/snapshot               the whole inventory in one file (below)
 *   <root>/devices/<name>/        one directory per device, e.g. gpu-0
 *       name, index, uuid, productName, architecture, brand, memory (bytes),
 *       computeCapability, driverVersion, cudaDriverVersion, pciBusID,
 *       pcieRoot, numaNode, minor, devicePath (host path of the char device
 *       node, empty when fakehw made none),
 *       health         "healthy" | "unhealthy" (read); write "STATE" or
 *                      "STATE REASON" to flip; anything else fails with EINVAL
 *       healthReason   reason text of the last flip (empty when healthy unless
 *                      a reason was given with the flip)
 *       healthSince    Unix seconds of the last health change
 *       attach         attachable devices (fakehw_attach.h): "none" (needs no
 *                      attach) | "detached" | "attaching" | "attached" |
 *                      "failed"; write "attach", "detach" or "fail next|always|never"
 *       attachFailure  the scripted failure: "never" | "next" | "always"
 *       attachDelayMs  how long the next attach takes, in milliseconds
 *       virtual        "true" for a virtual GPU, which needs no node
 *                      preparation (the plugin publishes it with
 *                      skipNodeOperations), else "false"
 *       (attach, attachFailure and virtual are optional for readers: a tree
 *       without them, a plain directory or an older fakehw, reads as
 *       "none"/"never"/"false")
 *       migMode        GPUs: "off", "dynamic" or "static"; "" on a partition
 *       parent         partitions: the device name of the GPU; "" on a GPU
 *       migProfile     partitions: the MIG profile, "3g.40gb"; "" on a GPU
 *       migPlacement   partitions: "START:SIZE", the memory slices START ..
 *                      START+SIZE-1 of the parent (of 8); "" on a GPU
 *       memorySharing  "DEFAULT MIN STEP" in bytes when several claims may
 *                      share the GPU by memory (consumable capacity); ""
 *       (these five files may be absent, in a directory and in snapshot:
 *       they read as "", a GPU with MIG off that is not shared)
 *
 * A partition is a MIG instance (static mode), or in dynamic mode one
 * placement of a profile that may be allocated; it is a device directory of
 * its own (gpu-0-mig-3g40gb-4) after all GPUs in index order, with uuid
 * "MIG-...", its own memory, and the parent's minor, PCI placement and
 * devicePath.  Its health reads "unhealthy" while its parent is unhealthy
 * (reason "parent gpu-0 is unhealthy: <the parent's reason>").
 *
 * Every file but snapshot holds one line of text ending in "\n"; no value
 * ever holds a newline.
 *
 * snapshot (read-only, served by fakehw; absent on a plain directory) holds
 * every file above as of one generation: fakehw renders it when it is
 * opened, and every read of that open file serves the same text (open it
 * again for a newer one).  Its stat size is 0, like a /proc file: read to
 * EOF.  Opening it changes nothing (not the generation either).  Lines are
 * "KEY VALUE\n": the key runs to the first space, the value is the rest of
 * the line (it may hold spaces, may be empty) and is exactly the content of
 * the file of that name without its "\n":
 *
 *   generation 7
 *   node kind-worker
 *   device gpu-0          starts the block of device gpu-0: then one line for
 *   name gpu-0            each attribute file of the device, in the order
 *   index 0               listed above (name ... memorySharing)
 *   ...
 *   healthSince 1732252380
 *   device gpu-1
 *   ...
 *   end 2                 the number of device blocks; always the last line,
 *                         so a cut-short read is detected
 *
 * Devices come in index order.  Readers take it when it exists (one open for
 * the whole inventory, consistent under concurrent flips) and walk the files
 * otherwise (fakehw_tree_read.h). */
#ifndef FAKEHW_COMMON_FAKEHW_TREE_H
#define FAKEHW_COMMON_FAKEHW_TREE_H

#include <stdbool.h>
#include <stdint.h>

#define FAKEHW_DEFAULT_ROOT "/var/run/fakehw"

#define FAKEHW_FILE_NODE       "node"
#define FAKEHW_FILE_GENERATION "generation"
#define FAKEHW_FILE_SNAPSHOT   "snapshot"
#define FAKEHW_DIR_DEVICES     "devices"

#define FAKEHW_ATTR_NAME               "name"
#define FAKEHW_ATTR_INDEX              "index"
#define FAKEHW_ATTR_UUID               "uuid"
#define FAKEHW_ATTR_PRODUCT_NAME       "productName"
#define FAKEHW_ATTR_ARCHITECTURE       "architecture"
#define FAKEHW_ATTR_BRAND              "brand"
#define FAKEHW_ATTR_MEMORY             "memory"
#define FAKEHW_ATTR_COMPUTE_CAPABILITY "computeCapability"
#define FAKEHW_ATTR_DRIVER_VERSION     "driverVersion"
#define FAKEHW_ATTR_CUDA_DRIVER_VER    "cudaDriverVersion"
#define FAKEHW_ATTR_PCI_BUS_ID         "pciBusID"
#define FAKEHW_ATTR_PCIE_ROOT          "pcieRoot"
#define FAKEHW_ATTR_NUMA_NODE          "numaNode"
#define FAKEHW_ATTR_MINOR              "minor"
#define FAKEHW_ATTR_DEVICE_PATH        "devicePath"
#define FAKEHW_ATTR_HEALTH             "health"
#define FAKEHW_ATTR_HEALTH_REASON      "healthReason"
#define FAKEHW_ATTR_HEALTH_SINCE       "healthSince"
#define FAKEHW_ATTR_ATTACH             "attach"
#define FAKEHW_ATTR_ATTACH_FAILURE     "attachFailure"
#define FAKEHW_ATTR_ATTACH_DELAY_MS    "attachDelayMs"
#define FAKEHW_ATTR_VIRTUAL            "virtual"
#define FAKEHW_ATTR_MIG_MODE           "migMode"
#define FAKEHW_ATTR_PARENT             "parent"
#define FAKEHW_ATTR_MIG_PROFILE        "migProfile"
#define FAKEHW_ATTR_MIG_PLACEMENT      "migPlacement"
#define FAKEHW_ATTR_MEMORY_SHARING     "memorySharing"

#define FAKEHW_MIG_OFF     "off"
#define FAKEHW_MIG_DYNAMIC "dynamic"
#define FAKEHW_MIG_STATIC  "static"

/* The keys of snapshot that are not file names. */
#define FAKEHW_SNAPSHOT_DEVICE "device"
#define FAKEHW_SNAPSHOT_END    "end"

#define FAKEHW_HEALTHY   "healthy"
#define FAKEHW_UNHEALTHY "unhealthy"

/* Attach states and scripted failures of attachable devices; their names
 * are fakehw_attach.h's. */
enum fakehw_attach {
    FAKEHW_ATTACH_NONE = 0, /* the device needs no attach */
    FAKEHW_ATTACH_DETACHED,
    FAKEHW_ATTACH_ATTACHING,
    FAKEHW_ATTACH_ATTACHED,
    FAKEHW_ATTACH_FAILED,
};

enum fakehw_attach_failure {
    FAKEHW_ATTACH_FAIL_NEVER = 0,
    FAKEHW_ATTACH_FAIL_NEXT,   /* the next attach fails, later ones succeed */
    FAKEHW_ATTACH_FAIL_ALWAYS, /* every attach fails */
};

/* Field sizes: longer values are an error for the reader, not truncated. */
#define FAKEHW_NAME_MAX   64
#define FAKEHW_TEXT_MAX   128
#define FAKEHW_REASON_MAX 512 /* health reasons are short (XID texts); the kubelet cuts at 1024 */
/* FAKEHW_PATH_MAX sizes devicePath only (e.g. /var/run/fakehw-dev/fakegpu12);
 * build file paths with PATH_MAX. */
#define FAKEHW_PATH_MAX 256

/* Most devices a reader takes from one tree (fakehw's config allows 4,096
 * per node); more is refused, so a hostile tree cannot make a reader hold
 * more than 4,096 device structs (about 8 MiB). */
#define FAKEHW_TREE_MAX_DEVICES 4096

/* One device as read from <root>/devices/<name>/. */
struct fakehw_device {
    char name[FAKEHW_NAME_MAX]; /* directory name, a DNS label: gpu-0 */
    long index;
    char uuid[FAKEHW_TEXT_MAX]; /* GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx */
    char product_name[FAKEHW_TEXT_MAX];
    char architecture[FAKEHW_TEXT_MAX];
    char brand[FAKEHW_TEXT_MAX];
    uint64_t memory_bytes;
    char compute_capability[FAKEHW_TEXT_MAX];  /* "9.0" */
    char driver_version[FAKEHW_TEXT_MAX];      /* "550.127.05" */
    char cuda_driver_version[FAKEHW_TEXT_MAX]; /* "12.4" */
    char pci_bus_id[FAKEHW_TEXT_MAX];          /* "0000:18:00.0" */
    char pcie_root[FAKEHW_TEXT_MAX];           /* "pci0000:17" */
    long numa_node;
    long minor;
    char device_path[FAKEHW_PATH_MAX]; /* "" when no node was made */
    bool healthy;
    char health_reason[FAKEHW_REASON_MAX];
    int64_t health_since;                      /* Unix seconds */
    enum fakehw_attach attach;                 /* FAKEHW_ATTACH_NONE unless attachable */
    enum fakehw_attach_failure attach_failure; /* the scripted failure */
    int64_t attach_delay_ms;                   /* how long the next attach takes */
    bool virtual_gpu;                          /* needs no node preparation */
    char mig_mode[16]; /* "off" | "dynamic" | "static" on a GPU, "" on a partition */
    char parent[FAKEHW_NAME_MAX];
    char mig_profile[FAKEHW_NAME_MAX];
    long mig_placement[2];      /* start, size; both 0 on a GPU */
    uint64_t memory_sharing[3]; /* default, min, step in bytes; all 0: not shared */
};

#endif
