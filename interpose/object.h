/*
 * object.h: the head shared by every OpenCL object VAST hands to an application, and the
 * per-type structures behind the opaque cl_* handle types.
 *
 * Invariants: `dispatch` is the first word (the ICD loader and LD_PRELOAD routing read it);
 * `magic` names the type while the object is alive and is VAST_MAGIC_DEAD after its last
 * release; the memory of a released object stays readable for a while (quarantine, see
 * object.c) so that a stale handle is answered with CL_INVALID_* instead of a crash.
 * Children hold a reference on their parents (a kernel on its program, a buffer on its
 * context ...), so a parent outlives every child that can report it in a clGet*Info query.
 * Called by every interpose/ file; the dispatch table itself lives in icd/dispatch.c.
 */
#ifndef VAST_INTERPOSE_OBJECT_H
#define VAST_INTERPOSE_OBJECT_H

#include <CL/cl_icd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const struct _cl_icd_dispatch vast_dispatch; /* icd/dispatch.c */

enum vast_magic {
    VAST_MAGIC_PLATFORM = 0x56504c54, /* "VPLT" */
    VAST_MAGIC_DEVICE = 0x56444556,
    VAST_MAGIC_CONTEXT = 0x56435458,
    VAST_MAGIC_QUEUE = 0x56515545,
    VAST_MAGIC_MEM = 0x564d454d,
    VAST_MAGIC_SAMPLER = 0x5653414d,
    VAST_MAGIC_PROGRAM = 0x56505247,
    VAST_MAGIC_KERNEL = 0x564b524e,
    VAST_MAGIC_EVENT = 0x56455654,
    VAST_MAGIC_DEAD = 0x44454144, /* "DEAD": released, kept in quarantine */
};

struct vast_object;
typedef void (*vast_destroy_fn)(struct vast_object *obj);

struct vast_object {
    const struct _cl_icd_dispatch *dispatch; /* must stay first */
    _Atomic uint32_t magic;
    _Atomic uint32_t refcount;
    pthread_mutex_t lock; /* protects the type's mutable fields */
    vast_destroy_fn destroy;
    struct vast_object *registry_next; /* chain of the live-handle registry (object.c) */
};

/* A real OpenCL platform underneath VAST, with the library it came from. */
struct vast_backend {
    cl_platform_id real;
    const struct _cl_icd_dispatch *dispatch; /* the real platform's table */
    size_t dispatch_slots;                   /* slots valid for its OpenCL version */
    unsigned version;                        /* major * 10 + minor, e.g. 30 */
    char name[128];
    char library[512];
    cl_context shared; /* the one real context of virtualised contexts (context.c) */
};

struct vast_pool;
struct vast_pc_buffer;
struct vast_backing;
struct vast_launch_kernel;
struct vast_launch_program;

struct _cl_platform_id {
    struct vast_object obj;
};

struct _cl_device_id {
    struct vast_object obj;
    cl_device_id real;
    struct vast_backend *backend;
    cl_device_type type;
    struct _cl_device_id *parent; /* sub-devices only: retained */
    bool is_root;                 /* root devices live as long as the library */
    char name[288];               /* "VAST: <real name>" */
    cl_ulong real_max_alloc;      /* the real device's CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    cl_ulong real_global_mem;
    cl_uint base_align_bytes;     /* CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8 */
    /* The device page cache (root devices; made on first use under obj.lock, vbuf.c). */
    struct vast_pool *pool;
    void *devops;
    cl_command_queue pool_queue; /* real in-order queue of the shared context */
    cl_mem scratch; /* the paged kernels' scratch frame, made by the first paged launch (paged.c) */
    atomic_bool paged_prepared; /* vast_paged_prepare ran (paged.c) */
    struct vast_executor *executor; /* runs virtual commands (root devices; executor.c) */
    struct vast_onqueue *_Atomic onqueue; /* kernels on applications' queues (root devices; onqueue.c) */
    /* VAST_MERGE_DEVICES (platform.c, merge.c): the merged device lists the root devices it
     * runs launches on, itself first; each other one is hidden from clGetDeviceIDs and names
     * the merged device in merged_into. Set once at start-up. */
    struct _cl_device_id **members;
    cl_uint num_members;
    struct _cl_device_id *merged_into;
    _Atomic unsigned long merged_launches, merged_partitions; /* run here for a merged device */
};

struct vast_context_destructor;

