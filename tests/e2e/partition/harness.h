/* harness.h - what the partitioned-execution e2e programs share (tests/e2e/partition/).
 *
 * VAST reads its configuration (VAST_DEVICE_MEMORY, VAST_PAGE_SIZE) once, when it loads, so
 * every (test, budget, page size) runs in a child process: the parent re-executes itself with
 * the variables set and OCL_ICD_VENDORS pointing at a folder holding both vast.icd and PoCL's
 * icd, captures the child's stdout and stderr (VAST's log and VAST_STATS=1 lines included) and
 * judges the outcome. In the child, one process sees both platforms through the ICD loader:
 * "VAST" and PoCL ("Portable Computing Language"); the same work runs on each and the bytes
 * are compared.
 *
 * A program is a table of cases and four callbacks (struct harness_prog): in the child, the
 * case's job (or its whole work); in the parent, its runs (budget, page size) and the judge of
 * one run's output. harness_main does the rest: command lines on both sides, the children, the
 * comparison (harness_twin_job), the verdict lines, --flip and the summary. */
#ifndef VAST_TESTS_PARTITION_HARNESS_H
#define VAST_TESTS_PARTITION_HARNESS_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- parent side ---- */

struct child_result {
    int status;   /* exit code; 128 + signal when killed; 124 on timeout */
    char *out;    /* stdout and stderr, interleaved, NUL-terminated (free it) */
};

/* Runs /proc/self/exe with argv (argv[0] included, NULL-terminated) and env ("NAME=VALUE",
 * NULL-terminated) added to the environment. 0 when it ran (whatever its status). */
int harness_spawn(char *const argv[], const char *const env[], int timeout_s, struct child_result *r);

/* Budget of `frac` of `ws` bytes: rounded down to the page size, at least one page. */
size_t harness_budget(size_t ws, size_t frac, size_t page);

/* The value of `key=` on the VAST_STATS line of `kernel` in `mode` (e.g. "partitioned"), or
 * -1 when there is no such line or key. */
long long harness_stat(const char *out, const char *kernel, const char *mode, const char *key);

/* Bytes moved host->device by the page caches (VAST_STATS pool line, "h2d_bytes=N"; older
 * format "host->device N transfers X MiB" accepted), or -1. */
long long harness_h2d_bytes(const char *out);

/* A line of `out` starting with `prefix` that contains every string of `needles` (NULL-
 * terminated), case-insensitively; NULL if none. Returns a pointer into out. */
const char *harness_find_line(const char *out, const char *prefix, const char *const needles[]);

/* True when a "vast: error:" line names `kernel` (in quotes or not) and matches the reason:
 * the words of `reason_any` (NULL-terminated; at least one must appear on the same line). A
 * line saying "not implemented" never counts: that is the refusal from before issue 5. */
bool harness_refusal_logged(const char *out, const char *kernel, const char *const reason_any[]);

/* Prints `out` indented, for a failure report. */
void harness_dump(const char *out);

/* A kernel the translator refuses (a packed member's read-modify-write, which never runs):
 * unpageable(in, out, __local tmp) computes out[i] = in[i] * 2 + 1. As a string literal, so a
 * program can append kernels of its own. */
#define HARNESS_SRC_UNPAGEABLE                                                                  \
    "typedef struct __attribute__((packed)) { uchar c; float x; } pk;\n"                       \
    "__kernel void unpageable(__global const float *in, __global float *out, __local float *tmp) {\n" \
    "  size_t i = get_global_id(0);\n"                                                          \
    "  tmp[get_local_id(0)] = in[i];\n"                                                         \
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"                                                         \
    "  out[i] = tmp[get_local_id(0)] * 2.0f + 1.0f;\n"                                          \
    "  if (i == (size_t)-1) ((__global pk *)out)->x += 1.0f;\n"                                 \
    "}\n"

/* The parent's command line shared by the partition e2e programs: [--pages LIST] and
 * [--fractions LIST] (each only where it starts non-NULL: its default), [--only NAME[,NAME]]
 * (or --case), [--flip], and the vendors folder from PARTITION_ICD_DIR (the real platform, "Portable"
 * unless PARTITION_REAL_PLATFORM names another, e.g. NVIDIA CUDA). 0 when usable, else 2
 * after saying why. */
struct harness_opts {
    const char *pages, *fractions, *only, *vendors;
    int flip;
};
int harness_options(int argc, char **argv, struct harness_opts *o);

/* Whether `name` is in the comma-separated list `only` (every name when there is none). */
bool harness_selected(const char *only, const char *name);

