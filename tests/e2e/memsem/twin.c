/* twin.c - see twin.h. */
#include "twin.h"

#include <stdlib.h>
#include <string.h>

void blob_add(struct blob *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            exit(3);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

void twin_read(struct clenv *e, cl_mem m, size_t off, size_t bytes, struct blob *out)
{
    void *p = malloc(bytes);
    memset(p, 0xa5, bytes); /* poisoned: bytes the read leaves alone cannot pass */
    CL_OK(clEnqueueReadBuffer(e->q, m, CL_TRUE, off, bytes, p, 0, NULL, NULL));
    blob_add(out, p, bytes);
    free(p);
}

uint32_t *twin_random_u32(size_t n, uint64_t seed)
{
    uint32_t *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)harness_rand(&seed);
    return v;
}

static int child(const struct twin_case *c, int flip)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct clenv pocl, vast;
    struct blob want = {0}, got = {0};
    clenv_open(&pocl, "Portable");
    c->run(&pocl, &want);
    clenv_close(&pocl);
    clenv_open(&vast, "VAST");
    c->run(&vast, &got);
    clenv_close(&vast);
    if (flip && got.n > 0)
        got.p[got.n / 2] ^= 1;
    int bad = harness_compare_bytes(c->name, want.p, want.n, got.p, got.n);
    if (!bad)
        printf("  %s: %zu bytes equal\n", c->name, want.n);
    free(want.p);
    free(got.p);
    return bad;
}

/* True when a "vast: stats:" line carries mode=<mode>. */
static bool shows_mode(const char *out, const char *mode)
{
    char want[64];
    snprintf(want, sizeof want, " mode=%s ", mode);
    for (const char *p = strstr(out, "vast: stats: "); p != NULL; p = strstr(p + 1, "vast: stats: ")) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s ", (int)(len < sizeof line - 2 ? len : sizeof line - 2), p);
        if (strstr(line, want) != NULL)
            return true;
    }
    return false;
}

int twin_main(int argc, char **argv, const struct twin_case *cases, size_t ncases, const struct twin_config *configs,
              size_t nconfigs)
{
    const char *name;
    int flip;
    if (harness_child_args(argc, argv, false, &name, NULL, &flip)) {
        for (size_t i = 0; i < ncases; i++)
            if (!strcmp(cases[i].name, name))
                return child(&cases[i], flip);
        return harness_unknown(name);
    }
    const char *only = NULL, *only_config = NULL;
    flip = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--config") && i + 1 < argc)
            only_config = argv[++i];
        else if (!strcmp(argv[i], "--flip"))
            flip = 1;
        else
            return fprintf(stderr, "usage: %s [--case a,b] [--config x,y] [--flip]\n", argv[0]), 2;
    }
    const char *vendors = getenv("MEMSEM_ICD_DIR");
    if (vendors == NULL)
        return fprintf(stderr, "MEMSEM_ICD_DIR (a folder with vast.icd and PoCL's icd) is not set\n"), 2;
    char e_icd[1024];
    snprintf(e_icd, sizeof e_icd, "OCL_ICD_VENDORS=%s", vendors);
    struct harness_parent hp = {.argv0 = argv[0], .vendors = vendors, .verbose = "MEMSEM_VERBOSE", .flip = flip};
    for (size_t i = 0; i < ncases; i++) {
        for (size_t k = 0; k < nconfigs && harness_selected(only, cases[i].name); k++) {
            const struct twin_config *cf = &configs[k];
            if (!harness_selected(only_config, cf->name))
                continue;
            const char *env[12] = {e_icd, "VAST_STATS=1", "VAST_LOG=info"};
            size_t ne = 3;
            for (size_t v = 0; v < 4 && cf->env[v] != NULL; v++)
                env[ne++] = cf->env[v];
            char flipped[2] = {(char)('0' + flip), 0};
            char *args[] = {argv[0], "--child", (char *)cases[i].name, flipped, NULL};
            struct child_result r;
            if (harness_spawn(args, env, 300, &r) != 0)
                return perror("spawn"), 2;
            char why[256] = "";
            if (cf->mode != NULL && !shows_mode(r.out, cf->mode))
                snprintf(why, sizeof why, "no VAST_STATS line with mode=%s", cf->mode);
            harness_verdict(&hp, &r, why, "%-22s %-14s", cases[i].name, cf->name);
        }
    }
    return harness_summary(&hp, "runs");
}
