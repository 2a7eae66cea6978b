/*
 * kernel.c: kernels, their arguments and their launches. Memory objects and samplers given
 * as argument values are replaced by their real counterparts; a value is taken for a handle
 * only when the live-handle registry knows it, so arbitrary 8-byte values are never read
 * through. Launches with a virtual buffer argument are captured (launch.c) and run by the
 * executor's device lane; the others pass through.
 */
#include "api.h"
#include "chain.h"
#include "check.h"
#include "executor.h"
#include "launch.h"
#include "mem.h"
#include "pagecache.h"
#include "prebuild.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

static cl_int note_image_arg(cl_kernel kernel, cl_uint index, struct vast_object *held);

static void kernel_destroy(struct vast_object *obj)
{
    cl_kernel k = (cl_kernel)obj;
    vast_launch_kernel_free(k);
    for (cl_uint i = 0; i < k->image_nargs; i++)
        if (k->image_args[i] != NULL)
            VAST_RELEASE(k->image_args[i]);
    free(k->image_args);
    if (k->real != NULL)
        k->program->context->backend->dispatch->clReleaseKernel(k->real);
    if (atomic_load(&k->app_refs) > 0) /* released by VAST itself (a failed creation) */
        atomic_fetch_sub(&k->program->app_kernels, 1);
    atomic_fetch_sub(&k->program->live_kernels, 1);
    VAST_RELEASE(k->program);
}

static cl_kernel kernel_wrap(cl_program program, cl_kernel real)
{
    cl_kernel k = vast_object_alloc(sizeof *k);
    if (k == NULL) {
        program->context->backend->dispatch->clReleaseKernel(real);
        return NULL;
    }
    vast_object_init(&k->obj, VAST_MAGIC_KERNEL, kernel_destroy);
    k->real = real;
    k->program = program;
    atomic_store(&k->app_refs, 1);
    atomic_fetch_add(&program->live_kernels, 1);
    atomic_fetch_add(&program->app_kernels, 1);
    VAST_RETAIN(program);
    program->context->backend->dispatch->clGetKernelInfo(real, CL_KERNEL_FUNCTION_NAME, sizeof k->name, k->name,
                                                         NULL);
    vast_prebuild_start(program, program->context->devices[0]); /* unless clBuildProgram did */
    return k;
}

cl_kernel vast_clCreateKernel(cl_program program, const char *kernel_name, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM, errcode_ret);
    cl_program real_program = atomic_load(&program->real);
    VAST_REAL_OR_NULL(program->context->backend, real_program, clCreateKernel, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_kernel real = fn_(real_program, kernel_name, &err);
    VAST_RETURN_NULL_IF(real == NULL, err, errcode_ret, "the real clCreateKernel('%s') failed",
                        kernel_name ? kernel_name : "(null)");
    cl_kernel k = kernel_wrap(program, real);
    vast_set_error(errcode_ret, k ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY);
    return k;
}

cl_int vast_clCreateKernelsInProgram(cl_program program, cl_uint num_kernels, cl_kernel *kernels,
                                     cl_uint *num_kernels_ret)
{
    VAST_CHECK(program, VAST_MAGIC_PROGRAM, CL_INVALID_PROGRAM);
    cl_program real_program = atomic_load(&program->real);
    cl_api_clCreateKernelsInProgram fn = VAST_REAL(program->context->backend, real_program, clCreateKernelsInProgram);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clCreateKernelsInProgram");
    cl_kernel *reals = kernels ? calloc(num_kernels ? num_kernels : 1, sizeof *reals) : NULL;
    VAST_RETURN_IF(kernels != NULL && reals == NULL, CL_OUT_OF_HOST_MEMORY, "kernel list");
    cl_uint n = 0;
    cl_int err = fn(real_program, num_kernels, reals, &n);
    if (num_kernels_ret != NULL)
        *num_kernels_ret = n;
    for (cl_uint i = 0; err == CL_SUCCESS && kernels != NULL && i < n && i < num_kernels; i++) {
        kernels[i] = kernel_wrap(program, reals[i]);
        if (kernels[i] == NULL) {
            for (cl_uint j = i + 1; j < n && j < num_kernels; j++)
                program->context->backend->dispatch->clReleaseKernel(reals[j]);
            while (i > 0)
                VAST_RELEASE(kernels[--i]);
            err = CL_OUT_OF_HOST_MEMORY;
        }
    }
    free(reals);
    return err;
}

