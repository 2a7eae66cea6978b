/* twin.h - what the memory-semantics e2e programs share (tests/e2e/memsem/): one case runs
 * the same OpenCL work on PoCL and through VAST in one child process (the partition harness's
 * ICD setup, ../partition/harness.h), each run appending every byte it reads back to a blob;
 * the blobs must be equal. The parent runs every case under every configuration (budget, page
 * size, forced paging) in its own child, since VAST reads its configuration once. */
#ifndef VAST_TESTS_MEMSEM_TWIN_H
#define VAST_TESTS_MEMSEM_TWIN_H

#include "harness.h"

#include <stdio.h>

struct blob {
    unsigned char *p;
    size_t n, cap;
};
void blob_add(struct blob *b, const void *p, size_t n);

/* One case: runs on e (PoCL or VAST), appends everything it reads back to out. */
struct twin_case {
    const char *name;
    void (*run)(struct clenv *e, struct blob *out);
};

/* A configuration: environment for VAST, and the VAST_STATS mode (direct, paged,
 * partitioned) that some launch must show, so that a budget that happens to fit cannot pass
 * unnoticed (NULL: no check). */
struct twin_config {
    const char *name;
    const char *env[4];
    const char *mode;
};

/* The configurations that flags and images share: direct, forced paged with 4 KiB pages, and
 * partitioned at 1 MiB with 4 KiB pages. */
#define TWIN_CONFIGS_DIRECT_PAGED_PART4K                                                                               \
    {"direct", {NULL}, "direct"}, {"paged", {"VAST_FORCE_PAGED=1", "VAST_PAGE_SIZE=4K"}, "paged"},                    \
        {"part.4K", {"VAST_DEVICE_MEMORY=1M", "VAST_PAGE_SIZE=4K"}, "partitioned"}

/* Parent and child in one: `prog [--case a,b] [--config x,y] [--flip]`. With --flip, VAST's
 * blob has one byte flipped and every run must then fail (the comparison can fail). The ICD
 * folder comes from MEMSEM_ICD_DIR. Returns the process's exit status. */
int twin_main(int argc, char **argv, const struct twin_case *cases, size_t ncases, const struct twin_config *configs,
              size_t nconfigs);

/* Reads `bytes` of m from `off` (blocking) and appends them to out. */
void twin_read(struct clenv *e, cl_mem m, size_t off, size_t bytes, struct blob *out);

/* Random 32-bit words from a fixed seed (the same on both platforms). */
uint32_t *twin_random_u32(size_t n, uint64_t seed);

#endif
