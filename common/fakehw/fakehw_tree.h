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
 *   <root>/devices/<name>/        one directory per device, e.g. gpu-0, holding
 *                                 one file per attribute of
 *                                 FAKEHW_DEVICE_ATTRIBUTES below, in its order
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
 *   index 0               of FAKEHW_DEVICE_ATTRIBUTES
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
#include <stddef.h>
#include <stdint.h>

#define FAKEHW_DEFAULT_ROOT "/var/run/fakehw"

#define FAKEHW_FILE_NODE       "node"
#define FAKEHW_FILE_GENERATION "generation"
#define FAKEHW_FILE_SNAPSHOT   "snapshot"
#define FAKEHW_DIR_DEVICES     "devices"

/* How readers check an attribute's text and store it (fakehw_tree_read.c). */
enum fakehw_attr_kind {
    FAKEHW_KIND_LABEL,          /* DNS label (the name file) */
    FAKEHW_KIND_TEXT,           /* printable, non-empty */
    FAKEHW_KIND_TEXT_OPT,       /* printable, may be empty */
    FAKEHW_KIND_UUID,           /* non-empty, no blanks or commas (lists are comma-separated) */
    FAKEHW_KIND_COUNT,          /* long >= 0 */
    FAKEHW_KIND_NUMA,           /* long >= -1 */
    FAKEHW_KIND_BYTES,          /* uint64_t */
    FAKEHW_KIND_PCI,            /* PCI bus id */
    FAKEHW_KIND_CC,             /* compute capability or empty */
    FAKEHW_KIND_PATH_OPT,       /* absolute path or empty */
    FAKEHW_KIND_HEALTH,         /* bool healthy */
    FAKEHW_KIND_UNIX_TIME,      /* int64_t >= 0 */
    FAKEHW_KIND_MILLIS,         /* int64_t >= 0 */
    FAKEHW_KIND_ATTACH,         /* enum fakehw_attach, by name */
    FAKEHW_KIND_ATTACH_FAILURE, /* enum fakehw_attach_failure, by name */
    FAKEHW_KIND_BOOL,           /* "true" or "false" */
    FAKEHW_KIND_LABEL_OPT,      /* DNS label or empty (parent) */
    FAKEHW_KIND_MIG_MODE,       /* "off", "dynamic", "static" or empty */
    FAKEHW_KIND_PLACEMENT,      /* "START:SIZE" within 8 memory slices, or empty: long[2] */
    FAKEHW_KIND_SHARING,        /* "DEFAULT MIN STEP" bytes, min <= default, step > 0, or empty:
                                   uint64_t[3] */
    FAKEHW_KINDS                /* the number of kinds, for tables indexed by kind */
};

/* The kinds stored as text in a char array of struct fakehw_device. */
#define FAKEHW_KIND_IS_TEXT(k)                                                                     \
    ((k) == FAKEHW_KIND_LABEL || (k) == FAKEHW_KIND_TEXT || (k) == FAKEHW_KIND_TEXT_OPT ||         \
     (k) == FAKEHW_KIND_UUID || (k) == FAKEHW_KIND_PCI || (k) == FAKEHW_KIND_CC ||                 \
     (k) == FAKEHW_KIND_PATH_OPT || (k) == FAKEHW_KIND_LABEL_OPT || (k) == FAKEHW_KIND_MIG_MODE)

