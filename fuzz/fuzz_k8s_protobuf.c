// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: a protobuf request body as the API server stand-in
 * reads it (the "k8s\0" envelope and any message of a served kind, into
 * JSON).  What it reads must encode back and read again: the answer path
 * handles every object the request path lets in. */
#include <stdint.h>
#include <stdlib.h>

#include "k8s_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct error err;
    char *json = codec_body_to_json(data, size, &err);
    if (json == NULL)
        return 0;
    struct pb_bytes body = {0};
    if (codec_json_to_body(json, NULL, &body, &err) < 0)
        abort(); /* read as JSON, but cannot be written back */
    char *again = codec_body_to_json(body.p, body.len, &err);
    if (again == NULL)
        abort(); /* what the stand-in writes, it cannot read */
    free(again);
    pb_bytes_free(&body);
    free(json);
    return 0;
}
