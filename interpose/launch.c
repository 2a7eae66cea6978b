/*
 * launch.c: kernel launches on virtual buffers (see launch.h): the argument record, the
 * capture of a launch at enqueue time, the choice of mode, and direct mode. Paged and
 * partitioned execution live in paged.c (virtual space, kernel ABI), pas.c (page sets),
 * partition.c (the plan) and pipeline.c (the run); the real kernels of each variant in
 * variant.c. interpose/README.md walks a launch through them.
 */
#include "launch.h"
#include "onqueue.h"

#include "../base/config.h"
#include "launch_int.h"
#include "../base/clock.h"
#include "../base/trace.h"
#include "variant.h"
#include "api.h"
#include "chain.h"
#include "check.h"
#include "devops_opencl.h"
#include "executor.h"
#include "pagecache.h"
#include "platform.h"
#include "stats.h"
#include "translate.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct vast_launch_kernel {
    cl_uint num_args;
    struct vast_arg *args;
    struct vast_exec_info exec[VAST_EXEC_INFOS];
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

static cl_int record(cl_kernel kernel, cl_uint index, size_t size, const void *real_value, cl_mem vbuf,
                     struct vast_object *held, bool svm)
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
            a->held = held;
            a->svm = svm;
        }
    }
    pthread_mutex_unlock(&kernel->obj.lock);
    return err;
}

cl_int vast_launch_record_arg(cl_kernel kernel, cl_uint index, size_t size, const void *real_value, cl_mem vbuf,
                              struct vast_object *held)
{
    return record(kernel, index, size, real_value, vbuf, held, false);
}

cl_int vast_launch_record_svm(cl_kernel kernel, cl_uint index, const void *ptr)
{
    return record(kernel, index, sizeof ptr, &ptr, NULL, NULL, true);
}

/* Copy exec info `from` into the slot of its parameter in `to` (or a free one). */
static cl_int exec_info_put(struct vast_exec_info *to, cl_kernel_exec_info param, size_t size, const void *value)
{
    struct vast_exec_info *slot = NULL;
    for (int i = 0; i < VAST_EXEC_INFOS && slot == NULL; i++)
        if (to[i].size == 0 || to[i].param == param)
            slot = &to[i];
    VAST_RETURN_IF(slot == NULL, CL_OUT_OF_HOST_MEMORY, "more than %d kernel exec info parameters", VAST_EXEC_INFOS);
    void *copy = malloc(size ? size : 1);
    VAST_RETURN_IF(copy == NULL, CL_OUT_OF_HOST_MEMORY, "kernel exec info");
    memcpy(copy, value, size);
    free(slot->value);
    *slot = (struct vast_exec_info){param, size, copy};
    return CL_SUCCESS;
}

static void exec_info_free(struct vast_exec_info *e)
{
    for (int i = 0; i < VAST_EXEC_INFOS; i++)
        free(e[i].value);
}

cl_int vast_launch_record_exec_info(cl_kernel kernel, cl_kernel_exec_info param, size_t size, const void *value)
{
    pthread_mutex_lock(&kernel->obj.lock);
    struct vast_launch_kernel *s = kernel_state(kernel);
    cl_int err = s == NULL ? CL_OUT_OF_HOST_MEMORY : size == 0 ? CL_SUCCESS : exec_info_put(s->exec, param, size, value);
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
            err = record(to, i, a->size, a->value, a->vbuf, a->held, a->svm);
    }
    for (int i = 0; from->launch != NULL && i < VAST_EXEC_INFOS && err == CL_SUCCESS; i++)
        if (from->launch->exec[i].size != 0)
            err = vast_launch_record_exec_info(to, from->launch->exec[i].param, from->launch->exec[i].size,
                                               from->launch->exec[i].value);
    pthread_mutex_unlock(&from->obj.lock);
    return err;
}

void vast_launch_kernel_free(cl_kernel kernel)
{
    struct vast_launch_kernel *s = kernel->launch;
    vast_variant_kernel_free(kernel);
    vast_partition_forget(kernel);
    if (s == NULL)
        return;
    for (cl_uint i = 0; i < s->num_args; i++)
        free(s->args[i].value);
    free(s->args);
    exec_info_free(s->exec);
    free(s);
}

void vast_launch_program_free(cl_program program) { vast_variant_program_free(program); }
struct vast_launch_program *vast_launch_program_retire(cl_program program)
{
    return vast_variant_program_retire(program);
}
void vast_launch_program_unretire(cl_program program, struct vast_launch_program *s)
{
    vast_variant_program_unretire(program, s);
}

/* ---- capture ---- */

void vast_launch_cmd_free(struct vast_launch_cmd *cmd)
{
    if (cmd == NULL)
        return;
    vast_chain_cmd_free(cmd);
    for (cl_uint i = 0; cmd->args != NULL && i < cmd->num_args; i++) {
        struct vast_arg *a = &cmd->args[i];
        if (a->vbuf != NULL)
            VAST_RELEASE(a->vbuf);
        if (a->held != NULL)
            vast_object_release(a->held);
        free(a->value);
    }
    free(cmd->args);
    exec_info_free(cmd->exec);
    VAST_RELEASE(cmd->kernel);
    VAST_RELEASE(cmd->queue);
    free(cmd);
}

/* A buffer made from SVM memory (CL_MEM_USE_HOST_PTR over a clSVMAlloc allocation) is the
 * SVM memory itself: the kernel gets that memory as an SVM pointer, like the allocation, so
 * that its stores are in the SVM memory when the launch completes (SVM maps and copies, and
 * kernels given the allocation, see them) and never in a page cache copy. The buffer stays
 * retained (as the held object) until the launch is freed. */
