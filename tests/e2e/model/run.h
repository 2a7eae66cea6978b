/* run.h - one sequence (gen.h) run on one platform, and what it leaves to compare.
 *
 * Every call's return code, every byte read back (reads, rect reads, mapped reads) and, after
 * the sequence (every user event completed, every queue finished), each event's execution
 * status and the whole contents of every object still alive go into a trace; two platforms'
 * traces must be equal. A call that the other platform refused has no object to work on: the
 * ops that name it record MODEL_SKIPPED and do nothing. */
#ifndef VAST_TESTS_MODEL_RUN_H
#define VAST_TESTS_MODEL_RUN_H

#include "gen.h"

#define MODEL_SKIPPED 0x7fff0001

struct model_env {
    cl_platform_id platform;
    cl_device_id dev;
    cl_context ctx;
    cl_program prog;
    cl_kernel k[K_KERNELS];
    size_t align; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes */
    char name[128];
};

struct bytes {
    unsigned char *p;
    size_t n, cap;
};

struct trace {
    int32_t code[MODEL_MAX_OPS + 1][4]; /* [steps]: the final clFinish of each queue */
    int32_t status[MODEL_MAX_OPS]; /* each op's event after the sequence (0: none) */
    struct bytes data;             /* what op i read: data.p[doff[i] .. doff[i + 1]) */
    size_t doff[MODEL_MAX_OPS + 1];
    struct bytes final; /* the objects alive at the end, in op order: fobj, foff */
    int nfinal, fobj[MODEL_MAX_OPS];
    size_t foff[MODEL_MAX_OPS + 1];
};

/* The first platform whose name starts with prefix, a context, the kernels. 0 when ready;
 * else says why and returns -1. */
int model_env_open(struct model_env *e, const char *prefix);
void model_env_close(struct model_env *e);

/* Where model_run is (for a crash report): platform, seed, op (steps: after the ops). */
struct model_where {
    const char *platform;
    uint64_t seed;
    int op;
    const char *phase; /* after the ops: which part of the epilogue; NULL before */
};
extern struct model_where model_where;

/* Runs ops [0, steps) of s on e into t (zeroed first). */
void model_run(struct model_env *e, const struct seq *s, int steps, struct trace *t);
void trace_free(struct trace *t);

/* 0 when equal; else 1 and the first difference in why. */
int trace_compare(const struct seq *s, int steps, const struct trace *want, const struct trace *got, char *why,
                  size_t n);

#endif
