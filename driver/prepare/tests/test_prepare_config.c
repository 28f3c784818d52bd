// SPDX-License-Identifier: Apache-2.0
/* Unit tests: opaque GpuConfig parsing, precedence and per-request
 * filtering; config errors name the claim and the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/prepare/gpu_config.h"
#include "prepare_fixture.h"
#include "common/tests/test_main.h"
#include "common/tests/test_json.h"

#define PARAMS(body)                                                                               \
    "{\"apiVersion\":\"gpu.fakehw.example.com/v1alpha1\",\"kind\":\"GpuConfig\"" body "}"
#define ENTRY(source, requests, params)                                                            \
    "{\"source\":\"" source "\",\"requests\":" requests                                            \
    ",\"opaque\":{\"driver\":\"" FIXTURE_DRIVER "\",\"parameters\":" params "}}"
/* An entry for all requests: a format, its parameters the %s. */
#define ENTRY_OF(source)                                                                           \
    "{\"source\":\"" source "\",\"opaque\":{\"driver\":\"" FIXTURE_DRIVER "\",\"parameters\":%s}}"

/* Resolves config (a JSON array text) for results with the given requests. */
static int resolve_for(const char *config, const char *const *requests, size_t n,
                       struct gpu_config *out, struct error *err)
{
    json_t *c = test_json(config);
    int rc = gpu_config_resolve(FIXTURE_DRIVER, c, requests, n, out, err);
    json_decref(c);
    return rc;
}

/* config resolved for the one request "gpus". */
static int resolve(const char *config, struct gpu_config *g, struct error *err)
{
    static const char *const gpus[] = {"gpus"};
    return resolve_for(config, gpus, 1, g, err);
}

/* config resolved for "gpus", which must succeed. */
static struct gpu_config resolved(const char *config)
{
    struct gpu_config g;
    struct error err;
    if (resolve(config, &g, &err) != 0)
        fail_msg("%s: %s", config ? config : "no config", err.msg);
    return g;
}

static const char *env(const struct gpu_config *g, const char *name)
{
    return json_string_value(json_object_get(g->env, name));
}

static void test_default(void **state)
{
    (void)state;
    struct gpu_config g = resolved(NULL);
    assert_int_equal(g.strategy, GPU_SHARING_TIME_SLICING);
    assert_string_equal(g.interval, "Default");
    assert_int_equal(json_object_size(g.env), 0);
    gpu_config_free(&g, 1);
}

static void test_class_then_claim(void **state)
{
    (void)state;
    /* The claim entry comes first in the list, yet the class entry applies
     * first: precedence is by source, not position.  The last entry is
     * another driver's. */
    const char *claim = ENTRY("FromClaim", "[]",
                              PARAMS(",\"env\":{\"LEVEL\":\"claim\",\"ONLY_CLAIM\":\"1\"},"
                                     "\"sharing\":{\"strategy\":\"SpacePartitioning\","
                                     "\"spacePartitioning\":{\"partitionCount\":4}}"));
    const char *class = ENTRY("FromClass", "[]",
                              PARAMS(",\"env\":{\"LEVEL\":\"class\",\"ONLY_CLASS\":\"1\"},"
                                     "\"sharing\":{\"strategy\":\"TimeSlicing\","
                                     "\"timeSlicing\":{\"interval\":\"Long\"}}"));
    const char *other = "{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"other.example.com\","
                        "\"parameters\":{\"anything\":true}}}";
    char config[2048];
    snprintf(config, sizeof(config), "[%s,%s,%s]", claim, class, other);
    struct gpu_config g = resolved(config);
    assert_int_equal(g.strategy, GPU_SHARING_SPACE_PARTITIONING);
    assert_int_equal(g.partition_count, 4);
    assert_string_equal(env(&g, "LEVEL"), "claim");
    assert_string_equal(env(&g, "ONLY_CLASS"), "1");
    assert_string_equal(env(&g, "ONLY_CLAIM"), "1");
    gpu_config_free(&g, 1);
}

