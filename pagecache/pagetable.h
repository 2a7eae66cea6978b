/* pagetable.h: the page table of one virtual buffer on one device pool.
 * One 64-bit atomic entry per page: the resident frame (or none) and a version that counts
 * writes to the page (host writes and device writes: for a later multi-GPU merge, GAIA-style).
 * The dirty bit lives in the frame's state word, not here: a page that is not resident is
 * never dirty (the host store is authoritative), so one copy of the bit is enough.
 * Entries change only under the pool lock; they may be read without it (a pinned page's
 * entry cannot change). Large tables are calloc'ed, i.e. mapped lazily. */
#ifndef VAST_PAGECACHE_PAGETABLE_H
#define VAST_PAGECACHE_PAGETABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define VAST_PT_NO_FRAME UINT32_MAX
/* An entry holds frame + 1 in its low 32 bits, so VAST_PT_NO_FRAME + 1 wraps to the 0 of a
 * fresh (calloc'ed) entry; pagecache_create_pool keeps frame numbers below it. */
_Static_assert((uint32_t)(VAST_PT_NO_FRAME + 1u) == 0, "no frame is the zero entry");

struct vast_page_table {
    size_t npages;
    unsigned page_shift;
    _Atomic uint64_t *entries; /* low 32 bits: frame + 1 (0 = none); high 32: version */
    size_t mapped;             /* entries naming a frame (pool lock): 0 lets walks stop at once */
};

int pagecache_init_page_table(struct vast_page_table *pt, size_t bytes, unsigned page_shift);
void pagecache_fini_page_table(struct vast_page_table *pt);

static inline uint32_t pagecache_pt_frame(const struct vast_page_table *pt, size_t page)
{
    uint64_t e = atomic_load_explicit(&pt->entries[page], memory_order_acquire);
    return (uint32_t)e == 0 ? VAST_PT_NO_FRAME : (uint32_t)e - 1;
}

static inline uint32_t pagecache_pt_version(const struct vast_page_table *pt, size_t page)
{
    return (uint32_t)(atomic_load_explicit(&pt->entries[page], memory_order_acquire) >> 32);
}

/* Pool lock held. */
void pagecache_pt_set_frame(struct vast_page_table *pt, size_t page, uint32_t frame);
void pagecache_pt_bump_version(struct vast_page_table *pt, size_t page);

/* Pages [*first, *first + *count) overlapping bytes [offset, offset+size); size 0 gives
 * count 0. Used for sub-buffers too: pass parent offset + sub offset. */
void pagecache_pages_of_range(size_t offset, size_t size, unsigned page_shift, size_t *first,
                              size_t *count);

#endif
