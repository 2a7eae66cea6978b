/*
 * program.c: programs. A VAST program wraps the real program built as the application asked,
 * and keeps its source and last build options: the paged and inspector variants are built
 * from them lazily when a launch first needs paging (translate/). The binaries it hands out
 * (CL_PROGRAM_BINARIES, CL_PROGRAM_BINARY_SIZES) are containers that carry the source and
 * options with the real binary (progbin.h), so a program loaded from one pages like a
 * program from source; a binary VAST did not make goes to the real driver as it is.
 */
#include "api.h"
#include "callback.h"
#include "check.h"
#include "launch.h"
#include "platform.h"
#include "prebuild.h"
#include "progbin.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void program_destroy(struct vast_object *obj)
{
    cl_program p = (cl_program)obj;
    cl_program real = atomic_load(&p->real);
    vast_launch_program_free(p);
    if (real != NULL)
        p->context->backend->dispatch->clReleaseProgram(real);
    free(p->source);
    free(p->options);
    VAST_RELEASE(p->context);
}

static cl_program program_new(cl_context context)
{
    cl_program p = vast_object_alloc(sizeof *p);
    if (p == NULL)
        return NULL;
    vast_object_init(&p->obj, VAST_MAGIC_PROGRAM, program_destroy);
    p->context = context;
    VAST_RETAIN(context);
    return p;
}

