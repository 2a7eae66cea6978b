/* test_driver_faults.c - faults of the real driver (issue 18): VAST runs over fault_icd.c
 * (VAST_BACKEND), which fails the N-th call of one entry point of PoCL with a driver's error
 * code; the application sees VAST alone.
 *
 *   driver_faults [--entries a,b] [--max-n N]      (the parent)
 *
 * The child is a small program (buffers with and without host data, a write, a copy, a
 * build, a launch, reads, a map, a sub-buffer; data beyond the device budget) whose every
 * step is checked: a step that returns an error (its calls, or the clFinish after it) must
 * leave the data of the steps before it intact and must succeed when run again (the fault is
 * one call); a step that returns success must have its exact result. The parent first counts
 * each entry point's calls in a run without a fault, then runs the child once per entry
 * point and N (1 .. count, at most --max-n), each in its own process, and fails on a wrong
 * result, lost data, a step that does not work again, a launch that failed without VAST's
 * error line naming its kernel, a crash or a hang. Under the sanitizer
 * builds LeakSanitizer checks that nothing leaks (the child releases everything). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SA 300001 /* odd, not a page multiple; A, B and C together exceed the 256 KiB budget */
#define SB 200003
#define NK (SA / 4)

static const char *kernel_src =
    "__kernel void triple(__global const uint *in, __global uint *out, uint n)\n"
    "{ size_t i = get_global_id(0); if (i < n) out[i] = in[i] * 3u + 1u; }\n";

/* ---- child ---- */

struct st {
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q;
    cl_mem a, b, c, s;
    cl_program prog;
    cl_kernel k;
    unsigned char *ha, *hb; /* what A and B must hold */
    int done;               /* steps that succeeded */
    int errors;
};

static cl_int finish(struct st *s, cl_int err)
{
    cl_int f = clFinish(s->q);
    return err != CL_SUCCESS ? err : f;
}

static cl_int s_create(struct st *s)
{
    cl_int e1, e2, e3;
    s->a = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, SA, s->ha, &e1);
    s->b = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, SB, NULL, &e2);
    s->c = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, SA, NULL, &e3);
    cl_int err = e1 ? e1 : e2 ? e2 : e3;
    if (err != CL_SUCCESS) { /* the application releases what it got and tries again */
        if (s->a)
            clReleaseMemObject(s->a);
        if (s->b)
            clReleaseMemObject(s->b);
        if (s->c)
            clReleaseMemObject(s->c);
        s->a = s->b = s->c = NULL;
    }
    return err;
}

static cl_int s_write(struct st *s)
{
    return finish(s, clEnqueueWriteBuffer(s->q, s->b, CL_TRUE, 0, SB, s->hb, 0, NULL, NULL));
}

#define COPY_SRC 1001
#define COPY_DST 5003
#define COPY_N 70001

static cl_int s_copy(struct st *s)
{
    cl_int err = finish(s, clEnqueueCopyBuffer(s->q, s->a, s->b, COPY_SRC, COPY_DST, COPY_N, 0, NULL, NULL));
    if (err == CL_SUCCESS)
        memcpy(s->hb + COPY_DST, s->ha + COPY_SRC, COPY_N);
    return err;
}

static cl_int s_build(struct st *s)
{
    cl_int err;
    s->prog = clCreateProgramWithSource(s->ctx, 1, &kernel_src, NULL, &err);
    if (err == CL_SUCCESS)
        err = clBuildProgram(s->prog, 1, &s->dev, "", NULL, NULL);
    if (err == CL_SUCCESS)
        s->k = clCreateKernel(s->prog, "triple", &err);
    if (err != CL_SUCCESS) {
        if (s->prog)
            clReleaseProgram(s->prog);
        s->prog = NULL;
    }
    return err;
}

