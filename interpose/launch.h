/*
 * launch.h: kernel launches on virtual buffers. Records every argument the application sets
 * (virtual buffers are bound only at launch), captures a launch at enqueue time, and runs it
 * in the cheapest correct mode (ARCHITECTURE.md section 5):
 *   direct         every buffer argument resident as one contiguous run of frames: the
 *                  application's own kernel on real sub-buffers of the pool's chunks;
 *   resident paged everything resident but scattered (or VAST_FORCE_PAGED=1): the translated
 *                  paged kernel over one look-ahead page table (paged.c, pipeline.c);
 *   partitioned    the buffers do not fit the device budget: the inspector, the PAS reduction
 *                  and one paged launch per partition (pas.c, partition.c, pipeline.c).
 * Called by kernel.c; the executor (or the synchronous virtual-command frame) runs captured
 * launches.
 */
#ifndef VAST_INTERPOSE_LAUNCH_H
#define VAST_INTERPOSE_LAUNCH_H

#include "object.h"

/* Record argument `index` (the value as given to the real kernel, the virtual buffer if the
 * application passed one, and the VAST object behind a real handle value, if any). Returns
 * the specification's error for a bad index. */
cl_int vast_launch_record_arg(cl_kernel kernel, cl_uint index, size_t size, const void *real_value, cl_mem vbuf,
                              struct vast_object *held);

/* Record argument `index` as the SVM pointer `ptr` (clSetKernelArgSVMPointer, already
 * accepted by the real kernel): it replaces whatever the argument held. */
cl_int vast_launch_record_svm(cl_kernel kernel, cl_uint index, const void *ptr);

/* Record a clSetKernelExecInfo value the real kernel accepted (direct launches replay it). */
cl_int vast_launch_record_exec_info(cl_kernel kernel, cl_kernel_exec_info param, size_t size, const void *value);

/* True when an argument of the kernel is a virtual buffer. */
bool vast_launch_needs_vast(cl_kernel kernel);

/* A launch captured at enqueue time: the NDRange and a snapshot of the argument record
 * (values copied; the kernel, the queue, the virtual buffers and the objects behind handle
 * values retained), so the application may set other arguments or release objects before it
 * runs. vast_launch_capture checks what the specification checks at enqueue time and returns
 * its error code; *out is NULL on error. */
struct vast_launch_cmd;
cl_int vast_launch_capture(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                           const size_t *global, const size_t *local, struct vast_launch_cmd **out);

/* Run a captured launch to completion. `real_queue` is an in-order real queue on the launch's
 * device in the backend's shared context, used for every kernel and page-table upload of the
 * launch (page transfers use the page cache's own queue, so they overlap the kernels); with
 * CL_QUEUE_PROFILING_ENABLE the statistics and the trace get device kernel times. Returns
 * the command's status. Launches may run concurrently from several threads. */
cl_int vast_launch_execute(struct vast_launch_cmd *cmd, cl_command_queue real_queue);
/* Where every launch will run paged (prebuild.c, VAST_BUILD_WAIT): what a device's first paged
 * launch would make (the device lane's page-table block, the scratch frame, the first chunk's
 * commit) is made now on its lane, and waited for (after the lane's earlier commands); once
 * per device, a merged device's members each (at most 8; the others' first launches do it)
 * (paged.c). */
void vast_paged_prepare(cl_device_id dev);
void vast_launch_cmd_free(struct vast_launch_cmd *cmd);

/* clEnqueueNDRangeKernel on virtual buffers: capture, then run as a virtual command. */
cl_int vast_launch_ndrange(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
                           const size_t *global, const size_t *local, cl_uint num_events, const cl_event *wait_list,
                           cl_event *event);

/* Copy the argument record (clCloneKernel) and free it (kernel and program destruction). */
cl_int vast_launch_clone(cl_kernel from, cl_kernel to);
void vast_launch_kernel_free(cl_kernel kernel);
void vast_launch_program_free(cl_program program);
/* A rebuild retires the program's translation and paged programs (variant.h); unretire undoes it
 * when the real rebuild did not happen. Program lock held. */
struct vast_launch_program *vast_launch_program_retire(cl_program program);
void vast_launch_program_unretire(cl_program program, struct vast_launch_program *s);

#endif
