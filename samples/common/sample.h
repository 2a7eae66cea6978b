/* samples/common: the small helper every sample shares.
 *
 * Owns what the NVIDIA SDK's oclUtils owned for its samples: the common command line
 * (--platform, --device, size flags, --seed, --iterations, --check, --partitioned), choosing
 * a platform and device by index or name, a seeded RNG, the output hash (64-bit FNV-1a), a
 * timer, OpenCL error names, the set-up calls every sample repeats (context, queue, buffer,
 * kernel, poisoned output) and the PASS/FAIL report. It hides no OpenCL that matters to what a
 * sample measures: samples still write, launch, read and release everything themselves.
 *
 * Exit codes: 0 PASS, 1 FAIL (wrong result), 2 setup error (bad argument, an OpenCL call
 * failed: the call and the error name are printed). */
#ifndef SAMPLE_H
#define SAMPLE_H

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sample_check_mode { SAMPLE_CHECK_AUTO, SAMPLE_CHECK_FULL, SAMPLE_CHECK_SAMPLE };

/* A size flag of one sample: "--size" with alias "-n", and so on. Values take the
 * suffixes k, M, G (powers of 1000) and Ki, Mi, Gi (powers of 1024). */
struct sample_size_flag {
    const char *name;
    const char *alias; /* may be NULL */
    size_t *value;     /* holds the default on entry */
    const char *help;
};

struct sample_args {
    const char *platform;    /* index or name substring; NULL: $VAST_SAMPLE_PLATFORM, else 0 */
    unsigned device;         /* index within the platform's devices */
    uint64_t seed;
    unsigned iterations;
    enum sample_check_mode check;
    bool partitioned;        /* hand-partitioned double-buffered version (where offered) */
    size_t chunk;            /* partitioned: elements/rows per chunk; 0 = derive from device memory */
};

/* Parse the command line; on --help print the usage and exit 0; on an error exit 2.
 * offers_partitioned: accept --partitioned and --chunk. */
void sample_parse_args(int argc, char **argv, const char *summary, struct sample_args *args,
                       const struct sample_size_flag *flags, size_t nflags,
                       bool offers_partitioned);

/* sample_parse_args for a sample whose one size is a count: --size/-n N (`what` N counts);
 * the _partitioned form also accepts --partitioned and --chunk. */
void sample_parse_count(int argc, char **argv, const char *summary, struct sample_args *args, size_t *n,
                        const char *what);
void sample_parse_count_partitioned(int argc, char **argv, const char *summary, struct sample_args *args,
                                    size_t *n, const char *what);

/* Choose the platform and device named by args and print "platform: <name>" and
 * "device: <name>". Exits 2 when there is no such platform or device. */
void sample_select_device(const struct sample_args *args, cl_platform_id *platform,
                          cl_device_id *device);

const char *sample_cl_error_name(cl_int err);

/* Exit 2 with "error: <what> failed: CL_... (code)" unless err is CL_SUCCESS. */
void sample_check_cl(cl_int err, const char *what, const char *file, int line);
#define CL_CHECK(call) sample_check_cl((call), #call, __FILE__, __LINE__)
#define CL_CHECK_ERR(err, what) sample_check_cl((err), (what), __FILE__, __LINE__)

/* clSetKernelArg for arguments first .. first + n - 1 from n (size_t size, const void *value)
 * pairs; exits 2 as CL_CHECK does on an error. */
void sample_set_args(cl_kernel kernel, cl_uint first, cl_uint n, ...);

/* Enqueues kernel over n work-items, rounded up to work-groups of `local`, `iterations` times. */
void sample_launch_1d(cl_command_queue queue, cl_kernel kernel, size_t n, size_t local, unsigned iterations);

/* clCreateProgramWithSource + clBuildProgram; on a build error print the log and exit 2. */
cl_program sample_build_program(cl_context context, cl_device_id device, const char *source,
                                const char *options);

/* The set-up every sample repeats, each exiting 2 with the call and error name on failure:
 * a context on `device` of `platform`, an in-order queue without properties, a buffer without
 * a host pointer (`what` names it in the message), a kernel of a built program. */
cl_context sample_context(cl_platform_id platform, cl_device_id device);
cl_command_queue sample_queue(cl_context context, cl_device_id device);
cl_mem sample_buffer(cl_context context, cl_mem_flags flags, size_t bytes, const char *what);
cl_kernel sample_kernel(cl_program program, const char *name);

/* Enqueue a fill of the first `bytes` of `buffer` with `pattern`, so that elements a kernel
 * never writes cannot pass the check (the caller waits, e.g. with clFinish). */
