/*
 * vbuf.c: virtual buffers (see vbuf.h): creation with the specification's flag checks, the
 * device page cache of each root device, the host-side commands on the backing store (captured
 * at enqueue, run by the executor's host lane). The page cache's budget, page and chunk sizes
 * are chosen by pagecache_pool_shape (framepool.h) from the device's facts and the configuration.
 */
#include "vbuf.h"
#include "onqueue.h"

#include "../base/clock.h"
#include "../base/config.h"
#include "../base/trace.h"
#include "api.h"
#include "check.h"
#include "devops_opencl.h"
#include "executor.h"
#include "mem.h"
#include "pagecache.h"
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A mapping, made at enqueue (its pointer is known then) and listed on its buffer until an
 * unmap is enqueued; the map command makes the range coherent and sets `mapped`. */
struct vast_map {
    struct vast_map *next;
    void *ptr;
    size_t offset, size;
    int write, discard;
    _Atomic bool mapped;
    _Atomic int refs; /* the buffer's list (or the unmap command), and the map command */
};

struct vast_destructor_callback {
    struct vast_destructor_callback *next;
    void(CL_CALLBACK *fn)(cl_mem, void *);
    void *user_data;
};

cl_ulong vast_virtual_memory_bytes(void)
{
    const struct vast_config *cfg = vast_config_get();
    return cfg->memory ? cfg->memory : pagecache_host_memory_bytes();
}

cl_int vast_pc_error(int status)
{
    switch (status) {
    case VAST_PC_OK: return CL_SUCCESS;
    case VAST_PC_ERR_INVALID: return CL_INVALID_VALUE;
    case VAST_PC_ERR_HOST_MEMORY: return CL_OUT_OF_HOST_MEMORY;
    case VAST_PC_ERR_DEVICE_MEMORY: return CL_MEM_OBJECT_ALLOCATION_FAILURE;
    default: return CL_OUT_OF_RESOURCES;
    }
}

/* The overdraft of a device's pool (VAST_OVERDRAFT; pagecache/README.md "Overdraft"): auto is
 * 1/16 of the device's memory, at most what the budget leaves of it. */
static size_t pool_overdraft(cl_device_id dev, size_t budget)
{
    const char *text = vast_config_get()->overdraft;
    uint64_t bytes = 0;
    if (strcmp(text, "auto") != 0 && vast_parse_size(text, &bytes))
        return (size_t)bytes;
    if (strcmp(text, "auto") != 0)
        vast_warn("VAST_OVERDRAFT=%s is no size: auto is used", text);
    uint64_t mem = dev->real_global_mem, left = mem > budget ? mem - budget : 0;
    return (size_t)(mem / 16 < left ? mem / 16 : left);
}

static int pool_create(cl_device_id dev, cl_int *err)
{
    const struct vast_config *cfg = vast_config_get();
    struct vast_pool_shape shape =
        pagecache_pool_shape(dev->real_global_mem, dev->real_max_alloc, cfg->device_memory, cfg->page_size);
    size_t budget = shape.budget, page = shape.page_size, max_chunk = shape.max_chunk;
    const struct _cl_icd_dispatch *d = dev->backend->dispatch;
    dev->pool_queue = d->clCreateCommandQueue(dev->backend->shared, dev->real, 0, err);
    if (dev->pool_queue == NULL)
        return VAST_PC_ERR_DEVICE_MEMORY;
    /* VAST_PIN=0: stores are never pinned and transfers stage through pinned slots. */
    struct vast_staging_config staging = {.slot_bytes = cfg->staging_slot, .threads = (unsigned)cfg->staging_threads};
    pagecache_configure_host_copy(&(struct vast_host_copy_config){.threads = (unsigned)cfg->staging_threads});
    int st = pagecache_create_devops_opencl_staged(dev->backend->shared, dev->pool_queue,
                                                   cfg->pin ? 0 : VAST_DEVOPS_CL_NO_PIN, &staging, &dev->devops);
    if (st == VAST_PC_OK)
        st = pagecache_create_pool_overdraft(&vast_devops_opencl, dev->devops, budget, pool_overdraft(dev, budget),
                                             page, max_chunk, &dev->pool);
    if (st != VAST_PC_OK) {
        vast_error("cannot make the page cache of %s (budget %zu bytes, page %zu, chunk %zu): %s", dev->name,
                   budget, page, max_chunk, pagecache_status_string(st));
        *err = vast_pc_error(st);
        /* The next buffer tries again from nothing: nothing of this try may stay behind. */
        if (dev->devops != NULL)
            pagecache_destroy_devops_opencl(dev->devops);
        dev->devops = NULL;
        d->clReleaseCommandQueue(dev->pool_queue);
        dev->pool_queue = NULL;
        return st;
    }
    pagecache_configure_duplex(dev->pool, cfg->duplex_window); /* pagecache/README.md "Duplex" */
    if (vast_onqueue_init(dev) != CL_SUCCESS)
        vast_warn("%s: no memory for the list of kernels on applications' queues; launches go through VAST's "
                  "executor", dev->name);
    vast_stats_start();
    vast_info("page cache of %s: %zu MiB in %zu chunk(s), %zu KiB pages, overdraft %zu MiB", dev->name,
              dev->pool->nframes * page >> 20, dev->pool->nchunks, page >> 10, dev->pool->overdraft * page >> 20);
    return VAST_PC_OK;
}

