/* run.c - see run.h. */
#include "run.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bytes_add(struct bytes *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 4096;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            exit(3);
    }
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}

int model_env_open(struct model_env *e, const char *prefix)
{
    memset(e, 0, sizeof *e);
    cl_platform_id ps[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, ps, &np) != CL_SUCCESS)
        return fprintf(stderr, "clGetPlatformIDs failed\n"), -1;
    for (cl_uint i = 0; i < np && i < 16 && e->platform == NULL; i++) {
        char name[128] = "";
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (!strncmp(name, prefix, strlen(prefix)))
            e->platform = ps[i], snprintf(e->name, sizeof e->name, "%s", name);
    }
    if (e->platform == NULL)
        return fprintf(stderr, "no platform '%s*' (OCL_ICD_VENDORS=%s)\n", prefix,
                       getenv("OCL_ICD_VENDORS") ? getenv("OCL_ICD_VENDORS") : "(unset)"),
               -1;
    cl_int err = clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 1, &e->dev, NULL);
    if (err != CL_SUCCESS)
        return fprintf(stderr, "%s: clGetDeviceIDs: %d\n", e->name, err), -1;
    cl_uint bits = 0;
    clGetDeviceInfo(e->dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
    e->align = bits / 8 ? bits / 8 : 1;
    e->ctx = clCreateContext(NULL, 1, &e->dev, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return fprintf(stderr, "%s: clCreateContext: %d\n", e->name, err), -1;
    e->prog = clCreateProgramWithSource(e->ctx, 1, (const char **)&model_kernel_src, NULL, &err);
    if (err == CL_SUCCESS)
        err = clBuildProgram(e->prog, 1, &e->dev, "", NULL, NULL);
    if (err != CL_SUCCESS)
        return fprintf(stderr, "%s: program: %d\n", e->name, err), -1;
    for (int k = 0; k < K_KERNELS; k++) {
        e->k[k] = clCreateKernel(e->prog, model_kernel_names[k], &err);
        if (err != CL_SUCCESS)
            return fprintf(stderr, "%s: clCreateKernel %s: %d\n", e->name, model_kernel_names[k], err), -1;
    }
    return 0;
}

void model_env_close(struct model_env *e)
{
    for (int k = 0; k < K_KERNELS; k++)
        if (e->k[k])
            clReleaseKernel(e->k[k]);
    if (e->prog)
        clReleaseProgram(e->prog);
    if (e->ctx)
        clReleaseContext(e->ctx);
}

/* What one run holds: queues (MODEL_QUEUES and one of its own for initialisation and the
 * end), objects and events by the op that made them, host memory that must outlive the
 * commands, what reads return. */
struct rs {
    struct model_env *e;
    cl_command_queue q[MODEL_QUEUES + 1];
    cl_mem mem[MODEL_MAX_OPS];
    cl_event ev[MODEL_MAX_OPS];
    void *host[MODEL_MAX_OPS];
    unsigned char *out[MODEL_MAX_OPS];
    size_t outn[MODEL_MAX_OPS];
    char completed[MODEL_MAX_OPS];
};

static cl_uint wait_list(const struct rs *r, const struct op *o, cl_event *wl)
{
    cl_uint n = 0;
    for (int i = 0; i < o->nw; i++)
        if (r->ev[o->w[i]] != NULL)
            wl[n++] = r->ev[o->w[i]];
    return n;
}

static unsigned char *random_bytes(size_t n, uint64_t seed)
{
    unsigned char *p = malloc(n ? n : 1);
    gen_fill_bytes(p, n, seed);
    return p;
}

static unsigned char *poisoned(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    memset(p, 0xa5, n);
    return p;
}

/* A buffer made without host data gets its first contents at once (blocking, on the run's
 * own queue): written, or copied from a buffer made with them where the host may not write. */
static cl_int initialise(struct rs *r, cl_mem m, const struct op *o)
{
    unsigned char *p = random_bytes(o->size, o->data);
    cl_int err;
    if (!(o->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS))) {
        err = clEnqueueWriteBuffer(r->q[MODEL_QUEUES], m, CL_TRUE, 0, o->size, p, 0, NULL, NULL);
    } else {
        cl_mem t = clCreateBuffer(r->e->ctx, CL_MEM_COPY_HOST_PTR, o->size, p, &err);
        if (err == CL_SUCCESS) {
            err = clEnqueueCopyBuffer(r->q[MODEL_QUEUES], t, m, 0, 0, o->size, 0, NULL, NULL);
            cl_int f = clFinish(r->q[MODEL_QUEUES]);
            err = err ? err : f;
            clReleaseMemObject(t);
        }
    }
    free(p);
    return err;
}

