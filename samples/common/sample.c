/* samples/common/sample.c: command line, device choice, RNG, hash, timer and report shared
 * by the samples (see sample.h). Everything here is plain OpenCL through the ICD loader. */
#include "sample.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PLATFORMS 64
#define MAX_DEVICES 64
#define MAX_MISMATCHES_SHOWN 10

const char *sample_cl_error_name(cl_int err)
{
    switch (err) {
#define NAME(code) case code: return #code;
    NAME(CL_SUCCESS) NAME(CL_DEVICE_NOT_FOUND) NAME(CL_DEVICE_NOT_AVAILABLE)
    NAME(CL_COMPILER_NOT_AVAILABLE) NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    NAME(CL_OUT_OF_RESOURCES) NAME(CL_OUT_OF_HOST_MEMORY) NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    NAME(CL_MEM_COPY_OVERLAP) NAME(CL_IMAGE_FORMAT_MISMATCH) NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    NAME(CL_BUILD_PROGRAM_FAILURE) NAME(CL_MAP_FAILURE) NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) NAME(CL_COMPILE_PROGRAM_FAILURE)
    NAME(CL_LINKER_NOT_AVAILABLE) NAME(CL_LINK_PROGRAM_FAILURE) NAME(CL_DEVICE_PARTITION_FAILED)
    NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) NAME(CL_INVALID_VALUE) NAME(CL_INVALID_DEVICE_TYPE)
    NAME(CL_INVALID_PLATFORM) NAME(CL_INVALID_DEVICE) NAME(CL_INVALID_CONTEXT)
    NAME(CL_INVALID_QUEUE_PROPERTIES) NAME(CL_INVALID_COMMAND_QUEUE) NAME(CL_INVALID_HOST_PTR)
    NAME(CL_INVALID_MEM_OBJECT) NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    NAME(CL_INVALID_IMAGE_SIZE) NAME(CL_INVALID_SAMPLER) NAME(CL_INVALID_BINARY)
    NAME(CL_INVALID_BUILD_OPTIONS) NAME(CL_INVALID_PROGRAM) NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    NAME(CL_INVALID_KERNEL_NAME) NAME(CL_INVALID_KERNEL_DEFINITION) NAME(CL_INVALID_KERNEL)
    NAME(CL_INVALID_ARG_INDEX) NAME(CL_INVALID_ARG_VALUE) NAME(CL_INVALID_ARG_SIZE)
    NAME(CL_INVALID_KERNEL_ARGS) NAME(CL_INVALID_WORK_DIMENSION) NAME(CL_INVALID_WORK_GROUP_SIZE)
    NAME(CL_INVALID_WORK_ITEM_SIZE) NAME(CL_INVALID_GLOBAL_OFFSET)
    NAME(CL_INVALID_EVENT_WAIT_LIST) NAME(CL_INVALID_EVENT) NAME(CL_INVALID_OPERATION)
    NAME(CL_INVALID_GL_OBJECT) NAME(CL_INVALID_BUFFER_SIZE) NAME(CL_INVALID_MIP_LEVEL)
    NAME(CL_INVALID_GLOBAL_WORK_SIZE) NAME(CL_INVALID_PROPERTY) NAME(CL_INVALID_IMAGE_DESCRIPTOR)
    NAME(CL_INVALID_COMPILER_OPTIONS) NAME(CL_INVALID_LINKER_OPTIONS)
    NAME(CL_INVALID_DEVICE_PARTITION_COUNT) NAME(CL_INVALID_PIPE_SIZE)
    NAME(CL_INVALID_DEVICE_QUEUE) NAME(CL_INVALID_SPEC_ID) NAME(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
    NAME(CL_PLATFORM_NOT_FOUND_KHR)
#undef NAME
    default: return "unknown OpenCL error";
    }
}

