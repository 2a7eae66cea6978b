/*
 * context.c: contexts. A VAST context wraps one real context on the real platform of its
 * devices; the devices of one context must come from one real platform. The application's
 * properties are kept as given (with the VAST platform) for CL_CONTEXT_PROPERTIES, and the
 * real context is created with the real platform in their place. Contexts of root devices
 * share one real context per backend, so destructor callbacks are VAST's own: they run when
 * the application's context is destroyed, never with the real one.
 */
#include "api.h"
#include "check.h"
#include "platform.h"

#include <stdlib.h>
#include <string.h>

struct vast_context_destructor {
    struct vast_context_destructor *next;
    void(CL_CALLBACK *fn)(cl_context, void *);
    void *user_data;
};

static void context_destroy(struct vast_object *obj)
{
    cl_context c = (cl_context)obj;
    if (c->real != NULL)
        c->backend->dispatch->clReleaseContext(c->real);
    for (cl_uint i = 0; i < c->num_devices; i++)
        if (!c->devices[i]->is_root)
            VAST_RELEASE(c->devices[i]);
    if (c->members != c->devices)
        free(c->members);
    free(c->devices);
    free(c->properties);
    /* Everything is released: callbacks run last-registered first (the specification's order). */
    for (struct vast_context_destructor *d = c->destructors, *next; d != NULL; d = next) {
        next = d->next;
        d->fn(c, d->user_data);
        free(d);
    }
}

/* Copy the application's properties and make the real platform's version of them. */
static cl_int context_properties(const cl_context_properties *props, cl_context c,
                                 cl_context_properties **real_props)
{
    *real_props = NULL;
    if (props == NULL)
        return CL_SUCCESS;
    size_t n = 0;
    while (props[n] != 0)
        n += 2;
    c->properties_size = (n + 1) * sizeof *props;
    c->properties = malloc(c->properties_size);
    *real_props = malloc(c->properties_size);
    VAST_RETURN_IF(c->properties == NULL || *real_props == NULL, CL_OUT_OF_HOST_MEMORY, "properties");
    memcpy(c->properties, props, c->properties_size);
    memcpy(*real_props, props, c->properties_size);
    for (size_t i = 0; i < n; i += 2) {
        if (props[i] == CL_CONTEXT_PLATFORM) {
            cl_platform_id p = (cl_platform_id)props[i + 1];
            VAST_RETURN_IF(!vast_object_is(p, VAST_MAGIC_PLATFORM), CL_INVALID_PLATFORM,
                           "CL_CONTEXT_PLATFORM %p is not the VAST platform", (void *)p);
            (*real_props)[i + 1] = (cl_context_properties)c->backend->real;
        } else {
            for (size_t j = 0; j < i; j += 2)
                VAST_RETURN_IF(props[j] == props[i], CL_INVALID_PROPERTY, "property 0x%lx given twice",
                               (long)props[i]);
        }
    }
    return CL_SUCCESS;
}

/* The devices whose page caches hold the context's buffers: a merged device's members in its
 * place (each device once; the members of a merged device are never listed themselves). */
static cl_int context_members(cl_context c)
{
    cl_uint n = 0;
    for (cl_uint i = 0; i < c->num_devices; i++)
        n += c->devices[i]->num_members > 1 ? c->devices[i]->num_members : 1;
    c->members = c->devices;
    c->num_members = c->num_devices;
    if (n == c->num_devices)
        return CL_SUCCESS;
    cl_device_id *m = malloc(n * sizeof *m);
    VAST_RETURN_IF(m == NULL, CL_OUT_OF_HOST_MEMORY, "member list");
    cl_uint k = 0;
    for (cl_uint i = 0; i < c->num_devices; i++)
        if (c->devices[i]->num_members > 1)
            for (cl_uint j = 0; j < c->devices[i]->num_members; j++)
                m[k++] = c->devices[i]->members[j];
        else
            m[k++] = c->devices[i];
    c->members = m;
    c->num_members = k;
    return CL_SUCCESS;
}