static void op_create(struct rs *r, int i, const struct op *o, int32_t *code)
{
    void *hp = NULL;
    if (o->flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR))
        hp = random_bytes(o->size, o->data);
    cl_int err;
    r->mem[i] = clCreateBuffer(r->e->ctx, o->flags, o->size, hp, &err);
    code[0] = err;
    if (o->flags & CL_MEM_USE_HOST_PTR)
        r->host[i] = hp; /* the buffer's storage: freed after the run */
    else
        free(hp); /* copied by the call */
    if (r->mem[i] != NULL && !(o->flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)))
        code[1] = initialise(r, r->mem[i], o);
}

static void op_map(struct rs *r, int i, const struct op *o, cl_command_queue q, cl_uint nw, const cl_event *wl,
                   int32_t *code)
{
    cl_event mev = NULL;
    cl_int err;
    unsigned char *p = clEnqueueMapBuffer(q, r->mem[o->a], o->blocking ? CL_TRUE : CL_FALSE, o->flags, o->off, o->size,
                                          nw, wl, &mev, &err);
    code[0] = err;
    if (p == NULL || err != CL_SUCCESS)
        return;
    if (!o->blocking)
        code[1] = clWaitForEvents(1, &mev);
    clReleaseEvent(mev);
    if (o->flags & CL_MAP_READ) {
        r->out[i] = malloc(o->size);
        memcpy(r->out[i], p, o->size);
        r->outn[i] = o->size;
    }
    if (o->flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) {
        unsigned char *d = random_bytes(o->size, o->data);
        /* Invalidated: every byte is written. Else every other byte or so: the rest must keep
         * the buffer's contents. */
        for (size_t k = 0; k < o->size; k++)
            if ((o->flags & CL_MAP_WRITE_INVALIDATE_REGION) || (d[k] & 0x10))
                p[k] = d[k];
        free(d);
    }
    code[2] = clEnqueueUnmapMemObject(q, r->mem[o->a], p, 0, NULL, &r->ev[i]);
}

static void op_launch(struct rs *r, int i, const struct op *o, cl_command_queue q, cl_uint nw, const cl_event *wl,
                      int32_t *code)
{
    cl_kernel k = r->e->k[o->kernel];
    cl_int e = CL_SUCCESS;
    cl_uint n = o->n, m = o->m, s = o->scalar;
#define ARG(idx, v) (e = e ? e : clSetKernelArg(k, idx, sizeof(v), &(v)))
    switch (o->kernel) {
    case K_INPLACE:
    case K_BYTES:
        ARG(0, r->mem[o->a]), ARG(1, n), ARG(2, s);
        break;
    case K_GATHER:
        ARG(0, r->mem[o->a]), ARG(1, r->mem[o->b]), ARG(2, r->mem[o->c]), ARG(3, n), ARG(4, m);
        break;
    case K_MIX:
        ARG(0, r->mem[o->a]), ARG(1, r->mem[o->b]), ARG(2, n), ARG(3, m);
        break;
    }
#undef ARG
    code[1] = e;
    size_t local = o->local, global = o->local ? (o->n + o->local - 1) / o->local * o->local : o->n;
    size_t off = o->goff;
    code[0] = clEnqueueNDRangeKernel(q, k, 1, o->goff ? &off : NULL, &global, o->local ? &local : NULL, nw, wl,
                                     &r->ev[i]);
}