struct vast_pool *vast_device_pool(cl_device_id dev, cl_int *err)
{
    pthread_mutex_lock(&dev->obj.lock);
    *err = CL_SUCCESS;
    if (dev->pool == NULL && dev->backend->shared != NULL)
        pool_create(dev, err);
    struct vast_pool *pool = dev->pool;
    if (pool == NULL && *err == CL_SUCCESS)
        *err = CL_OUT_OF_RESOURCES;
    pthread_mutex_unlock(&dev->obj.lock);
    return pool;
}

/* The index of the first occurrence of context device i (a device listed twice shares it). */
static cl_uint first_index(cl_context ctx, cl_uint i)
{
    cl_uint j = 0;
    while (ctx->members[j] != ctx->members[i])
        j++;
    return j;
}

struct vast_pc_buffer *vast_mem_pc(cl_mem m, cl_device_id dev)
{
    for (cl_uint i = 0; i < m->context->num_members; i++)
        if (m->context->members[i] == dev)
            return m->pcs[i];
    return m->pc;
}

static void views_release(cl_context ctx, struct vast_pc_buffer **pcs)
{
    for (cl_uint i = 0; pcs != NULL && i < ctx->num_members; i++) {
        if (pcs[i] == NULL || first_index(ctx, i) != i)
            continue;
        if (vast_config_get()->stats) { /* its traffic, before the page cache forgets it */
            uint64_t h2d, noload;
            pagecache_buffer_traffic(pcs[i], &h2d, &noload);
            fprintf(stderr, "vast: stats: buffer bytes=%zu device=\"%s\" h2d_bytes=%llu noload_bytes=%llu twin_bytes=%llu\n",
                    pagecache_buffer_size(pcs[i]), ctx->members[i]->name, (unsigned long long)h2d,
                    (unsigned long long)noload, (unsigned long long)pagecache_buffer_twin_bytes(pcs[i]));
        }
        int st = pagecache_release_buffer(pcs[i]);
        if (st != VAST_PC_OK)
            vast_error("releasing a virtual buffer's pages on %s: %s", ctx->members[i]->name,
                       pagecache_status_string(st));
    }
    free(pcs);
}

/* A root buffer over `backing` in the page cache of every device of the context, joined in
 * one group when there are several (pagecache/README.md "Several devices"). */
static int views_create(cl_context ctx, struct vast_backing *backing, struct vast_pc_buffer ***out, cl_int *err)
{
    struct vast_pc_buffer **pcs = calloc(ctx->num_members, sizeof *pcs);
    struct vast_pc_buffer **distinct = calloc(ctx->num_members, sizeof *distinct);
    size_t n = 0;
    int st = pcs && distinct ? VAST_PC_OK : VAST_PC_ERR_HOST_MEMORY;
    *err = CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; i < ctx->num_members && st == VAST_PC_OK; i++) {
        cl_uint j = first_index(ctx, i);
        if (j != i) {
            pcs[i] = pcs[j];
            continue;
        }
        struct vast_pool *pool = vast_device_pool(ctx->members[i], err);
        st = pool == NULL ? VAST_PC_ERR_DEVICE_MEMORY : pagecache_create_buffer(pool, backing, &pcs[i]);
        if (pool != NULL && st != VAST_PC_OK)
            *err = vast_pc_error(st);
        if (st == VAST_PC_OK)
            distinct[n++] = pcs[i];
    }
    if (st == VAST_PC_OK && (st = pagecache_share_backing(distinct, n)) != VAST_PC_OK)
        *err = vast_pc_error(st);
    /* A merged device's context: its members write the same page only where a merged launch
     * says so (merge.c, mark_twins), so pages are owned and twins are where it marks them. */
    if (st == VAST_PC_OK && n > 1 && ctx->num_devices == 1 && ctx->devices[0]->num_members > 1)
        pagecache_own_pages(distinct[0]);
    free(distinct);
    if (st != VAST_PC_OK) {
        views_release(ctx, pcs);
        pcs = NULL;
    }
    *out = pcs;
    return st;
}

static int count_bits(cl_mem_flags f) { return __builtin_popcountll(f); }

#define ACCESS_FLAGS (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)
#define HOST_FLAGS (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)
#define PTR_FLAGS (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)

static cl_int check_buffer_flags(cl_mem_flags flags, size_t size, void *host_ptr)
{
    VAST_RETURN_IF(flags & ~(ACCESS_FLAGS | HOST_FLAGS | PTR_FLAGS | CL_MEM_KERNEL_READ_AND_WRITE), CL_INVALID_VALUE,
                   "unknown flags 0x%llx", (unsigned long long)flags);
    VAST_RETURN_IF(count_bits(flags & ACCESS_FLAGS) > 1 || count_bits(flags & HOST_FLAGS) > 1, CL_INVALID_VALUE,
                   "conflicting access flags 0x%llx", (unsigned long long)flags);
    VAST_RETURN_IF((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)),
                   CL_INVALID_VALUE, "CL_MEM_USE_HOST_PTR with ALLOC_HOST_PTR or COPY_HOST_PTR");
    VAST_RETURN_IF(size == 0 || size > vast_virtual_memory_bytes(), CL_INVALID_BUFFER_SIZE,
                   "size %zu (the virtual device backs up to %llu)", size,
                   (unsigned long long)vast_virtual_memory_bytes());
    bool wants_ptr = (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) != 0;
    VAST_RETURN_IF(wants_ptr != (host_ptr != NULL), CL_INVALID_HOST_PTR, "host_ptr %p with flags 0x%llx",
                   host_ptr, (unsigned long long)flags);
    return CL_SUCCESS;
}

