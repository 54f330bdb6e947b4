// Interleaved weights (interleave.h): the repack, its inverse for one row, and the
// matmul driver over 16-row groups.
#include "kernels/interleave.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/dispatch.h"
#include "kernels/quantize_act.h"
#include "kernels/vec_dot.h"
#include "util/str_cat.h"

namespace uaii::kernels {
namespace {

using quant::kQK;

constexpr int R = kInterleaveRows;

struct Geometry {
  int block_elems = 32;    // elements per block (256 for K-quants)
  int block_bytes = 0;     // one row-major block
  int qs_offset = 0;       // where its quants start (after d, and qh for Q5_0)
  int chunks = 0;          // 64-byte chunks per group-block (32-blocks)
  int group_block = 0;     // bytes of one group-block = R * block_bytes
};

bool GeometryOf(TensorType type, Geometry* g) {
  switch (type) {
    case TensorType::Q4_0: *g = {32, 18, 2, 4, 0}; break;
    case TensorType::Q5_0: *g = {32, 22, 6, 4, 0}; break;
    case TensorType::Q8_0: *g = {32, 34, 2, 8, 0}; break;
    case TensorType::Q4_K: *g = {256, 144, 0, 0, 0}; break;
    case TensorType::Q6_K: *g = {256, 210, 0, 0, 0}; break;
    default: return false;
  }
  g->group_block = R * g->block_bytes;
  return true;
}

bool IsK(TensorType type) { return type == TensorType::Q4_K || type == TensorType::Q6_K; }

// Moves n bytes of quants between a row-major block (q) and lane r of consecutive
// 64-byte vectors (v): 4 bytes per vector.
void MoveQuads(bool to_group, uint8_t* q, uint8_t* v, int r, int n) {
  for (int c = 0; c < n / 4; ++c) {
    if (to_group) std::memcpy(v + 64 * c + 4 * r, q + 4 * c, 4);
    else std::memcpy(q + 4 * c, v + 64 * c + 4 * r, 4);
  }
}

// --- Q4_K: d, dmin, 12 bytes of 6-bit scales/mins (ScaleMinK4), 128 bytes of qs. ---
void MoveQ4K(bool to_group, uint8_t* blk, uint8_t* gb, int r) {
  auto* b = reinterpret_cast<quant::BlockQ4_K*>(blk);
  uint8_t sc[8], mn[8];
  if (to_group) {
    std::memcpy(gb + 2 * r, &b->d, 2);
    std::memcpy(gb + 32 + 2 * r, &b->dmin, 2);
    for (int j = 0; j < 8; ++j) quant::ScaleMinK4(j, b->scales, &sc[j], &mn[j]);
    for (int i = 0; i < 4; ++i) {
      gb[64 + 4 * r + i] = static_cast<uint8_t>((sc[i] & 0xF) | (sc[4 + i] & 0xF) << 4);
      gb[128 + 4 * r + i] = static_cast<uint8_t>((mn[i] & 0xF) | (mn[4 + i] & 0xF) << 4);
      gb[192 + 4 * r + i] = static_cast<uint8_t>((sc[i] >> 4) | (sc[4 + i] >> 4) << 2 | (mn[i] >> 4) << 4 |
                                                 (mn[4 + i] >> 4) << 6);
    }
    MoveQuads(true, b->qs, gb + 256, r, 128);
    return;
  }
  std::memcpy(&b->d, gb + 2 * r, 2);
  std::memcpy(&b->dmin, gb + 32 + 2 * r, 2);
  for (int i = 0; i < 4; ++i) {
    const uint8_t lo = gb[64 + 4 * r + i], ml = gb[128 + 4 * r + i], hi = gb[192 + 4 * r + i];
    sc[i] = (lo & 0xF) | (hi & 3) << 4;
    sc[4 + i] = (lo >> 4) | ((hi >> 2) & 3) << 4;
    mn[i] = (ml & 0xF) | ((hi >> 4) & 3) << 4;
    mn[4 + i] = (ml >> 4) | ((hi >> 6) & 3) << 4;
  }
  for (int j = 0; j < 4; ++j) {
    b->scales[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    b->scales[j + 4] = static_cast<uint8_t>(mn[j] | (mn[j + 4] >> 4) << 6);
    b->scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | (mn[j + 4] & 0xF) << 4);
  }
  MoveQuads(false, b->qs, gb + 256, r, 128);
}

// --- Q6_K: ql, qh, 16 int8 scales, d. Element e = 128h + 32k + l: low nibble k / 2
// of ql[64h + 32(k % 2) + l], bits 2k of qh[32h + l]. ---
// code[e] = the weight + 32 (0..63) of every element.
void Q6KCodes(const quant::BlockQ6_K& b, uint8_t code[256]) {
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l)
        code[128 * h + 32 * k + l] = static_cast<uint8_t>(((b.ql[64 * h + 32 * (k % 2) + l] >> (4 * (k / 2))) & 0xF) |
                                                          ((b.qh[32 * h + l] >> (2 * k)) & 3) << 4);
}

void MoveQ6K(bool to_group, uint8_t* blk, uint8_t* gb, int r) {
  auto* b = reinterpret_cast<quant::BlockQ6_K*>(blk);
  auto* scales = reinterpret_cast<uint8_t*>(b->scales);
  if (to_group) std::memcpy(gb + 2 * r, &b->d, 2); else std::memcpy(&b->d, gb + 2 * r, 2);
  MoveQuads(to_group, scales, gb + 32, r, 16);
  // Sub-block j: S_s byte 4r + i = code(16j + 4s + i) | bits 2s, 2s+1 of code(16j + 12 + i) << 6.
  if (to_group) {
    uint8_t code[256];
    Q6KCodes(*b, code);
    for (int j = 0; j < 16; ++j)
      for (int s = 0; s < 3; ++s)
        for (int i = 0; i < 4; ++i)
          gb[288 + 192 * j + 64 * s + 4 * r + i] =
              static_cast<uint8_t>(code[16 * j + 4 * s + i] | ((code[16 * j + 12 + i] >> (2 * s)) & 3) << 6);
    return;
  }
  std::memset(b->ql, 0, sizeof(b->ql));
  std::memset(b->qh, 0, sizeof(b->qh));
  for (int e = 0; e < 256; ++e) {
    const int j = e / 16, t = (e / 4) % 4, i = e % 4;
    uint8_t code;
    if (t < 3) {
      code = gb[288 + 192 * j + 64 * t + 4 * r + i] & 0x3F;
    } else {
      code = 0;
      for (int s = 0; s < 3; ++s) code |= static_cast<uint8_t>((gb[288 + 192 * j + 64 * s + 4 * r + i] >> 6) << (2 * s));
    }
    const int h = e / 128, k = (e / 32) % 4, l = e % 32;
    b->ql[64 * h + 32 * (k % 2) + l] |= static_cast<uint8_t>((code & 0xF) << (4 * (k / 2)));
    b->qh[32 * h + l] |= static_cast<uint8_t>((code >> 4) << (2 * k));
  }
}

// Q5_0's qh (bit j = high bit of element j) -> qh' (interleave.h): byte i, bit k =
// element 4k+i; bit 4+k = element 16+4k+i.
uint32_t ReorderQh(uint32_t h) {
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 4; ++k) {
      out |= ((h >> (4 * k + i)) & 1u) << (8 * i + k);
      out |= ((h >> (16 + 4 * k + i)) & 1u) << (8 * i + 4 + k);
    }
  return out;
}
uint32_t RestoreQh(uint32_t q) {
  uint32_t h = 0;
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 4; ++k) {
      h |= ((q >> (8 * i + k)) & 1u) << (4 * k + i);
      h |= ((q >> (8 * i + 4 + k)) & 1u) << (16 + 4 * k + i);
    }
  return h;
}

