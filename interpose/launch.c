/*
 * launch.c: kernel launches on virtual buffers (see launch.h). A launch is a virtual command
 * (vbuf.h): it waits for the queue, pins every page of its buffer arguments in the device
 * page cache, runs, marks written pages dirty, unpins. The paged program is translated and
 * built once per program, on first need, for the launching device.
 */
#include "launch.h"

#include "../icd/config.h"
#include "api.h"
#include "check.h"
#include "devops_opencl.h"
#include "pagecache.h"
#include "platform.h"
#include "stats.h"
#include "translate.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

struct vast_arg {
    bool set;
    size_t size, capacity; /* capacity: bytes allocated at value, reused by later calls */
    void *value; /* the bytes given to the real kernel (real handles), NULL for __local */
    cl_mem vbuf; /* the virtual buffer the application passed, or NULL */
};

struct vast_launch_kernel {
    cl_uint num_args;
    struct vast_arg *args;
    cl_kernel paged; /* the real paged kernel, made on first paged launch */
};

struct vast_launch_program {
    bool tried;
    struct translate_result *tr;
    cl_program paged; /* real, on the shared context */
};

/* One virtual buffer argument of a launch: its pinned pages and where they live. */
struct bound_arg {
    cl_uint index;
    cl_mem m;
    size_t first, count;
    struct vast_frame_loc *locs;
    bool pinned;
};

static struct vast_launch_kernel *kernel_state(cl_kernel k)
{
    if (k->launch != NULL)
        return k->launch;
    cl_uint n = 0;
    const struct _cl_icd_dispatch *d = k->program->context->backend->dispatch;
    if (d->clGetKernelInfo(k->real, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL) != CL_SUCCESS)
        return NULL;
    struct vast_launch_kernel *s = calloc(1, sizeof *s);
    if (s != NULL && (s->args = calloc(n ? n : 1, sizeof *s->args)) == NULL) {
        free(s);
        s = NULL;
    }
    if (s != NULL)
        s->num_args = n;
    k->launch = s;
    return s;
}

cl_int vast_launch_record_arg(cl_kernel kernel, cl_uint index, size_t size, const void *real_value, cl_mem vbuf)
{
    pthread_mutex_lock(&kernel->obj.lock);
    struct vast_launch_kernel *s = kernel_state(kernel);
    cl_int err = s == NULL ? CL_OUT_OF_HOST_MEMORY : index >= s->num_args ? CL_INVALID_ARG_INDEX : CL_SUCCESS;
    if (err == CL_SUCCESS) {
        struct vast_arg *a = &s->args[index];
        if (real_value == NULL) { /* __local: a size and no value */
            free(a->value);
            a->value = NULL;
            a->capacity = 0;
        } else if (a->capacity < size) { /* applications set the same argument again and again */
            void *grown = realloc(a->value, size ? size : 1);
            if (grown == NULL) {
                err = CL_OUT_OF_HOST_MEMORY;
            } else {
                a->value = grown;
                a->capacity = size ? size : 1;
            }
        }
        if (err == CL_SUCCESS) {
            if (real_value != NULL)
                memcpy(a->value, real_value, size);
            a->set = true;
            a->size = size;
            a->vbuf = vbuf;
        }
    }
    pthread_mutex_unlock(&kernel->obj.lock);
    return err;
}

bool vast_launch_needs_vast(cl_kernel kernel)
{
    bool needs = false;
    pthread_mutex_lock(&kernel->obj.lock);
    for (cl_uint i = 0; kernel->launch != NULL && i < kernel->launch->num_args && !needs; i++)
        needs = kernel->launch->args[i].vbuf != NULL;
    pthread_mutex_unlock(&kernel->obj.lock);
    return needs;
}

cl_int vast_launch_clone(cl_kernel from, cl_kernel to)
{
    pthread_mutex_lock(&from->obj.lock);
    cl_int err = CL_SUCCESS;
    for (cl_uint i = 0; from->launch != NULL && i < from->launch->num_args && err == CL_SUCCESS; i++) {
        struct vast_arg *a = &from->launch->args[i];
        if (a->set)
            err = vast_launch_record_arg(to, i, a->size, a->value, a->vbuf);
    }
    pthread_mutex_unlock(&from->obj.lock);
    return err;
}

