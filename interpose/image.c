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
 *
 * Images made from a virtual buffer (image_desc->buffer: CL_MEM_OBJECT_IMAGE1D_BUFFER, and 2D
 * images under cl_khr_image2d_from_buffer). The real driver makes such an image only over a
 * real buffer, and the virtual buffer's bytes live in its backing store and pages, which move
 * (eviction, partitions): an image cannot sit on them. So the image is made over a real buffer
 * of its own, its mirror (the buffer's flags, the bytes the image covers), and the virtual
 * buffer stays the truth:
 *  - a 1D image buffer is its buffer's bytes, pixel x at x * pixel size: its reads, writes,
 *    fills (the colour converted to a pixel by the real driver on a one-pixel image), copies
 *    to and from buffers and copies between two such images are the buffer's own host-side
 *    commands (vbuf.h), reported as image commands; the mirror is not involved;
 *  - every other command on such an image (copies with other images; any command on a 2D image
 *    made from a buffer) is a host-side command that copies the buffer's bytes (dirty pages
 *    flushed) into the mirror, runs the real command on the page-cache queue, and, when the
 *    command writes the image, copies the mirror back into the buffer inside a host write
 *    (resident pages refreshed);
 *  - a launch with such an image argument (kernel.c) is preceded by the same copy in and
 *    followed by the copy back of the images the kernel may write (not declared read_only):
 *    the application's event is the copy back's, reported as the launch's (its profiling
 *    times cover that copy only).
 * So buffer commands, kernels on the buffer and image commands see each other's writes in
 * queue order, as on a device where the two share memory; what the specification leaves
 * undefined (writing the image and the buffer in one kernel) stays undefined. The mirror costs
 * the image's size in device memory outside the page-cache budget, and each mirrored command
 * or launch two copies of it. Maps of such images are refused (CL_INVALID_OPERATION,
 * map the buffer instead); a buffer made from SVM memory cannot be an image's buffer.
 */
#include "api.h"
#include "check.h"
#include "executor.h"
#include "launch.h"
#include "mem.h"
#include "pagecache.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

static bool is_mirrored(cl_mem image) { return image != NULL && image->mirror != NULL; }

/* Bytes per pixel of a format, 0 if unknown. */
static size_t format_pixel_bytes(const cl_image_format *f)
{
    switch (f->image_channel_data_type) {
    case CL_UNORM_SHORT_565:
    case CL_UNORM_SHORT_555: return 2;
    case CL_UNORM_INT_101010:
    case CL_UNORM_INT_101010_2:
    case CL_UNORM_INT24: return 4;
    default: break;
    }
    size_t channel = 0, channels = 0;
    switch (f->image_channel_data_type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8: channel = 1; break;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:
        channel = 2;
        break;
    case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT: channel = 4; break;
    default: return 0;
    }
    switch (f->image_channel_order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH: channels = 1; break;
    case CL_RG: case CL_RA: case CL_Rx: channels = 2; break;
    case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_RGBx: case CL_sRGBA: case CL_sBGRA:
    case CL_sRGBx: channels = 4; break;
    default: return 0;
    }
    return channel * channels;
}

/* The bytes of its buffer an image made from one covers (the whole buffer when unknown). */
static size_t image_extent(const cl_image_format *f, const cl_image_desc *desc, size_t buffer_size)
{
    size_t pixel = f != NULL ? format_pixel_bytes(f) : 0;
    size_t row = desc->image_row_pitch ? desc->image_row_pitch : desc->image_width * pixel;
    size_t bytes = desc->image_type == CL_MEM_OBJECT_IMAGE2D ? row * desc->image_height : desc->image_width * pixel;
    return pixel == 0 || bytes == 0 || bytes > buffer_size ? buffer_size : bytes;
}

/* Copy an image descriptor with its buffer, if any, replaced by the real one; for a virtual
 * buffer, that is a new real buffer with its flags, `*mirror`, of the bytes the image covers
 * (file comment). */
