/* devops.h: the seam between the page cache and a device (SQLite pcache methods, PoCL ops).
 * A struct vast_device_ops is a method table over an opaque device context: allocate/free
 * device chunks, move bytes host->device, device->host, device->device, fill, pin host memory,
 * wait. The pool calls nothing else, so it is unit-tested with a fake (tests/unit/pagecache)
 * and runs for real over OpenCL (devops_opencl.h).
 * Ordering contract: operations issued through one device context run in issue order
 * (an in-order queue), except read_unordered (below), which is ordered with nothing; an
 * operation may complete asynchronously; the destination of a read is valid, and the source
 * of a write reusable, only after wait() (or, for read_unordered, its ticket) has returned 0. */
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
    VAST_PC_ERR_NOT_RESIDENT = -8, /* VAST_PC_RESIDENT_ONLY: a page of the range is not resident */
};

const char *pagecache_status_string(int status);

/* A constructor's first step: `type *p`, zeroed, or VAST_PC_ERR_HOST_MEMORY returned from the
 * calling function (which includes <stdlib.h>). */
#define VAST_PC_NEW(type, p)                                                                      \
    type *p = calloc(1, sizeof *p);                                                               \
    if (!p)                                                                                       \
        return VAST_PC_ERR_HOST_MEMORY

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
    /* Which devices a pin serves (may be NULL, or return NULL: the device it was made through
     * only). Devices of one non-NULL domain use each other's pins: OpenCL, one real context,
     * in which a CL_MEM_USE_HOST_PTR wrapper is every device's (backing.c binds a store's pins
     * to a domain, so the members of a merged device share them). */
    void *(*pin_domain)(void *dev);
    /* Block until every operation issued so far has completed, unordered reads included
     * (OpenCL: both queues); nonzero if one failed, the first error seen wins. */
    int (*wait)(void *dev);
    /* Duplex (optional: both NULL, or both set). FACTS.md: one direction of the link moves
     * 55 GB/s, both at once on two queues 88.5 GB/s in all; one in-order queue never runs a
     * write-back and a load together. read_unordered is `read` on a second lane (OpenCL: a
     * second in-order queue) and is ordered with NOTHING: not after earlier operations (it
     * may read a device range before an earlier write into it has landed, or overwrite host
     * bytes an earlier write is still reading), not before later ones, not with other
     * threads'. So the caller must (1) issue it only on a device range and host range that no
     * operation issued and not yet waited for touches, and (2) issue nothing that touches
     * either range until its ticket has been waited for. All ordering is the caller's, on the
     * host: pagecache/README.md ("Duplex transfers") says why the pool's uses are safe.
     * *ticket: the transfer's ticket, or NULL when it is already complete (a staged transfer).
     * On error no ticket is made. */
    int (*read_unordered)(void *dev, vast_dev_chunk src, size_t src_off, void *host,
                          size_t bytes, vast_host_pin pin, void **ticket);
    /* Submits everything issued so far (so loads issued between ticket waits run while the
     * caller sleeps), blocks until the ticket's transfer is over and releases the ticket;
     * nonzero if that transfer failed. Every ticket is waited for exactly once. */
    int (*wait_ticket)(void *dev, void *ticket);
    /* Optional (may be NULL): the bytes [off, off + bytes) of a chunk hold nothing anyone will
     * read (frames of a released buffer): the device may take back the memory behind them, and
     * the range reads as anything afterwards (OpenCL on a CPU device: the chunk is VAST's own
     * mapping, and madvise(MADV_DONTNEED) returns its pages to the system). Called with the
     * pool lock held, on frames no operation touches: it must not wait for the device.
     * Never called on a range an operation issued and not yet waited for touches. */
    void (*discard)(void *dev, vast_dev_chunk chunk, size_t off, size_t bytes);
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