/* The device attributes: one row each, in tree order (the order of a
 * device's lines in snapshot).  This table is the one list of them: the
 * fakehw writer (fakehw/inventory.c: files, snapshot, reload change check),
 * the tree reader (fakehw_tree_read.c) and the plugin's published attributes
 * (driver/device/device_attributes.c) all expand it.  Adding an attribute is
 * a row here, its field in struct fakehw_device, and its value source in
 * fakehw (render_config_attr or render_attr_locked: -Wswitch names it).
 *
 *   X(ID, FILE, KIND, FIELD, SINCE, SLICE)
 *   ID     FAKEHW_ATTR_ID_<ID>; code names the file as FAKEHW_ATTR(<ID>)
 *   FILE   the file in the device directory, and its key in snapshot
 *   KIND   FAKEHW_KIND_<KIND>: how readers check and store the value
 *   FIELD  the member of struct fakehw_device it is read into
 *   SINCE  FIRST: every tree has it; LATER: newer than the first tree, so
 *          it may be absent (in a directory and in snapshot) and reads as
 *          zero ("", "none", "never", "false", 0)
 *   SLICE  how the plugin publishes it as a ResourceSlice device attribute:
 *          UNPUBLISHED, or PUBLISHED(TYPE, RULE, "name"[, "alias"]) with
 *          TYPE STRING | INT | VERSION (text as a semantic version) and
 *          RULE ALWAYS | NONEMPTY (left out when "") | NONNEG (left out
 *          when < 0); an alias publishes the value under a second name.
 *
 * Every file is text; the values:
 *   name            the directory name, a DNS label
 *   index           position on the node, 0..
 *   uuid            GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (MIG-... on a partition)
 *   memory          bytes
 *   computeCapability "9.0"; driverVersion "550.127.05"; cudaDriverVersion "12.4"
 *   pciBusID "0000:18:00.0"; pcieRoot "pci0000:17"; numaNode -1 when none
 *   minor           the N of the char device node fakegpuN
 *   devicePath      host path of the char device node, "" when fakehw made none
 *   health          "healthy" | "unhealthy" (read); write "STATE" or
 *                   "STATE REASON" to flip; anything else fails with EINVAL
 *   healthReason    reason text of the last flip (empty when healthy unless
 *                   a reason was given with the flip)
 *   healthSince     Unix seconds of the last change of health or xid
 *   attach          attachable devices (fakehw_attach.h): "none" (needs no
 *                   attach) | "detached" | "attaching" | "attached" |
 *                   "failed"; write "attach", "detach" or "fail next|always|never"
 *   attachFailure   the scripted failure: "never" | "next" | "always"
 *   attachDelayMs   how long the next attach takes, in milliseconds
 *   virtual         "true" for a virtual GPU, which needs no node
 *                   preparation (the plugin publishes it with
 *                   skipNodeOperations), else "false"
 *   migMode         GPUs: "off", "dynamic" or "static"; "" on a partition
 *   parent          partitions: the device name of the GPU; "" on a GPU
 *   migProfile      partitions: the MIG profile, "3g.40gb"; "" on a GPU
 *   migPlacement    partitions: "START:SIZE", the memory slices START ..
 *                   START+SIZE-1 of the parent (of 8); "" on a GPU
 *   memorySharing   "DEFAULT MIN STEP" in bytes when several claims may
 *                   share the GPU by memory (consumable capacity); ""
 *   migProfileId    partitions: the GPU instance profile ID (9 for 3g.40gb);
 *                   0 on a GPU
 *   multiprocessors, copyEngines, decoders, encoders, jpegEngines, ofaEngines
 *                   partitions: the engines of the instance; all 0 on a GPU
 *                   and on a model whose engines are not known
 *   xid             the XID the device reported last (an NVIDIA driver error
 *                   code, 1..FAKEHW_XID_MAX), 0 when none or cleared; write
 *                   "CODE" to report one, "0" to clear it; a partition's is
 *                   its own (a GPU's XID is not its partitions')
 *   vfio            "true" for a GPU bound to vfio-pci for passthrough (the
 *                   config key `vfio`), else "false"
 *   iommuGroup      the IOMMU group of the GPU's PCI function (its index;
 *                   a partition has its GPU's)
 *   vfioDevicePath  host path of the group's VFIO node <dev-dir>/vfio/<group>
 *                   on a vfio GPU, "" otherwise or when fakehw made no nodes;
 *                   the container node /dev/vfio/vfio is <dev-dir>/vfio/vfio
 *   pciDeviceId     the PCI device ID, "0x2330" ("" without a catalogue profile)
 *   pciDeviceName   the PCI ID database's name of it, "GH100 [H100 SXM5 80GB]"
 *                   ("" likewise) */
