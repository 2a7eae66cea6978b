/* translate.c - translate_program: the pipeline of translate/ (options, mcpp, libclang,
 * walk, metadata, edits applied once per variant) and the result's lifetime.
 * Thread-safe: every call owns its libclang index; mcpp is serialised in preprocess.c.
 * Called by interpose/ (lazily, at the first launch that needs paging) and by tests. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef VAST_CLANG_RESOURCE_DIR
#error "VAST_CLANG_RESOURCE_DIR must name clang's resource directory (opencl-c.h)"
#endif

static char resource_dir_found[PATH_MAX];

static int has_opencl_headers(const char *dir)
{
    char f[PATH_MAX];
    int n = snprintf(f, sizeof f, "%s/include/opencl-c-base.h", dir);
    return n > 0 && (size_t)n < sizeof f && access(f, R_OK) == 0;
}

/* Try <base>/<rel> as the resource directory; 1 when it holds the headers (then kept). */
static int try_resource_dir(const char *base, const char *rel)
{
    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/%s", base, rel);
    if (n <= 0 || (size_t)n >= sizeof dir || !has_opencl_headers(dir))
        return 0;
    memcpy(resource_dir_found, dir, (size_t)n + 1);
    return 1;
}

/* clang's resource directory (the OpenCL builtin headers): the one of the build machine, or,
 * where libclang was unpacked under another prefix (the GPU machine carries Debian's packages
 * under its own folder), the one beside the libclang this process loaded: <its folder>/clang/V
 * (llvm-V/lib), or <its folder>/../llvm-V/lib/clang/V (Debian's lib/<triplet>). */
static void find_resource_dir(void)
{
    const char *built = VAST_CLANG_RESOURCE_DIR; /* .../llvm-V/lib/clang/V */
    snprintf(resource_dir_found, sizeof resource_dir_found, "%s", built);
    if (has_opencl_headers(built))
        return;
    const char *v = strrchr(built, '/'), *clang = strstr(built, "/lib/clang/");
    Dl_info info;
    if (v == NULL || clang == NULL || dladdr((void *)clang_createIndex, &info) == 0 || info.dli_fname == NULL)
        return;
    const char *root = clang;
    while (root > built && root[-1] != '/')
        root--;
    char rel_beside[64], rel_up[PATH_MAX], bases[2][PATH_MAX];
    snprintf(rel_beside, sizeof rel_beside, "clang%s", v);
    snprintf(rel_up, sizeof rel_up, "../%s", root);
    snprintf(bases[0], sizeof bases[0], "%s", info.dli_fname);
    if (realpath(info.dli_fname, bases[1]) == NULL)
        snprintf(bases[1], sizeof bases[1], "%s", info.dli_fname);
    for (int i = 0; i < 2; i++) {
        char *slash = strrchr(bases[i], '/');
        if (slash == NULL)
            continue;
        *slash = '\0';
        if (try_resource_dir(bases[i], rel_beside) || try_resource_dir(bases[i], rel_up))
            return;
    }
}

static const char *resource_dir(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_resource_dir);
    return resource_dir_found;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Errors from parsing are program-wide: the driver would reject the program too. */
static char *parse_errors(CXTranslationUnit tu)
{
    struct strbuf e = {0};
    unsigned n = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            CXString s = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation);
            strbuf_printf(&e, "%s%s", e.len ? "\n" : "", clang_getCString(s));
            clang_disposeString(s);
        }
        clang_disposeDiagnostic(d);
    }
    return e.len ? strbuf_take(&e) : NULL;
}

static CXTranslationUnit parse_unit(CXIndex idx, const char *text, size_t len,
                                    const struct tr_options *o, char **error)
{
    char std[32];
    snprintf(std, sizeof std, "-cl-std=%s", o->cl_std);
    /* OpenCL C 3.0: without these optional features an unqualified pointer is private, as in
     * 1.2, so every __global access stays visible to the walk (with the generic address space
     * a pointer to global memory could hide behind one); a program that needs them fails to
     * parse here and stays unpaged. The device's own macros still choose its #if branches. */
    const char *args[] = {"-x", "cl", std, "-Xclang", "-finclude-default-header",
                          "-resource-dir", resource_dir(), "-w", "-Xclang",
                          "-cl-ext=-__opencl_c_generic_address_space,-__opencl_c_pipes,"
                          "-__opencl_c_device_enqueue,-__opencl_c_program_scope_global_variables"};
    struct CXUnsavedFile f = {"vast-preprocessed.cl", text, (unsigned long)len};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode rc = clang_parseTranslationUnit2(
        idx, f.Filename, args, o->opencl_c_version >= 300 ? 10 : 8, &f, 1,
        CXTranslationUnit_None, &tu);
    if (rc != CXError_Success || !tu) {
        *error = translate_strdup("libclang could not parse the program");
        return NULL;
    }
    *error = parse_errors(tu);
    if (*error) {
        clang_disposeTranslationUnit(tu);
        return NULL;
    }
    return tu;
}

