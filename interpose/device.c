/*
 * device.c: virtual devices. Each wraps one real device; queries are answered by the real
 * device except where VAST changes what the application sees (name, platform, parent,
 * reference count, and the extensions: only those that need no host-side function VAST
 * lacks). Root devices live as long as the library; sub-devices are reference counted and
 * kept in a list so that real handles met in queries map back to VAST's.
 */
#include "api.h"
#include "check.h"
#include "platform.h"
#include "vbuf.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t sub_lock = PTHREAD_MUTEX_INITIALIZER;
static cl_device_id *sub_devices;
static size_t num_sub_devices, cap_sub_devices;

static void device_set_name(struct _cl_device_id *dev)
{
    size_t size = 0;
    char *real_name = vast_real_device_info(dev->backend, dev->real, CL_DEVICE_NAME, &size);
    snprintf(dev->name, sizeof dev->name, "VAST: %s", real_name ? real_name : "device");
    free(real_name);
    cl_device_type *type = vast_real_device_info(dev->backend, dev->real, CL_DEVICE_TYPE, &size);
    dev->type = type ? *type : CL_DEVICE_TYPE_DEFAULT;
    free(type);
    const struct _cl_icd_dispatch *d = dev->backend->dispatch;
    cl_uint align_bits = 1024;
    d->clGetDeviceInfo(dev->real, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof dev->real_max_alloc, &dev->real_max_alloc, NULL);
    d->clGetDeviceInfo(dev->real, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof dev->real_global_mem, &dev->real_global_mem, NULL);
    d->clGetDeviceInfo(dev->real, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    dev->base_align_bytes = align_bits / 8 ? align_bits / 8 : 1;
}

void vast_device_init_root(struct _cl_device_id *dev, struct vast_backend *be, cl_device_id real)
{
    vast_object_init(&dev->obj, VAST_MAGIC_DEVICE, NULL);
    dev->real = real;
    dev->backend = be;
    dev->is_root = true;
    device_set_name(dev);
}

void vast_device_merge(struct _cl_device_id *dev, struct _cl_device_id **members, cl_uint n)
{
    dev->members = members;
    dev->num_members = n;
    for (cl_uint i = 1; i < n; i++)
        members[i]->merged_into = dev;
    char real_name[sizeof dev->name - 16];
    snprintf(real_name, sizeof real_name, "%s", dev->name + strlen("VAST: "));
    snprintf(dev->name, sizeof dev->name, "VAST: %u x %s", n % 1000, real_name);
}

void *vast_real_device_info(struct vast_backend *be, cl_device_id real, cl_device_info param, size_t *size)
{
    *size = 0;
    if (be->dispatch->clGetDeviceInfo(real, param, 0, NULL, size) != CL_SUCCESS)
        return NULL;
    char *value = calloc(1, *size + 1);
    if (value != NULL && be->dispatch->clGetDeviceInfo(real, param, *size, value, NULL) != CL_SUCCESS) {
        free(value);
        value = NULL;
    }
    return value;
}

cl_device_id vast_device_from_real(cl_device_id real)
{
    cl_device_id *roots;
    size_t n = vast_platform_devices(&roots);
    for (size_t i = 0; i < n; i++)
        if (roots[i]->real == real)
            return roots[i];
    cl_device_id found = NULL;
    pthread_mutex_lock(&sub_lock);
    for (size_t i = 0; i < num_sub_devices && found == NULL; i++)
        if (sub_devices[i]->real == real)
            found = sub_devices[i];
    pthread_mutex_unlock(&sub_lock);
    return found;
}

cl_int vast_clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type, cl_uint num_entries,
                           cl_device_id *devices, cl_uint *num_devices)
{
    if (platform == NULL)
        platform = vast_platform_get();
    VAST_CHECK(platform, VAST_MAGIC_PLATFORM, CL_INVALID_PLATFORM);
    VAST_RETURN_IF((num_entries == 0 && devices != NULL) || (devices == NULL && num_devices == NULL),
                   CL_INVALID_VALUE, "num_entries %u, devices %p, num_devices %p", num_entries,
                   (void *)devices, (void *)num_devices);
    const cl_device_type known = CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR |
                                 CL_DEVICE_TYPE_CUSTOM | CL_DEVICE_TYPE_DEFAULT;
    VAST_RETURN_IF(device_type != CL_DEVICE_TYPE_ALL && (device_type & ~known) != 0, CL_INVALID_DEVICE_TYPE,
                   "device_type 0x%llx", (unsigned long long)device_type);
    cl_device_id *roots;
    size_t n = vast_platform_devices(&roots);
    cl_uint found = 0;
    for (size_t i = 0; i < n; i++) {
        if (roots[i]->merged_into != NULL) /* runs the merged device's launches only */
            continue;
        bool match = device_type == CL_DEVICE_TYPE_ALL || (roots[i]->type & device_type) != 0 ||
                     (device_type == CL_DEVICE_TYPE_DEFAULT && i == 0);
        if (match && devices != NULL && found < num_entries)
            devices[found] = roots[i];
        found += match;
    }
    if (num_devices != NULL)
        *num_devices = found;
    return found > 0 ? CL_SUCCESS : CL_DEVICE_NOT_FOUND;
}

