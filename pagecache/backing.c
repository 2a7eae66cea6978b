/* backing.c: host backing stores (see backing.h). Owns the anonymous mappings VAST makes for
 * buffers without USE_HOST_PTR and the lazy per-granule pins of any store. The pin table is
 * allocated on first pin; its entries are only ever added, never replaced, until destroy. */
#include "backing.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PIN_FAILED ((vast_host_pin)(uintptr_t)1)

struct vast_backing {
    void *base;
    size_t size;
    size_t map_size; /* bytes mapped by VAST; 0 for the application's memory */
    int huge;        /* VAST's mapping is THP-aligned and madvise(MADV_HUGEPAGE) took it */
    size_t granule;
    pthread_mutex_t lock; /* protects pins, pin_ops, pin_dev */
    vast_host_pin *pins;  /* one per granule: NULL not tried, PIN_FAILED, or a pin */
    const struct vast_device_ops *pin_ops;
    void *pin_dev;
};

size_t pagecache_host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psz <= 0)
        return 0;
    return (size_t)pages * (size_t)psz;
}

static int backing_new(void *base, size_t size, size_t map_size, struct vast_backing **out)
{
    struct vast_backing *b = calloc(1, sizeof *b);
    if (!b)
        return VAST_PC_ERR_HOST_MEMORY;
    b->base = base;
    b->size = size;
    b->map_size = map_size;
    b->granule = (size_t)256 << 20;
    pthread_mutex_init(&b->lock, NULL);
    *out = b;
    return VAST_PC_OK;
}

/* The transparent huge page size (PMD), 0 where the kernel has none. */
static size_t thp_bytes;
static pthread_once_t thp_once = PTHREAD_ONCE_INIT;

static void thp_probe(void)
{
#ifdef MADV_HUGEPAGE
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    unsigned long long v = 0;
    if (f) {
        if (fscanf(f, "%llu", &v) != 1)
            v = 0;
        fclose(f);
    }
    if (v >= 4096 && (v & (v - 1)) == 0 && v <= ((size_t)1 << 30))
        thp_bytes = (size_t)v;
#endif
}

/* Maps map_size bytes; from one huge page up, aligned to it (over-map, trim both ends) and
 * advised MADV_HUGEPAGE, so first touch faults 2 MiB at a time instead of 4 KiB (fewer
 * faults, fewer TLB misses for the copies and for pinning). Where THP is off ("never") or
 * absent, madvise fails or is ignored and the store is an ordinary lazily committed mapping. */
