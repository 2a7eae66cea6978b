/* vspace.c - see vspace.h. Invariants: buffers start on page boundaries in increasing
 * order from page 1; each LPT entry names a distinct frame; frames are whole pages. */
#include "vspace.h"

#include "translate.h"

#include <stdlib.h>
#include <string.h>

int vspace_init(struct vspace *vs, unsigned shift, size_t nbufs, const size_t *sizes,
                unsigned nchunks)
{
    memset(vs, 0, sizeof *vs);
    if (nchunks < 1 || nchunks > TRANSLATE_MAX_POOL_CHUNKS)
        return -1;
    vs->shift = shift;
    vs->nbufs = nbufs;
    vs->va = calloc(nbufs + 1, sizeof *vs->va);
    vs->size = calloc(nbufs + 1, sizeof *vs->size);
    uint64_t page = 1, psize = 1ull << shift;
    for (size_t i = 0; i < nbufs; i++) {
        vs->size[i] = sizes[i];
        if (!sizes[i])
            continue;
        vs->va[i] = page << shift;
        page += (sizes[i] + psize - 1) >> shift;
    }
    vs->pages = page;
    vs->nchunks = nchunks;
    vs->frames_per_chunk = (page + nchunks - 1) / nchunks + 1;
    vs->lpt = malloc(page * sizeof *vs->lpt);
    return vs->va && vs->size && vs->lpt ? 0 : -1;
}

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

void vspace_scatter(struct vspace *vs, uint64_t seed, const unsigned char *resident)
{
    uint64_t nframes = vs->frames_per_chunk * vs->nchunks;
    uint64_t *perm = malloc(nframes * sizeof *perm);
    for (uint64_t i = 0; i < nframes; i++)
        perm[i] = i;
    uint64_t s = seed * 2654435761u + 88172645463325252ull;
    for (uint64_t i = nframes - 1; i > 0; i--) {
        uint64_t j = next_rand(&s) % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint64_t p = 0; p < vs->pages; p++) {
        uint64_t f = perm[p];
        uint32_t chunk = (uint32_t)(f / vs->frames_per_chunk);
        uint32_t idx = (uint32_t)(f % vs->frames_per_chunk);
        vs->lpt[p] = (p == 0 || (resident && !resident[p]))
                         ? TRANSLATE_NO_FRAME
                         : chunk << TRANSLATE_LPT_CHUNK_SHIFT | idx;
    }
    free(perm);
}

static unsigned char *frame_of(const struct vspace *vs, unsigned char *const *pool,
                               uint64_t page)
{
    uint32_t e = vs->lpt[page];
    if (e == TRANSLATE_NO_FRAME)
        return NULL;
    uint64_t idx = e & ((1u << TRANSLATE_LPT_CHUNK_SHIFT) - 1);
    return pool[e >> TRANSLATE_LPT_CHUNK_SHIFT] + (idx << vs->shift);
}

static void copy_pages(const struct vspace *vs, size_t b, unsigned char *host,
                       unsigned char *const *pool, int to_frames)
{
    uint64_t psize = 1ull << vs->shift;
    for (size_t off = 0; off < vs->size[b]; off += psize) {
        unsigned char *f = frame_of(vs, pool, (vs->va[b] + off) >> vs->shift);
        size_t n = vs->size[b] - off < psize ? vs->size[b] - off : psize;
        if (!f)
            continue;
        if (to_frames)
            memcpy(f, host + off, n);
        else
            memcpy(host + off, f, n);
    }
}

void vspace_to_frames(const struct vspace *vs, void *const *bufs, unsigned char **pool)
{
    for (size_t b = 0; b < vs->nbufs; b++)
        if (vs->size[b])
            copy_pages(vs, b, bufs[b], pool, 1);
}

void vspace_from_frames(const struct vspace *vs, void **bufs, unsigned char *const *pool)
{
    for (size_t b = 0; b < vs->nbufs; b++)
        if (vs->size[b])
            copy_pages(vs, b, bufs[b], pool, 0);
}

void vspace_free(struct vspace *vs)
{
    free(vs->va);
    free(vs->size);
    free(vs->lpt);
    memset(vs, 0, sizeof *vs);
}
