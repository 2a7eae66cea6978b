/*
 * buffer.c: memory objects (buffers, sub-buffers, pipes; images share the wrapper, see
 * image.c) and the host-side buffer commands. Buffers of contexts on a shared real context
 * are virtual (vbuf.c: host backing store + device page cache; their commands are captured
 * here and run by the executor); the others (contexts of sub-devices), pipes and images wrap
 * one real object each.
 */
#include "api.h"
#include "callback.h"
#include "check.h"
#include "mem.h"
#include "onqueue.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

static void mem_destroy(struct vast_object *obj)
{
    cl_mem m = (cl_mem)obj;
    if (m->real != NULL)
        m->context->backend->dispatch->clReleaseMemObject(m->real);
    if (m->mirror != NULL)
        m->context->backend->dispatch->clReleaseMemObject(m->mirror);
    if (m->parent != NULL)
        VAST_RELEASE(m->parent);
    VAST_RELEASE(m->context);
}

cl_mem vast_mem_wrap(cl_context context, cl_mem parent, cl_mem real, cl_int err, cl_int *errcode_ret)
{
    VAST_RETURN_NULL_IF(real == NULL, err, errcode_ret, "the real platform refused the memory object");
    cl_mem m = vast_object_alloc(sizeof *m);
    if (m == NULL) {
        context->backend->dispatch->clReleaseMemObject(real);
        vast_set_error(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    vast_object_init(&m->obj, VAST_MAGIC_MEM, mem_destroy);
    m->real = real;
    m->context = context;
    m->parent = parent;
    VAST_RETAIN(context);
    if (parent != NULL)
        VAST_RETAIN(parent);
    vast_set_error(errcode_ret, CL_SUCCESS);
    return m;
}

cl_mem vast_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    if (context->virtual_buffers)
        return vast_vbuf_create(context, flags, size, host_ptr, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateBuffer, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_mem real = fn_(context->real, flags, size, host_ptr, &err);
    return vast_mem_wrap(context, NULL, real, err, errcode_ret);
}

cl_mem vast_clCreateBufferWithProperties(cl_context context, const cl_mem_properties *properties, cl_mem_flags flags,
                                         size_t size, void *host_ptr, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    if (context->virtual_buffers) {
        VAST_RETURN_NULL_IF(properties != NULL && properties[0] != 0, CL_INVALID_PROPERTY, errcode_ret,
                            "no buffer property is supported");
        cl_mem m = vast_vbuf_create(context, flags, size, host_ptr, errcode_ret);
        if (m != NULL)
            m->empty_properties = properties != NULL; /* CL_MEM_PROPERTIES answers {0} */
        return m;
    }
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateBufferWithProperties, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_mem real = fn_(context->real, properties, flags, size, host_ptr, &err);
    return vast_mem_wrap(context, NULL, real, err, errcode_ret);
}

cl_mem vast_clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type buffer_create_type,
                              const void *buffer_create_info, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(buffer, VAST_MAGIC_MEM, CL_INVALID_MEM_OBJECT, errcode_ret);
    if (vast_mem_is_virtual(buffer))
        return vast_vbuf_create_sub(buffer, flags, buffer_create_type, buffer_create_info, errcode_ret);
    VAST_REAL_OR_NULL(buffer->context->backend, buffer->real, clCreateSubBuffer, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_mem real = fn_(buffer->real, flags, buffer_create_type, buffer_create_info, &err);
    return vast_mem_wrap(buffer->context, buffer, real, err, errcode_ret);
}

cl_mem vast_clCreatePipe(cl_context context, cl_mem_flags flags, cl_uint pipe_packet_size, cl_uint pipe_max_packets,
                         const cl_pipe_properties *properties, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreatePipe, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_mem real = fn_(context->real, flags, pipe_packet_size, pipe_max_packets, properties, &err);
    return vast_mem_wrap(context, NULL, real, err, errcode_ret);
}

cl_int vast_clGetPipeInfo(cl_mem pipe, cl_pipe_info param_name, size_t param_value_size, void *param_value,
                          size_t *param_value_size_ret)
{
    VAST_CHECK_MEM(pipe);
    VAST_PASS(pipe->context->backend, pipe->real, clGetPipeInfo, pipe->real, param_name, param_value_size, param_value,
              param_value_size_ret);
}

/* Kernels VAST put on applications' queues that have ended let go of the buffers they used
 * first (onqueue.h), so that a buffer released after its last kernel ends goes now. */
VAST_RETAIN_RELEASE_AFTER(vast_clRetainMemObject, vast_clReleaseMemObject, cl_mem, memobj, VAST_MAGIC_MEM,
                          CL_INVALID_MEM_OBJECT, vast_onqueue_reap_context(memobj->context))

cl_int vast_clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name, size_t param_value_size, void *param_value,
                               size_t *param_value_size_ret)
{
    VAST_CHECK_MEM(memobj);
    if (vast_mem_is_virtual(memobj))
        return vast_vbuf_info(memobj, param_name, param_value_size, param_value, param_value_size_ret);
    switch (param_name) {
    case CL_MEM_CONTEXT:
        return vast_info_answer(&memobj->context, sizeof(cl_context), param_value_size, param_value, param_value_size_ret);
    case CL_MEM_ASSOCIATED_MEMOBJECT:
        return vast_info_answer(&memobj->parent, sizeof(cl_mem), param_value_size, param_value, param_value_size_ret);
    case CL_MEM_REFERENCE_COUNT:
        return vast_info_refcount(&memobj->obj, param_value_size, param_value, param_value_size_ret);
    default:
        VAST_PASS(memobj->context->backend, memobj->real, clGetMemObjectInfo, memobj->real, param_name,
                  param_value_size, param_value, param_value_size_ret);
    }
}

cl_int vast_clSetMemObjectDestructorCallback(cl_mem memobj, void(CL_CALLBACK *pfn_notify)(cl_mem, void *),
                                             void *user_data)
{
    VAST_CHECK_MEM(memobj);
    VAST_RETURN_IF(pfn_notify == NULL, CL_INVALID_VALUE, "pfn_notify is NULL");
    if (vast_mem_is_virtual(memobj))
        return vast_vbuf_add_destructor(memobj, pfn_notify, user_data);
    cl_api_clSetMemObjectDestructorCallback fn =
        VAST_REAL(memobj->context->backend, memobj->real, clSetMemObjectDestructorCallback);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform has no destructor callbacks");
    struct vast_trampoline *t = vast_trampoline_mem(pfn_notify, memobj, user_data);
    VAST_RETURN_IF(t == NULL, CL_OUT_OF_HOST_MEMORY, "trampoline");
    cl_int err = fn(memobj->real, vast_trampoline_mem_run, t);
    if (err != CL_SUCCESS)
        free(t);
    return err;
}

/* Checks of a host-side command on a virtual buffer: its queue, context, range, pointer
 * and the host access the buffer allows (`forbidden` host flags). */
static cl_int check_virtual(cl_command_queue q, cl_mem m, size_t offset, size_t size, const void *ptr,
                            cl_mem_flags forbidden)
{
    VAST_CHECK(q, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_RETURN_IF(m->context != q->context, CL_INVALID_CONTEXT, "buffer and queue of different contexts");
    VAST_RETURN_IF(offset > m->size || m->size - offset < size, CL_INVALID_VALUE,
                   "range %zu+%zu past the buffer's %zu bytes", offset, size, m->size);
    VAST_RETURN_IF(ptr == NULL, CL_INVALID_VALUE, "host pointer is NULL");
    VAST_RETURN_IF(m->flags & forbidden, CL_INVALID_OPERATION, "the buffer's host access flags forbid this");
    return CL_SUCCESS;
}

static bool ranges_overlap(cl_mem a, size_t a_off, cl_mem b, size_t b_off, size_t size)
{
    size_t x = a->offset + a_off, y = b->offset + b_off;
    return vast_mem_root(a) == vast_mem_root(b) && x < y + size && y < x + size;
}

/* A rect's defaults and checks (the specification's rules for pitches and bounds). */
static cl_int rect_prepare(const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch,
                           size_t limit, struct vast_rect *out)
{
    VAST_RETURN_IF(origin == NULL || region == NULL, CL_INVALID_VALUE, "origin or region is NULL");
    VAST_RETURN_IF(region[0] == 0 || region[1] == 0 || region[2] == 0, CL_INVALID_VALUE, "empty region");
    row_pitch = row_pitch ? row_pitch : region[0];
    slice_pitch = slice_pitch ? slice_pitch : region[1] * row_pitch;
    VAST_RETURN_IF(row_pitch < region[0] || slice_pitch < region[1] * row_pitch || slice_pitch % row_pitch,
                   CL_INVALID_VALUE, "pitches %zu/%zu for region %zux%zu", row_pitch, slice_pitch, region[0], region[1]);
    for (int i = 0; i < 3; i++) {
        out->origin[i] = origin[i];
        out->region[i] = region[i];
    }
    out->row_pitch = row_pitch;
    out->slice_pitch = slice_pitch;
    size_t end = (origin[2] + region[2] - 1) * slice_pitch + (origin[1] + region[1] - 1) * row_pitch + origin[0] +
                 region[0];
    VAST_RETURN_IF(limit != 0 && end > limit, CL_INVALID_VALUE, "rect ends at %zu, past %zu bytes", end, limit);
    return CL_SUCCESS;
}

static cl_int check_fill(const void *pattern, size_t pattern_size, size_t offset, size_t size)
{
    VAST_RETURN_IF(pattern == NULL || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)),
                   CL_INVALID_VALUE, "pattern %p of %zu bytes", pattern, pattern_size);
    VAST_RETURN_IF(offset % pattern_size || size % pattern_size, CL_INVALID_VALUE,
                   "offset %zu and size %zu must be multiples of the pattern size %zu", offset, size, pattern_size);
    return CL_SUCCESS;
}

