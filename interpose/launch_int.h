/*
 * launch_int.h: what the launch engine's files share about one launch: the captured command
 * (launch.c), the launch's virtual space (every buffer argument page-aligned from virtual page
 * 1, translate.h's ABI: paged.c), page sets (pas.c), the plan (partition.c, stride.c) and the
 * state of a paged execution (pipeline.c). Used by those files and the planner's unit tests
 * only. Calls go one way: launch.c -> partition.c -> stride.c -> pas.c -> paged.c, and
 * pipeline.c -> {partition.c (sticky pages), pas.c, paged.c}.
 *
 * A page set is a bytemap over the launch's virtual pages (1 = in the set): the PAS rows of
 * the inspector have that form, so reduction is a byte-wise OR.
 */
#ifndef VAST_INTERPOSE_LAUNCH_INT_H
#define VAST_INTERPOSE_LAUNCH_INT_H

#include "object.h"
#include "stats.h"

#include <stdint.h>

struct translate_kernel;
struct vast_pool;
struct vast_pas_ops;

/* A run's fault log (paged.c makes it, pipeline.c reads it): 1 MiB, few retries even when
 * faults repeat pages. */
#define FAULT_CAPACITY 65536u
#define FAULT_WORDS (TRANSLATE_FAULT_LOG_HEADER_WORDS + TRANSLATE_FAULT_ENTRY_WORDS * FAULT_CAPACITY)

struct vast_arg {
    bool set;
    size_t size, capacity;    /* capacity: bytes allocated at value, reused by later calls */
    void *value;              /* the bytes given to the real kernel (real handles), NULL for __local */
    cl_mem vbuf;              /* the virtual buffer the application passed, or NULL */
    struct vast_object *held; /* the VAST object behind a real handle value, or NULL */
    bool svm;                 /* value is an SVM pointer (clSetKernelArgSVMPointer, or a buffer
                                 made from SVM memory): passed to the kernel as it is */
};

/* clSetKernelExecInfo values, replayed on the real kernels of direct launches. */
#define VAST_EXEC_INFOS 4
struct vast_exec_info {
    cl_kernel_exec_info param;
    size_t size;
    void *value;
};

struct launch_shape {
    cl_uint dims;
    size_t offset[3], global[3], local[3]; /* unused dimensions: 0, 1, 1 */
    bool local_given;
};

struct vast_launch_cmd {
    cl_command_queue queue; /* retained */
    cl_device_id dev;       /* the root device that runs it: the queue's, or a member of a
                               merged device running its share (merge.c) */
    cl_kernel kernel;       /* retained */
    struct launch_shape sh;
    cl_uint num_args;
    struct vast_arg *args;  /* snapshot; vbuf and held retained */
    struct vast_exec_info exec[VAST_EXEC_INFOS]; /* snapshot (size 0: unused) */
    bool planned;           /* launch_admit made its plan and kept it on the kernel */
    struct vast_launch_counters admit; /* that planning's time, added to the run's statistics */
    bool waits;             /* submitted with a wait list */
    struct vast_chain *chain; /* the chain it leads (chain_index 0) or is member chain_index of (chain.c) */
    size_t chain_index;
};

/* One virtual buffer argument in the launch's virtual space. */
struct vast_varg {
    cl_uint index;        /* kernel argument index */
    cl_mem m;             /* the virtual buffer (or sub-buffer) */
    struct vast_pc_buffer *pc; /* m's view in the page cache of the launch's device */
    size_t first, count;  /* root pages covering m */
    size_t va_page;       /* its first virtual page */
    bool writable;        /* kernels may write it: its pages become dirty after a run */
};

