/*
 * vendors.c: discovery of the real OpenCL platforms (see vendors.h). Search order: the
 * VAST_BACKEND library when it is a path; otherwise OCL_ICD_FILENAMES, the OCL_ICD_VENDORS
 * folder (or file), then /etc/OpenCL/vendors, all of them: with ICD mode tests pointing
 * OCL_ICD_VENDORS at a folder holding only vast.icd, the system folder is where the real
 * platform is found. A library is loaded once however often it is named.
 */
#include "vendors.h"

#include "../interpose/check.h"
#include "../base/driver.h"
#include "../base/log.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

bool vast_vendors_read_icd_file(const char *icd_path, char *library, size_t size)
{
    FILE *f = fopen(icd_path, "r");
    if (f == NULL)
        return false;
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char)s[n - 1]))
            s[--n] = '\0';
        if (n > 0 && n < size) {
            memcpy(library, s, n + 1);
            found = true;
        }
    }
    fclose(f);
    return found;
}

static void add_candidate(struct vast_candidates *out, const char *path)
{
    if (*path == '\0' || out->count == VAST_MAX_CANDIDATES || strlen(path) >= sizeof out->path[0])
        return;
    for (size_t i = 0; i < out->count; i++)
        if (!strcmp(out->path[i], path))
            return;
    strcpy(out->path[out->count++], path);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.icd file of a folder, in name order, or the file itself. */
static void add_icd_location(struct vast_candidates *out, const char *location)
{
    struct stat st;
    char library[512];
    if (location == NULL || stat(location, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        if (vast_vendors_read_icd_file(location, library, sizeof library))
            add_candidate(out, library);
        return;
    }
    DIR *dir = opendir(location);
    if (dir == NULL)
        return;
    char *names[VAST_MAX_CANDIDATES];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL && n < VAST_MAX_CANDIDATES;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && !strcmp(e->d_name + len - 4, ".icd"))
            names[n++] = strdup(e->d_name);
    }
    closedir(dir);
    qsort(names, n, sizeof names[0], compare_names);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        if (names[i] != NULL && snprintf(path, sizeof path, "%s/%s", location, names[i]) < (int)sizeof path &&
            vast_vendors_read_icd_file(path, library, sizeof library))
            add_candidate(out, library);
        free(names[i]);
    }
}

void vast_vendors_collect(const char *(*get)(const char *), const char *system_dir,
                          struct vast_candidates *out)
{
    out->count = 0;
    const char *files = get("OCL_ICD_FILENAMES");
    if (files != NULL) {
        char copy[4096];
        snprintf(copy, sizeof copy, "%s", files);
        for (char *save, *p = strtok_r(copy, ":", &save); p != NULL; p = strtok_r(NULL, ":", &save))
            add_candidate(out, p);
    }
    add_icd_location(out, get("OCL_ICD_VENDORS"));
    add_icd_location(out, system_dir);
}

bool vast_vendors_selector_is_path(const char *selector)
{
    return strchr(selector, '/') != NULL || strstr(selector, ".so") != NULL;
}

typedef cl_int (*icd_get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);

static unsigned parse_version(const char *text)
{
    unsigned major = 0, minor = 0;
    if (vast_cl_version(text, &major, &minor) != 0)
        return 12;
    return major * 10 + minor;
}

/* Slots of struct _cl_icd_dispatch that exist for a platform of OpenCL `version`. */
static size_t slots_for_version(unsigned version)
{
#define SLOT(name) (offsetof(struct _cl_icd_dispatch, name) / sizeof(void *))
    if (version < 20)
        return SLOT(clCreateCommandQueueWithProperties);
    if (version < 21)
        return SLOT(clGetKernelSubGroupInfoKHR) + 1;
    if (version < 22)
        return SLOT(clSetProgramReleaseCallback);
    if (version < 30)
        return SLOT(clCreateBufferWithProperties);
    return sizeof(struct _cl_icd_dispatch) / sizeof(void *);
#undef SLOT
}

static void platform_string(cl_platform_id p, cl_platform_info what, char *out, size_t size)
{
    const struct _cl_icd_dispatch *d = VAST_DISPATCH(p);
    out[0] = '\0';
    if (d->clGetPlatformInfo(p, what, size, out, NULL) != CL_SUCCESS)
        out[0] = '\0';
    out[size - 1] = '\0';
}

