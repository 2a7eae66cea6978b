/*
 * image.c: images (pass-through: VAST pages buffers, not images) and the image commands.
 * An image made from a buffer (image_desc->buffer) keeps that VAST buffer as its parent.
 *
 * Copies between an image and a virtual buffer. Images stay real objects of the real driver
 * (in the backend's shared context, like the page cache's chunks); a virtual buffer's bytes
 * live in its host backing store and in resident pages. Such a copy is a host-side command
 * (vbuf.h: captured at enqueue, run by the executor's host lane, so wait lists, the returned
 * event, its callbacks and profiling are VAST's as for every virtual command): buffer to
 * image flushes the dirty resident pages of the buffer's range and hands the backing store to
 * the real clEnqueueWriteImage; image to buffer reads the image with the real
 * clEnqueueReadImage straight into the backing store inside a host write of the range (the
 * page cache keeps resident pages of the range up to date, pagecache.h). The buffer side is
 * packed, as the specification lays it out: rows of region[0] pixels, then slices. Both run
 * blocking on the device's page-cache queue (a real queue of the shared context): the command
 * has started only after everything it depends on completed, and it must have finished when
 * its event completes.
 */
#include "api.h"
#include "check.h"
#include "mem.h"
#include "pagecache.h"
#include "vbuf.h"

#define CHECK_MEM(m) VAST_CHECK(m, VAST_MAGIC_MEM, CL_INVALID_MEM_OBJECT)

/* Copy an image descriptor with its buffer, if any, replaced by the real one. */
static cl_int image_desc_unwrap(const cl_image_desc *desc, cl_image_desc *real, cl_mem *parent)
{
    *parent = NULL;
    if (desc == NULL)
        return CL_SUCCESS;
    *real = *desc;
    if (desc->buffer != NULL) {
        VAST_RETURN_IF(!vast_object_is(desc->buffer, VAST_MAGIC_MEM), CL_INVALID_IMAGE_DESCRIPTOR,
                       "image_desc->buffer %p is not a VAST memory object", (void *)desc->buffer);
        VAST_RETURN_IF(desc->buffer->pc != NULL, CL_INVALID_OPERATION,
                       "images made from virtual buffers are not supported");
        real->buffer = desc->buffer->real;
        *parent = desc->buffer;
    }
    return CL_SUCCESS;
}

cl_mem vast_clCreateImage(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                          const cl_image_desc *image_desc, void *host_ptr, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateImage, errcode_ret);
    cl_image_desc real_desc;
    cl_mem parent;
    cl_int err = image_desc_unwrap(image_desc, &real_desc, &parent);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "image_desc");
    cl_mem real = fn_(context->real, flags, image_format, image_desc ? &real_desc : NULL, host_ptr, &err);
    return vast_mem_wrap(context, parent, real, err, errcode_ret);
}

cl_mem vast_clCreateImageWithProperties(cl_context context, const cl_mem_properties *properties, cl_mem_flags flags,
                                        const cl_image_format *image_format, const cl_image_desc *image_desc,
                                        void *host_ptr, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateImageWithProperties, errcode_ret);
    cl_image_desc real_desc;
    cl_mem parent;
    cl_int err = image_desc_unwrap(image_desc, &real_desc, &parent);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "image_desc");
    cl_mem real = fn_(context->real, properties, flags, image_format, image_desc ? &real_desc : NULL, host_ptr, &err);
    return vast_mem_wrap(context, parent, real, err, errcode_ret);
}

cl_mem vast_clCreateImage2D(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                            size_t image_width, size_t image_height, size_t image_row_pitch, void *host_ptr,
                            cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateImage2D, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_mem real = fn_(context->real, flags, image_format, image_width, image_height, image_row_pitch, host_ptr, &err);
    return vast_mem_wrap(context, NULL, real, err, errcode_ret);
}

