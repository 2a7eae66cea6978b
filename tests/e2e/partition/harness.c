/* harness.c - see harness.h. */
#include "harness.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int harness_spawn(char *const argv[], const char *const env[], int timeout_s, struct child_result *r)
{
    int fd[2];
    r->status = -1;
    r->out = NULL;
    if (pipe(fd) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[1]);
        for (size_t i = 0; env != NULL && env[i] != NULL; i++)
            putenv((char *)env[i]);
        execv("/proc/self/exe", argv);
        perror("execv /proc/self/exe");
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    time_t deadline = time(NULL) + timeout_s;
    bool timed_out = false;
    for (;;) {
        struct pollfd p = {fd[0], POLLIN, 0};
        int left = (int)(deadline - time(NULL));
        if (left <= 0 || poll(&p, 1, left * 1000) == 0) {
            kill(pid, SIGKILL); /* our own child, by its id */
            timed_out = true;
            break;
        }
        if (len + 4096 + 1 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t n = read(fd[0], buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    r->out = buf;
    if (timed_out)
        r->status = 124;
    else if (WIFEXITED(st))
        r->status = WEXITSTATUS(st);
    else
        r->status = 128 + WTERMSIG(st);
    return 0;
}

size_t harness_budget(size_t ws, size_t frac, size_t page)
{
    size_t b = ws / frac / page * page;
    return b < page ? page : b;
}

static const char *line_end(const char *p)
{
    const char *e = strchr(p, '\n');
    return e ? e : p + strlen(p);
}

/* Value of " key=" within [p, e), or -1. */
static long long kv(const char *p, const char *e, const char *key)
{
    size_t kl = strlen(key);
    for (const char *s = p; s + kl + 1 < e; s++)
        if ((s == p || s[-1] == ' ') && !strncmp(s, key, kl) && s[kl] == '=')
            return isdigit((unsigned char)s[kl + 1]) ? strtoll(s + kl + 1, NULL, 10) : -1;
    return -1;
}

static bool has_token(const char *p, const char *e, const char *key, const char *value)
{
    char want[256];
    snprintf(want, sizeof want, "%s=%s", key, value);
    size_t wl = strlen(want);
    for (const char *s = p; s + wl <= e; s++)
        if ((s == p || s[-1] == ' ') && !strncmp(s, want, wl) && (s + wl == e || s[wl] == ' ' || s[wl] == '\n'))
            return true;
    return false;
}

long long harness_stat(const char *out, const char *kernel, const char *mode, const char *key)
{
    for (const char *p = out; *p; p = *line_end(p) ? line_end(p) + 1 : line_end(p)) {
        const char *e = line_end(p);
        if (strncmp(p, "vast: stats: ", 13) != 0)
            continue;
        if (has_token(p, e, "kernel", kernel) && has_token(p, e, "mode", mode))
            return kv(p, e, key);
        /* The columnar format from before issue 5: "<kernel> <mode> <launches> <seconds>". */
        char k[256], m[32];
        unsigned long long n;
        if (!strcmp(key, "launches") && sscanf(p + 13, "%255s %31s %llu", k, m, &n) == 3 && !strcmp(k, kernel) &&
            !strcmp(m, mode))
            return (long long)n;
    }
    return -1;
}

long long harness_h2d_bytes(const char *out)
{
    long long total = -1;
    for (const char *p = out; *p; p = *line_end(p) ? line_end(p) + 1 : line_end(p)) {
        const char *e = line_end(p);
        if (strncmp(p, "vast: stats: ", 13) != 0)
            continue;
        long long v = -1;
        if (strstr(p, " pool=") != NULL && strstr(p, " pool=") < e)
            v = kv(p, e, "h2d_bytes");
        else if (strstr(p, "page cache of") != NULL && strstr(p, "page cache of") < e) {
            /* before issue 5: "host->device N transfers X MiB" */
            const char *h = strstr(p, "host->device ");
            unsigned long long n;
            double mib;
            if (h != NULL && h < e && sscanf(h, "host->device %llu transfers %lf MiB", &n, &mib) == 2)
                v = (long long)(mib * 1048576.0 + 0.5);
        }
        if (v >= 0)
            total = (total < 0 ? 0 : total) + v;
    }
    return total;
}

static bool contains_ci(const char *p, const char *e, const char *needle)
{
    size_t nl = strlen(needle);
    for (const char *s = p; s + nl <= e; s++)
        if (!strncasecmp(s, needle, nl))
            return true;
    return false;
}

const char *harness_find_line(const char *out, const char *prefix, const char *const needles[])
{
    size_t pl = strlen(prefix);
    for (const char *p = out; *p; p = *line_end(p) ? line_end(p) + 1 : line_end(p)) {
        const char *e = line_end(p);
        if (strncmp(p, prefix, pl) != 0)
            continue;
        bool all = true;
        for (size_t i = 0; needles[i] != NULL && all; i++)
            all = contains_ci(p, e, needles[i]);
        if (all)
            return p;
    }
    return NULL;
}

bool harness_refusal_logged(const char *out, const char *kernel, const char *const reason_any[])
{
    for (const char *p = out; *p; p = *line_end(p) ? line_end(p) + 1 : line_end(p)) {
        const char *e = line_end(p);
        if (strncmp(p, "vast: error: ", 13) != 0 || !contains_ci(p, e, kernel) ||
            contains_ci(p, e, "not implemented"))
            continue;
        for (size_t i = 0; reason_any[i] != NULL; i++)
            if (contains_ci(p, e, reason_any[i]))
                return true;
    }
    return false;
}

void harness_dump(const char *out)
{
    const char *p = out;
    while (*p) {
        const char *e = line_end(p);
        printf("    | %.*s\n", (int)(e - p), p);
        p = *e ? e + 1 : e;
    }
}

void clenv_open(struct clenv *e, const char *prefix)
{
    cl_platform_id ps[16];
    cl_uint n = 0;
    cl_int err = clGetPlatformIDs(16, ps, &n);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "clGetPlatformIDs failed: %s\n", cl_status_name(err));
        exit(3);
    }
    memset(e, 0, sizeof *e);
    for (cl_uint i = 0; i < n && i < 16; i++) {
        char name[256] = "";
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (!strncmp(name, prefix, strlen(prefix))) {
            e->platform = ps[i];
            snprintf(e->name, sizeof e->name, "%s", name);
            break;
        }
    }
    if (e->platform == NULL) {
        fprintf(stderr, "no platform named '%s*' among %u (OCL_ICD_VENDORS=%s)\n", prefix, n,
                getenv("OCL_ICD_VENDORS") ? getenv("OCL_ICD_VENDORS") : "(unset)");
        exit(3);
    }
    CL_OK(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 1, &e->device, NULL));
    e->ctx = clCreateContext(NULL, 1, &e->device, NULL, NULL, &err);
    CL_OK(err);
    e->q = clCreateCommandQueue(e->ctx, e->device, 0, &err);
    CL_OK(err);
}

