/* test_corpus.c - partitioned execution (issue 5) over every case of the translator's e2e
 * corpus (tests/e2e/translate/corpus.c, compiled in unchanged): each case, scaled up so that
 * its data is about 12 MB (ws/16 is then >= 10 pages of 64 KiB), runs on PoCL and through
 * VAST in one process (ICD mode) at device budgets ws/2, ws/4 and ws/16 with the page sizes
 * asked for; seeded random inputs, poisoned outputs, every buffer compared byte for byte.
 * One child process per (case, fraction, page size): VAST reads VAST_DEVICE_MEMORY and
 * VAST_PAGE_SIZE when it loads.
 *
 * Scaling (table `scales`): the global size of the listed dimensions is multiplied, buffers
 * grow with the product (except those that do not depend on the NDRange), scalar arguments
 * that carry an extent grow with their dimension. A corpus case without an entry here fails
 * the test, so new corpus kernels cannot be skipped silently.
 *
 * Expected outcome: same bytes as PoCL, with VAST_STATS showing mode=partitioned and at least
 * two partitions; where one work-group alone needs more pages than the budget (listed per
 * case and page size in `refuse`), the same on the overdraft (VAST_OVERDRAFT's default) and,
 * in a second run with VAST_OVERDRAFT=0, CL_OUT_OF_RESOURCES, a "vast: error:" line naming
 * the kernel and the work-group, and every buffer untouched.
 *
 * Usage: partition_corpus [--pages 4K,64K] [--fractions 2,4,16] [--case NAME[,NAME]] [--flip]
 * Fraction 0 runs without a budget (the data fits: direct). --flip flips one byte of VAST's
 * result: every run must then fail ("differs at byte"). Exit 0 when all runs are as expected. */
#include "corpus.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct scale {
    const char *name;
    size_t f[3];          /* factor per dimension of the global size (0 = 1) */
    unsigned noscale;     /* bit a: buffer argument a keeps its size */
    signed char sdim[10]; /* scalar argument a is multiplied by f[sdim[a] - 1] (0: unchanged) */
    int over_arg;         /* argument whose size and/or modulus are set explicitly (-1 none) */
    size_t over_bytes;    /* 0: scaled as usual */
    unsigned over_mod;    /* G_U32 modulus (0: unchanged) */
    int over_arg2;
    size_t over_bytes2;
    const char *refuse4, *refuse64; /* fractions (",2,4,16,") where the launch must be refused */
};

#define NONE -1, 0, 0, -1, 0
static const struct scale scales[] = {
    {"vadd", {640}, 0, {0}, NONE, NULL, NULL},
    {"saxpy", {1430}, 0, {0}, NONE, NULL, NULL},
    {"incdec", {3072}, 0, {0}, NONE, NULL, NULL},
    {"vec4", {1500}, 0, {0}, NONE, NULL, NULL},
    {"comp", {1536}, 0, {0}, NONE, NULL, NULL},
    {"structs", {1200}, 0, {0}, NONE, NULL, NULL},
    {"macros", {1, 3000}, 0, {0}, NONE, NULL, NULL},
    {"ptrcast", {2200}, 0, {0}, NONE, NULL, NULL},
    /* ptrlocal races by construction (work-item i reads a[i], which work-item i/4 writes): its
     * output depends on the order work-groups run in, on PoCL as through VAST. Not compared. */
    {"ptrlocal", {0}, 0, {0}, NONE, "racy", NULL},
    {"oddbytes", {2000}, 0, {0}, NONE, NULL, NULL},
    {"uint4ops", {2500}, 0, {0}, NONE, NULL, NULL},
    /* halfs writes f[i] and f[4096 + 4i..]: both ranges stay apart only up to 4096 items
     * (x16), so it stays small: 180 KB. A work-group touches 4-5 pages (h twice, o, f twice):
     * more than ws/16 holds at 4 KiB (2 pages) and more than any fraction at 64 KiB. */
    {"halfs", {8}, 0, {0}, NONE, ",16,", ",2,4,16,"},
    {"vec3", {2500}, 0, {0}, NONE, NULL, NULL},
    {"withconst", {3000}, 1u << 0, {0}, NONE, NULL, NULL},
    {"geometry", {1, 500}, 0, {0}, NONE, NULL, NULL},
    {"transpose", {22, 22}, 0, {[2] = 1, [3] = 2}, NONE, NULL, NULL},
    {"stencil3d", {1, 1, 800}, 0, {[4] = 3}, NONE, NULL, NULL},
    {"ids3d", {1, 1, 1900}, 0, {0}, NONE, NULL, NULL},
    /* x: 32000 floats (2 pages of 64 KiB), columns random over it */
    {"spmv", {480}, 0, {0}, 1, 0, 32000, 3, 32000 * 4, NULL, NULL},
    {"histogram", {3000}, 1u << 1, {0}, NONE, NULL, NULL},
    /* v is read at k * 7 + i, k < 9: exactly what the scaled range reads */
    {"dynloop", {4000}, 0, {0}, 1, (256 * 4000 + 64) * 4, 0, -1, 0, NULL, NULL},
    {"fdtd", {1, 1, 110}, 0, {[4] = 3}, NONE, NULL, NULL},
    {"matmul", {1, 1500}, 1u << 1, {0}, NONE, NULL, NULL},
    {"reduce", {3000}, 0, {0}, NONE, NULL, NULL},
    {"awg_in", {640}, 0, {0}, NONE, NULL, NULL},
    {"lin3", {1, 500}, 0, {0}, NONE, NULL, NULL},
    {"awg_out", {600}, 0, {0}, NONE, NULL, NULL},
    {"included", {2500}, 0, {0}, NONE, NULL, NULL},
    {"dbl", {2500}, 0, {0}, NONE, NULL, NULL},
    {"vec8", {3000}, 0, {0}, NONE, NULL, NULL},
    {"structcopy", {400}, 0, {0}, NONE, NULL, NULL},
    {"packedarr", {400}, 0, {0}, NONE, NULL, NULL},
    /* idx < 32 picks among 33 entries of b: only the work-items scale (o, idx) */
    {"faulted", {3000}, 1u << 1, {0}, NONE, NULL, NULL},
};
#define NSCALES (sizeof scales / sizeof scales[0])