/* A paged execution (resident or partitioned) of one captured launch. */
struct vast_paged {
    struct vast_launch_cmd *cmd;
    cl_command_queue rq;              /* real, in-order */
    cl_command_queue sq[2];           /* per slot: rq, and for slot 1 the lane's second queue */
    const struct _cl_icd_dispatch *d;
    cl_device_id dev;
    struct vast_pool *pool;
    const struct translate_kernel *tk;
    cl_kernel pk;                     /* real paged kernel (taken from the pool) */
    cl_kernel pkr;                    /* a resumable kernel's ranges build (VAST_VARIANT_RANGES), else NULL */
    struct vast_varg *va;
    size_t nva;
    size_t pages;                     /* virtual pages, page 0 included */
    uint64_t *arg_va;                 /* per kernel argument: its virtual address, 0 if none */
    size_t local[3], groups[3], total_groups;
    cl_ulong slices;                  /* vast_slab.s3: real work-groups per original one (0: 1) */
    cl_mem lpt[2], faults[2];         /* page table and fault log per pipeline slot */
    cl_mem scratch;                   /* the device's scratch frame (not r's: paged.c, open_scratch) */
    uint32_t chunks_set;              /* the pool's used chunks the kernels were given (vast_paged_set_chunks) */
    cl_mem *arg_const;                /* per kernel argument: real copy of a __constant virtual buffer */
    uint32_t *lpt_host[2];            /* pinned, kept by the thread (paged.c, host_tables) */
    uint32_t *fault_hdr[2];           /* pinned likewise: each slot's fault log header */
    const uint32_t *hdr_start;        /* pinned likewise: the fault log header each run starts from */
    uint32_t *fault_host[2];          /* each slot's whole fault log (entries read after faults; made then) */
    bool profiling;                   /* rq has CL_QUEUE_PROFILING_ENABLE */
    bool owns_rq;                     /* rq is vast_paged_plan_queue's (planning at enqueue) */
    uint64_t kernel_end;              /* end of the latest partition kernel counted (wait_partition) */
    bool needs_restore;               /* save and restore writable pages around faults (launch.c decides;
                                       * vast_partition_plan clears it for exact sets) */
    bool sets_exact;                  /* the plan's sets hold every page its work-groups touch: no fault but
                                       * out of bounds (vast_partition_plan) */
    bool sequential;                  /* one partition at a time (resumable loops: stride.c) */
    size_t lent;                      /* frames past the budget borrowed for this run (pipeline.c, overdraft) */
    cl_mem spill[2];                  /* resumable loops' state: [0] the paged kernel's, [1] the inspector's */
    uint8_t *sticky;                  /* pages that faulted: added to later partitions */
    size_t nsticky;
    struct vast_inspect *insp;        /* the inspector, kept from planning for splits */
    const struct vast_pas_ops *pas;   /* the planner's page sets (launch.c: vast_pas_launch) */
    /* Pages a partition overwrites (cover.c): per pipeline slot, the running partition's pages
     * given frames without a load; [2] the next partition's, so its prefetch skips them. */
    uint8_t *cover[3];
    bool cover_any[3];
    int cover_rule;                   /* cover.c: 0 not decided, 1 the kernel may, -1 it may not */
    uint8_t *cover_arg;               /* per r->va: the buffer may be overwritten whole */
    /* A merged device's share (merge.c): vast_paged_run takes its partitions from claim (the
     * next one of the launch's plan no member took yet, or NULL) instead of its list. */
    struct vast_partition *(*claim)(void *ctx, bool ahead); /* ahead: for the prefetch */
    void *claim_ctx;
    struct vast_chain *chain;         /* the chain this run carries (chain.c), or NULL */
    size_t reps[2];                   /* per slot: launches its partition runs (pipeline.c) */
    struct vast_launch_counters c;
};

/* One partition: a range of flat work-group ids and the pages it needs. */
struct vast_partition {
    size_t first, end;
    /* Bytemap over r->pages, owned; NULL while the set is packed. A plan keeps each set packed
     * as runs of virtual pages, (first, count) pairs in runs[0..2*nruns) (vast_partition_pack;
     * runs NULL: never packed), so that the plan's memory grows with its pages, not with
     * partitions x pages; the pipeline unpacks the partitions it runs or prefetches. */
    uint8_t *set;
    size_t *runs, nruns;
    size_t count; /* pages in set */
    size_t sticky; /* of them, pages other partitions faulted (partition.c, vast_plan_add_sticky) */
    bool own_only; /* one work-group that did not fit beside such pages: it gets none */
    uint64_t iter_first, iter_end; /* iterations of grid-stride loops (stride.c); iter_end 0: all */
    uint64_t iter_peel; /* a split of [iter_first, all): the first part's length (0: 1) */
};

/* paged.c: the launch's virtual space and the kernel ABI. */
cl_int vast_paged_open(struct vast_paged *r, struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                       const struct translate_kernel *tk);
/* Only what planning needs (the virtual space, the work-group grid; no page tables, fault logs
 * or host tables), for a plan made at enqueue on the application's thread; the key of the kept
 * plan needs no more. The inspector, the first time it runs, calls vast_paged_plan_queue: with
 * no rq it makes a real queue of r's own (vast_paged_close releases it) and takes the device's
 * scratch frame; host page sets need neither (NVIDIA took 2.7-3.2 ms for the two at every admission). */