void clenv_close(struct clenv *e)
{
    clReleaseCommandQueue(e->q);
    clReleaseContext(e->ctx);
}

cl_program clenv_build(struct clenv *e, const char *src, const char *options)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
    CL_OK(err);
    if (clBuildProgram(p, 1, &e->device, options, NULL, NULL) != CL_SUCCESS) {
        static char log[65536];
        clGetProgramBuildInfo(p, e->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build on %s failed:\n%s\n", e->name, log);
        exit(3);
    }
    return p;
}

cl_mem clenv_buffer(struct clenv *e, size_t n, const void *init)
{
    cl_int err;
    cl_mem m = clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), n ? n : 1,
                              (void *)init, &err);
    CL_OK(err);
    return m;
}

cl_int clenv_read(struct clenv *e, cl_mem m, size_t n, void *dst)
{
    return clEnqueueReadBuffer(e->q, m, CL_TRUE, 0, n, dst, 0, NULL, NULL);
}

const char *cl_status_name(cl_int err)
{
    switch (err) {
    case CL_SUCCESS: return "CL_SUCCESS";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    default: return "CL_?";
    }
}

size_t harness_first_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    if (!memcmp(x, y, n))
        return (size_t)-1;
    size_t i = 0;
    while (x[i] == y[i])
        i++;
    return i;
}