/* Extensions that need no host-side entry point VAST does not provide. */
static bool extension_is_kept(const char *name, size_t len)
{
    static const char *const prefixes[] = {
        "cl_khr_fp", "cl_khr_int64", "cl_khr_global_int32", "cl_khr_local_int32",
        "cl_khr_byte_addressable_store", "cl_khr_3d_image_writes", "cl_khr_image2d_from_buffer",
        "cl_khr_depth_images", "cl_khr_subgroup", "cl_khr_extended_versioning", "cl_khr_device_uuid",
        "cl_khr_pci_bus_info", "cl_khr_integer_dot_product", "cl_khr_expect_assume",
        "cl_khr_spirv_", "cl_khr_work_group_uniform_arithmetic", "cl_khr_priority_hints",
        "cl_khr_throttle_hints", "cl_khr_mipmap_image", "cl_khr_srgb_image_writes",
        "cl_khr_kernel_clock", "cl_nv_pragma_unroll", "cl_nv_compiler_options",
        "cl_nv_device_attribute_query", "cl_amd_device_attribute_query", "cl_intel_subgroups",
        "cl_intel_required_subgroup_size", "cl_khr_icd",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t plen = strlen(prefixes[i]);
        if (len >= plen && !strncmp(name, prefixes[i], plen))
            return true;
    }
    return false;
}

static cl_int answer_extensions(struct _cl_device_id *dev, size_t size, void *value, size_t *ret)
{
    size_t real_size;
    char *all = vast_real_device_info(dev->backend, dev->real, CL_DEVICE_EXTENSIONS, &real_size);
    VAST_RETURN_IF(all == NULL, CL_OUT_OF_HOST_MEMORY, "no extension string from the real device");
    char *kept = calloc(1, real_size + 1);
    size_t k = 0;
    for (char *p = all; kept != NULL && *p;) {
        size_t len = strcspn(p, " ");
        if (len > 0 && extension_is_kept(p, len)) {
            memcpy(kept + k, p, len);
            k += len;
            kept[k++] = ' ';
        }
        p += len;
        p += strspn(p, " ");
    }
    cl_int err = kept ? vast_info_answer(kept, k + 1, size, value, ret) : CL_OUT_OF_HOST_MEMORY;
    free(kept);
    free(all);
    return err;
}

static cl_int answer_extensions_versioned(struct _cl_device_id *dev, size_t size, void *value, size_t *ret)
{
    size_t real_size;
    cl_name_version *all = vast_real_device_info(dev->backend, dev->real, CL_DEVICE_EXTENSIONS_WITH_VERSION, &real_size);
    VAST_RETURN_IF(all == NULL, CL_INVALID_VALUE, "the real device has no CL_DEVICE_EXTENSIONS_WITH_VERSION");
    size_t k = 0;
    for (size_t i = 0; i < real_size / sizeof *all; i++)
        if (extension_is_kept(all[i].name, strnlen(all[i].name, sizeof all[i].name)))
            all[k++] = all[i];
    cl_int err = vast_info_answer(all, k * sizeof *all, size, value, ret);
    free(all);
    return err;
}