cl_mem vast_clCreateImage3D(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                            size_t image_width, size_t image_height, size_t image_depth, size_t image_row_pitch,
                            size_t image_slice_pitch, void *host_ptr, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateImage3D, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_mem real = fn_(context->real, flags, image_format, image_width, image_height, image_depth, image_row_pitch,
                      image_slice_pitch, host_ptr, &err);
    return vast_mem_wrap(context, NULL, real, err, errcode_ret);
}

cl_int vast_clGetSupportedImageFormats(cl_context context, cl_mem_flags flags, cl_mem_object_type image_type,
                                       cl_uint num_entries, cl_image_format *image_formats, cl_uint *num_image_formats)
{
    VAST_CHECK(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT);
    VAST_PASS(context->backend, context->real, clGetSupportedImageFormats, context->real, flags, image_type,
              num_entries, image_formats, num_image_formats);
}

cl_int vast_clGetImageInfo(cl_mem image, cl_image_info param_name, size_t param_value_size, void *param_value,
                           size_t *param_value_size_ret)
{
    CHECK_MEM(image);
    if (param_name == CL_IMAGE_BUFFER)
        return vast_info_answer(&image->parent, sizeof(cl_mem), param_value_size, param_value, param_value_size_ret);
    VAST_PASS(image->context->backend, image->real, clGetImageInfo, image->real, param_name, param_value_size,
              param_value, param_value_size_ret);
}

cl_int vast_clEnqueueReadImage(cl_command_queue command_queue, cl_mem image, cl_bool blocking_read,
                               const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch,
                               void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                               cl_event *event)
{
    CHECK_MEM(image);
    VAST_ENQUEUE(command_queue, clEnqueueReadImage, num_events_in_wait_list, event_wait_list, event, image->real,
                 blocking_read, origin, region, row_pitch, slice_pitch, ptr);
}

cl_int vast_clEnqueueWriteImage(cl_command_queue command_queue, cl_mem image, cl_bool blocking_write,
                                const size_t *origin, const size_t *region, size_t input_row_pitch,
                                size_t input_slice_pitch, const void *ptr, cl_uint num_events_in_wait_list,
                                const cl_event *event_wait_list, cl_event *event)
{
    CHECK_MEM(image);
    VAST_ENQUEUE(command_queue, clEnqueueWriteImage, num_events_in_wait_list, event_wait_list, event, image->real,
                 blocking_write, origin, region, input_row_pitch, input_slice_pitch, ptr);
}

