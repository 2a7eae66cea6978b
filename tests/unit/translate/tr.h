/* tr.h - what the translate/ unit tests share: a program translated as VAST translates an
 * application's (fp64 enabled, file name "t.cl"), or the test fails with the translator's
 * reason. Include after <cmocka.h> and "translate.h". */
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

#endif
