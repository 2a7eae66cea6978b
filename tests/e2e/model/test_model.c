/* test_model.c - model-based random command sequences, PoCL against VAST (issue 18).
 *
 *   model_sequences [--sequences N] [--first S] [--steps K] [--seed S] [--flip]
 *
 * Sequence S (gen.h: random buffers, sub-buffers, reads, writes, copies, rect copies, fills,
 * maps, launches, releases, on three queues with event dependencies and user events) runs in
 * one child process on PoCL and then through VAST (both platforms seen through the ICD
 * loader, OCL_ICD_VENDORS=MODEL_ICD_DIR) and the traces (every return code, every byte read
 * back, every event's status, every object's final contents) must be equal. VAST reads its
 * configuration once, so a seed's configuration comes from the seed (model_config) and one
 * child runs every seed of one configuration: budgets of 256K to 4M, pages of 4K and 64K,
 * paging forced or not. On a difference the child prints the seed, the difference, the
 * shortest failing prefix it finds (bisection over prefixes) and its ops, and how to replay
 * it: `model_sequences --seed S --steps K`. --flip changes one byte of VAST's trace: every
 * child must then report a difference (the comparison can fail). MODEL_REFERENCE names another
 * reference platform than PoCL (the start of its name: "NVIDIA" with VAST_BACKEND=NVIDIA runs the
 * sequences against a GPU's own driver); the sequences then make valid calls only, because
 * NVIDIA's driver accepts some invalid ones (a sub-buffer of a sub-buffer, a fill at an offset
 * that is not a multiple of its pattern) that PoCL and VAST refuse as the specification says. */
#include "harness.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <execinfo.h>
#include <unistd.h>

#define MODEL_CONFIGS 20

struct model_config {
    const char *budget, *page;
    int forced;
};

static struct model_config model_config(uint64_t seed)
{
    static const char *const budgets[] = {"256K", "512K", "1M", "2M", "4M"};
    unsigned c = (unsigned)(seed % MODEL_CONFIGS);
    return (struct model_config){budgets[c % 5], (c / 5) % 2 ? "64K" : "4K", (int)(c / 10)};
}

/* The configuration's budget in pages (the generator bounds gathers by it). */
static size_t model_frames(struct model_config c)
{
    return harness_parse_size(c.budget) / harness_parse_size(c.page);
}

/* ---- child ---- */

static struct seq seq;
static struct trace want, got;

/* Runs ops [0, steps) of seq on both; 1 when they differ (why says where). */
static int differs(struct model_env *pocl, struct model_env *vast, int steps, int flip, char *why, size_t n)
{
    model_run(pocl, &seq, steps, &want);
    model_run(vast, &seq, steps, &got);
    if (flip && got.final.n > 4)
        got.final.p[got.final.n - 1] ^= 1;
    int d = trace_compare(&seq, steps, &want, &got, why, n);
    trace_free(&want);
    trace_free(&got);
    return d;
}

static void report(struct model_env *pocl, struct model_env *vast, uint64_t seed, int steps, int flip,
                   const char *why, const char *argv0)
{
    struct model_config c = model_config(seed);
    printf("MISMATCH seed %llu (VAST_DEVICE_MEMORY=%s VAST_PAGE_SIZE=%s VAST_FORCE_PAGED=%d), %d ops: %s\n",
           (unsigned long long)seed, c.budget, c.page, c.forced, seq.n < steps ? seq.n : steps, why);
    int lo = 0, hi = seq.n < steps ? seq.n : steps;
    char w[512];
    if (!flip) { /* the shortest failing prefix, by bisection */
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            if (differs(pocl, vast, mid, 0, w, sizeof w))
                hi = mid;
            else
                lo = mid;
        }
        if (differs(pocl, vast, hi, 0, w, sizeof w))
            printf("  shortest failing prefix: %d ops: %s\n", hi, w);
        else
            printf("  (the prefixes did not fail again: the whole sequence follows)\n"), hi = seq.n;
    }
    for (int i = 0; i < hi; i++) {
        char line[1024];
        gen_describe(&seq, i, line, sizeof line);
        printf("    %s\n", line);
    }
    printf("  replay: MODEL_ICD_DIR=... %s --seed %llu --steps %d\n", argv0, (unsigned long long)seed, hi);
}