// Moves one block between row-major (blk) and its slot r of group-block gb.
template <bool kToGroup>
void MoveBlock(TensorType type, const Geometry& g, uint8_t* blk, uint8_t* gb, int r) {
  if (type == TensorType::Q4_K) return MoveQ4K(kToGroup, blk, gb, r);
  if (type == TensorType::Q6_K) return MoveQ6K(kToGroup, blk, gb, r);
  const uint8_t flip = type == TensorType::Q8_0 ? 0x80 : 0x00;
  if constexpr (kToGroup) std::memcpy(gb + 2 * r, blk, 2); else std::memcpy(blk, gb + 2 * r, 2);
  uint8_t* chunks = gb + 32;
  if (type == TensorType::Q5_0) {
    uint32_t h;
    if constexpr (kToGroup) {
      std::memcpy(&h, blk + 2, 4);
      h = ReorderQh(h);
      std::memcpy(gb + 32 + 4 * r, &h, 4);
    } else {
      std::memcpy(&h, gb + 32 + 4 * r, 4);
      h = RestoreQh(h);
      std::memcpy(blk + 2, &h, 4);
    }
    chunks = gb + 96;
  }
  for (int k = 0; k < g.chunks; ++k)
    for (int i = 0; i < 4; ++i) {
      uint8_t& lane = chunks[64 * k + 4 * r + i];
      uint8_t& q = blk[g.qs_offset + 4 * k + i];
      if constexpr (kToGroup) lane = q ^ flip; else q = lane ^ flip;
    }
}