static cl_int context_devices(cl_context c, cl_uint num_devices, const cl_device_id *devices)
{
    VAST_RETURN_IF(devices == NULL || num_devices == 0, CL_INVALID_VALUE, "no devices");
    for (cl_uint i = 0; i < num_devices; i++) {
        VAST_RETURN_IF(!vast_object_is(devices[i], VAST_MAGIC_DEVICE), CL_INVALID_DEVICE,
                       "devices[%u]=%p is not a VAST device", i, (void *)devices[i]);
        if (devices[i]->backend != devices[0]->backend) {
            vast_warn("a context's devices must come from one real platform ('%s' and '%s')",
                      devices[0]->backend->name, devices[i]->backend->name);
            return CL_INVALID_DEVICE;
        }
    }
    c->backend = devices[0]->backend;
    c->devices = malloc(num_devices * sizeof *c->devices);
    VAST_RETURN_IF(c->devices == NULL, CL_OUT_OF_HOST_MEMORY, "device list");
    c->num_devices = num_devices;
    for (cl_uint i = 0; i < num_devices; i++) {
        c->devices[i] = devices[i];
        if (!devices[i]->is_root)
            VAST_RETAIN(devices[i]);
    }
    return context_members(c);
}

/*
 * Every context whose devices are root devices of one real platform lives on that platform's
 * one shared real context: the device page cache's chunks are real memory objects, which can
 * serve kernels only of their own context, and the cache is shared by all contexts of the
 * process. The shared context is made on first use and lives as long as the process.
 */
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

static cl_context backend_shared_context(struct vast_backend *be, cl_int *err)
{
    pthread_mutex_lock(&shared_lock);
    if (be->shared == NULL) {
        cl_device_id *roots;
        size_t n = vast_platform_devices(&roots), k = 0;
        cl_device_id *reals = calloc(n ? n : 1, sizeof *reals);
        for (size_t i = 0; reals != NULL && i < n; i++)
            if (roots[i]->backend == be)
                reals[k++] = roots[i]->real;
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)be->real, 0};
        *err = CL_OUT_OF_HOST_MEMORY;
        if (reals != NULL)
            be->shared = be->dispatch->clCreateContext(props, (cl_uint)k, reals, NULL, NULL, err);
        free(reals);
    }
    cl_context shared = be->shared;
    if (shared != NULL) {
        be->dispatch->clRetainContext(shared); /* the VAST context's reference */
        *err = CL_SUCCESS;
    }
    pthread_mutex_unlock(&shared_lock);
    return shared;
}

static bool devices_all_root(cl_uint n, const cl_device_id *devices)
{
    for (cl_uint i = 0; i < n; i++)
        if (!devices[i]->is_root)
            return false;
    return true;
}

cl_context vast_clCreateContext(const cl_context_properties *properties, cl_uint num_devices,
                                const cl_device_id *devices,
                                void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
                                void *user_data, cl_int *errcode_ret)
{
    VAST_RETURN_NULL_IF(pfn_notify == NULL && user_data != NULL, CL_INVALID_VALUE, errcode_ret,
                        "user_data without pfn_notify");
    cl_context c = vast_object_alloc(sizeof *c);
    VAST_RETURN_NULL_IF(c == NULL, CL_OUT_OF_HOST_MEMORY, errcode_ret, "context");
    vast_object_init(&c->obj, VAST_MAGIC_CONTEXT, context_destroy);
    cl_context_properties *real_props = NULL;
    cl_int err = context_devices(c, num_devices, devices);
    if (err == CL_SUCCESS)
        err = context_properties(properties, c, &real_props);
    struct vast_list reals = {0};
    if (err == CL_SUCCESS && devices_all_root(num_devices, devices)) {
        /* pfn_notify is not attached to the shared context: its errors are VAST's. */
        c->real = backend_shared_context(c->backend, &err);
        c->virtual_buffers = c->real != NULL;
    } else if (err == CL_SUCCESS) {
        err = vast_unwrap_devices(NULL, num_devices, devices, &reals);
    }
    if (err == CL_SUCCESS && c->real == NULL) {
        c->real = c->backend->dispatch->clCreateContext(real_props, num_devices, (cl_device_id *)reals.items,
                                                        pfn_notify, user_data, &err);
        vast_list_free(&reals);
    }
    free(real_props);
    if (err != CL_SUCCESS) {
        VAST_RELEASE(c); /* context_destroy copes with what was not made */
        c = NULL;
    }
    vast_set_error(errcode_ret, err);
    return c;
}