static const char *const reason_wg[] = {"work-group", "work group", "workgroup", NULL};

static const struct scale *find_scale(const char *name)
{
    for (size_t i = 0; i < NSCALES; i++)
        if (!strcmp(scales[i].name, name))
            return &scales[i];
    return NULL;
}

struct scaled {
    struct job job;
    cl_int ival[10];
    cl_float fval[10];
    void *data[10];
};

/* The scaled case as a job, inputs generated as paged_exec.c does (seeded per case). */
static void make_job(const struct kcase *kc, const struct scale *sc, struct scaled *s, bool with_data)
{
    memset(s, 0, sizeof *s);
    struct job *j = &s->job;
    size_t total = 1;
    j->src = corpus_programs[kc->program];
    j->options = corpus_program_options[kc->program];
    j->kernel = kc->name;
    j->dim = kc->dim;
    j->has_local = j->has_offset = true;
    for (unsigned d = 0; d < kc->dim; d++) {
        size_t f = sc->f[d] ? sc->f[d] : 1;
        total *= f;
        j->global[d] = kc->global[d] * f;
        j->local[d] = kc->local[d];
        j->offset[d] = kc->offset[d];
    }
    uint64_t seed = 12345 + (uint64_t)(kc - corpus_cases);
    for (unsigned a = 0; a < 10 && kc->args[a].gen != G_END; a++) {
        const struct arg_spec *sp = &kc->args[a];
        j->nargs = a + 1;
        if (sp->gen == G_INT || sp->gen == G_FLOAT) {
            double v = sp->value;
            if (sc->sdim[a])
                v *= (double)(sc->f[sc->sdim[a] - 1] ? sc->f[sc->sdim[a] - 1] : 1);
            s->ival[a] = (cl_int)v;
            s->fval[a] = (cl_float)v;
            j->args[a] = (struct jarg){JA_SCALAR, 4, sp->gen == G_INT ? (void *)&s->ival[a] : (void *)&s->fval[a]};
            continue;
        }
        if (sp->gen == G_LOCAL) {
            j->args[a] = (struct jarg){JA_LOCAL, sp->bytes, NULL};
            continue;
        }
        size_t bytes = sc->noscale & (1u << a) ? sp->bytes : sp->bytes * total;
        unsigned mod = sp->mod;
        if ((int)a == sc->over_arg) {
            bytes = sc->over_bytes ? sc->over_bytes : bytes;
            mod = sc->over_mod ? sc->over_mod : mod;
        }
        if ((int)a == sc->over_arg2)
            bytes = sc->over_bytes2;
        j->args[a] = (struct jarg){JA_BUF, bytes, NULL};
        if (!with_data)
            continue;
        unsigned char *b = malloc(bytes);
        uint32_t *u = (uint32_t *)b;
        float *f = (float *)b;
        for (size_t i = 0; i < bytes / 4; i++) {
            uint64_t x = harness_rand(&seed);
            switch (sp->gen) {
            case G_F32: f[i] = (float)((double)(x >> 40) / (double)(1 << 23) - 1.0); break;
            case G_U32: u[i] = mod ? (uint32_t)(x % mod) : (uint32_t)x; break;
            case G_RAMP: u[i] = (uint32_t)i * mod; break;
            default: break;
            }
        }
        if (sp->gen == G_POISON)
            memset(b, 0xA5, bytes);
        if (sp->gen == G_ZERO)
            memset(b, 0, bytes);
        for (size_t i = bytes / 4 * 4; i < bytes; i++)
            b[i] = sp->gen == G_POISON ? 0xA5 : sp->gen == G_ZERO ? 0 : (unsigned char)harness_rand(&seed);
        s->data[a] = b;
        j->args[a].data = b;
    }
}

