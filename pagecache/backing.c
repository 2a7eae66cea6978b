/* backing.c: host backing stores (see backing.h). Owns the anonymous mappings VAST makes for
 * buffers without USE_HOST_PTR, the per-granule pins of any store, and the one process-wide
 * background pinner. The pin table is allocated when the store is bound to a device (first
 * pin or queueing); an entry goes NULL -> PIN_BUSY -> a pin or PIN_FAILED and is never
 * replaced again until destroy. Whoever moves an entry to PIN_BUSY (a transfer or the worker)
 * calls pin_host with the store's lock dropped; anyone else wanting that granule waits on
 * `pinned`: one pin_host call per granule, and a transfer never waits for the pin of a granule
 * it does not need. The worker's queue has its own lock (bg.lock), never held with b->lock. */
#include "backing.h"

#include "../base/clock.h"
#include "../base/trace.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PIN_FAILED ((vast_host_pin)(uintptr_t)1)
#define PIN_BUSY ((vast_host_pin)(uintptr_t)2) /* pin_host in progress (lock dropped) */

/* Nice value of the background pinner: it yields to the application, yet a transfer or a
 * release waiting for the granule it is pinning is not starved for long (19 would be). */
#define BG_NICE 10

struct vast_backing {
    void *base;
    size_t size;
    size_t map_size; /* bytes mapped by VAST; 0 for the application's memory */
    int huge;        /* VAST's mapping is THP-aligned and madvise(MADV_HUGEPAGE) took it */
    size_t granule;
    pthread_mutex_t lock;   /* protects pins, pin_ops, pin_dev, granule */
    pthread_cond_t pinned;  /* broadcast when a PIN_BUSY entry is settled */
    vast_host_pin *pins;    /* one per granule: NULL not tried, PIN_BUSY, PIN_FAILED, or a pin */
    const struct vast_device_ops *pin_ops;
    void *pin_dev;
    /* background pinning (bg.lock, except bg_known: the owner's, see bg_forget) */
    atomic_int bg_pending;        /* on the worker's queue, or left to staging (stage_rest); read by transfers without bg.lock */
    int bg_known;                 /* was queued once: destroy must check the worker */
    int bg_queued;                /* on the queue */
    size_t bg_cursor, bg_granules; /* next granule to pin, granules of the store */
    struct vast_backing *bg_next;
};

/* Read once: sysconf(_SC_PHYS_PAGES) is a sysinfo call, and every buffer creation asks (two
 * per buffer of CLBlast's xgemv, 35,000 calls). */
static size_t host_memory;
static pthread_once_t host_memory_once = PTHREAD_ONCE_INIT;

static void host_memory_probe(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    host_memory = pages <= 0 || psz <= 0 ? 0 : (size_t)pages * (size_t)psz;
}

size_t pagecache_host_memory_bytes(void)
{
    pthread_once(&host_memory_once, host_memory_probe);
    return host_memory;
}

static int backing_new(void *base, size_t size, size_t map_size, struct vast_backing **out)
{
    VAST_PC_NEW(struct vast_backing, b);
    b->base = base;
    b->size = size;
    b->map_size = map_size;
    b->granule = (size_t)256 << 20;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->pinned, NULL);
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
void *pagecache_map_huge(size_t map_size, int *huge)
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

/* Released stores kept for reuse: a program that creates and releases small buffers in a loop
 * (CLBlast's test programs: 17,700 of them in xgemv) paid a mapping, its first-touch page
 * faults and an unmapping with its TLB shootdown per buffer, where the real driver's malloc
 * reuses memory (xgemv through VAST: 5.6 s of system time against PoCL's 0.9 s). A store of
 * at most RECYCLE_STORE bytes goes to a list (RECYCLE_TOTAL bytes in all, the oldest unmapped
 * to make room) instead of munmap, and a new store takes back the smallest kept one of at
 * least its mapped size and at most twice it: committed, and holding a released buffer's
 * bytes, which a new buffer's contents may be (the specification leaves them undefined; this
 * process's own data). Before, only a store of exactly the same size was taken: CLBlast's
 * xim2col, whose 16,384 cases each use buffers of their own sizes, found none, filled the list
 * with sizes never asked for again and unmapped every other store (a third of its time
 * through VAST on PoCL in munmap). */
