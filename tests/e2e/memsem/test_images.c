/* test_images.c - copies between images and virtual buffers (issue 18): images stay real
 * objects of the real driver, buffers are virtual, so clEnqueueCopyBufferToImage and
 * clEnqueueCopyImageToBuffer must bring the buffer's range up to date on the host (pages a
 * kernel dirtied on the device) and, copying into the buffer, keep its resident pages equal to
 * the new bytes. Every byte must equal PoCL's, direct, forced paged and at budgets far below
 * the buffer (its pages resident, dirty or evicted between the copies).
 *
 *   to_image    a kernel dirties the buffer, then copies at odd offsets, origins and regions
 *               into 1D array, 2D, 2D array and 3D images (poisoned first); a host write in
 *               between; the whole images read back
 *   from_image  images of random pixels copied into the dirtied buffer at odd offsets, then a
 *               kernel over the whole buffer, the buffer read back
 *   events      the copies' events: a user event in the wait list, a pass-through image read
 *               waiting on a virtual copy, command types, profiling order, callbacks, and
 *               the enqueue-time errors of regions past the image or the buffer
 *   simultaneous  CTS test_events callbacks_simultaneous: buffer, image and buffer-image
 *               commands all held by one user event (or by the previous command), callbacks
 *               for SUBMITTED, RUNNING and COMPLETE on each; every callback must run once
 *   image_buffer  1D image buffers made from virtual buffers: the
 *               buffer's writes (host and kernel) seen by image reads and copies, the image's
 *               writes (write, fill, copy, copy from a buffer) seen by the buffer's reads and
 *               kernels, kernels reading and writing the image between kernels on the buffer
 *               (PoCL 3.1 has no cl_khr_image2d_from_buffer)
 *   abandoned   a program's error path: commands wait on a user event that is released and
 *               never set, the queue and context are released, the process exits; it must
 *               not hang (the specification lets clFinish wait forever here, PoCL does)
 * Usage: memsem_images [--case a,b] [--config x,y] [--flip] (twin.h). */
#include "twin.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 3000017u /* buffer bytes: not a page multiple */

static const char *src = "__kernel void bump(__global uchar *a, uint n) {\n"
                         "    uint i = get_global_id(0);\n"
                         "    if (i < n) a[i] = (uchar)(a[i] * 7u + (i & 255u));\n"
                         "}\n";

struct img_spec {
    cl_mem_object_type type;
    cl_channel_order order;
    cl_channel_type ctype;
    size_t elem;
    size_t w, h, d, arr;
    size_t origin[3], region[3];
    size_t offset; /* buffer side */
};

static const struct img_spec specs[] = {
    {CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_RGBA, CL_UNSIGNED_INT8, 4, 101, 0, 0, 9, {3, 2, 0}, {97, 6, 1}, 1234567},
    {CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_UNSIGNED_INT8, 4, 67, 45, 0, 0, {5, 3, 0}, {61, 41, 1}, 7},
    {CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_R, CL_UNSIGNED_INT16, 2, 23, 17, 0, 5, {1, 2, 1}, {21, 15, 3}, 2997111},
    {CL_MEM_OBJECT_IMAGE3D, CL_RGBA, CL_UNSIGNED_INT32, 16, 19, 13, 7, 0, {2, 1, 3}, {17, 11, 4}, 65533},
};
#define NSPECS (sizeof specs / sizeof specs[0])

static size_t img_bytes(const struct img_spec *s)
{
    size_t h = s->h ? s->h : 1, d = s->d ? s->d : 1, a = s->arr ? s->arr : 1;
    return s->elem * s->w * h * d * a;
}

static size_t region_bytes(const struct img_spec *s) { return s->elem * s->region[0] * s->region[1] * s->region[2]; }

static void img_full(const struct img_spec *s, size_t region[3])
{
    region[0] = s->w;
    region[1] = s->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? s->arr : s->h;
    region[2] = s->type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? s->arr : s->type == CL_MEM_OBJECT_IMAGE3D ? s->d : 1;
}

