/* pagetable.c: per-buffer page tables (see pagetable.h). Pure data structure: no locks of
 * its own, callers hold the pool lock for every change. */
#include "pagetable.h"
#include "devops.h"

#include <stdlib.h>

int pagecache_init_page_table(struct vast_page_table *pt, size_t bytes, unsigned page_shift)
{
    pt->page_shift = page_shift;
    pt->npages = bytes ? ((bytes - 1) >> page_shift) + 1 : 0;
    pt->mapped = 0;
    pt->entries = calloc(pt->npages ? pt->npages : 1, sizeof *pt->entries);
    return pt->entries ? VAST_PC_OK : VAST_PC_ERR_HOST_MEMORY;
}

void pagecache_fini_page_table(struct vast_page_table *pt)
{
    free(pt->entries);
    pt->entries = NULL;
    pt->npages = 0;
}

void pagecache_pt_set_frame(struct vast_page_table *pt, size_t page, uint32_t frame)
{
    uint64_t e = atomic_load_explicit(&pt->entries[page], memory_order_relaxed);
    uint64_t low = frame == VAST_PT_NO_FRAME ? 0 : (uint64_t)frame + 1;
    pt->mapped += (low != 0) - ((uint32_t)e != 0);
    e = (e & 0xffffffff00000000ull) | low;
    atomic_store_explicit(&pt->entries[page], e, memory_order_release);
}

void pagecache_pt_bump_version(struct vast_page_table *pt, size_t page)
{
    atomic_fetch_add_explicit(&pt->entries[page], (uint64_t)1 << 32, memory_order_acq_rel);
}

void pagecache_pages_of_range(size_t offset, size_t size, unsigned page_shift, size_t *first,
                              size_t *count)
{
    if (size == 0) {
        *first = offset >> page_shift;
        *count = 0;
        return;
    }
    *first = offset >> page_shift;
    *count = ((offset + size - 1) >> page_shift) - *first + 1;
}
