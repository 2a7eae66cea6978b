/*
 * variant.c: see variant.h. A program's translation state lives in program->launch, under the
 * program's lock; a kernel's pools live in kernel->variants, under the kernel's lock. Real
 * programs are built on the backend's shared context, where the page cache's buffers live.
 */
#include "variant.h"

#include "api.h"
#include "check.h"
#include "platform.h"
#include "pagecache.h"
#include "translate.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

#define POOL_KEEP 4 /* idle real kernels kept per variant */

/* The page cache writes the page-table entries that the translated kernels read: one encoding,
 * stated on both sides (framepool.h, translate.h). */
_Static_assert(VAST_PC_ENTRY_CHUNK_SHIFT == TRANSLATE_LPT_CHUNK_SHIFT &&
                   VAST_PC_ENTRY_MAX_CHUNKS == TRANSLATE_MAX_POOL_CHUNKS &&
                   VAST_PC_NO_ENTRY == TRANSLATE_NO_FRAME,
               "page-table entry encoding: pagecache and translated kernels disagree");

struct vast_launch_program {
    bool tried;              /* translation attempted (once) */
    bool inspector_tried;    /* inspector build attempted (once, unless it failed for want of memory) */
    bool paged_again;        /* the paged build failed for want of memory: built again at the next launch */
    struct translate_result *tr;
    cl_program built[VAST_VARIANT_COUNT]; /* paged and inspector programs (real, shared context) */
};

struct vast_variant_pool {
    cl_kernel idle[VAST_VARIANT_COUNT][POOL_KEEP];
    unsigned nidle[VAST_VARIANT_COUNT];
};