cl_kernel vast_clCloneKernel(cl_kernel source_kernel, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(source_kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL, errcode_ret);
    VAST_REAL_OR_NULL(source_kernel->program->context->backend, source_kernel->real, clCloneKernel, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_kernel real = fn_(source_kernel->real, &err);
    VAST_RETURN_NULL_IF(real == NULL, err, errcode_ret, "the real clCloneKernel failed");
    cl_kernel k = kernel_wrap(source_kernel->program, real);
    cl_int err2 = k ? vast_launch_clone(source_kernel, k) : CL_OUT_OF_HOST_MEMORY;
    pthread_mutex_lock(&source_kernel->obj.lock);
    for (cl_uint i = 0; err2 == CL_SUCCESS && i < source_kernel->image_nargs; i++)
        if (source_kernel->image_args[i] != NULL)
            err2 = note_image_arg(k, i, &source_kernel->image_args[i]->obj);
    pthread_mutex_unlock(&source_kernel->obj.lock);
    if (k != NULL && err2 != CL_SUCCESS) {
        VAST_RELEASE(k);
        k = NULL;
    }
    vast_set_error(errcode_ret, err2);
    return k;
}

/* The application's references are counted apart from VAST's (a launch holds its kernel until
 * it is reaped): a program none of whose kernels the application holds can be rebuilt. */
cl_int vast_clRetainKernel(cl_kernel kernel)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    if (atomic_fetch_add(&kernel->app_refs, 1) == 0)
        atomic_fetch_add(&kernel->program->app_kernels, 1);
    VAST_RETAIN(kernel);
    return CL_SUCCESS;
}

cl_int vast_clReleaseKernel(cl_kernel kernel)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    uint32_t n = atomic_load(&kernel->app_refs);
    while (n > 0 && !atomic_compare_exchange_weak(&kernel->app_refs, &n, n - 1))
        ;
    if (n == 1)
        atomic_fetch_sub(&kernel->program->app_kernels, 1);
    VAST_RELEASE(kernel);
    return CL_SUCCESS;
}

#define KERNEL_BACKEND(k) ((k)->program->context->backend)

/* True when argument `index` is a __global or __constant pointer, as far as the real driver
 * tells (argument info may be unavailable: then false). A value there that is not one of
 * VAST's handles, such as another platform's cl_mem, must not reach the real driver: it may
 * be the real platform's own object, which the driver would accept. */
static bool takes_memory(cl_kernel kernel, cl_uint index)
{
    cl_kernel_arg_address_qualifier q = 0;
    cl_api_clGetKernelArgInfo fn = VAST_REAL(KERNEL_BACKEND(kernel), kernel->real, clGetKernelArgInfo);
    if (fn == NULL || fn(kernel->real, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, NULL) != CL_SUCCESS)
        return false;
    return q == CL_KERNEL_ARG_ADDRESS_GLOBAL || q == CL_KERNEL_ARG_ADDRESS_CONSTANT;
}

