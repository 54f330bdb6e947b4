// Matmul weights repacked at load into 16-row interleaved groups, for Q4_0, Q5_0,
// Q8_0, Q4_K and Q6_K (the types of the common GGUF mixes).
//
// Why: the row-major tiles (gemm_tile.h) reduce each weight row's 32-element block
// to one integer before the f32 step, so every row-block pays a horizontal sum and
// its own unpacking (about 13 vector operations). Interleaving 16 rows at 4-byte
// granularity puts row r's 4 consecutive weights in int32 lane r of a 64-byte
// vector: one byte-dot instruction (vpdpbusd, or maddubs + madd on AVX2) against a
// broadcast of the activation's 4 matching bytes accumulates all 16 rows' sums in
// their own lanes, with no horizontal step (about 2.5 operations per row-block). The
// groups are also one sequential stream, which the hardware prefetcher follows.
//
// Layout (same byte size as the row-major matrix: a permutation of its bytes). Rows
// [0, 16*G) form G groups; the out % 16 tail rows follow unchanged, row-major. Group
// g holds, for each 32-block b in order, one group-block:
//   d[16]       the 16 rows' f16 scales                              32 bytes
//   Q5_0 only:  qh'[16] the rows' high bits, reordered (below)       64 bytes
//   chunks      4 (Q4_0, Q5_0) or 8 (Q8_0) chunks of 64 bytes; chunk k, bytes
//               4r..4r+3 = row r's qs[4k..4k+3] (Q8_0: each XOR 0x80, i.e. the
//               signed weight + 128 as an unsigned byte)
// Q4_0/Q5_0 chunk k's low nibbles are elements 4k..4k+3, its high nibbles elements
// 16+4k..16+4k+3. Q5_0's qh' byte i holds in bit k the high bit of element 4k+i and
// in bit 4+k that of element 16+4k+i, so chunk k's bits come out with one shift.
//
// K-quants (256-element super-blocks; the reference sums each row's super-block
// into one int32 and scales it once, vec_dot.h). A group-block holds 16 rows'
// super-blocks, quants moved 4 bytes at a time as for the 32-blocks:
//   Q4_K (2304 bytes): d[16], dmin[16] (f16); 64 bytes of scale low nibbles
//     (byte 4r+i = sc[i] | sc[4+i] << 4), 64 of min low nibbles (likewise), 64 of
//     high bits (sc[i] >> 4 | sc[4+i] >> 4 << 2 | mn[i] >> 4 << 4 | mn[4+i] >> 4 << 6);
//     then 32 vectors, vector c lane r = row r's qs[4c..4c+3] (low nibbles: elements
//     64(c/8) + 4(c%8) + i, sub-block 2(c/8); high nibbles: those + 32).
//   Q6_K (3360 bytes): d[16]; 4 vectors of scales (byte 4r+i = sc[4t+i]); then per
//     16-element sub-block j three vectors S0..S2 of the codes c = q + 32 (6 bits):
//     S_s byte 4r+i = c(16j + 4s + i) | (bits 2s..2s+1 of c(16j + 12 + i)) << 6, so
//     quads 0..2 are one AND each and quad 3 is gathered from the top bits (about 40%
//     fewer unpacking operations than nibbles + 2-bit fields; the group-block is read
//     in address order, which the hardware prefetcher needs to keep up).
// So lane r's dword is always 4 consecutive weights of one sub-block: a byte-dot
// against the activation's 4 matching bytes (ActK.qs, the Q8_K quants as they are)
// adds to row r's sub-block sum, one int32 multiply applies the scale. Q6_K's -32
// offset starts each sub-block sum at ActK.nb32, Q4_K's mins use ActK.bs_lo/bs_hi, all in
// integers.
//
// Exactness: with unsigned weights u = q + K (K = 8, 16, 128 for Q4_0, Q5_0, Q8_0),
// sum(q x) = sum(u x) - K sum(x), exact in int32; the f32 steps per block are the
// reference's (vec_dot.h), so results are bit-identical to MatMul's.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "formats/tensor_type.h"
#include "kernels/thread_pool.h"