struct _cl_context {
    struct vast_object obj;
    cl_context real;
    struct vast_backend *backend;
    cl_uint num_devices;
    cl_device_id *devices; /* VAST devices, retained */
    /* The devices whose page caches hold views of the context's buffers (vbuf.c): `devices`
     * with each merged device replaced by its members (the same array when none is merged). */
    cl_uint num_members;
    cl_device_id *members;
    cl_context_properties *properties; /* as the application gave them (VAST platform) */
    size_t properties_size;            /* bytes, 0 when none were given */
    bool virtual_buffers; /* on the backend's shared real context: buffers are virtual */
    struct vast_context_destructor *destructors; /* newest first (obj.lock; context.c) */
};

struct _cl_command_queue {
    struct vast_object obj;
    cl_command_queue real;
    cl_context context; /* retained */
    cl_device_id device;
    bool profiling;     /* CL_QUEUE_PROFILING_ENABLE */
    bool in_order;      /* no CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE */
    cl_event barrier;   /* out-of-order queues: real event of the last barrier (obj.lock) */
    _Atomic cl_int error; /* first failure of a virtual command not yet reported (executor.c) */
    _Atomic uint64_t submitted; /* virtual commands submitted, and freed by the executor: */
    uint64_t reaped;            /* clFinish waits for the ones before it (obj.lock, reaped_cond) */
    pthread_cond_t reaped_cond;
    /* Real events that real commands of the queue wait for and that had not completed when
     * those commands were enqueued (obj.lock; queue.c, vast_queue_unwrap): while one has not,
     * a kernel put on the queue could wait for a command VAST runs (launch.c, launch_fast). */
    cl_event *waited;
    size_t nwaited, capwaited;
    /* Real commands VAST put on `real` for the application (pass-through commands, markers,
     * barriers, kernels on the application's queue), counted after each enqueue call
     * (vast_queue_note_real), and the count up to which all are known to have ended (a wait
     * for the queue's order, clFinish): while the two are equal, a host-side command run on
     * the application's thread has no earlier real command of the queue to wait for. */
    _Atomic uint64_t real_enqueued, real_ended;
    /* Virtual commands of the queue submitted to its executor and not complete (executor.c):
     * while none is, the queue's real commands wait for no command VAST runs. */
    _Atomic uint64_t vcmds_open;
    /* Virtual commands ordered so far (the executor's submission lock), and the chain of
     * identical launches that the next launch may join (chain.c, its lock). */
    uint64_t vcmd_seq;
    struct vast_chain *chain;
};

struct vast_map;
struct vast_destructor_callback;

struct _cl_mem {
    struct vast_object obj;
    cl_mem real;         /* NULL for virtual buffers */
    cl_context context;  /* retained */
    cl_mem parent;       /* sub-buffer's buffer or an image's buffer: retained */
    /* Virtual buffers (vbuf.c): the page cache's view, and what OpenCL queries report. */
    struct vast_pc_buffer *pc;    /* pcs[0]: the one host-side commands use */
    struct vast_pc_buffer **pcs;  /* per device of the context (same index): its page cache's
                                   * view; a device listed twice shares the first's (vbuf.c) */
    struct vast_backing *backing; /* root virtual buffers own it */
    cl_device_id home;            /* the context's first device: pcs[0]'s */
    cl_mem_flags flags;
    size_t size, offset;          /* offset: in the parent, for sub-buffers */
    void *host_ptr;               /* CL_MEM_USE_HOST_PTR's pointer */
    bool uses_svm;                /* root: host_ptr lies in an SVM allocation (launch.c) */
    atomic_bool pin_later;        /* root: its store is queued for background pinning at its
                                   * first host write or launch, not yet (vast_vbuf_pin) */
    struct vast_map *maps;        /* active mappings (obj.lock) */
    struct vast_destructor_callback *destructors;
    bool empty_properties;        /* made by clCreateBufferWithProperties with the list {0} */
    cl_mem mirror;                /* an image made from a virtual buffer: the real buffer it is
                                   * made on, kept coherent with the parent (image.c) */
    /* Direct launches (launch.c, enqueue_direct): the last real sub-buffer made of a pool
     * chunk for this buffer, reused while its pages stay where they were (obj.lock). */
    struct {
        cl_mem real;
        cl_mem chunk;
        size_t origin;
    } view;
};

struct _cl_sampler {
    struct vast_object obj;
    cl_sampler real;
    cl_context context; /* retained */
};

/* Where a program came from: whether VAST has its source to translate (variant.c says why
 * not, program.c keeps a VAST binary's options). */