cl_int vast_clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void *arg_value)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    void *value = NULL;
    cl_mem vbuf = NULL;
    struct vast_object *held = NULL; /* the VAST object behind a real handle value */
    bool unknown = false;            /* 8 non-zero bytes that are no VAST handle */
    if (arg_value != NULL && arg_size == sizeof value) {
        memcpy(&value, arg_value, sizeof value);
        unknown = value != NULL && !vast_registry_contains(value);
        if (value != NULL && !unknown) {
            if (vast_object_is(value, VAST_MAGIC_MEM) && vast_mem_is_virtual((cl_mem)value))
                vbuf = value; /* bound at launch (launch.c) */
            else if (vast_object_is(value, VAST_MAGIC_MEM))
                held = value, value = ((cl_mem)value)->real;
            else if (vast_object_is(value, VAST_MAGIC_SAMPLER))
                held = value, value = ((cl_sampler)value)->real;
            else if (vast_object_is(value, VAST_MAGIC_QUEUE))
                held = value, value = ((cl_command_queue)value)->real;
            arg_value = &value;
        }
    }
    VAST_RETURN_IF(vbuf != NULL && vbuf->context != kernel->program->context, CL_INVALID_MEM_OBJECT,
                   "argument %u is a buffer of another context", arg_index);
    VAST_RETURN_IF(unknown && takes_memory(kernel, arg_index),
                   CL_INVALID_MEM_OBJECT, "argument %u of '%s' is not a memory object of VAST", arg_index,
                   kernel->name);
    cl_int err = CL_SUCCESS;
    if (vbuf == NULL) {
        cl_api_clSetKernelArg fn = VAST_REAL(KERNEL_BACKEND(kernel), kernel->real, clSetKernelArg);
        err = fn(kernel->real, arg_index, arg_size, arg_value);
    }
    if (err == CL_SUCCESS)
        err = note_image_arg(kernel, arg_index, held);
    return err == CL_SUCCESS ? vast_launch_record_arg(kernel, arg_index, arg_size, arg_value, vbuf, held) : err;
}

/* SVM pointers go to the real kernel (launches without virtual buffers pass through) and
 * into the argument record, where they replace what the argument held: launches through VAST
 * hand them to the kernel as they are (launch.c, direct mode only). */
cl_int vast_clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint arg_index, const void *arg_value)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    cl_api_clSetKernelArgSVMPointer fn = VAST_REAL(KERNEL_BACKEND(kernel), kernel->real, clSetKernelArgSVMPointer);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clSetKernelArgSVMPointer");
    cl_int err = fn(kernel->real, arg_index, arg_value);
    if (err == CL_SUCCESS)
        err = note_image_arg(kernel, arg_index, NULL);
    return err == CL_SUCCESS ? vast_launch_record_svm(kernel, arg_index, arg_value) : err;
}

cl_int vast_clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param_name, size_t param_value_size,
                                const void *param_value)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    cl_api_clSetKernelExecInfo fn = VAST_REAL(KERNEL_BACKEND(kernel), kernel->real, clSetKernelExecInfo);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no clSetKernelExecInfo");
    cl_int err = fn(kernel->real, param_name, param_value_size, param_value);
    return err == CL_SUCCESS ? vast_launch_record_exec_info(kernel, param_name, param_value_size, param_value) : err;
}

cl_int vast_clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size, void *param_value,
                            size_t *param_value_size_ret)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    switch (param_name) {
    case CL_KERNEL_CONTEXT:
        return vast_info_answer(&kernel->program->context, sizeof(cl_context), param_value_size, param_value,
                                param_value_size_ret);
    case CL_KERNEL_PROGRAM:
        return vast_info_answer(&kernel->program, sizeof(cl_program), param_value_size, param_value,
                                param_value_size_ret);
    case CL_KERNEL_REFERENCE_COUNT:
        return vast_info_refcount(&kernel->obj, param_value_size, param_value, param_value_size_ret);
    default:
        VAST_PASS(KERNEL_BACKEND(kernel), kernel->real, clGetKernelInfo, kernel->real, param_name, param_value_size,
                  param_value, param_value_size_ret);
    }
}

/* The real device for per-device kernel queries; NULL stays NULL (single-device programs). */
#define CHECK_OPTIONAL_DEVICE(device)                                                             \
    VAST_RETURN_IF(device != NULL && !vast_object_is(device, VAST_MAGIC_DEVICE), CL_INVALID_DEVICE, \
                   "device %p is not a VAST device", (void *)device)
/* NULL names the program's one device: the context's when it has one (its real program, on the
 * backend's shared real context, lists every device of that context). */
static cl_device_id real_device(cl_kernel kernel, cl_device_id device)
{
    cl_context c = kernel->program->context;
    return device != NULL ? device->real : c->num_devices == 1 ? c->devices[0]->real : NULL;
}
#define REAL_DEVICE(device) real_device(kernel, device)