void sample_check_cl(cl_int err, const char *what, const char *file, int line)
{
    if (err == CL_SUCCESS)
        return;
    fprintf(stderr, "error: %s failed: %s (%d) at %s:%d\n", what, sample_cl_error_name(err),
            (int)err, file, line);
    printf("SETUP ERROR\n");
    exit(2);
}

static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (try --help)\n");
    exit(2);
}

static bool parse_size(const char *text, size_t *out)
{
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || end == text || text[0] == '-')
        return false;
    unsigned long long mul = 1;
    if (*end) {
        bool binary = end[1] == 'i';
        unsigned long long base = binary ? 1024ULL : 1000ULL;
        switch (end[0]) {
        case 'k': case 'K': mul = base; break;
        case 'M': case 'm': mul = base * base; break;
        case 'G': case 'g': mul = base * base * base; break;
        case 'T': case 't': mul = base * base * base * base; break;
        default: return false;
        }
        if (end[1 + binary] != '\0')
            return false;
    }
    if (mul != 1 && v > SIZE_MAX / mul)
        return false;
    *out = (size_t)(v * mul);
    return true;
}

static void print_usage(const char *prog, const char *summary, const struct sample_args *a,
                        const struct sample_size_flag *flags, size_t nflags, bool partitioned)
{
    printf("%s: %s\n\nusage: %s [options]\n", prog, summary, prog);
    for (size_t i = 0; i < nflags; i++)
        printf("  %s%s%s N   %s (default %zu)\n", flags[i].name, flags[i].alias ? ", " : "",
               flags[i].alias ? flags[i].alias : "", flags[i].help, *flags[i].value);
    printf("  --platform N|NAME   platform index or case-insensitive name/vendor substring\n"
           "                      (default: $VAST_SAMPLE_PLATFORM, else 0)\n"
           "  --device N          device index within the platform (default 0)\n"
           "  --seed N            input seed (default %" PRIu64 ")\n"
           "  --iterations N      repetitions of the timed work (default %u)\n"
           "  --check full|sample verify every output or a random sample (default: full when small)\n",
           a->seed, a->iterations);
    if (partitioned)
        printf("  --partitioned       hand-partitioned, double-buffered version (two queues)\n"
               "  --chunk N           partitioned: elements/rows per chunk (default: from device memory)\n");
    printf("Sizes take k, M, G (x1000) and Ki, Mi, Gi (x1024) suffixes.\n"
           "Prints PASS/FAIL, the time and 'hash: <FNV-1a of the output>'; exit 0 PASS, 1 FAIL, 2 error.\n");
}

void sample_parse_count(int argc, char **argv, const char *summary, struct sample_args *args, size_t *n,
                        const char *what)
{
    const struct sample_size_flag flags[] = {{"--size", "-n", n, what}};
    sample_parse_args(argc, argv, summary, args, flags, 1, false);
}

void sample_parse_count_partitioned(int argc, char **argv, const char *summary, struct sample_args *args,
                                    size_t *n, const char *what)
{
    const struct sample_size_flag flags[] = {{"--size", "-n", n, what}};
    sample_parse_args(argc, argv, summary, args, flags, 1, true);
}

void sample_set_args(cl_kernel kernel, cl_uint first, cl_uint n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (cl_uint i = 0; i < n; i++) {
        size_t size = va_arg(ap, size_t);
        const void *value = va_arg(ap, const void *);
        CL_CHECK(clSetKernelArg(kernel, first + i, size, value));
    }
    va_end(ap);
}

void sample_launch_1d(cl_command_queue queue, cl_kernel kernel, size_t n, size_t local, unsigned iterations)
{
    size_t global = sample_round_up(n, local);
    for (unsigned it = 0; it < iterations; it++)
        CL_CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
}