size_t harness_parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (toupper((unsigned char)*end)) {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
    }
    return *end ? 0 : (size_t)v;
}

cl_int job_run(struct clenv *e, const struct job *j, unsigned char **out)
{
    cl_program p = clenv_build(e, j->src, j->options);
    cl_int err;
    cl_kernel k = clCreateKernel(p, j->kernel, &err);
    CL_OK(err);
    cl_mem m[12] = {0};
    for (unsigned a = 0; a < j->nargs; a++) {
        const struct jarg *g = &j->args[a];
        if (g->kind == JA_BUF) {
            void *zero = g->data ? NULL : calloc(1, g->bytes);
            m[a] = clenv_buffer(e, g->bytes, g->data ? g->data : zero);
            free(zero);
            CL_OK(clSetKernelArg(k, a, sizeof m[a], &m[a]));
        } else if (g->kind == JA_SCALAR) {
            CL_OK(clSetKernelArg(k, a, g->bytes, g->data));
        } else {
            CL_OK(clSetKernelArg(k, a, g->bytes, NULL));
        }
    }
    /* A launch may fail when it is enqueued or, executed asynchronously, through its event
     * (CL_EVENT_COMMAND_EXECUTION_STATUS < 0): both count as the launch's status. */
    cl_int status = CL_SUCCESS;
    unsigned n = j->launches ? j->launches : 1;
    cl_event *ev = calloc(n, sizeof *ev);
    for (unsigned l = 0; l < n && status == CL_SUCCESS; l++)
        status = clEnqueueNDRangeKernel(e->q, k, j->dim, j->has_offset ? j->offset : NULL, j->global,
                                        j->has_local ? j->local : NULL, 0, NULL, &ev[l]);
    e->enqueued = status;
    cl_int fin = clFinish(e->q);
    for (unsigned l = 0; l < n; l++) {
        if (ev[l] == NULL)
            continue;
        cl_int es = CL_COMPLETE;
        if (clGetEventInfo(ev[l], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL) == CL_SUCCESS && es < 0 &&
            status == CL_SUCCESS)
            status = es;
        clReleaseEvent(ev[l]);
    }
    free(ev);
    if (status == CL_SUCCESS)
        status = fin;
    for (unsigned a = 0; a < j->nargs; a++) {
        out[a] = NULL;
        if (m[a] == NULL)
            continue;
        out[a] = malloc(j->args[a].bytes);
        memset(out[a], 0x5c, j->args[a].bytes);
        CL_OK(clenv_read(e, m[a], j->args[a].bytes, out[a]));
        clReleaseMemObject(m[a]);
    }
    clReleaseKernel(k);
    clReleaseProgram(p);
    return status;
}

int job_compare(const struct job *j, unsigned char **want, unsigned char **got, const char *what)
{
    for (unsigned a = 0; a < j->nargs; a++) {
        if (j->args[a].kind != JA_BUF)
            continue;
        size_t d = harness_first_diff(want[a], got[a], j->args[a].bytes);
        if (d != (size_t)-1) {
            printf("  %s: %s: argument %u (%zu bytes) differs at byte %zu: 0x%02x, expected 0x%02x\n",
                   j->kernel, what, a, j->args[a].bytes, d, got[a][d], want[a][d]);
            return 1;
        }
    }
    return 0;
}

int job_untouched(const struct job *j, unsigned char **got)
{
    for (unsigned a = 0; a < j->nargs; a++) {
        if (j->args[a].kind != JA_BUF)
            continue;
        unsigned char *init = j->args[a].data ? NULL : calloc(1, j->args[a].bytes);
        const unsigned char *want = j->args[a].data ? j->args[a].data : init;
        size_t d = harness_first_diff(want, got[a], j->args[a].bytes);
        free(init);
        if (d != (size_t)-1) {
            printf("  %s: argument %u was modified by a refused launch (byte %zu)\n", j->kernel, a, d);
            return 1;
        }
    }
    return 0;
}

void job_free(const struct job *j, unsigned char **out)
{
    for (unsigned a = 0; a < j->nargs; a++)
        free(out[a]), out[a] = NULL;
}