static void vbuf_destroy_obj(struct vast_object *obj);
static void map_put(struct vast_map *map);

static cl_mem vbuf_new(cl_context context, cl_mem parent, cl_mem_flags flags, size_t size)
{
    cl_mem m = vast_object_alloc(sizeof *m);
    if (m == NULL)
        return NULL;
    vast_object_init(&m->obj, VAST_MAGIC_MEM, vbuf_destroy_obj);
    m->context = context;
    m->parent = parent;
    m->flags = flags;
    m->size = size;
    VAST_RETAIN(context);
    if (parent != NULL)
        VAST_RETAIN(parent);
    return m;
}

cl_mem vast_vbuf_create(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret)
{
    cl_int err = check_buffer_flags(flags, size, host_ptr);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "buffer arguments");
    if ((flags & ACCESS_FLAGS) == 0)
        flags |= CL_MEM_READ_WRITE;
    struct vast_pool *pool = vast_device_pool(context->devices[0], &err);
    VAST_RETURN_NULL_IF(pool == NULL, err, errcode_ret, "no page cache");
    struct vast_backing *backing = NULL;
    int st = (flags & CL_MEM_USE_HOST_PTR) ? pagecache_wrap_backing(host_ptr, size, &backing)
                                           : pagecache_create_backing(size, vast_virtual_memory_bytes(), &backing);
    VAST_RETURN_NULL_IF(st != VAST_PC_OK, CL_MEM_OBJECT_ALLOCATION_FAILURE, errcode_ret,
                        "the host cannot back %zu bytes: %s", size, pagecache_status_string(st));
    if (flags & CL_MEM_COPY_HOST_PTR)
        memcpy(pagecache_backing_base(backing), host_ptr, size);
    pagecache_set_pin_granule(backing, vast_config_get()->pin_granule); /* before any pin */
    struct vast_pc_buffer **pcs = NULL;
    st = views_create(context, backing, &pcs, &err);
    cl_mem m = st == VAST_PC_OK ? vbuf_new(context, NULL, flags, size) : NULL;
    if (m == NULL) {
        views_release(context, pcs);
        pagecache_destroy_backing(backing);
        VAST_RETURN_NULL_IF(true, st != VAST_PC_OK ? err : CL_OUT_OF_HOST_MEMORY, errcode_ret,
                            "virtual buffer");
    }
    struct vast_pc_buffer *pc = pcs[0];
    m->pcs = pcs;
    m->pc = pc;
    m->backing = backing;
    m->home = context->devices[0];
    m->host_ptr = (flags & CL_MEM_USE_HOST_PTR) ? host_ptr : NULL;
    /* A buffer made from SVM memory is that memory: launches pass it as an SVM pointer
     * (launch.c), so it never gets pages and its store needs no pinning. */
    m->uses_svm = m->host_ptr != NULL && vast_svm_covers(context, host_ptr, size);
    /* Pin the store in the background rather than inside the first launch (~45-67 ms per GiB
     * on NVIDIA, FACTS.md). A store the worker cannot take is pinned by transfers. Memory
     * that holds data (the application's, or a copy of it) is queued now; a store of VAST's
     * own is queued at its first use (vast_vbuf_pin), because pinning a fresh mapping faults
     * its pages in: beside the application's first write into it the two fault the same
     * pages, and the driver holds its other calls while it pins. */
    bool pin = vast_config_get()->pin && vast_config_get()->pin_background && !m->uses_svm;
    bool later = pin && !(flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR));
    atomic_init(&m->pin_later, later);
    if (pin && !later)
        (void)pagecache_pin_backing_in_background(backing, pool->ops, pool->dev);
    vast_set_error(errcode_ret, CL_SUCCESS);
    return m;
}

/* A sub-buffer's flags: inherited where not given, never wider than the parent's. */
static cl_int sub_buffer_flags(cl_mem parent, cl_mem_flags *flags)
{
    cl_mem_flags f = *flags, p = parent->flags;
    VAST_RETURN_IF(f & PTR_FLAGS, CL_INVALID_VALUE, "sub-buffers take no host pointer flags");
    VAST_RETURN_IF(f & ~(ACCESS_FLAGS | HOST_FLAGS), CL_INVALID_VALUE, "unknown flags");
    VAST_RETURN_IF(count_bits(f & ACCESS_FLAGS) > 1 || count_bits(f & HOST_FLAGS) > 1, CL_INVALID_VALUE,
                   "conflicting flags");
    if ((f & ACCESS_FLAGS) == 0)
        f |= p & ACCESS_FLAGS;
    VAST_RETURN_IF(((p & CL_MEM_WRITE_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) ||
                       ((p & CL_MEM_READ_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))),
                   CL_INVALID_VALUE, "sub-buffer access wider than its buffer's");
    if ((f & HOST_FLAGS) == 0)
        f |= p & HOST_FLAGS;
    VAST_RETURN_IF(((p & CL_MEM_HOST_WRITE_ONLY) && (f & CL_MEM_HOST_READ_ONLY)) ||
                       ((p & CL_MEM_HOST_READ_ONLY) && (f & CL_MEM_HOST_WRITE_ONLY)) ||
                       ((p & CL_MEM_HOST_NO_ACCESS) && (f & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))),
                   CL_INVALID_VALUE, "sub-buffer host access wider than its buffer's");
    *flags = f | (p & PTR_FLAGS);
    return CL_SUCCESS;
}

