// What every kernel shares (vk_kernels.h): four storage buffers, and push constants
// whose first four words are each binding's start in 32-bit words, then up to 28
// parameter words (ints as themselves, floats by their bits).
#extension GL_GOOGLE_include_directive : require
layout(push_constant) uniform Push {
  uint o[4];
  uint p[28];
} pc;

uint U(uint i) { return pc.p[i]; }
int I(uint i) { return int(pc.p[i]); }
float F(uint i) { return uintBitsToFloat(pc.p[i]); }

// Element-wise kernels: 256 invocations a group, groups laid over x and y (Recorder::Dispatch1D).
uint Index() { return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x; }
// Row kernels: one group per row, groups laid over x and y.
uint GroupIndex() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// A float rounded to f16 and back (the CPU's f16 tables and caches).
float RoundF16(float x) { return unpackHalf2x16(packHalf2x16(vec2(x, 0.0))).x; }