static void free_fns(struct tr_unit *u)
{
    for (size_t i = 0; i < u->nfns; i++) {
        struct tr_fn *f = &u->fns[i];
        for (size_t c = 0; c < f->ncalls; c++) {
            free(f->calls[c].callee_usr);
            free(f->calls[c].arg_mask);
        }
        free(f->calls);
        free(f->usr);
        free(f->name);
        free(f->param_access);
    }
    free(u->fns);
}

/* Past this many edits in one function body, the paged and inspector programs call the page
 * walk (vast_frame_k, vast_mark_k: VAST_OUTLINE in prelude.c) instead of inlining it at every
 * access. Inlined, every access adds a few basic blocks (the page-table load, the fault, the
 * pool chunk), and PoCL 3.1's kernel compiler recurses once per block of a straight run: the
 * CTS's test_basic vector_creation (2367 accesses in one kernel, a few thousand edits)
 * overflowed its compiler thread's stack at a pool of 4 chunks (tests/e2e/translate, case
 * straight). Called, the walk leaves the kernel's blocks as the original has them. Ordinary
 * kernels keep it inlined: a call per access costs on GPUs. */
#define TR_OUTLINE_EDITS 2000

static size_t most_edits_in_one_function(const struct tr_unit *u)
{
    size_t most = 0;
    for (size_t i = 0; i < u->nfns; i++) {
        unsigned start, end;
        if (!u->fns[i].has_body || tr_cursor_span(u->fns[i].cursor, &start, &end) != 0)
            continue;
        size_t n = 0;
        for (size_t e = 0; e < u->edits.n; e++)
            n += u->edits.v[e].offset >= start && u->edits.v[e].offset < end;
        most = n > most ? n : most;
    }
    return most;
}

/* The variant's prelude, after the definition of VAST_OUTLINE (malloc'ed). */
static char *prelude_for(enum tr_variant v, bool outline)
{
    struct strbuf b = {0};
    strbuf_printf(&b, "#define VAST_OUTLINE%s\n%s", outline ? " __attribute__((noinline))" : "", tr_prelude(v));
    return strbuf_take(&b);
}

static int translate_unit(const char *pp, const struct tr_options *o,
                          struct translate_result *r)
{
    CXIndex idx = clang_createIndex(0, 0);
    struct tr_unit u;
    memset(&u, 0, sizeof u);
    u.text = pp;
    u.len = strlen(pp);
    u.tu = parse_unit(idx, pp, u.len, o, &r->error);
    if (!u.tu) {
        clang_disposeIndex(idx);
        return -1;
    }
    tr_walk_unit(&u);
    tr_meta_unit(&u);
    bool outline = most_edits_in_one_function(&u) > TR_OUTLINE_EDITS;
    char *paged = prelude_for(TR_PAGED, outline), *inspect = prelude_for(TR_INSPECT, outline);
    r->paged_source = tr_edits_apply(&u.edits, pp, u.len, TR_PAGED, paged);
    r->inspector_source = tr_edits_apply(&u.edits, pp, u.len, TR_INSPECT, inspect);
    free(paged);
    free(inspect);
    r->kernels = u.kernels;
    r->num_kernels = u.num_kernels;
    r->diags = u.diags;
    r->num_diags = u.num_diags;
    free_fns(&u);
    tr_edits_free(&u.edits);
    strbuf_free(&u.helpers_seen);
    clang_disposeTranslationUnit(u.tu);
    clang_disposeIndex(idx);
    return 0;
}

int translate_program(const char *source, const struct translate_options *opts,
                      struct translate_result **out)
{
    double t0 = now_seconds();
    struct translate_result *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    *out = r;
    struct tr_options o;
    if (!source) {
        r->error = translate_strdup("no source: programs from binaries or IL cannot be "
                                    "translated");
        return -1;
    }
    if (tr_parse_options(opts ? opts->build_options : NULL, &o, &r->error) != 0) {
        tr_free_options(&o);
        return -1;
    }
    r->build_options = translate_strdup(o.rest.data ? o.rest.data : "");
    char *pp = tr_preprocess(source, &o, opts, &r->error);
    int rc = pp ? translate_unit(pp, &o, r) : -1;
    free(pp);
    tr_free_options(&o);
    r->seconds = now_seconds() - t0;
    return rc;
}

void translate_result_free(struct translate_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->num_kernels; i++) {
        for (unsigned a = 0; a < r->kernels[i].num_args; a++) {
            free(r->kernels[i].args[a].name);
            free(r->kernels[i].args[a].type);
        }
        free(r->kernels[i].args);
        free(r->kernels[i].name);
        translate_affine_free(r->kernels[i].affine);
    }
    free(r->kernels);
    for (size_t i = 0; i < r->num_diags; i++) {
        free(r->diags[i].kernel);
        free(r->diags[i].construct);
        free(r->diags[i].file);
        free(r->diags[i].message);
    }
    free(r->diags);
    free(r->paged_source);
    free(r->inspector_source);
    free(r->build_options);
    free(r->error);
    free(r);
}