void sample_parse_args(int argc, char **argv, const char *summary, struct sample_args *a,
                       const struct sample_size_flag *flags, size_t nflags,
                       bool offers_partitioned)
{
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep stdout and stderr in order when captured */
    a->platform = getenv("VAST_SAMPLE_PLATFORM");
    a->device = 0;
    if (!a->seed)
        a->seed = 1;
    if (!a->iterations)
        a->iterations = 1;
    a->check = SAMPLE_CHECK_AUTO;
    a->partitioned = false;
    a->chunk = 0;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
            print_usage(prog, summary, a, flags, nflags, offers_partitioned);
            exit(0);
        }
        if (offers_partitioned && !strcmp(opt, "--partitioned")) {
            a->partitioned = true;
            continue;
        }
        if (i + 1 >= argc)
            die_usage("unknown option or missing value: %s", opt);
        const char *val = argv[++i];
        size_t n = 0;
        bool matched = false;
        for (size_t f = 0; f < nflags && !matched; f++) {
            if (strcmp(opt, flags[f].name) && !(flags[f].alias && !strcmp(opt, flags[f].alias)))
                continue;
            if (!parse_size(val, flags[f].value) || *flags[f].value == 0)
                die_usage("bad size: %s", val);
            matched = true;
        }
        if (matched)
            continue;
        if (!strcmp(opt, "--platform")) {
            a->platform = val;
        } else if (!strcmp(opt, "--device")) {
            if (!parse_size(val, &n) || n >= MAX_DEVICES)
                die_usage("bad device index: %s", val);
            a->device = (unsigned)n;
        } else if (!strcmp(opt, "--seed")) {
            if (!parse_size(val, &n))
                die_usage("bad seed: %s", val);
            a->seed = n;
        } else if (!strcmp(opt, "--iterations")) {
            if (!parse_size(val, &n) || n == 0 || n > 1000000)
                die_usage("bad iteration count: %s", val);
            a->iterations = (unsigned)n;
        } else if (!strcmp(opt, "--check")) {
            if (!strcmp(val, "full"))
                a->check = SAMPLE_CHECK_FULL;
            else if (!strcmp(val, "sample"))
                a->check = SAMPLE_CHECK_SAMPLE;
            else
                die_usage("--check takes full or sample, not %s", val);
        } else if (offers_partitioned && !strcmp(opt, "--chunk")) {
            if (!parse_size(val, &a->chunk) || a->chunk == 0)
                die_usage("bad chunk: %s", val);
        } else {
            die_usage("unknown option: %s", opt);
        }
    }
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] && tolower((unsigned char)hay[k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return true;
    }
    return n == 0;
}

static void platform_string(cl_platform_id p, cl_platform_info what, char *buf, size_t len)
{
    buf[0] = '\0';
    if (clGetPlatformInfo(p, what, len, buf, NULL) != CL_SUCCESS)
        buf[0] = '\0';
    buf[len - 1] = '\0';
}

/* Index, else a name match, else a vendor match: "--platform pocl" finds PoCL by its vendor
 * ("The pocl project"); a name match wins so that a wrapper whose vendor string mentions the
 * platform it wraps is not picked by mistake. */
static cl_platform_id find_platform(const char *want)
{
    cl_platform_id ids[MAX_PLATFORMS];
    cl_uint count = 0;
    cl_int err = clGetPlatformIDs(MAX_PLATFORMS, ids, &count);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && count == 0)) {
        fprintf(stderr, "error: no OpenCL platform found\n");
        printf("SETUP ERROR\n");
        exit(2);
    }
    CL_CHECK_ERR(err, "clGetPlatformIDs");
    if (count > MAX_PLATFORMS)
        count = MAX_PLATFORMS;
    if (!want || !*want)
        want = "0";
    char *end = NULL;
    unsigned long idx = strtoul(want, &end, 10);
    if (end != want && *end == '\0') {
        if (idx < count)
            return ids[idx];
    } else {
        char buf[1024];
        for (int pass = 0; pass < 2; pass++)
            for (cl_uint i = 0; i < count; i++) {
                platform_string(ids[i], pass ? CL_PLATFORM_VENDOR : CL_PLATFORM_NAME, buf, sizeof buf);
                if (contains_nocase(buf, want))
                    return ids[i];
            }
    }
    fprintf(stderr, "error: no platform matches '%s'; platforms:\n", want);
    for (cl_uint i = 0; i < count; i++) {
        char name[512], vendor[512];
        platform_string(ids[i], CL_PLATFORM_NAME, name, sizeof name);
        platform_string(ids[i], CL_PLATFORM_VENDOR, vendor, sizeof vendor);
        fprintf(stderr, "  %u: %s (%s)\n", i, name, vendor);
    }
    printf("SETUP ERROR\n");
    exit(2);
}