void sample_poison(cl_command_queue queue, cl_mem buffer, size_t bytes, cl_uint pattern);

/* The hand-partitioned ("expert") version of an element-wise sample (--partitioned): n
 * elements stream through the device in chunks over two in-order queues, each with its own
 * device buffers, so that chunk k+1's transfers overlap chunk k's kernels. Per chunk: the
 * input ranges are written, `enqueue` launches the kernels on the chunk's buffers (elements
 * first .. first + count - 1 of the whole), the output ranges are read back. */
enum sample_chunk_dir { SAMPLE_CHUNK_IN, SAMPLE_CHUNK_OUT, SAMPLE_CHUNK_INOUT };
struct sample_chunk_buffer {
    void *host;            /* the whole array on the host */
    size_t elem_bytes;     /* bytes per element */
    enum sample_chunk_dir dir;
};
typedef void (*sample_chunk_fn)(cl_command_queue queue, const cl_mem *chunk_buffers, size_t first,
                                size_t count, void *ctx);
#define SAMPLE_CHUNK_MAX_BUFFERS 8

/* Elements per chunk: args->chunk when given (rounded down to `multiple`, at least one
 * multiple), else what two sets of chunk buffers of `bytes_per_element` fit in 90% of the
 * device's memory after `reserved` bytes (and one buffer within CL_DEVICE_MAX_MEM_ALLOC_SIZE);
 * never more than n (one chunk of n elements when n is not over a chunk). */
size_t sample_chunk_elements(cl_device_id device, const struct sample_args *args, size_t n,
                             size_t bytes_per_element, size_t max_elem_bytes, size_t reserved,
                             size_t multiple);

/* Runs the chunks, prints "partitioned: <k> chunks of <c> elements, 2 queues" and returns the
 * seconds from the first write to the last read. */
double sample_run_chunks(cl_context context, cl_device_id device, size_t n, size_t chunk,
                         const struct sample_chunk_buffer *buffers, unsigned nbuffers,
                         sample_chunk_fn enqueue, void *ctx);

/* malloc that exits 2 when the host has no memory. */
void *sample_alloc(size_t bytes);

/* Seeded generator (splitmix64): the same seed gives the same inputs in every mode. */
struct sample_rng {
    uint64_t state;
};
void sample_rng_init(struct sample_rng *rng, uint64_t seed, uint64_t stream);
uint64_t sample_rng_next(struct sample_rng *rng);
uint32_t sample_rng_u32(struct sample_rng *rng);
size_t sample_rng_below(struct sample_rng *rng, size_t bound); /* uniform in [0, bound) */
float sample_rng_float(struct sample_rng *rng, float lo, float hi);
void sample_fill_float(float *out, size_t n, uint64_t seed, uint64_t stream, float lo, float hi);
/* Element `index` of what sample_fill_float(.., seed, stream, lo, hi) writes, without the array
 * (splitmix64 is counter-based): a check can regenerate an input instead of keeping a copy. */
float sample_float_at(uint64_t seed, uint64_t stream, size_t index, float lo, float hi);

/* 64-bit FNV-1a. Chain calls to hash several buffers: h = sample_fnv1a(h, p, n). */
#define SAMPLE_FNV_INIT UINT64_C(0xcbf29ce484222325)
uint64_t sample_fnv1a(uint64_t hash, const void *data, size_t bytes);

double sample_now(void); /* seconds, monotonic */

/* Which outputs to verify: every index when the check is full, else `samples` random ones.
 * AUTO means full when total <= full_limit. */
struct sample_checker {
    bool full;
    size_t total;
    size_t count;
    size_t done;
    struct sample_rng rng;
};
void sample_checker_init(struct sample_checker *c, const struct sample_args *args,
                         size_t total, size_t full_limit, size_t samples);
bool sample_checker_next(struct sample_checker *c, size_t *index);

/* Count a mismatch, printing the first few. */
void sample_report_mismatch(size_t *errors, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Print "data: <bytes> bytes": the bytes of the buffers the kernels use (the working set that
 * test scripts and the benchmark harness size device budgets by). */
void sample_report_data(double bytes);

/* Print "time: <s> s", "hash: <16 hex>" and "PASS" or "FAIL"; return the exit code. */
int sample_finish(const char *name, bool pass, double seconds, uint64_t hash);

static inline size_t sample_round_up(size_t x, size_t multiple)
{
    return (x + multiple - 1) / multiple * multiple;
}

#endif
