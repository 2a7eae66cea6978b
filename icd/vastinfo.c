/*
 * vastinfo: prints what VAST sees and why: its configuration (every VAST_* variable with its
 * effective value), the real platforms it found and the virtual devices it offers.
 * `vastinfo --config-markdown` prints the configuration table the README carries.
 */
#include "../interpose/api.h"
#include "../base/config.h"
#include "icd.h"

#include <stdio.h>
#include <string.h>

static void print_device(cl_device_id device)
{
    char name[512] = "";
    cl_ulong global = 0, max_alloc = 0;
    vast_clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL);
    vast_clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL);
    vast_clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    printf("  %s\n    real platform: %s (%s)\n    global memory %.2f GiB, max allocation %.2f GiB\n", name,
           device->backend->name, device->backend->library, global / 1073741824.0, max_alloc / 1073741824.0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--config-markdown")) {
        vast_config_print(vast_config_get(), stdout, true);
        return 0;
    }
    printf("VAST configuration:\n");
    vast_config_print(vast_config_get(), stdout, false);
    const struct vast_backend *backends;
    size_t nb = vast_icd_backends(&backends);
    printf("\nReal platforms found (%zu):\n", nb);
    for (size_t i = 0; i < nb; i++)
        printf("  %s  OpenCL %u.%u  %s\n", backends[i].name, backends[i].version / 10, backends[i].version % 10,
               backends[i].library);
    cl_device_id *devices;
    size_t nd = vast_platform_devices(&devices), shown = 0;
    for (size_t i = 0; i < nd; i++)
        shown += devices[i]->merged_into == NULL;
    printf("\nVirtual devices of the VAST platform (%zu):\n", shown);
    for (size_t i = 0; i < nd; i++) {
        if (devices[i]->merged_into != NULL) /* VAST_MERGE_DEVICES: listed under its merged device */
            continue;
        print_device(devices[i]);
        for (cl_uint k = 0; k < devices[i]->num_members; k++)
            printf("    runs launches on: %s\n", devices[i]->members[k]->name);
    }
    if (nd == 0)
        printf("  none: the VAST platform is hidden (see VAST_BACKEND, OCL_ICD_VENDORS, /etc/OpenCL/vendors)\n");
    return 0;
}