void sample_select_device(const struct sample_args *args, cl_platform_id *platform,
                          cl_device_id *device)
{
    cl_platform_id p = find_platform(args->platform);
    cl_device_id ids[MAX_DEVICES];
    cl_uint count = 0;
    CL_CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &count));
    if (args->device >= count) {
        fprintf(stderr, "error: device %u does not exist (platform has %u)\n", args->device, count);
        printf("SETUP ERROR\n");
        exit(2);
    }
    char name[1024];
    platform_string(p, CL_PLATFORM_NAME, name, sizeof name);
    printf("platform: %s\n", name);
    name[0] = '\0';
    CL_CHECK(clGetDeviceInfo(ids[args->device], CL_DEVICE_NAME, sizeof name, name, NULL));
    name[sizeof name - 1] = '\0';
    printf("device: %s\n", name);
    *platform = p;
    *device = ids[args->device];
}

cl_program sample_build_program(cl_context context, cl_device_id device, const char *source,
                                const char *options)
{
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    CL_CHECK_ERR(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t len = 0;
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char *log = sample_alloc(len + 1);
        log[0] = '\0';
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        log[len] = '\0';
        fprintf(stderr, "build log:\n%s\n", log);
        free(log);
        clReleaseProgram(program);
        CL_CHECK_ERR(err, "clBuildProgram");
    }
    return program;
}

cl_context sample_context(cl_platform_id platform, cl_device_id device)
{
    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_context context = clCreateContext(props, 1, &device, NULL, NULL, &err);
    CL_CHECK_ERR(err, "clCreateContext");
    return context;
}

cl_command_queue sample_queue(cl_context context, cl_device_id device)
{
    cl_int err = CL_SUCCESS;
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CL_CHECK_ERR(err, "clCreateCommandQueue");
    return queue;
}

cl_mem sample_buffer(cl_context context, cl_mem_flags flags, size_t bytes, const char *what)
{
    cl_int err = CL_SUCCESS;
    cl_mem buffer = clCreateBuffer(context, flags, bytes, NULL, &err);
    CL_CHECK_ERR(err, what);
    return buffer;
}

cl_kernel sample_kernel(cl_program program, const char *name)
{
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, name, &err);
    if (err != CL_SUCCESS)
        fprintf(stderr, "kernel: %s\n", name);
    CL_CHECK_ERR(err, "clCreateKernel");
    return kernel;
}

void sample_poison(cl_command_queue queue, cl_mem buffer, size_t bytes, cl_uint pattern)
{
    CL_CHECK(clEnqueueFillBuffer(queue, buffer, &pattern, sizeof pattern, 0, bytes, 0, NULL, NULL));
}

void *sample_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "error: out of host memory allocating %zu bytes\n", bytes);
        printf("SETUP ERROR\n");
        exit(2);
    }
    return p;
}

void sample_rng_init(struct sample_rng *rng, uint64_t seed, uint64_t stream)
{
    rng->state = seed * UINT64_C(0x9e3779b97f4a7c15) ^ (stream + 1) * UINT64_C(0xd1b54a32d192ed03);
}

