/* harness.h - what the partitioned-execution e2e programs share (tests/e2e/partition/).
 *
 * VAST reads its configuration (VAST_DEVICE_MEMORY, VAST_PAGE_SIZE) once, when it loads, so
 * every (test, budget, page size) runs in a child process: the parent re-executes itself with
 * the variables set and OCL_ICD_VENDORS pointing at a folder holding both vast.icd and PoCL's
 * icd, captures the child's stdout and stderr (VAST's log and VAST_STATS=1 lines included) and
 * judges the outcome. In the child, one process sees both platforms through the ICD loader:
 * "VAST" and PoCL ("Portable Computing Language"); the same work runs on each and the bytes
 * are compared. */
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

/* The parent's command line shared by the partition e2e programs: [--pages LIST] (only where
 * `pages` starts non-NULL: its default) [--only NAME[,NAME]] [--flip], and the vendors folder
 * from PARTITION_ICD_DIR. 0 when usable, else 2 after saying why. */
struct harness_opts {
    const char *pages, *only, *vendors;
    int flip;
};
int harness_options(int argc, char **argv, struct harness_opts *o);

/* Whether `name` is in the --only list (every name when there is none). */
bool harness_selected(const char *only, const char *name);

/* ---- child side ---- */

struct clenv {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue q;
    char name[256];
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

/* Builds and launches j on e; every buffer is read back into out[a] (malloc'ed), also after
 * a failed launch (so that "untouched" can be checked). Returns the first launch's status
 * (or the first failing one's). */
cl_int job_run(struct clenv *e, const struct job *j, unsigned char **out);

/* Compares every buffer of two runs; prints the first difference; 0 when all equal. */
int job_compare(const struct job *j, unsigned char **want, unsigned char **got, const char *what);

/* 0 when every buffer equals its initial contents. */
int job_untouched(const struct job *j, unsigned char **got);

void job_free(const struct job *j, unsigned char **out);

#endif