static void *map_store(size_t map_size, int *huge)
{
    *huge = 0;
    pthread_once(&thp_once, thp_probe);
    size_t h = thp_bytes;
    if (h && map_size >= h && map_size <= SIZE_MAX - h) {
        char *raw = mmap(NULL, map_size + h, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
        if (raw != MAP_FAILED) {
            char *p = (char *)(((uintptr_t)raw + h - 1) & ~(uintptr_t)(h - 1));
            size_t head = (size_t)(p - raw), tail = h - head;
            if (head)
                munmap(raw, head);
            if (tail)
                munmap(p + map_size, tail);
#ifdef MADV_HUGEPAGE
            *huge = madvise(p, map_size, MADV_HUGEPAGE) == 0;
#endif
            return p;
        }
    }
    return mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int pagecache_backing_huge(const struct vast_backing *b) { return b->huge; }

int pagecache_create_backing(size_t size, size_t limit, struct vast_backing **out)
{
    if (!out || size == 0)
        return VAST_PC_ERR_INVALID;
    if (limit == 0)
        limit = pagecache_host_memory_bytes();
    size_t psz = (size_t)sysconf(_SC_PAGESIZE);
    if (size > limit || size > SIZE_MAX - psz)
        return VAST_PC_ERR_HOST_MEMORY;
    size_t map_size = (size + psz - 1) & ~(psz - 1);
    /* No MAP_NORESERVE: the kernel's overcommit policy still vets the size, pages are
     * committed on first touch only. */
    int huge;
    void *p = map_store(map_size, &huge);
    if (p == MAP_FAILED)
        return VAST_PC_ERR_HOST_MEMORY;
    int rc = backing_new(p, size, map_size, out);
    if (rc)
        munmap(p, map_size);
    else
        (*out)->huge = huge;
    return rc;
}

int pagecache_wrap_backing(void *ptr, size_t size, struct vast_backing **out)
{
    if (!out || !ptr || size == 0)
        return VAST_PC_ERR_INVALID;
    return backing_new(ptr, size, 0, out);
}

void pagecache_destroy_backing(struct vast_backing *b)
{
    if (!b)
        return;
    if (b->pins) {
        size_t n = (b->size + b->granule - 1) / b->granule;
        for (size_t i = 0; i < n; i++)
            if (b->pins[i] && b->pins[i] != PIN_FAILED)
                b->pin_ops->unpin_host(b->pin_dev, b->pins[i]);
        free(b->pins);
    }
    if (b->map_size)
        munmap(b->base, b->map_size);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

void *pagecache_backing_base(const struct vast_backing *b) { return b->base; }
size_t pagecache_backing_size(const struct vast_backing *b) { return b->size; }

void pagecache_set_pin_granule(struct vast_backing *b, size_t bytes)
{
    pthread_mutex_lock(&b->lock);
    if (!b->pins && bytes >= 4096 && (bytes & (bytes - 1)) == 0)
        b->granule = bytes;
    pthread_mutex_unlock(&b->lock);
}

size_t pagecache_backing_pin_granule(struct vast_backing *b)
{
    pthread_mutex_lock(&b->lock);
    size_t g = b->granule;
    pthread_mutex_unlock(&b->lock);
    return g;
}

size_t pagecache_backing_pinned_granules(struct vast_backing *b)
{
    size_t count = 0;
    pthread_mutex_lock(&b->lock);
    if (b->pins) {
        size_t n = (b->size + b->granule - 1) / b->granule;
        for (size_t i = 0; i < n; i++)
            count += b->pins[i] && b->pins[i] != PIN_FAILED;
    }
    pthread_mutex_unlock(&b->lock);
    return count;
}

/* Pins granule g (lock held). A store is pinned through one device context only: the
 * first one that asks (one pool per device; a second device transfers unpinned for now). */
static vast_host_pin pin_granule_locked(struct vast_backing *b, const struct vast_device_ops *ops,
                                        void *dev, size_t g)
{
    if (b->pins[g])
        return b->pins[g];
    size_t off = g * b->granule;
    size_t len = b->size - off < b->granule ? b->size - off : b->granule;
    vast_host_pin pin = NULL;
    if (ops->pin_host((void *)dev, (char *)b->base + off, len, &pin) != 0 || !pin)
        pin = PIN_FAILED;
    b->pins[g] = pin;
    return pin;
}

vast_host_pin pagecache_pin_backing(struct vast_backing *b, const struct vast_device_ops *ops,
                                    void *dev, size_t off, size_t len)
{
    if (!ops->pin_host || !ops->unpin_host || len == 0 || off >= b->size)
        return NULL;
    vast_host_pin first = NULL;
    pthread_mutex_lock(&b->lock);
    if (!b->pins) {
        b->pins = calloc((b->size + b->granule - 1) / b->granule, sizeof *b->pins);
        b->pin_ops = ops;
        b->pin_dev = dev;
    }
    if (b->pins && b->pin_ops == ops && b->pin_dev == dev) {
        size_t last = off + len - 1 < b->size ? off + len - 1 : b->size - 1;
        for (size_t g = off / b->granule; g <= last / b->granule; g++) {
            vast_host_pin p = pin_granule_locked(b, ops, dev, g);
            if (g == off / b->granule)
                first = p;
        }
    }
    pthread_mutex_unlock(&b->lock);
    return first == PIN_FAILED ? NULL : first;
}