/* An image of the spec, its pixels from `init` (bytes) or 0xa5 bytes. */
static cl_mem img_make(struct clenv *e, const struct img_spec *s, const void *init)
{
    cl_image_format f = {s->order, s->ctype};
    cl_image_desc desc = {.image_type = s->type, .image_width = s->w, .image_height = s->h, .image_depth = s->d,
                          .image_array_size = s->arr};
    cl_int err;
    cl_mem m = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &f, &desc, NULL, &err);
    CL_OK(err);
    size_t bytes = img_bytes(s), origin[3] = {0, 0, 0}, region[3];
    unsigned char *poison = malloc(bytes);
    memset(poison, 0xa5, bytes);
    img_full(s, region);
    CL_OK(clEnqueueWriteImage(e->q, m, CL_TRUE, origin, region, 0, 0, init ? init : poison, 0, NULL, NULL));
    free(poison);
    return m;
}

static void img_read(struct clenv *e, const struct img_spec *s, cl_mem m, struct blob *out)
{
    size_t bytes = img_bytes(s), origin[3] = {0, 0, 0}, region[3];
    unsigned char *p = malloc(bytes);
    memset(p, 0x3c, bytes);
    img_full(s, region);
    CL_OK(clEnqueueReadImage(e->q, m, CL_TRUE, origin, region, 0, 0, p, 0, NULL, NULL));
    blob_add(out, p, bytes);
    free(p);
}

struct setup {
    cl_mem buf;
    cl_program prog;
    cl_kernel bump;
};

/* One launch of the kernel that dirties the whole buffer. */
static void bump(struct clenv *e, struct setup *s)
{
    cl_uint n = N;
    CL_OK(clSetKernelArg(s->bump, 0, sizeof(cl_mem), &s->buf));
    CL_OK(clSetKernelArg(s->bump, 1, sizeof n, &n));
    size_t local = 64, global = (N + local - 1) / local * local;
    CL_OK(clEnqueueNDRangeKernel(e->q, s->bump, 1, NULL, &global, &local, 0, NULL, NULL));
}

/* The buffer of random bytes, dirtied on the device by a kernel (resident and dirty, or
 * written back and evicted under small budgets). */
static void setup(struct clenv *e, struct setup *s, uint64_t seed)
{
    uint32_t *init = twin_random_u32((N + 3) / 4, seed);
    cl_int err;
    s->buf = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N, init, &err);
    CL_OK(err);
    free(init);
    s->prog = clenv_build(e, src, NULL);
    s->bump = clCreateKernel(s->prog, "bump", &err);
    CL_OK(err);
    bump(e, s);
}

static void teardown(struct setup *s)
{
    clReleaseMemObject(s->buf);
    clReleaseKernel(s->bump);
    clReleaseProgram(s->prog);
}

static void read_buf(struct clenv *e, cl_mem m, struct blob *out)
{
    unsigned char *p = malloc(N);
    memset(p, 0x5a, N);
    CL_OK(clEnqueueReadBuffer(e->q, m, CL_TRUE, 0, N, p, 0, NULL, NULL));
    blob_add(out, p, N);
    free(p);
}

static void case_to_image(struct clenv *e, struct blob *out)
{
    struct setup s;
    setup(e, &s, 0x71u);
    for (size_t i = 0; i < NSPECS; i++) {
        const struct img_spec *sp = &specs[i];
        cl_mem img = img_make(e, sp, NULL);
        CL_OK(clEnqueueCopyBufferToImage(e->q, s.buf, img, sp->offset, sp->origin, sp->region, 0, NULL, NULL));
        img_read(e, sp, img, out);
        /* A host write into the copied range, a kernel over the buffer, and the copy again
         * (non-blocking calls: the queue orders them). */
        unsigned char v[5] = {1, 2, 3, 4, (unsigned char)i};
        CL_OK(clEnqueueWriteBuffer(e->q, s.buf, CL_FALSE, sp->offset + 3, sizeof v, v, 0, NULL, NULL));
        CL_OK(clEnqueueCopyBufferToImage(e->q, s.buf, img, sp->offset, sp->origin, sp->region, 0, NULL, NULL));
        img_read(e, sp, img, out);
        bump(e, &s);
        CL_OK(clEnqueueCopyBufferToImage(e->q, s.buf, img, sp->offset, sp->origin, sp->region, 0, NULL, NULL));
        img_read(e, sp, img, out);
        clReleaseMemObject(img);
    }
    teardown(&s);
}

