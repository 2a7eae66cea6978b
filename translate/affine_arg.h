/*
 * affine_arg.h: what the evaluators of a kernel's affine descriptions over one launch
 * (affine_eval.c: index ranges; cover.c: the bytes certainly written) share.
 */
#ifndef VAST_TRANSLATE_AFFINE_ARG_H
#define VAST_TRANSLATE_AFFINE_ARG_H

#include "translate.h"

/* The launch's value of a scalar argument leaf (TRANSLATE_AOP_ARG), sign- or zero-extended as
 * the leaf's type says; -1 when the launch does not give it or its size is not 1, 2, 4 or 8. */
int tr_affine_arg_value(const struct translate_alaunch *l, const struct translate_anode *n, __int128 *out);

#endif
