/* vspace.h - host side of the translate ABI for tests: lays the buffers of one launch out
 * page-aligned in one virtual space (page 0 = NULL), scatters their pages over a frame
 * pool of several chunks through a look-ahead page table, and copies pages into frames
 * and back. A model for the runtime engine; no OpenCL here (plain host memory). */
#ifndef VAST_TESTS_VSPACE_H
#define VAST_TESTS_VSPACE_H
#include <stddef.h>
#include <stdint.h>

struct vspace {
    unsigned shift;          /* page size = 1 << shift */
    size_t nbufs;
    uint64_t *va;            /* virtual address of each buffer (0 for none) */
    size_t *size;
    uint64_t pages;          /* virtual pages in use, including page 0 */
    unsigned nchunks;        /* pool chunks */
    uint64_t frames_per_chunk;
    uint32_t *lpt;           /* pages entries: TRANSLATE_NO_FRAME or chunk<<30 | frame */
};

/* Lays out buffers of the given sizes; chunks x frames_per_chunk must hold every page. */
int vspace_init(struct vspace *vs, unsigned shift, size_t nbufs, const size_t *sizes,
                unsigned nchunks);
/* Maps every page to a distinct random frame (seeded), or none where resident[p] == 0. */
void vspace_scatter(struct vspace *vs, uint64_t seed, const unsigned char *resident);
/* Copies buffer contents into their frames (pool[c] = chunk c's host image) and back. */
void vspace_to_frames(const struct vspace *vs, void *const *bufs, unsigned char **pool);
void vspace_from_frames(const struct vspace *vs, void **bufs, unsigned char *const *pool);
void vspace_free(struct vspace *vs);
#endif