static cl_int s_launch(struct st *s)
{
    cl_uint n = NK;
    size_t global = NK;
    cl_int err = clSetKernelArg(s->k, 0, sizeof(cl_mem), &s->a);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(s->k, 1, sizeof(cl_mem), &s->c);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(s->k, 2, sizeof n, &n);
    if (err != CL_SUCCESS) {
        printf("clSetKernelArg returned %s (%d)\n", cl_status_name(err), err);
        return err;
    }
    err = clEnqueueNDRangeKernel(s->q, s->k, 1, NULL, &global, NULL, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        printf("clEnqueueNDRangeKernel returned %s (%d)\n", cl_status_name(err), err);
    else if ((err = finish(s, err)) != CL_SUCCESS)
        printf("the launch's clFinish returned %s (%d)\n", cl_status_name(err), err);
    return err;
}

/* Reads `n` bytes of m at off and compares them with want; an error code, or a wrong byte
 * reported (CL_INVALID_VALUE stands for it: the caller fails the whole run on it). */
static int wrong; /* a read that succeeded returned wrong data */

static cl_int check(struct st *s, cl_mem m, size_t off, size_t n, const unsigned char *want, const char *what)
{
    unsigned char *p = malloc(n);
    memset(p, 0xa5, n);
    cl_int err = finish(s, clEnqueueReadBuffer(s->q, m, CL_TRUE, off, n, p, 0, NULL, NULL));
    if (err == CL_SUCCESS) {
        size_t d = harness_first_diff(p, want, n);
        if (d != (size_t)-1) {
            printf("WRONG %s: byte %zu is 0x%02x, expected 0x%02x (the read returned success)\n", what, d, p[d],
                   want[d]);
            wrong = 1;
        }
    }
    free(p);
    return err;
}

static unsigned char *expected_c(const struct st *s)
{
    unsigned char *c = malloc(SA);
    memset(c, 0, SA);
    const uint32_t *in = (const uint32_t *)s->ha;
    uint32_t *out = (uint32_t *)c;
    for (size_t i = 0; i < NK; i++)
        out[i] = in[i] * 3u + 1u;
    return c;
}

static cl_int s_read_c(struct st *s)
{
    unsigned char *c = expected_c(s);
    cl_int err = check(s, s->c, 0, NK * 4, c, "C = triple(A)");
    free(c);
    return err;
}

static cl_int s_map(struct st *s)
{
    cl_int err;
    unsigned char *p = clEnqueueMapBuffer(s->q, s->b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, SB, 0, NULL, NULL, &err);
    if (p == NULL || err != CL_SUCCESS)
        return err != CL_SUCCESS ? err : CL_OUT_OF_RESOURCES;
    size_t d = harness_first_diff(p, s->hb, SB);
    if (d != (size_t)-1) {
        printf("WRONG map of B: byte %zu is 0x%02x, expected 0x%02x\n", d, p[d], s->hb[d]);
        wrong = 1;
    }
    for (size_t i = 0; i < SB; i += 977) /* the application changes B through the map */
        p[i] ^= 0x5a;
    err = finish(s, clEnqueueUnmapMemObject(s->q, s->b, p, 0, NULL, NULL));
    if (err == CL_SUCCESS)
        for (size_t i = 0; i < SB; i += 977)
            s->hb[i] ^= 0x5a;
    return err;
}

static cl_int s_sub(struct st *s)
{
    cl_buffer_region rg = {4096 * 3, 50001};
    cl_int err;
    s->s = clCreateSubBuffer(s->b, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &rg, &err);
    if (err != CL_SUCCESS)
        return err;
    return check(s, s->s, 0, rg.size, s->hb + rg.origin, "sub-buffer of B");
}

/* Every object whose data a step already set, read back: nothing may be lost. */
static cl_int kept(struct st *s)
{
    cl_int err = CL_SUCCESS, e;
    if (s->a && (e = check(s, s->a, 0, SA, s->ha, "A (kept)")) != CL_SUCCESS)
        err = e;
    if (s->done >= 2 && (e = check(s, s->b, 0, SB, s->hb, "B (kept)")) != CL_SUCCESS)
        err = e;
    if (s->done >= 5 && (e = s_read_c(s)) != CL_SUCCESS)
        err = e;
    return err;
}

static int child(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct clenv env;
    clenv_open(&env, "VAST");
    struct st s = {.ctx = env.ctx, .dev = env.device, .q = env.q};
    uint64_t seed = 18;
    s.ha = harness_rnd_u32(&seed, (SA + 3) / 4, 0);
    s.hb = harness_rnd_u32(&seed, (SB + 3) / 4, 0);
    static const struct {
        const char *name;
        cl_int (*fn)(struct st *);
    } steps[] = {{"create", s_create}, {"write", s_write}, {"copy", s_copy},     {"build", s_build},
                 {"launch", s_launch}, {"read", s_read_c}, {"map", s_map}, {"sub-buffer", s_sub}};
    int bad = 0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0] && !bad; i++) {
        cl_int err = steps[i].fn(&s);
        if (err != CL_SUCCESS) {
            s.errors++;
            printf("step %s returned %s (%d)\n", steps[i].name, cl_status_name(err), err);
            cl_int k = kept(&s);
            if (k != CL_SUCCESS)
                printf("FAIL: after the fault, reading back the earlier data returned %s\n", cl_status_name(k)), bad = 1;
            err = steps[i].fn(&s);
            if (err == CL_OUT_OF_RESOURCES && steps[i].fn == s_launch && getenv("FAULT_REFUSAL_OK")) {
                /* A failed compilation of the paged variant is final: the launch is refused
                 * at enqueue (the parent checks VAST's log line); the rest needs its result. */
                printf("launch refused\n");
                break;
            }
            if (err != CL_SUCCESS)
                printf("FAIL: step %s run again returned %s (%d)\n", steps[i].name, cl_status_name(err), err), bad = 1;
        }
        bad |= wrong;
        if (!bad)
            s.done = (int)i + 1;
    }
    cl_int err = bad ? CL_SUCCESS : kept(&s); /* the final read-back is a step too */
    if (err != CL_SUCCESS) {
        s.errors++;
        printf("step final read-back returned %s (%d)\n", cl_status_name(err), err);
        if ((err = kept(&s)) != CL_SUCCESS)
            printf("FAIL: the final read-back run again returned %s\n", cl_status_name(err)), bad = 1;
    }
    bad |= wrong;
    if (s.s)
        clReleaseMemObject(s.s);
    cl_mem objs[] = {s.a, s.b, s.c};
    for (int i = 0; i < 3; i++)
        if (objs[i])
            clReleaseMemObject(objs[i]);
    if (s.k)
        clReleaseKernel(s.k);
    if (s.prog)
        clReleaseProgram(s.prog);
    clenv_close(&env);
    free(s.ha);
    free(s.hb);
    printf("%s: %d steps, %d returned an error\n", bad ? "FAIL" : "ok", s.done, s.errors);
    return bad;
}

