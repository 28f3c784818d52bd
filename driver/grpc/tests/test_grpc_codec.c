// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the gRPC layer's message code: method paths against the
 * .proto services, DRA request decoding and answer encoding (both versions),
 * the health message and its text cut, UTF-8 hygiene.  Expected bytes are
 * written by hand from the field numbers of the wire contract, so a wrong
 * number in a .proto file fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/grpc/dra_codec.h"
#include "driver/grpc/health_codec_test.h"
#include "driver/grpc/registration_service.h"
#include "driver/grpc/rpc_wire.h"
#include "utf8.h"
#include "proto/dra_health_v1.pb-c.h"
#include "proto/dra_health_v1alpha1.pb-c.h"
#include "proto/dra_v1.pb-c.h"
#include "proto/dra_v1beta1.pb-c.h"
#include "proto/pluginregistration.pb-c.h"
#include "common/tests/test_main.h"

/* "/" + service full name + "/" + method, from the generated descriptors. */
static void assert_path(const ProtobufCServiceDescriptor *svc, unsigned method, const char *want)
{
    char path[256];
    snprintf(path, sizeof(path), "/%s/%s", svc->name, svc->methods[method].name);
    assert_string_equal(path, want);
}

static void test_method_paths(void **state)
{
    (void)state;
    const ProtobufCServiceDescriptor *v1 =
        &k8s__io__kubelet__pkg__apis__dra__v1__draplugin__descriptor;
    const ProtobufCServiceDescriptor *b1 =
        &k8s__io__kubelet__pkg__apis__dra__v1beta1__draplugin__descriptor;
    assert_path(v1, 0, DRA_V1_PREPARE);
    assert_path(v1, 1, DRA_V1_UNPREPARE);
    assert_path(b1, 0, DRA_V1BETA1_PREPARE);
    assert_path(b1, 1, DRA_V1BETA1_UNPREPARE);
    assert_path(&v1__draresource_health__descriptor, 0, HEALTH_V1_WATCH_METHOD);
    assert_path(&v1alpha1__draresource_health__descriptor, 0, HEALTH_V1ALPHA1_WATCH_METHOD);
    assert_path(&pluginregistration__registration__descriptor, 0, REGISTRATION_GET_INFO);
    assert_path(&pluginregistration__registration__descriptor, 1, REGISTRATION_NOTIFY);
    assert_string_equal(registration_default_versions[0], "v1.DRAPlugin");
    assert_string_equal(registration_default_versions[1], "v1beta1.DRAPlugin");
    /* The advertised strings are the real service names. */
    assert_string_equal(registration_default_versions[2], v1__draresource_health__descriptor.name);
    assert_string_equal(registration_default_versions[2], "v1.DRAResourceHealth");
    assert_string_equal(registration_default_versions[3],
                        v1alpha1__draresource_health__descriptor.name);
    assert_string_equal(registration_default_versions[3], "v1alpha1.DRAResourceHealth");
    assert_int_equal(registration_n_default_versions, 4);
}

/* NodePrepareResourcesRequest{claims: [{namespace: "ns", uid: "u1", name: "c1"},
 * {namespace: "default", uid: "u2", name: "c2"}]}, encoded by hand. */
static const uint8_t two_claims[] = {
    0x0a, 0x0c, 0x0a, 0x02, 'n',  's',  0x12, 0x02, 'u',  '1', 0x1a,
    0x02, 'c',  '1',  0x0a, 0x11, 0x0a, 0x07, 'd',  'e',  'f', 'a',
    'u',  'l',  't',  0x12, 0x02, 'u',  '2',  0x1a, 0x02, 'c', '2',
};

