// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the fakehw config parser (fakehw/config*.c), whole
 * path from YAML text to a resolved config, for a node the corpus's node
 * sections name. */
#include <stddef.h>
#include <stdint.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct config c;
    struct error err;
    if (config_load_string((const char *)data, size, "fuzz.yaml", "kind-worker", &c, &err) == 0)
        config_free(&c);
    return 0;
}