// kAuto follows MatMul's dispatch (dispatch.h: the best level, UAII_NO_AVX512,
// UAII_KERNELS), so a forced level applies to repacked weights too; below avx2
// there are no group kernels (kAuto resolves to kNone and nothing is repacked).
enum class Resolved { kNone, kAvx2, kAvx512 };
Resolved Resolve(TensorType type, InterleaveIsa isa) {
  if (isa == InterleaveIsa::kAvx2) return CpuSupports(IsaLevel::kAvx2) ? Resolved::kAvx2 : Resolved::kNone;
  if (isa == InterleaveIsa::kAvx512) return CpuSupports(IsaLevel::kAvx512) ? Resolved::kAvx512 : Resolved::kNone;
  const auto choice = ChooseKernels(type, KernelImpl::kAuto);
  if (!choice.ok()) return Resolved::kNone;
  if (choice->level == IsaLevel::kAvx512) return Resolved::kAvx512;
  return choice->level == IsaLevel::kAvx2 ? Resolved::kAvx2 : Resolved::kNone;
}

GroupFn Kernel(TensorType type, Resolved r) {
  switch (r) {
    case Resolved::kAvx512: return GroupKernelAvx512(type);
    case Resolved::kAvx2: return GroupKernelAvx2(type);
    default: return nullptr;
  }
}

// K of interleave.h: the unsigned weight offset the kernel subtracts (AVX2's Q8_0
// goes signed: 0).
int32_t Offset(TensorType type, Resolved r) {
  switch (type) {
    case TensorType::Q4_0: return 8;
    case TensorType::Q5_0: return 16;
    default: return r == Resolved::kAvx512 ? 128 : 0;
  }
}

// ActK (interleave.h) from one Q8_K super-block.
void ToActK(const quant::BlockQ8_K& x, ActK* a) {
  a->d = x.d;
  for (int j = 0; j < 8; ++j) {
    const int bs = x.bsums[2 * j] + x.bsums[2 * j + 1];
    a->bs_hi[j] = static_cast<int8_t>(bs >> 7);  // floor(bs / 128): an arithmetic shift
    a->bs_lo[j] = static_cast<int8_t>(bs & 127);
  }
  for (int j = 0; j < 16; ++j) a->nb32[j] = -32 * x.bsums[j];
  std::memcpy(a->qs, x.qs, sizeof(a->qs));
}
// Per-thread prepared activations for MatMulInterleaved: no allocation per call once warm.
InterleavedActs& ThreadActs() {
  thread_local InterleavedActs a;
  return a;
}

}  // namespace

