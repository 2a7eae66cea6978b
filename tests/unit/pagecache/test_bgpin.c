/* test_bgpin.c: the background pinner of backing.c over the fake device: a queued store gets
 * pinned with no transfer (VAST's mapping and the application's memory, never past the end);
 * destroying a store while the worker pins it waits for that granule only and leaves nothing
 * pinned (run it under ASan: the worker must never touch a freed store); no pin_host, or a
 * device refusing pins (what VAST_PIN=0 makes devops_opencl do), pins nothing, and a refused
 * pin stops the rest of the store; transfers racing the worker leave each granule one pin,
 * and a transfer never waits for a pin nor pins a granule the worker has still to pin (it
 * stages meanwhile); queued stores are pinned a granule of each in turn, and the worker yields
 * to transfers' pins of stores not queued; the pools of two devices of one pin domain share a
 * store's pins, a device of another domain gets none; a store left to staging is pinned no
 * further, and a held worker pins nothing. The fake's pin hook counts pin_host calls per
 * granule and can hold the worker inside a pin. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_device.h"
#include "pagecache.h"
#include "vast_cmocka.h"

#define PG 4096u
#define GRAN ((size_t)16 << 10) /* 4 pages per pin granule */
#define MAX_GRANULES 64

/* What the pin hook sees: pin_host calls per granule of one store, ranges out of the store,
 * and a gate that holds the caller pinning granule `hold_granule` until it is opened. */
struct tracker {
    char *base;
    size_t size;
    _Atomic unsigned calls[MAX_GRANULES];
    _Atomic size_t bytes;
    _Atomic int outside;      /* a pin not on a granule boundary or past the store */
    long hold_granule;        /* -1: hold nobody */
    _Atomic int held, open;   /* someone is held / the gate is open */
    unsigned delay_us;        /* every pin takes this long (widens races) */
};