static cl_int image_desc_unwrap(cl_context context, const cl_image_format *format, const cl_image_desc *desc,
                                cl_image_desc *real, cl_mem *parent, cl_mem *mirror)
{
    *parent = *mirror = NULL;
    if (desc == NULL)
        return CL_SUCCESS;
    *real = *desc;
    if (desc->buffer != NULL) {
        VAST_RETURN_IF(!vast_object_is(desc->buffer, VAST_MAGIC_MEM), CL_INVALID_IMAGE_DESCRIPTOR,
                       "image_desc->buffer %p is not a VAST memory object", (void *)desc->buffer);
        cl_mem b = desc->buffer;
        if (vast_mem_is_virtual(b)) {
            VAST_RETURN_IF(vast_mem_root(b)->uses_svm, CL_INVALID_OPERATION,
                           "images made from buffers made from SVM memory are not supported");
            cl_mem_flags keep = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY | CL_MEM_HOST_WRITE_ONLY |
                                CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS; /* the driver checks the image's */
            cl_int err;
            size_t size = image_extent(format, desc, b->size);
            *mirror = context->backend->dispatch->clCreateBuffer(context->real, b->flags & keep, size, NULL, &err);
            VAST_RETURN_IF(*mirror == NULL, err, "no real buffer of %zu bytes for the image", size);
        }
        real->buffer = *mirror ? *mirror : b->real;
        *parent = b;
    }
    return CL_SUCCESS;
}

/* The image the real driver made (or not), with its mirror, if any, taken over. */
static cl_mem image_wrap(cl_context context, cl_mem parent, cl_mem mirror, cl_mem real, cl_int err,
                         cl_int *errcode_ret)
{
    cl_mem m = vast_mem_wrap(context, parent, real, err, errcode_ret);
    if (m != NULL)
        m->mirror = mirror;
    else if (mirror != NULL)
        context->backend->dispatch->clReleaseMemObject(mirror);
    return m;
}

cl_mem vast_clCreateImage(cl_context context, cl_mem_flags flags, const cl_image_format *image_format,
                          const cl_image_desc *image_desc, void *host_ptr, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateImage, errcode_ret);
    cl_image_desc real_desc;
    cl_mem parent, mirror;
    cl_int err = image_desc_unwrap(context, image_format, image_desc, &real_desc, &parent, &mirror);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "image_desc");
    cl_mem real = fn_(context->real, flags, image_format, image_desc ? &real_desc : NULL, host_ptr, &err);
    return image_wrap(context, parent, mirror, real, err, errcode_ret);
}

cl_mem vast_clCreateImageWithProperties(cl_context context, const cl_mem_properties *properties, cl_mem_flags flags,
                                        const cl_image_format *image_format, const cl_image_desc *image_desc,
                                        void *host_ptr, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateImageWithProperties, errcode_ret);
    cl_image_desc real_desc;
    cl_mem parent, mirror;
    cl_int err = image_desc_unwrap(context, image_format, image_desc, &real_desc, &parent, &mirror);
    VAST_RETURN_NULL_IF(err != CL_SUCCESS, err, errcode_ret, "image_desc");
    cl_mem real = fn_(context->real, properties, flags, image_format, image_desc ? &real_desc : NULL, host_ptr, &err);
    return image_wrap(context, parent, mirror, real, err, errcode_ret);
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
    VAST_CHECK_MEM(image);
    if (param_name == CL_IMAGE_BUFFER)
        return vast_info_answer(&image->parent, sizeof(cl_mem), param_value_size, param_value, param_value_size_ret);
    VAST_PASS(image->context->backend, image->real, clGetImageInfo, image->real, param_name, param_value_size,
              param_value, param_value_size_ret);
}

/* An image command on an image made from a virtual buffer (file comment), as captured. */
struct mimg_cmd {
    cl_command_type type; /* READ_IMAGE, WRITE_IMAGE, COPY_IMAGE or FILL_IMAGE */
    cl_mem src, dst;      /* retained; NULL where the command has none */
    size_t so[3], dor[3], region[3], row_pitch, slice_pitch;
    void *ptr;               /* read and write: the application's memory */
    unsigned char color[16]; /* fill: float4, int4 or uint4 */
};
static cl_int mimg_enqueue(cl_command_queue q, const struct mimg_cmd *cmd, const size_t *src_origin,
                           const size_t *dst_origin, const size_t *region, bool blocking, cl_uint nw,
                           const cl_event *wait_list, cl_event *event);