cl_int vast_paged_open_plan(struct vast_paged *r, struct vast_launch_cmd *cmd, struct vast_pool *pool,
                            const struct translate_kernel *tk);
cl_int vast_paged_plan_queue(struct vast_paged *r);
void vast_paged_close(struct vast_paged *r);
/* Set the kernel's original arguments (paged and inspector kernels take the same). */
cl_int vast_paged_set_args(struct vast_paged *r, cl_kernel kernel);
/* Gives the paged kernels (r->pk, r->pkr) the pool's chunks that have held a frame, where
 * they were given fewer (the scratch frame stands for the others, which no page-table entry
 * names); before each partition's enqueue, once its pages are pinned. */
cl_int vast_paged_set_chunks(struct vast_paged *r);
/* Bytemap of every page of every buffer argument (resident paged mode). */
uint8_t *vast_paged_all_pages(const struct vast_paged *r, size_t *count);
/* The original NDRange as the ABI's vast_gsize and vast_goff (paged and inspector kernels). */
void vast_paged_geometry(const struct vast_paged *r, cl_ulong4 *gsize, cl_ulong4 *goff);
/* Enqueue translated kernel k (paged or inspector; its vast_slab is argument slab_arg) over the
 * slab of the NDRange covering flat work-groups [first, end), with no global work offset and
 * in launches below 2^31 work-items per dimension; *kev (kev NULL: none) is the launch's event
 * when it took one launch, else NULL (the caller times it on the host). */
cl_int vast_paged_enqueue(const struct vast_paged *r, cl_command_queue q, cl_kernel k, cl_uint slab_arg, size_t first,
                          size_t end, cl_event *kev);
/* Sets the iteration range argument (vast_iters) of a real paged or inspector kernel when
 * the kernel has one (end 0: all iterations), and for resumable loops the spill areas
 * (translate.h): a range run gets the launch's (made on first use, filled with 0xff, refused
 * with a log line when over the bound), the inspector its own and the paged kernel's. */
cl_int vast_paged_set_iters(struct vast_paged *r, cl_kernel real, bool inspector, uint64_t first, uint64_t end);

/* merge.c: a launch of a merged device (VAST_MERGE_DEVICES) on every member device: planned
 * as on one, its partitions claimed by the members as each finishes one. *ran false (nothing
 * done): the launch runs on the merged device alone, as on one device. */
cl_int vast_merge_run(struct vast_launch_cmd *cmd, cl_command_queue rq, struct vast_pool *pool,
                      const struct translate_kernel *tk, size_t total, enum vast_launch_mode *mode,
                      struct vast_launch_counters *c, bool *ran);

/* pipeline.c: the bytes a launch's writable buffers held before it, put back when it fails
 * (a refusal at run time leaves nothing half done). open copies them (after a flush), unless
 * they are too large (then n is 0); close puts them back when `restore`, and frees them. */
struct vast_saved {
    cl_mem root;
    size_t lo, hi; /* root bytes */
    unsigned char *bytes;
};
struct vast_undo {
    struct vast_saved *saved;
    size_t n;
};
cl_int vast_paged_undo_open(struct vast_paged *r, struct vast_undo *u);
void vast_paged_undo_close(struct vast_paged *r, struct vast_undo *u, bool restore);
/* pipeline.c: the partitions of a plan run in order, pipelined, with faults and retries. */
/* A kernel event's device execution in host time, taking its QUEUED instant as `enqueued`
 * (vast_now_ns()); false, leaving *t0 and *t1 alone, when the queue does not profile. */
bool vast_kernel_span(const struct _cl_icd_dispatch *d, cl_event kev, uint64_t enqueued, uint64_t *t0, uint64_t *t1);
/* Run the partitions in order, pipelined: while partition i runs, partition i+1's pages load,
 * and (kernels safe to re-execute) partition i+1 is enqueued behind it. With r->claim set,
 * parts is ignored: the partitions come from the claim function (merge.c). */
cl_int vast_paged_run(struct vast_paged *r, struct vast_partition *parts, size_t nparts);

/* pas.c: page accessed sets, from the inspector kernel or the host's affine evaluation.
 *
 * The planner's input: rows of a PAS, one per chunk of w consecutive work-groups, each a
 * bytemap of `pages` bytes. window() fills rows [base, base + nrows) of the chunks of
 * work-groups [first, end) (chunk k covers [k*w, (k+1)*w) clipped to [first, end); nrows at
 * most max_rows) into dst. rows is a buffer of max_rows rows the planner may use. */
