/* gen.h - random command sequences for the model-based test (tests/e2e/model/).
 *
 * A sequence is an array of ops generated from a seed by a model of the OpenCL objects
 * (buffers, sub-buffers, queues, events, user events): which objects live, their sizes and
 * flags, which commands may still run, which user events are not complete yet. The model
 * only makes sequences whose results are defined: two commands that touch the same memory
 * object (or a buffer and its sub-buffer, or overlapping sub-buffers) where one of them writes
 * are ordered by an event in the wait list (queue order is not relied on, so the sequences
 * mean the same on in-order and out-of-order queues); a blocking call never waits on a user
 * event that is not complete (the model completes it first). Some ops are invalid on purpose
 * (ranges beyond the object, overlapping copies, host access the flags forbid, a sub-buffer
 * of a sub-buffer): both platforms must return the same error code.
 *
 * The same array runs on PoCL and through VAST (run.c); a prefix of it is a sequence too. */
#ifndef VAST_TESTS_MODEL_GEN_H
#define VAST_TESTS_MODEL_GEN_H

#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#define MODEL_MAX_OPS 512
#define MODEL_MAX_WAITS 48
#define MODEL_QUEUES 3 /* 0, 1 in order; 2 out of order */
#define MODEL_USER_EVENTS 32

enum op_kind {
    OP_CREATE,     /* clCreateBuffer: size, flags (host pointer modes included), data */
    OP_SUB,        /* clCreateSubBuffer of a: off, size, flags */
    OP_WRITE,      /* clEnqueueWriteBuffer to a: off, size, data */
    OP_READ,       /* clEnqueueReadBuffer of a: off, size */
    OP_COPY,       /* clEnqueueCopyBuffer a -> b: off -> off2, size */
    OP_COPY_RECT,  /* clEnqueueCopyBufferRect a -> b: so -> dor, rg, src and dst pitches */
    OP_READ_RECT,  /* clEnqueueReadBufferRect of a: buffer origin so, host origin dor */
    OP_WRITE_RECT, /* clEnqueueWriteBufferRect to a: buffer origin so, host origin dor, data */
    OP_FILL,       /* clEnqueueFillBuffer of a: off, size, psize-byte pattern from data */
    OP_MAP,        /* clEnqueueMapBuffer of a (off, size, mapflags), host work, unmap */
    OP_LAUNCH,     /* clEnqueueNDRangeKernel of kernel over a, b, c */
    OP_RELEASE,    /* clReleaseMemObject of a */
    OP_USER,       /* clCreateUserEvent */
    OP_COMPLETE,   /* clSetUserEventStatus(CL_COMPLETE) of the user event op a made */
    OP_FINISH,     /* clFinish(q) */
    OP_WAIT,       /* clWaitForEvents of op a's event */
    OP_MARKER,     /* clEnqueueMarkerWithWaitList */
    OP_KINDS
};

enum { K_INPLACE, K_BYTES, K_GATHER, K_MIX, K_KERNELS };

struct op {
    int kind, q, blocking, bad; /* bad: invalid on purpose (an error code is expected) */
    int a, b, c;                /* objects: the index of the op that made them; -1: none */
    size_t off, off2, size;
    size_t rg[3], so[3], dor[3], srp, ssp, drp, dsp; /* rect geometry */
    size_t host_bytes;                               /* READ_RECT / WRITE_RECT host array */
    cl_mem_flags flags;                              /* CREATE, SUB: mem flags; MAP: map flags */
    unsigned psize;                                  /* FILL */
    int kernel;                                      /* LAUNCH */
    unsigned n, m, local, goff, scalar;
    uint64_t data; /* seed of what the op writes */
    int nw;
    int w[MODEL_MAX_WAITS]; /* ops whose events (commands, user events) it waits for */
};

struct seq {
    struct op ops[MODEL_MAX_OPS];
    int n;
    uint64_t seed;
};

/* Generates about `steps` ops (a few more: completions the model inserts) from seed; sub-buffer
 * origins are multiples of `align` bytes; `frames`: the budget in pages of the configuration it
 * runs in (0: not known), which bounds gathers where a budget of a few frames gives each of their
 * work-items a partition; `valid_only`: leaves out the ops that are invalid on purpose (a
 * reference driver other than PoCL answers some of them against the specification). */
void gen_sequence(struct seq *s, uint64_t seed, int steps, size_t align, size_t frames, int valid_only);

/* One line describing op i (for the replay listing). */
void gen_describe(const struct seq *s, int i, char *buf, size_t n);

/* The kernels the launches use (one program). */
extern const char *const model_kernel_src;
extern const char *const model_kernel_names[K_KERNELS];

/* xorshift64 bytes from a seed: the data an op writes, the same on every platform. */
void gen_fill_bytes(void *p, size_t n, uint64_t seed);

#endif
