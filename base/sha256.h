/*
 * sha256.h: SHA-256 (FIPS 180-4), the strong hash of VAST's persistent caches (diskcache.h):
 * cache keys and entry checksums. Incremental: init, update any number of times, final.
 */
#ifndef VAST_BASE_SHA256_H
#define VAST_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define VAST_SHA256_BYTES 32

struct vast_sha256 {
    uint32_t h[8];
    uint64_t bytes;     /* message length so far */
    uint8_t block[64];
    size_t fill;        /* bytes in block */
};

void vast_sha256_init(struct vast_sha256 *s);
void vast_sha256_update(struct vast_sha256 *s, const void *data, size_t len);
void vast_sha256_final(struct vast_sha256 *s, uint8_t out[VAST_SHA256_BYTES]);

/* Hashes a string field: its length (8 bytes) then its bytes, so fields never run together;
 * NULL hashes apart from "". */
void vast_sha256_str(struct vast_sha256 *s, const char *text);

/* One-shot digest of a buffer. */
void vast_sha256(const void *data, size_t len, uint8_t out[VAST_SHA256_BYTES]);

#endif
