// membw_read: the device's memory read bandwidth, for the decode roofline
// (benchmarks/bench_vulkan_membw.cpp; not a model kernel). The library's kernel
// interface (common.glsl): buffers data (uvec4s, one chunk), sum; p: n (uvec4s in this
// chunk), base (the chunk's first uvec4 in the whole buffer). The binding offsets
// pc.o[] are whole uvec4s (multiples of 4 words).
//   default: each invocation sums uvec4s in a grid-stride loop, the group adds its
//            invocations' sums in shared memory and one atomicAdd to sum[0]
//            (32-bit wrap: the host checks the total against Hash()'s).
//   -DMEMBW_FILL: writes word w of the whole buffer as Hash(w) (data the memory
//            cannot compress, unlike a constant fill).
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer BD { uvec4 data[]; };
layout(set = 0, binding = 1) buffer BS { uint sum[]; };

uint Hash(uint x) {  // lowbias32 (must match the host's)
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

#ifndef MEMBW_FILL
shared uint partial[256];
#endif

void main() {
  const uint n = U(0), base = U(1), d0 = pc.o[0] / 4u;
  const uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u;
  const uint first = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
#ifdef MEMBW_FILL
  for (uint i = first; i < n; i += stride) {
    const uint w = (base + i) * 4u;
    data[d0 + i] = uvec4(Hash(w), Hash(w + 1u), Hash(w + 2u), Hash(w + 3u));
  }
#else
  uvec4 acc = uvec4(0u);
  for (uint i = first; i < n; i += stride) acc += data[d0 + i];
  partial[gl_LocalInvocationID.x] = acc.x + acc.y + acc.z + acc.w;
  barrier();
  for (uint half_ = 128u; half_ > 0u; half_ >>= 1) {
    if (gl_LocalInvocationID.x < half_) partial[gl_LocalInvocationID.x] += partial[gl_LocalInvocationID.x + half_];
    barrier();
  }
  if (gl_LocalInvocationID.x == 0u) atomicAdd(sum[pc.o[1]], partial[0]);
#endif
}