static cl_int svm_buffer_arg(struct vast_arg *c)
{
    void *ptr = c->vbuf->host_ptr, *value = malloc(sizeof ptr);
    if (value == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    memcpy(value, &ptr, sizeof ptr);
    free(c->value);
    c->value = value;
    c->size = sizeof ptr;
    c->svm = true;
    if (c->held != NULL)
        vast_object_release(c->held);
    c->held = &c->vbuf->obj; /* takes over the reference */
    c->vbuf = NULL;
    return CL_SUCCESS;
}

/* Copy the argument record into cmd (kernel lock held): every argument must be set. */
static cl_int capture_args(struct vast_launch_cmd *cmd, struct vast_launch_kernel *s)
{
    cl_kernel k = cmd->kernel;
    VAST_RETURN_IF(s == NULL, CL_OUT_OF_HOST_MEMORY, "argument record of '%s'", k->name);
    cmd->args = calloc(s->num_args ? s->num_args : 1, sizeof *cmd->args);
    VAST_RETURN_IF(cmd->args == NULL, CL_OUT_OF_HOST_MEMORY, "launch arguments");
    cmd->num_args = s->num_args;
    for (cl_uint i = 0; i < s->num_args; i++) {
        const struct vast_arg *a = &s->args[i];
        struct vast_arg *c = &cmd->args[i];
        VAST_RETURN_IF(!a->set, CL_INVALID_KERNEL_ARGS, "argument %u of kernel '%s' is not set", i, k->name);
        VAST_RETURN_IF(a->vbuf != NULL && !vast_object_is(a->vbuf, VAST_MAGIC_MEM), CL_INVALID_KERNEL_ARGS,
                       "argument %u of kernel '%s' is a released buffer", i, k->name);
        VAST_RETURN_IF(a->held != NULL && !vast_registry_contains(a->held), CL_INVALID_KERNEL_ARGS,
                       "argument %u of kernel '%s' is a released object", i, k->name);
        c->set = true;
        c->size = a->size;
        if (a->value != NULL) {
            c->value = malloc(a->size ? a->size : 1);
            VAST_RETURN_IF(c->value == NULL, CL_OUT_OF_HOST_MEMORY, "launch arguments");
            memcpy(c->value, a->value, a->size);
        }
        c->svm = a->svm;
        if ((c->vbuf = a->vbuf) != NULL)
            VAST_RETAIN(c->vbuf);
        if ((c->held = a->held) != NULL)
            vast_object_retain(c->held);
        if (c->vbuf != NULL && vast_mem_root(c->vbuf)->uses_svm)
            VAST_RETURN_IF(svm_buffer_arg(c) != CL_SUCCESS, CL_OUT_OF_HOST_MEMORY, "launch arguments");
    }
    for (int i = 0; i < VAST_EXEC_INFOS; i++)
        if (s->exec[i].size != 0 && exec_info_put(cmd->exec, s->exec[i].param, s->exec[i].size, s->exec[i].value))
            return CL_OUT_OF_HOST_MEMORY;
    return CL_SUCCESS;
}

cl_int vast_launch_capture(cl_command_queue q, cl_kernel k, cl_uint work_dim, const size_t *offset,
                           const size_t *global, const size_t *local, struct vast_launch_cmd **out)
{
    *out = NULL;
    VAST_CHECK(q, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_CHECK(k, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    VAST_RETURN_IF(k->program->context != q->context, CL_INVALID_CONTEXT, "kernel and queue of different contexts");
    VAST_RETURN_IF(work_dim < 1 || work_dim > 3, CL_INVALID_WORK_DIMENSION, "work_dim %u", work_dim);
    VAST_RETURN_IF(global == NULL, CL_INVALID_GLOBAL_WORK_SIZE, "global_work_size is NULL");
    for (cl_uint i = 0; i < work_dim; i++) {
        VAST_RETURN_IF(global[i] == 0, CL_INVALID_GLOBAL_WORK_SIZE, "global_work_size[%u] is 0", i);
        VAST_RETURN_IF(local != NULL && (local[i] == 0 || global[i] % local[i]), CL_INVALID_WORK_GROUP_SIZE,
                       "local_work_size[%u] = %zu does not divide %zu", i, local ? local[i] : 0, global[i]);
    }
    struct vast_launch_cmd *cmd = calloc(1, sizeof *cmd);
    VAST_RETURN_IF(cmd == NULL, CL_OUT_OF_HOST_MEMORY, "launch");
    cmd->queue = q;
    cmd->dev = q->device;
    cmd->kernel = k;
    VAST_RETAIN(q);
    VAST_RETAIN(k);
    struct launch_shape *sh = &cmd->sh;
    sh->dims = work_dim;
    sh->local_given = local != NULL;
    for (cl_uint i = 0; i < 3; i++) {
        sh->offset[i] = offset != NULL && i < work_dim ? offset[i] : 0;
        sh->global[i] = i < work_dim ? global[i] : 1;
        sh->local[i] = local != NULL && i < work_dim ? local[i] : 1;
    }
    pthread_mutex_lock(&k->obj.lock);
    cl_int err = capture_args(cmd, kernel_state(k));
    pthread_mutex_unlock(&k->obj.lock);
    if (err != CL_SUCCESS) {
        vast_launch_cmd_free(cmd);
        return err;
    }
    *out = cmd;
    return CL_SUCCESS;
}

/* ---- direct mode ---- */

/* One virtual buffer argument pinned for a direct launch. */
struct bound_arg {
    cl_uint index;
    cl_mem m;
    struct vast_pc_buffer *pc; /* m's view in the launch's device's page cache */
    size_t first, count;
    struct vast_frame_loc *locs;
    bool pinned;
    bool transient; /* pinned with VAST_PC_TRANSIENT (launch_fast) */
    bool written;   /* the kernel may store to it (never judged by the memory flags) */
};

static void mark_written(struct bound_arg *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i].pinned && b[i].written)
            pagecache_mark_dirty(b[i].pc, b[i].first, b[i].count);
}

static void unbind(struct bound_arg *b, size_t n, bool dirty)
{
    if (dirty)
        mark_written(b, n);
    for (size_t i = 0; i < n; i++) {
        if (b[i].pinned && b[i].transient)
            pagecache_unpin_transient(b[i].pc, b[i].first, b[i].count);
        else if (b[i].pinned)
            pagecache_unpin_range(b[i].pc, b[i].first, b[i].count);
        free(b[i].locs);
    }
    free(b);
}

static bool contiguous(const struct vast_pool *pool, const struct bound_arg *a)
{
    for (size_t p = 1; p < a->count; p++)
        if (a->locs[p].chunk != a->locs[0].chunk || a->locs[p].offset != a->locs[0].offset + p * pool->page_size)
            return false;
    return true;
}

/* How bind_all places pages: where make_resident puts them, or each buffer as one run of
 * frames (pagecache_make_contiguous: the cheapest window, or packed from the pool's start);
 * BIND_RESIDENT: only where they are, all resident already, and BIND_LOADED: where they are
 * or where make_resident loads them, pinned for a kernel on the application's queue
 * (launch_fast). */
enum bind_place { BIND_ANYWHERE, BIND_RUN, BIND_RUN_PACKED, BIND_RESIDENT, BIND_LOADED };

static int pin_arg(struct bound_arg *a, enum bind_place place)
{
    if (place == BIND_ANYWHERE)
        return pagecache_make_resident(a->pc, a->first, a->count, VAST_PC_PIN, a->locs);
    a->transient = place == BIND_RESIDENT || place == BIND_LOADED;
    if (a->transient)
        return pagecache_make_resident(a->pc, a->first, a->count,
                                       VAST_PC_PIN | VAST_PC_TRANSIENT |
                                           (place == BIND_RESIDENT ? VAST_PC_RESIDENT_ONLY : 0),
                                       a->locs);
    return pagecache_make_contiguous(a->pc, a->first, a->count,
                                     VAST_PC_PIN | (place == BIND_RUN_PACKED ? VAST_PC_PACK : 0), a->locs);
}

static int larger_first(const void *x, const void *y)
{
    const struct bound_arg *a = x, *b = y;
    return a->count != b->count ? (a->count < b->count ? 1 : -1) : (a->index > b->index) - (a->index < b->index);
}

/* Pin every buffer argument; *all_contiguous when each is one run of frames in one chunk.
 * Runs are placed largest first, so that the small ones fill in around them. */
static cl_int bind_all(struct vast_launch_cmd *cmd, struct vast_pool *pool, struct bound_arg *b, size_t *n,
                       bool *all_contiguous, enum bind_place place)
{
    *n = 0;
    *all_contiguous = true;
    const struct translate_kernel *tk = vast_variant_meta_known(cmd->kernel); /* NULL: all written */
    for (cl_uint i = 0; i < cmd->num_args; i++) {
        cl_mem m = cmd->args[i].vbuf;
        if (m == NULL)
            continue;
        struct bound_arg *a = &b[(*n)++];
        a->index = i;
        a->m = m;
        a->pc = vast_mem_pc(m, cmd->queue->device);
        a->written = vast_variant_arg_written(tk, i);
        if (pagecache_page_range(a->pc, 0, m->size, &a->first, &a->count) != 0)
            return CL_INVALID_MEM_OBJECT;
        a->locs = malloc(a->count * sizeof *a->locs);
        VAST_RETURN_IF(a->locs == NULL, CL_OUT_OF_HOST_MEMORY, "page locations");
    }
    if (place == BIND_RUN || place == BIND_RUN_PACKED)
        qsort(b, *n, sizeof *b, larger_first);
    for (size_t i = 0; i < *n; i++) {
        struct bound_arg *a = &b[i];
        int st = pin_arg(a, place);
        if (st != VAST_PC_OK)
            return st == VAST_PC_ERR_NO_FRAMES ? CL_OUT_OF_RESOURCES : vast_pc_error(st);
        a->pinned = true;
        *all_contiguous = *all_contiguous && contiguous(pool, a);
    }
    return CL_SUCCESS;
}

/* Every argument but the virtual buffers, and the exec info, on the real kernel kr. */
static cl_int set_other_args(struct vast_launch_cmd *cmd, cl_kernel kr)
{
    struct vast_backend *be = cmd->queue->context->backend;
    cl_api_clSetKernelArgSVMPointer svm_fn = VAST_REAL(be, kr, clSetKernelArgSVMPointer);
    cl_api_clSetKernelExecInfo exec_fn = VAST_REAL(be, kr, clSetKernelExecInfo);
    cl_int err = CL_SUCCESS;
    for (cl_uint i = 0; i < cmd->num_args && err == CL_SUCCESS; i++) {
        const struct vast_arg *a = &cmd->args[i];
        if (a->svm)
            err = svm_fn != NULL ? svm_fn(kr, i, *(void *const *)a->value) : CL_INVALID_OPERATION;
        else if (a->vbuf == NULL)
            err = be->dispatch->clSetKernelArg(kr, i, a->size, a->value);
    }
    for (int i = 0; i < VAST_EXEC_INFOS && err == CL_SUCCESS; i++)
        if (cmd->exec[i].size != 0)
            err = exec_fn != NULL ? exec_fn(kr, cmd->exec[i].param, cmd->exec[i].size, cmd->exec[i].value)
                                  : CL_INVALID_OPERATION;
    return err;
}

/* A real sub-buffer of `chunk` at `origin` holding m's bytes (its pages are pinned there), with
 * a reference for the caller: the one made for m's last launch where its pages have not moved
 * (making, setting and releasing one of a 4 GiB buffer costs about 16 us on NVIDIA's OpenCL,
 * more than the launch itself: tests/bench/driver_costs.c). The bytes under a
 * cached view may have belonged to other pages meanwhile; the view is used only where they
 * are m's again, pinned. */
static cl_mem view_of(const struct _cl_icd_dispatch *d, cl_mem m, cl_mem chunk, size_t origin, cl_int *err)
{
    pthread_mutex_lock(&m->obj.lock);
    cl_mem v = m->view.real != NULL && m->view.chunk == chunk && m->view.origin == origin ? m->view.real : NULL;
    if (v != NULL)
        d->clRetainMemObject(v);
    pthread_mutex_unlock(&m->obj.lock);
    if (v != NULL) {
        *err = CL_SUCCESS;
        return v;
    }
    cl_buffer_region r = {origin, m->size};
    v = d->clCreateSubBuffer(chunk, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, err);
    if (v == NULL)
        return NULL;
    d->clRetainMemObject(v); /* the cache's reference */
    pthread_mutex_lock(&m->obj.lock);
    cl_mem old = m->view.real;
    m->view.real = v;
    m->view.chunk = chunk;
    m->view.origin = origin;
    pthread_mutex_unlock(&m->obj.lock);
    if (old != NULL)
        d->clReleaseMemObject(old);
    return v;
}

/* The application's own kernel on real sub-buffers of the pool's chunks, enqueued on rq;
 * *kev receives its real event. */
static cl_int enqueue_direct(struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                             const struct bound_arg *b, size_t n, cl_event *kev)
{
    const struct _cl_icd_dispatch *d = cmd->queue->context->backend->dispatch;
    cl_kernel kr = vast_variant_take(cmd->kernel, VAST_VARIANT_ORIGINAL, cmd->queue->device);
    cl_mem *views = calloc(n ? n : 1, sizeof *views);
    cl_int err = kr != NULL && views != NULL ? set_other_args(cmd, kr) : CL_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < n && err == CL_SUCCESS; i++) {
        views[i] = view_of(d, b[i].m, pagecache_devops_opencl_mem(b[i].locs[0].chunk),
                           b[i].locs[0].offset + (b[i].m->offset & (pool->page_size - 1)), &err);
        if (err == CL_SUCCESS)
            err = d->clSetKernelArg(kr, b[i].index, sizeof(cl_mem), &views[i]);
    }
    const struct launch_shape *sh = &cmd->sh;
    if (err == CL_SUCCESS)
        err = d->clEnqueueNDRangeKernel(rq, kr, sh->dims, sh->offset, sh->global, sh->local_given ? sh->local : NULL,
                                        0, NULL, kev);
    for (size_t i = 0; i < n; i++) /* the enqueued kernel keeps what it uses */
        if (views != NULL && views[i] != NULL)
            d->clReleaseMemObject(views[i]);
    free(views);
    if (kr != NULL)
        vast_variant_give(cmd->kernel, VAST_VARIANT_ORIGINAL, kr, cmd->queue->device);
    return err;
}

