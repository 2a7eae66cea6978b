/* matrixmul_kernel.h - the MatrixMul sample's kernel (C = A x B, A rows x n, B n x n, BS x BS
 * tiles; arguments C, A, B, ulong rows, ulong n), shared with tests/bench/xlat_bench.c so that
 * the benchmark times exactly the sample's kernel. */
#ifndef VAST_SAMPLE_MATRIXMUL_KERNEL_H
#define VAST_SAMPLE_MATRIXMUL_KERNEL_H

#define BS 16

static const char matrixmul_source[] =
    "#define BS 16\n"
    "__kernel __attribute__((reqd_work_group_size(BS, BS, 1)))\n"
    "void matrixMul(__global float *C, __global const float *A, __global const float *B,\n"
    "               ulong rows, ulong n)\n"
    "{\n"
    "    __local float As[BS][BS];\n"
    "    __local float Bs[BS][BS];\n"
    "    size_t tx = get_local_id(0), ty = get_local_id(1);\n"
    "    size_t col = get_global_id(0), row = get_global_id(1);\n"
    "    float sum = 0.0f;\n"
    "    for (size_t t = 0; t < n; t += BS) {\n"
    "        As[ty][tx] = (row < rows && t + tx < n) ? A[row * n + t + tx] : 0.0f;\n"
    "        Bs[ty][tx] = (t + ty < n && col < n) ? B[(t + ty) * n + col] : 0.0f;\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int k = 0; k < BS; k++)\n"
    "            sum += As[ty][k] * Bs[k][tx];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (row < rows && col < n)\n"
    "        C[row * n + col] = sum;\n"
    "}\n";

#endif