#define FAKEHW_DEVICE_ATTRIBUTES(X)                                                                \
    X(NAME, "name", LABEL, name, FIRST, UNPUBLISHED)                                               \
    X(INDEX, "index", COUNT, index, FIRST, PUBLISHED(INT, ALWAYS, "index"))                        \
    X(UUID, "uuid", UUID, uuid, FIRST, PUBLISHED(STRING, ALWAYS, "uuid"))                          \
    X(PRODUCT_NAME, "productName", TEXT, product_name, FIRST,                                      \
      PUBLISHED(STRING, ALWAYS, "productName"))                                                    \
    X(ARCHITECTURE, "architecture", TEXT_OPT, architecture, FIRST,                                 \
      PUBLISHED(STRING, NONEMPTY, "architecture"))                                                 \
    X(BRAND, "brand", TEXT_OPT, brand, FIRST, PUBLISHED(STRING, NONEMPTY, "brand"))                \
    X(MEMORY, "memory", BYTES, memory_bytes, FIRST, UNPUBLISHED) /* capacity, not an attribute */  \
    X(COMPUTE_CAPABILITY, "computeCapability", CC, compute_capability, FIRST,                      \
      PUBLISHED(VERSION, NONEMPTY, "cudaComputeCapability"))                                       \
    X(DRIVER_VERSION, "driverVersion", TEXT, driver_version, FIRST,                                \
      PUBLISHED(VERSION, ALWAYS, "driverVersion"))                                                 \
    X(CUDA_DRIVER_VER, "cudaDriverVersion", TEXT_OPT, cuda_driver_version, FIRST,                  \
      PUBLISHED(VERSION, NONEMPTY, "cudaDriverVersion"))                                           \
    X(PCI_BUS_ID, "pciBusID", PCI, pci_bus_id, FIRST,                                              \
      PUBLISHED(STRING, ALWAYS, "resource.kubernetes.io/pciBusID"))                                \
    X(PCIE_ROOT, "pcieRoot", TEXT_OPT, pcie_root, FIRST,                                           \
      PUBLISHED(STRING, NONEMPTY, "resource.kubernetes.io/pcieRoot"))                              \
    X(NUMA_NODE, "numaNode", NUMA, numa_node, FIRST,                                               \
      PUBLISHED(INT, NONNEG, "numaNode", "resource.kubernetes.io/numaNode"))                       \
    X(MINOR, "minor", COUNT, minor, FIRST, UNPUBLISHED)                                            \
    X(DEVICE_PATH, "devicePath", PATH_OPT, device_path, FIRST, UNPUBLISHED)                        \
    X(HEALTH, "health", HEALTH, healthy, FIRST, UNPUBLISHED) /* a taint, not an attribute */       \
    X(HEALTH_REASON, "healthReason", TEXT_OPT, health_reason, FIRST, UNPUBLISHED)                  \
    X(HEALTH_SINCE, "healthSince", UNIX_TIME, health_since, FIRST, UNPUBLISHED)                    \
    X(ATTACH, "attach", ATTACH, attach, LATER, UNPUBLISHED)                                        \
    X(ATTACH_FAILURE, "attachFailure", ATTACH_FAILURE, attach_failure, LATER, UNPUBLISHED)         \
    X(ATTACH_DELAY_MS, "attachDelayMs", MILLIS, attach_delay_ms, LATER, UNPUBLISHED)               \
    X(VIRTUAL, "virtual", BOOL, virtual_gpu, LATER, UNPUBLISHED)                                   \
    X(MIG_MODE, "migMode", MIG_MODE, mig_mode, LATER, UNPUBLISHED)                                 \
    X(PARENT, "parent", LABEL_OPT, parent, LATER, UNPUBLISHED)                                     \
    X(MIG_PROFILE, "migProfile", TEXT_OPT, mig_profile, LATER, UNPUBLISHED)                        \
    X(MIG_PLACEMENT, "migPlacement", PLACEMENT, mig_placement, LATER, UNPUBLISHED)                 \
    X(MEMORY_SHARING, "memorySharing", SHARING, memory_sharing, LATER, UNPUBLISHED)                \
    X(MIG_PROFILE_ID, "migProfileId", COUNT, mig_profile_id, LATER, UNPUBLISHED)                   \
    X(MULTIPROCESSORS, "multiprocessors", COUNT, multiprocessors, LATER, UNPUBLISHED)              \
    X(COPY_ENGINES, "copyEngines", COUNT, copy_engines, LATER, UNPUBLISHED)                        \
    X(DECODERS, "decoders", COUNT, decoders, LATER, UNPUBLISHED)                                   \
    X(ENCODERS, "encoders", COUNT, encoders, LATER, UNPUBLISHED)                                   \
    X(JPEG_ENGINES, "jpegEngines", COUNT, jpeg_engines, LATER, UNPUBLISHED)                        \
    X(OFA_ENGINES, "ofaEngines", COUNT, ofa_engines, LATER, UNPUBLISHED)                           \
    X(XID, "xid", COUNT, xid, LATER, UNPUBLISHED) /* a taint, not an attribute */                  \
    X(VFIO, "vfio", BOOL, vfio, LATER, UNPUBLISHED)                                                \
    X(IOMMU_GROUP, "iommuGroup", COUNT, iommu_group, LATER, UNPUBLISHED)                           \
    X(VFIO_DEVICE_PATH, "vfioDevicePath", PATH_OPT, vfio_device_path, LATER, UNPUBLISHED)          \
    X(PCI_DEVICE_ID, "pciDeviceId", TEXT_OPT, pci_device_id, LATER, UNPUBLISHED)                   \
    X(PCI_DEVICE_NAME, "pciDeviceName", TEXT_OPT, pci_device_name, LATER, UNPUBLISHED)