bool HasInterleavedKernel(TensorType type) {
  Geometry g;
  return GeometryOf(type, &g) && Kernel(type, Resolve(type, InterleaveIsa::kAuto)) != nullptr;
}

absl::Status RepackInterleaved(TensorType type, const void* src, int64_t out, int64_t in, void* dst) {
  Geometry g;
  if (!GeometryOf(type, &g))
    return absl::UnimplementedError(StrCat("repack: no interleaved layout for ", TensorTypeName(static_cast<uint32_t>(type))));
  if (in <= 0 || in % g.block_elems != 0 || out < 0)
    return absl::InvalidArgumentError(StrCat("repack: row length ", in, " is not a positive multiple of ", g.block_elems));
  const int64_t nb = in / g.block_elems, row_bytes = nb * g.block_bytes, groups = out / R;
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  std::vector<uint8_t> blk(static_cast<size_t>(g.block_bytes));
  for (int64_t grp = 0; grp < groups; ++grp)
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* gb = d + (grp * nb + b) * g.group_block;
      for (int r = 0; r < R; ++r) {
        std::memcpy(blk.data(), s + (grp * R + r) * row_bytes + b * g.block_bytes, blk.size());
        MoveBlock<true>(type, g, blk.data(), gb, r);
      }
    }
  std::memcpy(d + groups * R * row_bytes, s + groups * R * row_bytes, static_cast<size_t>((out - groups * R) * row_bytes));
  return absl::OkStatus();
}

absl::Status RepackInterleavedInPlace(TensorType type, void* w, int64_t out, int64_t in) {
  Geometry g;
  if (!GeometryOf(type, &g) || in <= 0 || in % g.block_elems != 0) return RepackInterleaved(type, w, 0, in, w);  // the error
  const int64_t group_bytes = R * (in / g.block_elems) * g.block_bytes;
  std::vector<uint8_t> scratch(static_cast<size_t>(group_bytes));
  auto* p = static_cast<uint8_t*>(w);
  for (int64_t grp = 0; grp < out / R; ++grp) {
    std::memcpy(scratch.data(), p + grp * group_bytes, scratch.size());
    if (auto st = RepackInterleaved(type, scratch.data(), R, in, p + grp * group_bytes); !st.ok()) return st;
  }
  return absl::OkStatus();
}

void InterleavedRowToBlocks(TensorType type, const void* w, int64_t out, int64_t in, int64_t row, void* dst) {
  Geometry g;
  if (!GeometryOf(type, &g)) return;
  const int64_t nb = in / g.block_elems, row_bytes = nb * g.block_bytes;
  const auto* src = static_cast<const uint8_t*>(w);
  auto* d = static_cast<uint8_t*>(dst);
  if (row >= out / R * R) {  // tail rows are row-major
    std::memcpy(d, src + row * row_bytes, static_cast<size_t>(row_bytes));
    return;
  }
  const int64_t grp = row / R;
  const int r = static_cast<int>(row % R);
  for (int64_t b = 0; b < nb; ++b) {
    // MoveBlock reads the group-block only when restoring; the cast keeps one template.
    auto* gb = const_cast<uint8_t*>(src + (grp * nb + b) * g.group_block);
    MoveBlock<false>(type, g, d + b * g.block_bytes, gb, r);
  }
}

