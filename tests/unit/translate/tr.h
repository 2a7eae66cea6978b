/* tr.h - what the translate/ unit tests share: a program translated as VAST translates an
 * application's (fp64 enabled, file name "t.cl"), or the test fails with the translator's
 * reason; a collector of the byte ranges the affine evaluators report. Include after
 * <cmocka.h> and "translate.h". */
#ifndef VAST_TESTS_TRANSLATE_TR_H
#define VAST_TESTS_TRANSLATE_TR_H

/* The translation of src under the build options opts (NULL: none); free it with
 * translate_result_free. */
static inline struct translate_result *tr_program(const char *src, const char *opts)
{
    struct translate_options o = {opts, "cl_khr_fp64", 0, "t.cl", 0};
    struct translate_result *r = NULL;
    if (translate_program(src, &o, &r) != 0)
        fail_msg("translation failed: %s", r->error);
    return r;
}

/* The ranges a translate_affine_ranges or translate_affine_written call reports, in order,
 * each with its site (tr_collect is the callback; at most 1024). */
struct tr_ranges {
    long long lo[1024], end[1024];
    unsigned site[1024];
    int n;
};

static inline void tr_collect(void *ctx, unsigned site, long long lo, long long end)
{
    struct tr_ranges *g = ctx;
    assert_true(g->n < 1024);
    g->site[g->n] = site;
    g->lo[g->n] = lo;
    g->end[g->n++] = end;
}

#endif