/* Direct mode on the executor: the kernel on its queue rq, waited for. */
static cl_int run_direct(struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                         struct bound_arg *b, size_t n, struct vast_launch_counters *c)
{
    const struct _cl_icd_dispatch *d = cmd->queue->context->backend->dispatch;
    uint64_t t0 = vast_now_ns();
    cl_event kev = NULL;
    cl_int err = enqueue_direct(cmd, rq, pool, b, n, &kev);
    if (err == CL_SUCCESS)
        err = d->clFinish(rq);
    uint64_t t1 = vast_now_ns(), k0 = t0, k1 = t1; /* device time where the queue profiles (the executor's does) */
    if (kev != NULL) {
        vast_kernel_span(d, kev, t0, &k0, &k1);
        d->clReleaseEvent(kev);
    }
    c->kernel_ns += k1 - k0;
    vast_trace_span(VAST_TRACK_KERNEL, cmd->kernel->name, t0, t1, "direct");
    return err;
}

/* Direct mode when every buffer fits and lands contiguous; *ran false when it does not apply. */
static cl_int try_direct(struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool, bool *ran,
                         struct vast_launch_counters *c)
{
    *ran = false;
    struct bound_arg *b = calloc(cmd->num_args ? cmd->num_args : 1, sizeof *b);
    VAST_RETURN_IF(b == NULL, CL_OUT_OF_HOST_MEMORY, "launch arguments");
    size_t n = 0;
    bool all_contiguous = false;
    cl_int err = bind_all(cmd, pool, b, &n, &all_contiguous, BIND_ANYWHERE);
    if (err == CL_SUCCESS && all_contiguous) {
        *ran = true;
        err = run_direct(cmd, rq, pool, b, n, c);
    } else if (err == CL_OUT_OF_RESOURCES) {
        err = CL_SUCCESS; /* other commands hold frames: the paged path pins less at a time */
    }
    unbind(b, n, *ran);
    return err;
}