static void test_per_request(void **state)
{
    (void)state;
    const char *a = ENTRY("FromClaim", "[\"a\"]",
                          PARAMS(",\"env\":{\"FOR\":\"a\"},\"sharing\":{\"strategy\":"
                                 "\"TimeSlicing\",\"timeSlicing\":{\"interval\":\"Short\"}}"));
    const char *b_small =
        ENTRY("FromClaim", "[\"b/small\"]", PARAMS(",\"env\":{\"FOR\":\"b-small\"}"));
    const char *c_and_a =
        ENTRY("FromClaim", "[\"c\", \"a\"]", PARAMS(",\"env\":{\"ALSO\":\"ac\"}"));
    char config[2048];
    snprintf(config, sizeof(config), "[%s,%s,%s]", a, b_small, c_and_a);
    const char *reqs[] = {"a", "b/small", "b/big", "c/x", "d"};
    struct gpu_config g[5];
    struct error err;
    assert_int_equal(resolve_for(config, reqs, 5, g, &err), 0);
    assert_string_equal(g[0].interval, "Short");
    assert_string_equal(env(&g[0], "FOR"), "a");
    assert_string_equal(env(&g[0], "ALSO"), "ac");
    assert_string_equal(g[1].interval, "Default");
    assert_string_equal(env(&g[1], "FOR"), "b-small");
    assert_null(env(&g[2], "FOR"));                /* "b/small" does not name "b/big" */
    assert_string_equal(env(&g[3], "ALSO"), "ac"); /* "c" names "c/x" */
    assert_null(env(&g[3], "FOR"));
    assert_int_equal(json_object_size(g[4].env), 0);
    gpu_config_free(g, 5);
}

/* A valid class entry, then a claim entry with params: the error must be
 * the second entry's, with nothing left allocated. */
static void expect_error(const char *params, const char *want)
{
    char *config = NULL;
    assert_true(asprintf(&config,
                         "[" ENTRY("FromClass", "[]", PARAMS("")) "," ENTRY_OF("FromClaim") "]",
                         params) > 0);
    struct gpu_config g[1];
    struct error err;
    assert_int_equal(resolve(config, g, &err), -1);
    if (strcmp(err.msg, want) != 0)
        fail_msg("error\n  got:  %s\n  want: %s", err.msg, want);
    assert_null(g[0].env);
    free(config);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error(PARAMS(",\"sharing\":{\"strategy\":\"TimeSlicing\",\"timeslicing\":{}}"),
                 "config[1] (FromClaim): parameters: unknown field \"sharing.timeslicing\"");
    expect_error(PARAMS(",\"color\":\"red\""),
                 "config[1] (FromClaim): parameters: unknown field \"color\"");
    expect_error("{\"apiVersion\":\"gpu.fakehw.example.com/v1\",\"kind\":\"GpuConfig\"}",
                 "config[1] (FromClaim): parameters: apiVersion \"gpu.fakehw.example.com/v1\" is "
                 "not supported (want gpu.fakehw.example.com/v1alpha1)");
    expect_error("{\"apiVersion\":\"gpu.fakehw.example.com/v1alpha1\",\"kind\":\"GpuConf\"}",
                 "config[1] (FromClaim): parameters: kind \"GpuConf\" is not supported (want "
                 "GpuConfig)");
    expect_error("{\"kind\":\"GpuConfig\"}",
                 "config[1] (FromClaim): parameters: field \"apiVersion\" is required (want "
                 "gpu.fakehw.example.com/v1alpha1)");
    expect_error(PARAMS(",\"sharing\":{\"strategy\":\"TimeSlicing\",\"spacePartitioning\":{}}"),
                 "config[1] (FromClaim): parameters: field \"sharing.spacePartitioning\" is not "
                 "allowed with strategy TimeSlicing");
    expect_error(PARAMS(",\"sharing\":{\"strategy\":\"SpacePartitioning\",\"timeSlicing\":{}}"),
                 "config[1] (FromClaim): parameters: field \"sharing.timeSlicing\" is not allowed "
                 "with strategy SpacePartitioning");
    expect_error(PARAMS(",\"sharing\":{\"timeSlicing\":{}}"),
                 "config[1] (FromClaim): parameters: field \"sharing.strategy\" is required");
    expect_error(PARAMS(",\"sharing\":{\"strategy\":\"MPS\"}"),
                 "config[1] (FromClaim): parameters: field \"sharing.strategy\": \"MPS\" is not "
                 "one of TimeSlicing, SpacePartitioning");
    expect_error(PARAMS(",\"sharing\":{\"strategy\":\"TimeSlicing\",\"timeSlicing\":{"
                        "\"interval\":\"Forever\"}}"),
                 "config[1] (FromClaim): parameters: field \"sharing.timeSlicing.interval\": "
                 "\"Forever\" is not one of Default, Short, Medium, Long");
    expect_error(PARAMS(",\"sharing\":{\"strategy\":\"SpacePartitioning\",\"spacePartitioning\":{"
                        "\"partitionCount\":0}}"),
                 "config[1] (FromClaim): parameters: field "
                 "\"sharing.spacePartitioning.partitionCount\": 0 is not between 1 and 64");
    expect_error(PARAMS(",\"sharing\":{\"strategy\":\"SpacePartitioning\",\"spacePartitioning\":{"
                        "\"partitionCount\":\"2\"}}"),
                 "config[1] (FromClaim): parameters: field "
                 "\"sharing.spacePartitioning.partitionCount\" must be an integer");
    expect_error(PARAMS(",\"env\":{\"1BAD\":\"x\"}"),
                 "config[1] (FromClaim): parameters: field \"env\": \"1BAD\" is not an "
                 "environment variable name ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters)");
    expect_error(PARAMS(",\"env\":{\"FAKEHW_VISIBLE_DEVICES\":\"x\"}"),
                 "config[1] (FromClaim): parameters: field \"env\": \"FAKEHW_VISIBLE_DEVICES\" is "
                 "reserved (names starting with FAKEHW_ or DRA_ are set by the driver)");
    expect_error(PARAMS(",\"env\":{\"N\":1}"),
                 "config[1] (FromClaim): parameters: field \"env.N\" must be a string");
    expect_error("[]", "config[1] (FromClaim): parameters: must be a JSON object");
}