static cl_program program_wrap(cl_context context, cl_program real, cl_int err, cl_int *errcode_ret)
{
    VAST_RETURN_NULL_IF(real == NULL, err, errcode_ret, "the real platform refused the program");
    cl_program p = program_new(context);
    if (p == NULL) {
        context->backend->dispatch->clReleaseProgram(real);
        vast_set_error(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    atomic_store(&p->real, real);
    vast_set_error(errcode_ret, CL_SUCCESS);
    return p;
}

static char *source_join(cl_uint count, const char **strings, const size_t *lengths)
{
    size_t total = 0;
    for (cl_uint i = 0; i < count; i++)
        total += (lengths && lengths[i]) ? lengths[i] : strlen(strings[i]);
    char *s = malloc(total + 1);
    if (s == NULL)
        return NULL;
    size_t at = 0;
    for (cl_uint i = 0; i < count; i++) {
        size_t n = (lengths && lengths[i]) ? lengths[i] : strlen(strings[i]);
        memcpy(s + at, strings[i], n);
        at += n;
    }
    s[at] = '\0';
    return s;
}

cl_program vast_clCreateProgramWithSource(cl_context context, cl_uint count, const char **strings,
                                          const size_t *lengths, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_RETURN_NULL_IF(count == 0 || strings == NULL, CL_INVALID_VALUE, errcode_ret, "count %u, strings %p", count,
                        (void *)strings);
    for (cl_uint i = 0; i < count; i++)
        VAST_RETURN_NULL_IF(strings[i] == NULL, CL_INVALID_VALUE, errcode_ret, "strings[%u] is NULL", i);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateProgramWithSource, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_program p = program_wrap(context, fn_(context->real, count, strings, lengths, &err), err, errcode_ret);
    if (p != NULL)
        p->source = source_join(count, strings, lengths); /* NULL only disables paging */
    return p;
}

/* What identifies a real device's binaries (malloc'ed): its name and driver version. */
static char *device_identity(struct vast_backend *be, cl_device_id real)
{
    size_t n1 = 0, n2 = 0;
    char *name = vast_real_device_info(be, real, CL_DEVICE_NAME, &n1);
    char *driver = vast_real_device_info(be, real, CL_DRIVER_VERSION, &n2);
    size_t len = (name ? strlen(name) : 0) + (driver ? strlen(driver) : 0) + 2;
    char *id = malloc(len);
    if (id != NULL)
        snprintf(id, len, "%s\n%s", name ? name : "", driver ? driver : "");
    free(name);
    free(driver);
    return id;
}

/* The application's binaries as the real driver takes them. */
struct unpacked {
    const unsigned char **bins;
    size_t *lens;
    struct vast_progbin vast;  /* the first VAST container's fields */
    bool all_vast, agree;      /* every binary is VAST's; their sources and options agree */
};

static bool same_text(const char *a, size_t alen, const char *b, size_t blen)
{
    return (a == NULL) == (b == NULL) && alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* Binary i: a VAST container gives its real binary (made for this real device, intact),
 * anything else goes as it is. Returns binary i's status. */
static cl_int unpack_one(struct vast_backend *be, cl_device_id real, size_t len, const unsigned char *bin,
                         cl_uint i, struct unpacked *u)
{
    if (len == 0 || bin == NULL)
        return CL_INVALID_VALUE;
    struct vast_progbin pb;
    enum vast_progbin_kind kind = vast_progbin_unpack(bin, len, &pb);
    u->bins[i] = bin;
    u->lens[i] = len;
    if (kind == VAST_PROGBIN_FOREIGN) {
        u->all_vast = false;
        return CL_SUCCESS;
    }
    VAST_RETURN_IF(kind == VAST_PROGBIN_INVALID, CL_INVALID_BINARY,
                   "binary %u is a VAST program binary that is damaged or of another version", i);
    char *id = device_identity(be, real);
    bool ours = id != NULL && same_text(pb.device, pb.device_len, id, strlen(id));
    free(id);
    VAST_RETURN_IF(!ours, CL_INVALID_BINARY, "binary %u was made for another device (%.*s)", i,
                   (int)(pb.device_len < 200 ? pb.device_len : 200), pb.device);
    if (u->vast.binary == NULL)
        u->vast = pb;
    else if (!same_text(pb.source, pb.source_len, u->vast.source, u->vast.source_len) ||
             !same_text(pb.options, pb.options_len, u->vast.options, u->vast.options_len))
        u->agree = false;
    u->bins[i] = pb.binary;
    u->lens[i] = pb.binary_len;
    return CL_SUCCESS;
}

/* Every binary, with the specification's per-binary status; the first CL_INVALID_VALUE, else
 * the first CL_INVALID_BINARY, is the call's error. */
static cl_int unpack_binaries(struct vast_backend *be, cl_uint n, const struct vast_list *devices,
                              const size_t *lengths, const unsigned char **binaries, cl_int *binary_status,
                              struct unpacked *u)
{
    u->bins = calloc(n, sizeof *u->bins);
    u->lens = calloc(n, sizeof *u->lens);
    u->all_vast = u->agree = true;
    if (u->bins == NULL || u->lens == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    cl_int err = CL_SUCCESS;
    for (cl_uint i = 0; i < n; i++) {
        cl_int st = unpack_one(be, (cl_device_id)devices->items[i], lengths[i], binaries[i], i, u);
        if (binary_status != NULL)
            binary_status[i] = st;
        if (st != CL_SUCCESS && err != CL_INVALID_VALUE)
            err = st;
    }
    return err;
}

/* A program from VAST's containers keeps their source and options and pages like a program
 * from source; from any other binary, it has no source (runs direct only). */
static void adopt_source(cl_program p, const struct unpacked *u)
{
    p->origin = u->all_vast ? VAST_PROGRAM_VAST_BINARY : VAST_PROGRAM_BINARY;
    if (!u->all_vast || u->vast.source == NULL)
        return;
    if (!u->agree) {
        vast_warn("program %p: its VAST binaries carry different sources; its kernels cannot be paged", (void *)p);
        return;
    }
    p->source = strndup(u->vast.source, u->vast.source_len);
    p->options = strndup(u->vast.options ? u->vast.options : "", u->vast.options_len);
}

cl_program vast_clCreateProgramWithBinary(cl_context context, cl_uint num_devices, const cl_device_id *device_list,
                                          const size_t *lengths, const unsigned char **binaries,
                                          cl_int *binary_status, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateProgramWithBinary, errcode_ret);
    VAST_RETURN_NULL_IF(num_devices == 0 || device_list == NULL, CL_INVALID_VALUE, errcode_ret, "no devices");
    VAST_RETURN_NULL_IF(lengths == NULL || binaries == NULL, CL_INVALID_VALUE, errcode_ret, "lengths %p binaries %p",
                        (void *)lengths, (void *)binaries);
    struct vast_list devices;
    cl_int err = vast_unwrap_devices(context, num_devices, device_list, &devices);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "device_list");
    struct unpacked u = {0};
    err = unpack_binaries(context->backend, num_devices, &devices, lengths, binaries, binary_status, &u);
    cl_program p = NULL;
    if (err == CL_SUCCESS) {
        cl_program real = fn_(context->real, num_devices, (const cl_device_id *)devices.items, u.lens, u.bins,
                              binary_status, &err);
        p = program_wrap(context, real, err, errcode_ret);
    } else {
        vast_set_error(errcode_ret, err);
    }
    if (p != NULL)
        adopt_source(p, &u);
    free(u.bins);
    free(u.lens);
    vast_list_free(&devices);
    return p;
}

cl_program vast_clCreateProgramWithBuiltInKernels(cl_context context, cl_uint num_devices,
                                                  const cl_device_id *device_list, const char *kernel_names,
                                                  cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateProgramWithBuiltInKernels, errcode_ret);
    struct vast_list devices;
    cl_int err = vast_unwrap_devices(context, num_devices, device_list, &devices);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "device_list");
    cl_program real = fn_(context->real, num_devices, (const cl_device_id *)devices.items, kernel_names, &err);
    vast_list_free(&devices);
    cl_program p = program_wrap(context, real, err, errcode_ret);
    if (p != NULL)
        p->origin = VAST_PROGRAM_BUILTIN;
    return p;
}