/* The sizes of a comma-separated list with K/M/G suffixes ("4K,64K"), at most `max`; returns
 * how many. */
size_t harness_sizes(const char *list, size_t *out, size_t max);

/* One run of a case in its own child: `prog --child NAME [ARG] FLIP` with OCL_ICD_VENDORS,
 * VAST_STATS=1 and these settings in its environment. */
struct harness_run {
    const char *name;    /* the case: the child's argv[2] */
    char arg[32];        /* one more argument for the child, before the flip flag ("": none) */
    size_t budget, page; /* VAST_DEVICE_MEMORY, VAST_PAGE_SIZE (0: VAST's own choice) */
    int forced;          /* VAST_FORCE_PAGED */
    bool quiet;          /* without VAST_LOG=info */
    int timeout_s;       /* 0: 300 */
    size_t ws, frac;     /* for the judge: the case's data, the fraction of it that is the budget */
    const char *env;     /* one more "NAME=VALUE" for the child (NULL: none) */
};

/* What the parent keeps from run to run: the program, the vendors folder, --flip, the
 * environment variable that asks for every child's output (NULL: PARTITION_VERBOSE) and the
 * counts. */
struct harness_parent {
    const char *argv0, *vendors, *verbose;
    int flip;
    int run, passed;
};

/* Runs the child of `run`; 0 when it ran (free r->out), -1 after saying why when it could not
 * be started. */
int harness_run_child(const struct harness_parent *p, const struct harness_run *run, struct child_result *r);

/* The verdict on one run, one line: "ok  " or "FAIL", the run's description (fmt), then why
 * it failed or, under --flip, whether the child caught the flipped byte (a "differs at byte"
 * line and a non-zero exit status; a refusal that HX_RUNS_OR_REFUSED allows passes). A child
 * that did not exit 0 fails whatever `why` says. Dumps the child's output on failure or when
 * the variable p->verbose names is set; counts the run, frees r->out. 1 when as expected. */
