// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the <root>/snapshot reader of common/fakehw/fakehw_tree_snapshot.c,
 * through fakehw_tree_list on a scratch root whose snapshot is the input. */
#include <stdint.h>
#include <stdlib.h>

#include "fakehw_tree_read.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *root;
    if (root == NULL)
        root = fuzz_scratch_dir("tree");
    fuzz_write_file(root, "snapshot", data, size);
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    if (fakehw_tree_list(root, &devs, &n, &err) == 0)
        free(devs);
    return 0;
}
