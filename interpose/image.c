/*
 * image.c: images (pass-through: VAST pages buffers, not images) and the image commands.
 * An image made from a buffer (image_desc->buffer) keeps that VAST buffer as its parent.
 */
#include "api.h"
#include "check.h"
#include "mem.h"

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

cl_int vast_clEnqueueCopyImageToBuffer(cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer,
                                       const size_t *src_origin, const size_t *region, size_t dst_offset,
                                       cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                                       cl_event *event)
{
    CHECK_MEM(src_image);
    CHECK_MEM(dst_buffer);
    VAST_RETURN_IF(dst_buffer->pc != NULL, CL_INVALID_OPERATION, "image <-> virtual buffer copies are not supported");
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
    VAST_RETURN_IF(src_buffer->pc != NULL, CL_INVALID_OPERATION, "image <-> virtual buffer copies are not supported");
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