enum vast_program_origin {
    VAST_PROGRAM_SOURCE,      /* clCreateProgramWithSource */
    VAST_PROGRAM_VAST_BINARY, /* a binary VAST handed out (progbin.h): source and options inside */
    VAST_PROGRAM_BINARY,      /* a binary VAST did not make */
    VAST_PROGRAM_IL,
    VAST_PROGRAM_BUILTIN,
    VAST_PROGRAM_LINKED,      /* clLinkProgram */
};

struct _cl_program {
    struct vast_object obj;
    _Atomic(cl_program) real; /* set late only by clLinkProgram's early callback */
    cl_context context;        /* retained */
    char *source;              /* concatenated source; NULL for IL and foreign binaries */
    char *options;             /* the last build options (for translation later); a VAST
                                * binary's own, which later builds do not replace */
    enum vast_program_origin origin;
    struct vast_launch_program *launch; /* translation and paged programs (variant.c) */
    struct vast_launch_program *retired; /* those of earlier builds, kept while the program lives */
    /* Its kernels alive, and those the application holds (kernel.c): VAST's commands hold a
     * kernel a while after the application released it, so the real program may still have it
     * attached when the application rebuilds (program.c waits for those). */
    _Atomic uint32_t live_kernels, app_kernels;
};

struct _cl_kernel {
    struct vast_object obj;
    cl_kernel real;
    cl_program program; /* retained */
    char name[256];
    struct vast_launch_kernel *launch; /* argument record (launch.c) */
    struct vast_variant_pool *variants; /* pooled real kernels of each variant (variant.c) */
    struct vast_plan_cache *plans;      /* the last partitioned launch's plan (partition.c; obj.lock) */
    cl_mem *image_args;  /* per argument: an image made from a virtual buffer, retained, or NULL
                          * (kernel.c, obj.lock); image_nargs entries */
    cl_uint image_nargs;
    _Atomic uint32_t app_refs; /* the application's references (clCreateKernel*, clRetainKernel) */
};

struct vast_event_callback;

/*
 * Events of virtual commands (command != 0) wrap a real user event of the shared context that
 * the executor completes; VAST keeps their status, times and callbacks itself (event.c).
 * times[] is written before `status` becomes CL_COMPLETE (release) and read only after.
 */
struct _cl_event {
    struct vast_object obj;
    cl_event real;
    cl_context context;     /* retained */
    cl_command_queue queue; /* retained; NULL for user events */
    cl_command_type command; /* virtual commands and user events: VAST keeps the status */
    bool timed;              /* virtual commands on a profiling queue: times[] is valid */
    cl_ulong times[4];       /* QUEUED, SUBMIT, START, END in ns (host monotonic clock) */
    _Atomic cl_int status;   /* virtual commands: CL_QUEUED .. CL_COMPLETE, or the error */
    struct vast_event_callback *callbacks; /* virtual commands: not yet run (obj.lock) */
};

/* Initialise the head: refcount 1, type `magic`. */
void vast_object_init(struct vast_object *obj, enum vast_magic magic, vast_destroy_fn destroy);

/* True when `handle` is a live VAST object of type `magic` (reads the head only). */
static inline bool vast_object_is(const void *handle, enum vast_magic magic)
{
    const struct vast_object *obj = handle;
    return obj != NULL && obj->dispatch == &vast_dispatch &&
           atomic_load_explicit(&obj->magic, memory_order_acquire) == (uint32_t)magic;
}

/* True when `handle` was made by VAST, alive or released (routing in LD_PRELOAD mode). */
static inline bool vast_object_is_own(const void *handle)
{
    return handle != NULL && ((const struct vast_object *)handle)->dispatch == &vast_dispatch;
}

void vast_object_retain(struct vast_object *obj);
/* Drops one reference; the last one calls the destructor and quarantines the memory. */
void vast_object_release(struct vast_object *obj);

#define VAST_RETAIN(h) vast_object_retain(&(h)->obj)
#define VAST_RELEASE(h) vast_object_release(&(h)->obj)

/* Allocate a zeroed object of `size` bytes (never freed before its quarantine ends). */
void *vast_object_alloc(size_t size);

/* The live-handle registry, for values that may or may not be handles (kernel arguments). */
void vast_registry_add(const void *handle);
void vast_registry_remove(const void *handle);
bool vast_registry_contains(const void *handle);

/* Count of live objects, for leak checks in tests. */
long vast_object_live_count(void);

#endif