cl_mem vast_vbuf_create_sub(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type, const void *info,
                            cl_int *errcode_ret)
{
    VAST_RETURN_NULL_IF(buffer->parent != NULL, CL_INVALID_MEM_OBJECT, errcode_ret, "buffer is a sub-buffer");
    VAST_RETURN_NULL_IF(type != CL_BUFFER_CREATE_TYPE_REGION || info == NULL, CL_INVALID_VALUE, errcode_ret,
                        "buffer_create_type 0x%x, info %p", (unsigned)type, info);
    const cl_buffer_region *r = info;
    VAST_RETURN_NULL_IF(r->size == 0, CL_INVALID_BUFFER_SIZE, errcode_ret, "empty region");
    VAST_RETURN_NULL_IF(r->origin > buffer->size || buffer->size - r->origin < r->size, CL_INVALID_VALUE,
                        errcode_ret, "region %zu+%zu past the buffer's %zu bytes", r->origin, r->size, buffer->size);
    VAST_RETURN_NULL_IF(r->origin % buffer->home->base_align_bytes != 0, CL_MISALIGNED_SUB_BUFFER_OFFSET,
                        errcode_ret, "origin %zu not a multiple of %u", r->origin, buffer->home->base_align_bytes);
    cl_int err = sub_buffer_flags(buffer, &flags);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "flags");
    cl_context ctx = buffer->context;
    struct vast_pc_buffer **pcs = calloc(ctx->num_members, sizeof *pcs);
    int st = pcs ? VAST_PC_OK : VAST_PC_ERR_HOST_MEMORY;
    for (cl_uint i = 0; i < ctx->num_members && st == VAST_PC_OK; i++)
        st = first_index(ctx, i) != i ? (pcs[i] = pcs[first_index(ctx, i)], VAST_PC_OK)
                                      : pagecache_create_sub_buffer(buffer->pcs[i], r->origin, r->size, &pcs[i]);
    if (st != VAST_PC_OK)
        views_release(ctx, pcs);
    VAST_RETURN_NULL_IF(st != VAST_PC_OK, vast_pc_error(st), errcode_ret, "sub-buffer view");
    cl_mem m = vbuf_new(buffer->context, buffer, flags, r->size);
    if (m == NULL)
        views_release(ctx, pcs);
    VAST_RETURN_NULL_IF(m == NULL, CL_OUT_OF_HOST_MEMORY, errcode_ret, "sub-buffer");
    struct vast_pc_buffer *pc = pcs[0];
    m->pcs = pcs;
    m->pc = pc;
    m->home = buffer->home;
    m->offset = r->origin;
    m->host_ptr = buffer->host_ptr ? (char *)buffer->host_ptr + r->origin : NULL;
    vast_set_error(errcode_ret, CL_SUCCESS);
    return m;
}

static void vbuf_destroy_obj(struct vast_object *obj)
{
    cl_mem m = (cl_mem)obj;
    if (m->view.real != NULL)
        m->context->backend->dispatch->clReleaseMemObject(m->view.real);
    if (m->pcs != NULL)
        views_release(m->context, m->pcs);
    if (m->backing != NULL)
        pagecache_destroy_backing(m->backing);
    for (struct vast_map *p = m->maps, *next; p != NULL; p = next) {
        next = p->next;
        map_put(p);
    }
    if (m->parent != NULL)
        VAST_RELEASE(m->parent);
    VAST_RELEASE(m->context);
    /* The memory is gone: callbacks run last-registered first (the specification's order). */
    for (struct vast_destructor_callback *c = m->destructors, *next; c != NULL; c = next) {
        next = c->next;
        c->fn(m, c->user_data);
        free(c);
    }
}

cl_int vast_vbuf_add_destructor(cl_mem m, void(CL_CALLBACK *fn)(cl_mem, void *), void *user_data)
{
    struct vast_destructor_callback *c = malloc(sizeof *c);
    VAST_RETURN_IF(c == NULL, CL_OUT_OF_HOST_MEMORY, "callback");
    c->fn = fn;
    c->user_data = user_data;
    pthread_mutex_lock(&m->obj.lock);
    c->next = m->destructors;
    m->destructors = c;
    pthread_mutex_unlock(&m->obj.lock);
    return CL_SUCCESS;
}