cl_int vast_clEnqueueCopyImage(cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image,
                               const size_t *src_origin, const size_t *dst_origin, const size_t *region,
                               cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
{
    CHECK_MEM(src_image);
    CHECK_MEM(dst_image);
    VAST_ENQUEUE(command_queue, clEnqueueCopyImage, num_events_in_wait_list, event_wait_list, event, src_image->real,
                 dst_image->real, src_origin, dst_origin, region);
}

/* What a copy needs to know of a real image, asked of the real driver at enqueue. */
struct image_geom {
    cl_mem_object_type type;
    size_t elem;    /* bytes per pixel */
    size_t lim[3];  /* how far origin + region may reach in each dimension */
};

static cl_int image_geom_get(cl_mem image, struct image_geom *g)
{
    const struct _cl_icd_dispatch *d = image->context->backend->dispatch;
    size_t w = 0, h = 0, depth = 0, arr = 0;
    cl_int err = d->clGetMemObjectInfo(image->real, CL_MEM_TYPE, sizeof g->type, &g->type, NULL);
    if (err == CL_SUCCESS)
        err = d->clGetImageInfo(image->real, CL_IMAGE_ELEMENT_SIZE, sizeof g->elem, &g->elem, NULL);
    if (err == CL_SUCCESS)
        err = d->clGetImageInfo(image->real, CL_IMAGE_WIDTH, sizeof w, &w, NULL);
    if (err == CL_SUCCESS)
        err = d->clGetImageInfo(image->real, CL_IMAGE_HEIGHT, sizeof h, &h, NULL);
    if (err == CL_SUCCESS)
        err = d->clGetImageInfo(image->real, CL_IMAGE_DEPTH, sizeof depth, &depth, NULL);
    if (err == CL_SUCCESS)
        err = d->clGetImageInfo(image->real, CL_IMAGE_ARRAY_SIZE, sizeof arr, &arr, NULL);
    VAST_RETURN_IF(err != CL_SUCCESS, CL_INVALID_MEM_OBJECT, "not an image (the real driver says %d)", err);
    size_t lim[][3] = {{w, 1, 1}, {w, arr, 1}, {w, h, 1}, {w, h, arr}, {w, h, depth}};
    int k = g->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : g->type == CL_MEM_OBJECT_IMAGE2D ? 2
          : g->type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? 3 : g->type == CL_MEM_OBJECT_IMAGE3D ? 4 : 0;
    VAST_RETURN_IF(k == 0 && g->type != CL_MEM_OBJECT_IMAGE1D && g->type != CL_MEM_OBJECT_IMAGE1D_BUFFER,
                   CL_INVALID_MEM_OBJECT, "memory object of type 0x%x is not an image", (unsigned)g->type);
    for (int i = 0; i < 3; i++)
        g->lim[i] = lim[k][i];
    return CL_SUCCESS;
}

/* The checks of a copy between `image` and bytes of virtual buffer `buf` from `offset` (the
 * specification's errors, returned at enqueue), and the command that runs it. */
static cl_int image_copy_prepare(cl_command_queue q, cl_mem buf, size_t offset, cl_mem image, const size_t *origin,
                                 const size_t *region, struct vast_host_cmd *c)
{
    VAST_CHECK(q, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_RETURN_IF(image->real == NULL, CL_INVALID_MEM_OBJECT, "a virtual buffer given as the image");
    VAST_RETURN_IF(buf->context != q->context || image->context != q->context, CL_INVALID_CONTEXT,
                   "buffer, image and queue of different contexts");
    VAST_RETURN_IF(origin == NULL || region == NULL, CL_INVALID_VALUE, "origin or region is NULL");
    struct image_geom g;
    cl_int err = image_geom_get(image, &g);
    if (err != CL_SUCCESS)
        return err;
    size_t bytes = g.elem;
    for (int i = 0; i < 3; i++) {
        VAST_RETURN_IF(region[i] == 0 || origin[i] >= g.lim[i] || g.lim[i] - origin[i] < region[i],
                       CL_INVALID_VALUE, "origin %zu region %zu in dimension %d of an image of %zu", origin[i],
                       region[i], i, g.lim[i]);
        c->ra.origin[i] = origin[i];
        c->ra.region[i] = region[i];
        bytes *= region[i];
    }
    VAST_RETURN_IF(offset > buf->size || buf->size - offset < bytes, CL_INVALID_VALUE,
                   "%zu bytes from offset %zu, past the buffer's %zu", bytes, offset, buf->size);
    /* The real call's pitches of the packed buffer side: a 1D array's "slice" is one row. */
    c->ra.row_pitch = 0;
    c->ra.slice_pitch = g.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? g.elem * region[0] : 0;
    c->a = buf;
    c->a_off = offset;
    c->size = bytes;
    c->image = image;
    return CL_SUCCESS;
}

cl_int vast_image_host_copy(const struct vast_host_cmd *c)
{
    cl_mem buf = c->a;
    cl_command_queue q = buf->home->pool_queue; /* real, of the shared context the image is in */
    const struct _cl_icd_dispatch *d = buf->home->backend->dispatch;
    char *host = (char *)pagecache_buffer_host(buf->pc) + c->a_off;
    if (c->op == VAST_HOST_TO_IMAGE) {
        int st = pagecache_flush_range(buf->pc, c->a_off, c->size);
        if (st != VAST_PC_OK)
            return vast_pc_error(st);
        return d->clEnqueueWriteImage(q, c->image->real, CL_TRUE, c->ra.origin, c->ra.region, c->ra.row_pitch,
                                      c->ra.slice_pitch, host, 0, NULL, NULL);
    }
    struct vast_host_write *token;
    int st = pagecache_begin_host_write(buf->pc, c->a_off, c->size, &token);
    if (st != VAST_PC_OK)
        return vast_pc_error(st);
    cl_int err = d->clEnqueueReadImage(q, c->image->real, CL_TRUE, c->ra.origin, c->ra.region, c->ra.row_pitch,
                                       c->ra.slice_pitch, host, 0, NULL, NULL);
    st = pagecache_end_host_write(token); /* always: it unpins the range */
    return err != CL_SUCCESS ? err : vast_pc_error(st);
}

cl_int vast_clEnqueueCopyImageToBuffer(cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer,
                                       const size_t *src_origin, const size_t *region, size_t dst_offset,
                                       cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                                       cl_event *event)
{
    CHECK_MEM(src_image);
    CHECK_MEM(dst_buffer);
    if (vast_mem_is_virtual(dst_buffer)) {
        struct vast_host_cmd c = {.op = VAST_HOST_FROM_IMAGE};
        cl_int err = image_copy_prepare(command_queue, dst_buffer, dst_offset, src_image, src_origin, region, &c);
        if (err != CL_SUCCESS)
            return err;
        return vast_vbuf_enqueue(command_queue, &c, false, num_events_in_wait_list, event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueCopyImageToBuffer, num_events_in_wait_list, event_wait_list, event,
                 src_image->real, dst_buffer->real, src_origin, region, dst_offset);
}

cl_int vast_clEnqueueCopyBufferToImage(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image,
                                       size_t src_offset, const size_t *dst_origin, const size_t *region,
                                       cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                                       cl_event *event)
{
    CHECK_MEM(src_buffer);
    CHECK_MEM(dst_image);
    if (vast_mem_is_virtual(src_buffer)) {
        struct vast_host_cmd c = {.op = VAST_HOST_TO_IMAGE};
        cl_int err = image_copy_prepare(command_queue, src_buffer, src_offset, dst_image, dst_origin, region, &c);
        if (err != CL_SUCCESS)
            return err;
        return vast_vbuf_enqueue(command_queue, &c, false, num_events_in_wait_list, event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueCopyBufferToImage, num_events_in_wait_list, event_wait_list, event,
                 src_buffer->real, dst_image->real, src_offset, dst_origin, region);
}

cl_int vast_clEnqueueFillImage(cl_command_queue command_queue, cl_mem image, const void *fill_color,
                               const size_t *origin, const size_t *region, cl_uint num_events_in_wait_list,
                               const cl_event *event_wait_list, cl_event *event)
{
    CHECK_MEM(image);
    VAST_ENQUEUE(command_queue, clEnqueueFillImage, num_events_in_wait_list, event_wait_list, event, image->real,
                 fill_color, origin, region);
}

void *vast_clEnqueueMapImage(cl_command_queue command_queue, cl_mem image, cl_bool blocking_map,
                             cl_map_flags map_flags, const size_t *origin, const size_t *region,
                             size_t *image_row_pitch, size_t *image_slice_pitch, cl_uint num_events_in_wait_list,
                             const cl_event *event_wait_list, cl_event *event, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(command_queue, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE, errcode_ret);
    VAST_CHECK_NULL(image, VAST_MAGIC_MEM, CL_INVALID_MEM_OBJECT, errcode_ret);
    VAST_REAL_OR_NULL(command_queue->context->backend, command_queue->real, clEnqueueMapImage, errcode_ret);
    struct vast_list waits;
    cl_int err = vast_unwrap_events(command_queue->context, num_events_in_wait_list, event_wait_list, &waits);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "wait list");
    cl_event real_ev = NULL;
    void *ptr = fn_(command_queue->real, image->real, blocking_map, map_flags, origin, region, image_row_pitch,
                    image_slice_pitch, num_events_in_wait_list,
                    num_events_in_wait_list ? (const cl_event *)waits.items : NULL, event ? &real_ev : NULL, &err);
    vast_list_free(&waits);
    return vast_map_finish(command_queue, ptr, err, real_ev, event, errcode_ret);
}
