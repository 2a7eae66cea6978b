/*
 * variant.c: see variant.h. A program's translation state lives in program->launch, under the
 * program's lock; a kernel's pools live in kernel->variants, under the kernel's lock. Real
 * programs are built on the backend's shared context, where the page cache's buffers live.
 */
#include "variant.h"

#include "../base/driver.h"

#include "api.h"
#include "check.h"
#include "kcache.h"
#include "platform.h"
#include "pagecache.h"
#include "translate.h"
#include "vbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_KEEP 4 /* idle real kernels kept per variant */

/* The page cache writes the page-table entries that the translated kernels read: one encoding,
 * stated on both sides (framepool.h, translate.h). */
_Static_assert(VAST_PC_ENTRY_CHUNK_SHIFT == TRANSLATE_LPT_CHUNK_SHIFT &&
                   VAST_PC_ENTRY_MAX_CHUNKS == TRANSLATE_MAX_POOL_CHUNKS &&
                   VAST_PC_NO_ENTRY == TRANSLATE_NO_FRAME,
               "page-table entry encoding: pagecache and translated kernels disagree");

/* The paged and inspector programs of one device (real, on the shared context): each built
 * once, for that device's page cache (page shift, chunk count), when a launch there (or a
 * background build) needs it. */
struct vast_device_builds {
    cl_device_id dev; /* a root VAST device */
    bool tried[VAST_VARIANT_COUNT]; /* paged, inspector, ranges: the build was attempted */
    cl_program built[VAST_VARIANT_COUNT];
    char *error[VAST_VARIANT_COUNT]; /* what each build said, logged at the first launch that needs it */
};

struct vast_launch_program {
    struct vast_launch_program *next_retired; /* program->retired's list (a rebuild's) */
    bool tried;              /* translation attempted (once, for every device) */
    bool busy;               /* a thread translates or builds with the lock released; others wait on idle */
    bool queued;             /* a background build was asked for (prebuild.c) */
    bool diags_logged;       /* the translation's warnings were logged */
    pthread_cond_t idle;
    struct translate_result *tr;
    char *warning;           /* what the translation said, logged at the first launch that needs it */
    struct vast_device_builds **devs; /* per device that built a variant of it (each allocated
                                       * once: callers keep the pointer after the lock) */
    size_t ndevs;
};

struct vast_variant_pool {
    cl_kernel idle[VAST_VARIANT_COUNT][POOL_KEEP];
    cl_device_id idle_dev[VAST_VARIANT_COUNT][POOL_KEEP]; /* the device its program is built for */
    unsigned nidle[VAST_VARIANT_COUNT];
};

/* A malloc'ed message (NULL when out of memory). */
static char *message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *message(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = NULL;
    if (vasprintf(&m, fmt, ap) < 0)
        m = NULL;
    va_end(ap);
    return m;
}