void vast_launch_kernel_free(cl_kernel kernel)
{
    struct vast_launch_kernel *s = kernel->launch;
    if (s == NULL)
        return;
    for (cl_uint i = 0; i < s->num_args; i++)
        free(s->args[i].value);
    if (s->paged != NULL)
        kernel->program->context->backend->dispatch->clReleaseKernel(s->paged);
    free(s->args);
    free(s);
}

void vast_launch_program_free(cl_program program)
{
    struct vast_launch_program *s = program->launch;
    if (s == NULL)
        return;
    if (s->paged != NULL)
        program->context->backend->dispatch->clReleaseProgram(s->paged);
    if (s->tr != NULL)
        translate_result_free(s->tr);
    free(s);
}

/* ---- the paged program ---- */

static void log_build_failure(struct vast_backend *be, cl_program real, cl_device_id dev, cl_program app)
{
    size_t size = 0;
    be->dispatch->clGetProgramBuildInfo(real, dev->real, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = calloc(1, size + 1);
    if (log != NULL)
        be->dispatch->clGetProgramBuildInfo(real, dev->real, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    vast_error("the paged variant of program %p does not build on %s:\n%.2000s", (void *)app, dev->name,
               log ? log : "");
    free(log);
}

/* Translate and build the program's paged variant once (program lock held). */
static void program_translate(cl_program p, cl_device_id dev, struct vast_launch_program *s)
{
    s->tried = true;
    if (p->source == NULL) {
        vast_warn("program %p was not created from source: its kernels cannot be paged", (void *)p);
        return;
    }
    size_t size;
    char *ext = vast_real_device_info(dev->backend, dev->real, CL_DEVICE_EXTENSIONS, &size);
    cl_bool images = CL_FALSE;
    dev->backend->dispatch->clGetDeviceInfo(dev->real, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    struct translate_options opts = {p->options, ext, images, NULL};
    if (translate_program(p->source, &opts, &s->tr) != 0) {
        vast_warn("program %p cannot be translated: %s", (void *)p, s->tr && s->tr->error ? s->tr->error : "?");
        free(ext);
        return;
    }
    free(ext);
    for (size_t i = 0; i < s->tr->num_diags; i++) {
        struct translate_diag *dg = &s->tr->diags[i];
        vast_warn("kernel '%s' cannot be paged: %s (%s:%u): %s", dg->kernel ? dg->kernel : "*", dg->construct,
                  dg->file ? dg->file : "?", dg->line, dg->message);
    }
    struct vast_backend *be = dev->backend;
    cl_int err;
    const char *src = s->tr->paged_source;
    s->paged = be->dispatch->clCreateProgramWithSource(be->shared, 1, &src, NULL, &err);
    if (s->paged != NULL &&
        be->dispatch->clBuildProgram(s->paged, 1, &dev->real, s->tr->build_options, NULL, NULL) != CL_SUCCESS) {
        log_build_failure(be, s->paged, dev, p);
        be->dispatch->clReleaseProgram(s->paged);
        s->paged = NULL;
    }
    vast_info("program %p translated in %.1f ms: %zu kernel(s)", (void *)p, s->tr->seconds * 1e3, s->tr->num_kernels);
}

/* The kernel's translation metadata and real paged kernel, or NULL (with the reason logged). */
static const struct translate_kernel *paged_kernel(cl_kernel k, cl_device_id dev, cl_kernel *real)
{
    cl_program p = k->program;
    pthread_mutex_lock(&p->obj.lock);
    if (p->launch == NULL)
        p->launch = calloc(1, sizeof *p->launch);
    struct vast_launch_program *s = p->launch;
    if (s != NULL && !s->tried)
        program_translate(p, dev, s);
    pthread_mutex_unlock(&p->obj.lock);
    const struct translate_kernel *tk = NULL;
    for (size_t i = 0; s != NULL && s->tr != NULL && i < s->tr->num_kernels && tk == NULL; i++)
        if (!strcmp(s->tr->kernels[i].name, k->name))
            tk = &s->tr->kernels[i];
    if (tk == NULL || !tk->paged_ok || s->paged == NULL)
        return NULL;
    if (k->launch->paged == NULL) {
        cl_int err;
        k->launch->paged = dev->backend->dispatch->clCreateKernel(s->paged, k->name, &err);
    }
    *real = k->launch->paged;
    return *real ? tk : NULL;
}

/* ---- residency ---- */

static void unbind(struct bound_arg *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (b[i].pinned)
            pagecache_unpin_range(b[i].m->pc, b[i].first, b[i].count);
        free(b[i].locs);
    }
    free(b);
}

/* Pin every page of every virtual buffer argument; *n bound. CL_OUT_OF_RESOURCES when they
 * cannot be resident together. */
static cl_int bind_args(cl_kernel k, struct vast_pool *pool, struct bound_arg **out, size_t *n)
{
    struct vast_launch_kernel *s = k->launch;
    struct bound_arg *b = calloc(s->num_args ? s->num_args : 1, sizeof *b);
    *out = b;
    *n = 0;
    VAST_RETURN_IF(b == NULL, CL_OUT_OF_HOST_MEMORY, "launch arguments");
    size_t total = 0;
    for (cl_uint i = 0; i < s->num_args; i++) {
        cl_mem m = s->args[i].vbuf;
        if (m == NULL)
            continue;
        VAST_RETURN_IF(!vast_object_is(m, VAST_MAGIC_MEM), CL_INVALID_MEM_OBJECT, "argument %u was released", i);
        struct bound_arg *a = &b[(*n)++];
        a->index = i;
        a->m = m;
        if (vast_vbuf_pages(m, 0, m->size, &a->first, &a->count) != 0)
            return CL_INVALID_MEM_OBJECT;
        total += a->count;
    }
    if (total > pool->nframes) {
        vast_error("kernel '%s' needs %zu MiB of buffers resident but the device budget is %zu MiB: partitioned "
                   "execution is not implemented yet (VAST_DEVICE_MEMORY)",
                   k->name, total * pool->page_size >> 20, pool->nframes * pool->page_size >> 20);
        vast_stats_launch(k->name, VAST_MODE_REFUSED, 0);
        return CL_OUT_OF_RESOURCES;
    }
    for (size_t i = 0; i < *n; i++) {
        struct bound_arg *a = &b[i];
        a->locs = malloc(a->count * sizeof *a->locs);
        VAST_RETURN_IF(a->locs == NULL, CL_OUT_OF_HOST_MEMORY, "page locations");
        int st = pagecache_make_resident(a->m->pc, a->first, a->count, VAST_PC_PIN, a->locs);
        if (st != VAST_PC_OK) {
            vast_error("kernel '%s': cannot make argument %u resident: %s", k->name, a->index,
                       pagecache_status_string(st));
            return st == VAST_PC_ERR_NO_FRAMES ? CL_OUT_OF_RESOURCES : vast_pc_error(st);
        }
        a->pinned = true;
    }
    return CL_SUCCESS;
}

static bool contiguous(const struct vast_pool *pool, const struct bound_arg *a)
{
    for (size_t p = 1; p < a->count; p++)
        if (a->locs[p].chunk != a->locs[0].chunk || a->locs[p].offset != a->locs[0].offset + p * pool->page_size)
            return false;
    return true;
}

/* Pages the launch may have written become dirty: every buffer not read-only to kernels,
 * narrowed by the translator's per-argument metadata where it is known. */
static void mark_written(struct bound_arg *b, size_t n, const struct translate_kernel *tk)
{
    for (size_t i = 0; i < n; i++) {
        bool may_write = !(b[i].m->flags & CL_MEM_READ_ONLY);
        if (tk != NULL && b[i].index < tk->num_args)
            may_write = may_write && (tk->args[b[i].index].access & TRANSLATE_WRITE);
        if (may_write)
            pagecache_mark_dirty(b[i].m->pc, b[i].first, b[i].count);
    }
}

struct launch_shape {
    cl_uint dims;
    const size_t *offset, *global, *local;
};

static cl_int run_direct(cl_command_queue q, cl_kernel k, struct vast_pool *pool, struct bound_arg *b, size_t n,
                         const struct launch_shape *sh)
{
    const struct _cl_icd_dispatch *d = q->context->backend->dispatch;
    cl_mem *views = calloc(n ? n : 1, sizeof *views);
    VAST_RETURN_IF(views == NULL, CL_OUT_OF_HOST_MEMORY, "views");
    cl_int err = CL_SUCCESS;
    for (size_t i = 0; i < n && err == CL_SUCCESS; i++) {
        cl_buffer_region r = {b[i].locs[0].offset + (b[i].m->offset & (pool->page_size - 1)), b[i].m->size};
        views[i] = d->clCreateSubBuffer(pagecache_devops_opencl_mem(b[i].locs[0].chunk), CL_MEM_READ_WRITE,
                                        CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
        if (err == CL_SUCCESS)
            err = d->clSetKernelArg(k->real, b[i].index, sizeof(cl_mem), &views[i]);
    }
    if (err == CL_SUCCESS)
        err = d->clEnqueueNDRangeKernel(q->real, k->real, sh->dims, sh->offset, sh->global, sh->local, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = d->clFinish(q->real);
    for (size_t i = 0; i < n; i++)
        if (views[i] != NULL)
            d->clReleaseMemObject(views[i]);
    free(views);
    return err;
}

/* The local size of a paged launch: the application's, the kernel's required one, or the
 * largest divisor of the first dimension up to 64 (the paged kernel needs an explicit one). */
static void paged_local_size(const struct _cl_icd_dispatch *d, cl_kernel paged, cl_device_id dev,
                             const struct launch_shape *sh, size_t local[3])
{
    for (cl_uint i = 0; i < 3; i++)
        local[i] = sh->local ? (i < sh->dims ? sh->local[i] : 1) : 1;
    if (sh->local != NULL)
        return;
    size_t reqd[3] = {0, 0, 0}, max = 64, kmax = 0;
    d->clGetKernelWorkGroupInfo(paged, dev->real, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof reqd, reqd, NULL);
    if (reqd[0] != 0) {
        memcpy(local, reqd, sizeof reqd);
        return;
    }
    if (d->clGetKernelWorkGroupInfo(paged, dev->real, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL) ==
            CL_SUCCESS && kmax > 0 && kmax < max)
        max = kmax;
    for (size_t l = max; l >= 1; l--)
        if (sh->global[0] % l == 0) {
            local[0] = l;
            break;
        }
}

/* A real buffer holding `bytes` copied from `host` (page table, scratch, fault log), written
 * on the launch's queue ahead of the kernel. Not CL_MEM_COPY_HOST_PTR: PoCL may fill such a
 * buffer lazily on another thread, and a kernel on it then read a zeroed page table
 * (measured: wrong results only with several PoCL threads). */
static cl_mem real_buffer(cl_command_queue q, size_t bytes, const void *host, cl_int *err)
{
    const struct _cl_icd_dispatch *d = q->context->backend->dispatch;
    cl_mem m = d->clCreateBuffer(q->context->backend->shared, CL_MEM_READ_WRITE, bytes, NULL, err);
    if (m != NULL && (*err = d->clEnqueueWriteBuffer(q->real, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL)) != CL_SUCCESS) {
        d->clReleaseMemObject(m);
        m = NULL;
    }
    return m;
}

#define FAULT_CAPACITY 1024u

struct paged_launch {
    cl_mem lpt, scratch, faults, constants[64];
    size_t nconstants;
};

/* The virtual layout (each buffer argument page-aligned from page 1) and its page table. */
static uint32_t *paged_layout(struct vast_pool *pool, struct bound_arg *b, size_t n, uint64_t *va, size_t *entries)
{
    size_t cursor = 1;
    for (size_t i = 0; i < n; i++)
        cursor += b[i].count;
    uint32_t *lpt = malloc(cursor * sizeof *lpt);
    if (lpt == NULL)
        return NULL;
    lpt[0] = TRANSLATE_NO_FRAME;
    cursor = 1;
    for (size_t i = 0; i < n; i++) {
        va[b[i].index] = (uint64_t)cursor * pool->page_size + (b[i].m->offset - b[i].first * pool->page_size);
        for (size_t p = 0; p < b[i].count; p++) {
            uint32_t f = b[i].locs[p].frame;
            lpt[cursor++] = (uint32_t)(f / pool->frames_per_chunk) << TRANSLATE_LPT_CHUNK_SHIFT |
                            (uint32_t)(f % pool->frames_per_chunk);
        }
    }
    *entries = cursor;
    return lpt;
}

/* Set the paged kernel's original arguments: virtual addresses for global pointers, real
 * copies for virtual buffers passed as __constant, recorded values for the rest. */
static cl_int paged_set_args(cl_command_queue q, cl_kernel k, cl_kernel pk, const struct translate_kernel *tk, const uint64_t *va,
                             struct paged_launch *pl)
{
    struct vast_backend *be = k->program->context->backend;
    cl_int err = CL_SUCCESS;
    for (cl_uint i = 0; i < k->launch->num_args && err == CL_SUCCESS; i++) {
        struct vast_arg *a = &k->launch->args[i];
        enum translate_arg_kind kind = i < tk->num_args ? tk->args[i].kind : TRANSLATE_ARG_SCALAR;
        if (kind == TRANSLATE_ARG_GLOBAL_POINTER) {
            VAST_RETURN_IF(a->vbuf == NULL && a->value != NULL && *(void *const *)a->value != NULL,
                           CL_INVALID_KERNEL_ARGS, "argument %u of '%s' is not a buffer of this context", i, k->name);
            err = be->dispatch->clSetKernelArg(pk, i, sizeof(cl_ulong), &va[i]);
        } else if (a->vbuf != NULL) { /* __constant: a real copy of the buffer */
            VAST_RETURN_IF(pl->nconstants == 64, CL_OUT_OF_RESOURCES, "too many __constant buffers");
            int st = pagecache_flush_range(a->vbuf->pc, 0, a->vbuf->size);
            VAST_RETURN_IF(st != VAST_PC_OK, vast_pc_error(st), "flush of a __constant argument");
            cl_mem c = real_buffer(q, a->vbuf->size, pagecache_buffer_host(a->vbuf->pc), &err);
            if (c != NULL) {
                pl->constants[pl->nconstants++] = c;
                err = be->dispatch->clSetKernelArg(pk, i, sizeof c, &c);
            }
        } else if (a->set) {
            err = be->dispatch->clSetKernelArg(pk, i, a->size, a->value);
        }
    }
    return err;
}

static cl_int paged_set_abi(cl_kernel k, cl_kernel pk, struct vast_pool *pool, struct paged_launch *pl,
                            size_t entries, const struct launch_shape *sh, size_t groups)
{
    const struct _cl_icd_dispatch *d = k->program->context->backend->dispatch;
    cl_uint n = k->launch->num_args;
    cl_int err = d->clSetKernelArg(pk, n++, sizeof(cl_mem), &pl->lpt);
    for (size_t c = 0; c < TRANSLATE_MAX_POOL_CHUNKS && err == CL_SUCCESS; c++) {
        cl_mem chunk = pagecache_devops_opencl_mem(pool->chunks[c < pool->nchunks ? c : 0]);
        err = d->clSetKernelArg(pk, n++, sizeof chunk, &chunk);
    }
    cl_ulong4 gsize = {{1, 1, 1, 0}}, goff = {{0, 0, 0, 0}};
    for (cl_uint i = 0; i < sh->dims; i++) {
        gsize.s[i] = sh->global[i];
        goff.s[i] = sh->offset ? sh->offset[i] : 0;
    }
    cl_ulong4 cfg = {{pool->page_shift, entries, 0, groups}};
    if (err == CL_SUCCESS)
        err = d->clSetKernelArg(pk, n++, sizeof(cl_mem), &pl->scratch);
    if (err == CL_SUCCESS)
        err = d->clSetKernelArg(pk, n++, sizeof(cl_mem), &pl->faults);
    if (err == CL_SUCCESS)
        err = d->clSetKernelArg(pk, n++, sizeof gsize, &gsize);
    if (err == CL_SUCCESS)
        err = d->clSetKernelArg(pk, n++, sizeof goff, &goff);
    if (err == CL_SUCCESS)
        err = d->clSetKernelArg(pk, n++, sizeof cfg, &cfg);
    return err;
}

static cl_int run_paged(cl_command_queue q, cl_kernel k, struct vast_pool *pool, struct bound_arg *b, size_t n,
                        const struct translate_kernel *tk, cl_kernel pk, const struct launch_shape *sh)
{
    struct vast_backend *be = q->context->backend;
    const struct _cl_icd_dispatch *d = be->dispatch;
    VAST_RETURN_IF(pool->nchunks > TRANSLATE_MAX_POOL_CHUNKS, CL_OUT_OF_RESOURCES,
                   "the page cache has %zu chunks; paged kernels address %d", pool->nchunks, TRANSLATE_MAX_POOL_CHUNKS);
    uint64_t *va = calloc(k->launch->num_args ? k->launch->num_args : 1, sizeof *va);
    size_t entries = 0, local[3];
    uint32_t *lpt = va ? paged_layout(pool, b, n, va, &entries) : NULL;
    uint32_t *fault_log = calloc(TRANSLATE_FAULT_LOG_HEADER_WORDS + TRANSLATE_FAULT_ENTRY_WORDS * FAULT_CAPACITY, 4);
    void *zeros = calloc(TRANSLATE_SCRATCH_PAGES, pool->page_size);
    struct paged_launch pl = {0};
    cl_int err = (lpt && fault_log && zeros) ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    size_t fault_bytes = (TRANSLATE_FAULT_LOG_HEADER_WORDS + TRANSLATE_FAULT_ENTRY_WORDS * FAULT_CAPACITY) * 4;
    if (err == CL_SUCCESS) {
        fault_log[1] = FAULT_CAPACITY;
        pl.lpt = real_buffer(q, entries * sizeof *lpt, lpt, &err);
    }
    if (err == CL_SUCCESS)
        pl.scratch = real_buffer(q, TRANSLATE_SCRATCH_PAGES * pool->page_size, zeros, &err);
    if (err == CL_SUCCESS)
        pl.faults = real_buffer(q, fault_bytes, fault_log, &err);
    paged_local_size(d, pk, q->device, sh, local);
    size_t groups = 1;
    for (cl_uint i = 0; i < sh->dims; i++)
        groups *= sh->global[i] / local[i];
    if (err == CL_SUCCESS)
        err = paged_set_args(q, k, pk, tk, va, &pl);
    if (err == CL_SUCCESS)
        err = paged_set_abi(k, pk, pool, &pl, entries, sh, groups);
    if (err == CL_SUCCESS)
        err = d->clEnqueueNDRangeKernel(q->real, pk, sh->dims, sh->offset, sh->global, local, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = d->clEnqueueReadBuffer(q->real, pl.faults, CL_TRUE, 0, 4, fault_log, 0, NULL, NULL);
    if (err == CL_SUCCESS && fault_log[0] != 0)
        vast_warn("kernel '%s' accessed %u page(s) outside its buffers (out of bounds): those loads read 0 and "
                  "the work-groups' later stores were dropped", k->name, fault_log[0]);
    cl_mem owned[3] = {pl.lpt, pl.scratch, pl.faults};
    for (size_t i = 0; i < 3; i++)
        if (owned[i] != NULL)
            d->clReleaseMemObject(owned[i]);
    for (size_t i = 0; i < pl.nconstants; i++)
        d->clReleaseMemObject(pl.constants[i]);
    free(zeros);
    free(fault_log);
    free(lpt);
    free(va);
    return err;
}

static cl_int launch_bound(cl_command_queue q, cl_kernel k, struct vast_pool *pool, struct bound_arg *b, size_t n,
                           const struct launch_shape *sh)
{
    bool force = vast_config_get()->force_paged, all_contiguous = true;
    for (size_t i = 0; i < n; i++)
        all_contiguous = all_contiguous && contiguous(pool, &b[i]);
    const struct translate_kernel *tk = NULL;
    cl_kernel pk = NULL;
    if (force || !all_contiguous)
        tk = paged_kernel(k, q->device, &pk);
    cl_int err;
    cl_ulong t0 = vast_now_ns();
    enum vast_launch_mode mode = VAST_MODE_REFUSED;
    if (tk != NULL) {
        mode = VAST_MODE_PAGED;
        err = run_paged(q, k, pool, b, n, tk, pk, sh);
    } else if (all_contiguous) {
        if (force)
            vast_info("kernel '%s' has no paged variant: it runs direct despite VAST_FORCE_PAGED", k->name);
        mode = VAST_MODE_DIRECT;
        err = run_direct(q, k, pool, b, n, sh);
    } else {
        vast_error("kernel '%s': its buffers are resident but not contiguous, and it has no paged variant", k->name);
        err = CL_OUT_OF_RESOURCES;
    }
    vast_stats_launch(k->name, mode, (vast_now_ns() - t0) * 1e-9);
    if (err == CL_SUCCESS)
        mark_written(b, n, tk);
    return err;
}

cl_int vast_launch_ndrange(cl_command_queue q, cl_kernel k, cl_uint work_dim, const size_t *offset,
                           const size_t *global, const size_t *local, cl_uint num_events, const cl_event *wait_list,
                           cl_event *event)
{
    VAST_CHECK(q, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_RETURN_IF(k->program->context != q->context, CL_INVALID_CONTEXT, "kernel and queue of different contexts");
    VAST_RETURN_IF(work_dim < 1 || work_dim > 3, CL_INVALID_WORK_DIMENSION, "work_dim %u", work_dim);
    VAST_RETURN_IF(global == NULL, CL_INVALID_GLOBAL_WORK_SIZE, "global_work_size is NULL");
    for (cl_uint i = 0; i < work_dim; i++) {
        VAST_RETURN_IF(global[i] == 0, CL_INVALID_GLOBAL_WORK_SIZE, "global_work_size[%u] is 0", i);
        VAST_RETURN_IF(local != NULL && (local[i] == 0 || global[i] % local[i]), CL_INVALID_WORK_GROUP_SIZE,
                       "local_work_size[%u] = %zu does not divide %zu", i, local ? local[i] : 0, global[i]);
    }
    struct launch_shape sh = {work_dim, offset, global, local};
    cl_ulong queued = vast_now_ns();
    cl_int err = vast_vcmd_begin(q, num_events, wait_list);
    cl_ulong start = vast_now_ns();
    struct vast_pool *pool = err == CL_SUCCESS ? vast_device_pool(q->device, &err) : NULL;
    pthread_mutex_lock(&k->obj.lock); /* the argument record and the real kernels' arguments */
    struct bound_arg *b = NULL;
    size_t n = 0;
    if (pool != NULL)
        err = bind_args(k, pool, &b, &n);
    for (size_t i = 0; err == CL_SUCCESS && i < n; i++)
        if (b[i].m->home != q->device) {
            vast_error("kernel '%s': argument %u lives in the page cache of %s, the queue is on %s", k->name,
                       b[i].index, b[i].m->home->name, q->device->name);
            err = CL_INVALID_OPERATION;
        }
    if (err == CL_SUCCESS)
        err = launch_bound(q, k, pool, b, n, &sh);
    unbind(b, n);
    pthread_mutex_unlock(&k->obj.lock);
    return vast_vcmd_end(q, CL_COMMAND_NDRANGE_KERNEL, err, event, queued, start);
}