/* dlopen one vendor library and append its platforms (none when it is VAST or broken). */
static void load_library(const char *path, struct vast_backend **backends, size_t *n)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        vast_info("cannot load vendor library %s: %s", path, dlerror());
        return;
    }
    if (dlsym(handle, "vastIcdMarker") != NULL) {
        dlclose(handle);
        return; /* VAST itself: never wrap ourselves */
    }
    /* Like the ICD loaders: the symbol itself, else through clGetExtensionFunctionAddress
     * (PoCL exports only the latter). */
    icd_get_platforms_fn get = (icd_get_platforms_fn)(uintptr_t)dlsym(handle, "clIcdGetPlatformIDsKHR");
    void *(*get_address)(const char *) =
        (void *(*)(const char *))(uintptr_t)dlsym(handle, "clGetExtensionFunctionAddress");
    if (get == NULL && get_address != NULL)
        get = (icd_get_platforms_fn)(uintptr_t)get_address("clIcdGetPlatformIDsKHR");
    cl_uint count = 0;
    if (get == NULL || get(0, NULL, &count) != CL_SUCCESS || count == 0) {
        vast_info("vendor library %s offers no platform", path);
        return; /* kept loaded: it may be in use by the application through the loader */
    }
    cl_platform_id *ids = calloc(count, sizeof *ids);
    if (ids == NULL || get(count, ids, NULL) != CL_SUCCESS)
        count = 0;
    for (cl_uint i = 0; i < count; i++) {
        bool seen = false;
        for (size_t j = 0; j < *n; j++)
            seen |= (*backends)[j].real == ids[i];
        struct vast_backend *grown = seen ? NULL : realloc(*backends, (*n + 1) * sizeof **backends);
        if (grown == NULL)
            continue;
        *backends = grown;
        struct vast_backend *be = &grown[(*n)++];
        memset(be, 0, sizeof *be);
        be->real = ids[i];
        be->dispatch = VAST_DISPATCH(ids[i]);
        char version[128];
        platform_string(ids[i], CL_PLATFORM_VERSION, version, sizeof version);
        be->version = parse_version(version);
        be->dispatch_slots = slots_for_version(be->version);
        platform_string(ids[i], CL_PLATFORM_NAME, be->name, sizeof be->name);
        snprintf(be->library, sizeof be->library, "%s", path);
        vast_info("real platform '%s' (%s) from %s", be->name, version, path);
    }
    free(ids);
}

static const char *env_get(const char *name) { return getenv(name); }

static size_t add_devices(struct vast_backend *be, cl_device_type type,
                          struct vast_real_device **devices, size_t n)
{
    cl_uint count = 0;
    if (be->dispatch->clGetDeviceIDs(be->real, type, 0, NULL, &count) != CL_SUCCESS || count == 0)
        return n;
    cl_device_id *ids = calloc(count, sizeof *ids);
    struct vast_real_device *grown = realloc(*devices, (n + count) * sizeof **devices);
    if (ids == NULL || grown == NULL) {
        free(ids);
        if (grown != NULL)
            *devices = grown;
        return n;
    }
    *devices = grown;
    if (be->dispatch->clGetDeviceIDs(be->real, type, count, ids, NULL) == CL_SUCCESS)
        for (cl_uint i = 0; i < count; i++)
            grown[n++] = (struct vast_real_device){be, ids[i]};
    free(ids);
    return n;
}

size_t vast_vendors_discover(const char *selector, struct vast_backend **backends,
                             size_t *num_backends, struct vast_real_device **devices)
{
    *backends = NULL;
    *num_backends = 0;
    *devices = NULL;
    bool by_path = selector[0] != '\0' && vast_vendors_selector_is_path(selector);
    if (by_path) {
        load_library(selector, backends, num_backends);
    } else {
        struct vast_candidates c;
        vast_vendors_collect(env_get, "/etc/OpenCL/vendors", &c);
        for (size_t i = 0; i < c.count; i++)
            load_library(c.path[i], backends, num_backends);
    }
    size_t n = 0;
    if (selector[0] != '\0' && !by_path) {
        for (size_t i = 0; i < *num_backends; i++)
            if (strcasestr((*backends)[i].name, selector) != NULL)
                n = add_devices(&(*backends)[i], CL_DEVICE_TYPE_ALL, devices, n);
    } else if (by_path) {
        for (size_t i = 0; i < *num_backends; i++)
            n = add_devices(&(*backends)[i], CL_DEVICE_TYPE_ALL, devices, n);
    } else {
        for (size_t i = 0; i < *num_backends; i++)
            n = add_devices(&(*backends)[i], CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR, devices, n);
        if (n == 0) /* no GPU anywhere: wrap the CPU (and other) devices */
            for (size_t i = 0; i < *num_backends; i++)
                n = add_devices(&(*backends)[i], CL_DEVICE_TYPE_ALL, devices, n);
    }
    if (n == 0)
        vast_warn("no real OpenCL device to wrap (VAST_BACKEND='%s', %zu real platform(s) found): "
                  "the VAST platform is hidden", selector, *num_backends);
    return n;
}