#define RECYCLE_STORE ((size_t)8 << 20)
#define RECYCLE_TOTAL ((size_t)64 << 20)
#define RECYCLE_SLOTS 64

static struct {
    pthread_mutex_t lock;
    struct {
        void *base;
        size_t map_size;
        int huge;
    } slot[RECYCLE_SLOTS]; /* oldest first */
    size_t n, bytes;
} recycle = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Takes out the kept store i (lock held). */
static void recycle_remove(size_t i)
{
    recycle.bytes -= recycle.slot[i].map_size;
    memmove(&recycle.slot[i], &recycle.slot[i + 1], (recycle.n - i - 1) * sizeof recycle.slot[0]);
    recycle.n--;
}

/* The smallest kept store of map_size to 2 * map_size bytes (its size in *map_size), or NULL. */
static void *recycle_take(size_t *map_size, int *huge)
{
    size_t need = *map_size, best = SIZE_MAX;
    void *p = NULL;
    pthread_mutex_lock(&recycle.lock);
    for (size_t i = 0; i < recycle.n; i++) {
        size_t have = recycle.slot[i].map_size;
        if (have >= need && have / 2 <= need && (best == SIZE_MAX || have < recycle.slot[best].map_size))
            best = i;
    }
    if (best != SIZE_MAX) {
        p = recycle.slot[best].base;
        *map_size = recycle.slot[best].map_size;
        *huge = recycle.slot[best].huge;
        recycle_remove(best);
    }
    pthread_mutex_unlock(&recycle.lock);
    return p;
}

/* Keeps a released store if it is small, unmapping the oldest kept ones to make room; false:
 * the caller unmaps it. */
static bool recycle_keep(void *base, size_t map_size, int huge)
{
    if (map_size > RECYCLE_STORE)
        return false;
    struct {
        void *base;
        size_t map_size;
    } out[RECYCLE_SLOTS];
    size_t nout = 0;
    pthread_mutex_lock(&recycle.lock);
    while (recycle.n > 0 && (recycle.n == RECYCLE_SLOTS || recycle.bytes + map_size > RECYCLE_TOTAL)) {
        out[nout].base = recycle.slot[0].base;
        out[nout++].map_size = recycle.slot[0].map_size;
        recycle_remove(0);
    }
    recycle.slot[recycle.n].base = base;
    recycle.slot[recycle.n].map_size = map_size;
    recycle.slot[recycle.n++].huge = huge;
    recycle.bytes += map_size;
    pthread_mutex_unlock(&recycle.lock);
    for (size_t i = 0; i < nout; i++)
        munmap(out[i].base, out[i].map_size);
    return true;
}

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
    int huge = 0;
    void *p = recycle_take(&map_size, &huge);
    if (p == NULL && (p = pagecache_map_huge(map_size, &huge)) == MAP_FAILED)
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

static void bg_forget(struct vast_backing *b);

static size_t granule_count(const struct vast_backing *b) { return (b->size + b->granule - 1) / b->granule; }
static int pin_is_real(vast_host_pin p) { return p && p != PIN_FAILED && p != PIN_BUSY; }
void pagecache_destroy_backing(struct vast_backing *b)
{
    if (!b)
        return;
    bg_forget(b); /* from here on the worker never touches b */
    if (b->pins) {
        size_t n = granule_count(b);
        for (size_t i = 0; i < n; i++)
            if (pin_is_real(b->pins[i]))
                b->pin_ops->unpin_host(b->pin_dev, b->pins[i]);
        free(b->pins);
    }
    if (b->map_size && !recycle_keep(b->base, b->map_size, b->huge))
        munmap(b->base, b->map_size);
    pthread_cond_destroy(&b->pinned);
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
        size_t n = granule_count(b);
        for (size_t i = 0; i < n; i++)
            count += pin_is_real(b->pins[i]);
    }
    pthread_mutex_unlock(&b->lock);
    return count;
}