int harness_verdict(struct harness_parent *p, struct child_result *r, const char *why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prints "PASSED/RUN <noun> as expected"; the exit status: 0 when some ran and all passed. */
int harness_summary(const struct harness_parent *p, const char *noun);

/* The child's command line, `prog --child NAME [ARG] FLIP` (ARG only `with_arg`): true when
 * argv is one; then sets name, arg (when with_arg) and flip, and line-buffers stdout. */
bool harness_child_args(int argc, char **argv, bool with_arg, const char **name, const char **arg, int *flip);

/* A child asked for a case it does not have: says so; the exit status. */
int harness_unknown(const char *name);


/* ---- child side ---- */

struct clenv {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue q;
    char name[256];
    cl_int enqueued; /* job_run: what clEnqueueNDRangeKernel itself returned (the first failure) */
};

/* Opens the first platform whose name starts with `prefix` ("VAST", "Portable"). Exits with
 * status 3 and a message when there is none. */
void clenv_open(struct clenv *e, const char *prefix);
void clenv_close(struct clenv *e);

/* Builds a program; exits 3 with the build log on failure. */
cl_program clenv_build(struct clenv *e, const char *src, const char *options);

/* Buffer with initial contents (n bytes, copied). */
cl_mem clenv_buffer(struct clenv *e, size_t n, const void *init);
/* Reads n bytes back (blocking). Returns the OpenCL status. */
cl_int clenv_read(struct clenv *e, cl_mem m, size_t n, void *dst);

const char *cl_status_name(cl_int err);

#define CL_OK(call)                                                                                \
    do {                                                                                           \
        cl_int err_ = (call);                                                                      \
        if (err_ != CL_SUCCESS) {                                                                  \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,             \
                    cl_status_name(err_), err_);                                                   \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

/* xorshift64 */
static inline uint64_t harness_rand(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* First differing byte of two buffers, or (size_t)-1 when equal. */
size_t harness_first_diff(const void *a, const void *b, size_t n);

/* Compares what PoCL and VAST read back for case `name`; prints where and how much they
 * differ ("differs at byte"). 0 when equal. */
int harness_compare_bytes(const char *name, const unsigned char *want, size_t nwant, const unsigned char *got,
                          size_t ngot);

/* Seeded inputs and poisoned outputs (malloc'ed): n random 32-bit words (below mod unless it
 * is 0), n floats in [-1, 1), `bytes` bytes of 0xA5. */
void *harness_rnd_u32(uint64_t *seed, size_t n, uint32_t mod);
void *harness_rnd_f32(uint64_t *seed, size_t n);
void *harness_poison(size_t bytes);

/* Size from text with K/M/G suffix (binary); 0 on error. */
size_t harness_parse_size(const char *s);


/* ---- one kernel launch (or several) on one platform ---- */

enum { JA_BUF, JA_SCALAR, JA_LOCAL };
struct jarg {
    int kind;
    size_t bytes;      /* buffer size, scalar size or __local size */
    const void *data;  /* JA_BUF: initial contents (NULL: zeros); JA_SCALAR: the value */
};
struct job {
    const char *src, *options, *kernel;
    cl_uint dim;
    size_t global[3], local[3], offset[3];
    bool has_local, has_offset;
    unsigned launches; /* 0 = 1 */
    unsigned nargs;
    struct jarg args[12];
};

#define BUF(n, p) ((struct jarg){JA_BUF, (n), (p)})
#define SCAL(v) ((struct jarg){JA_SCALAR, sizeof(v), &(v)})

/* Builds and launches j on e; every buffer is read back into out[a] (malloc'ed), also after
 * a failed launch (so that "untouched" can be checked). Returns the first launch's status
 * (or the first failing one's). */
cl_int job_run(struct clenv *e, const struct job *j, unsigned char **out);

/* Compares every buffer of two runs; prints the first difference; 0 when all equal. */
int job_compare(const struct job *j, unsigned char **want, unsigned char **got, const char *what);

/* 0 when every buffer equals its initial contents. */
int job_untouched(const struct job *j, unsigned char **got);

void job_free(const struct job *j, unsigned char **out);

/* The bytes of j's buffers; frees the initial contents of its buffers. */
size_t job_ws(const struct job *j);
void job_free_inputs(struct job *j);

/* What a child expects of VAST's launch: it runs (the same bytes as PoCL), it is refused
 * (CL_OUT_OF_RESOURCES, every buffer untouched; PoCL is not asked), refused by
 * clEnqueueNDRangeKernel itself (HX_REFUSED_AT_ENQUEUE: not later through the launch's event
 * or the next blocking call), or either (the child then prints "NAME: refused" when it was). */
enum harness_expect { HX_RUNS, HX_REFUSED, HX_RUNS_OR_REFUSED, HX_REFUSED_AT_ENQUEUE };

/* The child's work for one job: j on PoCL and on VAST, judged as `expect` says, then `check`
 * (a CPU reference over VAST's buffers; NULL: none). With flip, one byte of VAST's largest
 * buffer is flipped before the comparison, which must then fail. The child's exit status:
 * 0 as expected, 1 not, 3 when PoCL itself failed. j's inputs stay (job_free_inputs). */
int harness_twin_job(const char *name, const struct job *j, enum harness_expect expect, int flip,
                     int (*check)(const struct job *j, unsigned char **out));

/* ---- a whole program ---- */

/* What a child runs for a case that is one job: the job, what VAST must do with it and a CPU
 * check over VAST's buffers (NULL: none). */
struct harness_twin {
    struct job job;
    enum harness_expect expect;
    int (*check)(const struct job *j, unsigned char **out);
};

/* A partition e2e program: its table of cases (each case a struct whose first member is its
 * name, const char *) and what it does with one case on either side. */
struct harness_prog {
    const void *cases;
    size_t ncases, case_size;
    const char *noun;         /* what the summary counts: "runs", "cases" */
    struct harness_opts opts; /* the defaults of --pages and --fractions (NULL: not taken) */
    bool child_arg;           /* the child takes ARG */
    /* In the child, a case that is one job: fills tw (zeroed: HX_RUNS, no check) ... */
    void (*make)(const void *c, const char *arg, struct harness_twin *tw);
    /* ... or, where make is NULL, the case's whole work: its exit status. */
    int (*child)(const void *c, const char *arg, int flip);
    /* In the parent: the runs of one selected case, at most `max` (each in its own child);
     * -1 when the case cannot run (it said why: counted as one failed run). */
    int (*runs)(const void *c, const struct harness_opts *o, struct harness_run *out, size_t max);
    /* The judge of one run: what the child's output must show (VAST_STATS, VAST's log) besides
     * its exit status, written to why ("" when all of it); describes the run in what. */
    void (*judge)(const void *c, const struct harness_run *run, const char *out, char *why, size_t nwhy, char *what,
                  size_t nwhat);
};

/* The whole program, child or parent as argv says; its exit status. */
int harness_main(int argc, char **argv, const struct harness_prog *prog);

#endif