cl_int vast_clGetDeviceInfo(cl_device_id device, cl_device_info param_name, size_t param_value_size,
                            void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(device, VAST_MAGIC_DEVICE, CL_INVALID_DEVICE);
    cl_platform_id platform = vast_platform_get();
    cl_uint refs = device->is_root ? 1 : atomic_load(&device->obj.refcount);
    switch (param_name) {
    case CL_DEVICE_NAME:
        return vast_info_answer(device->name, strlen(device->name) + 1, param_value_size, param_value, param_value_size_ret);
    case CL_DEVICE_PLATFORM:
        return vast_info_answer(&platform, sizeof platform, param_value_size, param_value, param_value_size_ret);
    case CL_DEVICE_PARENT_DEVICE:
        return vast_info_answer(&device->parent, sizeof device->parent, param_value_size, param_value, param_value_size_ret);
    case CL_DEVICE_REFERENCE_COUNT:
        return vast_info_answer(&refs, sizeof refs, param_value_size, param_value, param_value_size_ret);
    case CL_DEVICE_EXTENSIONS:
        return answer_extensions(device, param_value_size, param_value, param_value_size_ret);
    case CL_DEVICE_EXTENSIONS_WITH_VERSION:
        return answer_extensions_versioned(device, param_value_size, param_value, param_value_size_ret);
    case CL_DEVICE_PARTITION_PROPERTIES:
    case CL_DEVICE_PARTITION_AFFINITY_DOMAIN:
        if (device->is_root) { /* not partitioned: see vast_clCreateSubDevices */
            cl_bitfield none = 0;
            return vast_info_answer(&none, sizeof none, param_value_size, param_value, param_value_size_ret);
        }
        __attribute__((fallthrough));
    case CL_DEVICE_GLOBAL_MEM_SIZE:
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
        if (device->is_root) { /* virtual buffers: as large as the host can back */
            cl_ulong bytes = vast_virtual_memory_bytes();
            return vast_info_answer(&bytes, sizeof bytes, param_value_size, param_value, param_value_size_ret);
        }
        __attribute__((fallthrough)); /* sub-devices' contexts keep real buffers */
    case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
        if (device->is_root) { /* launches take uniform work-groups (launch.c, vast_launch_capture) */
            cl_bool no = CL_FALSE;
            return vast_info_answer(&no, sizeof no, param_value_size, param_value, param_value_size_ret);
        }
        __attribute__((fallthrough));
    case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES:
    case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES:
    case CL_DEVICE_MAX_ON_DEVICE_QUEUES:
        if (device->is_root) { /* kernels enqueued by kernels could not see virtual buffers */
            cl_bitfield none = 0;
            size_t bytes = param_name == CL_DEVICE_MAX_ON_DEVICE_QUEUES ? sizeof(cl_uint) : sizeof none;
            return vast_info_answer(&none, bytes, param_value_size, param_value, param_value_size_ret);
        }
        __attribute__((fallthrough));
    case CL_DEVICE_MAX_COMPUTE_UNITS:
        if (device->num_members > 1) { /* a merged device: its members' together */
            cl_uint sum = 0, units;
            for (cl_uint i = 0; i < device->num_members; i++) {
                const struct _cl_icd_dispatch *d = device->members[i]->backend->dispatch;
                if (d->clGetDeviceInfo(device->members[i]->real, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units,
                                       NULL) == CL_SUCCESS)
                    sum += units;
            }
            return vast_info_answer(&sum, sizeof sum, param_value_size, param_value, param_value_size_ret);
        }
        __attribute__((fallthrough));
    default:
        VAST_PASS(device->backend, device->real, clGetDeviceInfo, device->real, param_name, param_value_size,
                  param_value, param_value_size_ret);
    }
}

static void sub_device_destroy(struct vast_object *obj)
{
    struct _cl_device_id *dev = (struct _cl_device_id *)obj;
    pthread_mutex_lock(&sub_lock);
    for (size_t i = 0; i < num_sub_devices; i++)
        if (sub_devices[i] == dev) {
            sub_devices[i] = sub_devices[--num_sub_devices];
            break;
        }
    pthread_mutex_unlock(&sub_lock);
    dev->backend->dispatch->clReleaseDevice(dev->real);
    if (!dev->parent->is_root)
        VAST_RELEASE(dev->parent);
}