/* Direct mode for a kernel that cannot be paged and whose buffers fit: each buffer is made
 * one run of frames, compacting the page cache (pagecache_make_contiguous), largest first;
 * where one finds no window, all again packed from the pool's start. Frames pinned by a
 * host-side command in flight are waited out for a while. */
static cl_int run_contiguous(struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                             struct vast_launch_counters *c)
{
    cl_int err = CL_OUT_OF_RESOURCES;
    for (int attempt = 0; attempt < 8 && err == CL_OUT_OF_RESOURCES; attempt++) {
        if (attempt >= 2) { /* pins of host-side commands go away; a launch's never stay */
            struct timespec ts = {0, 1000000L << (attempt - 2)};
            nanosleep(&ts, NULL);
        }
        struct bound_arg *b = calloc(cmd->num_args ? cmd->num_args : 1, sizeof *b);
        VAST_RETURN_IF(b == NULL, CL_OUT_OF_HOST_MEMORY, "launch arguments");
        size_t n = 0;
        bool all_contiguous = false;
        err = bind_all(cmd, pool, b, &n, &all_contiguous, attempt % 2 ? BIND_RUN_PACKED : BIND_RUN);
        bool ran = err == CL_SUCCESS && all_contiguous;
        if (ran)
            err = run_direct(cmd, rq, pool, b, n, c);
        else if (err == CL_SUCCESS)
            err = CL_OUT_OF_RESOURCES; /* cannot happen: make_contiguous makes runs */
        unbind(b, n, ran);
        if (ran)
            return err;
    }
    if (err == CL_OUT_OF_RESOURCES)
        vast_error("kernel '%s' cannot be paged and its buffers found no run of free or evictable frames in the "
                   "page cache (frames pinned by other commands)", cmd->kernel->name);
    return err;
}

/* ---- mode choice ---- */

/* Pages of every buffer argument. `run`: the launch runs now (its wait list and queue order
 * are behind it), so the writes of every device that happen-before it are brought to it
 * (vbuf.h); never at enqueue, where earlier commands may still hold the pages (pinned). */
static cl_int count_pages(struct vast_launch_cmd *cmd, size_t *total, bool run)
{
    *total = 0;
    for (cl_uint i = 0; i < cmd->num_args; i++) {
        cl_mem m = cmd->args[i].vbuf;
        size_t first, count;
        if (m == NULL)
            continue;
        cl_int err = run ? vast_vbuf_coherent(m, cmd->queue->device, 0, m->size) : CL_SUCCESS;
        if (err != CL_SUCCESS)
            return err;
        if (pagecache_page_range(vast_mem_pc(m, cmd->queue->device), 0, m->size, &first, &count) != 0)
            return CL_INVALID_MEM_OBJECT;
        *total += count;
    }
    return CL_SUCCESS;
}

/* Bytes a kernel moves through device memory per byte of its buffers above which it is bound
 * by its own work, not by the link: an H200 reads its memory at about 4.8 TB/s, 87 times one
 * PCIe 5 link's 55 GB/s (FACTS.md), and a kernel's traffic is estimated from its affine
 * accesses (translate_affine_traffic: caches make it faster than that), so the bound keeps a
 * margin. MatrixMul's tiles at n = 4096 move about 200 bytes per byte, at 8192 about 480;
 * saxpy 1.5, FDTD3d and the image filters under 16. */
#define KERNEL_BOUND_TRAFFIC 128.0