absl::Status PrepareInterleavedActs(TensorType type, int64_t in, const float* x, int64_t batch,
                                    InterleavedActs* a, ThreadPool* pool, InterleaveIsa isa) {
  Geometry g;
  const Resolved level = Resolve(type, isa);  // once: kernel, offset and tail rows agree
  if (!GeometryOf(type, &g) || Kernel(type, level) == nullptr)
    return absl::UnimplementedError(StrCat("matmul: no interleaved kernel for ", TensorTypeName(static_cast<uint32_t>(type)),
                                           " on this CPU"));
  if (in <= 0 || in % g.block_elems != 0 || batch < 0)
    return absl::InvalidArgumentError(StrCat("matmul: bad interleaved shape in=", in, " batch=", batch));
  if (batch > 0 && x == nullptr) return absl::InvalidArgumentError("matmul: null input pointer");
  a->type = type;
  a->in = in;
  a->batch = batch;
  a->level = static_cast<int>(level);
  // The reference's quantization (Q8_0, or Q8_K for K-quants, which the tail rows'
  // row kernel reads), plus K * sum(qs) per Q8_0 block or ActK super-blocks.
  const bool k_quant = IsK(type);
  const int64_t nb = in / g.block_elems;
  const int64_t act_bytes =
      nb * static_cast<int64_t>(k_quant ? sizeof(quant::BlockQ8_K) : sizeof(quant::BlockQ8_0));
  const int64_t actk_bytes = k_quant ? nb * static_cast<int64_t>(sizeof(ActK)) : 0;
  const int32_t k_off = Offset(type, level);
  a->acts.resize(static_cast<size_t>(act_bytes * batch));
  a->sums.resize(static_cast<size_t>(k_quant ? 0 : 2 * nb * batch));
  a->actk.resize(static_cast<size_t>(actk_bytes * batch));
  auto prepare = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      if (k_quant) {
        auto* blocks = reinterpret_cast<quant::BlockQ8_K*>(a->acts.data() + b * act_bytes);
        QuantizeRowQ8_K(x + b * in, blocks, in);
        for (int64_t i = 0; i < nb; ++i)
          ToActK(blocks[i], reinterpret_cast<ActK*>(a->actk.data() + b * actk_bytes) + i);
        continue;
      }
      auto* blocks = reinterpret_cast<quant::BlockQ8_0*>(a->acts.data() + b * act_bytes);
      QuantizeRowQ8_0(x + b * in, blocks, in);
      for (int64_t i = 0; i < nb; ++i) {
        int32_t sum = 0;
        for (int j = 0; j < kQK; ++j) sum += blocks[i].qs[j];
        // The block's scale is widened here once, not per block by every 16-row
        // group's kernel: the same float, fewer instructions in the hot loop
        // (docs/performance.md, Kernels: the Q8_0 activation scales).
        a->sums[static_cast<size_t>(2 * (b * nb + i))] = k_off * sum;
        const float d = Fp16ToFp32(blocks[i].d);
        std::memcpy(&a->sums[static_cast<size_t>(2 * (b * nb + i) + 1)], &d, sizeof d);
      }
    }
  };
  if (batch > 1 && pool != nullptr && pool->num_threads() > 1) pool->ParallelFor(batch, prepare, 1);
  else prepare(0, batch);
  return absl::OkStatus();
}