/* Lock held. Binds the store to the first device that pins it and makes the pin table; every
 * pin is made through that device. 1 when ops/dev may use the store's pins: it is that device,
 * or one of its pin domain (devops.h: the members of a merged device, in one real context,
 * share them; a device of another domain transfers unpinned or staged). */
static int bind_locked(struct vast_backing *b, const struct vast_device_ops *ops, void *dev)
{
    if (!b->pins) {
        b->pins = calloc(granule_count(b), sizeof *b->pins);
        if (!b->pins)
            return 0;
        b->pin_ops = ops;
        b->pin_dev = dev;
    }
    if (b->pin_ops != ops)
        return 0;
    void *domain = ops->pin_domain != NULL ? ops->pin_domain(dev) : NULL;
    return b->pin_dev == dev || (domain != NULL && domain == ops->pin_domain(b->pin_dev));
}

static void bg_demand(int delta);

/* Lock held (dropped and retaken around pin_host). Pins granule g through the bound device:
 * the first caller marks it PIN_BUSY and pins it, so a granule is pinned once whoever (a
 * transfer, the worker) comes first. A transfer never waits for a pin: a granule being pinned,
 * or one the worker has still to pin (the store on its queue), is NULL to it, and the transfer
 * stages through the device's pinned slots (or goes unpinned) meanwhile: the driver pins at
 * 11-13 GB/s, staging moves about 20 GB/s, and the pins go on beside the loads for the
 * transfers after them. H200, saxpy's first launch over 2 x 4 GiB of the application's
 * memory (USE_HOST_PTR) at a 2 GiB budget, three runs each: 0.68-0.76 s -> 0.63-0.68 s for
 * the sample (transfers that pinned or waited -> staged). The worker (background) waits for
 * a transfer's pin of the granule it takes. Never more than the store: the last granule is
 * clipped to its size. */
static vast_host_pin pin_granule_locked(struct vast_backing *b, size_t g, bool background)
{
    const char *who = background ? "background" : "for a transfer"; /* the trace's detail */
    if (!background && (b->pins[g] == PIN_BUSY || (!b->pins[g] && atomic_load(&b->bg_pending))))
        return NULL;
    if (b->pins[g] == PIN_BUSY) { /* a transfer pins it (traced: the worker waiting for it) */
        uint64_t w0 = vast_now_ns();
        while (b->pins[g] == PIN_BUSY)
            pthread_cond_wait(&b->pinned, &b->lock);
        vast_trace_span(VAST_TRACK_PIN, "wait", w0, vast_now_ns(), who);
    }
    if (b->pins[g])
        return b->pins[g];
    b->pins[g] = PIN_BUSY;
    size_t off = g * b->granule;
    size_t len = b->size - off < b->granule ? b->size - off : b->granule;
    pthread_mutex_unlock(&b->lock);
    vast_host_pin pin = NULL;
    uint64_t t0 = vast_now_ns();
    if (!background)
        bg_demand(1);
    if (b->pin_ops->pin_host(b->pin_dev, (char *)b->base + off, len, &pin) != 0 || !pin)
        pin = PIN_FAILED;
    if (!background)
        bg_demand(-1);
    vast_trace_span(VAST_TRACK_PIN, "pin", t0, vast_now_ns(), who);
    pthread_mutex_lock(&b->lock);
    b->pins[g] = pin;
    pthread_cond_broadcast(&b->pinned);
    return pin;
}

vast_host_pin pagecache_pin_backing(struct vast_backing *b, const struct vast_device_ops *ops,
                                    void *dev, size_t off, size_t len)
{
    if (!ops->pin_host || !ops->unpin_host || len == 0 || off >= b->size)
        return NULL;
    vast_host_pin first = NULL;
    pthread_mutex_lock(&b->lock);
    if (bind_locked(b, ops, dev)) {
        size_t last = off + len - 1 < b->size ? off + len - 1 : b->size - 1;
        for (size_t g = off / b->granule; g <= last / b->granule; g++) {
            vast_host_pin p = pin_granule_locked(b, g, false);
            if (g == off / b->granule)
                first = p;
        }
    }
    pthread_mutex_unlock(&b->lock);
    return first == PIN_FAILED ? NULL : first;
}