int harness_options(int argc, char **argv, struct harness_opts *o)
{
    bool takes_pages = o->pages != NULL, takes_fractions = o->fractions != NULL;
    for (int i = 1; i < argc; i++) {
        if (takes_pages && !strcmp(argv[i], "--pages") && i + 1 < argc)
            o->pages = argv[++i];
        else if (takes_fractions && !strcmp(argv[i], "--fractions") && i + 1 < argc)
            o->fractions = argv[++i];
        else if ((!strcmp(argv[i], "--only") || !strcmp(argv[i], "--case")) && i + 1 < argc)
            o->only = argv[++i];
        else if (!strcmp(argv[i], "--flip"))
            o->flip = 1;
        else
            return fprintf(stderr, "usage: %s %s%s[--only NAME[,NAME]] [--flip]\n", argv[0],
                           takes_pages ? "[--pages 4K,64K] " : "", takes_fractions ? "[--fractions 2,4,16] " : ""),
                   2;
    }
    o->vendors = getenv("PARTITION_ICD_DIR");
    if (o->vendors == NULL)
        return fprintf(stderr, "PARTITION_ICD_DIR (a folder with vast.icd and PoCL's icd) is not set\n"), 2;
    return 0;
}

bool harness_selected(const char *only, const char *name)
{
    if (only == NULL)
        return true;
    char list[512], key[128];
    snprintf(list, sizeof list, ",%s,", only);
    snprintf(key, sizeof key, ",%s,", name);
    return strstr(list, key) != NULL;
}

size_t harness_sizes(const char *list, size_t *out, size_t max)
{
    char copy[256];
    size_t n = 0;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save, *p = strtok_r(copy, ",", &save); p != NULL && n < max; p = strtok_r(NULL, ",", &save))
        out[n++] = harness_parse_size(p);
    return n;
}

int harness_run_child(const struct harness_parent *p, const struct harness_run *run, struct child_result *r)
{
    char e_mem[64], e_page[64], e_forced[32], e_icd[1024], flipped[2] = {(char)('0' + p->flip), 0};
    snprintf(e_mem, sizeof e_mem, "VAST_DEVICE_MEMORY=%zu", run->budget);
    snprintf(e_page, sizeof e_page, "VAST_PAGE_SIZE=%zu", run->page);
    snprintf(e_forced, sizeof e_forced, "VAST_FORCE_PAGED=%d", run->forced);
    snprintf(e_icd, sizeof e_icd, "OCL_ICD_VENDORS=%s", p->vendors);
    const char *env[] = {e_mem, e_page, e_forced, e_icd, "VAST_STATS=1", run->env, run->quiet ? NULL : "VAST_LOG=info",
                         NULL};
    if (run->env == NULL) { /* the list ends at the first NULL */
        env[5] = env[6];
        env[6] = NULL;
    }
    char *args[] = {(char *)p->argv0, "--child", (char *)run->name, run->arg[0] ? (char *)run->arg : flipped,
                    run->arg[0] ? flipped : NULL, NULL};
    if (harness_spawn(args, env, run->timeout_s ? run->timeout_s : 300, r) != 0)
        return perror("spawn"), -1;
    return 0;
}

int harness_verdict(struct harness_parent *p, struct child_result *r, const char *why, const char *fmt, ...)
{
    char exit_why[64], what[512];
    if (r->status != 0) {
        snprintf(exit_why, sizeof exit_why, "child exit status %d%s", r->status,
                 r->status == 124 ? " (timeout)" : r->status > 128 ? " (crashed)" : "");
        why = exit_why;
    }
    /* A refusal that HX_RUNS_OR_REFUSED allows compares nothing: nothing to flip. */
    bool refused = strstr(r->out, ": refused\n") != NULL;
    bool caught = r->status != 0 && strstr(r->out, "differs at byte") != NULL;
    int ok = p->flip ? refused || caught : why[0] == '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *flipped = caught ? "flipped byte detected"
                          : ok   ? "refused, nothing compared"
                                 : "flipped byte NOT detected";
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, p->flip || why[0] ? ": " : "", p->flip ? flipped : why);
    if (!ok || getenv(p->verbose ? p->verbose : "PARTITION_VERBOSE"))
        harness_dump(r->out);
    free(r->out);
    r->out = NULL;
    p->run++;
    p->passed += ok;
    return ok;
}