absl::Status MatMulInterleavedPrepared(const InterleavedActs& a, const void* w, int64_t out, float* y,
                                       ThreadPool* pool) {
  Geometry g;
  const TensorType type = a.type;
  const auto level = static_cast<Resolved>(a.level);
  const GroupFn group = GeometryOf(type, &g) ? Kernel(type, level) : nullptr;
  if (group == nullptr || a.in <= 0)
    return absl::FailedPreconditionError("matmul: interleaved activations were not prepared");
  if (out < 0) return absl::InvalidArgumentError(StrCat("matmul: bad interleaved shape out=", out));
  const int64_t batch = a.batch, in = a.in;
  if (out == 0 || batch == 0) return absl::OkStatus();
  if (w == nullptr || y == nullptr) return absl::InvalidArgumentError("matmul: null weight or output pointer");

  const bool k_quant = IsK(type);
  const int64_t nb = in / g.block_elems;
  const int64_t act_bytes = static_cast<int64_t>(a.acts.size()) / batch;
  const uint8_t* acts = a.acts.data();
  const int32_t* sums = a.sums.data();
  const uint8_t* group_acts = k_quant ? a.actk.data() : acts;
  const int64_t group_act_bytes = k_quant ? static_cast<int64_t>(a.actk.size()) / batch : act_bytes;
  const auto* wb = static_cast<const uint8_t*>(w);
  const int64_t row_bytes = nb * g.block_bytes;
  const int64_t groups = out / R, tail = out - groups * R;
  // Tail rows: the row kernel of the same level (bit-identical at every level).
  const VecDotFn dot =
      KernelsAt(type, level == Resolved::kAvx512 ? IsaLevel::kAvx512 : IsaLevel::kAvx2).dot;
  // Work items: the groups, then one item for the row-major tail rows.
  auto run = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      if (i == groups) {
        const uint8_t* tw = wb + groups * R * row_bytes;
        for (int64_t r = 0; r < tail; ++r)
          for (int64_t b = 0; b < batch; ++b)
            y[b * out + groups * R + r] = dot(tw + r * row_bytes, acts + b * act_bytes, in);
        continue;
      }
      const uint8_t* gw = wb + i * R * row_bytes;
      for (int64_t b = 0; b < batch; b += 8) {
        const int cols = static_cast<int>(std::min<int64_t>(8, batch - b));
        group(gw, nb, group_acts + b * group_act_bytes, group_act_bytes, k_quant ? nullptr : sums + 2 * b * nb, 2 * nb, cols,
              y + b * out + i * R, out);
      }
    }
  };
  const int64_t items = groups + (tail > 0 ? 1 : 0);
  if (pool != nullptr && pool->num_threads() > 1) pool->ParallelFor(items, run, 1);
  else run(0, items);
  return absl::OkStatus();
}

absl::Status MatMulInterleaved(TensorType type, const void* w, int64_t out, int64_t in, const float* x,
                               int64_t batch, float* y, ThreadPool* pool, InterleaveIsa isa) {
  if (out < 0) return absl::InvalidArgumentError(StrCat("matmul: bad interleaved shape out=", out, " in=", in));
  InterleavedActs& a = ThreadActs();
  if (absl::Status st = PrepareInterleavedActs(type, in, x, out == 0 ? 0 : batch, &a, pool, isa); !st.ok()) return st;
  return MatMulInterleavedPrepared(a, w, out, y, pool);
}

absl::Status GetRowsInterleaved(TensorType type, const void* w, int64_t rows, int64_t cols, const int32_t* ids,
                                int64_t n_ids, float* out) {
  Geometry g;
  const TensorTypeTraits* traits = FindTensorType(static_cast<uint32_t>(type));
  if (!GeometryOf(type, &g) || traits == nullptr || traits->dequantize == nullptr)
    return absl::UnimplementedError(StrCat("get_rows: no interleaved layout for ", TensorTypeName(static_cast<uint32_t>(type))));
  if (cols <= 0 || cols % g.block_elems != 0)
    return absl::InvalidArgumentError(StrCat("get_rows: row length ", cols, " is not a positive multiple of ", g.block_elems));
  for (int64_t i = 0; i < n_ids; ++i)
    if (ids[i] < 0 || ids[i] >= rows)
      return absl::OutOfRangeError(StrCat("get_rows: row id ", ids[i], " (index ", i, ") outside [0, ", rows, ")"));
  thread_local std::vector<uint8_t> row;  // no allocation per token once warm
  row.resize(static_cast<size_t>(cols / g.block_elems * g.block_bytes));
  for (int64_t i = 0; i < n_ids; ++i) {
    InterleavedRowToBlocks(type, w, rows, cols, ids[i], row.data());
    traits->dequantize(row.data(), out + i * cols, cols / g.block_elems);
  }
  return absl::OkStatus();
}

}  // namespace uaii::kernels