static void log_build_failure(struct vast_backend *be, cl_program real, cl_device_id dev, cl_program app,
                              const char *what)
{
    size_t size = 0;
    be->dispatch->clGetProgramBuildInfo(real, dev->real, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = calloc(1, size + 1);
    if (log != NULL)
        be->dispatch->clGetProgramBuildInfo(real, dev->real, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    vast_error("the %s variant of program %p does not build on %s:\n%.2000s", what, (void *)app, dev->name,
               log ? log : "");
    free(log);
}

/* The translated programs are built for the device's page cache: its page shift and chunk
 * count become constants (translate.h, VAST_PAGE_SHIFT and VAST_POOL_CHUNKS). */
static cl_program build_source(cl_program app, cl_device_id dev, const char *src, const char *options,
                               const char *what, bool *again)
{
    struct vast_backend *be = dev->backend;
    cl_int err;
    struct vast_pool *pool = vast_device_pool(dev, &err);
    size_t len = (options ? strlen(options) : 0) + 64;
    char *opts = pool != NULL ? malloc(len) : NULL;
    if (opts != NULL)
        snprintf(opts, len, "%s -D VAST_PAGE_SHIFT=%u -D VAST_POOL_CHUNKS=%zu", options ? options : "",
                 pool->page_shift, pool->nchunks);
    cl_program p = be->dispatch->clCreateProgramWithSource(be->shared, 1, &src, NULL, &err);
    if (p != NULL && (err = be->dispatch->clBuildProgram(p, 1, &dev->real, opts ? opts : options, NULL, NULL)) !=
                         CL_SUCCESS) {
        log_build_failure(be, p, dev, app, what);
        be->dispatch->clReleaseProgram(p);
        p = NULL;
    }
    /* A driver that ran out of memory may build it later: only a failed compilation is final. */
    *again = p == NULL && (err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY ||
                           err == CL_MEM_OBJECT_ALLOCATION_FAILURE);
    free(opts);
    return p;
}

/* Why a program has no source to translate (static text for the log lines). */
static const char *no_source_why(const struct _cl_program *p)
{
    switch (p->origin) {
    case VAST_PROGRAM_BINARY:
        return "its program was created from a binary VAST did not make (VAST's own binaries carry the source)";
    case VAST_PROGRAM_VAST_BINARY:
        return "its program was created from a VAST binary without source (made by clLinkProgram, or whose "
               "binaries disagree)";
    case VAST_PROGRAM_IL: return "its program was created from IL: VAST translates OpenCL C source";
    case VAST_PROGRAM_BUILTIN: return "its program holds built-in kernels";
    case VAST_PROGRAM_LINKED: return "its program was made by clLinkProgram: VAST translates one source";
    default: return "its program has no source";
    }
}

/* Translate the program and build its paged variant, once (program lock held). */
static void program_translate(cl_program p, cl_device_id dev, struct vast_launch_program *s)
{
    s->tried = true;
    if (p->source == NULL) {
        vast_warn("program %p: its kernels cannot be paged: %s", (void *)p, no_source_why(p));
        return;
    }
    size_t size;
    char *ext = vast_real_device_info(dev->backend, dev->real, CL_DEVICE_EXTENSIONS, &size);
    cl_bool images = CL_FALSE;
    dev->backend->dispatch->clGetDeviceInfo(dev->real, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    struct translate_options opts = {p->options, ext, images, NULL};
    int rc = translate_program(p->source, &opts, &s->tr);
    free(ext);
    if (rc != 0) {
        vast_warn("program %p cannot be translated: %s", (void *)p, s->tr && s->tr->error ? s->tr->error : "?");
        return;
    }
    for (size_t i = 0; i < s->tr->num_diags; i++) {
        struct translate_diag *dg = &s->tr->diags[i];
        vast_warn("kernel '%s' cannot be paged: %s (%s:%u): %s", dg->kernel ? dg->kernel : "*", dg->construct,
                  dg->file ? dg->file : "?", dg->line, dg->message);
    }
    s->built[VAST_VARIANT_PAGED] =
        build_source(p, dev, s->tr->paged_source, s->tr->build_options, "paged", &s->paged_again);
    vast_info("program %p translated in %.1f ms: %zu kernel(s)", (void *)p, s->tr->seconds * 1e3, s->tr->num_kernels);
}

/* The program's state with the translation done (and the inspector built if asked), or NULL. */
static struct vast_launch_program *program_state(cl_program p, cl_device_id dev, bool inspector)
{
    pthread_mutex_lock(&p->obj.lock);
    if (p->launch == NULL)
        p->launch = calloc(1, sizeof *p->launch);
    struct vast_launch_program *s = p->launch;
    if (s != NULL && !s->tried)
        program_translate(p, dev, s);
    else if (s != NULL && s->paged_again) /* the driver was out of memory at the last try */
        s->built[VAST_VARIANT_PAGED] =
            build_source(p, dev, s->tr->paged_source, s->tr->build_options, "paged", &s->paged_again);
    if (s != NULL && inspector && !s->inspector_tried && s->tr != NULL && s->tr->inspector_source != NULL) {
        bool again;
        s->built[VAST_VARIANT_INSPECTOR] =
            build_source(p, dev, s->tr->inspector_source, s->tr->build_options, "inspector", &again);
        s->inspector_tried = !again;
    }
    pthread_mutex_unlock(&p->obj.lock);
    return s;
}

const struct translate_kernel *vast_variant_meta(cl_kernel k, cl_device_id dev, const char **why)
{
    struct vast_launch_program *s = program_state(k->program, dev, false);
    *why = k->program->source == NULL ? no_source_why(k->program) : "its program could not be translated";
    for (size_t i = 0; s != NULL && s->tr != NULL && i < s->tr->num_kernels; i++) {
        const struct translate_kernel *tk = &s->tr->kernels[i];
        if (strcmp(tk->name, k->name) != 0)
            continue;
        if (!tk->paged_ok)
            *why = "the translator rejected a construct (see the warning above)";
        else if (s->built[VAST_VARIANT_PAGED] == NULL)
            *why = "its paged variant does not build on the device";
        return tk->paged_ok && s->built[VAST_VARIANT_PAGED] != NULL ? tk : NULL;
    }
    return NULL;
}

const struct translate_kernel *vast_variant_meta_known(cl_kernel k)
{
    cl_program p = k->program;
    const struct translate_kernel *found = NULL;
    pthread_mutex_lock(&p->obj.lock);
    const struct vast_launch_program *s = p->launch;
    for (size_t i = 0; s != NULL && s->tr != NULL && i < s->tr->num_kernels && found == NULL; i++)
        if (strcmp(s->tr->kernels[i].name, k->name) == 0)
            found = &s->tr->kernels[i];
    pthread_mutex_unlock(&p->obj.lock);
    /* A rejected kernel's access facts may miss what the rejected construct stores. */
    return found != NULL && found->paged_ok ? found : NULL;
}

bool vast_variant_arg_written(const struct translate_kernel *tk, cl_uint index)
{
    if (tk == NULL || index >= tk->num_args)
        return true;
    const struct translate_arg *a = &tk->args[index];
    if (a->kind == TRANSLATE_ARG_CONSTANT_POINTER)
        return false;
    return a->kind != TRANSLATE_ARG_GLOBAL_POINTER || (a->access & TRANSLATE_WRITE) != 0;
}

cl_kernel vast_variant_take(cl_kernel k, enum vast_variant v, cl_device_id dev)
{
    pthread_mutex_lock(&k->obj.lock);
    if (k->variants == NULL)
        k->variants = calloc(1, sizeof *k->variants);
    struct vast_variant_pool *pool = k->variants;
    cl_kernel real = pool != NULL && pool->nidle[v] > 0 ? pool->idle[v][--pool->nidle[v]] : NULL;
    pthread_mutex_unlock(&k->obj.lock);
    if (real != NULL || pool == NULL)
        return real;
    cl_program from = NULL;
    if (v == VAST_VARIANT_ORIGINAL) {
        from = atomic_load(&k->program->real);
    } else {
        struct vast_launch_program *s = program_state(k->program, dev, v == VAST_VARIANT_INSPECTOR);
        from = s != NULL ? s->built[v] : NULL;
    }
    cl_int err = CL_INVALID_PROGRAM;
    if (from != NULL)
        real = k->program->context->backend->dispatch->clCreateKernel(from, k->name, &err);
    if (real == NULL)
        vast_error("kernel '%s': no real kernel for variant %d (error %d)", k->name, (int)v, err);
    return real;
}

void vast_variant_give(cl_kernel k, enum vast_variant v, cl_kernel real)
{
    if (real == NULL)
        return;
    pthread_mutex_lock(&k->obj.lock);
    struct vast_variant_pool *pool = k->variants;
    bool kept = pool != NULL && pool->nidle[v] < POOL_KEEP;
    if (kept)
        pool->idle[v][pool->nidle[v]++] = real;
    pthread_mutex_unlock(&k->obj.lock);
    if (!kept)
        k->program->context->backend->dispatch->clReleaseKernel(real);
}

void vast_variant_kernel_free(cl_kernel k)
{
    struct vast_variant_pool *pool = k->variants;
    for (int v = 0; pool != NULL && v < VAST_VARIANT_COUNT; v++)
        for (unsigned i = 0; i < pool->nidle[v]; i++)
            k->program->context->backend->dispatch->clReleaseKernel(pool->idle[v][i]);
    free(pool);
    k->variants = NULL;
}

void vast_variant_program_free(cl_program program)
{
    struct vast_launch_program *s = program->launch;
    if (s == NULL)
        return;
    for (int v = 0; v < VAST_VARIANT_COUNT; v++)
        if (s->built[v] != NULL)
            program->context->backend->dispatch->clReleaseProgram(s->built[v]);
    if (s->tr != NULL)
        translate_result_free(s->tr);
    free(s);
    program->launch = NULL;
}
