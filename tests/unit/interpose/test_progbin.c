/* test_progbin.c: VAST's program binary containers (interpose/progbin.c): what is packed
 * unpacks the same, with and without a source; a binary without the magic is foreign; every
 * single flipped bit past the magic, every shorter length and a trailing byte make a
 * container invalid, never a different valid one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "interpose/progbin.h"
#include "vast_cmocka.h"

static const unsigned char real_bin[] = {0x7f, 'E', 'L', 'F', 1, 2, 3, 0, 0, 9};

static unsigned char *packed(const struct vast_progbin *pb, size_t *len)
{
    *len = vast_progbin_size(pb);
    unsigned char *c = malloc(*len + 1);
    vast_progbin_pack(pb, c);
    return c;
}

static void test_roundtrip(void **state)
{
    (void)state;
    const char *dev = "device\n1.0", *src = "__kernel void k(__global int *a) { a[0] = X; }", *opt = "-D X=3";
    struct vast_progbin pb = {dev, strlen(dev), src, strlen(src), opt, strlen(opt), real_bin, sizeof real_bin}, out;
    size_t len;
    unsigned char *c = packed(&pb, &len);
    assert_int_equal(vast_progbin_unpack(c, len, &out), VAST_PROGBIN_VALID);
    assert_int_equal(out.source_len, strlen(src));
    assert_memory_equal(out.source, src, strlen(src));
    assert_memory_equal(out.options, opt, strlen(opt));
    assert_memory_equal(out.device, dev, strlen(dev));
    assert_int_equal(out.binary_len, sizeof real_bin);
    assert_memory_equal(out.binary, real_bin, sizeof real_bin);
    free(c);
    pb.source = NULL; /* a linked program: no source */
    c = packed(&pb, &len);
    assert_int_equal(vast_progbin_unpack(c, len, &out), VAST_PROGBIN_VALID);
    assert_null(out.source);
    free(c);
    assert_int_equal(vast_progbin_unpack(real_bin, sizeof real_bin, &out), VAST_PROGBIN_FOREIGN);
    assert_int_equal(vast_progbin_unpack((const unsigned char *)"\x7fVAS", 4, &out), VAST_PROGBIN_FOREIGN);
}

static void test_damage(void **state)
{
    (void)state;
    const char *dev = "d", *src = "s s s", *opt = "";
    struct vast_progbin pb = {dev, 1, src, 5, opt, 0, real_bin, sizeof real_bin}, out;
    size_t len;
    unsigned char *c = packed(&pb, &len);
    for (size_t i = 8; i < len; i++)
        for (int bit = 0; bit < 8; bit++) {
            c[i] ^= (unsigned char)(1u << bit);
            assert_int_equal(vast_progbin_unpack(c, len, &out), VAST_PROGBIN_INVALID);
            c[i] ^= (unsigned char)(1u << bit);
        }
    for (size_t l = 8; l < len; l++)
        assert_int_equal(vast_progbin_unpack(c, l, &out), VAST_PROGBIN_INVALID);
    c[len] = 0;
    assert_int_equal(vast_progbin_unpack(c, len + 1, &out), VAST_PROGBIN_INVALID);
    assert_int_equal(vast_progbin_unpack(c, len, &out), VAST_PROGBIN_VALID);
    free(c);
}

VAST_CMOCKA_MAIN(NULL, NULL, test_roundtrip, test_damage)