cl_program vast_clCreateProgramWithIL(cl_context context, const void *il, size_t length, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateProgramWithIL, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_program real = fn_(context->real, il, length, &err);
    cl_program p = program_wrap(context, real, err, errcode_ret);
    if (p != NULL)
        p->origin = VAST_PROGRAM_IL;
    return p;
}

VAST_RETAIN_RELEASE(vast_clRetainProgram, vast_clReleaseProgram, cl_program,
                    program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM)

/* A trampoline for a build-style callback, or NULL (with *err set) when none is needed. */
static struct vast_trampoline *build_callback(cl_program program, void(CL_CALLBACK *pfn)(cl_program, void *),
                                              void *user_data, cl_int *err)
{
    *err = CL_SUCCESS;
    if (pfn == NULL) {
        if (user_data != NULL)
            *err = CL_INVALID_VALUE;
        return NULL;
    }
    struct vast_trampoline *t = vast_trampoline_program(pfn, program, user_data, false);
    if (t == NULL)
        *err = CL_OUT_OF_HOST_MEMORY;
    return t;
}

/* A rebuild the real driver refused (CL_INVALID_OPERATION: kernels attached) where the
 * application holds none of the program's kernels: VAST's commands still hold some, released
 * when they are reaped (the CTS's options_build_macro rebuilt right after reading its result and
 * got CL_INVALID_OPERATION through VAST). Waits for them, at most 30 s; true when none is left,
 * so the caller builds again. */