/* True when an object the op names does not exist here (the other platform made it). */
static bool missing(const struct rs *r, const struct op *o)
{
    return (o->a >= 0 && o->kind != OP_COMPLETE && o->kind != OP_WAIT && r->mem[o->a] == NULL) ||
           (o->b >= 0 && r->mem[o->b] == NULL) || (o->c >= 0 && r->mem[o->c] == NULL);
}

static void op_run(struct rs *r, const struct seq *s, int i, struct trace *t)
{
    const struct op *o = &s->ops[i];
    int32_t *code = t->code[i];
    cl_command_queue q = r->q[o->q];
    cl_event wl[MODEL_MAX_WAITS];
    cl_uint nw = wait_list(r, o, wl);
    const cl_event *wlp = nw ? wl : NULL; /* a list of 0 events must be NULL */
    cl_bool blk = o->blocking ? CL_TRUE : CL_FALSE;
    cl_int err = CL_SUCCESS;
    if (o->kind != OP_CREATE && missing(r, o)) {
        code[0] = MODEL_SKIPPED;
        return;
    }
    switch (o->kind) {
    case OP_CREATE:
        op_create(r, i, o, code);
        break;
    case OP_SUB: {
        cl_buffer_region rg = {o->off, o->size};
        r->mem[i] = clCreateSubBuffer(r->mem[o->a], o->flags, CL_BUFFER_CREATE_TYPE_REGION, &rg, &err);
        code[0] = err;
        break;
    }
    case OP_WRITE:
        r->host[i] = random_bytes(o->size, o->data);
        code[0] = clEnqueueWriteBuffer(q, r->mem[o->a], blk, o->off, o->size, r->host[i], nw, wlp, &r->ev[i]);
        break;
    case OP_READ:
        r->out[i] = poisoned(o->size), r->outn[i] = o->size;
        code[0] = clEnqueueReadBuffer(q, r->mem[o->a], blk, o->off, o->size, r->out[i], nw, wlp, &r->ev[i]);
        break;
    case OP_COPY:
        code[0] = clEnqueueCopyBuffer(q, r->mem[o->a], r->mem[o->b], o->off, o->off2, o->size, nw, wlp, &r->ev[i]);
        break;
    case OP_COPY_RECT:
        code[0] = clEnqueueCopyBufferRect(q, r->mem[o->a], r->mem[o->b], o->so, o->dor, o->rg, o->srp, o->ssp, o->drp,
                                          o->dsp, nw, wlp, &r->ev[i]);
        break;
    case OP_READ_RECT:
        r->out[i] = poisoned(o->host_bytes), r->outn[i] = o->host_bytes;
        code[0] = clEnqueueReadBufferRect(q, r->mem[o->a], blk, o->so, o->dor, o->rg, o->srp, o->ssp, o->drp, o->dsp,
                                          r->out[i], nw, wlp, &r->ev[i]);
        break;
    case OP_WRITE_RECT:
        r->host[i] = random_bytes(o->host_bytes, o->data);
        code[0] = clEnqueueWriteBufferRect(q, r->mem[o->a], blk, o->so, o->dor, o->rg, o->srp, o->ssp, o->drp, o->dsp,
                                           r->host[i], nw, wlp, &r->ev[i]);
        break;
    case OP_FILL: {
        unsigned char pat[128];
        gen_fill_bytes(pat, o->psize, o->data);
        code[0] = clEnqueueFillBuffer(q, r->mem[o->a], pat, o->psize, o->off, o->size, nw, wlp, &r->ev[i]);
        break;
    }
    case OP_MAP:
        op_map(r, i, o, q, nw, wlp, code);
        break;
    case OP_LAUNCH:
        op_launch(r, i, o, q, nw, wlp, code);
        break;
    case OP_RELEASE:
        code[0] = clReleaseMemObject(r->mem[o->a]);
        r->mem[o->a] = NULL;
        break;
    case OP_USER:
        r->ev[i] = clCreateUserEvent(r->e->ctx, &err);
        code[0] = err;
        break;
    case OP_COMPLETE:
        code[0] = r->ev[o->a] ? clSetUserEventStatus(r->ev[o->a], CL_COMPLETE) : MODEL_SKIPPED;
        r->completed[o->a] = 1;
        break;
    case OP_FINISH:
        code[0] = clFinish(q);
        break;
    case OP_WAIT:
        code[0] = r->ev[o->a] ? clWaitForEvents(1, &r->ev[o->a]) : MODEL_SKIPPED;
        break;
    case OP_MARKER:
        code[0] = clEnqueueMarkerWithWaitList(q, nw, wlp, &r->ev[i]);
        break;
    }
}