cl_int vast_vbuf_info(cl_mem m, cl_mem_info param, size_t size, void *value, size_t *size_ret)
{
    cl_uint u = 0;
    cl_mem_properties none = 0;
    cl_bool svm = vast_mem_root(m)->uses_svm ? CL_TRUE : CL_FALSE;
    cl_mem_object_type type = CL_MEM_OBJECT_BUFFER;
    switch (param) {
    case CL_MEM_TYPE: return vast_info_answer(&type, sizeof type, size, value, size_ret);
    case CL_MEM_FLAGS: return vast_info_answer(&m->flags, sizeof m->flags, size, value, size_ret);
    case CL_MEM_SIZE: return vast_info_answer(&m->size, sizeof m->size, size, value, size_ret);
    case CL_MEM_HOST_PTR: return vast_info_answer(&m->host_ptr, sizeof m->host_ptr, size, value, size_ret);
    case CL_MEM_OFFSET: return vast_info_answer(&m->offset, sizeof m->offset, size, value, size_ret);
    case CL_MEM_CONTEXT: return vast_info_answer(&m->context, sizeof m->context, size, value, size_ret);
    case CL_MEM_ASSOCIATED_MEMOBJECT: return vast_info_answer(&m->parent, sizeof m->parent, size, value, size_ret);
    case CL_MEM_USES_SVM_POINTER: return vast_info_answer(&svm, sizeof svm, size, value, size_ret);
    case CL_MEM_PROPERTIES: return vast_info_answer(&none, m->empty_properties ? sizeof none : 0, size, value, size_ret);
    case CL_MEM_REFERENCE_COUNT:
        u = atomic_load(&m->obj.refcount);
        return vast_info_answer(&u, sizeof u, size, value, size_ret);
    case CL_MEM_MAP_COUNT:
        pthread_mutex_lock(&m->obj.lock);
        for (struct vast_map *p = m->maps; p != NULL; p = p->next)
            u++;
        pthread_mutex_unlock(&m->obj.lock);
        return vast_info_answer(&u, sizeof u, size, value, size_ret);
    default: VAST_FAIL(CL_INVALID_VALUE, "unknown memory object query 0x%x", (unsigned)param);
    }
}

static void map_put(struct vast_map *map)
{
    if (atomic_fetch_sub(&map->refs, 1) == 1)
        free(map);
}

/* Take a mapping off its buffer's list, dropping the list's reference, if it is still there. */
static void map_unlink(cl_mem m, struct vast_map *map)
{
    bool unlinked = false;
    pthread_mutex_lock(&m->obj.lock);
    for (struct vast_map **p = &m->maps; *p != NULL && !unlinked; p = &(*p)->next)
        if (*p == map) {
            *p = map->next;
            unlinked = true;
        }
    pthread_mutex_unlock(&m->obj.lock);
    if (unlinked)
        map_put(map);
}

static cl_int run_map(cl_mem m, struct vast_map *map)
{
    void *ptr;
    int st = pagecache_map(m->pc, map->offset, map->size, map->write, map->discard, &ptr);
    if (st == VAST_PC_OK) {
        atomic_store(&map->mapped, true);
        return CL_SUCCESS;
    }
    map_unlink(m, map); /* a failed mapping leaves the buffer's list, unless an unmap took it */
    return vast_pc_error(st);
}

static cl_int run_unmap(cl_mem m, struct vast_map *map)
{
    if (!atomic_load(&map->mapped))
        return CL_SUCCESS; /* its map failed: nothing to undo */
    return vast_pc_error(pagecache_unmap(m->pc, map->offset, map->size, map->write));
}

static bool uses_svm(cl_mem m) { return m != NULL && vast_mem_root(m)->uses_svm; }

void vast_vbuf_pin(cl_mem m)
{
    cl_mem r = m != NULL ? vast_mem_root(m) : NULL;
    if (r == NULL || r->backing == NULL || !atomic_load(&r->pin_later) || !atomic_exchange(&r->pin_later, false))
        return;
    cl_int err;
    struct vast_pool *pool = vast_device_pool(r->home, &err);
    if (pool != NULL) /* a store the worker cannot take is pinned by transfers */
        (void)pagecache_pin_backing_in_background(r->backing, pool->ops, pool->dev);
}

void vast_vbuf_stage(cl_mem m)
{
    cl_mem r = m != NULL ? vast_mem_root(m) : NULL;
    if (r == NULL || r->backing == NULL)
        return;
    atomic_store(&r->pin_later, false);
    pagecache_backing_stage_rest(r->backing);
}

cl_int vast_vbuf_svm_begin(cl_mem m, bool write)
{
    if (!uses_svm(m))
        return CL_SUCCESS;
    cl_command_queue q = m->home->pool_queue; /* real, on the shared context the memory is of */
    cl_api_clEnqueueSVMMap fn = VAST_REAL(m->home->backend, q, clEnqueueSVMMap);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clEnqueueSVMMap");
    return fn(q, CL_TRUE, CL_MAP_READ | (write ? CL_MAP_WRITE : 0), m->host_ptr, m->size, 0, NULL, NULL);
}

cl_int vast_vbuf_svm_end(cl_mem m)
{
    if (!uses_svm(m))
        return CL_SUCCESS;
    cl_command_queue q = m->home->pool_queue;
    const struct _cl_icd_dispatch *d = m->home->backend->dispatch;
    cl_api_clEnqueueSVMUnmap fn = VAST_REAL(m->home->backend, q, clEnqueueSVMUnmap);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clEnqueueSVMUnmap");
    cl_event ev = NULL;
    cl_int err = fn(q, m->host_ptr, 0, NULL, &ev);
    if (err == CL_SUCCESS) /* waits for this unmap only, not the page cache's transfers */
        err = d->clWaitForEvents(1, &ev);
    if (ev != NULL)
        d->clReleaseEvent(ev);
    return err;
}

static cl_int host_cmd_do(struct vast_host_cmd *c);

/* After a host-side command ran: the store it wrote holds data now (vast_vbuf_pin). A write
 * map's data comes at its unmap. */
static void host_cmd_pin(const struct vast_host_cmd *c)
{
    switch (c->op) {
    case VAST_HOST_WRITE:
    case VAST_HOST_FILL:
    case VAST_HOST_WRITE_RECT:
    case VAST_HOST_FROM_IMAGE: vast_vbuf_pin(c->a); break;
    case VAST_HOST_UNMAP: if (c->map->write) vast_vbuf_pin(c->a); break;
    case VAST_HOST_COPY:
    case VAST_HOST_COPY_RECT: vast_vbuf_pin(c->b); break;
    default: break;
    }
}

