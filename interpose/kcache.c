/*
 * kcache.c: see kcache.h. Principal entry points: vast_kcache_translate, vast_kcache_build.
 * See also base/diskcache.c (the folder's rules), translate/serial.c (the translation's bytes),
 * variant.c (the one caller).
 */
#include "kcache.h"

#include "../base/clock.h"
#include "../base/config.h"
#include "../base/diskcache.h"
#include "../base/log.h"
#include "platform.h"
#include "translate.h"

#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_ulong translate_hits, translations, binary_hits, binary_rejected, source_builds, stored;
static atomic_ullong build_ns; /* time in translations and builds, cache lookups included */

/* ---- Keys ------------------------------------------------------------------------------- */

static const char *build_id_hex(void);

static struct {
    char hex[2 * 64 + 1];
} vast_build;

static int find_build_id(struct dl_phdr_info *info, size_t size, void *unused)
{
    (void)size;
    (void)unused;
    uintptr_t self = (uintptr_t)&build_id_hex;
    bool mine = false;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        mine = ph->p_type == PT_LOAD && self >= lo && self < lo + ph->p_memsz;
    }
    for (int i = 0; mine && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n, *desc = name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 && n->n_descsz <= 64) {
                for (unsigned b = 0; b < n->n_descsz; b++)
                    snprintf(vast_build.hex + 2 * b, 3, "%02x", (unsigned char)desc[b]);
                return 1;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return mine;
}

static void find_build(void)
{
    dl_iterate_phdr(find_build_id, NULL);
    if (vast_build.hex[0] == '\0') /* no build id: this compilation's time still changes with VAST */
        snprintf(vast_build.hex, sizeof vast_build.hex, "built %s %s", __DATE__, __TIME__);
}

/* This build of VAST: its ELF build id, a hash of the library's contents. */
static const char *build_id_hex(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_build);
    return vast_build.hex;
}

static void hash_device_info(struct vast_sha256 *h, cl_device_id dev, cl_device_info param)
{
    size_t size = 0;
    char *v = vast_real_device_info(dev->backend, dev->real, param, &size);
    vast_sha256_str(h, v != NULL ? v : "?");
    free(v);
}

static void hash_platform_info(struct vast_sha256 *h, struct vast_backend *be, cl_platform_info param)
{
    char v[512] = "?";
    if (be->dispatch->clGetPlatformInfo(be->real, param, sizeof v - 1, v, NULL) != CL_SUCCESS)
        snprintf(v, sizeof v, "?");
    vast_sha256_str(h, v);
}

/* A key's common part: what the device, its driver and this VAST are. */
static void key_start(struct vast_sha256 *h, cl_device_id dev, const char *kind)
{
    vast_sha256_init(h);
    vast_sha256_str(h, "VAST kernel cache 1");
    vast_sha256_str(h, kind);
    vast_sha256_str(h, build_id_hex());
    uint64_t abi = TRANSLATE_ABI_VERSION;
    vast_sha256_update(h, &abi, sizeof abi);
    hash_device_info(h, dev, CL_DEVICE_NAME);
    hash_device_info(h, dev, CL_DEVICE_VENDOR);
    hash_device_info(h, dev, CL_DEVICE_VERSION);
    hash_device_info(h, dev, CL_DRIVER_VERSION);
    hash_platform_info(h, dev->backend, CL_PLATFORM_NAME);
    hash_platform_info(h, dev->backend, CL_PLATFORM_VERSION);
    vast_sha256_str(h, dev->backend->library);
}

/* ---- Translations ----------------------------------------------------------------------- */

int vast_kcache_translate(cl_device_id dev, const char *source, const struct translate_options *opts,
                          struct translate_result **out)
{
    uint64_t t0 = vast_now_ns();
    const struct vast_diskcache *c = vast_diskcache_default();
    uint8_t key[VAST_SHA256_BYTES];
    if (c != NULL) {
        struct vast_sha256 h;
        key_start(&h, dev, "translation");
        vast_sha256_str(&h, source);
        vast_sha256_str(&h, opts->build_options);
        vast_sha256_str(&h, opts->device_extensions);
        vast_sha256_update(&h, &opts->image_support, sizeof opts->image_support);
        vast_sha256_str(&h, opts->source_name);
        vast_sha256_final(&h, key);
        size_t len = 0;
        void *data = vast_diskcache_get(c, key, &len);
        int rc = data != NULL ? translate_result_unpack(data, len, out) : -1;
        free(data);
        if (rc == 0) {
            atomic_fetch_add(&translate_hits, 1);
            atomic_fetch_add(&build_ns, vast_now_ns() - t0);
            return (*out)->error != NULL ? -1 : 0;
        }
    }
    int rc = translate_program(source, opts, out);
    atomic_fetch_add(&translations, 1);
    size_t len = 0;
    void *data = c != NULL && *out != NULL ? translate_result_pack(*out, &len) : NULL;
    if (data != NULL && vast_diskcache_put(c, key, data, len))
        atomic_fetch_add(&stored, 1);
    free(data);
    atomic_fetch_add(&build_ns, vast_now_ns() - t0);
    return rc;
}

/* ---- Binaries --------------------------------------------------------------------------- */

static void binary_key(cl_device_id dev, const char *src, const char *options, uint8_t key[VAST_SHA256_BYTES])
{
    struct vast_sha256 h;
    key_start(&h, dev, "binary");
    vast_sha256_str(&h, src);
    vast_sha256_str(&h, options);
    vast_sha256_final(&h, key);
}

