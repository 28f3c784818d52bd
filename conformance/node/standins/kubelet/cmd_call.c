// SPDX-License-Identifier: Apache-2.0
/* kubelet-standin call: one unary call with raw bytes, for protocol tests
 * (unknown methods, undecodable requests).  Prints
 *   status=<CODE>
 *   message=<status message>
 *   response=<hex of the answer>
 * and exits 0 when the status is OK, 3 otherwise. */
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "cleanup.h"
#include "grpc_client.h"
#include "standin.h"
#include "xalloc.h"

static int unhex(const char *hex, uint8_t **out, size_t *len)
{
    size_t n = strlen(hex);
    if (n % 2)
        return -1;
    cleanup_free uint8_t *bytes = xmalloc(n / 2 + 1);
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", hex[2 * i]) ||
            !strchr("0123456789abcdefABCDEF", hex[2 * i + 1]))
            return -1;
        bytes[i] = (uint8_t)v;
    }
    *len = n / 2;
    *out = steal_pointer(&bytes);
    return 0;
}

static const struct flags_program program = {
    "kubelet-standin call", "--endpoint SOCK --method PATH [--hex HEX]",
    "Sends one request of raw bytes and prints status, message and the answer\n"
    "in hex."};

int cmd_call(int argc, char **argv)
{
    const char *endpoint = NULL, *method = NULL, *hex = "", *timeout_s = "5";
    const struct flag flags[] = {
        {"endpoint", "KUBELET_STANDIN_ENDPOINT", FLAG_STRING, &endpoint, "socket (required)"},
        {"method", "KUBELET_STANDIN_METHOD", FLAG_STRING, &method,
         "full method path, /package.Service/Method (required)"},
        {"hex", "KUBELET_STANDIN_HEX", FLAG_STRING, &hex, "request bytes in hex (default empty)"},
        {"timeout", "KUBELET_STANDIN_TIMEOUT", FLAG_STRING, &timeout_s, "deadline in seconds"},
    };
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, &program, NULL);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    double timeout;
    cleanup_free uint8_t *req = NULL;
    size_t len = 0;
    const char *bad = endpoint == NULL || method == NULL ? "--endpoint and --method are required"
                      : parse_seconds(timeout_s, &timeout) < 0 ? "--timeout wants seconds"
                      : unhex(hex, &req, &len) < 0 ? "--hex is not an even-length hex string"
                                                   : NULL;
    if (bad)
        return flags_usage_error(&program, "%s", bad);
    struct error err;
    __attribute__((cleanup(rpc_answer_free))) struct rpc_answer a = {0};
    cleanup_rpc_client struct rpc_client *c = rpc_client_new(endpoint, &err);
    if (c == NULL || rpc_client_call(c, method, req, len, timeout, &a, &err) < 0) {
        fprintf(stderr, "kubelet-standin call: %s\n", err.msg);
        return EXIT_RPC;
    }
    printf("status=%s\nmessage=", wire_status_name(a.status));
    print_oneline(stdout, a.details ? a.details : "");
    printf("\nresponse=");
    for (size_t i = 0; i < a.len; i++)
        printf("%02x", a.data[i]);
    putchar('\n');
    fflush(stdout);
    return a.status == GRPC_STATUS_OK ? EXIT_OK : EXIT_RPC;
}