cl_int vast_clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param_name,
                                     size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    CHECK_OPTIONAL_DEVICE(device);
    VAST_PASS(KERNEL_BACKEND(kernel), kernel->real, clGetKernelWorkGroupInfo, kernel->real, REAL_DEVICE(device),
              param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int vast_clGetKernelArgInfo(cl_kernel kernel, cl_uint arg_indx, cl_kernel_arg_info param_name,
                               size_t param_value_size, void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    VAST_PASS(KERNEL_BACKEND(kernel), kernel->real, clGetKernelArgInfo, kernel->real, arg_indx, param_name,
              param_value_size, param_value, param_value_size_ret);
}

cl_int vast_clGetKernelSubGroupInfo(cl_kernel kernel, cl_device_id device, cl_kernel_sub_group_info param_name,
                                    size_t input_value_size, const void *input_value, size_t param_value_size,
                                    void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    CHECK_OPTIONAL_DEVICE(device);
    VAST_PASS(KERNEL_BACKEND(kernel), kernel->real, clGetKernelSubGroupInfo, kernel->real, REAL_DEVICE(device),
              param_name, input_value_size, input_value, param_value_size, param_value, param_value_size_ret);
}

cl_int vast_clGetKernelSubGroupInfoKHR(cl_kernel kernel, cl_device_id device, cl_kernel_sub_group_info param_name,
                                       size_t input_value_size, const void *input_value, size_t param_value_size,
                                       void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    CHECK_OPTIONAL_DEVICE(device);
    VAST_PASS(KERNEL_BACKEND(kernel), kernel->real, clGetKernelSubGroupInfoKHR, kernel->real, REAL_DEVICE(device),
              param_name, input_value_size, input_value, param_value_size, param_value, param_value_size_ret);
}

static cl_int launch_run(void *cmd, cl_command_queue exec_queue) { return vast_launch_execute(cmd, exec_queue); }
static void launch_free(void *cmd) { vast_launch_cmd_free(cmd); }
static void launch_submitted(void *cmd, cl_command_queue q, uint64_t seq) { vast_chain_submitted(cmd, q, seq); }
const struct vast_vcmd_ops vast_launch_ops = {CL_COMMAND_NDRANGE_KERNEL, VAST_LANE_DEVICE, launch_run, launch_free,
                                              launch_submitted};

/* Argument `index` is now `image` when that is an image made from a virtual buffer, else
 * something else (launches with such images copy their buffers, image.c). */
static cl_int note_image_arg(cl_kernel kernel, cl_uint index, struct vast_object *held)
{
    cl_mem image = held != NULL && vast_object_is(held, VAST_MAGIC_MEM) && ((cl_mem)held)->mirror ? (cl_mem)held
                                                                                                 : NULL;
    cl_mem old = NULL;
    pthread_mutex_lock(&kernel->obj.lock);
    if (image != NULL && index >= kernel->image_nargs) {
        cl_mem *a = realloc(kernel->image_args, (index + 1) * sizeof *a);
        if (a == NULL) {
            pthread_mutex_unlock(&kernel->obj.lock);
            VAST_FAIL(CL_OUT_OF_HOST_MEMORY, "argument record");
        }
        for (cl_uint i = kernel->image_nargs; i <= index; i++)
            a[i] = NULL;
        kernel->image_args = a;
        kernel->image_nargs = index + 1;
    }
    if (index < kernel->image_nargs) {
        old = kernel->image_args[index];
        kernel->image_args[index] = image;
        if (image != NULL)
            VAST_RETAIN(image);
    }
    pthread_mutex_unlock(&kernel->obj.lock);
    if (old != NULL)
        VAST_RELEASE(old);
    return CL_SUCCESS;
}

/* The images made from virtual buffers among the kernel's arguments (retained), and whether
 * the kernel may write each (not declared read_only); SIZE_MAX when there are too many. */
static size_t mirrored_args(cl_kernel kernel, cl_mem *images, bool *written)
{
    size_t n = 0, too_many = 0;
    cl_uint index[VAST_LAUNCH_MIRRORS];
    pthread_mutex_lock(&kernel->obj.lock);
    for (cl_uint i = 0; i < kernel->image_nargs && !too_many; i++) {
        if (kernel->image_args[i] == NULL)
            continue;
        too_many = n == VAST_LAUNCH_MIRRORS;
        if (!too_many) {
            images[n] = kernel->image_args[i];
            VAST_RETAIN(images[n]);
            index[n++] = i;
        }
    }
    pthread_mutex_unlock(&kernel->obj.lock);
    cl_api_clGetKernelArgInfo fn = VAST_REAL(KERNEL_BACKEND(kernel), kernel->real, clGetKernelArgInfo);
    for (size_t k = 0; k < n && k < VAST_LAUNCH_MIRRORS; k++) { /* n <= VAST_LAUNCH_MIRRORS; GCC -O3 cannot tell */
        cl_kernel_arg_access_qualifier q = CL_KERNEL_ARG_ACCESS_READ_WRITE;
        if (fn != NULL)
            fn(kernel->real, index[k], CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof q, &q, NULL);
        written[k] = q != CL_KERNEL_ARG_ACCESS_READ_ONLY;
        if (too_many)
            VAST_RELEASE(images[k]);
    }
    return too_many ? SIZE_MAX : n;
}

/* A zero-sized NDRange: a command that runs nothing, so that its event reports a kernel. */
static cl_int run_nothing(void *ctx, cl_command_queue exec_queue)
{
    (void)ctx;
    (void)exec_queue;
    return CL_SUCCESS;
}

static void free_nothing(void *ctx) { (void)ctx; }

static const struct vast_vcmd_ops zero_sized_ops = {CL_COMMAND_NDRANGE_KERNEL, VAST_LANE_HOST, run_nothing,
                                                    free_nothing, NULL};

cl_int vast_clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                                   const size_t *global_work_offset, const size_t *global_work_size,
                                   const size_t *local_work_size, cl_uint num_events_in_wait_list,
                                   const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK(kernel, VAST_MAGIC_KERNEL, CL_INVALID_KERNEL);
    if (work_dim >= 1 && work_dim <= 3)
        for (cl_uint i = 0; i < work_dim; i++)
            if (global_work_size == NULL || global_work_size[i] == 0) {
                /* Valid since OpenCL 2.1 (a NULL size too): nothing runs; the command completes after
                 * its wait list. */
                for (cl_uint j = 0; local_work_size != NULL && j < work_dim; j++)
                    VAST_RETURN_IF(local_work_size[j] == 0, CL_INVALID_WORK_GROUP_SIZE, "local_work_size[%u] is 0", j);
                VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
                VAST_RETURN_IF(kernel->program->context != command_queue->context, CL_INVALID_CONTEXT,
                               "kernel and queue of different contexts");
                return vast_vcmd_submit(command_queue, num_events_in_wait_list, event_wait_list, &zero_sized_ops,
                                        NULL, false, event);
            }
    cl_mem images[VAST_LAUNCH_MIRRORS];
    bool written[VAST_LAUNCH_MIRRORS];
    size_t n = mirrored_args(kernel, images, written);
    VAST_RETURN_IF(n == SIZE_MAX, CL_OUT_OF_RESOURCES, "kernel '%s' takes more than %d images made from buffers",
                   kernel->name, VAST_LAUNCH_MIRRORS);
    if (n > 0)
        return vast_image_launch(command_queue, kernel, work_dim, global_work_offset, global_work_size,
                                 local_work_size, images, written, n, num_events_in_wait_list, event_wait_list, event);
    if (vast_launch_needs_vast(kernel))
        return vast_launch_ndrange(command_queue, kernel, work_dim, global_work_offset, global_work_size,
                                   local_work_size, num_events_in_wait_list, event_wait_list, event);
    VAST_ENQUEUE(command_queue, clEnqueueNDRangeKernel, num_events_in_wait_list, event_wait_list, event, kernel->real,
                 work_dim, global_work_offset, global_work_size, local_work_size);
}