/* ---- parent ---- */

struct entry {
    const char *name;
    cl_int code;
};

static const struct entry entries[] = {
    {"clCreateBuffer", CL_MEM_OBJECT_ALLOCATION_FAILURE},
    {"clCreateSubBuffer", CL_OUT_OF_RESOURCES},
    {"clEnqueueNDRangeKernel", CL_OUT_OF_RESOURCES},
    {"clEnqueueReadBuffer", CL_OUT_OF_RESOURCES},
    {"clEnqueueWriteBuffer", CL_OUT_OF_HOST_MEMORY},
    {"clEnqueueCopyBuffer", CL_OUT_OF_RESOURCES},
    {"clEnqueueMapBuffer", CL_MEM_OBJECT_ALLOCATION_FAILURE},
    {"clBuildProgram", CL_BUILD_PROGRAM_FAILURE}, /* final: a paged variant failing so is refused */
    {"clBuildProgram", CL_OUT_OF_HOST_MEMORY},      /* passing: the variant is built at the next launch */
    {"clCreateKernel", CL_OUT_OF_HOST_MEMORY},
};
#define NENTRIES (sizeof entries / sizeof entries[0])

/* The count of `name` on the library's "fault: calls" line, or -1. */
static long calls_of(const char *out, const char *name)
{
    const char *line = strstr(out, "fault: calls");
    if (line == NULL)
        return -1;
    char key[64];
    snprintf(key, sizeof key, " %s=", name);
    const char *p = strstr(line, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int run_child(const char *argv0, const char *entry, long n, cl_int code, struct child_result *r)
{
    char e_entry[96], e_n[32], e_code[32];
    snprintf(e_entry, sizeof e_entry, "FAULT_ENTRY=%s", entry);
    snprintf(e_n, sizeof e_n, "FAULT_N=%ld", n);
    snprintf(e_code, sizeof e_code, "FAULT_CODE=%d", code);
    /* A paged variant whose compilation failed may be refused (nothing else may). */
    const char *env[] = {e_entry, e_n, e_code, code == CL_BUILD_PROGRAM_FAILURE ? "FAULT_REFUSAL_OK=1" : NULL, NULL};
    char *args[] = {(char *)argv0, "--child", NULL};
    return harness_spawn(args, env, 120, r);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--child"))
        return child();
    const char *only = NULL;
    long max_n = 1000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--entries") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--max-n") && i + 1 < argc)
            max_n = atol(argv[++i]);
        else
            return fprintf(stderr, "usage: %s [--entries a,b] [--max-n N]\n", argv[0]), 2;
    }
    struct child_result r;
    if (run_child(argv[0], "none", 0, 0, &r) != 0)
        return perror("spawn"), 2;
    if (r.status != 0 || strstr(r.out, "fault: calls") == NULL) {
        printf("FAIL the run without a fault (status %d)\n", r.status);
        harness_dump(r.out);
        free(r.out);
        return 1;
    }
    long counts[NENTRIES];
    for (size_t e = 0; e < NENTRIES; e++)
        counts[e] = calls_of(r.out, entries[e].name);
    free(r.out);
    int runs = 0, failed = 0, errored = 0;
    for (size_t e = 0; e < NENTRIES; e++) {
        if (!harness_selected(only, entries[e].name))
            continue;
        printf("%s: %ld calls without a fault; each fails with %s\n", entries[e].name, counts[e],
               cl_status_name(entries[e].code));
        for (long n = 1; n <= counts[e] && n <= max_n; n++) {
            if (run_child(argv[0], entries[e].name, n, entries[e].code, &r) != 0)
                return perror("spawn"), 2;
            runs++;
            bool hit = strstr(r.out, "fault: failed") != NULL;
            bool saw = strstr(r.out, "returned an error") != NULL && strstr(r.out, " 0 returned an error") == NULL;
            errored += saw;
            bool refused = strstr(r.out, "launch refused") != NULL;
            bool logged = strstr(r.out, "vast: error: kernel 'triple'") != NULL && strstr(r.out, "cannot be paged");
            /* a launch that failed says so: VAST's error line names the kernel */
            bool failed_launch = strstr(r.out, "step launch returned") != NULL;
            bool launch_logged = strstr(r.out, "vast: error: kernel 'triple'") != NULL;
            bool ok = r.status == 0 && (!refused || logged) && (!failed_launch || launch_logged);
            failed += !ok;
            printf("%s %s call %ld -> %s: %s%s\n", ok ? "ok  " : "FAIL", entries[e].name, n,
                   cl_status_name(entries[e].code),
                   r.status == 0 ? (refused ? (logged ? "the launch was refused at enqueue, with VAST's log line"
                                                      : "the launch was refused without VAST's log line")
                                    : failed_launch && !launch_logged ? "the launch failed without VAST's log line"
                                    : saw ? "an error reached the application, then it worked"
                                        : "VAST absorbed it, results exact")
                                 : r.status == 124 ? "hang" : r.status > 128 ? "crashed" : "wrong",
                   hit ? "" : " (the call was not made in this run)");
            if (!ok || getenv("FAULTS_VERBOSE"))
                harness_dump(r.out);
            free(r.out);
        }
    }
    printf("%d of %d faulted runs as expected (%d returned an error to the application)\n", runs - failed, runs,
           errored);
    return failed || runs == 0 ? 1 : 0;
}
