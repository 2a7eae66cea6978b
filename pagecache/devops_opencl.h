/* devops_opencl.h: struct vast_device_ops over a real OpenCL device.
 * Operates on REAL handles (the vendor's cl_context and in-order cl_command_queue) and calls
 * the vendor only through each object's own ICD dispatch table, never through the global
 * cl* symbols (libvast.so exports those itself). Chunks are real cl_mem buffers; host pins
 * are real CL_MEM_USE_HOST_PTR buffers that no kernel ever uses (FACTS.md: on NVIDIA that
 * pins the range for 55 GB/s transfers at ~2 MiB of GPU memory per GiB); transfers then use
 * the plain host pointer. Transfers of memory without a pin are staged through a ring of
 * pinned slots with several copy threads (staging.h), made on the first such transfer and
 * freed with the context; small ones (below the staging threshold) go from pageable memory.
 * Duplex: the context makes a second in-order queue on the same device for read_unordered
 * (write-backs), so device->host transfers run beside the host->device ones of the first
 * queue (FACTS.md: 88.5 GB/s both ways against 55 one way); every other method stays on the
 * queue given, in issue order. Where that queue cannot be made (or VAST_DEVOPS_CL_NO_DUPLEX),
 * read_unordered goes on the given queue, which is ordered and so still within contract.
 * Host chunks: on a CPU device that shares the host's memory (CL_DEVICE_TYPE_CPU with
 * CL_DEVICE_HOST_UNIFIED_MEMORY, e.g. PoCL), a chunk is VAST's own anonymous mapping wrapped in
 * a CL_MEM_USE_HOST_PTR buffer (committed on first touch, like the driver's own allocations),
 * so `discard` returns the pages of a released buffer's frames with madvise(MADV_DONTNEED)
 * (VAST_DEVOPS_CL_NO_HOST_CHUNKS: the driver's allocations, and no discard). The chunk itself
 * is never mapped: its host memory is only read or zapped where no operation touches it. */
#ifndef VAST_PAGECACHE_DEVOPS_OPENCL_H
#define VAST_PAGECACHE_DEVOPS_OPENCL_H

#include <CL/cl.h>
#include "devops.h"
#include "staging.h"

extern const struct vast_device_ops vast_devops_opencl;

#define VAST_DEVOPS_CL_NO_PIN 1u     /* never pin backing stores (VAST_PIN=0): they stage */
#define VAST_DEVOPS_CL_NO_STAGING 2u /* unpinned memory goes pageable (measure that path) */
#define VAST_DEVOPS_CL_NO_DUPLEX 4u  /* no second queue: read_unordered uses the one given */
#define VAST_DEVOPS_CL_NO_HOST_CHUNKS 8u /* chunks from the driver even on a CPU device */

/* Retains context and queue; *dev is the opaque device context for vast_devops_opencl.
 * staging: the ring's geometry and threads (NULL or zero fields: defaults, staging.h). */
int pagecache_create_devops_opencl_staged(cl_context context, cl_command_queue queue,
                                          unsigned flags,
                                          const struct vast_staging_config *staging, void **dev);
/* The same with the default staging configuration. */
int pagecache_create_devops_opencl(cl_context context, cl_command_queue queue, unsigned flags,
                                   void **dev);
void pagecache_destroy_devops_opencl(void *dev);
/* The cl_mem of a chunk (for kernels: a frame is chunk + offset). */
cl_mem pagecache_devops_opencl_mem(vast_dev_chunk chunk);
/* 1 when read_unordered has its own (device->host) queue, 0 when it shares the one given. */
int pagecache_devops_opencl_duplex(void *dev);
/* What staging did so far; VAST_PC_ERR_UNSUPPORTED with VAST_DEVOPS_CL_NO_STAGING. */
int pagecache_devops_opencl_staging_stats(void *dev, struct vast_staging_stats *out);

#endif