int harness_summary(const struct harness_parent *p, const char *noun)
{
    printf("%d/%d %s as expected\n", p->passed, p->run, noun);
    return p->run > 0 && p->passed == p->run ? 0 : 1;
}

bool harness_child_args(int argc, char **argv, bool with_arg, const char **name, const char **arg, int *flip)
{
    if (argc != (with_arg ? 5 : 4) || strcmp(argv[1], "--child") != 0)
        return false;
    setvbuf(stdout, NULL, _IOLBF, 0);
    *name = argv[2];
    if (with_arg)
        *arg = argv[3];
    *flip = atoi(argv[argc - 1]);
    return true;
}

int harness_unknown(const char *name)
{
    fprintf(stderr, "unknown case %s\n", name);
    return 2;
}

/* Case i of the table; its first member is its name (const char *). */
static const void *case_at(const struct harness_prog *prog, size_t i)
{
    return (const char *)prog->cases + i * prog->case_size;
}

/* The child of a case that is one job. */
static int child_twin(const struct harness_prog *prog, const void *c, const char *arg, int flip)
{
    struct harness_twin tw;
    memset(&tw, 0, sizeof tw);
    prog->make(c, arg, &tw);
    int rc = harness_twin_job(*(const char *const *)c, &tw.job, tw.expect, flip, tw.check);
    job_free_inputs(&tw.job);
    return rc;
}

/* Every run of one case, each in its own child, judged. -1 when a child could not be started. */
static int parent_case(struct harness_parent *hp, const struct harness_prog *prog, const void *c,
                       const struct harness_opts *o)
{
    struct harness_run runs[64];
    memset(runs, 0, sizeof runs);
    int n = prog->runs(c, o, runs, sizeof runs / sizeof runs[0]);
    if (n < 0)
        hp->run++;
    for (int i = 0; i < n; i++) {
        char why[512] = "", what[512] = "";
        struct child_result r;
        if (harness_run_child(hp, &runs[i], &r) != 0)
            return -1;
        prog->judge(c, &runs[i], r.out, why, sizeof why, what, sizeof what);
        harness_verdict(hp, &r, why, "%s", what);
    }
    return 0;
}

int harness_main(int argc, char **argv, const struct harness_prog *prog)
{
    const char *name, *arg = NULL;
    int flip;
    if (harness_child_args(argc, argv, prog->child_arg, &name, &arg, &flip)) {
        for (size_t i = 0; i < prog->ncases; i++) {
            const void *c = case_at(prog, i);
            if (!strcmp(*(const char *const *)c, name))
                return prog->make ? child_twin(prog, c, arg, flip) : prog->child(c, arg, flip);
        }
        return harness_unknown(name);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct harness_opts opt = prog->opts;
    if (harness_options(argc, argv, &opt) != 0)
        return 2;
    struct harness_parent hp = {.argv0 = argv[0], .vendors = opt.vendors, .flip = opt.flip};
    for (size_t i = 0; i < prog->ncases; i++)
        if (harness_selected(opt.only, *(const char *const *)case_at(prog, i)) &&
            parent_case(&hp, prog, case_at(prog, i), &opt) != 0)
            return 2;
    return harness_summary(&hp, prog->noun);
}

int harness_compare_bytes(const char *name, const unsigned char *want, size_t nwant, const unsigned char *got,
                          size_t ngot)
{
    if (nwant != ngot)
        return printf("  %s: VAST read back %zu bytes, PoCL %zu\n", name, ngot, nwant), 1;
    size_t d = harness_first_diff(want, got, nwant);
    if (d == (size_t)-1)
        return 0;
    size_t bad = 0;
    for (size_t i = 0; i < nwant; i++)
        bad += want[i] != got[i];
    printf("  %s: differs at byte %zu of %zu (%zu bytes differ): PoCL 0x%02x, VAST 0x%02x\n", name, d, nwant, bad,
           want[d], got[d]);
    return 1;
}

void *harness_rnd_u32(uint64_t *seed, size_t n, uint32_t mod)
{
    uint32_t *v = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++)
        v[i] = mod ? (uint32_t)(harness_rand(seed) % mod) : (uint32_t)harness_rand(seed);
    return v;
}