/* ---------- the background pinner: one process-wide worker thread ---------- */

/* The queue of stores with granules left to pin, taken a granule of each store in turn (round
 * robin: a launch over several buffers needs the first part of each first), the store whose
 * granule is being pinned, the transfers' own pins in progress (the worker takes no granule
 * while one is: the driver pins about 13 GB/s on the H100 with 1 to 8 threads,
 * tests/bench/pinbench), and the worker's life. Measured on the H100, saxpy over 2 x 45 GiB:
 * store by store, the first launch's transfers pinned 44 of y's granules themselves at 4.7 GB/s
 * beside the worker pinning x's; in turn, none, yet the first launch was not shorter: pinning
 * 90 GiB takes 7.5-8.6 s whoever pins (samples/results/h100-2026-11-28-serpentine). */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t work; /* a store was queued, the transfers' pins ended, or stop */
    pthread_cond_t idle; /* `current` was cleared or a store left the queue */
    struct vast_backing *head, *tail;
    struct vast_backing *current; /* the worker may touch only this store, and only while set */
    int demand;                   /* transfers inside pin_host */
    int hold;                     /* launches holding the worker (pagecache_hold_background_pins) */
    int started, stopping;
    pthread_t thread;
} bg = {.lock = PTHREAD_MUTEX_INITIALIZER,
        .work = PTHREAD_COND_INITIALIZER,
        .idle = PTHREAD_COND_INITIALIZER};

/* bg.lock held: takes b off the queue (wherever it is in it). */
static void bg_unlink(struct vast_backing *b)
{
    struct vast_backing **p = &bg.head, *prev = NULL;
    while (*p && *p != b) {
        prev = *p;
        p = &(*p)->bg_next;
    }
    if (*p) {
        *p = b->bg_next;
        if (bg.tail == b)
            bg.tail = prev;
    }
    b->bg_next = NULL;
    b->bg_queued = 0;
    atomic_store(&b->bg_pending, 0);
    pthread_cond_broadcast(&bg.idle);
}

/* bg.lock held: the next (store, granule) to pin, or NULL. A store leaves the queue when its
 * last granule is taken, else goes to its tail (the next store's turn). */
static struct vast_backing *bg_take(size_t *g)
{
    struct vast_backing *b = bg.head;
    if (!b)
        return NULL;
    *g = b->bg_cursor++;
    if (b->bg_cursor >= b->bg_granules) {
        bg_unlink(b);
    } else if (b->bg_next) { /* rotate: b to the tail */
        bg.head = b->bg_next;
        b->bg_next = NULL;
        bg.tail->bg_next = b;
        bg.tail = b;
    }
    return b;
}

/* A transfer's pin begins (+1) or ends (-1). Called with no store's lock held (bg.lock is a
 * leaf: the worker never holds it with b->lock). */
static void bg_demand(int delta)
{
    pthread_mutex_lock(&bg.lock);
    bg.demand += delta;
    if (bg.demand == 0)
        pthread_cond_broadcast(&bg.work);
    pthread_mutex_unlock(&bg.lock);
}

void pagecache_hold_background_pins(int delta)
{
    pthread_mutex_lock(&bg.lock);
    bg.hold += delta;
    if (bg.hold == 0)
        pthread_cond_broadcast(&bg.work);
    pthread_mutex_unlock(&bg.lock);
}

void pagecache_backing_stage_rest(struct vast_backing *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&bg.lock);
    if (b->bg_queued)
        bg_unlink(b);
    b->bg_known = 1;                 /* never queued again */
    atomic_store(&b->bg_pending, 1); /* transfers leave its unpinned granules to nobody: staged */
    pthread_mutex_unlock(&bg.lock);
}

