/* devops.h: the seam between the page cache and a device (SQLite pcache methods, PoCL ops).
 * A struct vast_device_ops is a method table over an opaque device context: allocate/free
 * device chunks, move bytes host->device, device->host, device->device, fill, pin host memory,
 * wait. The pool calls nothing else, so it is unit-tested with a fake (tests/unit/pagecache)
 * and runs for real over OpenCL (devops_opencl.h).
 * Ordering contract: operations issued through one device context run in issue order
 * (an in-order queue); an operation may complete asynchronously; the destination of a read is
 * valid, and the source of a write reusable, only after wait() has returned 0. */
#ifndef VAST_PAGECACHE_DEVOPS_H
#define VAST_PAGECACHE_DEVOPS_H

#include <stddef.h>

/* Return codes of every pagecache function (0 is success). */
enum vast_pc_status {
    VAST_PC_OK = 0,
    VAST_PC_ERR_INVALID = -1,     /* bad argument: range past the end, page size not 2^n ... */
    VAST_PC_ERR_HOST_MEMORY = -2, /* the host cannot back this size (or malloc failed) */
    VAST_PC_ERR_DEVICE_MEMORY = -3, /* the device refused a chunk allocation */
    VAST_PC_ERR_NO_FRAMES = -4,   /* every frame is pinned: nothing can be evicted */
    VAST_PC_ERR_TRANSFER = -5,    /* the device reported a failed transfer */
    VAST_PC_ERR_PINNED = -6,      /* the range holds pages pinned by a command in flight */
    VAST_PC_ERR_UNSUPPORTED = -7, /* the backend lacks this optional operation */
};

const char *pagecache_status_string(int status);

/* Opaque handles owned by a backend. */
typedef void *vast_dev_chunk; /* one real device allocation (a cl_mem in OpenCL) */
typedef void *vast_host_pin;  /* keeps a host range pinned while it lives */

struct vast_device_ops {
    const char *name;
    /* Allocate/free one device chunk of `bytes` bytes. */
    int (*alloc_chunk)(void *dev, size_t bytes, vast_dev_chunk *out);
    void (*free_chunk)(void *dev, vast_dev_chunk chunk);
    /* host -> device and device -> host. `pin` is the pin covering `host` or NULL. */
    int (*write)(void *dev, vast_dev_chunk dst, size_t dst_off, const void *host, size_t bytes,
                 vast_host_pin pin);
    int (*read)(void *dev, vast_dev_chunk src, size_t src_off, void *host, size_t bytes,
                vast_host_pin pin);
    /* device -> device (may be NULL: the pool then never needs it). */
    int (*copy)(void *dev, vast_dev_chunk dst, size_t dst_off, vast_dev_chunk src,
                size_t src_off, size_t bytes);
    /* Fill with a 1..128-byte pattern (may be NULL). */
    int (*fill)(void *dev, vast_dev_chunk dst, size_t dst_off, const void *pattern,
                size_t pattern_size, size_t bytes);
    /* Pin a host range for fast transfers (may be NULL, or fail: transfers then go from
     * pageable memory, still correct). */
    int (*pin_host)(void *dev, void *host, size_t bytes, vast_host_pin *out);
    void (*unpin_host)(void *dev, vast_host_pin pin);
    /* Block until every operation issued so far has completed; first error wins. */
    int (*wait)(void *dev);
};

/* Staging (staging.h, used by devops_opencl.c): where a backing store cannot be pinned
 * (pin_host is NULL, fails, or VAST_PIN=0), write/read receive pin == NULL, and a backend may
 * move such transfers through a ring of pinned bounce buffers, the memcpy split over N host
 * threads and overlapping with the device transfer of the previous slot (FACTS.md: 1/2/4/16
 * threads copy at 10/20/34/42 GB/s against ~7 GB/s pageable). A staged write or read is
 * complete when it returns, which the contract above allows (it is stronger); it returns
 * VAST_PC_ERR_TRANSFER when a slot transfer failed. Transfers below the staging threshold
 * (256 KiB by default) go from pageable memory as before. */

#endif