/* The params of an entry whose env has n variables of value, named by
 * name_format from their number (it may leave the number out): malloc'd. */
static char *env_params(const char *name_format, int n, const char *value)
{
    char *vars = NULL, *params = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&vars, &len);
    assert_non_null(m);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), name_format, i);
        fprintf(m, "%s\"%s\":\"%s\"", i ? "," : "", name, value);
    }
    fclose(m);
    assert_true(asprintf(&params, PARAMS(",\"env\":{%s}"), vars) > 0);
    free(vars);
    return params;
}

/* expect_error on params that it frees. */
static void expect_error_of(char *params, const char *want)
{
    expect_error(params, want);
    free(params);
}

/* env is bounded: variables, bytes per value, bytes in all; per entry and
 * merged (gpu_config.h). */
static void test_env_limits(void **state)
{
    (void)state;
    expect_error_of(env_params("V%d", GPU_CONFIG_ENV_ENTRIES_MAX + 1, "x"),
                    "config[1] (FromClaim): parameters: field \"env\": 65 variables; the limit "
                    "is 64");

    char *big = malloc(GPU_CONFIG_ENV_VALUE_MAX + 2);
    assert_non_null(big);
    memset(big, 'v', GPU_CONFIG_ENV_VALUE_MAX + 1);
    big[GPU_CONFIG_ENV_VALUE_MAX + 1] = '\0';
    expect_error_of(env_params("BIG", 1, big),
                    "config[1] (FromClaim): parameters: field \"env\": the value of BIG has "
                    "4097 bytes; the limit is 4096");

    /* Nine values of 4,000 bytes: each fits, together they do not. */
    big[4000] = '\0';
    expect_error_of(env_params("V%d", 9, big),
                    "config[1] (FromClaim): parameters: field \"env\": names and values have "
                    "36018 bytes; the limit is 32768");
    free(big);

    /* Two entries of 40 variables each: 80 after merging. */
    char *a = env_params("A%d", 40, "x"), *b = env_params("B%d", 40, "x"), config[4096];
    snprintf(config, sizeof(config), "[" ENTRY_OF("FromClass") "," ENTRY_OF("FromClaim") "]", a, b);
    free(b);
    struct gpu_config g[1];
    struct error err;
    assert_int_equal(resolve(config, g, &err), -1);
    assert_string_equal(err.msg, "request gpus: env merged from its config entries: 80 variables; "
                                 "the limit is 64");
    assert_null(g[0].env);
    free(a);
}

/* Through prepare_claim: the error names the claim, and nothing is written. */
static void test_error_names_claim(void **state)
{
    struct fixture *f = *state;
    struct error err;
    struct prepare_state *st = prepare_state_open(&f->cfg, &err);
    assert_non_null(st);
    fixture_put_claim(f, fixture_claim("team-a", "c1", UID1, "[" RESULT("gpus", "gpu-0") "]",
                                       "[" ENTRY("FromClaim", "[]", PARAMS(",\"shareing\":{}")) "]",
                                       NULL));
    struct prepared_claim out;
    assert_int_equal(prepare_claim(st, "team-a", "c1", UID1, &out, &err), -1);
    assert_string_equal(err.msg, "claim team-a/c1 (uid " UID1 "): config[0] (FromClaim): "
                                 "parameters: unknown field \"shareing\"");
    assert_int_equal(out.n_devices, 0);
    assert_int_equal(fixture_count(f->cdi_root), 0);
    prepare_state_close(st);
}

TEST_MAIN_LIST("prepare opaque config", cmocka_unit_test(test_default),
               cmocka_unit_test(test_class_then_claim), cmocka_unit_test(test_per_request),
               cmocka_unit_test(test_errors), cmocka_unit_test(test_env_limits),
               cmocka_unit_test_setup_teardown(test_error_names_claim, fixture_setup,
                                               fixture_teardown))