/* Executor side of the host-side commands (vast_vbuf_enqueue): the command, inside real SVM
 * maps of the buffers made from SVM memory (vast_vbuf_svm_begin). A map command keeps its
 * buffer's SVM map until its unmap command. */
static cl_int host_cmd_run(void *ctx, cl_command_queue exec_queue)
{
    (void)exec_queue;
    struct vast_host_cmd *c = ctx;
    /* Every device's writes that happen-before this command reach the host first. */
    cl_int err = c->a != NULL ? vast_vbuf_coherent(c->a, NULL, 0, c->a->size) : CL_SUCCESS;
    if (err == CL_SUCCESS && c->b != NULL)
        err = vast_vbuf_coherent(c->b, NULL, 0, c->b->size);
    if (err != CL_SUCCESS)
        return err;
    if (!uses_svm(c->a) && !uses_svm(c->b))
        return host_cmd_do(c);
    bool same = c->b != NULL && vast_mem_root(c->a) == vast_mem_root(c->b);
    bool a_written = c->op == VAST_HOST_WRITE || c->op == VAST_HOST_FILL || c->op == VAST_HOST_WRITE_RECT ||
                     c->op == VAST_HOST_FROM_IMAGE ||
                     (c->op == VAST_HOST_MAP && c->map->write) || same;
    bool held = c->op == VAST_HOST_UNMAP && atomic_load(&c->map->mapped); /* the map command's */
    err = c->op == VAST_HOST_UNMAP ? CL_SUCCESS : vast_vbuf_svm_begin(c->a, a_written);
    cl_mem b = same ? NULL : c->b;
    if (err != CL_SUCCESS)
        return err;
    err = vast_vbuf_svm_begin(b, true);
    if (err == CL_SUCCESS) {
        err = host_cmd_do(c);
        cl_int e2 = vast_vbuf_svm_end(b);
        err = err != CL_SUCCESS ? err : e2;
    }
    bool keep = c->op == VAST_HOST_MAP && err == CL_SUCCESS;
    if (!keep && (c->op != VAST_HOST_UNMAP || held)) {
        cl_int e2 = vast_vbuf_svm_end(c->a);
        err = err != CL_SUCCESS ? err : e2;
    }
    return err;
}

static cl_int host_cmd_switch(struct vast_host_cmd *c);

/* The command, as a span of the trace's host track (the application's reads and writes beside
 * the launches' pins and transfers), then the pin of the store it wrote (host_cmd_pin). */
static cl_int host_cmd_do(struct vast_host_cmd *c)
{
    static const char *const names[] = {
        [VAST_HOST_READ] = "read",           [VAST_HOST_WRITE] = "write",         [VAST_HOST_COPY] = "copy",
        [VAST_HOST_FILL] = "fill",           [VAST_HOST_READ_RECT] = "read rect", [VAST_HOST_WRITE_RECT] = "write rect",
        [VAST_HOST_COPY_RECT] = "copy rect", [VAST_HOST_MAP] = "map",             [VAST_HOST_UNMAP] = "unmap",
        [VAST_HOST_NOP] = "nop",             [VAST_HOST_TO_IMAGE] = "to image",   [VAST_HOST_FROM_IMAGE] = "from image",
    };
    uint64_t t0 = vast_trace_on() ? vast_now_ns() : 0;
    cl_int err = host_cmd_switch(c);
    if (t0 != 0)
        vast_trace_span(VAST_TRACK_HOST, names[c->op], t0, vast_now_ns(), "host command");
    if (err == CL_SUCCESS)
        host_cmd_pin(c);
    return err;
}

static cl_int host_cmd_switch(struct vast_host_cmd *c)
{
    switch (c->op) {
    case VAST_HOST_READ: return vast_pc_error(pagecache_read(c->a->pc, c->a_off, c->size, c->ptr));
    case VAST_HOST_WRITE: return vast_pc_error(pagecache_write(c->a->pc, c->a_off, c->size, c->ptr));
    case VAST_HOST_COPY: return vast_pc_error(pagecache_copy(c->b->pc, c->b_off, c->a->pc, c->a_off, c->size));
    case VAST_HOST_FILL:
        return vast_pc_error(pagecache_fill(c->a->pc, c->a_off, c->size, c->pattern, c->pattern_size));
    case VAST_HOST_READ_RECT: return vast_vbuf_read_rect(c->a, &c->ra, &c->rb, c->ptr);
    case VAST_HOST_WRITE_RECT: return vast_vbuf_write_rect(c->a, &c->ra, &c->rb, c->ptr);
    case VAST_HOST_COPY_RECT: return vast_vbuf_copy_rect(c->a, c->b, &c->ra, &c->rb);
    case VAST_HOST_MAP: return run_map(c->a, c->map);
    case VAST_HOST_UNMAP: return run_unmap(c->a, c->map);
    case VAST_HOST_NOP: return CL_SUCCESS;
    case VAST_HOST_TO_IMAGE:
    case VAST_HOST_FROM_IMAGE: return vast_image_host_copy(c);
    }
    return CL_INVALID_OPERATION;
}

/* Takes (hold) or drops the references a queued command keeps on its memory objects, so that
 * they outlive an application's release until the command has run. */