struct vast_pas_source {
    size_t pages;
    size_t max_rows;
    uint8_t *rows;
    cl_int (*window)(void *ctx, size_t first, size_t end, size_t w, size_t base, size_t nrows, uint8_t *dst);
    void *ctx;
};
/* Where the planner (partition.c, stride.c) gets page sets: r->pas. */
struct vast_pas_ops {
    /* The launch's rows, kept until close. */
    cl_int (*source)(struct vast_paged *r, struct vast_pas_source *src);
    /* Whether the rows are host supersets; exact: exact rows (the inspector's) from now on. */
    bool (*host)(const struct vast_paged *r);
    void (*exact)(struct vast_paged *r);
    /* vast_partition_inspect_iters */
    cl_int (*iters)(struct vast_paged *r, size_t first, size_t end, uint64_t it0, uint64_t it1, uint8_t *set,
                    bool *more);
    /* Forget the rows: the work-groups changed (slices). */
    void (*close)(struct vast_paged *r);
};
/* The launch's page sets: host sets or the inspector kernel (pas.c). */
extern const struct vast_pas_ops vast_pas_launch;
size_t vast_set_count(const uint8_t *set, size_t n);
/* The launch as translate.h's evaluators see it (values, sizes: 64 entries; -1: more arguments),
 * and work-groups [a, b) cut into boxes of the group grid, each passed to fn in l (pas.c). */
struct translate_alaunch;
int vast_affine_launch(const struct vast_paged *r, struct translate_alaunch *l, const void **values, size_t *sizes);
int vast_group_boxes(const struct vast_paged *r, size_t a, size_t b, struct translate_alaunch *l,
                     int (*fn)(void *ctx, const struct translate_alaunch *l), void *ctx);
/* The bytes the launch's work-items move through global memory, estimated from the kernel's
 * affine description over the whole grid (translate_affine_traffic); -1 when it has none or
 * cannot be evaluated for this launch (pas.c). */
double vast_launch_traffic(const struct vast_paged *r);
/* A partitioned launch (total pages) whose kernel is bound by its own work, not by the link
 * (vast_launch_traffic against its data, launch.c): its buffers' stores are pinned no further
 * (vast_vbuf_stage) and the background pinner is held (pagecache_hold_background_pins) until
 * the caller gives it back; true then. Issue 15: the driver holds every other call while it
 * pins, and such a launch's data crosses the link once behind long kernels. */
bool vast_launch_stage_if_kernel_bound(struct vast_paged *r, size_t total);
/* cover.c: the pages of writable buffers that work-groups [first, end) of a launch overwrite
 * whole (translate_affine_written) into cover (r->pages bytes); false when none can be
 * (VAST_SKIP_OVERWRITTEN=0, or the kernel or its arguments are outside the rule). */
bool vast_partition_cover(struct vast_paged *r, size_t first, size_t end, uint8_t *cover);

/* The pages work-groups [first, end) touch (the inspector again), ORed into set. */
cl_int vast_partition_inspect(struct vast_paged *r, size_t first, size_t end, uint8_t *set);
void vast_partition_close(struct vast_paged *r);
void vast_partitions_free(struct vast_partition *parts, size_t n);
/* A set as runs (pas.c): pack frees the bytemap (best effort: kept where the runs cannot be
 * allocated); unpack makes the bytemap again (a no-op when there is one); drop frees the
 * bytemap of a packed set (its changes since unpack are lost: sticky and faulted pages). */
void vast_partition_pack(struct vast_partition *p, size_t pages);
cl_int vast_partition_unpack(struct vast_partition *p, size_t pages);
void vast_partition_drop_set(struct vast_partition *p);
/* Room for one more partition in *parts (n in use, *cap allocated; doubled when full). */
cl_int vast_partitions_reserve(struct vast_partition **parts, size_t n, size_t *cap);
/* Like vast_partition_inspect, with the kernel's grid-stride loops restricted to iterations
 * [it0, it1) (it1 0: all; then the host's sets may serve); *more (may be NULL): a work-item
 * has iterations at or past it1. */
cl_int vast_partition_inspect_iters(struct vast_paged *r, size_t first, size_t end, uint64_t it0, uint64_t it1,
                                    uint8_t *set, bool *more);