static void sleep_us(unsigned us)
{
    struct timespec t = {us / 1000000, (long)(us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

/* Polls flag until it is set; 0 after ~5 s. */
static int wait_flag(_Atomic int *flag)
{
    for (int i = 0; i < 5000 && !atomic_load(flag); i++)
        sleep_us(1000);
    return atomic_load(flag);
}

static void on_pin(struct fake_device *d, void *host, size_t bytes)
{
    struct tracker *t = d->on_pin_ctx;
    char *p = host;
    if (t->delay_us) /* every pin, this store's or not */
        sleep_us(t->delay_us);
    if (p < t->base || p + bytes > t->base + t->size || (size_t)(p - t->base) % GRAN) {
        atomic_store(&t->outside, 1);
        return;
    }
    size_t g = (size_t)(p - t->base) / GRAN;
    atomic_fetch_add(&t->calls[g], 1);
    atomic_fetch_add(&t->bytes, bytes);
    if ((long)g == t->hold_granule) {
        atomic_store(&t->held, 1);
        while (!atomic_load(&t->open))
            sleep_us(200);
    }
}

static void track(struct fake_device *d, struct tracker *t, struct vast_backing *b)
{
    memset(t, 0, sizeof *t);
    t->base = pagecache_backing_base(b);
    t->size = pagecache_backing_size(b);
    t->hold_granule = -1;
    d->on_pin_ctx = t;
    d->on_pin = on_pin;
}

static struct vast_backing *new_store(size_t bytes)
{
    struct vast_backing *b;
    assert_int_equal(pagecache_create_backing(bytes, 0, &b), 0);
    pagecache_set_pin_granule(b, GRAN);
    return b;
}

/* (a) Stores queued at creation are pinned granule by granule with no transfer: VAST's own
 * mapping and the application's memory, the last granule clipped to the store's size. */
static void test_pinned_without_transfer(void **state)
{
    (void)state;
    struct fake_device dev;
    struct vast_pool *pool = fake_pool_open(&dev, PG, 16, 16);
    assert_non_null(pool);
    size_t own_size = 8 * GRAN - 1000, app_size = 5 * GRAN + 123;
    struct vast_backing *own = new_store(own_size), *app;
    char *mem = malloc(app_size);
    assert_int_equal(pagecache_wrap_backing(mem, app_size, &app), 0);
    pagecache_set_pin_granule(app, GRAN);
    struct tracker t;
    track(&dev, &t, own);
    struct vast_pc_buffer *buf;
    assert_int_equal(pagecache_create_buffer(pool, own, &buf), 0);
    assert_int_equal(pagecache_pin_backing_in_background(own, &fake_device_ops, &dev), 0);
    pagecache_wait_background_pins();
    assert_int_equal(pagecache_backing_pinned_granules(own), 8);
    for (int g = 0; g < 8; g++)
        assert_int_equal(t.calls[g], 1);
    assert_int_equal(t.bytes, own_size); /* never past the end of the store */
    assert_false(t.outside);
    track(&dev, &t, app);
    assert_int_equal(pagecache_pin_backing_in_background(app, &fake_device_ops, &dev), 0);
    pagecache_wait_background_pins();
    assert_int_equal(pagecache_backing_pinned_granules(app), 6);
    assert_int_equal(t.bytes, app_size);
    assert_false(t.outside);
    assert_int_equal(dev.writes + dev.reads, 0);
    assert_int_equal(dev.pins, 14);
    /* a transfer now finds its granule pinned: no further pin_host call */
    track(&dev, &t, own);
    assert_int_equal(pagecache_make_resident(buf, 9, 2, 0, NULL), 0);
    assert_int_equal(dev.pin_calls, 14);
    assert_int_equal(pagecache_release_buffer(buf), 0);
    pagecache_destroy_backing(own);
    pagecache_destroy_backing(app);
    free(mem);
    assert_int_equal(dev.unpins, 14);
    pagecache_destroy_pool(pool);
}

struct destroyer {
    struct vast_backing *b;
    _Atomic int done;
};

static void *destroy_main(void *arg)
{
    struct destroyer *d = arg;
    pagecache_destroy_backing(d->b);
    atomic_store(&d->done, 1);
    return NULL;
}

/* (b) Destroying a store while the worker is inside pin_host for it waits for that granule
 * only, leaves nothing pinned, and the worker never touches the store again; a store still
 * queued behind another is destroyed at once, never pinned. */
static void test_destroy_while_pinning(void **state)
{
    (void)state;
    struct fake_device dev;
    fake_device_init(&dev);
    struct vast_backing *a = new_store(16 * GRAN), *queued = new_store(4 * GRAN);
    struct tracker t;
    track(&dev, &t, a);
    t.hold_granule = 0; /* held in a's first granule, the worker takes none of `queued` (stores in turn) */
    assert_int_equal(pagecache_pin_backing_in_background(a, &fake_device_ops, &dev), 0);
    assert_int_equal(pagecache_pin_backing_in_background(queued, &fake_device_ops, &dev), 0);
    assert_true(wait_flag(&t.held)); /* the worker is pinning granule 0 of a */
    /* the store behind it goes at once; a waits for its granule in progress, and only for
     * it (the gate is opened before any assertion, so a failure cannot hang the exit) */
    struct destroyer dq = {queued, 0}, da = {a, 0};
    pthread_t th[2];
    assert_int_equal(pthread_create(&th[0], NULL, destroy_main, &dq), 0);
    int queued_went = wait_flag(&dq.done);
    assert_int_equal(pthread_create(&th[1], NULL, destroy_main, &da), 0);
    sleep_us(50000);
    int a_waited = !atomic_load(&da.done);
    atomic_store(&t.open, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_true(queued_went);
    assert_true(a_waited);
    assert_true(atomic_load(&da.done));
    assert_int_equal(dev.pin_calls, 1); /* granule 0 of a; nothing of `queued` */
    assert_int_equal(dev.unpins, dev.pins);
    pagecache_wait_background_pins();
    sleep_us(20000);
    assert_int_equal(dev.pin_calls, 1);
    assert_int_equal(dev.unpins, dev.pins);
    assert_false(t.outside);
    dev.on_pin = NULL;
}

static void slow_pin(struct fake_device *d, void *host, size_t bytes)
{
    (void)d, (void)host, (void)bytes;
    sleep_us(50);
}

/* (b) again, as a race: stores destroyed at random points of their pinning (each pin takes
 * 50 us, so most destroys land while the worker is inside pin_host). */
static void test_destroy_race(void **state)
{
    (void)state;
    struct fake_device dev;
    fake_device_init(&dev);
    dev.on_pin = slow_pin;
    srand(7);
    for (int i = 0; i < 300; i++) {
        struct vast_backing *b = new_store((size_t)(1 + rand() % 8) * GRAN - (size_t)(rand() % 100));
        assert_int_equal(pagecache_pin_backing_in_background(b, &fake_device_ops, &dev), 0);
        if (i % 3)
            sleep_us((unsigned)(rand() % 200));
        pagecache_destroy_backing(b);
        assert_int_equal(dev.unpins, dev.pins);
    }
    pagecache_wait_background_pins();
    assert_int_equal(dev.unpins, dev.pins);
}

/* (c) No pin_host: nothing is queued, nothing pinned. A device refusing every pin (devops_opencl
 * with VAST_PIN=0) pins nothing and is asked once per store, not once per granule. */
static void test_no_pin_host(void **state)
{
    (void)state;
    struct fake_device dev;
    fake_device_init(&dev);
    struct vast_device_ops no_pin_ops = fake_device_ops;
    no_pin_ops.pin_host = NULL;
    struct vast_backing *b = new_store(8 * GRAN);
    assert_int_equal(pagecache_pin_backing_in_background(b, &no_pin_ops, &dev),
                     VAST_PC_ERR_UNSUPPORTED);
    pagecache_wait_background_pins();
    assert_int_equal(dev.pin_calls, 0);
    assert_int_equal(pagecache_backing_pinned_granules(b), 0);
    pagecache_destroy_backing(b);
    dev.no_pin = 1;
    b = new_store(8 * GRAN);
    assert_int_equal(pagecache_pin_backing_in_background(b, &fake_device_ops, &dev), 0);
    pagecache_wait_background_pins();
    assert_int_equal(dev.pin_calls, 1);
    assert_int_equal(dev.pins, 0);
    assert_int_equal(pagecache_backing_pinned_granules(b), 0);
    pagecache_destroy_backing(b);
    assert_int_equal(dev.unpins, 0);
}

/* (c) Memory pressure: the first refused pin stops the store's remaining granules; transfers
 * still pin the untried ones themselves, as without the worker. */
static void test_refused_pin_stops_store(void **state)
{
    (void)state;
    struct fake_device dev;
    fake_device_init(&dev);
    atomic_store(&dev.fail_pin_after, 3);
    struct vast_backing *b = new_store(16 * GRAN);
    assert_int_equal(pagecache_pin_backing_in_background(b, &fake_device_ops, &dev), 0);
    pagecache_wait_background_pins();
    assert_int_equal(dev.pins, 3);
    assert_int_equal(dev.pin_calls, 4);
    assert_int_equal(pagecache_backing_pinned_granules(b), 3);
    atomic_store(&dev.fail_pin_after, -1);
    assert_null(pagecache_pin_backing(b, &fake_device_ops, &dev, 3 * GRAN, 1)); /* refused once */
    assert_non_null(pagecache_pin_backing(b, &fake_device_ops, &dev, 10 * GRAN, 1));
    assert_int_equal(dev.pin_calls, 5);
    pagecache_destroy_backing(b);
    assert_int_equal(dev.unpins, 4);
}

/* (g) Pin domains (devops.h): a store shared by the pools of two devices of one domain (a
 * merged device's members, in one real context) is pinned once, through the device that asked
 * first, and the other's transfers get those pins: no pin_host call of its own. A device of
 * another domain (or of none) gets no pin (it stages or goes unpinned, as before). */
static void test_pin_domain(void **state)
{
    (void)state;
    static int ctx, other_ctx; /* the domains' identities */
    struct fake_device a, b, c;
    struct vast_pool *pa = fake_pool_open(&a, PG, 16, 16), *pb = fake_pool_open(&b, PG, 16, 16),
                     *pc = fake_pool_open(&c, PG, 16, 16);
    assert_non_null(pa);
    assert_non_null(pb);
    assert_non_null(pc);
    a.pin_domain = b.pin_domain = &ctx;
    c.pin_domain = &other_ctx;
    struct vast_backing *store = new_store(4 * GRAN);
    struct vast_pc_buffer *ba, *bb, *bc;
    assert_int_equal(pagecache_create_buffer(pa, store, &ba), 0);
    assert_int_equal(pagecache_create_buffer(pb, store, &bb), 0);
    assert_int_equal(pagecache_create_buffer(pc, store, &bc), 0);
    size_t per = GRAN / PG;
    assert_int_equal(pagecache_make_resident(ba, 0, per, 0, NULL), 0); /* granule 0, through a */
    assert_int_equal(a.pins, 1);
    assert_int_equal(a.pinned_writes, a.writes);
    assert_int_equal(pagecache_make_resident(bb, 0, 2 * per, 0, NULL), 0); /* 0 pinned; 1 pinned through a */
    assert_int_equal(b.pin_calls, 0);
    assert_int_equal(a.pins, 2);
    assert_true(b.writes > 0);
    assert_int_equal(b.pinned_writes, b.writes);
    assert_int_equal(pagecache_make_resident(bc, 0, 2 * per, 0, NULL), 0); /* another domain */
    assert_int_equal(c.pin_calls, 0);
    assert_true(c.writes > 0);
    assert_int_equal(c.pinned_writes, 0);
    b.pin_domain = NULL; /* none: b no longer shares a's pins */
    assert_null(pagecache_pin_backing(store, &fake_device_ops, &b, 0, 1));
    b.pin_domain = &ctx;
    assert_non_null(pagecache_pin_backing(store, &fake_device_ops, &b, 0, 1));
    assert_int_equal(pagecache_release_buffer(ba), 0);
    assert_int_equal(pagecache_release_buffer(bb), 0);
    assert_int_equal(pagecache_release_buffer(bc), 0);
    pagecache_destroy_backing(store);
    assert_int_equal(a.unpins, 2); /* the pins are a's, undone through it */
    assert_int_equal(b.unpins + c.unpins, 0);
    pagecache_destroy_pool(pa);
    pagecache_destroy_pool(pb);
    pagecache_destroy_pool(pc);
}

struct loader {
    struct vast_pc_buffer *buf;
    int order;              /* 0: descending granules, 1: a stride through them from 0 */
    size_t n;               /* granules (odd stride 13: each one visited once) */
    size_t first, count;    /* order 2: these pages only */
    _Atomic int done;
};

static void *load_main(void *arg)
{
    struct loader *l = arg;
    size_t pages_per_granule = GRAN / PG, n = l->n;
    if (l->order == 2) {
        int rc = pagecache_make_resident(l->buf, l->first, l->count, 0, NULL);
        atomic_store(&l->done, 1);
        return rc ? (void *)1 : NULL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t g = l->order ? (i * 13) % n : n - 1 - i;
        if (pagecache_make_resident(l->buf, g * pages_per_granule, 1, 0, NULL) != 0)
            return (void *)1;
    }
    atomic_store(&l->done, 1);
    return NULL;
}

/* (d) Transfers racing the worker: every granule gets exactly one pin_host call. */
static void test_transfers_race_worker(void **state)
{
    (void)state;
    struct fake_device dev;
    struct vast_pool *pool = fake_pool_open(&dev, PG, 256, 256);
    assert_non_null(pool);
    for (int iter = 0; iter < 20; iter++) {
        struct vast_backing *b = new_store(32 * GRAN);
        struct tracker t;
        track(&dev, &t, b);
        t.delay_us = 30;
        struct vast_pc_buffer *buf;
        assert_int_equal(pagecache_create_buffer(pool, b, &buf), 0);
        assert_int_equal(pagecache_pin_backing_in_background(b, &fake_device_ops, &dev), 0);
        struct loader l[2] = {{.buf = buf, .order = 0, .n = 32}, {.buf = buf, .order = 1, .n = 32}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_create(&th[i], NULL, load_main, &l[i]), 0);
        for (int i = 0; i < 2; i++) {
            void *rc;
            pthread_join(th[i], &rc);
            assert_null(rc);
        }
        pagecache_wait_background_pins();
        for (int g = 0; g < 32; g++)
            assert_int_equal(t.calls[g], 1);
        assert_int_equal(pagecache_backing_pinned_granules(b), 32);
        assert_int_equal(pagecache_release_buffer(buf), 0);
        pagecache_destroy_backing(b);
        assert_int_equal(dev.unpins, dev.pins);
        dev.on_pin = NULL;
    }
    pagecache_destroy_pool(pool);
}

/* (d) While the worker is inside pin_host for granule 0, a transfer on granule 5 (still on the
 * worker's list) goes on without pinning it, and a transfer on granule 0 goes on without
 * waiting for the worker's pin (both unpinned: the device stages them); the worker then pins
 * every granule once, and the bytes loaded are the store's. Before: the first transfer pinned
 * granule 5 itself and the second waited for the worker. */
static void test_transfers_never_wait_for_pins(void **state)
{
    (void)state;
    struct fake_device dev;
    struct vast_pool *pool = fake_pool_open(&dev, PG, 64, 64);
    assert_non_null(pool);
    struct vast_backing *b = new_store(8 * GRAN);
    unsigned char *host = pagecache_backing_base(b);
    for (size_t i = 0; i < 8 * GRAN; i++)
        host[i] = (unsigned char)(i * 7 + 3);
    struct tracker t;
    track(&dev, &t, b);
    t.hold_granule = 0;
    struct vast_pc_buffer *buf;
    assert_int_equal(pagecache_create_buffer(pool, b, &buf), 0);
    assert_int_equal(pagecache_pin_backing_in_background(b, &fake_device_ops, &dev), 0);
    assert_true(wait_flag(&t.held));
    /* held: the gate is opened before any assertion, so a failure cannot hang the exit */
    struct loader other = {.buf = buf, .order = 2, .first = 5 * GRAN / PG, .count = 2};
    struct loader same = {.buf = buf, .order = 2, .first = 0, .count = 2}; /* granule 0 */
    pthread_t th[2];
    assert_int_equal(pthread_create(&th[0], NULL, load_main, &other), 0);
    int other_went_on = wait_flag(&other.done);
    assert_int_equal(pthread_create(&th[1], NULL, load_main, &same), 0);
    int same_went_on = wait_flag(&same.done);
    unsigned granule5 = atomic_load(&t.calls[5]), granule0 = atomic_load(&t.calls[0]);
    atomic_store(&t.open, 1);
    void *rc[2];
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], &rc[i]);
    assert_true(other_went_on);
    assert_true(same_went_on);
    assert_int_equal(granule5, 0); /* left to the worker */
    assert_int_equal(granule0, 1); /* the worker's call only */
    assert_null(rc[0]);
    assert_null(rc[1]);
    pagecache_wait_background_pins();
    for (int g = 0; g < 8; g++)
        assert_int_equal(t.calls[g], 1);
    for (size_t pg = 0; pg < 2; pg++) { /* what the unpinned loads put on the device */
        assert_memory_equal(fake_frame_mem(pool, pagecache_page_frame(buf, pg)), host + pg * PG, PG);
        assert_memory_equal(fake_frame_mem(pool, pagecache_page_frame(buf, 5 * GRAN / PG + pg)),
                            host + 5 * GRAN + pg * PG, PG);
    }
    assert_int_equal(pagecache_release_buffer(buf), 0);
    pagecache_destroy_backing(b);
    assert_int_equal(dev.unpins, 8);
    pagecache_destroy_pool(pool);
}

/* The order of pin_host calls over two stores: which store (0, 1) and granule, in sequence. */
struct order {
    char *base[2];
    size_t size[2];
    _Atomic int n;
    int store[64], granule[64];
};

static void on_pin_order(struct fake_device *d, void *host, size_t bytes)
{
    (void)bytes;
    struct order *o = d->on_pin_ctx;
    char *p = host;
    for (int s = 0; s < 2; s++)
        if (p >= o->base[s] && p < o->base[s] + o->size[s]) {
            int i = atomic_fetch_add(&o->n, 1);
            if (i < 64) {
                o->store[i] = s;
                o->granule[i] = (int)((size_t)(p - o->base[s]) / GRAN);
            }
        }
    sleep_us(300);
}

/* (e) Two stores queued one after the other are pinned a granule of each in turn, so that a
 * launch over both finds the first granules of each pinned early (the store-by-store order had
 * the H100's first launch of saxpy waiting for y's first granules while x's last ones were
 * pinned): y's granule 0 comes before x's granule 2 (store by store: after x's granule 7). */
static void test_stores_in_turn(void **state)
{
    (void)state;
    struct fake_device dev;
    struct vast_pool *pool = fake_pool_open(&dev, PG, 16, 16);
    assert_non_null(pool);
    struct vast_backing *x = new_store(8 * GRAN), *y = new_store(8 * GRAN);
    struct order o = {.base = {pagecache_backing_base(x), pagecache_backing_base(y)}, .size = {8 * GRAN, 8 * GRAN}};
    dev.on_pin_ctx = &o;
    dev.on_pin = on_pin_order;
    assert_int_equal(pagecache_pin_backing_in_background(x, &fake_device_ops, &dev), 0);
    assert_int_equal(pagecache_pin_backing_in_background(y, &fake_device_ops, &dev), 0);
    pagecache_wait_background_pins();
    assert_int_equal(atomic_load(&o.n), 16);
    int y0 = -1, x2 = -1;
    for (int i = 0; i < 16; i++) {
        if (o.store[i] == 1 && o.granule[i] == 0)
            y0 = i;
        if (o.store[i] == 0 && o.granule[i] == 2)
            x2 = i;
    }
    if (!(y0 >= 0 && x2 >= 0 && y0 < x2))
        fail_msg("y's granule 0 pinned at position %d, x's granule 2 at %d", y0, x2);
    dev.on_pin = NULL;
    pagecache_destroy_backing(x);
    pagecache_destroy_backing(y);
    pagecache_destroy_pool(pool);
}

/* (f) While a transfer is inside pin_host (a store that is not queued: a transfer pins only
 * those), the worker starts no pin of its own (the driver pins one granule at a time: the
 * transfer's pin would share it): with the transfer's pin of `own`'s granule 12 held, the
 * worker's calls on the queued store stop (at most the one it was inside), and resume when it
 * ends. */
static void test_worker_yields_to_transfers(void **state)
{
    (void)state;
    struct fake_device dev;
    struct vast_pool *pool = fake_pool_open(&dev, PG, 64, 64);
    assert_non_null(pool);
    struct vast_backing *own = new_store(16 * GRAN), *queued = new_store(16 * GRAN);
    struct tracker t;
    track(&dev, &t, own);
    t.delay_us = 2000;
    t.hold_granule = 12;
    struct vast_pc_buffer *buf;
    assert_int_equal(pagecache_create_buffer(pool, own, &buf), 0);
    assert_int_equal(pagecache_pin_backing_in_background(queued, &fake_device_ops, &dev), 0);
    struct loader l = {.buf = buf, .order = 2, .first = 12 * GRAN / PG, .count = 1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, load_main, &l), 0);
    int held = wait_flag(&t.held);
    sleep_us(5000); /* the worker finishes the pin it was inside */
    unsigned long before = atomic_load(&dev.pin_calls);
    sleep_us(40000); /* 20 pins' time for a worker that does not yield */
    unsigned long after = atomic_load(&dev.pin_calls);
    atomic_store(&t.open, 1);
    void *rc;
    pthread_join(th, &rc);
    assert_true(held);
    assert_null(rc);
    if (after != before)
        fail_msg("the worker pinned %lu granules while a transfer was pinning", after - before);
    pagecache_wait_background_pins();
    assert_int_equal(pagecache_backing_pinned_granules(queued), 16);
    assert_int_equal(t.calls[12], 1);
    assert_int_equal(pagecache_release_buffer(buf), 0);
    pagecache_destroy_backing(own);
    pagecache_destroy_backing(queued);
    pagecache_destroy_pool(pool);
}

/* pagecache_backing_stage_rest: a store taken off the queue while the worker pins its first
 * granule keeps that one pin and gets no other, from the worker or from a transfer (which
 * stages); a store not queued yet is never queued after. pagecache_hold_background_pins: the
 * worker starts no granule while held, and pins the queue after. */
static void test_stage_rest_and_hold(void **state)
{
    (void)state;
    struct fake_device dev;
    fake_device_init(&dev);
    struct vast_backing *a = new_store(8 * GRAN), *b = new_store(4 * GRAN), *c = new_store(4 * GRAN);
    struct tracker t;
    track(&dev, &t, a);
    t.hold_granule = 0;
    assert_int_equal(pagecache_pin_backing_in_background(a, &fake_device_ops, &dev), 0);
    int held = wait_flag(&t.held);
    pagecache_backing_stage_rest(a);
    atomic_store(&t.open, 1);
    assert_true(held);
    pagecache_wait_background_pins();
    assert_int_equal(pagecache_backing_pinned_granules(a), 1);
    assert_null(pagecache_pin_backing(a, &fake_device_ops, &dev, 3 * GRAN, GRAN)); /* staged */
    assert_non_null(pagecache_pin_backing(a, &fake_device_ops, &dev, 0, GRAN)); /* the one it has */
    assert_int_equal(dev.pin_calls, 1);
    pagecache_backing_stage_rest(b); /* before its first queueing */
    assert_int_equal(pagecache_pin_backing_in_background(b, &fake_device_ops, &dev), 0);
    pagecache_wait_background_pins();
    assert_null(pagecache_pin_backing(b, &fake_device_ops, &dev, 0, 4 * GRAN));
    assert_int_equal(pagecache_backing_pinned_granules(b), 0);
    assert_int_equal(dev.pin_calls, 1);
    pagecache_hold_background_pins(1);
    assert_int_equal(pagecache_pin_backing_in_background(c, &fake_device_ops, &dev), 0);
    sleep_us(50000);
    int none_while_held = dev.pin_calls == 1;
    pagecache_hold_background_pins(-1);
    pagecache_wait_background_pins();
    assert_true(none_while_held);
    assert_int_equal(pagecache_backing_pinned_granules(c), 4);
    pagecache_destroy_backing(a);
    pagecache_destroy_backing(b);
    pagecache_destroy_backing(c);
    assert_int_equal(dev.unpins, dev.pins);
    dev.on_pin = NULL;
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_pinned_without_transfer, test_destroy_while_pinning, test_destroy_race, test_no_pin_host,
                 test_refused_pin_stops_store, test_transfers_race_worker, test_transfers_never_wait_for_pins,
                 test_stores_in_turn, test_worker_yields_to_transfers, test_pin_domain, test_stage_rest_and_hold)