static void host_cmd_hold(struct vast_host_cmd *c, bool hold)
{
    cl_mem held[] = {c->a, c->b, c->image};
    for (size_t i = 0; i < sizeof held / sizeof *held; i++) {
        if (held[i] == NULL)
            continue;
        if (hold)
            VAST_RETAIN(held[i]);
        else
            VAST_RELEASE(held[i]);
    }
}

static void host_cmd_free(void *ctx)
{
    struct vast_host_cmd *c = ctx;
    if (c->map != NULL)
        map_put(c->map);
    host_cmd_hold(c, false);
    free(c);
}

#define HOST_OPS(type) {type, VAST_LANE_HOST, host_cmd_run, host_cmd_free, NULL}
static const struct vast_vcmd_ops host_ops[] = {
    [VAST_HOST_READ] = HOST_OPS(CL_COMMAND_READ_BUFFER),
    [VAST_HOST_WRITE] = HOST_OPS(CL_COMMAND_WRITE_BUFFER),
    [VAST_HOST_COPY] = HOST_OPS(CL_COMMAND_COPY_BUFFER),
    [VAST_HOST_FILL] = HOST_OPS(CL_COMMAND_FILL_BUFFER),
    [VAST_HOST_READ_RECT] = HOST_OPS(CL_COMMAND_READ_BUFFER_RECT),
    [VAST_HOST_WRITE_RECT] = HOST_OPS(CL_COMMAND_WRITE_BUFFER_RECT),
    [VAST_HOST_COPY_RECT] = HOST_OPS(CL_COMMAND_COPY_BUFFER_RECT),
    [VAST_HOST_MAP] = HOST_OPS(CL_COMMAND_MAP_BUFFER),
    [VAST_HOST_UNMAP] = HOST_OPS(CL_COMMAND_UNMAP_MEM_OBJECT),
    [VAST_HOST_NOP] = HOST_OPS(CL_COMMAND_MIGRATE_MEM_OBJECTS),
    [VAST_HOST_TO_IMAGE] = HOST_OPS(CL_COMMAND_COPY_BUFFER_TO_IMAGE),
    [VAST_HOST_FROM_IMAGE] = HOST_OPS(CL_COMMAND_COPY_IMAGE_TO_BUFFER),
};

/* The same commands reported as image commands (vast_host_cmd.type). */
static const struct vast_vcmd_ops image_typed_ops[] = {
    HOST_OPS(CL_COMMAND_READ_IMAGE),           HOST_OPS(CL_COMMAND_WRITE_IMAGE),
    HOST_OPS(CL_COMMAND_COPY_IMAGE),           HOST_OPS(CL_COMMAND_FILL_IMAGE),
    HOST_OPS(CL_COMMAND_COPY_IMAGE_TO_BUFFER), HOST_OPS(CL_COMMAND_COPY_BUFFER_TO_IMAGE),
};

static const struct vast_vcmd_ops *host_cmd_ops(const struct vast_host_cmd *c)
{
    for (size_t i = 0; c->type != 0 && i < sizeof image_typed_ops / sizeof *image_typed_ops; i++)
        if (image_typed_ops[i].type == c->type)
            return &image_typed_ops[i];
    return &host_ops[c->op];
}

cl_int vast_vbuf_enqueue(cl_command_queue q, const struct vast_host_cmd *cmd, bool blocking, cl_uint num_events,
                         const cl_event *wait_list, cl_event *event)
{
    struct vast_host_cmd *c = malloc(sizeof *c);
    if (c == NULL) {
        if (cmd->map != NULL)
            map_put(cmd->map);
        VAST_FAIL(CL_OUT_OF_HOST_MEMORY, "command");
    }
    *c = *cmd;
    host_cmd_hold(c, true);
    return vast_vcmd_submit(q, num_events, wait_list, host_cmd_ops(c), c, blocking, event);
}

