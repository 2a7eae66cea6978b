/* corpus.h - the kernels the e2e translation test runs original vs paged on PoCL.
 * Each case names its program, kernel, NDRange and argument generators. */
#ifndef VAST_TESTS_TRANSLATE_CORPUS_H
#define VAST_TESTS_TRANSLATE_CORPUS_H
#include <stddef.h>

enum arg_gen {
    G_END, G_F32,   /* buffer of random floats in [-1, 1) */
    G_U32,          /* buffer of random uint < mod (mod 0: any) */
    G_RAMP,         /* buffer of uint i * mod */
    G_POISON,       /* output buffer filled with 0xA5 */
    G_ZERO,         /* buffer of zeros */
    G_INT, G_FLOAT, /* scalars (value) */
    G_LOCAL,        /* __local buffer of n bytes */
};

struct arg_spec {
    enum arg_gen gen;
    size_t bytes;
    double value;
    unsigned mod;
};

struct kcase {
    const char *name;
    int program;
    unsigned dim;
    size_t global[3], local[3], offset[3];
    int data_dependent; /* inspector page sets only checked as a superset of zero-data trace */
    struct arg_spec args[10];
};

extern const char *const corpus_programs[];
extern const char *const corpus_program_options[];
extern const struct kcase corpus_cases[];
/* Programs from corpus_num_default_programs on run only when one of their cases is named. */
extern const size_t corpus_num_programs, corpus_num_default_programs, corpus_num_cases;
#endif