static void check_two_claims(enum dra_api api, const ProtobufCMessageDescriptor *d)
{
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, sizeof(two_claims), two_claims);
    assert_non_null(m);
    struct dra_claim_ref *claims;
    size_t n;
    struct error err;
    assert_int_equal(dra_request_claims(api, m, &claims, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(claims[0].ns, "ns");
    assert_string_equal(claims[0].uid, "u1");
    assert_string_equal(claims[0].name, "c1");
    assert_string_equal(claims[1].ns, "default");
    assert_string_equal(claims[1].uid, "u2");
    assert_string_equal(claims[1].name, "c2");
    free(claims);
    protobuf_c_message_free_unpacked(m, NULL);
}

static void test_request_claims(void **state)
{
    (void)state;
    check_two_claims(DRA_API_V1, dra_prepare_request_type(DRA_API_V1));
    check_two_claims(DRA_API_V1, dra_unprepare_request_type(DRA_API_V1));
    check_two_claims(DRA_API_V1BETA1, dra_prepare_request_type(DRA_API_V1BETA1));
    check_two_claims(DRA_API_V1BETA1, dra_unprepare_request_type(DRA_API_V1BETA1));

    /* A message of the other version is refused, not misread. */
    ProtobufCMessage *m = protobuf_c_message_unpack(dra_prepare_request_type(DRA_API_V1), NULL,
                                                    sizeof(two_claims), two_claims);
    struct dra_claim_ref *claims;
    size_t n;
    struct error err;
    assert_int_equal(dra_request_claims(DRA_API_V1BETA1, m, &claims, &n, &err), -1);
    assert_non_null(strstr(err.msg, "not a DRA v1beta1 request"));
    protobuf_c_message_free_unpacked(m, NULL);

    /* Truncated bytes do not decode (the server answers INVALID_ARGUMENT). */
    assert_null(
        protobuf_c_message_unpack(dra_prepare_request_type(DRA_API_V1), NULL, 5, two_claims));
}

static char *names_gpu[] = {"gpu"};
static char *cdi_ids[] = {"k8s.gpu.fakehw.example.com/gpu=u1-gpu-0"};

static struct prepared_claim one_device(char *share_id)
{
    static struct prepared_device d;
    d = (struct prepared_device){names_gpu, 1, "node-a", "gpu-0", cdi_ids, 1, share_id};
    return (struct prepared_claim){&d, 1};
}

static bool contains(const uint8_t *buf, size_t len, const void *needle, size_t nlen)
{
    for (size_t i = 0; i + nlen <= len; i++)
        if (!memcmp(buf + i, needle, nlen))
            return true;
    return false;
}

/* An answer's bytes. */
struct wire {
    uint8_t *buf;
    size_t len;
};

/* res[0..n) encoded as the prepare answer of api, which must work. */
static struct wire prepare_answer(enum dra_api api, const struct dra_prepare_result *res, size_t n)
{
    struct wire w;
    struct error err;
    if (dra_encode_prepare_response(api, res, n, &w.buf, &w.len, &err) != 0)
        fail_msg("dra_encode_prepare_response: %s", err.msg);
    return w;
}

static void test_prepare_response_v1(void **state)
{
    (void)state;
    struct prepared_claim pc = one_device("share-1");
    struct dra_prepare_result res[] = {
        {"u1", &pc, NULL},
        {"u2", NULL, "claim ns/c2 (uid u2): not allocated"},
    };
    struct wire w = prepare_answer(DRA_API_V1, res, 2);
    /* share_id is field 5, length-delimited: tag 0x2a. */
    assert_true(contains(w.buf, w.len, "\x2a\x07share-1", 9));

    K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse *r =
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__unpack(NULL, w.len,
                                                                                      w.buf);
    assert_non_null(r);
    assert_int_equal(r->n_claims, 2);
    assert_string_equal(r->claims[0]->key, "u1");
    assert_string_equal(r->claims[0]->value->error, "");
    assert_int_equal(r->claims[0]->value->n_devices, 1);
    K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device *d = r->claims[0]->value->devices[0];
    assert_string_equal(d->pool_name, "node-a");
    assert_string_equal(d->device_name, "gpu-0");
    assert_int_equal(d->n_request_names, 1);
    assert_string_equal(d->request_names[0], "gpu");
    assert_string_equal(d->cdi_device_ids[0], "k8s.gpu.fakehw.example.com/gpu=u1-gpu-0");
    assert_string_equal(d->share_id, "share-1");
    assert_string_equal(r->claims[1]->key, "u2");
    assert_string_equal(r->claims[1]->value->error, "claim ns/c2 (uid u2): not allocated");
    assert_int_equal(r->claims[1]->value->n_devices, 0);
    k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__free_unpacked(r, NULL);
    free(w.buf);
}

static void test_prepare_response_v1beta1_has_no_share_id(void **state)
{
    (void)state;
    struct prepared_claim pc = one_device("share-1");
    struct dra_prepare_result res[] = {{"u1", &pc, NULL}};
    struct wire w = prepare_answer(DRA_API_V1BETA1, res, 1);
    assert_false(contains(w.buf, w.len, "share-1", 7));
    K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodePrepareResourcesResponse *r =
        k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_response__unpack(
            NULL, w.len, w.buf);
    assert_non_null(r);
    assert_int_equal(r->n_claims, 1);
    assert_string_equal(r->claims[0]->value->devices[0]->device_name, "gpu-0");
    k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_response__free_unpacked(r,
                                                                                              NULL);
    free(w.buf);

    /* Without a share ID, v1 sends no field 5 either. */
    pc = one_device(NULL);
    w = prepare_answer(DRA_API_V1, res, 1);
    assert_false(contains(w.buf, w.len, "\x2a", 1));
    free(w.buf);
}

/* The one codec builds v1beta1 answers with the v1 types: the bytes must be
 * exactly the v1 answer without share_id, and the v1beta1 descriptor must
 * read them with no field left over (a field 5 would land in the unknown
 * fields). */
static void test_prepare_response_v1beta1_is_v1_without_share_id(void **state)
{
    (void)state;
    struct prepared_claim shared = one_device("share-1");
    struct dra_prepare_result res[] = {{"u1", &shared, NULL}, {"u2", NULL, "not allocated"}};
    struct wire b1 = prepare_answer(DRA_API_V1BETA1, res, 2);
    struct prepared_claim plain = one_device(NULL);
    res[0].claim = &plain;
    struct wire v1 = prepare_answer(DRA_API_V1, res, 2);
    assert_int_equal(b1.len, v1.len);
    assert_memory_equal(b1.buf, v1.buf, v1.len);

    K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodePrepareResourcesResponse *r =
        k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_response__unpack(
            NULL, b1.len, b1.buf);
    assert_non_null(r);
    assert_int_equal(r->base.n_unknown_fields, 0);
    assert_int_equal(r->n_claims, 2);
    assert_int_equal(r->claims[0]->value->base.n_unknown_fields, 0);
    assert_int_equal(r->claims[0]->value->n_devices, 1);
    assert_int_equal(r->claims[0]->value->devices[0]->base.n_unknown_fields, 0);
    assert_string_equal(r->claims[1]->value->error, "not allocated");
    k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_response__free_unpacked(r,
                                                                                              NULL);
    free(b1.buf);
    free(v1.buf);
}

static void test_unprepare_response_bytes(void **state)
{
    (void)state;
    struct dra_unprepare_result res[] = {{"u1", NULL}, {"u2", "disk full"}};
    uint8_t *out;
    size_t len;
    struct error err;
    for (int api = DRA_API_V1; api <= DRA_API_V1BETA1; api++) {
        assert_int_equal(dra_encode_unprepare_response((enum dra_api)api, res, 2, &out, &len, &err),
                         0);
        /* map entry (field 1) {key = 1: "u1", value = 2: {}} then
         * {key: "u2", value: {error = 1: "disk full"}} */
        static const uint8_t want[] = {0x0a, 0x06, 0x0a, 0x02, 'u', '1',  0x12, 0x00, 0x0a,
                                       0x11, 0x0a, 0x02, 'u',  '2', 0x12, 0x0b, 0x0a, 0x09,
                                       'd',  'i',  's',  'k',  ' ', 'f',  'u',  'l',  'l'};
        assert_int_equal(len, sizeof(want));
        assert_memory_equal(out, want, sizeof(want));
        free(out);
    }
}

static void test_error_text_is_utf8(void **state)
{
    (void)state;
    struct dra_unprepare_result res[] = {{"u1", "bad \xff byte"}};
    uint8_t *out;
    size_t len;
    struct error err;
    assert_int_equal(dra_encode_unprepare_response(DRA_API_V1, res, 1, &out, &len, &err), 0);
    assert_true(contains(out, len, "bad ? byte", 10));
    assert_false(contains(out, len, "\xff", 1));
    free(out);
}

static void test_utf8(void **state)
{
    (void)state;
    assert_true(utf8_valid("plain", 5));
    assert_true(utf8_valid("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80", 15));
    assert_false(utf8_valid("\xc0\xaf", 2));         /* overlong '/' */
    assert_false(utf8_valid("\xe0\x80\xaf", 3));     /* overlong, 3 bytes */
    assert_false(utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
    assert_false(utf8_valid("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
    assert_false(utf8_valid("\xe2\x82", 2));         /* truncated */
    assert_false(utf8_valid("\x80", 1));             /* lone continuation */
    char *s = utf8_sanitize("a\xe2\x82z\xc3\xbc");
    assert_string_equal(s, "a??z\xc3\xbc");
    free(s);
    /* "€" is 3 bytes: a cut at 2 or 3 bytes after "a" keeps only "a". */
    assert_int_equal(utf8_prefix_len("a\xe2\x82\xac", 2), 1);
    assert_int_equal(utf8_prefix_len("a\xe2\x82\xac", 3), 1);
    assert_int_equal(utf8_prefix_len("a\xe2\x82\xac", 4), 4);
    assert_int_equal(utf8_prefix_len("abc", 2), 2);
}

static void test_health_message_cut(void **state)
{
    (void)state;
    char out[HEALTH_MESSAGE_MAX + 1];
    char in[3000];

    health_message_cut(NULL, out);
    assert_string_equal(out, "");
    health_message_cut("ECC errors", out);
    assert_string_equal(out, "ECC errors");

    memset(in, 'x', 1024);
    in[1024] = '\0';
    health_message_cut(in, out); /* exactly the limit: kept */
    assert_int_equal(strlen(out), 1024);
    assert_int_equal(out[1023], 'x');

    memset(in, 'x', 2000);
    in[2000] = '\0';
    health_message_cut(in, out);
    assert_int_equal(strlen(out), 1024);
    assert_int_equal(strncmp(out + 1021, "...", 3), 0);
    assert_int_equal(out[1020], 'x');

    /* A 2-byte character across byte 1021 is dropped whole, never split. */
    memset(in, 'x', 1020);
    strcpy(in + 1020, "\xc3\xbc");
    memset(in + 1022, 'y', 100);
    in[1122] = '\0';
    health_message_cut(in, out);
    assert_int_equal(strlen(out), 1023);
    assert_string_equal(out + 1020, "...");
    assert_true(utf8_valid(out, strlen(out)));

    health_message_cut("bad \xff", out);
    assert_string_equal(out, "bad ?");
}

static void test_health_encode(void **state)
{
    (void)state;
    struct health_entry list[] = {
        {"node-a", "gpu-0", HEALTH_ENTRY_HEALTHY, 1700000000, 0, NULL},
        {"node-a", "gpu-1", HEALTH_ENTRY_UNHEALTHY, 300, 60, "ECC"},
    };
    uint8_t *out;
    size_t len;
    struct error err;
    assert_int_equal(health_encode(list, 2, &out, &len, &err), 0);
    /* devices = 1 { device = 1 {pool_name = 1, device_name = 2}, health = 2,
     * last_updated_time = 3 (varint), health_check_timeout_seconds = 4, message = 5 } */
    static const uint8_t want[] = {
        0x0a, 0x19, 0x0a, 0x0f, 0x0a, 0x06, 'n',  'o',  'd',  'e',  '-',  'a',  0x12, 0x05, 'g',
        'p',  'u',  '-',  '0',  0x10, 0x01, 0x18, 0x80, 0xe2, 0xcf, 0xaa, 0x06, 0x0a, 0x1d, 0x0a,
        0x0f, 0x0a, 0x06, 'n',  'o',  'd',  'e',  '-',  'a',  0x12, 0x05, 'g',  'p',  'u',  '-',
        '1',  0x10, 0x02, 0x18, 0xac, 0x02, 0x20, 0x3c, 0x2a, 0x03, 'E',  'C',  'C',
    };
    assert_int_equal(len, sizeof(want));
    assert_memory_equal(out, want, sizeof(want));
    /* The same bytes decode as the message of either version. */
    V1__NodeWatchResourcesResponse *m1 = v1__node_watch_resources_response__unpack(NULL, len, out);
    assert_non_null(m1);
    assert_int_equal(m1->n_devices, 2);
    assert_string_equal(m1->devices[1]->device->device_name, "gpu-1");
    assert_int_equal(m1->devices[1]->health, V1__HEALTH_STATUS__UNHEALTHY);
    assert_string_equal(m1->devices[1]->message, "ECC");
    v1__node_watch_resources_response__free_unpacked(m1, NULL);
    V1alpha1__NodeWatchResourcesResponse *ma =
        v1alpha1__node_watch_resources_response__unpack(NULL, len, out);
    assert_non_null(ma);
    assert_int_equal(ma->n_devices, 2);
    assert_string_equal(ma->devices[0]->device->pool_name, "node-a");
    assert_int_equal(ma->devices[1]->health_check_timeout_seconds, 60);
    assert_string_equal(ma->devices[1]->message, "ECC");
    v1alpha1__node_watch_resources_response__free_unpacked(ma, NULL);
    free(out);

    /* An empty list is an empty message. */
    assert_int_equal(health_encode(NULL, 0, &out, &len, &err), 0);
    assert_int_equal(len, 0);
    free(out);

    struct health_entry bad[] = {{"node-a", "", HEALTH_ENTRY_HEALTHY, 0, 0, NULL}};
    assert_int_equal(health_encode(bad, 1, &out, &len, &err), -1);
    assert_string_equal(err.msg, "health entry 0 (pool node-a): empty device name");
    bad[0] = (struct health_entry){"node-a", "gpu-3", (enum health_entry_status)7, 0, 0, NULL};
    assert_int_equal(health_encode(bad, 1, &out, &len, &err), -1);
    assert_string_equal(err.msg, "health entry 0 (node-a/gpu-3): unknown health value 7");
}

/* Same field names, numbers, labels and types, recursively, so one encoding
 * can serve both versions. */
static void assert_same_message(const ProtobufCMessageDescriptor *a,
                                const ProtobufCMessageDescriptor *b)
{
    assert_string_equal(a->short_name, b->short_name);
    assert_int_equal(a->n_fields, b->n_fields);
    for (unsigned i = 0; i < a->n_fields; i++) {
        const ProtobufCFieldDescriptor *fa = &a->fields[i], *fb = &b->fields[i];
        assert_string_equal(fa->name, fb->name);
        assert_int_equal(fa->id, fb->id);
        assert_int_equal(fa->label, fb->label);
        assert_int_equal(fa->type, fb->type);
        if (fa->type == PROTOBUF_C_TYPE_MESSAGE)
            assert_same_message(fa->descriptor, fb->descriptor);
        if (fa->type == PROTOBUF_C_TYPE_ENUM) {
            const ProtobufCEnumDescriptor *ea = fa->descriptor, *eb = fb->descriptor;
            assert_int_equal(ea->n_values, eb->n_values);
            for (unsigned k = 0; k < ea->n_values; k++) {
                assert_string_equal(ea->values[k].name, eb->values[k].name);
                assert_int_equal(ea->values[k].value, eb->values[k].value);
            }
        }
    }
}

static void test_health_versions_wire_identical(void **state)
{
    (void)state;
    assert_same_message(&v1__node_watch_resources_request__descriptor,
                        &v1alpha1__node_watch_resources_request__descriptor);
    assert_same_message(&v1__node_watch_resources_response__descriptor,
                        &v1alpha1__node_watch_resources_response__descriptor);
    assert_int_equal(v1__device_health__descriptor.n_fields, 5);
    assert_int_equal(v1__device_health__descriptor.fields[4].id, 5);
    assert_string_equal(v1__device_health__descriptor.fields[4].name, "message");
    assert_ptr_equal(health_watch_request_type(HEALTH_API_V1),
                     &v1__node_watch_resources_request__descriptor);
    assert_ptr_equal(health_watch_request_type(HEALTH_API_V1ALPHA1),
                     &v1alpha1__node_watch_resources_request__descriptor);
}

static void test_registration_config_errors(void **state)
{
    (void)state;
    struct error err;
    struct registration_config cfg = {.driver_name = "gpu.fakehw.example.com",
                                      .endpoint = "plugins/dra.sock"};
    assert_null(registration_service_new(&cfg, &err));
    assert_non_null(strstr(err.msg, "must be the absolute path"));
    cfg.endpoint = "/var/lib/kubelet/plugins/gpu.fakehw.example.com/dra.sock";
    cfg.driver_name = "";
    assert_null(registration_service_new(&cfg, &err));
    assert_string_equal(err.msg, "registration: empty driver name");
    cfg.driver_name = "gpu.fakehw.example.com";
    struct registration_service *svc = registration_service_new(&cfg, &err);
    assert_non_null(svc);
    assert_false(registration_service_registered(svc));
    registration_service_free(svc);
}

/* The helpers the server and the kubelet stand-in share. */
static void test_rpc_wire(void **state)
{
    (void)state;
    assert_string_equal(rpc_status_name(GRPC_STATUS_OK), "OK");
    assert_string_equal(rpc_status_name(GRPC_STATUS_INVALID_ARGUMENT), "INVALID_ARGUMENT");
    assert_string_equal(rpc_status_name(GRPC_STATUS_UNAUTHENTICATED), "UNAUTHENTICATED");
    assert_string_equal(rpc_status_name((grpc_status_code)17), "UNKNOWN_CODE");

    static const uint8_t bytes[] = {0x0a, 0x00, 0xff, 'x'};
    grpc_byte_buffer *bb = rpc_buffer_from_bytes(bytes, sizeof(bytes));
    assert_non_null(bb);
    size_t len;
    uint8_t *back = rpc_buffer_to_bytes(bb, &len);
    assert_non_null(back);
    assert_int_equal(len, sizeof(bytes));
    assert_memory_equal(back, bytes, sizeof(bytes));
    free(back);
    grpc_byte_buffer_destroy(bb);

    bb = rpc_buffer_from_bytes("", 0); /* an empty message is bytes too */
    back = rpc_buffer_to_bytes(bb, &len);
    assert_non_null(back);
    assert_int_equal(len, 0);
    free(back);
    grpc_byte_buffer_destroy(bb);

    grpc_slice s = grpc_slice_from_copied_buffer("ab\0c", 4);
    char *str = rpc_slice_to_string(s);
    assert_memory_equal(str, "ab\0c", 5);
    free(str);
    grpc_slice_unref(s);
}

TEST_MAIN("grpc codec", test_method_paths, test_request_claims, test_prepare_response_v1,
          test_prepare_response_v1beta1_has_no_share_id,
          test_prepare_response_v1beta1_is_v1_without_share_id, test_unprepare_response_bytes,
          test_error_text_is_utf8, test_utf8, test_health_message_cut, test_health_encode,
          test_health_versions_wire_identical, test_registration_config_errors, test_rpc_wire)