#define HOST_NO_READ (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)
#define HOST_NO_WRITE (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)
#define RETURN_IF_ERROR(expr)                                                                     \
    do {                                                                                          \
        cl_int e_ = (expr);                                                                       \
        if (e_ != CL_SUCCESS)                                                                     \
            return e_;                                                                            \
    } while (0)


cl_int vast_clEnqueueReadBuffer(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, size_t offset,
                                size_t cb, void *ptr, cl_uint num_events_in_wait_list,
                                const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(buffer);
    if (vast_mem_is_virtual(buffer)) {
        RETURN_IF_ERROR(check_virtual(command_queue, buffer, offset, cb, ptr, HOST_NO_READ));
        struct vast_host_cmd c = {.op = VAST_HOST_READ, .a = buffer, .a_off = offset, .size = cb, .ptr = ptr};
        return vast_vbuf_enqueue(command_queue, &c, blocking_read, num_events_in_wait_list, event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueReadBuffer, num_events_in_wait_list, event_wait_list, event, buffer->real,
                 blocking_read, offset, cb, ptr);
}

cl_int vast_clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, size_t offset,
                                 size_t cb, const void *ptr, cl_uint num_events_in_wait_list,
                                 const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(buffer);
    if (vast_mem_is_virtual(buffer)) {
        RETURN_IF_ERROR(check_virtual(command_queue, buffer, offset, cb, ptr, HOST_NO_WRITE));
        struct vast_host_cmd c = {.op = VAST_HOST_WRITE, .a = buffer, .a_off = offset, .size = cb, .ptr = (void *)ptr};
        return vast_vbuf_enqueue(command_queue, &c, blocking_write, num_events_in_wait_list, event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueWriteBuffer, num_events_in_wait_list, event_wait_list, event, buffer->real,
                 blocking_write, offset, cb, ptr);
}

cl_int vast_clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
                                size_t src_offset, size_t dst_offset, size_t cb, cl_uint num_events_in_wait_list,
                                const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(src_buffer);
    VAST_CHECK_MEM(dst_buffer);
    if (vast_mem_is_virtual(src_buffer) || vast_mem_is_virtual(dst_buffer)) {
        VAST_RETURN_IF(!vast_mem_is_virtual(src_buffer) || !vast_mem_is_virtual(dst_buffer), CL_INVALID_CONTEXT,
                       "buffers of different contexts");
        RETURN_IF_ERROR(check_virtual(command_queue, src_buffer, src_offset, cb, src_buffer, 0));
        RETURN_IF_ERROR(check_virtual(command_queue, dst_buffer, dst_offset, cb, dst_buffer, 0));
        VAST_RETURN_IF(ranges_overlap(src_buffer, src_offset, dst_buffer, dst_offset, cb), CL_MEM_COPY_OVERLAP,
                       "source and destination overlap");
        struct vast_host_cmd c = {.op = VAST_HOST_COPY, .a = src_buffer, .b = dst_buffer, .a_off = src_offset,
                                  .b_off = dst_offset, .size = cb};
        return vast_vbuf_enqueue(command_queue, &c, false, num_events_in_wait_list, event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueCopyBuffer, num_events_in_wait_list, event_wait_list, event,
                 src_buffer->real, dst_buffer->real, src_offset, dst_offset, cb);
}

cl_int vast_clEnqueueReadBufferRect(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
                                    const size_t *buffer_origin, const size_t *host_origin, const size_t *region,
                                    size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
                                    size_t host_slice_pitch, void *ptr, cl_uint num_events_in_wait_list,
                                    const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(buffer);
    if (vast_mem_is_virtual(buffer)) {
        struct vast_host_cmd c = {.op = VAST_HOST_READ_RECT, .a = buffer, .ptr = ptr};
        RETURN_IF_ERROR(check_virtual(command_queue, buffer, 0, 0, ptr, HOST_NO_READ));
        RETURN_IF_ERROR(rect_prepare(buffer_origin, region, buffer_row_pitch, buffer_slice_pitch, buffer->size, &c.ra));
        RETURN_IF_ERROR(rect_prepare(host_origin, region, host_row_pitch, host_slice_pitch, 0, &c.rb));
        return vast_vbuf_enqueue(command_queue, &c, blocking_read, num_events_in_wait_list, event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueReadBufferRect, num_events_in_wait_list, event_wait_list, event,
                 buffer->real, blocking_read, buffer_origin, host_origin, region, buffer_row_pitch,
                 buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr);
}

cl_int vast_clEnqueueWriteBufferRect(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
                                     const size_t *buffer_origin, const size_t *host_origin, const size_t *region,
                                     size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
                                     size_t host_slice_pitch, const void *ptr, cl_uint num_events_in_wait_list,
                                     const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(buffer);
    if (vast_mem_is_virtual(buffer)) {
        struct vast_host_cmd c = {.op = VAST_HOST_WRITE_RECT, .a = buffer, .ptr = (void *)ptr};
        RETURN_IF_ERROR(check_virtual(command_queue, buffer, 0, 0, ptr, HOST_NO_WRITE));
        RETURN_IF_ERROR(rect_prepare(buffer_origin, region, buffer_row_pitch, buffer_slice_pitch, buffer->size, &c.ra));
        RETURN_IF_ERROR(rect_prepare(host_origin, region, host_row_pitch, host_slice_pitch, 0, &c.rb));
        return vast_vbuf_enqueue(command_queue, &c, blocking_write, num_events_in_wait_list, event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueWriteBufferRect, num_events_in_wait_list, event_wait_list, event,
                 buffer->real, blocking_write, buffer_origin, host_origin, region, buffer_row_pitch,
                 buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr);
}

cl_int vast_clEnqueueCopyBufferRect(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
                                    const size_t *src_origin, const size_t *dst_origin, const size_t *region,
                                    size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch,
                                    size_t dst_slice_pitch, cl_uint num_events_in_wait_list,
                                    const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(src_buffer);
    VAST_CHECK_MEM(dst_buffer);
    if (vast_mem_is_virtual(src_buffer) || vast_mem_is_virtual(dst_buffer)) {
        struct vast_host_cmd c = {.op = VAST_HOST_COPY_RECT, .a = src_buffer, .b = dst_buffer};
        VAST_RETURN_IF(!vast_mem_is_virtual(src_buffer) || !vast_mem_is_virtual(dst_buffer), CL_INVALID_CONTEXT,
                       "buffers of different contexts");
        RETURN_IF_ERROR(check_virtual(command_queue, src_buffer, 0, 0, src_buffer, 0));
        RETURN_IF_ERROR(check_virtual(command_queue, dst_buffer, 0, 0, dst_buffer, 0));
        RETURN_IF_ERROR(rect_prepare(src_origin, region, src_row_pitch, src_slice_pitch, src_buffer->size, &c.ra));
        RETURN_IF_ERROR(rect_prepare(dst_origin, region, dst_row_pitch, dst_slice_pitch, dst_buffer->size, &c.rb));
        return vast_vbuf_enqueue(command_queue, &c, false, num_events_in_wait_list, event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueCopyBufferRect, num_events_in_wait_list, event_wait_list, event,
                 src_buffer->real, dst_buffer->real, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch,
                 dst_row_pitch, dst_slice_pitch);
}

cl_int vast_clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer, const void *pattern,
                                size_t pattern_size, size_t offset, size_t size, cl_uint num_events_in_wait_list,
                                const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(buffer);
    if (vast_mem_is_virtual(buffer)) {
        RETURN_IF_ERROR(check_virtual(command_queue, buffer, offset, size, buffer, 0));
        RETURN_IF_ERROR(check_fill(pattern, pattern_size, offset, size));
        struct vast_host_cmd c = {.op = VAST_HOST_FILL, .a = buffer, .a_off = offset, .size = size,
                                  .pattern_size = pattern_size};
        memcpy(c.pattern, pattern, pattern_size);
        return vast_vbuf_enqueue(command_queue, &c, false, num_events_in_wait_list, event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueFillBuffer, num_events_in_wait_list, event_wait_list, event, buffer->real,
                 pattern, pattern_size, offset, size);
}

cl_int vast_clEnqueueUnmapMemObject(cl_command_queue command_queue, cl_mem memobj, void *mapped_ptr,
                                    cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(memobj);
    if (vast_mem_is_virtual(memobj)) {
        RETURN_IF_ERROR(check_virtual(command_queue, memobj, 0, 0, memobj, 0));
        return vast_vbuf_enqueue_unmap(command_queue, memobj, mapped_ptr, num_events_in_wait_list, event_wait_list,
                                       event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueUnmapMemObject, num_events_in_wait_list, event_wait_list, event,
                 memobj->real, mapped_ptr);
}

cl_int vast_clEnqueueMigrateMemObjects(cl_command_queue command_queue, cl_uint num_mem_objects,
                                       const cl_mem *mem_objects, cl_mem_migration_flags flags,
                                       cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                                       cl_event *event)
{
    VAST_RETURN_IF(num_mem_objects == 0 || mem_objects == NULL, CL_INVALID_VALUE, "no memory objects");
    for (cl_uint i = 0; i < num_mem_objects; i++) {
        /* Virtual buffers migrate with the launches that use them: nothing to do here. */
        if (vast_object_is(mem_objects[i], VAST_MAGIC_MEM) && vast_mem_is_virtual(mem_objects[i])) {
            VAST_CHECK(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
            struct vast_host_cmd c = {.op = VAST_HOST_NOP};
            return vast_vbuf_enqueue(command_queue, &c, false, num_events_in_wait_list, event_wait_list, event);
        }
    }
    struct vast_list mems;
    cl_int err = vast_unwrap_mems(num_mem_objects, mem_objects, &mems);
    if (err != CL_SUCCESS)
        return err;
    err = vast_enqueue_migrate(command_queue, num_mem_objects, (const cl_mem *)mems.items, flags,
                               num_events_in_wait_list, event_wait_list, event);
    vast_list_free(&mems);
    return err;
}

cl_int vast_enqueue_migrate(cl_command_queue command_queue, cl_uint n, const cl_mem *reals,
                            cl_mem_migration_flags flags, cl_uint num_events_in_wait_list,
                            const cl_event *event_wait_list, cl_event *event)
{
    VAST_ENQUEUE(command_queue, clEnqueueMigrateMemObjects, num_events_in_wait_list, event_wait_list, event, n,
                 reals, flags);
}

/* Maps return a pointer, so the enqueue macro does not fit; mem.h shares this with images. */
void *vast_map_finish(cl_command_queue queue, void *ptr, cl_int err, cl_event real_ev, cl_event *event,
                      cl_int *errcode_ret)
{
    if (err == CL_SUCCESS)
        err = vast_event_wrap_out(queue, real_ev, event);
    vast_set_error(errcode_ret, err);
    return err == CL_SUCCESS ? ptr : NULL;
}

static void *map_virtual(cl_command_queue q, cl_mem m, bool blocking, cl_map_flags flags, size_t offset,
                         size_t size, cl_uint num_events, const cl_event *wait_list, cl_event *event, cl_int *errcode_ret)
{
    const cl_map_flags any = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
    VAST_RETURN_NULL_IF((flags & ~any) || ((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & ~CL_MAP_WRITE_INVALIDATE_REGION)),
                        CL_INVALID_VALUE, errcode_ret, "map_flags 0x%llx", (unsigned long long)flags);
    cl_mem_flags forbidden = ((flags & CL_MAP_READ) ? HOST_NO_READ : 0) |
                             ((flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) ? HOST_NO_WRITE : 0);
    cl_int err = check_virtual(q, m, offset, size, m, forbidden);
    VAST_RETURN_NULL_IF(err == CL_SUCCESS && size == 0, CL_INVALID_VALUE, errcode_ret, "size 0");
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "map arguments");
    return vast_vbuf_enqueue_map(q, m, flags, offset, size, blocking, num_events, wait_list, event, errcode_ret);
}

void *vast_clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map,
                              cl_map_flags map_flags, size_t offset, size_t cb, cl_uint num_events_in_wait_list,
                              const cl_event *event_wait_list, cl_event *event, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE, errcode_ret);
    VAST_CHECK_NULL(buffer, VAST_MAGIC_MEM, CL_INVALID_MEM_OBJECT, errcode_ret);
    if (vast_mem_is_virtual(buffer))
        return map_virtual(command_queue, buffer, blocking_map, map_flags, offset, cb, num_events_in_wait_list,
                           event_wait_list, event, errcode_ret);
    VAST_ENQUEUE_MAP(command_queue, clEnqueueMapBuffer, num_events_in_wait_list, event_wait_list, event, errcode_ret,
                     buffer->real, blocking_map, map_flags, offset, cb);
}