cl_context vast_clCreateContextFromType(const cl_context_properties *properties, cl_device_type device_type,
                                        void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
                                        void *user_data, cl_int *errcode_ret)
{
    cl_platform_id platform = vast_platform_get();
    for (size_t i = 0; properties != NULL && properties[i] != 0; i += 2)
        if (properties[i] == CL_CONTEXT_PLATFORM)
            platform = (cl_platform_id)properties[i + 1];
    VAST_CHECK_NULL(platform, VAST_MAGIC_PLATFORM, CL_INVALID_PLATFORM, errcode_ret);
    cl_uint n = 0;
    cl_int err = vast_clGetDeviceIDs(platform, device_type, 0, NULL, &n);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err == CL_DEVICE_NOT_FOUND ? CL_DEVICE_NOT_FOUND : err, errcode_ret,
                        "no device of type 0x%llx", (unsigned long long)device_type);
    cl_device_id *devices = malloc(n * sizeof *devices);
    VAST_RETURN_NULL_IF(devices == NULL, CL_OUT_OF_HOST_MEMORY, errcode_ret, "device list");
    vast_clGetDeviceIDs(platform, device_type, n, devices, NULL);
    cl_uint same = 0; /* the devices of the first real platform that has any */
    while (same < n && devices[same]->backend == devices[0]->backend)
        same++;
    cl_context c = vast_clCreateContext(properties, same, devices, pfn_notify, user_data, errcode_ret);
    free(devices);
    return c;
}

VAST_RETAIN_RELEASE(vast_clRetainContext, vast_clReleaseContext, cl_context,
                    context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT)

cl_int vast_clGetContextInfo(cl_context context, cl_context_info param_name, size_t param_value_size,
                             void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT);
    switch (param_name) {
    case CL_CONTEXT_REFERENCE_COUNT:
        return vast_info_refcount(&context->obj, param_value_size, param_value, param_value_size_ret);
    case CL_CONTEXT_NUM_DEVICES:
        return vast_info_answer(&context->num_devices, sizeof context->num_devices, param_value_size,
                                param_value, param_value_size_ret);
    case CL_CONTEXT_DEVICES:
        return vast_info_answer(context->devices, context->num_devices * sizeof(cl_device_id), param_value_size,
                                param_value, param_value_size_ret);
    case CL_CONTEXT_PROPERTIES:
        return vast_info_answer(context->properties, context->properties_size, param_value_size, param_value,
                                param_value_size_ret);
    default:
        VAST_PASS(context->backend, context->real, clGetContextInfo, context->real, param_name, param_value_size,
                  param_value, param_value_size_ret);
    }
}

cl_int vast_clSetContextDestructorCallback(cl_context context, void(CL_CALLBACK *pfn_notify)(cl_context, void *),
                                           void *user_data)
{
    VAST_CHECK(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT);
    VAST_RETURN_IF(pfn_notify == NULL, CL_INVALID_VALUE, "pfn_notify is NULL");
    struct vast_context_destructor *d = malloc(sizeof *d);
    VAST_RETURN_IF(d == NULL, CL_OUT_OF_HOST_MEMORY, "callback");
    d->fn = pfn_notify;
    d->user_data = user_data;
    pthread_mutex_lock(&context->obj.lock);
    d->next = context->destructors;
    context->destructors = d;
    pthread_mutex_unlock(&context->obj.lock);
    return CL_SUCCESS;
}