cl_int vast_clEnqueueTask(cl_command_queue command_queue, cl_kernel kernel, cl_uint num_events_in_wait_list,
                          const cl_event *event_wait_list, cl_event *event)
{
    static const size_t one = 1;
    return vast_clEnqueueNDRangeKernel(command_queue, kernel, 1, NULL, &one, &one, num_events_in_wait_list,
                                       event_wait_list, event);
}

/* A native kernel on virtual buffers is a virtual command of the host lane, on the backing
 * stores: each buffer is brought up to date on the host, handed to the function as its host
 * address, and what the function wrote is then carried to pages still resident. The argument
 * block is copied and the buffers retained at enqueue (the specification's copy). */
struct native_cmd {
    void(CL_CALLBACK *fn)(void *);
    char *args;
    size_t cb_args;
    cl_uint n;
    cl_mem *mems;  /* retained */
    size_t *at;    /* where each buffer's address goes in args */
};

static cl_int native_run(void *ctx, cl_command_queue exec_queue)
{
    (void)exec_queue;
    struct native_cmd *c = ctx;
    struct vast_host_write **tokens = calloc(c->n ? c->n : 1, sizeof *tokens);
    cl_int err = tokens ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    cl_uint svm_mapped = 0; /* buffers made from SVM memory: inside real SVM maps (vbuf.h) */
    while (err == CL_SUCCESS && svm_mapped < c->n)
        if ((err = vast_vbuf_svm_begin(c->mems[svm_mapped], true)) == CL_SUCCESS)
            svm_mapped++;
    for (cl_uint i = 0; i < c->n && err == CL_SUCCESS; i++) {
        err = vast_vbuf_coherent(c->mems[i], NULL, 0, c->mems[i]->size); /* other devices' writes */
        int st = err == CL_SUCCESS ? pagecache_flush_range(c->mems[i]->pc, 0, c->mems[i]->size) : VAST_PC_OK;
        if (err != CL_SUCCESS)
            break;
        if (st == VAST_PC_OK)
            st = pagecache_begin_host_write(c->mems[i]->pc, 0, c->mems[i]->size, &tokens[i]);
        err = vast_pc_error(st);
        void *host = pagecache_buffer_host(c->mems[i]->pc);
        if (err == CL_SUCCESS)
            memcpy(c->args + c->at[i], &host, sizeof host);
    }
    if (err == CL_SUCCESS)
        c->fn(c->args);
    for (cl_uint i = 0; i < c->n && tokens; i++)
        if (tokens[i] != NULL && pagecache_end_host_write(tokens[i]) != VAST_PC_OK)
            err = CL_OUT_OF_RESOURCES;
    while (svm_mapped > 0)
        if (vast_vbuf_svm_end(c->mems[--svm_mapped]) != CL_SUCCESS)
            err = CL_OUT_OF_RESOURCES;
    free(tokens);
    return err;
}