static void *bg_main(void *arg)
{
    (void)arg;
    /* Linux: the nice value is per thread. Failure only leaves it at normal priority. */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), BG_NICE);
    pthread_mutex_lock(&bg.lock);
    for (;;) {
        while (!bg.stopping && (!bg.head || bg.demand > 0 || bg.hold > 0))
            pthread_cond_wait(&bg.work, &bg.lock);
        if (bg.stopping)
            break;
        size_t g;
        struct vast_backing *b = bg_take(&g);
        bg.current = b;
        pthread_mutex_unlock(&bg.lock);
        pthread_mutex_lock(&b->lock);
        int ok = pin_is_real(pin_granule_locked(b, g, true));
        pthread_mutex_unlock(&b->lock);
        pthread_mutex_lock(&bg.lock);
        /* A refused pin is the page cache's sign of memory pressure: the store's remaining
         * granules are left to the transfers (which then pin or stage, as without us). */
        if (!ok && b->bg_queued)
            bg_unlink(b);
        bg.current = NULL;
        pthread_cond_broadcast(&bg.idle);
    }
    pthread_cond_broadcast(&bg.idle);
    pthread_mutex_unlock(&bg.lock);
    return NULL;
}

/* At exit: the worker finishes its granule and stops, so it is never inside the driver while
 * the driver's own exit handlers (registered earlier, run later) tear it down. */
static void bg_stop(void)
{
    pthread_mutex_lock(&bg.lock);
    int started = bg.started;
    bg.stopping = 1;
    pthread_cond_broadcast(&bg.work);
    pthread_mutex_unlock(&bg.lock);
    if (started)
        pthread_join(bg.thread, NULL);
}

/* bg.lock held. The worker runs with every signal blocked: the application's handlers run on
 * its own threads only. */
static int bg_start(void)
{
    if (bg.started)
        return VAST_PC_OK;
    if (bg.stopping)
        return VAST_PC_ERR_UNSUPPORTED;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&bg.thread, NULL, bg_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return VAST_PC_ERR_HOST_MEMORY;
    bg.started = 1;
    atexit(bg_stop);
    return VAST_PC_OK;
}

int pagecache_pin_backing_in_background(struct vast_backing *b,
                                        const struct vast_device_ops *ops, void *dev)
{
    if (!b || !ops || !ops->pin_host || !ops->unpin_host)
        return VAST_PC_ERR_UNSUPPORTED;
    pthread_mutex_lock(&b->lock);
    int rc = bind_locked(b, ops, dev) ? VAST_PC_OK
             : b->pins                ? VAST_PC_ERR_UNSUPPORTED /* bound to another device */
                                      : VAST_PC_ERR_HOST_MEMORY;
    size_t granules = granule_count(b);
    pthread_mutex_unlock(&b->lock);
    if (rc != VAST_PC_OK)
        return rc;
    pthread_mutex_lock(&bg.lock);
    rc = bg_start();
    if (rc == VAST_PC_OK && !b->bg_queued && !b->bg_known) {
        b->bg_known = 1;
        b->bg_queued = 1;
        atomic_store(&b->bg_pending, 1);
        b->bg_cursor = 0;
        b->bg_granules = granules;
        b->bg_next = NULL;
        if (bg.tail)
            bg.tail->bg_next = b;
        else
            bg.head = b;
        bg.tail = b;
        pthread_cond_signal(&bg.work);
    }
    pthread_mutex_unlock(&bg.lock);
    return rc;
}

/* Before b is freed: off the queue, and wait for the granule the worker may be pinning in it
 * (at most one granule, never the rest of the store). bg_known is set by the owner's own
 * queueing call, which the owner's destroy follows. */
static void bg_forget(struct vast_backing *b)
{
    if (!b->bg_known)
        return;
    pthread_mutex_lock(&bg.lock);
    if (b->bg_queued)
        bg_unlink(b);
    while (bg.current == b)
        pthread_cond_wait(&bg.idle, &bg.lock);
    pthread_mutex_unlock(&bg.lock);
}

void pagecache_wait_background_pins(void)
{
    pthread_mutex_lock(&bg.lock);
    while (bg.current || (bg.head && bg.started && !bg.stopping))
        pthread_cond_wait(&bg.idle, &bg.lock);
    pthread_mutex_unlock(&bg.lock);
}