static bool kernels_drained(cl_program program, cl_int err)
{
    if (err != CL_INVALID_OPERATION || atomic_load(&program->app_kernels) != 0)
        return false;
    for (int i = 0; i < 30000 && atomic_load(&program->live_kernels) != 0; i++) {
        if (atomic_load(&program->app_kernels) != 0)
            return false;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return atomic_load(&program->live_kernels) == 0;
}

/* What a (re)build replaced, for program_settle_options. */
struct rebuild {
    char *old_options;
    bool replaced;
    struct vast_launch_program *retired;
};

/* A build's options become the program's, and the translation and paged programs of an earlier
 * build are retired (a program rebuilt with -D BUILD_OPT_VAL=2 ran its first build's paged kernel
 * before: the CTS's compiler multiple_build_program, forced paged). */
static struct rebuild program_set_options(cl_program program, const char *options)
{
    struct rebuild r = {NULL, false, NULL};
    if (program->origin == VAST_PROGRAM_VAST_BINARY)
        return r; /* its source was compiled with the container's options; a rebuild keeps them */
    char *copy = options ? strdup(options) : NULL;
    pthread_mutex_lock(&program->obj.lock);
    r.old_options = program->options;
    r.replaced = true;
    program->options = copy;
    r.retired = vast_launch_program_retire(program);
    pthread_mutex_unlock(&program->obj.lock);
    return r;
}

/* After the real call: CL_INVALID_OPERATION (kernels attached, or a build running) left the
 * program as it was, so its options and translation are put back. */
static void program_settle_options(cl_program program, struct rebuild *r, cl_int err)
{
    if (!r->replaced)
        return;
    pthread_mutex_lock(&program->obj.lock);
    if (err == CL_INVALID_OPERATION) {
        free(program->options);
        program->options = r->old_options;
        r->old_options = NULL;
        vast_launch_program_unretire(program, r->retired);
    }
    pthread_mutex_unlock(&program->obj.lock);
    free(r->old_options);
}

cl_int vast_clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
                           const char *options, void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    cl_program real = atomic_load(&program->real);
    cl_api_clBuildProgram fn = VAST_REAL(program->context->backend, real, clBuildProgram);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clBuildProgram");
    struct vast_list devices;
    cl_int err = vast_unwrap_devices(program->context, num_devices, device_list, &devices);
    if (err != CL_SUCCESS)
        return err;
    struct vast_trampoline *t = build_callback(program, pfn_notify, user_data, &err);
    if (err == CL_SUCCESS) {
        struct rebuild r = program_set_options(program, options);
        err = fn(real, num_devices, (const cl_device_id *)devices.items, options,
                 t ? vast_trampoline_program_run : NULL, t);
        if (kernels_drained(program, err))
            err = fn(real, num_devices, (const cl_device_id *)devices.items, options,
                     t ? vast_trampoline_program_run : NULL, t);
        program_settle_options(program, &r, err);
        vast_trampoline_settle(t, err);
    }
    if (err == CL_SUCCESS) /* the paged variants on VAST's worker, from the options just set */
        vast_prebuild_start(program, num_devices > 0 ? device_list[0] : program->context->devices[0]);
    vast_list_free(&devices);
    return err;
}

/* Real programs of a list of VAST programs (clCompileProgram headers, clLinkProgram inputs). */
static cl_int unwrap_programs(cl_uint n, const cl_program *programs, struct vast_list *out)
{
    out->items = out->small;
    if (n > VAST_SMALL_LIST && (out->items = malloc(n * sizeof(void *))) == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; i < n; i++) {
        if (!vast_object_is(programs[i], VAST_MAGIC_PROGRAM)) {
            vast_list_free(out);
            VAST_FAIL(CL_INVALID_PROGRAM, "programs[%u]=%p is not a VAST program", i, (void *)programs[i]);
        }
        out->items[i] = atomic_load(&programs[i]->real);
    }
    return CL_SUCCESS;
}

cl_int vast_clCompileProgram(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
                             const char *options, cl_uint num_input_headers, const cl_program *input_headers,
                             const char **header_include_names, void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                             void *user_data)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    cl_program real = atomic_load(&program->real);
    cl_api_clCompileProgram fn = VAST_REAL(program->context->backend, real, clCompileProgram);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clCompileProgram");
    VAST_RETURN_IF((num_input_headers == 0) != (input_headers == NULL), CL_INVALID_VALUE, "input headers");
    struct vast_list devices, headers;
    cl_int err = vast_unwrap_devices(program->context, num_devices, device_list, &devices);
    if (err != CL_SUCCESS)
        return err;
    err = unwrap_programs(num_input_headers, input_headers, &headers);
    struct vast_trampoline *t = NULL;
    if (err == CL_SUCCESS)
        t = build_callback(program, pfn_notify, user_data, &err);
    if (err == CL_SUCCESS) {
        struct rebuild r = program_set_options(program, options);
        const cl_program *hdrs = num_input_headers ? (const cl_program *)headers.items : NULL;
        err = fn(real, num_devices, (const cl_device_id *)devices.items, options, num_input_headers, hdrs,
                 header_include_names, t ? vast_trampoline_program_run : NULL, t);
        if (kernels_drained(program, err))
            err = fn(real, num_devices, (const cl_device_id *)devices.items, options, num_input_headers, hdrs,
                     header_include_names, t ? vast_trampoline_program_run : NULL, t);
        program_settle_options(program, &r, err);
        vast_trampoline_settle(t, err);
    }
    vast_list_free(&headers);
    vast_list_free(&devices);
    return err;
}