#define FAKEHW_ATTR_ID_ENUM_(id, file, kind, field, since, slice) FAKEHW_ATTR_ID_##id,
enum fakehw_attr_id { FAKEHW_DEVICE_ATTRIBUTES(FAKEHW_ATTR_ID_ENUM_) FAKEHW_ATTR_COUNT };
#undef FAKEHW_ATTR_ID_ENUM_

/* One row of the table as data. */
struct fakehw_attr {
    const char *file;
    enum fakehw_attr_kind kind;
    size_t offset; /* of FIELD in struct fakehw_device */
    size_t size;   /* of FIELD for text kinds, else 0 */
    bool optional; /* SINCE LATER */
};

/* The rows, indexed by enum fakehw_attr_id. */
extern const struct fakehw_attr fakehw_device_attributes[FAKEHW_ATTR_COUNT];

/* The file name of attribute ID, e.g. FAKEHW_ATTR(HEALTH) is "health". */
#define FAKEHW_ATTR(id) (fakehw_device_attributes[FAKEHW_ATTR_ID_##id].file)

#define FAKEHW_MIG_OFF     "off"
#define FAKEHW_MIG_DYNAMIC "dynamic"
#define FAKEHW_MIG_STATIC  "static"

/* The keys of snapshot that are not file names. */
#define FAKEHW_SNAPSHOT_DEVICE "device"
#define FAKEHW_SNAPSHOT_END    "end"

#define FAKEHW_HEALTHY   "healthy"
#define FAKEHW_UNHEALTHY "unhealthy"

/* XIDs are small numbers (NVIDIA's catalogue ends below 200); fakehw takes
 * 1..FAKEHW_XID_MAX, five digits, as a health reason names them. */
#define FAKEHW_XID_MAX 99999

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

/* Most devices on one node, GPUs and MIG partitions together: the one
 * limit of fakehw's config (per node section), of the tree reader (the
 * plugin, fakegpu-smi) and so of what the plugin publishes.  A config past
 * it is refused, and a hostile tree cannot make a reader hold more than
 * 4,096 device structs (about 8 MiB). */
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
    long mig_profile_id;        /* partitions: GPU instance profile ID */
    long multiprocessors, copy_engines, decoders, encoders, jpeg_engines, ofa_engines;
    long xid;                               /* the last XID reported, 0: none */
    bool vfio;                              /* bound to vfio-pci: passthrough */
    long iommu_group;                       /* the IOMMU group of its PCI function */
    char vfio_device_path[FAKEHW_PATH_MAX]; /* "" when not vfio or no node was made */
    char pci_device_id[16];                 /* "0x2330"; "" when not known */
    char pci_device_name[FAKEHW_TEXT_MAX];  /* "GH100 [H100 SXM5 80GB]"; "" likewise */
    /* Not files of the tree: when the plugin publishes a device under
     * another name (driver/device/personality.h), the tree's directory
     * names of the device and of its parent, for paths into the tree.
     * Empty when name and parent are the tree's. */
    char dir[FAKEHW_NAME_MAX];
    char parent_dir[FAKEHW_NAME_MAX];
};

#endif