static void native_free(void *ctx)
{
    struct native_cmd *c = ctx;
    for (cl_uint i = 0; c->mems != NULL && i < c->n; i++)
        if (c->mems[i] != NULL)
            VAST_RELEASE(c->mems[i]);
    free(c->mems);
    free(c->at);
    free(c->args);
    free(c);
}

static const struct vast_vcmd_ops native_ops = {CL_COMMAND_NATIVE_KERNEL, VAST_LANE_HOST, native_run, native_free, NULL};

static cl_int native_capture(struct native_cmd *c, void(CL_CALLBACK *user_func)(void *), void *args, size_t cb_args,
                             cl_uint n, const cl_mem *mems, const void **locs)
{
    c->fn = user_func;
    c->cb_args = cb_args;
    c->args = malloc(cb_args ? cb_args : 1);
    c->mems = calloc(n ? n : 1, sizeof *c->mems);
    c->at = calloc(n ? n : 1, sizeof *c->at);
    VAST_RETURN_IF(c->args == NULL || c->mems == NULL || c->at == NULL, CL_OUT_OF_HOST_MEMORY, "native kernel");
    if (cb_args)
        memcpy(c->args, args, cb_args);
    for (cl_uint i = 0; i < n; i++) {
        size_t at = (size_t)((const char *)locs[i] - (const char *)args);
        VAST_RETURN_IF(at > cb_args || cb_args - at < sizeof(void *), CL_INVALID_VALUE,
                       "args_mem_loc[%u] is outside the argument block", i);
        c->at[i] = at;
        c->mems[i] = mems[i];
        VAST_RETAIN(mems[i]);
        c->n = i + 1;
    }
    return CL_SUCCESS;
}