bool vast_launch_stage_if_kernel_bound(struct vast_paged *r, size_t total)
{
    struct vast_launch_cmd *cmd = r->cmd;
    double traffic = vast_launch_traffic(r), data = (double)total * (double)r->pool->page_size;
    if (traffic < KERNEL_BOUND_TRAFFIC * data)
        return false;
    pagecache_hold_background_pins(1);
    for (cl_uint i = 0; i < cmd->num_args; i++)
        vast_vbuf_stage(cmd->args[i].vbuf);
    r->c.kernel_bound++;
    vast_info("kernel '%s' moves %.0f bytes through device memory per byte of its buffers: what is not "
              "pinned of their stores is staged, and no pin runs during the launch", cmd->kernel->name, traffic / data);
    return true;
}

/* Resident paged (one partition of every page) or partitioned. */
static cl_int run_paged(struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                        const struct translate_kernel *tk, size_t total, enum vast_launch_mode *mode,
                        struct vast_launch_counters *c)
{
    struct vast_paged r;
    struct vast_partition *parts = NULL;
    size_t nparts = 0;
    uint64_t t0 = vast_now_ns();
    cl_int err = vast_paged_open(&r, cmd, rq, pool, tk);
    vast_trace_span(VAST_TRACK_PLAN, cmd->kernel->name, t0, vast_now_ns(), "open");
    r.pas = &vast_pas_launch;
    if (err == CL_SUCCESS && total <= pool->nframes) {
        *mode = VAST_MODE_PAGED;
        r.needs_restore = false; /* every page is in: a fault can only be out of bounds */
        parts = calloc(1, sizeof *parts);
        err = parts != NULL ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
        if (err == CL_SUCCESS) {
            nparts = 1;
            parts->end = r.total_groups;
            parts->set = vast_paged_all_pages(&r, &parts->count);
            err = parts->set != NULL ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
        }
    } else if (err == CL_SUCCESS) {
        *mode = VAST_MODE_PARTITIONED;
        /* Page sets may be incomplete (faults), so a kernel not safe to re-execute (atomics,
         * read-modify-write) gets its writable pages saved before each partition. */
        r.needs_restore = tk->may_be_non_idempotent;
        err = vast_partition_plan(&r, &parts, &nparts); /* no snapshot where the sets are exact */
    }
    bool held = err == CL_SUCCESS && *mode == VAST_MODE_PARTITIONED && vast_launch_stage_if_kernel_bound(&r, total);
    /* Faults may refuse it at run time (a work-group over the budget and its overdraft): its
     * written buffers are kept and put back then (pipeline.c, "nothing half done"). */
    struct vast_undo undo = {0};
    bool may_refuse = *mode == VAST_MODE_PARTITIONED && tk->data_dependent_addresses;
    if (err == CL_SUCCESS && may_refuse)
        err = vast_paged_undo_open(&r, &undo);
    /* identical launches queued behind this one run with it, partition by partition (chain.c;
     * the pipeline drops the chain when the plan's partitions share written pages) */
    bool carry = err == CL_SUCCESS && *mode == VAST_MODE_PARTITIONED && !may_refuse &&
                 vast_chain_may_carry(&r, parts, nparts);
    r.chain = carry ? vast_chain_led(cmd) : NULL;
    if (err == CL_SUCCESS)
        err = vast_paged_run(&r, parts, nparts);
    if (r.chain != NULL)
        vast_chain_end(cmd, true, err);
    if (held)
        pagecache_hold_background_pins(-1);
    vast_paged_undo_close(&r, &undo, err != CL_SUCCESS);
    vast_partitions_free(parts, nparts);
    r.c.build_ns += c->build_ns; /* c holds only the translation's build time so far */
    *c = r.c;
    vast_partition_close(&r); /* the inspector's state, kept from planning for splits */
    vast_paged_close(&r);
    return err;
}

/* The first argument that is SVM memory, or num_args. The paged kernel addresses the launch's
 * virtual space, not the SVM memory, so such a launch runs only direct. */
static cl_uint svm_arg(const struct vast_launch_cmd *cmd)
{
    cl_uint i = 0;
    while (i < cmd->num_args && !cmd->args[i].svm)
        i++;
    return i;
}

#define SVM_WHY "an argument is SVM memory, which only its own code can address"

/* Whether the buffers' page runs, largest first, fit the chunks first-fit: then
 * run_contiguous can always place them (each chunk holds at most frames_per_chunk frames). */
static bool runs_fit_chunks(const struct vast_launch_cmd *cmd, const struct vast_pool *pool)
{
    if (pool->nchunks == 1)
        return true;
    size_t *room = calloc(pool->nchunks, sizeof *room), *runs = calloc(cmd->num_args + 1, sizeof *runs), n = 0;
    bool fit = room != NULL && runs != NULL;
    for (size_t k = 0; fit && k < pool->nchunks; k++)
        room[k] = k + 1 < pool->nchunks ? pool->frames_per_chunk : pool->nframes - k * pool->frames_per_chunk;
    for (cl_uint i = 0; fit && i < cmd->num_args; i++) {
        size_t first;
        cl_mem m = cmd->args[i].vbuf;
        if (m != NULL && pagecache_page_range(vast_mem_pc(m, cmd->queue->device), 0, m->size, &first, &runs[n]) == 0)
            n++;
    }
    for (size_t i = 0; fit && i < n; i++) { /* selection of the largest left: n is small */
        size_t big = i;
        for (size_t j = i + 1; j < n; j++)
            big = runs[j] > runs[big] ? j : big;
        size_t t = runs[i], k = 0;
        runs[i] = runs[big], runs[big] = t;
        while (k < pool->nchunks && room[k] < runs[i])
            k++;
        fit = k < pool->nchunks;
        if (fit)
            room[k] -= runs[i];
    }
    free(room);
    free(runs);
    return fit;
}

/* Whether the launch can run without its paged variant: its buffers fit the budget, each
 * in one run of frames. */
static bool fits_direct(const struct vast_launch_cmd *cmd, const struct vast_pool *pool, size_t total)
{
    return total <= pool->nframes && runs_fit_chunks(cmd, pool);
}

/* The paged variant's metadata where the kernel can run paged on this pool, else NULL with
 * *why set; translates and builds on first call (its time goes to c->build_ns). */