void *vast_vbuf_enqueue_map(cl_command_queue q, cl_mem m, cl_map_flags flags, size_t offset, size_t size,
                            bool blocking, cl_uint num_events, const cl_event *wait_list, cl_event *event,
                            cl_int *errcode_ret)
{
    struct vast_map *map = malloc(sizeof *map);
    VAST_RETURN_NULL_IF(map == NULL, CL_OUT_OF_HOST_MEMORY, errcode_ret, "mapping");
    map->ptr = (char *)pagecache_buffer_host(m->pc) + offset; /* where the command will map it */
    map->offset = offset;
    map->size = size;
    map->write = (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0;
    map->discard = (flags & CL_MAP_WRITE_INVALIDATE_REGION) != 0;
    atomic_init(&map->mapped, false);
    atomic_init(&map->refs, 2); /* the buffer's list and the map command */
    pthread_mutex_lock(&m->obj.lock);
    map->next = m->maps;
    m->maps = map;
    pthread_mutex_unlock(&m->obj.lock);
    void *ptr = map->ptr;
    atomic_fetch_add(&map->refs, 1); /* ours, until the error path below is decided */
    struct vast_host_cmd c = {.op = VAST_HOST_MAP, .a = m, .map = map};
    cl_int err = vast_vbuf_enqueue(q, &c, blocking, num_events, wait_list, event);
    if (err != CL_SUCCESS)
        map_unlink(m, map); /* never enqueued, or failed while the application waited */
    map_put(map);
    vast_set_error(errcode_ret, err);
    return err == CL_SUCCESS ? ptr : NULL;
}

cl_int vast_vbuf_enqueue_unmap(cl_command_queue q, cl_mem m, void *ptr, cl_uint num_events, const cl_event *wait_list,
                               cl_event *event)
{
    pthread_mutex_lock(&m->obj.lock); /* the unmap command takes the list's reference */
    struct vast_map **p = &m->maps;
    while (*p != NULL && (*p)->ptr != ptr)
        p = &(*p)->next;
    struct vast_map *map = *p;
    if (map != NULL)
        *p = map->next;
    pthread_mutex_unlock(&m->obj.lock);
    VAST_RETURN_IF(map == NULL, CL_INVALID_VALUE, "%p is not a pointer mapped from this buffer", ptr);
    struct vast_host_cmd c = {.op = VAST_HOST_UNMAP, .a = m, .map = map};
    return vast_vbuf_enqueue(q, &c, false, num_events, wait_list, event);
}

/* Byte offset of row (y, z) of a rect, and the bounding range of the whole rect. */
static size_t rect_row(const struct vast_rect *r, size_t y, size_t z)
{
    return (r->origin[2] + z) * r->slice_pitch + (r->origin[1] + y) * r->row_pitch + r->origin[0];
}

static void rect_bounds(const struct vast_rect *r, size_t *lo, size_t *len)
{
    *lo = rect_row(r, 0, 0);
    *len = rect_row(r, r->region[1] - 1, r->region[2] - 1) + r->region[0] - *lo;
}

cl_int vast_vbuf_read_rect(cl_mem m, const struct vast_rect *buf, const struct vast_rect *host, void *ptr)
{
    size_t lo, len;
    rect_bounds(buf, &lo, &len);
    int st = pagecache_flush_range(m->pc, lo, len);
    if (st != VAST_PC_OK)
        return vast_pc_error(st);
    const char *base = pagecache_buffer_host(m->pc);
    for (size_t z = 0; z < buf->region[2]; z++)
        for (size_t y = 0; y < buf->region[1]; y++)
            memcpy((char *)ptr + rect_row(host, y, z), base + rect_row(buf, y, z), buf->region[0]);
    return CL_SUCCESS;
}

/* Host writes over a rect: the bounding range is flushed first, since the page cache drops
 * wholly covered pages on a host write and the rect may not cover every byte of them. */
static int begin_rect_write(cl_mem m, const struct vast_rect *r, struct vast_host_write **token)
{
    size_t lo, len;
    rect_bounds(r, &lo, &len);
    int st = pagecache_flush_range(m->pc, lo, len);
    return st == VAST_PC_OK ? pagecache_begin_host_write(m->pc, lo, len, token) : st;
}

cl_int vast_vbuf_write_rect(cl_mem m, const struct vast_rect *buf, const struct vast_rect *host, const void *ptr)
{
    struct vast_host_write *token;
    int st = begin_rect_write(m, buf, &token);
    if (st != VAST_PC_OK)
        return vast_pc_error(st);
    char *base = pagecache_buffer_host(m->pc);
    for (size_t z = 0; z < buf->region[2]; z++)
        for (size_t y = 0; y < buf->region[1]; y++)
            memcpy(base + rect_row(buf, y, z), (const char *)ptr + rect_row(host, y, z), buf->region[0]);
    return vast_pc_error(pagecache_end_host_write(token));
}

cl_int vast_vbuf_copy_rect(cl_mem src, cl_mem dst, const struct vast_rect *s, const struct vast_rect *d)
{
    size_t lo, len;
    rect_bounds(s, &lo, &len);
    int st = pagecache_flush_range(src->pc, lo, len);
    struct vast_host_write *token;
    if (st == VAST_PC_OK)
        st = begin_rect_write(dst, d, &token);
    if (st != VAST_PC_OK)
        return vast_pc_error(st);
    const char *from = pagecache_buffer_host(src->pc);
    char *to = pagecache_buffer_host(dst->pc);
    for (size_t z = 0; z < s->region[2]; z++)
        for (size_t y = 0; y < s->region[1]; y++)
            memmove(to + rect_row(d, y, z), from + rect_row(s, y, z), s->region[0]);
    return vast_pc_error(pagecache_end_host_write(token));
}

int vast_vbuf_pages(cl_mem m, size_t offset, size_t size, size_t *first, size_t *count)
{
    return pagecache_page_range(m->pc, offset, size, first, count);
}

cl_int vast_vbuf_coherent(cl_mem m, cl_device_id dev, size_t offset, size_t size)
{
    cl_context ctx = m->context;
    if (ctx->num_members < 2 || m->pcs == NULL)
        return CL_SUCCESS;
    struct vast_pc_buffer *own = dev != NULL ? vast_mem_pc(m, dev) : m->pc;
    for (cl_uint i = 0; i < ctx->num_members; i++) {
        if (first_index(ctx, i) != i || m->pcs[i] == own)
            continue;
        int st = pagecache_flush_range(m->pcs[i], offset, size);
        VAST_RETURN_IF(st != VAST_PC_OK, vast_pc_error(st), "writing back %s's pages: %s", ctx->members[i]->name,
                       pagecache_status_string(st));
    }
    int st = dev != NULL ? pagecache_refresh_range(own, offset, size) : VAST_PC_OK;
    VAST_RETURN_IF(st != VAST_PC_OK, vast_pc_error(st), "dropping stale pages on %s: %s", dev->name,
                   pagecache_status_string(st));
    return CL_SUCCESS;
}