static void case_from_image(struct clenv *e, struct blob *out)
{
    struct setup s;
    setup(e, &s, 0x72u);
    for (size_t i = 0; i < NSPECS; i++) {
        const struct img_spec *sp = &specs[i];
        uint32_t *pix = twin_random_u32(img_bytes(sp) / 4 + 1, 0x100u + i);
        cl_mem img = img_make(e, sp, pix);
        free(pix);
        CL_OK(clEnqueueCopyImageToBuffer(e->q, img, s.buf, sp->origin, sp->region, sp->offset, 0, NULL, NULL));
        bump(e, &s); /* the copied bytes must reach the kernel, resident pages included */
        read_buf(e, s.buf, out);
        CL_OK(clEnqueueCopyImageToBuffer(e->q, img, s.buf, sp->origin, sp->region, sp->offset + 1, 0, NULL, NULL));
        read_buf(e, s.buf, out);
        clReleaseMemObject(img);
    }
    teardown(&s);
}

static void CL_CALLBACK count_cb(cl_event ev, cl_int status, void *data)
{
    (void)ev;
    if (status == CL_COMPLETE)
        __atomic_add_fetch((int *)data, 1, __ATOMIC_SEQ_CST);
}

static void add_int(struct blob *out, cl_int v) { blob_add(out, &v, sizeof v); }