namespace uaii::kernels {

inline constexpr int kInterleaveRows = 16;

// A Q8_K activation super-block as the K-quant group kernels read it: qs as they
// are; the 32-element sub-block sums bs_j = bsums[2j] + bsums[2j+1] (for Q4_K's mins,
// |bs_j| <= 4096) split into signed bytes, bs_j = 128 * bs_hi[j] + bs_lo[j] with
// bs_lo in [0, 127] and bs_hi in [-32, 31], so that the mins (unsigned 6-bit bytes)
// meet them in the same byte-dot as the quants; nb32[j] = -32 * bsums[j] (Q6_K).
struct ActK {
  float d;
  int8_t bs_lo[8];
  int8_t bs_hi[8];
  int32_t nb32[16];
  int8_t qs[256];
};

// True when this CPU has interleaved kernels for `type` (only then repack).
bool HasInterleavedKernel(TensorType type);

// dst = the interleaved layout of the row-major [out x in] matrix src (same size,
// not aliased). Errors: unsupported type, `in` not a multiple of 32.
absl::Status RepackInterleaved(TensorType type, const void* src, int64_t out, int64_t in, void* dst);

// The same in place, one 16-row group at a time (a group is the same bytes in both
// layouts), with scratch of one group: for buffers that must not be doubled.
absl::Status RepackInterleavedInPlace(TensorType type, void* w, int64_t out, int64_t in);

// Copies row `row` of an interleaved matrix back into row-major blocks (dst holds
// one row, RowBytes bytes): the inverse of the repack for one row.
void InterleavedRowToBlocks(TensorType type, const void* w, int64_t out, int64_t in, int64_t row,
                            void* dst);

// Which build of the group kernels runs: the best the CPU has, or one forced (tests).
enum class InterleaveIsa { kAuto, kAvx2, kAvx512 };

// y = W x (kernels/matmul.h's contract) for an interleaved W. Requires
// HasInterleavedKernel(type); a forced ISA the CPU lacks is an error.
absl::Status MatMulInterleaved(TensorType type, const void* w, int64_t out, int64_t in, const float* x,
                               int64_t batch, float* y, ThreadPool* pool,
                               InterleaveIsa isa = InterleaveIsa::kAuto);

// Activations prepared once for several interleaved matmuls of the same type and
// `in` (a decode stage cut into row ranges): the reference's quantization (Q8_0 or
// Q8_K rows, which tail rows read) plus what the group kernels read (K * sum(qs) and
// the f32 scale per Q8_0 block, or ActK rows). Reused buffers: no allocation once warm.
struct InterleavedActs {
  TensorType type = TensorType::F32;
  int64_t in = 0;
  int64_t batch = 0;
  int level = 0;  // the group kernels' ISA the activations were prepared for
  std::vector<uint8_t> acts;
  std::vector<int32_t> sums;  // per Q8_0 block: K * sum(qs), then d widened to f32 (its bits)
  std::vector<uint8_t> actk;
};

// Prepares x [batch x in] for MatMulInterleavedPrepared on `type` weights (pool may
// be null). Errors as MatMulInterleaved's.
absl::Status PrepareInterleavedActs(TensorType type, int64_t in, const float* x, int64_t batch,
                                    InterleavedActs* acts, ThreadPool* pool = nullptr,
                                    InterleaveIsa isa = InterleaveIsa::kAuto);

// y = W x for an interleaved W [out x acts.in] of acts.type, from prepared
// activations: bit-identical to MatMulInterleaved on the same x. W may be a run of
// whole 16-row groups (plus the matrix's tail rows) cut from a larger matrix.
absl::Status MatMulInterleavedPrepared(const InterleavedActs& acts, const void* w, int64_t out, float* y,
                                       ThreadPool* pool = nullptr);

// Embedding lookup (kernels/matmul.h GetRows) on an interleaved W.
absl::Status GetRowsInterleaved(TensorType type, const void* w, int64_t rows, int64_t cols,
                                const int32_t* ids, int64_t n_ids, float* out);

// One group's kernel: y[c * ys + r] for r < 16, c < cols (1..8). w: the group's
// group-blocks; x: `cols` Q8_0 activation rows xs bytes apart; xk: per activation
// row (xk_stride ints apart), per block, the pair (K * sum(x qs), the bits of the
// block's scale d as f32). K-quant kernels take ActK rows instead (xs bytes apart)
// and ignore xk.
using GroupFn = void (*)(const uint8_t* w, int64_t nb, const uint8_t* x, int64_t xs, const int32_t* xk,
                         int64_t xk_stride, int cols, float* y, int64_t ys);
GroupFn GroupKernelAvx512(TensorType type);
GroupFn GroupKernelAvx2(TensorType type);

}  // namespace uaii::kernels