void *harness_rnd_f32(uint64_t *seed, size_t n)
{
    float *v = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((double)(harness_rand(seed) >> 40) / (double)(1 << 23) - 1.0);
    return v;
}

void *harness_poison(size_t bytes)
{
    void *v = malloc(bytes);
    memset(v, 0xA5, bytes);
    return v;
}

size_t job_ws(const struct job *j)
{
    size_t ws = 0;
    for (unsigned a = 0; a < j->nargs; a++)
        if (j->args[a].kind == JA_BUF)
            ws += j->args[a].bytes;
    return ws;
}

void job_free_inputs(struct job *j)
{
    for (unsigned a = 0; a < j->nargs; a++)
        if (j->args[a].kind == JA_BUF)
            free((void *)j->args[a].data), j->args[a].data = NULL;
}

/* Flips one byte in the middle of VAST's largest buffer: the comparison must then fail. */
static void flip_largest(const struct job *j, unsigned char **got)
{
    unsigned big = 0;
    for (unsigned a = 0; a < j->nargs; a++)
        if (j->args[a].kind == JA_BUF && j->args[a].bytes > j->args[big].bytes)
            big = a;
    got[big][j->args[big].bytes / 2] ^= 0x01;
}

/* VAST's launch status and buffers against what `expect` asks and PoCL's buffers. */
static int judge_vast(const char *name, const struct job *j, enum harness_expect expect, cl_int err,
                      cl_int enqueued, unsigned char **want, unsigned char **got)
{
    if (err == CL_OUT_OF_RESOURCES && expect == HX_RUNS_OR_REFUSED) {
        printf("  %s: refused\n", name);
        return job_untouched(j, got);
    }
    if (expect == HX_REFUSED || expect == HX_REFUSED_AT_ENQUEUE) {
        int bad = 0;
        if (err != CL_OUT_OF_RESOURCES)
            bad = printf("  %s: expected CL_OUT_OF_RESOURCES from VAST, got %s\n", name, cl_status_name(err));
        else if (expect == HX_REFUSED_AT_ENQUEUE && enqueued != CL_OUT_OF_RESOURCES)
            bad = printf("  %s: expected CL_OUT_OF_RESOURCES from clEnqueueNDRangeKernel itself, which returned %s "
                         "(the refusal came later)\n", name, cl_status_name(enqueued));
        return bad | job_untouched(j, got);
    }
    if (err != CL_SUCCESS)
        return printf("  %s: VAST failed: %s\n", name, cl_status_name(err)), 1;
    return job_compare(j, want, got, "VAST vs PoCL");
}

int harness_twin_job(const char *name, const struct job *j, enum harness_expect expect, int flip,
                     int (*check)(const struct job *j, unsigned char **out))
{
    struct clenv pocl, vast;
    const char *real = getenv("PARTITION_REAL_PLATFORM"); /* e.g. "NVIDIA CUDA" on the GPU machine */
    clenv_open(&pocl, real != NULL ? real : "Portable");
    clenv_open(&vast, "VAST");
    unsigned char *want[12] = {0}, *got[12] = {0};
    bool refusal = expect == HX_REFUSED || expect == HX_REFUSED_AT_ENQUEUE;
    if (!refusal) {
        cl_int err = job_run(&pocl, j, want);
        if (err != CL_SUCCESS)
            return printf("  %s: PoCL itself failed: %s\n", name, cl_status_name(err)), 3;
    }
    cl_int err = job_run(&vast, j, got);
    printf("  %s: VAST launch: %s\n", name, cl_status_name(err));
    if (flip && err == CL_SUCCESS && !refusal)
        flip_largest(j, got);
    int bad = judge_vast(name, j, expect, err, vast.enqueued, want, got);
    if (!bad && err == CL_SUCCESS && check != NULL)
        bad = check(j, got);
    job_free(j, want);
    job_free(j, got);
    clenv_close(&pocl);
    clenv_close(&vast);
    return bad ? 1 : 0;
}