/* Events of the copies: wait lists with a user event, types, profiling, callbacks, errors. */
static void case_events(struct clenv *e, struct blob *out)
{
    struct setup s;
    setup(e, &s, 0x73u);
    cl_int err;
    cl_command_queue pq = clCreateCommandQueue(e->ctx, e->device, CL_QUEUE_PROFILING_ENABLE, &err);
    CL_OK(err);
    const struct img_spec *sp = &specs[1];
    cl_mem img = img_make(e, sp, NULL);
    cl_event user = clCreateUserEvent(e->ctx, &err), to, from, rd;
    CL_OK(err);
    CL_OK(clEnqueueCopyBufferToImage(pq, s.buf, img, sp->offset, sp->origin, sp->region, 1, &user, &to));
    size_t origin[3] = {0, 0, 0}, region[3];
    img_full(sp, region);
    unsigned char *p = malloc(img_bytes(sp));
    memset(p, 0x3c, img_bytes(sp));
    CL_OK(clEnqueueReadImage(pq, img, CL_FALSE, origin, region, 0, 0, p, 1, &to, &rd));
    CL_OK(clEnqueueCopyImageToBuffer(pq, img, s.buf, sp->origin, sp->region, N - region_bytes(sp), 1, &to, &from));
    int completed = 0;
    CL_OK(clSetEventCallback(from, CL_COMPLETE, count_cb, &completed));
    cl_int st;
    CL_OK(clGetEventInfo(to, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    add_int(out, st > CL_COMPLETE); /* not run before the user event */
    CL_OK(clSetUserEventStatus(user, CL_COMPLETE));
    CL_OK(clWaitForEvents(1, &from));
    CL_OK(clWaitForEvents(1, &rd));
    blob_add(out, p, img_bytes(sp));
    free(p);
    for (int i = 0; i < 200 && __atomic_load_n(&completed, __ATOMIC_SEQ_CST) == 0; i++)
        usleep(10000);
    add_int(out, __atomic_load_n(&completed, __ATOMIC_SEQ_CST));
    cl_event evs[2] = {to, from};
    for (int i = 0; i < 2; i++) {
        cl_command_type type;
        CL_OK(clGetEventInfo(evs[i], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
        add_int(out, (cl_int)type);
        cl_ulong t[4];
        for (int k = 0; k < 4; k++)
            CL_OK(clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_QUEUED + k, sizeof t[k], &t[k], NULL));
        add_int(out, t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3]);
    }
    read_buf(e, s.buf, out);
    /* The specification's errors, at enqueue (PoCL 3.1 accepts an origin past the image's
     * width, so that one is not compared). */
    size_t big[3] = {sp->w + 1, 1, 1};
    add_int(out, clEnqueueCopyImageToBuffer(pq, img, s.buf, origin, big, 0, 0, NULL, NULL));
    add_int(out, clEnqueueCopyImageToBuffer(pq, img, s.buf, origin, sp->region, N - 1, 0, NULL, NULL));
    add_int(out, clEnqueueCopyBufferToImage(pq, s.buf, img, N - 1, origin, sp->region, 0, NULL, NULL));
    CL_OK(clFinish(pq));
    clReleaseEvent(to);
    clReleaseEvent(from);
    clReleaseEvent(rd);
    clReleaseEvent(user);
    clReleaseMemObject(img);
    clReleaseCommandQueue(pq);
    teardown(&s);
}

enum { SIM_ACTIONS = 12 };

struct sim {
    struct setup s;
    cl_mem img2, img2b, img3, buf2;
    unsigned char *host, *host2;
    void *mapped;
};

static void sim_setup(struct clenv *e, struct sim *m)
{
    setup(e, &m->s, 0x74u);
    m->img2 = img_make(e, &specs[1], NULL);
    m->img2b = img_make(e, &specs[1], NULL);
    m->img3 = img_make(e, &specs[3], NULL);
    m->buf2 = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, N, NULL, NULL);
    m->host = malloc(N);
    m->host2 = malloc(N);
    memset(m->host, 0x11, N);
    memset(m->host2, 0x22, N);
}

static void sim_teardown(struct sim *m)
{
    clReleaseMemObject(m->img2);
    clReleaseMemObject(m->img2b);
    clReleaseMemObject(m->img3);
    clReleaseMemObject(m->buf2);
    teardown(&m->s);
}

/* Action i of the simultaneous test, waiting on *wait; its event in *ev. */
static cl_int sim_action(struct clenv *e, struct sim *m, int i, cl_event *wait, cl_event *ev)
{
    const struct img_spec *s2 = &specs[1], *s3 = &specs[3];
    size_t o[3] = {0, 0, 0}, r2[3], r3[3];
    img_full(s2, r2);
    img_full(s3, r3);
    cl_uint n = N;
    size_t local = 64, global = (N + local - 1) / local * local;
    cl_int err = CL_SUCCESS;
    switch (i) {
    case 0:
        CL_OK(clSetKernelArg(m->s.bump, 0, sizeof(cl_mem), &m->s.buf));
        CL_OK(clSetKernelArg(m->s.bump, 1, sizeof n, &n));
        return clEnqueueNDRangeKernel(e->q, m->s.bump, 1, NULL, &global, &local, 1, wait, ev);
    case 1: return clEnqueueWriteBuffer(e->q, m->buf2, CL_FALSE, 0, N, m->host2, 1, wait, ev);
    case 2: return clEnqueueReadBuffer(e->q, m->s.buf, CL_FALSE, 0, N, m->host, 1, wait, ev);
    case 3:
        m->mapped = clEnqueueMapBuffer(e->q, m->buf2, CL_FALSE, CL_MAP_READ, 4096, 8192, 1, wait, ev, &err);
        return err;
    case 4: return clEnqueueUnmapMemObject(e->q, m->buf2, m->mapped, 1, wait, ev);
    case 5: return clEnqueueWriteImage(e->q, m->img2, CL_FALSE, o, r2, 0, 0, m->host2 + 100, 1, wait, ev);
    case 6: return clEnqueueCopyImage(e->q, m->img2, m->img2b, o, o, r2, 1, wait, ev);
    case 7: return clEnqueueCopyImageToBuffer(e->q, m->img2b, m->buf2, s2->origin, s2->region, 333, 1, wait, ev);
    case 8: return clEnqueueCopyBufferToImage(e->q, m->s.buf, m->img3, 77, s3->origin, s3->region, 1, wait, ev);
    case 9: return clEnqueueCopyImageToBuffer(e->q, m->img3, m->s.buf, o, r3, 5, 1, wait, ev);
    case 10: return clEnqueueCopyBufferToImage(e->q, m->buf2, m->img2, 9, o, r2, 1, wait, ev);
    default: return clEnqueueReadImage(e->q, m->img2, CL_FALSE, o, r2, 0, 0, m->host2 + 7, 1, wait, ev);
    }
}

static int sim_counts[SIM_ACTIONS * 3];

static void CL_CALLBACK sim_cb(cl_event ev, cl_int status, void *data)
{
    (void)ev;
    (void)status;
    __atomic_add_fetch(&sim_counts[(size_t)data], 1, __ATOMIC_SEQ_CST);
}

/* Every action waits on the gate or on the previous action (fixed seed); `release` sets the
 * gate, else the program gives up: the gate is released unset and everything is abandoned. */
static void sim_run(struct clenv *e, struct blob *out, bool release)
{
    struct sim m;
    sim_setup(e, &m);
    bump(e, &m.s); /* not held: every configuration shows its launch mode */
    CL_OK(clFinish(e->q));
    memset(sim_counts, 0, sizeof sim_counts);
    cl_int err;
    cl_event gate = clCreateUserEvent(e->ctx, &err), ev[SIM_ACTIONS];
    CL_OK(err);
    uint64_t seed = 0x5151u;
    static const cl_int when[3] = {CL_SUBMITTED, CL_RUNNING, CL_COMPLETE};
    for (int i = 0; i < SIM_ACTIONS; i++) {
        cl_event *wait = i > 0 && (harness_rand(&seed) & 1) ? &ev[i - 1] : &gate;
        CL_OK(sim_action(e, &m, i, wait, &ev[i]));
        for (int k = 0; k < 3; k++)
            CL_OK(clSetEventCallback(ev[i], when[k], sim_cb, (void *)(size_t)(i * 3 + k)));
    }
    if (!release) { /* the error path of a program: nothing waits, nothing is finished */
        clReleaseEvent(gate);
        add_int(out, 1);
        return;
    }
    CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    CL_OK(clWaitForEvents(SIM_ACTIONS, ev));
    int total = 0;
    for (int t = 0; t < 300 && total < SIM_ACTIONS * 3; t++) {
        total = 0;
        for (int i = 0; i < SIM_ACTIONS * 3; i++)
            total += __atomic_load_n(&sim_counts[i], __ATOMIC_SEQ_CST) > 0;
        if (total < SIM_ACTIONS * 3)
            usleep(10000);
    }
    CL_OK(clFinish(e->q));
    blob_add(out, sim_counts, sizeof sim_counts);
    blob_add(out, m.host, N);
    blob_add(out, m.host2, N);
    read_buf(e, m.s.buf, out);
    read_buf(e, m.buf2, out);
    for (int i = 0; i < SIM_ACTIONS; i++)
        clReleaseEvent(ev[i]);
    clReleaseEvent(gate);
    free(m.host);
    free(m.host2);
    sim_teardown(&m);
}

static void case_simultaneous(struct clenv *e, struct blob *out) { sim_run(e, out, true); }
static void case_abandoned(struct clenv *e, struct blob *out) { sim_run(e, out, false); }

/* Reads of an image made from the buffer: whole (read image) and a part (copy to a buffer). */
static void view_read(struct clenv *e, cl_mem img, size_t w, size_t h, size_t elem, struct blob *out)
{
    size_t o[3] = {0, 0, 0}, r[3] = {w, h, 1}, bytes = w * h * elem;
    unsigned char *p = malloc(bytes);
    memset(p, 0x3c, bytes);
    CL_OK(clEnqueueReadImage(e->q, img, CL_TRUE, o, r, 0, 0, p, 0, NULL, NULL));
    blob_add(out, p, bytes);
    free(p);
}


/* PoCL 3.1 crashes filling a 1D image buffer, copying one to a buffer or writing one in a
 * kernel, and refuses copies between two: on PoCL, the same bytes moved by buffer commands and
 * kernels stand in for those (pixels of 4 bytes). */
static bool is_pocl(const struct clenv *e) { return strncmp(e->name, "Portable", 8) == 0; }

static const char *img_src =
    "__kernel void img_read(__read_only image1d_buffer_t img, __global uint4 *out, uint n) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n) out[i] = read_imageui(img, (int)i) * 3u + (uint4)(i);\n"
    "}\n"
    "__kernel void img_rw(__read_write image1d_buffer_t img, __global uint4 *out, uint n) {\n"
    "    uint i = get_global_id(0);\n" /* declared read_write: VAST copies the image back */
    "    if (i < n) out[i] = read_imageui(img, (int)i) ^ (uint4)(i);\n"
    "}\n";

/* (PoCL 3.1 crashes in a kernel writing a 1D image buffer: this one writes the buffer.) */
static const char *buf_src =
    "__kernel void buf_write(__global uchar4 *b, uint n, uint k) {\n"
    "    uint i = get_global_id(0);\n"
    "    if (i < n) b[i + 7u] = (uchar4)((i * k) & 255u, (i + k) & 255u, (i ^ k) & 255u, 9u);\n"
    "}\n";

#define KN 30001u /* pixels the kernels touch: their output buffer fits every budget */

/* Kernels reading and writing a 1D image buffer made from s->buf, with buffer commands and
 * kernels on s->buf between them. */
static void image_kernels(struct clenv *e, struct setup *s, cl_mem img, struct blob *out)
{
    cl_int err;
    cl_program p = clenv_build(e, img_src, "-cl-std=CL3.0");
    cl_kernel rd = clCreateKernel(p, "img_read", &err);
    CL_OK(err);
    cl_program pb = clenv_build(e, buf_src, NULL);
    cl_kernel wr = clCreateKernel(pb, "buf_write", &err);
    CL_OK(err);
    cl_mem res = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE, KN * 16, NULL, &err);
    CL_OK(err);
    cl_uint n = KN, k = 3;
    size_t local = 1, global = KN;
    CL_OK(clSetKernelArg(rd, 0, sizeof img, &img));
    CL_OK(clSetKernelArg(rd, 1, sizeof res, &res));
    CL_OK(clSetKernelArg(rd, 2, sizeof n, &n));
    CL_OK(clSetKernelArg(wr, 0, sizeof s->buf, &s->buf));
    CL_OK(clSetKernelArg(wr, 1, sizeof n, &n));
    CL_OK(clSetKernelArg(wr, 2, sizeof k, &k));
    for (int round = 0; round < 2; round++) {
        CL_OK(clEnqueueNDRangeKernel(e->q, rd, 1, NULL, &global, &local, 0, NULL, NULL));
        unsigned char *p16 = malloc(KN * 16);
        CL_OK(clEnqueueReadBuffer(e->q, res, CL_TRUE, 0, KN * 16, p16, 0, NULL, NULL));
        blob_add(out, p16, KN * 16);
        free(p16);
        bump(e, s); /* the next read must see the buffer's new bytes */
    }
    cl_event done;
    /* A kernel that may write the image (read_write), then the buffer read and written. */
    cl_kernel rw = clCreateKernel(p, "img_rw", &err);
    CL_OK(err);
    CL_OK(clSetKernelArg(rw, 0, sizeof img, &img));
    CL_OK(clSetKernelArg(rw, 1, sizeof res, &res));
    CL_OK(clSetKernelArg(rw, 2, sizeof n, &n));
    CL_OK(clEnqueueNDRangeKernel(e->q, rw, 1, NULL, &global, &local, 0, NULL, &done));
    cl_command_type type;
    CL_OK(clWaitForEvents(1, &done));
    CL_OK(clGetEventInfo(done, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL)); /* a launch's */
    add_int(out, (cl_int)type);
    clReleaseEvent(done);
    clReleaseKernel(rw);
    read_buf(e, s->buf, out);
    CL_OK(clEnqueueNDRangeKernel(e->q, wr, 1, NULL, &global, &local, 0, NULL, NULL));
    read_buf(e, s->buf, out);
    bump(e, s);
    CL_OK(clEnqueueNDRangeKernel(e->q, rd, 1, NULL, &global, &local, 0, NULL, NULL));
    read_buf(e, s->buf, out);
    clReleaseMemObject(res);
    clReleaseKernel(rd);
    clReleaseKernel(wr);
    clReleaseProgram(p);
    clReleaseProgram(pb);
}

