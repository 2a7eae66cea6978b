/*
 * program.c: programs. A VAST program wraps the real program built as the application asked,
 * and keeps its source and last build options: the paged and inspector variants are built
 * from them lazily when a launch first needs paging (translate/).
 */
#include "api.h"
#include "callback.h"
#include "check.h"
#include "launch.h"

#include <stdlib.h>
#include <string.h>

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

cl_program vast_clCreateProgramWithBinary(cl_context context, cl_uint num_devices, const cl_device_id *device_list,
                                          const size_t *lengths, const unsigned char **binaries,
                                          cl_int *binary_status, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateProgramWithBinary, errcode_ret);
    struct vast_list devices;
    cl_int err = vast_unwrap_devices(context, num_devices, device_list, &devices);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "device_list");
    cl_program real = fn_(context->real, num_devices, (const cl_device_id *)devices.items, lengths, binaries,
                          binary_status, &err);
    vast_list_free(&devices);
    return program_wrap(context, real, err, errcode_ret);
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
    return program_wrap(context, real, err, errcode_ret);
}

cl_program vast_clCreateProgramWithIL(cl_context context, const void *il, size_t length, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateProgramWithIL, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_program real = fn_(context->real, il, length, &err);
    return program_wrap(context, real, err, errcode_ret);
}

cl_int vast_clRetainProgram(cl_program program)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    VAST_RETAIN(program);
    return CL_SUCCESS;
}

cl_int vast_clReleaseProgram(cl_program program)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    VAST_RELEASE(program);
    return CL_SUCCESS;
}

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

static void program_set_options(cl_program program, const char *options)
{
    char *copy = options ? strdup(options) : NULL;
    pthread_mutex_lock(&program->obj.lock);
    free(program->options);
    program->options = copy;
    pthread_mutex_unlock(&program->obj.lock);
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
        program_set_options(program, options);
        err = fn(real, num_devices, (const cl_device_id *)devices.items, options,
                 t ? vast_trampoline_program_run : NULL, t);
        vast_trampoline_settle(t, err);
    }
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
        program_set_options(program, options);
        err = fn(real, num_devices, (const cl_device_id *)devices.items, options, num_input_headers,
                 num_input_headers ? (const cl_program *)headers.items : NULL, header_include_names,
                 t ? vast_trampoline_program_run : NULL, t);
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

cl_int vast_clGetProgramInfo(cl_program program, cl_program_info param_name, size_t param_value_size,
                             void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    cl_program real = atomic_load(&program->real);
    cl_uint refs = atomic_load(&program->obj.refcount);
    if (param_name == CL_PROGRAM_CONTEXT)
        return vast_info_answer(&program->context, sizeof(cl_context), param_value_size, param_value,
                                param_value_size_ret);
    if (param_name == CL_PROGRAM_REFERENCE_COUNT)
        return vast_info_answer(&refs, sizeof refs, param_value_size, param_value, param_value_size_ret);
    cl_api_clGetProgramInfo fn = VAST_REAL(program->context->backend, real, clGetProgramInfo);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clGetProgramInfo");
    cl_int err = fn(real, param_name, param_value_size, param_value, param_value_size_ret);
    if (err == CL_SUCCESS && param_name == CL_PROGRAM_DEVICES && param_value != NULL) {
        cl_device_id *devices = param_value;
        for (size_t i = 0; i < param_value_size / sizeof(cl_device_id); i++)
            devices[i] = vast_device_from_real(devices[i]);
    }
    return err;
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
