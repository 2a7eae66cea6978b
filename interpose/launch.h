/*
 * launch.h: kernel launches on virtual buffers. Records every argument the application sets
 * (virtual buffers are bound only at launch), and runs a launch in the cheapest correct mode:
 *   direct        every buffer argument resident as one contiguous run of frames: the
 *                 application's own kernel on real sub-buffers of the pool's chunks;
 *   resident paged everything resident but scattered (or VAST_FORCE_PAGED=1): the translated
 *                 paged kernel (translate/) over a look-ahead page table;
 *   neither       the data does not fit the device budget: CL_OUT_OF_RESOURCES with a log
 *                 line naming the kernel, until partitioned execution exists (issue 5).
 * Called by kernel.c; uses vbuf.c for residency and translate/ for the paged program.
 */
#ifndef VAST_INTERPOSE_LAUNCH_H
#define VAST_INTERPOSE_LAUNCH_H

#include "object.h"

/* Record argument `index` (the value as given to the real kernel, and the virtual buffer if
 * the application passed one). Returns the specification's error for a bad index. */
cl_int vast_launch_record_arg(cl_kernel kernel, cl_uint index, size_t size, const void *real_value, cl_mem vbuf);

/* True when an argument of the kernel is a virtual buffer. */
bool vast_launch_needs_vast(cl_kernel kernel);

cl_int vast_launch_ndrange(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                           const size_t *global, const size_t *local, cl_uint num_events, const cl_event *wait_list,
                           cl_event *event);

/* Copy the argument record (clCloneKernel) and free it (kernel and program destruction). */
cl_int vast_launch_clone(cl_kernel from, cl_kernel to);
void vast_launch_kernel_free(cl_kernel kernel);
void vast_launch_program_free(cl_program program);

#endif