/* 1D image buffers made from a virtual buffer: their commands are their buffer's (file comment). */
static bool is_linear(cl_mem image);
static cl_int linear_range(cl_mem image, const size_t *origin, const size_t *region, size_t *off, size_t *size);
static cl_int linear_pixel(cl_mem image, const void *color, unsigned char *pixel, size_t *size);
static cl_int linear_copy(cl_command_queue q, cl_command_type type, cl_mem from, size_t from_off, cl_mem to,
                          size_t to_off, size_t size, cl_uint nw, const cl_event *wait_list, cl_event *event);

cl_int vast_clEnqueueReadImage(cl_command_queue command_queue, cl_mem image, cl_bool blocking_read,
                               const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch,
                               void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                               cl_event *event)
{
    VAST_CHECK_MEM(image);
    if (is_linear(image)) {
        struct vast_host_cmd c = {.op = VAST_HOST_READ, .a = image->parent, .ptr = ptr, .type = CL_COMMAND_READ_IMAGE};
        cl_int err = linear_range(image, origin, region, &c.a_off, &c.size);
        VAST_RETURN_IF(err == CL_SUCCESS && ptr == NULL, CL_INVALID_VALUE, "host pointer is NULL");
        return err != CL_SUCCESS ? err
                                 : vast_vbuf_enqueue(command_queue, &c, blocking_read, num_events_in_wait_list,
                                                     event_wait_list, event);
    }
    if (is_mirrored(image)) {
        struct mimg_cmd c = {.type = CL_COMMAND_READ_IMAGE, .src = image, .row_pitch = row_pitch,
                             .slice_pitch = slice_pitch, .ptr = ptr};
        return mimg_enqueue(command_queue, &c, origin, NULL, region, blocking_read, num_events_in_wait_list,
                            event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueReadImage, num_events_in_wait_list, event_wait_list, event, image->real,
                 blocking_read, origin, region, row_pitch, slice_pitch, ptr);
}

cl_int vast_clEnqueueWriteImage(cl_command_queue command_queue, cl_mem image, cl_bool blocking_write,
                                const size_t *origin, const size_t *region, size_t input_row_pitch,
                                size_t input_slice_pitch, const void *ptr, cl_uint num_events_in_wait_list,
                                const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(image);
    if (is_linear(image)) {
        struct vast_host_cmd c = {.op = VAST_HOST_WRITE, .a = image->parent, .ptr = (void *)ptr,
                                  .type = CL_COMMAND_WRITE_IMAGE};
        cl_int err = linear_range(image, origin, region, &c.a_off, &c.size);
        VAST_RETURN_IF(err == CL_SUCCESS && ptr == NULL, CL_INVALID_VALUE, "host pointer is NULL");
        return err != CL_SUCCESS ? err
                                 : vast_vbuf_enqueue(command_queue, &c, blocking_write, num_events_in_wait_list,
                                                     event_wait_list, event);
    }
    if (is_mirrored(image)) {
        struct mimg_cmd c = {.type = CL_COMMAND_WRITE_IMAGE, .dst = image, .row_pitch = input_row_pitch,
                             .slice_pitch = input_slice_pitch, .ptr = (void *)ptr};
        return mimg_enqueue(command_queue, &c, NULL, origin, region, blocking_write, num_events_in_wait_list,
                            event_wait_list, event);
    }
    VAST_ENQUEUE(command_queue, clEnqueueWriteImage, num_events_in_wait_list, event_wait_list, event, image->real,
                 blocking_write, origin, region, input_row_pitch, input_slice_pitch, ptr);
}

cl_int vast_clEnqueueCopyImage(cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image,
                               const size_t *src_origin, const size_t *dst_origin, const size_t *region,
                               cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
{
    VAST_CHECK_MEM(src_image);
    VAST_CHECK_MEM(dst_image);
    if (is_linear(src_image) && is_linear(dst_image)) {
        size_t so, dof, size, dsize;
        cl_int err = linear_range(src_image, src_origin, region, &so, &size);
        if (err == CL_SUCCESS)
            err = linear_range(dst_image, dst_origin, region, &dof, &dsize);
        VAST_RETURN_IF(err == CL_SUCCESS && size != dsize, CL_IMAGE_FORMAT_MISMATCH, "pixels of different sizes");
        return err != CL_SUCCESS ? err
                                 : linear_copy(command_queue, CL_COMMAND_COPY_IMAGE, src_image->parent, so,
                                               dst_image->parent, dof, size, num_events_in_wait_list,
                                               event_wait_list, event);
    }
    if (is_mirrored(src_image) || is_mirrored(dst_image)) {
        struct mimg_cmd c = {.type = CL_COMMAND_COPY_IMAGE, .src = src_image, .dst = dst_image};
        return mimg_enqueue(command_queue, &c, src_origin, dst_origin, region, false, num_events_in_wait_list,
                            event_wait_list, event);
    }
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

/* origin and region inside the image (the specification's CL_INVALID_VALUE); *bytes: the
 * region's packed size. */
static cl_int image_region_check(cl_mem image, const size_t *origin, const size_t *region, struct image_geom *g,
                                 size_t *bytes)
{
    VAST_RETURN_IF(origin == NULL || region == NULL, CL_INVALID_VALUE, "origin or region is NULL");
    cl_int err = image_geom_get(image, g);
    if (err != CL_SUCCESS)
        return err;
    *bytes = g->elem;
    for (int i = 0; i < 3; i++) {
        VAST_RETURN_IF(region[i] == 0 || origin[i] >= g->lim[i] || g->lim[i] - origin[i] < region[i],
                       CL_INVALID_VALUE, "origin %zu region %zu in dimension %d of an image of %zu", origin[i],
                       region[i], i, g->lim[i]);
        *bytes *= region[i];
    }
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
    struct image_geom g;
    size_t bytes;
    cl_int err = image_region_check(image, origin, region, &g, &bytes);
    if (err != CL_SUCCESS)
        return err;
    for (int i = 0; i < 3; i++) {
        c->ra.origin[i] = origin[i];
        c->ra.region[i] = region[i];
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

/* Mirrors (file comment): the virtual buffer's bytes into the image's real buffer, and back. */
static size_t mirror_size(cl_mem image)
{
    size_t size = 0;
    image->context->backend->dispatch->clGetMemObjectInfo(image->mirror, CL_MEM_SIZE, sizeof size, &size, NULL);
    return size;
}

static cl_int mirror_in(cl_mem image)
{
    cl_mem v = image->parent;
    size_t size = mirror_size(image);
    cl_int err = vast_vbuf_coherent(v, NULL, 0, size); /* other devices' writes reach the host */
    if (err != CL_SUCCESS)
        return err;
    int st = pagecache_flush_range(v->pc, 0, size);
    if (st != VAST_PC_OK)
        return vast_pc_error(st);
    return v->home->backend->dispatch->clEnqueueWriteBuffer(v->home->pool_queue, image->mirror, CL_TRUE, 0, size,
                                                           pagecache_buffer_host(v->pc), 0, NULL, NULL);
}

static cl_int mirror_out(cl_mem image)
{
    cl_mem v = image->parent;
    size_t size = mirror_size(image);
    struct vast_host_write *token;
    cl_int err = vast_vbuf_coherent(v, NULL, 0, size);
    int st = err == CL_SUCCESS ? pagecache_begin_host_write(v->pc, 0, size, &token) : VAST_PC_OK;
    if (err != CL_SUCCESS || st != VAST_PC_OK)
        return err != CL_SUCCESS ? err : vast_pc_error(st);
    err = v->home->backend->dispatch->clEnqueueReadBuffer(v->home->pool_queue, image->mirror, CL_TRUE, 0, size,
                                                                 pagecache_buffer_host(v->pc), 0, NULL, NULL);
    st = pagecache_end_host_write(token);
    return err != CL_SUCCESS ? err : vast_pc_error(st);
}

cl_int vast_image_host_copy(const struct vast_host_cmd *c)
{
    cl_mem buf = c->a;
    cl_command_queue q = buf->home->pool_queue; /* real, of the shared context the image is in */
    const struct _cl_icd_dispatch *d = buf->home->backend->dispatch;
    char *host = (char *)pagecache_buffer_host(buf->pc) + c->a_off;
    cl_int err = is_mirrored(c->image) ? mirror_in(c->image) : CL_SUCCESS;
    if (err != CL_SUCCESS)
        return err;
    if (c->op == VAST_HOST_TO_IMAGE) {
        int st = pagecache_flush_range(buf->pc, c->a_off, c->size);
        if (st != VAST_PC_OK)
            return vast_pc_error(st);
        err = d->clEnqueueWriteImage(q, c->image->real, CL_TRUE, c->ra.origin, c->ra.region, c->ra.row_pitch,
                                     c->ra.slice_pitch, host, 0, NULL, NULL);
        return err == CL_SUCCESS && is_mirrored(c->image) ? mirror_out(c->image) : err;
    }
    struct vast_host_write *token;
    int st = pagecache_begin_host_write(buf->pc, c->a_off, c->size, &token);
    if (st != VAST_PC_OK)
        return vast_pc_error(st);
    err = d->clEnqueueReadImage(q, c->image->real, CL_TRUE, c->ra.origin, c->ra.region, c->ra.row_pitch,
                                c->ra.slice_pitch, host, 0, NULL, NULL);
    st = pagecache_end_host_write(token); /* always: it unpins the range */
    return err != CL_SUCCESS ? err : vast_pc_error(st);
}

cl_int vast_clEnqueueCopyImageToBuffer(cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer,
                                       const size_t *src_origin, const size_t *region, size_t dst_offset,
                                       cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                                       cl_event *event)
{
    VAST_CHECK_MEM(src_image);
    VAST_CHECK_MEM(dst_buffer);
    if (is_linear(src_image) && vast_mem_is_virtual(dst_buffer)) {
        size_t so, size;
        cl_int err = linear_range(src_image, src_origin, region, &so, &size);
        return err != CL_SUCCESS ? err
                                 : linear_copy(command_queue, CL_COMMAND_COPY_IMAGE_TO_BUFFER, src_image->parent,
                                               so, dst_buffer, dst_offset, size, num_events_in_wait_list,
                                               event_wait_list, event);
    }
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
    VAST_CHECK_MEM(src_buffer);
    VAST_CHECK_MEM(dst_image);
    if (is_linear(dst_image) && vast_mem_is_virtual(src_buffer)) {
        size_t dof, size;
        cl_int err = linear_range(dst_image, dst_origin, region, &dof, &size);
        return err != CL_SUCCESS ? err
                                 : linear_copy(command_queue, CL_COMMAND_COPY_BUFFER_TO_IMAGE, src_buffer,
                                               src_offset, dst_image->parent, dof, size, num_events_in_wait_list,
                                               event_wait_list, event);
    }
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
    VAST_CHECK_MEM(image);
    if (is_linear(image)) {
        VAST_RETURN_IF(fill_color == NULL, CL_INVALID_VALUE, "fill_color is NULL");
        struct vast_host_cmd c = {.op = VAST_HOST_FILL, .a = image->parent, .type = CL_COMMAND_FILL_IMAGE};
        cl_int err = linear_range(image, origin, region, &c.a_off, &c.size);
        if (err == CL_SUCCESS)
            err = linear_pixel(image, fill_color, c.pattern, &c.pattern_size);
        return err != CL_SUCCESS ? err
                                 : vast_vbuf_enqueue(command_queue, &c, false, num_events_in_wait_list,
                                                     event_wait_list, event);
    }
    if (is_mirrored(image)) {
        VAST_RETURN_IF(fill_color == NULL, CL_INVALID_VALUE, "fill_color is NULL");
        struct mimg_cmd c = {.type = CL_COMMAND_FILL_IMAGE, .dst = image};
        memcpy(c.color, fill_color, sizeof c.color);
        return mimg_enqueue(command_queue, &c, NULL, origin, region, false, num_events_in_wait_list,
                            event_wait_list, event);
    }
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
    VAST_RETURN_NULL_IF(is_mirrored(image), CL_INVALID_OPERATION, errcode_ret,
                        "mapping an image made from a virtual buffer is not supported (map the buffer)");
    VAST_ENQUEUE_MAP(command_queue, clEnqueueMapImage, num_events_in_wait_list, event_wait_list, event, errcode_ret,
                     image->real, blocking_map, map_flags, origin, region, image_row_pitch, image_slice_pitch);
}

static cl_int mimg_run(void *ctx, cl_command_queue exec_queue)
{
    (void)exec_queue;
    struct mimg_cmd *c = ctx;
    cl_mem m = is_mirrored(c->src) ? c->src : c->dst;
    cl_command_queue q = m->parent->home->pool_queue; /* real, of the shared context every image is in */
    const struct _cl_icd_dispatch *d = m->parent->home->backend->dispatch;
    cl_int err = is_mirrored(c->src) ? mirror_in(c->src) : CL_SUCCESS;
    if (err == CL_SUCCESS && is_mirrored(c->dst) && c->dst != c->src) /* a partial write keeps the rest */
        err = mirror_in(c->dst);
    if (err != CL_SUCCESS)
        return err;
    cl_event ev = NULL;
    switch (c->type) {
    case CL_COMMAND_READ_IMAGE:
        err = d->clEnqueueReadImage(q, c->src->real, CL_TRUE, c->so, c->region, c->row_pitch, c->slice_pitch, c->ptr,
                                    0, NULL, NULL);
        break;
    case CL_COMMAND_WRITE_IMAGE:
        err = d->clEnqueueWriteImage(q, c->dst->real, CL_TRUE, c->dor, c->region, c->row_pitch, c->slice_pitch,
                                     c->ptr, 0, NULL, NULL);
        break;
    case CL_COMMAND_COPY_IMAGE:
        err = d->clEnqueueCopyImage(q, c->src->real, c->dst->real, c->so, c->dor, c->region, 0, NULL, &ev);
        break;
    default: err = d->clEnqueueFillImage(q, c->dst->real, c->color, c->dor, c->region, 0, NULL, &ev);
    }
    if (ev != NULL) {
        if (err == CL_SUCCESS)
            err = d->clWaitForEvents(1, &ev);
        d->clReleaseEvent(ev);
    }
    return err == CL_SUCCESS && is_mirrored(c->dst) ? mirror_out(c->dst) : err;
}

static void mimg_free(void *ctx)
{
    struct mimg_cmd *c = ctx;
    if (c->src != NULL)
        VAST_RELEASE(c->src);
    if (c->dst != NULL)
        VAST_RELEASE(c->dst);
    free(c);
}

static const struct vast_vcmd_ops mimg_ops[] = {
    {CL_COMMAND_READ_IMAGE, VAST_LANE_HOST, mimg_run, mimg_free, NULL},
    {CL_COMMAND_WRITE_IMAGE, VAST_LANE_HOST, mimg_run, mimg_free, NULL},
    {CL_COMMAND_COPY_IMAGE, VAST_LANE_HOST, mimg_run, mimg_free, NULL},
    {CL_COMMAND_FILL_IMAGE, VAST_LANE_HOST, mimg_run, mimg_free, NULL},
};

/* Checks (the specification's errors at enqueue; pitches are the real driver's, at run time)
 * and submission of an image command on a mirrored image. */
static cl_int mimg_enqueue(cl_command_queue q, const struct mimg_cmd *cmd, const size_t *src_origin,
                           const size_t *dst_origin, const size_t *region, bool blocking, cl_uint nw,
                           const cl_event *wait_list, cl_event *event)
{
    VAST_CHECK(q, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_RETURN_IF((cmd->src && cmd->src->context != q->context) || (cmd->dst && cmd->dst->context != q->context),
                   CL_INVALID_CONTEXT, "image and queue of different contexts");
    VAST_RETURN_IF((cmd->type == CL_COMMAND_READ_IMAGE || cmd->type == CL_COMMAND_WRITE_IMAGE) && cmd->ptr == NULL,
                   CL_INVALID_VALUE, "host pointer is NULL");
    struct mimg_cmd *c = malloc(sizeof *c);
    VAST_RETURN_IF(c == NULL, CL_OUT_OF_HOST_MEMORY, "command");
    *c = *cmd;
    struct image_geom g;
    size_t bytes;
    cl_int err = CL_SUCCESS;
    if (c->src != NULL)
        err = image_region_check(c->src, src_origin, region, &g, &bytes);
    if (err == CL_SUCCESS && c->src != NULL)
        memcpy(c->so, src_origin, sizeof c->so);
    if (err == CL_SUCCESS && c->dst != NULL)
        err = image_region_check(c->dst, dst_origin, region, &g, &bytes);
    if (err == CL_SUCCESS && c->dst != NULL)
        memcpy(c->dor, dst_origin, sizeof c->dor);
    if (err != CL_SUCCESS) {
        free(c);
        return err;
    }
    memcpy(c->region, region, sizeof c->region);
    if (c->src != NULL)
        VAST_RETAIN(c->src);
    if (c->dst != NULL)
        VAST_RETAIN(c->dst);
    int k = c->type == CL_COMMAND_READ_IMAGE ? 0 : c->type == CL_COMMAND_WRITE_IMAGE ? 1
          : c->type == CL_COMMAND_COPY_IMAGE ? 2 : 3;
    return vast_vcmd_submit(q, nw, wait_list, &mimg_ops[k], c, blocking, event);
}

static bool is_linear(cl_mem image)
{
    cl_mem_object_type type = 0;
    return is_mirrored(image) &&
           image->context->backend->dispatch->clGetMemObjectInfo(image->real, CL_MEM_TYPE, sizeof type, &type,
                                                                 NULL) == CL_SUCCESS &&
           type == CL_MEM_OBJECT_IMAGE1D_BUFFER;
}

/* The bytes of the image's buffer that pixels [origin, origin + region) are (checked). */
static cl_int linear_range(cl_mem image, const size_t *origin, const size_t *region, size_t *off, size_t *size)
{
    struct image_geom g;
    cl_int err = image_region_check(image, origin, region, &g, size);
    if (err == CL_SUCCESS)
        *off = origin[0] * g.elem;
    return err;
}

/* The bytes of one pixel of the image's format for a fill colour, converted by the real driver
 * (a one-pixel image filled and read back), for the buffer fill that stands for the image's. */
static cl_int linear_pixel(cl_mem image, const void *color, unsigned char *pixel, size_t *size)
{
    const struct _cl_icd_dispatch *d = image->context->backend->dispatch;
    cl_image_format f;
    cl_int err = d->clGetImageInfo(image->real, CL_IMAGE_FORMAT, sizeof f, &f, NULL);
    if (err == CL_SUCCESS)
        err = d->clGetImageInfo(image->real, CL_IMAGE_ELEMENT_SIZE, sizeof *size, size, NULL);
    VAST_RETURN_IF(err != CL_SUCCESS, err, "image format");
    VAST_RETURN_IF(*size == 0 || *size > 16 || (*size & (*size - 1)), CL_INVALID_OPERATION,
                   "pixels of %zu bytes cannot be filled", *size);
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE1D, .image_width = 1};
    cl_mem one = d->clCreateImage(image->context->real, CL_MEM_READ_WRITE, &f, &desc, NULL, &err);
    VAST_RETURN_IF(one == NULL, err, "no one-pixel image to convert the fill colour");
    cl_command_queue q = image->parent->home->pool_queue;
    size_t o[3] = {0, 0, 0}, r[3] = {1, 1, 1};
    err = d->clEnqueueFillImage(q, one, color, o, r, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = d->clEnqueueReadImage(q, one, CL_TRUE, o, r, 0, 0, pixel, 0, NULL, NULL);
    d->clReleaseMemObject(one);
    return err;
}

/* A copy from/to a linear image: a copy between virtual buffers (buffer.c's checks). */
static cl_int linear_copy(cl_command_queue q, cl_command_type type, cl_mem from, size_t from_off, cl_mem to,
                          size_t to_off, size_t size, cl_uint nw, const cl_event *wait_list, cl_event *event)
{
    VAST_CHECK(q, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);
    VAST_RETURN_IF(from->context != q->context || to->context != q->context, CL_INVALID_CONTEXT,
                   "memory objects and queue of different contexts");
    VAST_RETURN_IF(from_off > from->size || from->size - from_off < size || to_off > to->size ||
                       to->size - to_off < size,
                   CL_INVALID_VALUE, "a copy of %zu bytes past a buffer's end", size);
    size_t x = from->offset + from_off, y = to->offset + to_off;
    VAST_RETURN_IF(vast_mem_root(from) == vast_mem_root(to) && x < y + size && y < x + size, CL_MEM_COPY_OVERLAP,
                   "source and destination overlap");
    struct vast_host_cmd c = {.op = VAST_HOST_COPY, .a = from, .b = to, .a_off = from_off, .b_off = to_off,
                              .size = size, .type = type};
    return vast_vbuf_enqueue(q, &c, false, nw, wait_list, event);
}

/* Launches with images made from virtual buffers (file comment): a command copying each
 * image's buffer into its real buffer, the launch after it, and a command after the launch
 * copying back the real buffers of the images the kernel may write. The application gets the
 * last one's event, reported as the launch's. */
struct mirror_sync {
    cl_mem images[VAST_LAUNCH_MIRRORS]; /* retained */
    bool written[VAST_LAUNCH_MIRRORS];
    size_t n;
    bool back; /* after the launch */
};

static cl_int mirror_sync_run(void *ctx, cl_command_queue exec_queue)
{
    (void)exec_queue;
    struct mirror_sync *c = ctx;
    cl_int err = CL_SUCCESS;
    for (size_t i = 0; i < c->n && err == CL_SUCCESS; i++)
        if (!c->back)
            err = mirror_in(c->images[i]);
        else if (c->written[i])
            err = mirror_out(c->images[i]);
    return err;
}

static void mirror_sync_free(void *ctx)
{
    struct mirror_sync *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        VAST_RELEASE(c->images[i]);
    free(c);
}

static const struct vast_vcmd_ops mirror_in_ops = {CL_COMMAND_MIGRATE_MEM_OBJECTS, VAST_LANE_HOST, mirror_sync_run,
                                                   mirror_sync_free, NULL};
static const struct vast_vcmd_ops mirror_out_ops = {CL_COMMAND_NDRANGE_KERNEL, VAST_LANE_HOST, mirror_sync_run,
                                                    mirror_sync_free, NULL};

static cl_int mirror_sync_submit(cl_command_queue q, cl_mem *images, const bool *written, size_t n, bool back,
                                 cl_uint nw, const cl_event *wait_list, cl_event *event)
{
    struct mirror_sync *c = calloc(1, sizeof *c);
    VAST_RETURN_IF(c == NULL, CL_OUT_OF_HOST_MEMORY, "command");
    for (size_t i = 0; i < n; i++) {
        c->images[i] = images[i];
        c->written[i] = written[i];
        VAST_RETAIN(images[i]);
    }
    c->n = n;
    c->back = back;
    return vast_vcmd_submit(q, nw, wait_list, back ? &mirror_out_ops : &mirror_in_ops, c, false, event);
}

cl_int vast_image_launch(cl_command_queue q, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                         const size_t *global, const size_t *local, cl_mem *images, const bool *written, size_t n,
                         cl_uint nw, const cl_event *wait_list, cl_event *event)
{
    cl_event in = NULL, run = NULL;
    cl_int err = CL_SUCCESS;
    if (!vast_object_is(q, VAST_MAGIC_QUEUE))
        err = CL_INVALID_COMMAND_QUEUE;
    for (size_t i = 0; i < n && err == CL_SUCCESS; i++)
        if (images[i]->context != q->context)
            err = CL_INVALID_CONTEXT;
    if (err == CL_SUCCESS)
        err = mirror_sync_submit(q, images, written, n, false, nw, wait_list, &in);
    if (err == CL_SUCCESS && vast_launch_needs_vast(kernel)) {
        err = vast_launch_ndrange(q, kernel, work_dim, offset, global, local, 1, &in, &run);
    } else if (err == CL_SUCCESS) {
        cl_event real_ev = NULL;
        cl_api_clEnqueueNDRangeKernel fn = VAST_REAL(q->context->backend, q->real, clEnqueueNDRangeKernel);
        err = fn(q->real, kernel->real, work_dim, offset, global, local, 1, &in->real, &real_ev);
        vast_queue_note_real(q);
        if (err == CL_SUCCESS)
            err = vast_event_wrap_out(q, real_ev, &run);
    }
    if (err == CL_SUCCESS)
        err = mirror_sync_submit(q, images, written, n, true, 1, &run, event);
    if (in != NULL)
        VAST_RELEASE(in);
    if (run != NULL)
        VAST_RELEASE(run);
    for (size_t i = 0; i < n; i++)
        VAST_RELEASE(images[i]);
    if (err != CL_SUCCESS)
        vast_error("launch of '%s' with images made from buffers: error %d", kernel->name, err);
    return err;
}