uint64_t sample_rng_next(struct sample_rng *rng)
{
    uint64_t z = (rng->state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint32_t sample_rng_u32(struct sample_rng *rng)
{
    return (uint32_t)(sample_rng_next(rng) >> 32);
}

size_t sample_rng_below(struct sample_rng *rng, size_t bound)
{
    /* The modulo bias is below 2^-32 for every bound a sample uses. */
    return bound ? (size_t)(sample_rng_next(rng) % bound) : 0;
}

float sample_rng_float(struct sample_rng *rng, float lo, float hi)
{
    float u = (float)(sample_rng_next(rng) >> 40) * (1.0f / 16777216.0f); /* [0, 1) exactly */
    return lo + (hi - lo) * u;
}

struct fill_part {
    float *out;
    size_t first, end;
    uint64_t seed, stream;
    float lo, hi;
};

static void *fill_part(void *arg)
{
    struct fill_part *f = arg;
    struct sample_rng rng;
    sample_rng_init(&rng, f->seed, f->stream);
    rng.state += (uint64_t)f->first * UINT64_C(0x9e3779b97f4a7c15); /* as sample_float_at */
    for (size_t i = f->first; i < f->end; i++)
        f->out[i] = sample_rng_float(&rng, f->lo, f->hi);
    return NULL;
}

/* The generator jumps to any index, so large arrays are filled by one thread per core (the
 * same values: an array of hundreds of GiB takes minutes on one). */
void sample_fill_float(float *out, size_t n, uint64_t seed, uint64_t stream, float lo, float hi)
{
    enum { MAX_THREADS = 64 };
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = n < ((size_t)1 << 24) || cores < 2 ? 1 : cores < MAX_THREADS ? (size_t)cores : MAX_THREADS;
    struct fill_part parts[MAX_THREADS];
    pthread_t threads[MAX_THREADS];
    size_t started = 0;
    for (size_t t = 0; t < nt; t++) {
        parts[t] = (struct fill_part){out, n * t / nt, n * (t + 1) / nt, seed, stream, lo, hi};
        if (t == 0 || pthread_create(&threads[t], NULL, fill_part, &parts[t]) != 0)
            fill_part(&parts[t]); /* the first part, or one no thread took: here */
        else
            started |= (size_t)1 << t;
    }
    for (size_t t = 1; t < nt; t++)
        if (started & (size_t)1 << t)
            pthread_join(threads[t], NULL);
}

float sample_float_at(uint64_t seed, uint64_t stream, size_t index, float lo, float hi)
{
    struct sample_rng rng;
    sample_rng_init(&rng, seed, stream);
    rng.state += (uint64_t)index * UINT64_C(0x9e3779b97f4a7c15);
    return sample_rng_float(&rng, lo, hi);
}

uint64_t sample_fnv1a(uint64_t hash, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++) {
        hash ^= p[i];
        hash *= UINT64_C(0x100000001b3);
    }
    return hash;
}

double sample_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sample_checker_init(struct sample_checker *c, const struct sample_args *args, size_t total,
                         size_t full_limit, size_t samples)
{
    c->full = args->check == SAMPLE_CHECK_FULL ||
              (args->check == SAMPLE_CHECK_AUTO && total <= full_limit);
    c->total = total;
    c->count = c->full ? total : (samples < total ? samples : total);
    c->done = 0;
    sample_rng_init(&c->rng, args->seed, 0xc4ec4);
    printf("check: %s (%zu of %zu outputs)\n", c->full ? "full" : "sample", c->count, total);
}

bool sample_checker_next(struct sample_checker *c, size_t *index)
{
    if (c->done >= c->count)
        return false;
    /* A sample always includes the first and the last output, where edge bugs live. */
    if (c->full || c->done == 0)
        *index = c->done;
    else if (c->done == 1)
        *index = c->total - 1;
    else
        *index = sample_rng_below(&c->rng, c->total);
    c->done++;
    return true;
}

void sample_report_mismatch(size_t *errors, const char *fmt, ...)
{
    if (*errors < MAX_MISMATCHES_SHOWN) {
        va_list ap;
        va_start(ap, fmt);
        printf("mismatch: ");
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
    }
    ++*errors;
}

size_t sample_chunk_elements(cl_device_id device, const struct sample_args *args, size_t n,
                             size_t bytes_per_element, size_t max_elem_bytes, size_t reserved,
                             size_t multiple)
{
    size_t chunk;
    if (args->chunk) {
        chunk = args->chunk / multiple * multiple;
        if (chunk == 0)
            chunk = multiple;
    } else {
        cl_ulong mem = 0, max_alloc = 0;
        CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL));
        CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL));
        size_t usable = (size_t)(mem / 10 * 9);
        usable = usable > reserved ? usable - reserved : 0;
        chunk = usable / (2 * bytes_per_element);
        if (chunk > max_alloc / max_elem_bytes)
            chunk = (size_t)(max_alloc / max_elem_bytes);
        chunk = chunk / multiple * multiple;
        if (chunk == 0)
            chunk = multiple;
    }
    return chunk < n ? chunk : (n ? n : 1);
}