static cl_device_id sub_device_wrap(cl_device_id parent, cl_device_id real)
{
    struct _cl_device_id *dev = vast_object_alloc(sizeof *dev);
    pthread_mutex_lock(&sub_lock);
    if (dev != NULL && num_sub_devices == cap_sub_devices) {
        size_t cap = cap_sub_devices ? 2 * cap_sub_devices : 16;
        cl_device_id *grown = realloc(sub_devices, cap * sizeof *grown);
        if (grown != NULL) {
            sub_devices = grown;
            cap_sub_devices = cap;
        }
    }
    if (dev == NULL || num_sub_devices == cap_sub_devices) {
        pthread_mutex_unlock(&sub_lock);
        free(dev);
        return NULL;
    }
    vast_object_init(&dev->obj, VAST_MAGIC_DEVICE, sub_device_destroy);
    dev->real = real;
    dev->backend = parent->backend;
    dev->parent = parent;
    if (!parent->is_root)
        VAST_RETAIN(parent);
    device_set_name(dev);
    sub_devices[num_sub_devices++] = dev;
    pthread_mutex_unlock(&sub_lock);
    return dev;
}

cl_int vast_clCreateSubDevices(cl_device_id in_device, const cl_device_partition_property *properties,
                               cl_uint num_entries, cl_device_id *out_devices, cl_uint *num_devices)
{
    VAST_CHECK(in_device, VAST_MAGIC_DEVICE, CL_INVALID_DEVICE);
    /* A virtual device is not partitioned (CL_DEVICE_PARTITION_PROPERTIES is {0}): its
     * sub-devices would have to share its page cache and executor, yet launch on real queues
     * of the real sub-device, which the shared real context of the page cache does not hold
     * (interpose/README.md "Several devices"). The specification's code for a partitioning
     * the device does not support is CL_INVALID_VALUE. */
    VAST_RETURN_IF(in_device->is_root, CL_INVALID_VALUE,
                   "%s cannot be partitioned (CL_DEVICE_PARTITION_PROPERTIES is empty)", in_device->name);
    cl_api_clCreateSubDevices fn = VAST_REAL(in_device->backend, in_device->real, clCreateSubDevices);
    VAST_RETURN_IF(fn == NULL, CL_INVALID_OPERATION, "the real platform cannot partition devices");
    cl_device_id *reals = out_devices ? calloc(num_entries ? num_entries : 1, sizeof *reals) : NULL;
    VAST_RETURN_IF(out_devices != NULL && reals == NULL, CL_OUT_OF_HOST_MEMORY, "sub-device list");
    cl_uint n = 0;
    cl_int err = fn(in_device->real, properties, num_entries, reals, &n);
    if (num_devices != NULL)
        *num_devices = n;
    for (cl_uint i = 0; err == CL_SUCCESS && out_devices != NULL && i < n && i < num_entries; i++) {
        out_devices[i] = sub_device_wrap(in_device, reals[i]);
        if (out_devices[i] == NULL) {
            for (cl_uint j = i; j < n && j < num_entries; j++)
                in_device->backend->dispatch->clReleaseDevice(reals[j]);
            while (i > 0)
                VAST_RELEASE(out_devices[--i]);
            err = CL_OUT_OF_HOST_MEMORY;
        }
    }
    free(reals);
    return err;
}

cl_int vast_clRetainDevice(cl_device_id device)
{
    VAST_CHECK(device, VAST_MAGIC_DEVICE, CL_INVALID_DEVICE);
    if (!device->is_root)
        VAST_RETAIN(device);
    return CL_SUCCESS;
}

cl_int vast_clReleaseDevice(cl_device_id device)
{
    VAST_CHECK(device, VAST_MAGIC_DEVICE, CL_INVALID_DEVICE);
    if (!device->is_root)
        VAST_RELEASE(device);
    return CL_SUCCESS;
}

cl_int vast_clGetDeviceAndHostTimer(cl_device_id device, cl_ulong *device_timestamp, cl_ulong *host_timestamp)
{
    VAST_CHECK(device, VAST_MAGIC_DEVICE, CL_INVALID_DEVICE);
    VAST_PASS(device->backend, device->real, clGetDeviceAndHostTimer, device->real, device_timestamp, host_timestamp);
}

cl_int vast_clGetHostTimer(cl_device_id device, cl_ulong *host_timestamp)
{
    VAST_CHECK(device, VAST_MAGIC_DEVICE, CL_INVALID_DEVICE);
    VAST_PASS(device->backend, device->real, clGetHostTimer, device->real, host_timestamp);
}