cl_program vast_clLinkProgram(cl_context context, cl_uint num_devices, const cl_device_id *device_list,
                              const char *options, cl_uint num_input_programs, const cl_program *input_programs,
                              void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clLinkProgram, errcode_ret);
    VAST_RETURN_NULL_IF(num_input_programs == 0 || input_programs == NULL, CL_INVALID_VALUE, errcode_ret,
                        "no input programs");
    struct vast_list devices, inputs;
    cl_int err = vast_unwrap_devices(context, num_devices, device_list, &devices);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "device_list");
    err = unwrap_programs(num_input_programs, input_programs, &inputs);
    cl_program p = err == CL_SUCCESS ? program_new(context) : NULL;
    if (err == CL_SUCCESS && p == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    if (p != NULL)
        p->origin = VAST_PROGRAM_LINKED;
    struct vast_trampoline *t = NULL;
    if (p != NULL)
        t = build_callback(p, pfn_notify, user_data, &err);
    cl_program real = NULL;
    if (err == CL_SUCCESS) {
        real = fn_(context->real, num_devices, (const cl_device_id *)devices.items, options, num_input_programs,
                   (const cl_program *)inputs.items, t ? vast_trampoline_program_run : NULL, t, &err);
        cl_program expected = NULL; /* the callback may already have stored it */
        if (real != NULL)
            atomic_compare_exchange_strong(&p->real, &expected, real);
        vast_trampoline_settle(t, real != NULL ? CL_SUCCESS : err);
    }
    vast_list_free(&inputs);
    vast_list_free(&devices);
    if (p != NULL && real == NULL) {
        VAST_RELEASE(p);
        p = NULL;
    }
    vast_set_error(errcode_ret, err);
    return p;
}

/* The real program's devices and binary sizes (malloc'ed), for CL_PROGRAM_BINARY_*. */
static cl_int real_binary_sizes(const struct _cl_icd_dispatch *d, cl_program real, cl_uint *n, cl_device_id **devs,
                                size_t **sizes)
{
    *devs = NULL;
    *sizes = NULL;
    cl_int err = d->clGetProgramInfo(real, CL_PROGRAM_NUM_DEVICES, sizeof *n, n, NULL);
    if (err != CL_SUCCESS)
        return err;
    *devs = calloc(*n ? *n : 1, sizeof **devs);
    *sizes = calloc(*n ? *n : 1, sizeof **sizes);
    VAST_RETURN_IF(*devs == NULL || *sizes == NULL, CL_OUT_OF_HOST_MEMORY, "binary sizes");
    err = d->clGetProgramInfo(real, CL_PROGRAM_DEVICES, *n * sizeof **devs, *devs, NULL);
    if (err == CL_SUCCESS)
        err = d->clGetProgramInfo(real, CL_PROGRAM_BINARY_SIZES, *n * sizeof **sizes, *sizes, NULL);
    return err;
}

/* Whether the real device is one of the program's: a device of its context (the real program
 * of a context on the backend's shared real context lists every device of that context; a
 * merged device's members are not the application's devices). */
static bool real_of_context(cl_program p, cl_device_id real)
{
    for (cl_uint i = 0; i < p->context->num_devices; i++)
        if (p->context->devices[i]->real == real)
            return true;
    return false;
}

/* The containers' fields but the real binary, per device: identity, source and options. */
struct binary_fields {
    cl_uint n, n_real; /* the program's devices; the real program's */
    cl_uint *at;       /* per device of the program: its index among the real program's */
    cl_device_id *devs;
    size_t *real_sizes, *sizes; /* the real driver's, and the containers' (0 where it has none) */
    char **ids, *source, *options;
};