static char *build_failure(struct vast_backend *be, cl_program real, cl_device_id dev, cl_program app,
                           const char *what)
{
    size_t size = 0;
    be->dispatch->clGetProgramBuildInfo(real, dev->real, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = calloc(1, size + 1);
    if (log != NULL)
        be->dispatch->clGetProgramBuildInfo(real, dev->real, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    char *m = message("the %s variant of program %p does not build on %s:\n%.2000s", what, (void *)app, dev->name,
                      log ? log : "");
    free(log);
    return m;
}

/* The translated programs are built for the device's page cache: its page shift and chunk
 * count become constants (translate.h, VAST_PAGE_SHIFT and VAST_POOL_CHUNKS). */
static cl_program build_source(cl_program app, cl_device_id dev, const char *src, const char *options,
                               const char *more, const char *what, char **error, bool *again, char **store)
{
    struct vast_backend *be = dev->backend;
    cl_int err;
    struct vast_pool *pool = vast_device_pool(dev, &err);
    size_t len = (options ? strlen(options) : 0) + strlen(more) + 64;
    char *opts = pool != NULL ? malloc(len) : NULL;
    if (opts != NULL)
        snprintf(opts, len, "%s -D VAST_PAGE_SHIFT=%u -D VAST_POOL_CHUNKS=%zu%s", options ? options : "",
                 pool->page_shift, pool->nchunks, more);
    cl_int status;
    bool keep = false;
    cl_program p = vast_kcache_build(dev, src, opts ? opts : options, &status, &keep); /* a cached binary, else source */
    if (keep && opts != NULL) { /* its binary is stored once the program is published */
        *store = opts;
        opts = NULL;
    }
    if (p != NULL && status != CL_SUCCESS) {
        *error = build_failure(be, p, dev, app, what);
        be->dispatch->clReleaseProgram(p);
        p = NULL;
    }
    /* A driver that ran out of memory may build it later: only a failed compilation is final. */
    *again = p == NULL && (status == CL_OUT_OF_RESOURCES || status == CL_OUT_OF_HOST_MEMORY ||
                           status == CL_MEM_OBJECT_ALLOCATION_FAILURE);
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

/* What one step (a translation, a build) made, without the program lock; merged under it. */
struct step {
    struct translate_result *tr;
    cl_program built;
    char *warning, *error;
    char *store; /* the options `built` was made with, when its binary is to be stored */
};

/* The names the real compiler predefines for the device, for the translator's #if branches:
 * its extensions and, on an OpenCL 3.0 device, its OpenCL C features (__opencl_c_fp64, ...). */
static char *device_macros(cl_device_id dev)
{
    size_t size = 0, fsize = 0;
    char *ext = vast_real_device_info(dev->backend, dev->real, CL_DEVICE_EXTENSIONS, &size);
    cl_name_version *f = vast_real_device_info(dev->backend, dev->real, CL_DEVICE_OPENCL_C_FEATURES, &fsize);
    size_t n = f != NULL ? fsize / sizeof *f : 0, len = ext != NULL ? strlen(ext) : 0;
    char *all = n > 0 ? realloc(ext, len + n * (CL_NAME_VERSION_MAX_NAME_SIZE + 1) + 1) : ext;
    if (all != NULL && n > 0) {
        all[len] = '\0';
        for (size_t i = 0; i < n; i++) {
            size_t k = strnlen(f[i].name, CL_NAME_VERSION_MAX_NAME_SIZE);
            all[len++] = ' ';
            memcpy(all + len, f[i].name, k);
            len += k;
            all[len] = '\0';
        }
    } else if (all == NULL) {
        free(ext);
    }
    free(f);
    return all;
}

/* The real device's OpenCL version ("OpenCL 3.0 ...": 300), which its compiler predefines as
 * __OPENCL_VERSION__; 0 when it does not say. */
static unsigned device_version(cl_device_id dev)
{
    size_t size = 0;
    char *v = vast_real_device_info(dev->backend, dev->real, CL_DEVICE_VERSION, &size);
    unsigned major = 0, minor = 0;
    if (vast_cl_version(v, &major, &minor) != 0 || major > 9 || minor > 9)
        major = minor = 0;
    free(v);
    return 100 * major + 10 * minor;
}

/* Translates the program (the program lock is not held: the application's calls on the
 * program do not wait for libclang). */
static void program_translate(cl_program p, cl_device_id dev, const char *options, struct step *s)
{
    if (p->source == NULL) {
        s->warning = message("program %p: its kernels cannot be paged: %s", (void *)p, no_source_why(p));
        return;
    }
    char *ext = device_macros(dev);
    cl_bool images = CL_FALSE;
    dev->backend->dispatch->clGetDeviceInfo(dev->real, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    struct translate_options opts = {options, ext, images, NULL, device_version(dev)};
    struct translate_result *tr = NULL;
    int rc = vast_kcache_translate(dev, p->source, &opts, &tr); /* or the cached translation */
    free(ext);
    if (rc != 0) {
        s->warning = message("program %p cannot be translated: %s", (void *)p, tr && tr->error ? tr->error : "?");
        s->tr = tr;
        return;
    }
    vast_info("program %p translated in %.1f ms: %zu kernel(s)", (void *)p, tr->seconds * 1e3, tr->num_kernels);
    s->tr = tr;
}

/* What the translation and builds said, once, at the first launch that needs them (a background
 * build stays quiet: a program whose launches all run direct logs nothing). Lock held. */
static void report(cl_program p, struct vast_launch_program *s, struct vast_device_builds *d)
{
    if (s->warning != NULL)
        vast_warn("%s", s->warning);
    free(s->warning);
    s->warning = NULL;
    for (int v = 0; d != NULL && v < VAST_VARIANT_COUNT; v++) {
        if (d->error[v] != NULL)
            vast_error("%s", d->error[v]);
        free(d->error[v]);
        d->error[v] = NULL;
    }
    for (size_t i = 0; !s->diags_logged && s->tr != NULL && i < s->tr->num_diags; i++) {
        struct translate_diag *dg = &s->tr->diags[i];
        vast_warn("kernel '%s' cannot be paged: %s (%s:%u): %s", dg->kernel ? dg->kernel : "*", dg->construct,
                  dg->file ? dg->file : "?", dg->line, dg->message);
    }
    s->diags_logged = true;
    (void)p;
}

static struct vast_launch_program *state_of(cl_program p)
{
    if (p->launch == NULL && (p->launch = calloc(1, sizeof *p->launch)) != NULL)
        pthread_cond_init(&p->launch->idle, NULL);
    return p->launch;
}

/* The builds of dev in s, added when missing (program lock held); NULL without memory. */
static struct vast_device_builds *device_builds(struct vast_launch_program *s, cl_device_id dev)
{
    for (size_t i = 0; i < s->ndevs; i++)
        if (s->devs[i]->dev == dev)
            return s->devs[i];
    struct vast_device_builds **all = realloc(s->devs, (s->ndevs + 1) * sizeof *all);
    if (all == NULL)
        return NULL;
    s->devs = all;
    struct vast_device_builds *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    d->dev = dev;
    s->devs[s->ndevs++] = d;
    return d;
}

/* The program's state with the translation done and dev's paged program built (and its
 * inspector or ranges build if `want` says so), or NULL; *builds receives dev's builds (NULL
 * when there are none). One
 * thread does each step (s->busy, the lock released meanwhile); the others wait for it, so a
 * launch waits only for what a background build (prebuild.c) has not done yet. The
 * translation is made once for every device, the programs once per device. */
static struct vast_launch_program *program_state(cl_program p, cl_device_id dev, enum vast_variant want,
                                                 bool quiet, struct vast_device_builds **builds)
{
    pthread_mutex_lock(&p->obj.lock);
    struct vast_launch_program *s = state_of(p);
    struct vast_device_builds *d = NULL;
    bool again[VAST_VARIANT_COUNT] = {false}; /* built again at the next call, not in this one */
    while (s != NULL) {
        while (s->busy)
            pthread_cond_wait(&s->idle, &p->obj.lock);
        bool translate = !s->tried;
        d = !translate && s->tr != NULL ? device_builds(s, dev) : NULL;
        enum vast_variant v = VAST_VARIANT_PAGED;
        if (d != NULL && d->tried[v] && want != VAST_VARIANT_PAGED)
            v = want;
        const char *src = d == NULL ? NULL : v == VAST_VARIANT_INSPECTOR ? s->tr->inspector_source : s->tr->paged_source;
        bool build = d != NULL && !d->tried[v] && src != NULL;
        if (!translate && !build)
            break;
        s->busy = s->tried = true;
        if (build)
            d->tried[v] = true;
        char *options = translate && p->options != NULL ? strdup(p->options) : NULL;
        const struct translate_result *tr = s->tr;
        pthread_mutex_unlock(&p->obj.lock);
        struct step out = {0};
        if (translate)
            program_translate(p, dev, options, &out);
        else
            out.built = build_source(p, dev, src, tr->build_options, v == VAST_VARIANT_PAGED ? " -D VAST_WHOLE" : "",
                                     v == VAST_VARIANT_INSPECTOR ? "inspector" : v == VAST_VARIANT_RANGES ? "ranges"
                                                                                                           : "paged",
                                     &out.error, &again[v], &out.store);
        free(options);
        pthread_mutex_lock(&p->obj.lock);
        if (translate) {
            s->tr = out.tr;
            s->warning = out.warning;
        } else {
            d->built[v] = out.built;
            free(d->error[v]); /* an earlier attempt's, when a driver out of memory made it try again */
            d->error[v] = out.error;
        }
        s->busy = false;
        pthread_cond_broadcast(&s->idle);
        if (out.store != NULL) { /* published first: the launches waiting for it go on meanwhile */
            pthread_mutex_unlock(&p->obj.lock);
            vast_kcache_store(dev, src, out.store, out.built);
            free(out.store);
            pthread_mutex_lock(&p->obj.lock);
        }
    }
    for (int v = 0; d != NULL && v < VAST_VARIANT_COUNT; v++)
        if (again[v]) /* the driver was out of memory: try at the next launch */
            d->tried[v] = false;
    if (s != NULL && !quiet)
        report(p, s, d);
    pthread_mutex_unlock(&p->obj.lock);
    *builds = d;
    return s;
}

bool vast_variant_claim_prebuild(cl_program p)
{
    pthread_mutex_lock(&p->obj.lock);
    struct vast_launch_program *s = p->source != NULL ? state_of(p) : NULL;
    bool claim = s != NULL && !s->queued && !s->tried;
    if (claim)
        s->queued = true;
    pthread_mutex_unlock(&p->obj.lock);
    return claim;
}

/* The inspector is left to the first partitioned launch that needs it: built speculatively it
 * cost every program a second build (pyopencl's elementwise kernels, run resident, never use it).
 * The ranges build is made too when a kernel has a resumable loop: every paged launch of such a
 * kernel takes it (paged.c). */
void vast_variant_prebuild(cl_program p, cl_device_id dev)
{
    struct vast_device_builds *b;
    struct vast_launch_program *s = program_state(p, dev, VAST_VARIANT_PAGED, true, &b);
    bool resumable = false;
    pthread_mutex_lock(&p->obj.lock);
    for (size_t i = 0; s != NULL && s->tr != NULL && i < s->tr->num_kernels; i++)
        resumable |= s->tr->kernels[i].paged_ok && s->tr->kernels[i].resumable;
    pthread_mutex_unlock(&p->obj.lock);
    if (resumable)
        program_state(p, dev, VAST_VARIANT_RANGES, true, &b);
}

const struct translate_kernel *vast_variant_meta(cl_kernel k, cl_device_id dev, const char **why)
{
    struct vast_device_builds *b;
    struct vast_launch_program *s = program_state(k->program, dev, VAST_VARIANT_PAGED, false, &b);
    *why = k->program->source == NULL ? no_source_why(k->program) : "its program could not be translated";
    for (size_t i = 0; s != NULL && s->tr != NULL && i < s->tr->num_kernels; i++) {
        const struct translate_kernel *tk = &s->tr->kernels[i];
        if (strcmp(tk->name, k->name) != 0)
            continue;
        if (!tk->paged_ok)
            *why = "the translator rejected a construct (see the warning above)";
        else if (b == NULL || b->built[VAST_VARIANT_PAGED] == NULL)
            *why = "its paged variant does not build on the device";
        return tk->paged_ok && b != NULL && b->built[VAST_VARIANT_PAGED] != NULL ? tk : NULL;
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
    cl_kernel real = NULL;
    for (unsigned i = 0; pool != NULL && i < pool->nidle[v] && real == NULL; i++)
        if (pool->idle_dev[v][i] == dev || v == VAST_VARIANT_ORIGINAL) { /* the original: every device's */
            real = pool->idle[v][i];
            pool->nidle[v]--;
            pool->idle[v][i] = pool->idle[v][pool->nidle[v]];
            pool->idle_dev[v][i] = pool->idle_dev[v][pool->nidle[v]];
        }
    pthread_mutex_unlock(&k->obj.lock);
    if (real != NULL || pool == NULL)
        return real;
    cl_program from = NULL;
    if (v == VAST_VARIANT_ORIGINAL) {
        from = atomic_load(&k->program->real);
    } else {
        struct vast_device_builds *b;
        program_state(k->program, dev, v, false, &b);
        from = b != NULL ? b->built[v] : NULL;
    }
    cl_int err = CL_INVALID_PROGRAM;
    if (from != NULL)
        real = k->program->context->backend->dispatch->clCreateKernel(from, k->name, &err);
    if (real == NULL)
        vast_error("kernel '%s': no real kernel for variant %d (error %d)", k->name, (int)v, err);
    return real;
}

void vast_variant_give(cl_kernel k, enum vast_variant v, cl_kernel real, cl_device_id dev)
{
    if (real == NULL)
        return;
    pthread_mutex_lock(&k->obj.lock);
    struct vast_variant_pool *pool = k->variants;
    bool kept = pool != NULL && pool->nidle[v] < POOL_KEEP;
    if (kept) {
        pool->idle_dev[v][pool->nidle[v]] = dev;
        pool->idle[v][pool->nidle[v]++] = real;
    }
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

struct vast_launch_program *vast_variant_program_retire(cl_program program)
{
    struct vast_launch_program *s = program->launch;
    if (s != NULL) {
        s->next_retired = program->retired;
        program->retired = s;
        program->launch = NULL;
    }
    return s;
}

void vast_variant_program_unretire(cl_program program, struct vast_launch_program *s)
{
    if (s == NULL || program->launch != NULL || program->retired != s)
        return;
    program->retired = s->next_retired;
    s->next_retired = NULL;
    program->launch = s;
}

static void state_free(cl_program program, struct vast_launch_program *s)
{
    for (size_t i = 0; i < s->ndevs; i++) {
        for (int v = 0; v < VAST_VARIANT_COUNT; v++) {
            if (s->devs[i]->built[v] != NULL)
                program->context->backend->dispatch->clReleaseProgram(s->devs[i]->built[v]);
            free(s->devs[i]->error[v]);
        }
        free(s->devs[i]);
    }
    free(s->devs);
    if (s->tr != NULL)
        translate_result_free(s->tr);
    free(s->warning);
    pthread_cond_destroy(&s->idle);
    free(s);
}

void vast_variant_program_free(cl_program program)
{
    if (program->launch != NULL)
        state_free(program, program->launch);
    program->launch = NULL;
    while (program->retired != NULL) {
        struct vast_launch_program *s = program->retired;
        program->retired = s->next_retired;
        state_free(program, s);
    }
}