/* The program's binary for dev (malloc'ed), or NULL. */
static unsigned char *program_binary(struct vast_backend *be, cl_program p, cl_device_id dev, size_t *len)
{
    cl_uint n = 0;
    if (be->dispatch->clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, NULL) != CL_SUCCESS || n == 0)
        return NULL;
    cl_device_id *devs = calloc(n, sizeof *devs);
    size_t *sizes = calloc(n, sizeof *sizes);
    unsigned char **bins = calloc(n, sizeof *bins);
    unsigned char *bin = NULL;
    cl_uint at = n;
    if (devs != NULL && sizes != NULL && bins != NULL &&
        be->dispatch->clGetProgramInfo(p, CL_PROGRAM_DEVICES, n * sizeof *devs, devs, NULL) == CL_SUCCESS &&
        be->dispatch->clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, n * sizeof *sizes, sizes, NULL) == CL_SUCCESS)
        for (at = 0; at < n && devs[at] != dev->real; at++)
            ;
    if (at < n && sizes[at] > 0 && (bin = malloc(sizes[at])) != NULL) {
        bins[at] = bin; /* NULL entries: the driver skips those devices */
        if (be->dispatch->clGetProgramInfo(p, CL_PROGRAM_BINARIES, n * sizeof *bins, bins, NULL) != CL_SUCCESS) {
            free(bin);
            bin = NULL;
        }
        *len = sizes[at];
    }
    free(devs);
    free(sizes);
    free(bins);
    return bin;
}

static cl_program build_binary(struct vast_backend *be, cl_device_id dev, const unsigned char *bin, size_t len,
                               const char *options)
{
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program p = be->dispatch->clCreateProgramWithBinary(be->shared, 1, &dev->real, &len, &bin, &status, &err);
    if (p != NULL && (status != CL_SUCCESS || be->dispatch->clBuildProgram(p, 1, &dev->real, options, NULL, NULL) !=
                                                  CL_SUCCESS)) {
        be->dispatch->clReleaseProgram(p);
        p = NULL;
    }
    return p;
}

/* Whether binaries of dev's programs are kept (VAST_CACHE_BINARIES). auto: not on PoCL, whose
 * CL_PROGRAM_BINARIES compiles every kernel of the program (a generic work-group function each)
 * holding the program's lock, which clCreateKernel needs too: minutes for CLBlast's large
 * programs (xtrsm's paged variant), while PoCL's own cache (POCL_CACHE_DIR) already keeps the
 * front end's output and every kernel it compiled, so a second process builds little anyway. */
static bool keeps_binaries(cl_device_id dev)
{
    switch (vast_config_get()->cache_binaries) {
    case VAST_AUTOBOOL_ON: return true;
    case VAST_AUTOBOOL_OFF: return false;
    default: return strstr(dev->backend->name, "Portable Computing Language") == NULL;
    }
}

cl_program vast_kcache_build(cl_device_id dev, const char *src, const char *options, cl_int *status, bool *store)
{
    uint64_t t0 = vast_now_ns();
    struct vast_backend *be = dev->backend;
    const struct vast_diskcache *c = keeps_binaries(dev) ? vast_diskcache_default() : NULL;
    cl_program p = NULL;
    if (c != NULL) {
        uint8_t key[VAST_SHA256_BYTES];
        binary_key(dev, src, options, key);
        size_t len = 0;
        unsigned char *bin = vast_diskcache_get(c, key, &len);
        p = bin != NULL ? build_binary(be, dev, bin, len, options) : NULL;
        if (bin != NULL)
            atomic_fetch_add(p != NULL ? &binary_hits : &binary_rejected, 1);
        if (bin != NULL && p == NULL)
            vast_info("the driver rejected a cached program binary: building from source");
        free(bin);
    }
    *status = CL_SUCCESS;
    *store = false;
    if (p == NULL) {
        p = be->dispatch->clCreateProgramWithSource(be->shared, 1, &src, NULL, status);
        if (p != NULL)
            *status = be->dispatch->clBuildProgram(p, 1, &dev->real, options, NULL, NULL);
        atomic_fetch_add(&source_builds, 1);
        *store = *status == CL_SUCCESS && c != NULL;
    }
    atomic_fetch_add(&build_ns, vast_now_ns() - t0);
    return p;
}

void vast_kcache_store(cl_device_id dev, const char *src, const char *options, cl_program p)
{
    const struct vast_diskcache *c = vast_diskcache_default();
    size_t len = 0;
    unsigned char *bin = c != NULL ? program_binary(dev->backend, p, dev, &len) : NULL;
    uint8_t key[VAST_SHA256_BYTES];
    if (bin != NULL) {
        binary_key(dev, src, options, key);
        if (vast_diskcache_put(c, key, bin, len))
            atomic_fetch_add(&stored, 1);
    }
    free(bin);
}

void vast_kcache_stats_print(FILE *out, uint64_t critical_ns)
{
    unsigned long th = atomic_load(&translate_hits), tr = atomic_load(&translations), bh = atomic_load(&binary_hits),
                  br = atomic_load(&binary_rejected), sb = atomic_load(&source_builds), st = atomic_load(&stored);
    if (th + tr + bh + br + sb == 0)
        return;
    const struct vast_diskcache *c = vast_diskcache_default();
    fprintf(out,
            "vast: stats: cache=\"%s\" translation_hits=%lu translations=%lu binary_hits=%lu source_builds=%lu "
            "binary_rejected=%lu stored=%lu build_s=%.6f critical_s=%.6f\n",
            c != NULL ? c->dir : "off", th, tr, bh, sb, br, st, atomic_load(&build_ns) * 1e-9, critical_ns * 1e-9);
}