static const struct translate_kernel *paged_meta(struct vast_launch_cmd *cmd, struct vast_pool *pool,
                                                 const char **why, struct vast_launch_counters *c)
{
    if (svm_arg(cmd) < cmd->num_args) {
        *why = SVM_WHY;
        return NULL;
    }
    uint64_t t0 = vast_now_ns();
    const struct translate_kernel *tk = vast_variant_meta(cmd->kernel, cmd->queue->device, why);
    c->build_ns += vast_now_ns() - t0;
    if (tk != NULL && pool->nchunks > TRANSLATE_MAX_POOL_CHUNKS) {
        *why = "the page cache has more chunks than paged kernels address";
        tk = NULL;
    }
    return tk;
}

/* The refusal of a launch that needs its paged variant and has none (logged). Sizes below
 * 1 MiB are given in KiB (pyopencl's arrays at a 256K budget are a few hundred KiB). */
static cl_int refuse(const struct vast_launch_cmd *cmd, const struct vast_pool *pool, size_t total, const char *why)
{
    size_t bytes = total * pool->page_size;
    vast_error("kernel '%s' needs its buffers (%zu %s) %s, but it cannot be paged: %s", cmd->kernel->name,
               bytes >= ((size_t)1 << 20) ? bytes >> 20 : bytes >> 10, bytes >= ((size_t)1 << 20) ? "MiB" : "KiB",
               total > pool->nframes ? "partitioned: they exceed the device budget (VAST_DEVICE_MEMORY)"
                                     : "each in one run of frames, larger than the page cache's chunks allow",
               why);
    return CL_OUT_OF_RESOURCES;
}

static cl_int execute(struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                      enum vast_launch_mode *mode, struct vast_launch_counters *c)
{
    cl_kernel k = cmd->kernel;
    size_t total;
    bool merged = cmd->queue->device->num_members > 1;
    cl_int err = count_pages(cmd, &total, !merged); /* merged: vast_merge_run makes its members coherent */
    if (err != CL_SUCCESS)
        return err;
    bool force = vast_config_get()->force_paged, ran = false;
    if (merged) { /* a merged device: every member takes partitions */
        const char *why = NULL;
        const struct translate_kernel *tk = paged_meta(cmd, pool, &why, c);
        if (tk != NULL && ((err = vast_merge_run(cmd, rq, pool, tk, total, mode, c, &ran)) != CL_SUCCESS || ran))
            return err;
        if ((err = count_pages(cmd, &total, true)) != CL_SUCCESS) /* the first member alone */
            return err;
    }
    if (total <= pool->nframes && !force) {
        *mode = VAST_MODE_DIRECT;
        err = try_direct(cmd, rq, pool, &ran, c);
        if (err != CL_SUCCESS || ran)
            return err;
    }
    const char *why = NULL;
    const struct translate_kernel *tk = paged_meta(cmd, pool, &why, c);
    if (tk == NULL && fits_direct(cmd, pool, total)) {
        if (force)
            vast_info("kernel '%s' has no paged variant: it runs direct despite VAST_FORCE_PAGED", k->name);
        *mode = VAST_MODE_DIRECT;
        return run_contiguous(cmd, rq, pool, c);
    }
    if (tk == NULL) { /* vast_launch_ndrange refused it already; kept for other callers */
        *mode = VAST_MODE_REFUSED;
        return refuse(cmd, pool, total, why);
    }
    return run_paged(cmd, rq, pool, tk, total, mode, c);
}

/* A launch that fails says so, whatever failed under it (the page cache, a buffer's backing
 * store, a driver call of the page cache, the inspector, a partition); a refusal logged its
 * reason already. VAST_MODE_COUNT: failed before a mode was decided. */
static cl_int launch_failed(const struct vast_launch_cmd *cmd, enum vast_launch_mode mode, cl_int err, const char *why)
{
    bool known = mode < VAST_MODE_REFUSED;
    if (err != CL_SUCCESS && mode != VAST_MODE_REFUSED)
        vast_error("kernel '%s': its %s%slaunch failed with error %d%s", cmd->kernel->name,
                   known ? vast_launch_mode_name(mode) : "", known ? " " : "", err, why);
    return err;
}

/* The launch runs: stores of its buffers still waiting for a first use go to the background
 * pinner (vast_vbuf_pin). */
static void pin_args(const struct vast_launch_cmd *cmd)
{
    for (cl_uint i = 0; i < cmd->num_args; i++)
        vast_vbuf_pin(cmd->args[i].vbuf);
}

cl_int vast_launch_execute(struct vast_launch_cmd *cmd, cl_command_queue rq)
{
    cl_int err;
    pin_args(cmd);
    struct vast_pool *pool = vast_device_pool(cmd->queue->device, &err);
    if (pool == NULL) {
        vast_chain_end(cmd, false, err);
        return launch_failed(cmd, VAST_MODE_COUNT, err, ": the device's page cache could not be made");
    }
    struct vast_launch_counters c = {0};
    if (vast_chain_ran(cmd, &err)) { /* its chain's leader ran it (chain.c) */
        c.chained = 1;
        vast_stats_launch(cmd->kernel->name, VAST_MODE_PARTITIONED, &c);
        return launch_failed(cmd, VAST_MODE_PARTITIONED, err, " (in its chain's leader's run)");
    }
    struct vast_pool_stats before, after;
    pagecache_get_pool_stats(pool, &before);
    uint64_t t0 = vast_now_ns();
    enum vast_launch_mode mode = VAST_MODE_COUNT; /* until execute decides */
    err = execute(cmd, rq, pool, &mode, &c);
    vast_trace_span(VAST_TRACK_PLAN, cmd->kernel->name, t0, vast_now_ns(), "launch");
    vast_chain_end(cmd, false, err); /* (a chain it carried ended in run_paged) */
    pagecache_get_pool_stats(pool, &after);
    c.total_ns = vast_now_ns() - t0;
    c.build_ns += cmd->admit.build_ns; /* planning at enqueue (launch_admit) */
    c.inspector_ns += cmd->admit.inspector_ns;
    c.plan_ns += cmd->admit.plan_ns;
    c.host_plans += cmd->admit.host_plans;
    c.h2d_bytes = after.h2d_bytes - before.h2d_bytes;
    c.d2h_bytes = after.d2h_bytes - before.d2h_bytes;
    vast_stats_launch(cmd->kernel->name, mode == VAST_MODE_COUNT ? VAST_MODE_REFUSED : mode, &c);
    return launch_failed(cmd, mode, err, "; the launch's event reports it");
}