static bool expect_refusal(const struct scale *sc, size_t page, size_t frac)
{
    const char *list = page >= (64u << 10) ? sc->refuse64 : sc->refuse4;
    char key[32];
    snprintf(key, sizeof key, ",%zu,", frac);
    return frac != 0 && list != NULL && strstr(list, key) != NULL;
}

/* The scaled case with its data; the child's ARG says whether VAST must refuse it. */
static void make(const void *c, const char *refuse, struct harness_twin *tw)
{
    const struct kcase *kc = c;
    static struct scaled s; /* the job's scalars live here */
    make_job(kc, find_scale(kc->name), &s, true);
    tw->job = s.job;
    tw->expect = atoi(refuse) ? HX_REFUSED : HX_RUNS;
}

/* Every (page size, fraction) of one case; a case without a scaling rule fails. */
static int runs(const void *c, const struct harness_opts *o, struct harness_run *out, size_t max)
{
    const struct kcase *kc = c;
    if ((size_t)kc->program >= corpus_num_default_programs)
        return printf("skip %-10s on request only (translate_paged_exec %s)\n", kc->name, kc->name), 0;
    const struct scale *sc = find_scale(kc->name);
    if (sc == NULL)
        return printf("FAIL %-10s corpus case without a scaling rule in test_corpus.c: add one\n", kc->name), -1;
    if (sc->refuse4 != NULL && !strcmp(sc->refuse4, "racy"))
        return printf("skip %-10s racy by construction (see its scaling rule)\n", kc->name), 0;
    struct scaled s;
    make_job(kc, sc, &s, false);
    size_t ws = job_ws(&s.job);
    size_t pages[8], npages = harness_sizes(o->pages, pages, 8);
    size_t fracs[8], nfracs = harness_sizes(o->fractions, fracs, 8);
    size_t n = 0;
    for (size_t p = 0; p < npages; p++) {
        for (size_t f = 0; f < nfracs && n < max; f++, n++) {
            bool refuse = expect_refusal(sc, pages[p], fracs[f]);
            out[n] = (struct harness_run){.name = kc->name, .quiet = true, .page = pages[p], .ws = ws, .frac = fracs[f],
                                          .budget = fracs[f] ? harness_budget(ws, fracs[f], pages[p]) : 0,
                                          .env = refuse ? "VAST_OVERDRAFT=0" : NULL};
            snprintf(out[n].arg, sizeof out[n].arg, "%d", refuse);
            if (refuse && n + 1 < max) { /* and on the overdraft: runs */
                out[n + 1] = out[n];
                out[n + 1].env = NULL;
                snprintf(out[n + 1].arg, sizeof out[n + 1].arg, "0");
                n++;
            }
        }
    }
    return (int)n;
}

/* A refusal where the scaling rule says so, named in VAST's log; else partitions. */
static void judge(const void *c, const struct harness_run *run, const char *out, char *why, size_t n, char *what,
                  size_t nwhat)
{
    const struct kcase *kc = c;
    bool refuse = run->arg[0] == '1';
    long long parts = harness_stat(out, kc->name, "partitioned", "partitions");
    snprintf(what, nwhat, "%-10s page %3zuK ws/%-2zu budget %6zuK (ws %zuK)%s partitions=%lld faults=%lld", kc->name,
             run->page >> 10, run->frac, run->budget >> 10, run->ws >> 10,
             refuse ? " refusal expected (VAST_OVERDRAFT=0)" : "", parts,
             harness_stat(out, kc->name, "partitioned", "faults"));
    if (refuse && !harness_refusal_logged(out, kc->name, reason_wg))
        snprintf(why, n, "no 'vast: error:' line naming kernel '%s' and the work-group", kc->name);
    else if (!refuse && run->frac != 0 && parts < 2)
        snprintf(why, n, "no VAST_STATS line 'kernel=%s mode=partitioned' with partitions >= 2", kc->name);
}

int main(int argc, char **argv)
{
    const struct harness_prog prog = {corpus_cases, corpus_num_cases, sizeof corpus_cases[0], "runs",
                                      {.pages = "4K,64K", .fractions = "2,4,16"}, true, make, NULL, runs, judge};
    return harness_main(argc, argv, &prog);
}
