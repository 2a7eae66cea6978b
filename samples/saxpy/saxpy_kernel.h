/* saxpy_kernel.h - the saxpy sample's kernel (y = a * x + y; arguments x, y, float a, ulong n),
 * shared with tests/bench/xlat_bench.c so that the benchmark times exactly the sample's kernel. */
#ifndef VAST_SAMPLE_SAXPY_KERNEL_H
#define VAST_SAMPLE_SAXPY_KERNEL_H

static const char saxpy_source[] =
    "__kernel void saxpy(__global const float *x, __global float *y, float a, ulong n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n";

#endif