/* A crash says where it happened (the sequence, the op, the platform) before it dies. */
static void crashed(int sig)
{
    char line[256];
    int n = snprintf(line, sizeof line, "CRASH signal %d in seed %llu op %d%s%s on %s\n", sig,
                     (unsigned long long)model_where.seed, model_where.op, model_where.phase ? ", " : "",
                     model_where.phase ? model_where.phase : "", model_where.platform ? model_where.platform : "?");
    if (write(2, line, (size_t)n) < 0)
        _exit(4);
    void *frames[32];
    backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* `--child FIRST COUNT STEPS FLIP`: seeds FIRST, FIRST + MODEL_CONFIGS, ... (one configuration). */
static int child(char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGSEGV, crashed);
    signal(SIGBUS, crashed);
    signal(SIGABRT, crashed);
    void *warm[1];
    backtrace(warm, 1); /* loads what backtrace needs now, not inside the signal handler */
    uint64_t first = strtoull(argv[2], NULL, 10);
    int count = atoi(argv[3]), steps = atoi(argv[4]), flip = atoi(argv[5]);
    struct model_env pocl, vast;
    const char *ref = getenv("MODEL_REFERENCE");
    int other_ref = ref != NULL && *ref != '\0';
    if (model_env_open(&pocl, other_ref ? ref : "Portable") != 0 || model_env_open(&vast, "VAST") != 0)
        return 3;
    size_t align = pocl.align > vast.align ? pocl.align : vast.align;
    int bad = 0;
    long long ops = 0;
    for (int k = 0; k < count; k++) {
        uint64_t seed = first + (uint64_t)k * MODEL_CONFIGS;
        gen_sequence(&seq, seed, steps, align, model_frames(model_config(seed)), other_ref);
        char why[512];
        ops += seq.n < steps ? seq.n : steps;
        for (int i = 0; getenv("MODEL_LIST") && i < steps && i < seq.n; i++) { /* before it runs (a hang) */
            char line[1024];
            gen_describe(&seq, i, line, sizeof line);
            printf("  seed %llu: %s\n", (unsigned long long)seed, line);
        }
        if (differs(&pocl, &vast, steps, flip, why, sizeof why)) {
            bad++;
            report(&pocl, &vast, seed, steps, flip, why, argv[0]);
            if (flip)
                break;
        }
    }
    printf("%d sequences (%lld ops), %d differ\n", count, ops, bad);
    model_env_close(&vast);
    model_env_close(&pocl);
    return bad ? 1 : 0;
}

/* ---- parent ---- */

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "--child"))
        return child(argv);
    long long sequences = 200, first = 1, one = -1;
    int steps = 60, flip = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sequences") && i + 1 < argc)
            sequences = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--first") && i + 1 < argc)
            first = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            one = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--flip"))
            flip = 1;
        else
            return fprintf(stderr, "usage: %s [--sequences N] [--first S] [--steps K] [--seed S] [--flip]\n", argv[0]),
                   2;
    }
    if (steps < 1 || steps > MODEL_MAX_OPS - 40)
        return fprintf(stderr, "--steps: 1 to %d\n", MODEL_MAX_OPS - 40), 2;
    const char *vendors = getenv("MODEL_ICD_DIR");
    if (vendors == NULL)
        return fprintf(stderr, "MODEL_ICD_DIR (a folder with vast.icd and PoCL's icd) is not set\n"), 2;
    if (one >= 0)
        first = one, sequences = 1;
    char e_icd[1024];
    snprintf(e_icd, sizeof e_icd, "OCL_ICD_VENDORS=%s", vendors);
    int failed = 0, children = 0;
    time_t t0 = time(NULL);
    for (int c = 0; c < MODEL_CONFIGS; c++) {
        /* The first seed from `first` on with configuration c, and how many of them. */
        long long s0 = first + ((c - first % MODEL_CONFIGS) % MODEL_CONFIGS + MODEL_CONFIGS) % MODEL_CONFIGS;
        long long count = s0 < first + sequences ? (first + sequences - s0 + MODEL_CONFIGS - 1) / MODEL_CONFIGS : 0;
        if (count == 0)
            continue;
        struct model_config cf = model_config((uint64_t)s0);
        char e_mem[64], e_page[64], e_forced[64], a_first[32], a_count[32], a_steps[32], a_flip[4];
        snprintf(e_mem, sizeof e_mem, "VAST_DEVICE_MEMORY=%s", cf.budget);
        snprintf(e_page, sizeof e_page, "VAST_PAGE_SIZE=%s", cf.page);
        snprintf(e_forced, sizeof e_forced, "VAST_FORCE_PAGED=%d", cf.forced);
        snprintf(a_first, sizeof a_first, "%lld", s0);
        snprintf(a_count, sizeof a_count, "%lld", count);
        snprintf(a_steps, sizeof a_steps, "%d", steps);
        snprintf(a_flip, sizeof a_flip, "%d", flip);
        const char *env[] = {e_icd, e_mem, e_page, e_forced, NULL};
        char *args[] = {argv[0], "--child", a_first, a_count, a_steps, a_flip, NULL};
        struct child_result r;
        if (harness_spawn(args, env, 1800, &r) != 0)
            return perror("spawn"), 2;
        children++;
        bool caught = r.status == 1 && strstr(r.out, "MISMATCH seed") != NULL;
        bool ok = flip ? caught : r.status == 0;
        failed += !ok;
        printf("%s budget %-4s page %-3s forced %d: %lld sequences from seed %lld: %s\n", ok ? "ok  " : "FAIL",
               cf.budget, cf.page, cf.forced, count, s0,
               flip ? (caught ? "flipped byte detected" : "flipped byte NOT detected")
                    : (r.status == 0 ? "equal" : r.status == 1 ? "differ" : "child failed"));
        if (!ok || one >= 0 || getenv("MODEL_VERBOSE"))
            harness_dump(r.out);
        free(r.out);
    }
    printf("%d of %d configurations as expected, %lld sequences of %d steps, %ld s\n", children - failed, children,
           sequences, steps, (long)(time(NULL) - t0));
    return failed || children == 0 ? 1 : 0;
}