static void case_image_buffer(struct clenv *e, struct blob *out)
{
    struct setup s;
    setup(e, &s, 0x75u);
    cl_int err;
    cl_image_format f = {CL_RGBA, CL_UNSIGNED_INT8};
    size_t w1 = N / 4 - 3; /* a 1D image buffer over (almost) all of it */
    cl_image_desc d1 = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = w1, .buffer = s.buf};
    cl_mem i1 = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &f, &d1, NULL, &err);
    CL_OK(err);
    cl_mem parent = NULL;
    CL_OK(clGetImageInfo(i1, CL_IMAGE_BUFFER, sizeof parent, &parent, NULL));
    add_int(out, parent == s.buf);
    view_read(e, i1, w1, 1, 4, out); /* the kernel's writes */
    static unsigned char v[5003 * 4];
    for (size_t i = 0; i < sizeof v; i++)
        v[i] = (unsigned char)(i * 13 + 1);
    CL_OK(clEnqueueWriteBuffer(e->q, s.buf, CL_FALSE, 4097, 999, v, 0, NULL, NULL));
    view_read(e, i1, w1, 1, 4, out); /* a host write */
    size_t o[3] = {1001, 0, 0}, r[3] = {5003, 1, 1};
    CL_OK(clEnqueueWriteImage(e->q, i1, CL_FALSE, o, r, 0, 0, v, 0, NULL, NULL));
    read_buf(e, s.buf, out);
    bump(e, &s);
    view_read(e, i1, w1, 1, 4, out);
    /* A second buffer's bytes copied into the image, and out again into a third place. */
    uint32_t *init = twin_random_u32((N + 3) / 4, 0x76u);
    cl_mem b2 = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N, init, &err);
    CL_OK(err);
    free(init);
    size_t co[3] = {77, 0, 0}, cr[3] = {100001, 1, 1};
    CL_OK(clEnqueueCopyBufferToImage(e->q, b2, i1, 13, co, cr, 0, NULL, NULL));
    read_buf(e, s.buf, out);
    bump(e, &s);
    size_t ro[3] = {200003, 0, 0}, rr[3] = {3001, 1, 1};
    if (is_pocl(e))
        CL_OK(clEnqueueCopyBuffer(e->q, s.buf, b2, 4 * ro[0], 5, 4 * rr[0], 0, NULL, NULL));
    else
        CL_OK(clEnqueueCopyImageToBuffer(e->q, i1, b2, ro, rr, 5, 0, NULL, NULL));
    read_buf(e, b2, out);
    uint32_t color[4] = {7, 8, 9, 10};
    unsigned char pattern[4] = {7, 8, 9, 10};
    if (is_pocl(e))
        CL_OK(clEnqueueFillBuffer(e->q, s.buf, pattern, 4, 4 * ro[0], 4 * rr[0], 0, NULL, NULL));
    else
        CL_OK(clEnqueueFillImage(e->q, i1, color, ro, rr, 0, NULL, NULL));
    read_buf(e, s.buf, out);
    /* Another 1D image buffer, over b2 (PoCL 3.1 refuses sub-buffers): a copy between two. */
    cl_image_desc d2 = {.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER, .image_width = 16000, .buffer = b2};
    cl_mem i2 = clCreateImage(e->ctx, CL_MEM_READ_WRITE, &f, &d2, NULL, &err);
    CL_OK(err);
    size_t so[3] = {300000, 0, 0}, dso[3] = {11, 0, 0}, sreg[3] = {15000, 1, 1};
    if (is_pocl(e))
        CL_OK(clEnqueueCopyBuffer(e->q, s.buf, b2, 4 * so[0], 4 * dso[0], 4 * sreg[0], 0, NULL, NULL));
    else
        CL_OK(clEnqueueCopyImage(e->q, i1, i2, so, dso, sreg, 0, NULL, NULL));
    read_buf(e, b2, out);
    view_read(e, i2, 16000, 1, 4, out);
    /* Not at small budgets: VAST cannot translate the read_write image argument (the
     * translator does not know the device's __opencl_c_read_write_images), so those
     * launches need contiguous frames and are refused when the budget scatters them. */
    if (getenv("VAST_DEVICE_MEMORY") == NULL)
        image_kernels(e, &s, i1, out);
    clReleaseMemObject(i2);
    clReleaseMemObject(i1);
    clReleaseMemObject(b2);
    teardown(&s);
}

static const struct twin_case cases[] = {
    {"to_image", case_to_image},
    {"from_image", case_from_image},
    {"events", case_events},
    {"simultaneous", case_simultaneous},
    {"image_buffer", case_image_buffer},
    {"abandoned", case_abandoned},
};

/* One 3 MB buffer: the partitioned budgets hold a third of it or less. */
static const struct twin_config configs[] = {
    TWIN_CONFIGS_DIRECT_PAGED_PART4K,
    {"part.64K", {"VAST_DEVICE_MEMORY=1M", "VAST_PAGE_SIZE=64K"}, NULL},
};

int main(int argc, char **argv)
{
    return twin_main(argc, argv, cases, sizeof cases / sizeof cases[0], configs, sizeof configs / sizeof configs[0]);
}
