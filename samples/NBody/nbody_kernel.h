/* nbody_kernel.h - the NBody sample's kernel (the SDK's integrateBodies: arguments newPos,
 * newVel, oldPos, oldVel, float dt, float damping, float softening2, ulong n; work-groups of
 * LOCAL), shared with tests/unit/translate/test_affine.c so that the test plans exactly the
 * sample's kernel. */
#ifndef VAST_SAMPLE_NBODY_KERNEL_H
#define VAST_SAMPLE_NBODY_KERNEL_H

#define LOCAL 64

static const char nbody_source[] =
    "#define LOCAL 64\n"
    "__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1)))\n"
    "void integrateBodies(__global float4 *newPos, __global float4 *newVel,\n"
    "                     __global const float4 *oldPos, __global const float4 *oldVel,\n"
    "                     float dt, float damping, float softening2, ulong n)\n"
    "{\n"
    "    __local float4 tile[LOCAL];\n"
    "    size_t i = get_global_id(0), lid = get_local_id(0);\n"
    "    size_t tiles = n / LOCAL, start = get_group_id(0);\n"
    "    float4 pos = oldPos[i];\n"
    "    float3 acc = (float3)(0.0f, 0.0f, 0.0f);\n"
    "    for (size_t t = 0; t < tiles; t++) {\n"
    "        size_t tt = (t + start) % tiles;\n"
    "        tile[lid] = oldPos[tt * LOCAL + lid];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int j = 0; j < LOCAL; j++) {\n"
    "            float4 other = tile[j];\n"
    "            float3 r = other.xyz - pos.xyz;\n"
    "            float d2 = r.x * r.x + r.y * r.y + r.z * r.z + softening2;\n"
    "            float inv = rsqrt(d2);\n"
    "            float s = other.w * (inv * inv * inv);\n"
    "            acc += r * s;\n"
    "        }\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    float4 vel = oldVel[i];\n"
    "    vel.xyz = (vel.xyz + acc * dt) * damping;\n"
    "    pos.xyz = pos.xyz + vel.xyz * dt;\n"
    "    newPos[i] = pos;\n"
    "    newVel[i] = vel;\n"
    "}\n";

#endif