static cl_int native_on_virtual(cl_command_queue q, void(CL_CALLBACK *user_func)(void *), void *args, size_t cb_args,
                                cl_uint n, const cl_mem *mems, const void **locs, cl_uint num_events,
                                const cl_event *wait_list, cl_event *event)
{
    VAST_CHECK(q, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_RETURN_IF(user_func == NULL, CL_INVALID_VALUE, "user_func is NULL");
    VAST_RETURN_IF(args == NULL || locs == NULL, CL_INVALID_VALUE, "memory objects without argument block");
    for (cl_uint i = 0; i < n; i++) {
        VAST_RETURN_IF(!vast_object_is(mems[i], VAST_MAGIC_MEM) || !vast_mem_is_virtual(mems[i]) ||
                           mems[i]->context != q->context,
                       CL_INVALID_MEM_OBJECT, "mem_list[%u] is not a buffer of the queue's context", i);
        for (cl_uint j = 0; j < i; j++) /* one host write per root buffer at a time */
            VAST_RETURN_IF(vast_mem_root(mems[j]) == vast_mem_root(mems[i]),
                           CL_INVALID_OPERATION, "a native kernel takes one view of each virtual buffer");
    }
    struct native_cmd *c = calloc(1, sizeof *c);
    VAST_RETURN_IF(c == NULL, CL_OUT_OF_HOST_MEMORY, "native kernel");
    cl_int err = native_capture(c, user_func, args, cb_args, n, mems, locs);
    if (err != CL_SUCCESS) {
        native_free(c);
        return err;
    }
    return vast_vcmd_submit(q, num_events, wait_list, &native_ops, c, false, event);
}

/* Native kernels: the argument block holds VAST memory handles at args_mem_loc; the real
 * driver needs a block holding real ones, at the same offsets. */
cl_int vast_clEnqueueNativeKernel(cl_command_queue command_queue, void(CL_CALLBACK *user_func)(void *), void *args,
                                  size_t cb_args, cl_uint num_mem_objects, const cl_mem *mem_list,
                                  const void **args_mem_loc, cl_uint num_events_in_wait_list,
                                  const cl_event *event_wait_list, cl_event *event)
{
    VAST_RETURN_IF(num_mem_objects > 0 && (args == NULL || mem_list == NULL || args_mem_loc == NULL), CL_INVALID_VALUE,
                   "memory objects without argument block");
    for (cl_uint i = 0; i < num_mem_objects; i++)
        if (vast_object_is(mem_list[i], VAST_MAGIC_MEM) && vast_mem_is_virtual(mem_list[i]))
            return native_on_virtual(command_queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc,
                                     num_events_in_wait_list, event_wait_list, event);
    struct vast_list mems;
    cl_int err = vast_unwrap_mems(num_mem_objects, mem_list, &mems);
    if (err != CL_SUCCESS)
        return err;
    char *copy = cb_args ? malloc(cb_args) : NULL;
    const void **locs = num_mem_objects ? malloc(num_mem_objects * sizeof *locs) : NULL;
    if ((cb_args && copy == NULL) || (num_mem_objects && locs == NULL)) {
        err = CL_OUT_OF_HOST_MEMORY;
    } else {
        if (cb_args)
            memcpy(copy, args, cb_args);
        for (cl_uint i = 0; i < num_mem_objects && err == CL_SUCCESS; i++) {
            size_t at = (size_t)((const char *)args_mem_loc[i] - (const char *)args);
            if (at > cb_args || cb_args - at < sizeof(cl_mem))
                err = CL_INVALID_VALUE;
            else
                locs[i] = copy + at;
        }
    }
    if (err == CL_SUCCESS)
        err = vast_enqueue_native(command_queue, user_func, copy, cb_args, num_mem_objects,
                                  (const cl_mem *)mems.items, locs, num_events_in_wait_list, event_wait_list, event);
    free(copy);
    free(locs);
    vast_list_free(&mems);
    return err;
}

cl_int vast_enqueue_native(cl_command_queue command_queue, void(CL_CALLBACK *user_func)(void *), void *args,
                           size_t cb_args, cl_uint num_mem_objects, const cl_mem *mem_list, const void **args_mem_loc,
                           cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
{
    VAST_ENQUEUE(command_queue, clEnqueueNativeKernel, num_events_in_wait_list, event_wait_list, event, user_func,
                 args, cb_args, num_mem_objects, mem_list, args_mem_loc);
}