/* After the ops: every user event complete, every queue finished; each event's status and
 * each live object's whole contents go into the trace; everything is released. */
static void epilogue(struct rs *r, const struct seq *s, int steps, struct trace *t)
{
    model_where.phase = "completing user events and finishing the queues";
    for (int i = 0; i < steps; i++)
        if (s->ops[i].kind == OP_USER && r->ev[i] != NULL && !r->completed[i])
            clSetUserEventStatus(r->ev[i], CL_COMPLETE);
    for (int q = 0; q <= MODEL_QUEUES; q++)
        t->code[steps][q] = clFinish(r->q[q]);
    for (int i = 0; i < steps; i++) {
        if (r->ev[i] == NULL)
            continue;
        cl_int st = 1;
        clGetEventInfo(r->ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        t->status[i] = st;
    }
    model_where.phase = "reading every object's final contents";
    cl_command_queue q = r->q[MODEL_QUEUES];
    for (int i = 0; i < steps; i++) {
        if (r->mem[i] == NULL)
            continue;
        size_t size = 0;
        cl_mem_flags f = 0;
        clGetMemObjectInfo(r->mem[i], CL_MEM_SIZE, sizeof size, &size, NULL);
        clGetMemObjectInfo(r->mem[i], CL_MEM_FLAGS, sizeof f, &f, NULL);
        unsigned char *p = poisoned(size);
        cl_int err;
        if (f & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)) {
            cl_mem tmp = clCreateBuffer(r->e->ctx, CL_MEM_READ_WRITE, size, NULL, &err);
            if (err == CL_SUCCESS) {
                err = clEnqueueCopyBuffer(q, r->mem[i], tmp, 0, 0, size, 0, NULL, NULL);
                cl_int e2 = clEnqueueReadBuffer(q, tmp, CL_TRUE, 0, size, p, 0, NULL, NULL);
                err = err ? err : e2;
                clReleaseMemObject(tmp);
            }
        } else {
            err = clEnqueueReadBuffer(q, r->mem[i], CL_TRUE, 0, size, p, 0, NULL, NULL);
        }
        t->fobj[t->nfinal] = i;
        t->foff[t->nfinal++] = t->final.n;
        bytes_add(&t->final, &err, sizeof err);
        bytes_add(&t->final, p, size);
        free(p);
    }
    t->foff[t->nfinal] = t->final.n;
    for (int i = 0; i < steps; i++) {
        t->doff[i] = t->data.n;
        bytes_add(&t->data, r->out[i], r->outn[i]);
    }
    t->doff[steps] = t->data.n;
    /* Sub-buffers first, then their buffers; events; queues; host memory last. */
    model_where.phase = "releasing";
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < steps; i++)
            if (r->mem[i] != NULL && (s->ops[i].kind == OP_SUB) == (pass == 0))
                clReleaseMemObject(r->mem[i]), r->mem[i] = NULL;
    for (int i = 0; i < steps; i++)
        if (r->ev[i] != NULL)
            clReleaseEvent(r->ev[i]);
    for (int q = 0; q <= MODEL_QUEUES; q++)
        clReleaseCommandQueue(r->q[q]);
    for (int i = 0; i < steps; i++)
        free(r->host[i]), free(r->out[i]);
}

