/*
 * diskcache.h: a persistent cache of blobs in one folder, shared by concurrent processes.
 * VAST keeps its translations and the real binaries of its built variants there
 * (interpose/kcache.c), so that a second process builds nothing.
 *
 * An entry is one file, named by the hex SHA-256 key the caller chose, holding a header
 * (magic, format version, payload length, the key again, SHA-256 of the payload) and the
 * payload. Rules:
 *   - Writers write a temporary file in the folder and rename it into place (no fsync: a
 *     torn entry after a crash is caught by the checksum), so readers see an entry whole or
 *     not at all; two processes writing one key leave one of two equal entries.
 *   - Readers validate magic, version, key, length and checksum; a bad entry is a miss (and
 *     is removed), never an error.
 *   - The folder is bounded: after each write, while the entries pass the bound, the least
 *     recently used (oldest mtime; a hit touches its entry) are removed. Temporary files of
 *     writers that died are removed after an hour.
 * Nothing here calls a driver or logs above debug level: a cache that fails is a cache that
 * misses.
 */
#ifndef VAST_BASE_DISKCACHE_H
#define VAST_BASE_DISKCACHE_H

#include "sha256.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VAST_DISKCACHE_SUFFIX ".vc"
#define VAST_DISKCACHE_MAGIC "VASTDC1\n"
#define VAST_DISKCACHE_FORMAT 1u

/* On-disk header, host byte order (entries are never shared between machines). */
struct vast_diskcache_header {
    char magic[8];       /* VAST_DISKCACHE_MAGIC */
    uint32_t format;     /* VAST_DISKCACHE_FORMAT */
    uint32_t header_bytes; /* sizeof this header */
    uint64_t payload_bytes;
    uint8_t key[VAST_SHA256_BYTES];
    uint8_t checksum[VAST_SHA256_BYTES]; /* SHA-256 of the payload */
};
_Static_assert(sizeof(struct vast_diskcache_header) == 88, "diskcache header layout");

struct vast_diskcache {
    char dir[1024];
    uint64_t max_bytes; /* bound of the entries' total size */
};

/* Opens (creating the folder and its parents) a cache; false when dir cannot be made. */
bool vast_diskcache_open(struct vast_diskcache *c, const char *dir, uint64_t max_bytes);

/* The process's cache: VAST_CACHE_DIR ("auto": $XDG_CACHE_HOME/vast, else $HOME/.cache/vast;
 * empty or "off": none) bounded by VAST_CACHE_MAX; NULL when disabled or not usable. */
const struct vast_diskcache *vast_diskcache_default(void);

/* The folder the configuration names (into out), or false when the cache is off. */
bool vast_diskcache_dir(const char *setting, char *out, size_t size);

/* The payload stored under key (malloc'ed, *len its size; free it), or NULL: no valid entry. */
void *vast_diskcache_get(const struct vast_diskcache *c, const uint8_t key[VAST_SHA256_BYTES], size_t *len);

/* Stores payload under key (replacing an entry), then keeps the bound. False when not stored
 * (the payload alone passes the bound, or the folder cannot be written). */
bool vast_diskcache_put(const struct vast_diskcache *c, const uint8_t key[VAST_SHA256_BYTES], const void *data,
                        size_t len);

/* Removes least recently used entries until the total is at most max_bytes; returns how many
 * entries it removed. */
unsigned vast_diskcache_trim(const struct vast_diskcache *c, uint64_t max_bytes);

#endif