/* Whether the planner's page sets would read buffer contents: a virtual buffer passed as
 * __constant gets a real copy of its data (paged.c, vast_paged_set_args), which the
 * inspector could load from; at enqueue that data may not be written yet. */
static bool plan_reads_data(const struct vast_launch_cmd *cmd, const struct translate_kernel *tk)
{
    for (cl_uint i = 0; i < cmd->num_args; i++)
        if (cmd->args[i].vbuf != NULL && (i >= tk->num_args || tk->args[i].kind != TRANSLATE_ARG_GLOBAL_POINTER))
            return true;
    return false;
}

/* The plan of a partitioned launch whose kernel's work-items meet (barriers or __local
 * memory: translate.h, work_group_bound), made at enqueue: such a kernel's work-groups
 * cannot run in slices, so one work-group that alone touches more pages than the budget
 * holds refuses the launch (partition.c, plan_over, logs why), and that is known from page
 * sets, which need no data: host sets from the launch's layout, scalars and NDRange, or the
 * inspector, which reads no buffer. The plan is kept on the kernel (vast_plan_cache_put), so
 * the executor finds it by its key instead of planning again (unless another launch of the
 * same kernel object was planned in between: then it plans again, with the same result); a
 * launch that finds its key kept (repeated launches) costs only the layout and the key.
 * On the application's thread, racing nothing of the device lane's: real kernels come from
 * the variant pools (never one another thread is setting), the inspector runs on a real
 * queue of admission's own, and no page table, fault log or page cache page is touched.
 * Other launches pay nothing: without meeting work-items an oversized work-group runs in
 * slices. Pages only faults show (data-dependent addresses) can still push a work-group
 * over the budget when the launch runs: that stays a failure of its event. */
static cl_int admit_plan(struct vast_launch_cmd *cmd, struct vast_pool *pool, const struct translate_kernel *tk)
{
    struct vast_paged r;
    struct vast_partition *parts = NULL;
    size_t n = 0;
    cl_int err = vast_paged_open_plan(&r, cmd, pool, tk), planned = CL_SUCCESS;
    r.pas = &vast_pas_launch;
    bool plan = err == CL_SUCCESS && !vast_plan_kept(&r);
    if (plan) /* the inspector makes itself a queue if it runs (vast_paged_plan_queue) */
        err = planned = vast_partition_plan(&r, &parts, &n);
    vast_partitions_free(parts, n);
    cmd->admit = r.c;
    cmd->planned = plan && err == CL_SUCCESS;
    vast_partition_close(&r);
    vast_paged_close(&r);
    if (err != CL_SUCCESS && planned != CL_OUT_OF_RESOURCES) /* not a refusal: the run plans again */
        vast_info("kernel '%s': no plan at enqueue (error %d); the launch plans when it runs", cmd->kernel->name, err);
    return planned == CL_OUT_OF_RESOURCES ? planned : CL_SUCCESS;
}

/* Refusals known at enqueue, decided before anything runs: a launch that needs its paged
 * variant (buffers beyond the budget, or runs the chunks cannot hold) and has none, or whose
 * work-items meet and one of whose work-groups alone exceeds the budget (admit_plan), gets
 * CL_OUT_OF_RESOURCES from clEnqueueNDRangeKernel itself, with the log line, rather than
 * as a late failure of its event, which an application meets at its next blocking call
 * (pyopencl takes a read failing with -5 for memory pressure and retries it, then reads
 * what the launch never wrote). The captured buffers, the budget and the program's
 * translation do not change between enqueue and execution, so execute() agrees. Translates
 * and builds the paged variant here when the launch needs it (once per program). */
static cl_int launch_admit(struct vast_launch_cmd *cmd)
{
    cl_int err;
    struct vast_pool *pool = vast_device_pool(cmd->queue->device, &err);
    size_t total;
    if (pool != NULL)
        err = count_pages(cmd, &total, false);
    if (err != CL_SUCCESS) { /* the page cache or a buffer's backing store could not be made */
        vast_error("kernel '%s': its launch failed at enqueue with error %d (%s)", cmd->kernel->name, err,
                   pool == NULL ? "the device's page cache" : "its buffers' pages");
        return err;
    }
    if (fits_direct(cmd, pool, total))
        return CL_SUCCESS;
    const char *why = NULL;
    struct vast_launch_counters c = {0};
    uint64_t t0 = vast_trace_on() ? vast_now_ns() : 0;
    const struct translate_kernel *tk = paged_meta(cmd, pool, &why, &c);
    if (t0 != 0)
        vast_trace_span(VAST_TRACK_PLAN, cmd->kernel->name, t0, vast_now_ns(), "admit: paged variant");
    cmd->admit.build_ns = c.build_ns; /* the translation and build here count in the run's statistics */
    if (tk != NULL && (total <= pool->nframes || !tk->work_group_bound || plan_reads_data(cmd, tk)))
        return CL_SUCCESS;
    if (tk != NULL) {
        err = admit_plan(cmd, pool, tk);
        cmd->admit.build_ns += c.build_ns;
        if (err == CL_SUCCESS)
            return err;
        c = cmd->admit;
    } else {
        err = refuse(cmd, pool, total, why);
    }
    vast_stats_launch(cmd->kernel->name, VAST_MODE_REFUSED, &c);
    return err;
}

/* ---- direct launches on the application's thread ---- */

/* A kernel launch_fast put on the application's queue, until VAST sees it ended (onqueue.h). */
struct fast_launch {
    struct vast_onqueue_item item; /* first: the item is the launch */
    struct vast_launch_cmd *cmd;
    struct bound_arg *b;
    size_t n;
    bool counted; /* in the queue's `submitted`: clFinish waits for fast_free */
};

static void fast_free(struct fast_launch *f)
{
    cl_command_queue q = f->counted ? f->cmd->queue : NULL;
    if (q != NULL)
        VAST_RETAIN(q);
    vast_launch_cmd_free(f->cmd);
    free(f);
    if (q != NULL) { /* clFinish waits for what the launch held to be released */
        vast_queue_reaped(q);
        VAST_RELEASE(q);
    }
}

/* The kernel ended (or failed): its pages may move again. */
static void fast_unpin(struct vast_onqueue_item *it)
{
    struct fast_launch *f = (struct fast_launch *)it;
    unbind(f->b, f->n, false);
    f->b = NULL;
}

static void fast_release(struct vast_onqueue_item *it) { fast_free((struct fast_launch *)it); }