struct model_where model_where;

void model_run(struct model_env *e, const struct seq *s, int steps, struct trace *t)
{
    static struct rs r;
    memset(&r, 0, sizeof r);
    memset(t, 0, sizeof *t);
    r.e = e;
    if (steps > s->n)
        steps = s->n;
    for (int q = 0; q <= MODEL_QUEUES; q++) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, q == 2 ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0, 0};
        cl_int err;
        r.q[q] = clCreateCommandQueueWithProperties(e->ctx, e->dev, props, &err);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "%s: clCreateCommandQueueWithProperties: %d\n", e->name, err);
            exit(3);
        }
    }
    for (int i = 0; i < steps; i++) {
        model_where = (struct model_where){e->name, s->seed, i, NULL};
        op_run(&r, s, i, t);
    }
    model_where.op = steps;
    epilogue(&r, s, steps, t);
    model_where.phase = NULL;
}

void trace_free(struct trace *t)
{
    free(t->data.p);
    free(t->final.p);
    memset(t, 0, sizeof *t);
}

static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return i;
    return (size_t)-1;
}

int trace_compare(const struct seq *s, int steps, const struct trace *want, const struct trace *got, char *why,
                  size_t n)
{
    if (steps > s->n)
        steps = s->n;
    for (int i = 0; i <= steps; i++) {
        for (int c = 0; c < 4; c++)
            if (want->code[i][c] != got->code[i][c])
                return snprintf(why, n, "op %d: call %d returned %d on PoCL, %d through VAST%s", i, c,
                                want->code[i][c], got->code[i][c], i == steps ? " (the final clFinish)" : ""),
                       1;
        if (i == steps)
            break;
        if (want->status[i] != got->status[i])
            return snprintf(why, n, "op %d: event status %d on PoCL, %d through VAST", i, want->status[i],
                            got->status[i]),
                   1;
        size_t wn = want->doff[i + 1] - want->doff[i], gn = got->doff[i + 1] - got->doff[i];
        if (wn != gn)
            return snprintf(why, n, "op %d: %zu bytes read on PoCL, %zu through VAST", i, wn, gn), 1;
        size_t d = first_diff(want->data.p + want->doff[i], got->data.p + got->doff[i], wn);
        if (d != (size_t)-1)
            return snprintf(why, n, "op %d: read-back differs at byte %zu of %zu (PoCL 0x%02x, VAST 0x%02x)", i, d, wn,
                            want->data.p[want->doff[i] + d], got->data.p[got->doff[i] + d]),
                   1;
    }
    if (want->nfinal != got->nfinal)
        return snprintf(why, n, "%d objects alive at the end on PoCL, %d through VAST", want->nfinal, got->nfinal), 1;
    for (int k = 0; k < want->nfinal; k++) {
        size_t wn = want->foff[k + 1] - want->foff[k], gn = got->foff[k + 1] - got->foff[k];
        if (want->fobj[k] != got->fobj[k] || wn != gn)
            return snprintf(why, n, "final object %d: op %d/%d, %zu/%zu bytes", k, want->fobj[k], got->fobj[k], wn, gn),
                   1;
        size_t d = first_diff(want->final.p + want->foff[k], got->final.p + got->foff[k], wn);
        if (d != (size_t)-1)
            return snprintf(why, n,
                            "final contents of the object op %d made differ at byte %zu (of %zu, after a 4-byte "
                            "status; PoCL 0x%02x, VAST 0x%02x)",
                            want->fobj[k], d, wn, want->final.p[want->foff[k] + d], got->final.p[got->foff[k] + d]),
                   1;
    }
    return 0;
}