static void binary_fields_free(struct binary_fields *f)
{
    for (cl_uint i = 0; f->ids != NULL && i < f->n; i++)
        free(f->ids[i]);
    free(f->ids);
    free(f->at);
    free(f->devs);
    free(f->real_sizes);
    free(f->sizes);
    free(f->source);
    free(f->options);
}

static struct vast_progbin binary_of(const struct binary_fields *f, cl_uint i, const unsigned char *real_bin)
{
    return (struct vast_progbin){f->ids[i], strlen(f->ids[i]), f->source, f->source ? strlen(f->source) : 0,
                                 f->options, f->options ? strlen(f->options) : 0, real_bin, f->real_sizes[i]};
}

static cl_int binary_fields_get(cl_program p, cl_program real, struct binary_fields *f)
{
    struct vast_backend *be = p->context->backend;
    memset(f, 0, sizeof *f);
    cl_int err = real_binary_sizes(be->dispatch, real, &f->n_real, &f->devs, &f->real_sizes);
    f->at = err == CL_SUCCESS ? calloc(f->n_real ? f->n_real : 1, sizeof *f->at) : NULL;
    if (err == CL_SUCCESS && f->at == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; err == CL_SUCCESS && i < f->n_real; i++)
        if (real_of_context(p, f->devs[i])) {
            f->devs[f->n] = f->devs[i];
            f->real_sizes[f->n] = f->real_sizes[i];
            f->at[f->n++] = i;
        }
    f->ids = err == CL_SUCCESS ? calloc(f->n ? f->n : 1, sizeof *f->ids) : NULL;
    f->sizes = err == CL_SUCCESS ? calloc(f->n ? f->n : 1, sizeof *f->sizes) : NULL;
    if (err == CL_SUCCESS && (f->ids == NULL || f->sizes == NULL))
        err = CL_OUT_OF_HOST_MEMORY;
    pthread_mutex_lock(&p->obj.lock); /* a build may replace the options meanwhile */
    f->source = p->source ? strdup(p->source) : NULL;
    f->options = p->options ? strdup(p->options) : NULL;
    pthread_mutex_unlock(&p->obj.lock);
    for (cl_uint i = 0; err == CL_SUCCESS && i < f->n; i++) {
        f->ids[i] = device_identity(be, f->devs[i]);
        if (f->ids[i] == NULL)
            err = CL_OUT_OF_HOST_MEMORY;
        else if (f->real_sizes[i] > 0) {
            struct vast_progbin pb = binary_of(f, i, NULL);
            f->sizes[i] = vast_progbin_size(&pb);
        }
    }
    return err;
}

/* CL_PROGRAM_BINARIES: the real binaries, each packed into the application's buffer (an
 * entry that is NULL is skipped, as the specification allows). */
static cl_int binaries_answer(cl_program real, const struct _cl_icd_dispatch *d, const struct binary_fields *f,
                              unsigned char **out)
{
    unsigned char **tmp = calloc(f->n_real ? f->n_real : 1, sizeof *tmp);
    cl_int err = tmp != NULL ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; err == CL_SUCCESS && i < f->n; i++)
        if (out[i] != NULL && f->real_sizes[i] > 0 && (tmp[f->at[i]] = malloc(f->real_sizes[i])) == NULL)
            err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        err = d->clGetProgramInfo(real, CL_PROGRAM_BINARIES, f->n_real * sizeof *tmp, tmp, NULL);
    for (cl_uint i = 0; err == CL_SUCCESS && i < f->n; i++) {
        struct vast_progbin pb = binary_of(f, i, tmp[f->at[i]]);
        if (tmp[f->at[i]] != NULL)
            vast_progbin_pack(&pb, out[i]);
    }
    for (cl_uint i = 0; tmp != NULL && i < f->n_real; i++)
        free(tmp[i]);
    free(tmp);
    return err;
}

