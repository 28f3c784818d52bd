// SPDX-License-Identifier: Apache-2.0
/* Unit tests for fakehw-podresources' output: the JSON shape and the table
 * (padding, rows per device, claims without devices, pods left out); and
 * what it says when the socket does not answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver/podresources/podresources_print.h"
#include "driver/podresources/podresources_reach.h"
#include "common/tests/as_nobody.h"
#include "common/tests/test_main.h"

static V1__CDIDevice cdi0 = {PROTOBUF_C_MESSAGE_INIT(&v1__cdidevice__descriptor), "k8s.d/gpu=a"};
static V1__CDIDevice cdi1 = {PROTOBUF_C_MESSAGE_INIT(&v1__cdidevice__descriptor), "d/meta=b"};
static V1__CDIDevice *cdis[] = {&cdi0, &cdi1};

static V1__ClaimResource res0 = {PROTOBUF_C_MESSAGE_INIT(&v1__claim_resource__descriptor),
                                 2,
                                 cdis,
                                 "d.example.com",
                                 "node-a",
                                 "gpu-0",
                                 ""};
static V1__ClaimResource res1 = {PROTOBUF_C_MESSAGE_INIT(&v1__claim_resource__descriptor),
                                 0,
                                 NULL,
                                 "d.example.com",
                                 "node-a",
                                 "gpu-12",
                                 "share-1"};
static V1__ClaimResource *resources[] = {&res0, &res1};

static V1__DynamicResource claim = {PROTOBUF_C_MESSAGE_INIT(&v1__dynamic_resource__descriptor),
                                    "c1", "ns", 2, resources};
static V1__DynamicResource empty = {PROTOBUF_C_MESSAGE_INIT(&v1__dynamic_resource__descriptor),
                                    "c2", "ns", 0, NULL};
static V1__DynamicResource *claims[] = {&claim, &empty};

static V1__ContainerResources with = {PROTOBUF_C_MESSAGE_INIT(&v1__container_resources__descriptor),
                                      "main",
                                      0,
                                      NULL,
                                      0,
                                      NULL,
                                      0,
                                      NULL,
                                      2,
                                      claims};
static V1__ContainerResources without = {
    PROTOBUF_C_MESSAGE_INIT(&v1__container_resources__descriptor),
    "side",
    0,
    NULL,
    0,
    NULL,
    0,
    NULL,
    0,
    NULL};
static V1__ContainerResources *ctrs[] = {&with, &without};
static V1__ContainerResources *plain_ctrs[] = {&without};

static V1__PodResources pod = {
    PROTOBUF_C_MESSAGE_INIT(&v1__pod_resources__descriptor), "p1", "ns", 2, ctrs, 0, NULL, 0, NULL};
static V1__PodResources plain = {PROTOBUF_C_MESSAGE_INIT(&v1__pod_resources__descriptor),
                                 "web",
                                 "ns2",
                                 1,
                                 plain_ctrs,
                                 0,
                                 NULL,
                                 0,
                                 NULL};

static char *render(V1__PodResources **pods, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(podres_print_text(f, pods, n), 0);
    fclose(f);
    return buf;
}

static void test_table(void **state)
{
    (void)state;
    V1__PodResources *pods[] = {&plain, &pod};
    char *text = render(pods, 2);
    assert_string_equal(
        text,
        "NAMESPACE  POD  CONTAINER  CLAIM  DRIVER         POOL    DEVICE  CDI-DEVICES\n"
        "ns         p1   main       c1     d.example.com  node-a  gpu-0   k8s.d/gpu=a,d/meta=b\n"
        "ns         p1   main       c1     d.example.com  node-a  gpu-12  -\n"
        "ns         p1   main       c2     -              -       -       -\n");
    free(text);
    V1__PodResources *none[] = {&plain};
    text = render(none, 1);
    assert_string_equal(text, "(no DRA devices)\n");
    free(text);
}

static void test_json(void **state)
{
    (void)state;
    V1__PodResources *pods[] = {&pod, &plain};
    json_t *doc = podres_json(pods, 2);
    assert_non_null(doc);
    char *got = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(
        got, "{\"pods\":[{\"containers\":[{\"claims\":[{\"devices\":[{\"cdiDevices\":[\"k8s.d/"
             "gpu=a\",\"d/meta=b\"],\"device\":\"gpu-0\",\"driver\":\"d.example.com\",\"pool\":"
             "\"node-a\"},{\"cdiDevices\":[],\"device\":\"gpu-12\",\"driver\":\"d.example.com\","
             "\"pool\":\"node-a\",\"shareID\":\"share-1\"}],\"name\":\"c1\",\"namespace\":\"ns\"},"
             "{\"devices\":[],\"name\":\"c2\",\"namespace\":\"ns\"}],\"name\":\"main\"}],\"name\":"
             "\"p1\",\"namespace\":\"ns\"}]}");
    free(got);
    json_decref(doc);
}

/* A unix socket bound at path; listening when listen_too.  Its fd. */
static int bound_socket(const char *path, bool listen_too)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    if (listen_too)
        assert_int_equal(listen(fd, 1), 0);
    return fd;
}

static void assert_explained(const char *path, const char *what)
{
    char buf[1024];
    assert_true(podres_explain_unreachable(path, buf, sizeof(buf)));
    char want[512];
    snprintf(want, sizeof(want), "cannot reach the kubelet's PodResources API at %s: %s", path,
             what);
    if (strncmp(buf, want, strlen(want)) != 0)
        fail_msg("got \"%s\", want it to start with \"%s\"", buf, want);
}

static bool explain_as_nobody(void *path, char *buf, size_t size)
{
    return podres_explain_unreachable(path, buf, size);
}

static void test_unreachable(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_podres.XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/kubelet.sock", dir);
    char buf[1024];

    assert_explained(path, "there is no such socket. Is the kubelet running on this node, and is "
                           "its PodResources API enabled? --socket (or PODRESOURCES_SOCKET) names "
                           "another socket.");
    assert_explained(dir, "that is not a socket.");
    /* A socket file nobody listens on: what a kubelet that is gone leaves. */
    close(bound_socket(path, false));
    assert_explained(path, "nothing listens there (a socket left by a kubelet that is gone?). Is "
                           "the kubelet running");
    unlink(path);
    /* A socket that answers: the call failed for another reason. */
    int fd = bound_socket(path, true);
    assert_false(podres_explain_unreachable(path, buf, sizeof(buf)));
    close(fd);

    /* Not root's: a child that became nobody cannot enter the directory. */
    if (geteuid() == 0) {
        assert_int_equal(chmod(dir, 0700), 0);
        char got[1024];
        assert_true(run_as_nobody(explain_as_nobody, path, got, sizeof(got)));
        assert_non_null(strstr(got, ": permission denied: the kubelet's socket and its directory "
                                    "belong to root: run as root"));
    }
    unlink(path);
    rmdir(dir);
}

TEST_MAIN("driver/podresources", test_table, test_json, test_unreachable)