/* Pages a launch on the application's thread may load there (launch_fast): its transfers
 * hold the executor's submissions back meanwhile (vast_executor_fast_begin), so the first
 * launch over large buffers goes to the executor's device lane as before. */
#define FAST_LOAD_MAX ((size_t)64 << 20)

/* Whether a launch may skip the executor: no wait list, direct mode (not forced paged, no
 * SVM argument), a context of one device (several need vast_vbuf_coherent when the command
 * runs), every buffer within the budget; *load: its pages may be loaded on the application's
 * thread (FAST_LOAD_MAX). */
static bool fast_candidate(const struct vast_launch_cmd *cmd, cl_uint num_events, const struct vast_pool *pool,
                           bool *load)
{
    if (num_events != 0 || vast_config_get()->force_paged || svm_arg(cmd) < cmd->num_args ||
        cmd->queue->context->num_members != 1 || !vast_onqueue_ready(cmd->queue->device) ||
        !vast_queue_waits_done(cmd->queue))
        return false;
    size_t total = 0;
    for (cl_uint i = 0; i < cmd->num_args; i++) {
        cl_mem m = cmd->args[i].vbuf;
        size_t first, count;
        if (m == NULL)
            continue;
        if (pagecache_page_range(vast_mem_pc(m, cmd->queue->device), 0, m->size, &first, &count) != 0)
            return false;
        total += count;
    }
    *load = total * pool->page_size <= FAST_LOAD_MAX;
    return total <= pool->nframes;
}

/*
 * Direct mode without the executor, for the common case of a kernel run again on buffers that
 * are resident already, or small enough to be loaded here (FAST_LOAD_MAX: CLBlast's test
 * programs launch on buffers they have just written, 1,080 launches of xgemv, each of which
 * crossed to the device lane): the application's own kernel goes straight onto its queue's
 * real queue, on real sub-buffers of the pool, as a driver would run it. Taken only while no
 * virtual command of the device is pending (vast_executor_fast_begin) and every event that
 * real commands of the queue wait for has completed (vast_queue_waits_done: a marker waiting
 * for a user event would hold the kernel back), so the real kernel waits for nothing VAST runs
 * and its pages, pinned until VAST sees it ended (onqueue.h: no callback per launch), never
 * hold up a command it waits for; commands short of frames meanwhile wait for those pins
 * (VAST_PC_TRANSIENT, the pool's reclaim hook). Later commands order after it as after any
 * real command of the queue (executor.c). Written pages are dirty from the enqueue on.
 * Returns false (nothing done) where it does not apply or the real enqueue failed; else *err
 * is the result of wrapping its event.
 */
static bool launch_fast(struct vast_launch_cmd *cmd, cl_uint num_events, cl_event *event, cl_int *err)
{
    cl_command_queue q = cmd->queue;
    struct vast_pool *pool = vast_device_pool(q->device, err);
    bool load = false;
    if (pool == NULL || !fast_candidate(cmd, num_events, pool, &load))
        return false;
    vast_onqueue_reap(q->device, NULL, VAST_REAP_HEAD, true); /* earlier ones that ended */
    pin_args(cmd);
    struct vast_executor *ex = vast_executor_fast_begin(q->device);
    if (ex == NULL)
        return false;
    struct fast_launch *f = calloc(1, sizeof *f);
    struct bound_arg *b = calloc(cmd->num_args ? cmd->num_args : 1, sizeof *b);
    size_t n = 0;
    bool contiguous = false;
    if (f == NULL || b == NULL ||
        bind_all(cmd, pool, b, &n, &contiguous, load ? BIND_LOADED : BIND_RESIDENT) != CL_SUCCESS || !contiguous) {
        vast_executor_fast_end(ex);
        if (b != NULL)
            unbind(b, n, false);
        free(f);
        return false;
    }
    uint64_t t0 = vast_now_ns();
    cl_event kev = NULL;
    const struct _cl_icd_dispatch *d = q->context->backend->dispatch;
    *err = enqueue_direct(cmd, q->real, pool, b, n, &kev);
    vast_queue_note_real(q);
    if (*err == CL_SUCCESS)
        mark_written(b, n);
    vast_executor_fast_end(ex);
    *f = (struct fast_launch){.item = {.real = kev, .queue = q, .unpin = fast_unpin, .release = fast_release},
                              .cmd = cmd,
                              .b = b,
                              .n = n};
    if (*err != CL_SUCCESS) { /* nothing enqueued: the executor runs it, and says what fails there */
        unbind(b, n, false);
        free(f);
        return false;
    }
    f->counted = true;
    struct vast_launch_counters c = {.on_queue = 1, .total_ns = vast_now_ns() - t0};
    vast_stats_launch(cmd->kernel->name, VAST_MODE_DIRECT, &c);
    if (event != NULL) {
        d->clRetainEvent(kev); /* the VAST event's reference */
        *err = vast_event_wrap_out(q, kev, event);
    }
    /* The item keeps kev's reference, and f belongs to whoever reaps it. Counted after it is
     * on the list: a clFinish that counts it finds it there (or reaped). */
    vast_onqueue_add(q->device, &f->item);
    atomic_fetch_add(&q->submitted, 1);
    return true;
}

cl_int vast_launch_ndrange(cl_command_queue q, cl_kernel k, cl_uint work_dim, const size_t *offset,
                           const size_t *global, const size_t *local, cl_uint num_events, const cl_event *wait_list,
                           cl_event *event)
{
    struct vast_launch_cmd *cmd = NULL;
    uint64_t t0 = vast_trace_on() ? vast_now_ns() : 0; /* every launch passes here: no clock read untraced */
    cl_int err = vast_launch_capture(q, k, work_dim, offset, global, local, &cmd);
    if (err == CL_SUCCESS)
        err = launch_admit(cmd);
    if (t0 != 0 && cmd != NULL) /* captured: the kernel is a valid one */
        vast_trace_span(VAST_TRACK_PLAN, cmd->kernel->name, t0, vast_now_ns(), "enqueue: capture and admission");
    if (err != CL_SUCCESS) {
        vast_launch_cmd_free(cmd);
        return err;
    }
    if (launch_fast(cmd, num_events, event, &err))
        return err;
    cmd->waits = num_events > 0;
    /* The executor's device lane runs it (vast_launch_execute on its own real queue). */
    return vast_vcmd_submit(q, num_events, wait_list, &vast_launch_ops, cmd, false, event);
}