double sample_run_chunks(cl_context context, cl_device_id device, size_t n, size_t chunk,
                         const struct sample_chunk_buffer *buffers, unsigned nbuffers,
                         sample_chunk_fn enqueue, void *ctx)
{
    if (nbuffers > SAMPLE_CHUNK_MAX_BUFFERS || chunk == 0)
        CL_CHECK_ERR(CL_INVALID_VALUE, "sample_run_chunks(buffers, chunk)");
    size_t chunks = (n + chunk - 1) / chunk;
    printf("partitioned: %zu chunks of %zu elements, 2 queues\n", chunks, chunk);
    cl_command_queue q[2];
    cl_mem d[2][SAMPLE_CHUNK_MAX_BUFFERS];
    for (int k = 0; k < 2; k++) {
        q[k] = sample_queue(context, device);
        for (unsigned b = 0; b < nbuffers; b++)
            d[k][b] = sample_buffer(context, CL_MEM_READ_WRITE, chunk * buffers[b].elem_bytes,
                                    "clCreateBuffer(chunk)");
    }
    /* In-order queues: a set's next writes wait for its previous reads, so each set of
     * buffers is reused only once the chunk before has been read out of it. */
    double t0 = sample_now();
    for (size_t ch = 0; ch < chunks; ch++) {
        int k = (int)(ch % 2);
        size_t first = ch * chunk, count = n - first < chunk ? n - first : chunk;
        for (unsigned b = 0; b < nbuffers; b++)
            if (buffers[b].dir != SAMPLE_CHUNK_OUT)
                CL_CHECK(clEnqueueWriteBuffer(q[k], d[k][b], CL_FALSE, 0, count * buffers[b].elem_bytes,
                                              (char *)buffers[b].host + first * buffers[b].elem_bytes, 0,
                                              NULL, NULL));
        enqueue(q[k], d[k], first, count, ctx);
        for (unsigned b = 0; b < nbuffers; b++)
            if (buffers[b].dir != SAMPLE_CHUNK_IN)
                CL_CHECK(clEnqueueReadBuffer(q[k], d[k][b], CL_FALSE, 0, count * buffers[b].elem_bytes,
                                             (char *)buffers[b].host + first * buffers[b].elem_bytes, 0,
                                             NULL, NULL));
    }
    CL_CHECK(clFinish(q[0]));
    CL_CHECK(clFinish(q[1]));
    double seconds = sample_now() - t0;
    for (int k = 0; k < 2; k++) {
        for (unsigned b = 0; b < nbuffers; b++)
            clReleaseMemObject(d[k][b]);
        clReleaseCommandQueue(q[k]);
    }
    return seconds;
}

void sample_report_data(double bytes)
{
    printf("data: %.0f bytes\n", bytes);
}

int sample_finish(const char *name, bool pass, double seconds, uint64_t hash)
{
    printf("time: %.6f s\n", seconds);
    printf("hash: %016" PRIx64 "\n", hash);
    printf("%s\n", pass ? "PASS" : "FAIL");
    fflush(stdout);
    (void)name;
    return pass ? 0 : 1;
}
