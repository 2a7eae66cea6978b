/*
 * progbin.c: packing and checking VAST's program binary containers (see progbin.h for the
 * layout and why they exist). Nothing here knows OpenCL objects; program.c builds the
 * fields and answers the API.
 */
#include "progbin.h"

#include <stdint.h>
#include <string.h>

static const unsigned char progbin_magic[8] = {0x7f, 'V', 'A', 'S', 'T', 'P', 'R', 'G'};

enum { HEADER = 56, SUM_AT = 48 };

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The checksum: every byte of the container except the checksum's own eight. */
static uint64_t progbin_sum(const unsigned char *c, size_t len)
{
    uint64_t h = fnv1a(0xcbf29ce484222325ull, c, SUM_AT);
    return fnv1a(h, c + HEADER, len - HEADER);
}

size_t vast_progbin_size(const struct vast_progbin *b)
{
    return HEADER + b->device_len + (b->source ? b->source_len : 0) + b->options_len + b->binary_len;
}

void vast_progbin_pack(const struct vast_progbin *b, unsigned char *out)
{
    size_t src_len = b->source ? b->source_len : 0, len = vast_progbin_size(b);
    memcpy(out, progbin_magic, sizeof progbin_magic);
    put_le(out + 8, VAST_PROGBIN_VERSION, 4);
    put_le(out + 12, b->source != NULL, 4);
    put_le(out + 16, b->device_len, 8);
    put_le(out + 24, src_len, 8);
    put_le(out + 32, b->options_len, 8);
    put_le(out + 40, b->binary_len, 8);
    unsigned char *p = out + HEADER;
    memcpy(p, b->device, b->device_len);
    p += b->device_len;
    if (src_len)
        memcpy(p, b->source, src_len);
    p += src_len;
    if (b->options_len)
        memcpy(p, b->options, b->options_len);
    p += b->options_len;
    memcpy(p, b->binary, b->binary_len);
    put_le(out + SUM_AT, progbin_sum(out, len), 8);
}

enum vast_progbin_kind vast_progbin_unpack(const unsigned char *bytes, size_t len, struct vast_progbin *out)
{
    if (len < sizeof progbin_magic || memcmp(bytes, progbin_magic, sizeof progbin_magic) != 0)
        return VAST_PROGBIN_FOREIGN;
    if (len < HEADER || get_le(bytes + 8, 4) != VAST_PROGBIN_VERSION || get_le(bytes + 12, 4) > 1)
        return VAST_PROGBIN_INVALID;
    uint64_t n[4], total = HEADER;
    for (int i = 0; i < 4; i++) {
        n[i] = get_le(bytes + 16 + 8 * i, 8);
        if (n[i] > len || total + n[i] > len) /* each at most len: no overflow */
            return VAST_PROGBIN_INVALID;
        total += n[i];
    }
    if (total != len || get_le(bytes + SUM_AT, 8) != progbin_sum(bytes, len) || n[3] == 0)
        return VAST_PROGBIN_INVALID;
    const unsigned char *p = bytes + HEADER;
    out->device = (const char *)p;
    out->device_len = n[0];
    out->source = get_le(bytes + 12, 4) ? (const char *)p + n[0] : NULL;
    out->source_len = n[1];
    out->options = (const char *)p + n[0] + n[1];
    out->options_len = n[2];
    out->binary = p + n[0] + n[1] + n[2];
    out->binary_len = n[3];
    return VAST_PROGBIN_VALID;
}
