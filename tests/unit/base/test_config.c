/*
 * test_config: VAST_* parsing: sizes with suffixes, booleans, log levels, VAST_INSPECT's modes,
 * VAST_CACHE_BINARIES's auto or boolean,
 * defaults, and bad values replaced by defaults with a reason naming the variable.
 */
#include "base/config.h"
#include "vast_cmocka.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static const char *const *env;

static const char *fake_get(const char *name)
{
    for (size_t i = 0; env != NULL && env[i] != NULL; i += 2)
        if (!strcmp(env[i], name))
            return env[i + 1];
    return NULL;
}

static void test_sizes(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_true(vast_parse_size("123", &v));
    assert_int_equal(v, 123);
    assert_true(vast_parse_size("64K", &v));
    assert_int_equal(v, 65536);
    assert_true(vast_parse_size("4m", &v));
    assert_int_equal(v, 4u << 20);
    assert_true(vast_parse_size("2G", &v));
    assert_int_equal(v, 2ull << 30);
    assert_true(vast_parse_size("3GiB", &v));
    assert_int_equal(v, 3ull << 30);
    assert_true(vast_parse_size("1T", &v));
    assert_int_equal(v, 1ull << 40);
    assert_false(vast_parse_size("", &v));
    assert_false(vast_parse_size("-1", &v));
    assert_false(vast_parse_size("12X", &v));
    assert_false(vast_parse_size("G", &v));
    assert_false(vast_parse_size("99999999999999999999", &v));
    assert_false(vast_parse_size("17179869184G", &v)); /* 2^34 G overflows 64 bits */
}

static void test_defaults(void **state)
{
    (void)state;
    env = NULL;
    struct vast_config cfg;
    assert_true(vast_config_parse(&cfg, fake_get, NULL, 0));
    assert_string_equal(cfg.backend, "");
    assert_int_equal(cfg.device_memory, 0);
    assert_int_equal(cfg.log, 1); /* warn */
    assert_false(cfg.force_paged);
}

static void test_values(void **state)
{
    (void)state;
    static const char *const vars[] = {"VAST_BACKEND", "NVIDIA", "VAST_DEVICE_MEMORY", "8M", "VAST_PAGE_SIZE", "64K",
                                       "VAST_FORCE_PAGED", "yes", "VAST_LOG", "debug", NULL};
    env = vars;
    struct vast_config cfg;
    assert_true(vast_config_parse(&cfg, fake_get, NULL, 0));
    assert_string_equal(cfg.backend, "NVIDIA");
    assert_int_equal(cfg.device_memory, 8u << 20);
    assert_int_equal(cfg.page_size, 65536);
    assert_true(cfg.force_paged);
    assert_int_equal(cfg.log, 3);
}

static void test_bad_values_fall_back(void **state)
{
    (void)state;
    static const char *const vars[] = {"VAST_DEVICE_MEMORY", "lots", "VAST_STATS", "maybe", NULL};
    env = vars;
    struct vast_config cfg;
    char why[256] = "";
    assert_false(vast_config_parse(&cfg, fake_get, why, sizeof why));
    assert_non_null(strstr(why, "VAST_DEVICE_MEMORY"));
    assert_int_equal(cfg.device_memory, 0);
    assert_false(cfg.stats);
    static const char *const pages[] = {"VAST_PAGE_SIZE", "3000", NULL};
    env = pages;
    assert_false(vast_config_parse(&cfg, fake_get, why, sizeof why));
    assert_non_null(strstr(why, "VAST_PAGE_SIZE"));
    assert_int_equal(cfg.page_size, 0);
    static const char *const granules[] = {"VAST_PIN_GRANULE", "24M", NULL};
    env = granules;
    assert_false(vast_config_parse(&cfg, fake_get, why, sizeof why));
    assert_non_null(strstr(why, "VAST_PIN_GRANULE"));
    assert_int_equal(cfg.pin_granule, (size_t)256 << 20);
    static const char *const granule[] = {"VAST_PIN_GRANULE", "32M", NULL};
    env = granule;
    assert_true(vast_config_parse(&cfg, fake_get, NULL, 0));
    assert_int_equal(cfg.pin_granule, (size_t)32 << 20);
}

/* VAST_INSPECT is parsed once into its enum, in any case; a typo warns and falls back to auto
 * like any other variable's. */
static void test_inspect(void **state)
{
    (void)state;
    struct vast_config cfg;
    env = NULL;
    assert_true(vast_config_parse(&cfg, fake_get, NULL, 0));
    assert_int_equal(cfg.inspect, VAST_INSPECT_AUTO);
    static const char *const device[] = {"VAST_INSPECT", "device", NULL};
    env = device;
    assert_true(vast_config_parse(&cfg, fake_get, NULL, 0));
    assert_int_equal(cfg.inspect, VAST_INSPECT_DEVICE);
    static const char *const check[] = {"VAST_INSPECT", "Check", NULL};
    env = check;
    assert_true(vast_config_parse(&cfg, fake_get, NULL, 0));
    assert_int_equal(cfg.inspect, VAST_INSPECT_CHECK);
    static const char *const bad[] = {"VAST_INSPECT", "sometimes", NULL};
    env = bad;
    char why[256] = "";
    assert_false(vast_config_parse(&cfg, fake_get, why, sizeof why));
    assert_non_null(strstr(why, "VAST_INSPECT"));
    assert_int_equal(cfg.inspect, VAST_INSPECT_AUTO);
}

/* An auto-or-boolean switch: "auto" (any case) or a boolean's spellings; anything else warns and
 * falls back to auto. */
static void test_autobool(void **state)
{
    (void)state;
    struct vast_config cfg;
    env = NULL;
    assert_true(vast_config_parse(&cfg, fake_get, NULL, 0));
    assert_int_equal(cfg.cache_binaries, VAST_AUTOBOOL_AUTO);
    static const char *const spellings[][2] = {{"AUTO", "auto"}, {"0", "off"}, {"no", "off"}, {"1", "on"},
                                               {"On", "on"}, {"true", "on"}};
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        const char *const one[] = {"VAST_CACHE_BINARIES", spellings[i][0], NULL};
        env = one;
        assert_true(vast_config_parse(&cfg, fake_get, NULL, 0));
        enum vast_autobool want = !strcmp(spellings[i][1], "auto") ? VAST_AUTOBOOL_AUTO
                                  : !strcmp(spellings[i][1], "on") ? VAST_AUTOBOOL_ON
                                                                   : VAST_AUTOBOOL_OFF;
        assert_int_equal(cfg.cache_binaries, want);
    }
    static const char *const bad[] = {"VAST_CACHE_BINARIES", "sometimes", NULL};
    env = bad;
    char why[256] = "";
    assert_false(vast_config_parse(&cfg, fake_get, why, sizeof why));
    assert_non_null(strstr(why, "VAST_CACHE_BINARIES"));
    assert_int_equal(cfg.cache_binaries, VAST_AUTOBOOL_AUTO);
}

VAST_CMOCKA_MAIN(NULL, NULL, test_sizes, test_defaults, test_values, test_bad_values_fall_back, test_inspect,
                 test_autobool)
