/*
 * fake_pas.h: made-up page sets for the planner's unit tests (test_plan, test_launch_plan):
 * one page set per work-group, answered as PAS rows the way the inspector does per chunk
 * (struct vast_pas_source), and the checks every plan must pass.
 */
#ifndef VAST_TESTS_FAKE_PAS_H
#define VAST_TESTS_FAKE_PAS_H

#include "interpose/launch_int.h"

#include <stdint.h>

struct fake {
    size_t groups, pages;
    uint8_t *wg;     /* groups x pages: each work-group's set */
    size_t windows;  /* calls */
    size_t min_w;    /* the finest chunk asked for */
    size_t max_rows; /* the window */
};

void fake_init(struct fake *f, size_t groups, size_t pages);
/* Work-group g touches pages [p, p + n). */
void fake_touch(struct fake *f, size_t g, size_t p, size_t n);
/* struct vast_pas_source's window over f (ctx); fails the test when asked for more rows than
 * f->max_rows. */
cl_int fake_window(void *ctx, size_t first, size_t end, size_t w, size_t base, size_t nrows, uint8_t *dst);
/* vast_plan_groups over f's sets with a window of f->max_rows rows. */
cl_int fake_plan(struct fake *f, size_t nframes, size_t w, struct vast_partition **parts, size_t *n,
                 struct vast_plan_over *over);
/* What every plan must be: partitions in order without gaps over every work-group, each set
 * packed (then unpacked here) and the union of its work-groups' sets with its count, within the
 * budget; consecutive partitions fit the budget together, except after a single work-group that
 * fits only alone. */
void fake_check_plan(const struct fake *f, struct vast_partition *parts, size_t n, size_t nframes);
size_t fake_popcount(const uint8_t *set, size_t n);
size_t fake_union_count(const uint8_t *a, const uint8_t *b, size_t n);

/* A dispatch table's clGetKernelWorkGroupInfo answering CL_KERNEL_COMPILE_WORK_GROUP_SIZE
 * with fake_reqd_size (vast_plan_can_slice). */
extern size_t fake_reqd_size[3];
cl_int CL_API_CALL fake_wg_info(cl_kernel k, cl_device_id dev, cl_kernel_work_group_info param, size_t size,
                                void *value, size_t *size_ret);

#endif