/* partition.c: the PAS reduction (VAST Algorithm 1). Consecutive partitions fit the budget
 * together where they can, each one alone always; CL_OUT_OF_RESOURCES (logged) when one
 * work-group needs more than the budget and neither slices nor iteration ranges help. Sets
 * r->sets_exact, and clears r->needs_restore when they are (no fault is then retried). */
cl_int vast_partition_plan(struct vast_paged *r, struct vast_partition **parts, size_t *nparts);
/* Drops the kernel's kept plan (kernel release). */
void vast_partition_forget(cl_kernel k);

/* A work-group that alone exceeds the budget: the first one found, and its pages. */
struct vast_plan_over {
    bool over;
    size_t group, pages;
};
/* Algorithm 1 over work-groups [0, total) from src's rows of w work-groups (a power of two),
 * in a budget of nframes pages; *parts (owned by the caller) and *n, or NULL and 0 on error.
 * CL_OUT_OF_RESOURCES with over->over (over may be NULL) when a single work-group alone
 * exceeds the budget; the caller decides what then (nothing is logged). */
cl_int vast_plan_groups(const struct vast_pas_source *src, size_t total, size_t nframes, size_t w,
                        struct vast_partition **parts, size_t *n, struct vast_plan_over *over);
/* The same, where a partition of one work-group may hold up to `single` pages (>= nframes):
 * the budget and the overdraft the page cache may lend (pagecache/README.md "Overdraft"). */
cl_int vast_plan_groups_single(const struct vast_pas_source *src, size_t total, size_t nframes, size_t single,
                               size_t w, struct vast_partition **parts, size_t *n, struct vast_plan_over *over);
/* The refusal of a launch whose `what` `group` alone touches `pages`, more than the budget and
 * the overdraft together (logged as an error; `why` ends the line). */
void vast_plan_refuse_log(const struct vast_paged *r, const char *what, size_t group, size_t pages, const char *why);
/* Eq. 1: work-groups per PAS row, so that a row touches about 1/32 of the budget. */
size_t vast_plan_chunk(size_t pages, size_t page_size, size_t nframes, size_t total_groups);
/* Whether r's work-groups may run in smaller slices (translate.h, vast_slab), and one step of
 * slicing: the largest dimension of the real local size divided by its smallest prime factor. */
bool vast_plan_can_slice(const struct vast_paged *r);
void vast_plan_slice(struct vast_paged *r);
/* Faulted pages (a bytemap over r->pages) become sticky, up to a quarter of the budget;
 * sticky pages join partition p up front when they fit (not p->own_only). */
void vast_plan_note_faults(struct vast_paged *r, const uint8_t *add);
void vast_plan_add_sticky(struct vast_paged *r, struct vast_partition *p);
/* The kept plan of a kernel object: everything the page sets and the planner depend on, as a
 * key (the NDRange, the local size, pages, budget, page size, per argument its virtual
 * address, size and scalar bytes); a copy of the last plan when its key matches (the caller
 * owns it), else NULL; keeping a copy of a new plan (takes key). */
uint8_t *vast_plan_key(const struct vast_paged *r, size_t *len);
struct vast_partition *vast_plan_cache_get(cl_kernel k, const uint8_t *key, size_t len, size_t pages, size_t *n,
                                           bool *exact);
void vast_plan_cache_put(cl_kernel k, uint8_t *key, size_t len, const struct vast_partition *parts, size_t n,
                         size_t pages, bool exact);
/* Whether the kernel's kept plan has r's key (vast_partition_plan would reuse it). */
bool vast_plan_kept(const struct vast_paged *r);

/* stride.c: partitions of loop iterations for kernels with grid-stride loops whose single
 * work-group exceeds the budget (CL_OUT_OF_RESOURCES, logged, when one iteration does). */
/* quiet: the caller tries another way when one iteration is too big (no error logged then). */
cl_int vast_stride_plan(struct vast_paged *r, struct vast_partition **parts, size_t *nparts, bool quiet);
/* Before running a plan (parts NULL: a stride plan being made): partitions of iteration
 * ranges over a written buffer passed twice must not overlap (sets r->needs_restore). */
void vast_stride_prepare(struct vast_paged *r, const struct vast_partition *parts, size_t n);
/* Whether a partition of the plan is a range of loop iterations (iter_end set): its order
 * and overlap with the other ranges of its work-groups matter. */
bool vast_plan_ranged(const struct vast_partition *parts, size_t n);
#endif