static cl_int binary_info(cl_program p, cl_program real, cl_program_info name, size_t size, void *value,
                          size_t *size_ret)
{
    struct binary_fields f;
    cl_int err = binary_fields_get(p, real, &f);
    if (err == CL_SUCCESS && name == CL_PROGRAM_BINARY_SIZES) {
        err = vast_info_answer(f.sizes, f.n * sizeof *f.sizes, size, value, size_ret);
    } else if (err == CL_SUCCESS) {
        if (value != NULL && size < f.n * sizeof(unsigned char *))
            err = CL_INVALID_VALUE;
        else if (value != NULL)
            err = binaries_answer(real, p->context->backend->dispatch, &f, value);
        if (err == CL_SUCCESS && size_ret != NULL)
            *size_ret = f.n * sizeof(unsigned char *);
    }
    binary_fields_free(&f);
    return err;
}

/* CL_PROGRAM_DEVICES and CL_PROGRAM_NUM_DEVICES: the real program's devices that are devices of
 * the program's context (real_of_context), as VAST devices. */
static cl_int devices_info(cl_program p, cl_program real, cl_program_info name, size_t size, void *value,
                           size_t *size_ret)
{
    struct binary_fields f = {0};
    const struct _cl_icd_dispatch *d = p->context->backend->dispatch;
    cl_int err = d->clGetProgramInfo(real, CL_PROGRAM_NUM_DEVICES, sizeof f.n_real, &f.n_real, NULL);
    f.devs = err == CL_SUCCESS ? calloc(f.n_real ? f.n_real : 1, sizeof *f.devs) : NULL;
    if (err == CL_SUCCESS && f.devs == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        err = d->clGetProgramInfo(real, CL_PROGRAM_DEVICES, f.n_real * sizeof *f.devs, f.devs, NULL);
    for (cl_uint i = 0; err == CL_SUCCESS && i < f.n_real; i++)
        if (real_of_context(p, f.devs[i]))
            f.devs[f.n++] = vast_device_from_real(f.devs[i]);
    if (err == CL_SUCCESS)
        err = name == CL_PROGRAM_NUM_DEVICES ? vast_info_answer(&f.n, sizeof f.n, size, value, size_ret)
                                             : vast_info_answer(f.devs, f.n * sizeof *f.devs, size, value, size_ret);
    free(f.devs);
    return err;
}

cl_int vast_clGetProgramInfo(cl_program program, cl_program_info param_name, size_t param_value_size,
                             void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    cl_program real = atomic_load(&program->real);
    if (param_name == CL_PROGRAM_CONTEXT)
        return vast_info_answer(&program->context, sizeof(cl_context), param_value_size, param_value,
                                param_value_size_ret);
    if (param_name == CL_PROGRAM_REFERENCE_COUNT)
        return vast_info_refcount(&program->obj, param_value_size, param_value, param_value_size_ret);
    cl_api_clGetProgramInfo fn = VAST_REAL(program->context->backend, real, clGetProgramInfo);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clGetProgramInfo");
    if (param_name == CL_PROGRAM_BINARY_SIZES || param_name == CL_PROGRAM_BINARIES)
        return binary_info(program, real, param_name, param_value_size, param_value, param_value_size_ret);
    if (param_name == CL_PROGRAM_DEVICES || param_name == CL_PROGRAM_NUM_DEVICES)
        return devices_info(program, real, param_name, param_value_size, param_value, param_value_size_ret);
    return fn(real, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int vast_clGetProgramBuildInfo(cl_program program, cl_device_id device, cl_program_build_info param_name,
                                  size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    VAST_CHECK(device, VAST_MAGIC_DEVICE, CL_INVALID_DEVICE);
    cl_program real = atomic_load(&program->real);
    VAST_PASS(program->context->backend, real, clGetProgramBuildInfo, real, device->real, param_name,
              param_value_size, param_value, param_value_size_ret);
}

cl_int vast_clSetProgramReleaseCallback(cl_program program, void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                        void *user_data)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    (void)pfn_notify;
    (void)user_data;
    VAST_FAIL(CL_INVALID_OPERATION, "program release callbacks are deprecated and not supported");
}

cl_int vast_clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id, size_t spec_size,
                                               const void *spec_value)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    cl_program real = atomic_load(&program->real);
    VAST_PASS(program->context->backend, real, clSetProgramSpecializationConstant, real, spec_id, spec_size,
              spec_value);
}
