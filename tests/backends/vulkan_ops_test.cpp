// Operator-level tests of the Vulkan backend, in the style of ggml's test-backend-ops:
// every op VulkanProgram runs (vulkan_program.cpp's Ops()), alone, on random inputs of
// awkward sizes (rows and columns that are not multiples of 64, T = 1, 3, 17 tokens,
// odd head counts and GQA ratios), on the device and on the CPU backend, compared by
// normalised mean squared error
//
//   NMSE = sum((a - b)^2) / sum(a^2)       a: the reference (the CPU, or exact), b: the device
//
// with a threshold per op and per weight type (the named constants below, each saying
// why it is what it is). Every case prints one line with its measured NMSE.
//
// Each graph is tokens -> embed (F32 tables, read exactly by both devices, so the op
// sees bit-identical inputs) -> the op -> "logits" (vulkan_moe_test.cpp's technique),
// compiled by the CPU backend and by VulkanProgram::Create and run through Program::Run
// with a KvCache and a workspace, as a session would. Weights are random *valid block
// bytes* (sane f16 scales, random quants: lib/formats/quant_blocks.h), so no quantizer
// is involved; matmul and embed are also held against an exact f64 reference built
// from DequantizeRow, which isolates the device's kernel from the CPU's activation
// quantization. A weight type without a device kernel (HasMatrixKernel, vk_weights.h)
// is requantized to Q8_0 at upload: its exact-reference threshold is the looser
// requantization one, so the file is right as types gain native kernels.
//
// Not covered because the IR has no such op: `copy` (shaders/copy.comp is compiled,
// but no IR op dispatches it). `reshape` runs inside the rope and attention graphs.
// Without a Vulkan device every case prints a SKIP line and passes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vk_weights.h"
#include "backends/vulkan/vulkan_program.h"
#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "formats/tensor_type.h"
#include "ir/registry.h"
#include "kernels/matmul.h"
#include "planner/fusion.h"
#include "runtime/kv_cache.h"
#include "runtime/weights.h"
#include "vulkan_test_util.h"

using namespace uaii;
using uaii::vulkan_test::HaveVulkan;

namespace {

namespace bv = backends::vulkan;

// ---------------------------------------------------------------------------------
// Thresholds (NMSE). Each is set by the error source named, then checked against what
// was measured on lavapipe (the figures quoted; every case prints its own): the margin
// is at least 4x, mostly one to three orders of magnitude.
// ---------------------------------------------------------------------------------

// matmul / embed, device against the exact f64 product of the dequantized weights.
// A native kernel dequantizes exactly (an f16 scale times a small integer is exact in
// f32) and sums in f32: only the f32 summation's rounding, about K * 2^-48 (measured
// 6e-15 .. 1.7e-13 for K <= 512).
constexpr double kExactNative = 1e-10;
// A type without a device kernel is requantized to Q8_0 at upload: each weight moves by
// up to half a Q8_0 step (its 32-block's max / 127), uniformly, an NMSE of about
// 1 / (4 * 127^2) = 1.6e-5 of uniform weights (the upload's requantization emulated on
// the host with kernels::QuantizeRowQ8_0 on these random blocks: 1.0e-5 .. 2.5e-5 for
// matmul and embed, Q3_K and Q6_K the highest; on the device before the native
// kernels, commit 2370ea8: 1.0e-5 .. 2.3e-5).
constexpr double kExactRequant = 2e-4;
// Embedding rows are copies: a native table is bit-exact.
constexpr double kEmbedNative = 0;

// matmul against the CPU, by the CPU's activation format (kernels/matmul.h: it converts
// activations to the weight type's vec_dot type, as ggml does; the device keeps f32).
// f32 activations on both: summation order only (measured <= 1.4e-13).
constexpr double kCpuF32 = 1e-10;
// The CPU rounds x to f16: 2^-11 relative per element, (2^-11)^2 / 3 = 8e-8 at most
// (measured 2.7e-8 .. 5.4e-8).
constexpr double kCpuF16 = 1e-6;
// The CPU rounds x to bf16: 2^-8 relative, (2^-8)^2 / 3 = 5e-6 at most (measured
// 1.3e-6 .. 3.7e-6).
constexpr double kCpuBF16 = 5e-5;
// The CPU quantizes activations to Q8_0 / Q8_1 / Q8_K: ggml's figure for quantized
// matmuls (test-backend-ops' max_nmse_err for MUL_MAT of quantized types; measured
// 4.6e-6 .. 6.6e-5, moe_ffn's chained products up to 1.2e-4). A requantized weight
// adds kExactRequant on top.
constexpr double kCpuQ8 = 5e-4;

// Element-wise f32 ops that are exact on both (add, mul, scale, slice, output_rows,
// embed of F32 rows): the same single rounding per element (measured 0).
constexpr double kExactOp = 0;
// f32 ops with transcendental functions or reductions (rms_norm, layer_norm, silu,
// softcap, swiglu, rope): the CPU sums norms in double and uses libm / ggml's exp;
// the device sums in f32 and uses the driver's exp / tanh. ggml's default max_nmse_err
// for f32 ops (measured 0 .. 4e-15).
constexpr double kF32Op = 1e-7;
// gelu / geglu: both round gelu's input and output to f16 (ggml's GGML_GELU_FP16
// table); the device's tanh may land on the other side of an f16 rounding boundary,
// one f16 ulp (2^-11 relative) on a few elements (measured 1.8e-13 .. 2.6e-13; a
// wrong tanh form or a missing rounding would be ~1e-7 and more). After a product
// (norm_linear geglu) the inputs differ by the products' f32 rounding, which flips
// some f16 roundings of gelu's input: measured 1.1e-8 for F32 weights.
constexpr double kGeluOp = 1e-6;
// rope at positions up to 1000: the angle is the same float product taken step by step
// on both; cos / sin of angles of hundreds of radians may differ by the libraries'
// range reductions (measured 4e-16 .. 2.4e-12, the largest with YaRN's ramp). ggml's
// default for f32 ops.
constexpr double kRopeOp = 1e-7;
// attention: both round q, K and V to f16; the CPU also rounds the softmax
// probabilities to f16 before the V sum (llama.cpp's non-flash path), the device does
// not (docs/backends.md): 2^-11 relative per probability, (2^-11)^2 / 3 = 8e-8 of the
// output at most (measured 2.5e-8 .. 4.8e-8, prefill, decode and a wrapped ring alike).
constexpr double kAttention = 1e-6;
// norm_linear (planner fusion) and moe_ffn: the products' thresholds above (their
// weights' type), the rest f32.

// ---------------------------------------------------------------------------------

std::shared_ptr<bv::Device> Device() {
  auto d = bv::Device::Open(0);
  INFO(d.status().ToString());
  REQUIRE(d.ok());
  return *d;
}

class Rng {
 public:
  explicit Rng(uint32_t seed) : g_(seed) {}
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(g_); }
  // A magnitude in [lo, hi) with a random sign.
  float Signed(float lo, float hi) { return (g_() & 1 ? -1.0f : 1.0f) * Uniform(lo, hi); }
  uint8_t Byte() { return static_cast<uint8_t>(g_() >> 24); }
  int32_t Int(int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi - 1)(g_); }

 private:
  std::mt19937 g_;
};

std::string Name(TensorType t) { return std::string(TensorTypeName(static_cast<uint32_t>(t))); }

const TensorTypeTraits& Traits(TensorType t) {
  const TensorTypeTraits* tr = FindTensorType(static_cast<uint32_t>(t));
  REQUIRE(tr);
  return *tr;
}

uint64_t RowBytesOf(TensorType t, int64_t cols) {
  const auto rb = RowBytes(Traits(t), static_cast<uint64_t>(cols));
  INFO(Name(t) << " rows of " << cols);
  REQUIRE(rb);
  return *rb;
}

// ------------------------------- random weights ----------------------------------

// Where a block keeps its f16 scale (and min): RandomRows sets these to sane values;
// every other byte (quants, packed sub-block scales, high bits) is valid as any byte.
std::vector<size_t> HalfFields(TensorType t) {
  using namespace quant;
  switch (t) {
    case TensorType::Q4_0: return {offsetof(BlockQ4_0, d)};
    case TensorType::Q4_1: return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case TensorType::Q5_0: return {offsetof(BlockQ5_0, d)};
    case TensorType::Q5_1: return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case TensorType::Q8_0: return {offsetof(BlockQ8_0, d)};
    case TensorType::Q2_K: return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case TensorType::Q3_K: return {offsetof(BlockQ3_K, d)};
    case TensorType::Q4_K: return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case TensorType::Q5_K: return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case TensorType::Q6_K: return {offsetof(BlockQ6_K, d)};
    default: return {};
  }
}

// `rows` rows of `cols` elements of type t, row-major: plain types uniform in (-1, 1),
// quantized ones random blocks with f16 scales of magnitude 1e-3 .. 1e-2.
std::vector<uint8_t> RandomRows(TensorType t, int64_t rows, int64_t cols, Rng& rng) {
  std::vector<uint8_t> b(static_cast<size_t>(rows) * RowBytesOf(t, cols));
  const int64_t n = rows * cols;
  if (t == TensorType::F32) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = rng.Uniform(-1, 1);
      std::memcpy(&b[i * 4], &v, 4);
    }
    return b;
  }
  if (t == TensorType::F16 || t == TensorType::BF16) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = rng.Uniform(-1, 1);
      const uint16_t h = t == TensorType::F16 ? Fp32ToFp16(v) : Fp32ToBf16(v);
      std::memcpy(&b[i * 2], &h, 2);
    }
    return b;
  }
  for (auto& x : b) x = rng.Byte();
  const auto fields = HalfFields(t);
  INFO(Name(t));
  REQUIRE(!fields.empty());
  // Rows are whole blocks back to back, so the blocks tile the buffer.
  const auto block = static_cast<size_t>(Traits(t).type_size);
  for (size_t at = 0; at < b.size(); at += block)
    for (size_t f : fields) {
      const uint16_t h = Fp32ToFp16(rng.Signed(1e-3f, 1e-2f));
      std::memcpy(&b[at + f], &h, 2);
    }
  return b;
}

std::vector<float> Dequantized(TensorType t, const std::vector<uint8_t>& b, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  const uint64_t rb = RowBytesOf(t, cols);
  for (int64_t r = 0; r < rows; ++r) REQUIRE(DequantizeRow(t, b.data() + r * rb, cols, out.data() + r * cols).ok());
  return out;
}

std::vector<float> RandomFloats(size_t n, float lo, float hi, Rng& rng) {
  std::vector<float> v(n);
  for (auto& x : v) x = rng.Uniform(lo, hi);
  return v;
}

// ------------------------------- graph building ----------------------------------

// Rows of every input table: the tokens pick among them (not a power of two).
constexpr int32_t kVocab = 61;

// A graph of one op under test: inputs "tokens" and "positions", activations looked up
// in random F32 tables, weights adopted into the graph's own WeightSet, output "logits".
class OpGraph {
 public:
  OpGraph() {
    g_.name = "vulkan_ops_test";
    Declare("tokens", TensorType::I32, {ir::kDimTokens});
    Declare("positions", TensorType::I32, {ir::kDimTokens});
    g_.inputs = {"tokens", "positions"};
    g_.outputs = {"logits"};
  }
  OpGraph(const OpGraph&) = delete;  // the programs point into the weight set

  // A weight [.., cols] of `type` holding `bytes` (its rows' blocks back to back).
  std::string Weight(const std::string& name, TensorType type, const ir::Shape& shape, std::vector<uint8_t> bytes) {
    auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
    runtime::BoundWeight w;
    w.type = type;
    w.shape = shape;
    w.data = owned->data();
    w.bytes = owned->size();
    w.row_bytes = RowBytesOf(type, shape.back());
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
    REQUIRE(w.bytes == static_cast<uint64_t>(rows) * w.row_bytes);
    weights_.Adopt({{name, w}}, {owned});
    Declare(name, type, shape);
    g_.tensors.back().weight = ir::TensorRef{"vulkan_ops_test", name, 0, w.bytes};
    return name;
  }
  std::string F32(const std::string& name, const ir::Shape& shape, const std::vector<float>& v) {
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return Weight(name, TensorType::F32, shape, std::move(bytes));
  }
  std::string RandomF32(const std::string& name, const ir::Shape& shape, float lo, float hi, Rng& rng) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return F32(name, shape, RandomFloats(n, lo, hi, rng));
  }
  // An activation [T, cols]: the rows of a random F32 table [kVocab, cols] in (-amp, amp)
  // that the tokens (or positions) pick.
  std::string Input(const std::string& name, int64_t cols, float amp, Rng& rng, const std::string& ids = "tokens") {
    auto& table = tables_[name];
    table = RandomFloats(static_cast<size_t>(kVocab * cols), -amp, amp, rng);
    F32(name + ".table", {kVocab, cols}, table);
    return Op("embed", {name + ".table", ids}, name);
  }
  const std::vector<float>& Table(const std::string& input) const { return tables_.at(input); }

  std::vector<std::string> Ops(const std::string& type, const std::vector<std::string>& in,
                               const std::vector<std::string>& outs, std::map<std::string, ir::AttrValue> attrs = {}) {
    ir::Op op{type + ":" + outs[0], type, in, outs, std::move(attrs)};
    const ir::OpSchema* schema = ir::FindOp(type);
    REQUIRE(schema);
    std::vector<const ir::Shape*> shapes;
    for (const auto& n : in) {
      const ir::Tensor* t = n.empty() ? nullptr : g_.FindTensor(n);
      INFO(type << " reads " << n);
      REQUIRE((n.empty() || t));
      shapes.push_back(t ? &t->shape : nullptr);
    }
    // Absent trailing inputs as the validator passes them (ir/validate.cpp).
    while (shapes.size() < static_cast<size_t>(schema->max_inputs)) shapes.push_back(nullptr);
    auto inferred = schema->infer(op, shapes);
    INFO(inferred.status().ToString());
    REQUIRE(inferred.ok());
    REQUIRE(inferred->size() == outs.size());
    for (size_t i = 0; i < outs.size(); ++i) Declare(outs[i], TensorType::F32, (*inferred)[i]);
    g_.ops.push_back(std::move(op));
    return outs;
  }
  std::string Op(const std::string& type, const std::vector<std::string>& in, const std::string& out,
                 std::map<std::string, ir::AttrValue> attrs = {}) {
    return Ops(type, in, {out}, std::move(attrs))[0];
  }
  // [T, H * D] as [T, H, D] and back (the builders' q/k/v heads).
  std::string Heads(const std::string& x, int64_t H, int64_t D) {
    return Op("reshape", {x}, x + ".heads", {{"shape", std::vector<int64_t>{ir::kDimTokens, H, D}}});
  }
  std::string Flat(const std::string& x, const std::string& out) {
    const ir::Shape& s = g_.FindTensor(x)->shape;
    return Op("reshape", {x}, out, {{"shape", std::vector<int64_t>{ir::kDimTokens, s[1] * s[2]}}});
  }

  const ir::Graph& graph() const { return g_; }
  ir::Graph& graph() { return g_; }
  const runtime::WeightSet& weights() const { return weights_; }

 private:
  void Declare(const std::string& name, TensorType dtype, ir::Shape shape) {
    ir::Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.shape = std::move(shape);
    g_.tensors.push_back(std::move(t));
  }

  ir::Graph g_;
  runtime::WeightSet weights_;
  std::map<std::string, std::vector<float>> tables_;
};

// ------------------------------- running -----------------------------------------

struct Pass {
  std::vector<int32_t> tokens, positions;
  std::vector<int64_t> rows;  // empty: every row
};

// T random tokens at positions first, first + 1, ...
Pass Tokens(int64_t T, int32_t first, Rng& rng, int32_t vocab = kVocab) {
  Pass p;
  for (int64_t t = 0; t < T; ++t) {
    p.tokens.push_back(rng.Int(0, vocab));
    p.positions.push_back(first + static_cast<int32_t>(t));
  }
  return p;
}

struct CacheSpec {
  int64_t n_ctx = 1024, window = 0, sinks = 0, max_batch = 0;
};

// Each pass's output rows, the passes run in order on one KV cache and workspace.
// kv_backend: the backend whose memory holds the cache (the Vulkan program reads it
// there); null: host memory (the CPU's).
std::vector<std::vector<float>> RunPasses(const backends::Program& p, const backends::Backend* kv_backend,
                                          const std::vector<Pass>& passes, const CacheSpec& c) {
  std::unique_ptr<backends::DeviceBuffer> arena;
  if (kv_backend && !p.kv_layers().empty()) {
    const int64_t cells = runtime::KvCache::CellCount(c.n_ctx, c.window, c.sinks, c.max_batch);
    auto a = kv_backend->Allocate(runtime::KvCache::ArenaBytes(p.kv_layers(), cells));
    INFO(a.status().ToString());
    REQUIRE(a.ok());
    arena = *std::move(a);
  }
  runtime::KvCache cache(p.kv_layers(), c.n_ctx, c.window, c.sinks, c.max_batch, std::move(arena));
  backends::RunContext ctx;
  auto ws = p.NewWorkspace();
  ctx.workspace = ws.get();
  std::vector<std::vector<float>> outs;
  for (const Pass& pass : passes) {
    const auto T = static_cast<int64_t>(pass.tokens.size());
    std::vector<int64_t> rows = pass.rows;
    if (rows.empty())
      for (int64_t t = 0; t < T; ++t) rows.push_back(t);
    std::vector<float> out;
    const auto st = p.Run(pass.tokens.data(), pass.positions.data(), T, rows, cache, ctx, &out);
    INFO(st.ToString());
    REQUIRE(st.ok());
    outs.push_back(std::move(out));
  }
  return outs;
}

struct Results {
  std::vector<std::vector<float>> cpu, dev;  // per pass
  int requantized = 0;                      // the device program's requantized weights
};

Results RunBoth(const OpGraph& og, const std::vector<Pass>& passes, const CacheSpec& c = {}) {
  auto cpu = backends::Cpu().Compile(og.graph(), og.weights());
  INFO("cpu: " << cpu.status().ToString());
  REQUIRE(cpu.ok());
  auto dev = bv::VulkanProgram::Create(Device(), og.graph(), og.weights());
  INFO("vulkan: " << dev.status().ToString());
  REQUIRE(dev.ok());
  auto vk_backend = backends::SelectBackend("vulkan");
  REQUIRE(vk_backend.ok());
  Results r;
  r.cpu = RunPasses(**cpu, nullptr, passes, c);
  r.dev = RunPasses(**dev, *vk_backend, passes, c);
  r.requantized = (*dev)->requantized_weights();
  return r;
}

template <typename V>
V Joined(const std::vector<V>& parts) {
  V all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

// sum((want - got)^2) / sum(want^2); infinite when the device gave a non-finite value.
template <typename W>
double Nmse(const std::vector<W>& want, const std::vector<float>& got) {
  REQUIRE(want.size() == got.size());
  REQUIRE(!want.empty());
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    const double a = static_cast<double>(want[i]), d = a - static_cast<double>(got[i]);
    num += d * d;
    den += a * a;
  }
  return den > 0 ? num / den : (num > 0 ? INFINITY : 0.0);
}

void Expect(const std::string& what, double nmse, double max) {
  std::printf("vulkan op %-60s NMSE %9.3e (max %.0e)\n", what.c_str(), nmse, max);
  INFO(what << ": NMSE " << nmse << " over " << max);
  CHECK(nmse <= max);
}

// Matmul-like cases: against the CPU and against the exact reference, on one line.
void Expect2(const std::string& what, double vs_cpu, double max_cpu, double vs_exact, double max_exact) {
  std::printf("vulkan op %-44s NMSE vs CPU %9.3e (max %.0e), vs exact %9.3e (max %.0e)\n", what.c_str(), vs_cpu,
              max_cpu, vs_exact, max_exact);
  INFO(what << ": NMSE vs CPU " << vs_cpu << " (max " << max_cpu << "), vs exact " << vs_exact << " (max "
            << max_exact << ")");
  CHECK(vs_cpu <= max_cpu);
  CHECK(vs_exact <= max_exact);
}

// Runs og over `passes` and expects every pass's output within max of the CPU's.
void ExpectOp(const std::string& what, const OpGraph& og, const std::vector<Pass>& passes, double max,
              const CacheSpec& c = {}) {
  const Results r = RunBoth(og, passes, c);
  Expect(what, Nmse(Joined(r.cpu), Joined(r.dev)), max);
}

// The usual passes of a row-wise op: a prefill of 17 tokens, then one decode token.
std::vector<Pass> PrefillDecode(Rng& rng) { return {Tokens(17, 0, rng), Tokens(1, 17, rng)}; }

std::string Dims(int64_t a, int64_t b) { return std::to_string(a) + "x" + std::to_string(b); }

// ------------------------------- matmul / embed ----------------------------------

const std::vector<TensorType>& AllWeightTypes() {
  static const std::vector<TensorType> types = {
      TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
      TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
      TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};
  return types;
}

bool KQuant(TensorType t) { return Traits(t).block_size == quant::kQK_K; }

// The weight shapes [N, K] a type is tried at: N not a multiple of 64, K = 96, 160, 416
// (K-quants: whole 256-element super-blocks); plain types also at a K that is no
// multiple of 32.
std::vector<std::pair<int64_t, int64_t>> MatmulShapes(TensorType t) {
  if (KQuant(t)) return {{67, 256}, {45, 512}};
  std::vector<std::pair<int64_t, int64_t>> s = {{67, 96}, {130, 160}, {33, 416}};
  if (Traits(t).block_size == 1) s.push_back({45, 68});
  return s;
}

double CpuMatmulThreshold(TensorType t) {
  switch (t) {
    case TensorType::F32: return kCpuF32;
    case TensorType::F16: return kCpuF16;
    case TensorType::BF16: return kCpuBF16;
    default: return kCpuQ8;
  }
}

double ExactThreshold(TensorType t) { return bv::HasMatrixKernel(t) ? kExactNative : kExactRequant; }

// A product against the CPU: the CPU's activation format, plus the requantization
// where the device has no kernel for the type.
double CpuProductThreshold(TensorType t) {
  return CpuMatmulThreshold(t) + (bv::HasMatrixKernel(t) ? 0.0 : kExactRequant);
}

// y[t, n] = sum_k w[n, k] x[tokens[t], k] in double.
std::vector<double> ExactProduct(const std::vector<float>& w, const std::vector<float>& table,
                                 const std::vector<int32_t>& tokens, int64_t N, int64_t K) {
  std::vector<double> y;
  for (int32_t tok : tokens)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += static_cast<double>(w[n * K + k]) * table[tok * K + k];
      y.push_back(s);
    }
  return y;
}

}  // namespace

TEST_CASE("vulkan ops: matmul of every weight type, decode and prefill", "[vulkan][ops]") {
  if (!HaveVulkan()) return;
  Rng rng(1);
  for (TensorType type : AllWeightTypes())
    for (const auto& [N, K] : MatmulShapes(type)) {
      OpGraph og;
      const auto wbytes = RandomRows(type, N, K, rng);
      const auto wdq = Dequantized(type, wbytes, N, K);
      const std::string x = og.Input("x", K, 1.0f, rng);
      og.Op("matmul", {x, og.Weight("w", type, {N, K}, wbytes)}, "logits");
      const std::vector<Pass> passes = {Tokens(1, 0, rng), Tokens(3, 1, rng), Tokens(17, 4, rng)};
      const Results r = RunBoth(og, passes);
      CHECK(r.requantized == (bv::HasMatrixKernel(type) ? 0 : 1));
      for (size_t i = 0; i < passes.size(); ++i) {
        const auto exact = ExactProduct(wdq, og.Table("x"), passes[i].tokens, N, K);
        Expect2("matmul " + Name(type) + " " + Dims(N, K) + " T=" + std::to_string(passes[i].tokens.size()),
                Nmse(r.cpu[i], r.dev[i]), CpuProductThreshold(type), Nmse(exact, r.dev[i]), ExactThreshold(type));
      }
    }
}

TEST_CASE("vulkan ops: embed of every weight type", "[vulkan][ops]") {
  // The CPU's GetRows dequantizes exactly, so the CPU is the exact reference too; a
  // requantized table differs from both by the requantization.
  if (!HaveVulkan()) return;
  Rng rng(2);
  constexpr int32_t V = 37;
  for (TensorType type : AllWeightTypes()) {
    const int64_t D = KQuant(type) ? 512 : 160;
    OpGraph og;
    const auto table = RandomRows(type, V, D, rng);
    const auto dq = Dequantized(type, table, V, D);
    og.Op("embed", {og.Weight("table", type, {V, D}, table), "tokens"}, "logits");
    const std::vector<Pass> passes = {Tokens(17, 0, rng, V), Tokens(1, 17, rng, V)};
    const Results r = RunBoth(og, passes);
    std::vector<float> exact;
    for (const Pass& p : passes)
      for (int32_t tok : p.tokens) exact.insert(exact.end(), dq.begin() + tok * D, dq.begin() + (tok + 1) * D);
    const double limit = bv::HasMatrixKernel(type) ? kEmbedNative : kExactRequant;
    Expect2("embed " + Name(type) + " " + Dims(V, D) + " T=17+1", Nmse(Joined(r.cpu), Joined(r.dev)), limit,
            Nmse(exact, Joined(r.dev)), limit);
  }
}

TEST_CASE("vulkan ops: embed by positions (learned position embeddings)", "[vulkan][ops]") {
  if (!HaveVulkan()) return;
  Rng rng(3);
  OpGraph og;
  og.Op("embed", {og.RandomF32("pos_table", {kVocab, 100}, -1, 1, rng), "positions"}, "logits");
  ExpectOp("embed F32 61x100 by positions T=17+1", og, PrefillDecode(rng), kExactOp);
}

TEST_CASE("vulkan ops: rms_norm and layer_norm", "[vulkan][ops]") {
  if (!HaveVulkan()) return;
  Rng rng(4);
  {
    OpGraph og;
    const std::string x = og.Input("x", 515, 3.0f, rng);
    og.Op("rms_norm", {x, og.RandomF32("w", {515}, -2, 2, rng)}, "logits", {{"eps", 1e-6}});
    ExpectOp("rms_norm [T,515] weight eps=1e-6", og, PrefillDecode(rng), kF32Op);
  }
  {
    OpGraph og;
    og.Op("rms_norm", {og.Input("x", 67, 0.01f, rng)}, "logits", {{"eps", 1e-5}});
    ExpectOp("rms_norm [T,67] no weight, small x (eps matters)", og, PrefillDecode(rng), kF32Op);
  }
  {
    // Per-head QK-norm (Qwen3, Gemma 3): the rows are heads.
    OpGraph og;
    const std::string h = og.Heads(og.Input("x", 5 * 48, 1.0f, rng), 5, 48);
    const std::string n = og.Op("rms_norm", {h, og.RandomF32("w", {48}, 0.5f, 1.5f, rng)}, "n", {{"eps", 1e-6}});
    og.Flat(n, "logits");
    ExpectOp("rms_norm per head [T,5,48]", og, PrefillDecode(rng), kF32Op);
  }
  for (int variant = 0; variant < 3; ++variant) {
    OpGraph og;
    const std::string x = og.Input("x", 333, 2.0f, rng);
    std::vector<std::string> in = {x};
    if (variant >= 1) in.push_back(og.RandomF32("w", {333}, -2, 2, rng));
    if (variant >= 2) in.push_back(og.RandomF32("b", {333}, -1, 1, rng));
    og.Op("layer_norm", in, "logits", {{"eps", 1e-5}});
    static const char* kWhat[] = {"no weight", "weight", "weight and bias"};
    ExpectOp(std::string("layer_norm [T,333] ") + kWhat[variant], og, PrefillDecode(rng), kF32Op);
  }
  {
    // A bias without a weight (input 1 absent).
    OpGraph og;
    og.Op("layer_norm", {og.Input("x", 333, 2.0f, rng), "", og.RandomF32("b", {333}, -1, 1, rng)}, "logits",
          {{"eps", 1e-5}});
    ExpectOp("layer_norm [T,333] bias only", og, PrefillDecode(rng), kF32Op);
  }
}

TEST_CASE("vulkan ops: element-wise ops", "[vulkan][ops]") {
  if (!HaveVulkan()) return;
  Rng rng(5);
  for (const char* type : {"add", "mul"}) {
    {
      OpGraph og;
      og.Op(type, {og.Input("a", 100, 2.0f, rng), og.Input("b", 100, 2.0f, rng)}, "logits");
      ExpectOp(std::string(type) + " [T,100] with [T,100]", og, PrefillDecode(rng), kExactOp);
    }
    {
      // The vector operand a weight over the last dimension (a bias, a norm weight).
      OpGraph og;
      og.Op(type, {og.Input("a", 100, 2.0f, rng), og.RandomF32("b", {100}, -2, 2, rng)}, "logits");
      ExpectOp(std::string(type) + " [T,100] by weight [100]", og, PrefillDecode(rng), kExactOp);
    }
    {
      // The per-head broadcast: [T,5,20] by [20].
      OpGraph og;
      const std::string h = og.Heads(og.Input("a", 100, 2.0f, rng), 5, 20);
      og.Flat(og.Op(type, {h, og.RandomF32("b", {20}, -2, 2, rng)}, "y"), "logits");
      ExpectOp(std::string(type) + " [T,5,20] by weight [20]", og, PrefillDecode(rng), kExactOp);
    }
  }
  {
    OpGraph og;
    og.Op("scale", {og.Input("x", 131, 4.0f, rng)}, "logits", {{"scale", 0.37}});
    ExpectOp("scale [T,131] 0.37", og, PrefillDecode(rng), kExactOp);
  }
  {
    OpGraph og;
    og.Op("softcap", {og.Input("x", 131, 90.0f, rng)}, "logits", {{"cap", 30.0}});
    ExpectOp("softcap [T,131] cap=30, |x| < 90", og, PrefillDecode(rng), kF32Op);
  }
  {
    OpGraph og;
    og.Op("silu", {og.Input("x", 131, 10.0f, rng)}, "logits");
    ExpectOp("silu [T,131] |x| < 10", og, PrefillDecode(rng), kF32Op);
  }
  {
    OpGraph og;
    og.Op("gelu", {og.Input("x", 131, 6.0f, rng)}, "logits");
    ExpectOp("gelu [T,131] |x| < 6", og, PrefillDecode(rng), kGeluOp);
  }
  {
    OpGraph og;
    og.Op("swiglu", {og.Input("g", 75, 6.0f, rng), og.Input("u", 75, 2.0f, rng)}, "logits");
    ExpectOp("swiglu [T,75]", og, PrefillDecode(rng), kF32Op);
  }
  {
    OpGraph og;
    og.Op("geglu", {og.Input("g", 75, 6.0f, rng), og.Input("u", 75, 2.0f, rng)}, "logits");
    ExpectOp("geglu [T,75]", og, PrefillDecode(rng), kGeluOp);
  }
  {
    OpGraph og;
    og.Op("swiglu_fused", {og.Input("gu", 2 * 75, 6.0f, rng)}, "logits");
    ExpectOp("swiglu_fused [T,150] -> [T,75]", og, PrefillDecode(rng), kF32Op);
  }
  for (const auto& [begin, size] : {std::pair<int64_t, int64_t>{0, 37}, {37, 50}, {87, 44}}) {
    OpGraph og;
    og.Op("slice", {og.Input("x", 131, 1.0f, rng)}, "logits", {{"begin", begin}, {"size", size}});
    ExpectOp("slice [T,131] columns " + std::to_string(begin) + " +" + std::to_string(size), og, PrefillDecode(rng),
             kExactOp);
  }
  {
    // The rows the caller asks for (R != T), in any order.
    OpGraph og;
    og.Op("output_rows", {og.Input("x", 97, 1.0f, rng)}, "logits");
    Pass some = Tokens(17, 0, rng), last = Tokens(3, 17, rng);
    some.rows = {16, 0, 5, 11};
    last.rows = {2};
    ExpectOp("output_rows [T,97] rows {16,0,5,11} then {2}", og, {some, last}, kExactOp);
  }
}

namespace {

// HF rope_scaling yarn's per-frequency factors (lib/models/hf_graph.cpp, from
// transformers' _compute_yarn_parameters with truncate).
std::vector<float> YarnFactors(int64_t nd, double theta, double factor, double orig) {
  auto corr = [&](double rot) { return nd * std::log(orig / (rot * 2 * std::numbers::pi)) / (2 * std::log(theta)); };
  const double low = std::max(0.0, std::floor(corr(32.0)));
  double high = std::min(static_cast<double>(nd - 1), std::ceil(corr(1.0)));
  if (low == high) high += 0.001;
  std::vector<float> f;
  for (int64_t i = 0; i < nd / 2; ++i) {
    const double extrap = std::pow(theta, -2.0 * i / nd), interp = extrap / factor;
    const double e = 1 - std::clamp((i - low) / (high - low), 0.0, 1.0);
    f.push_back(static_cast<float>(extrap / (interp * (1 - e) + extrap * e)));
  }
  return f;
}

// HF rope_scaling llama3's factors (hf_graph.cpp, transformers' _compute_llama3_parameters).
std::vector<float> Llama3Factors(int64_t nd, double theta, double factor, double low_ff, double high_ff, double orig) {
  const double low_wl = orig / low_ff, high_wl = orig / high_ff;
  std::vector<float> f;
  for (int64_t i = 0; i < nd / 2; ++i) {
    const double inv = std::pow(theta, -2.0 * i / nd), wl = 2 * std::numbers::pi / inv;
    double nf = inv;
    if (wl > low_wl) {
      nf = inv / factor;
    } else if (wl >= high_wl) {
      const double smooth = (orig / wl - low_ff) / (high_ff - low_ff);
      nf = (1 - smooth) * inv / factor + smooth * inv;
    }
    f.push_back(static_cast<float>(inv / nf));
  }
  return f;
}

struct RopeCase {
  std::string what;
  std::string mode;
  int64_t H, D, n_dims;
  std::map<std::string, ir::AttrValue> attrs;  // besides mode and n_dims
  std::vector<float> factors = {}, long_factors = {};  // input 2 / input 3 (LongRoPE)
  int64_t n_ctx = 1024;                        // the cache's context (LongRoPE picks by it)
  int32_t max_pos = 1000;
};

void RunRope(const RopeCase& c, Rng& rng) {
  OpGraph og;
  const std::string x = og.Heads(og.Input("x", c.H * c.D, 1.0f, rng), c.H, c.D);
  std::vector<std::string> in = {x, "positions"};
  if (!c.factors.empty() || !c.long_factors.empty())
    in.push_back(c.factors.empty() ? "" : og.F32("factors", {c.n_dims / 2}, c.factors));
  if (!c.long_factors.empty()) in.push_back(og.F32("long_factors", {c.n_dims / 2}, c.long_factors));
  auto attrs = c.attrs;
  attrs["mode"] = c.mode;
  attrs["n_dims"] = c.n_dims;
  og.Flat(og.Op("rope", in, "y", attrs), "logits");
  // Scattered positions (rope has no cache to fill), then a decode step at the last one.
  Pass prefill = Tokens(17, 0, rng);
  for (auto& p : prefill.positions) p = rng.Int(0, c.max_pos);
  Pass decode = Tokens(1, c.max_pos - 1, rng);
  CacheSpec cache;
  cache.n_ctx = c.n_ctx;
  ExpectOp("rope " + c.what + " [T," + std::to_string(c.H) + "," + std::to_string(c.D) + "] n_dims=" +
               std::to_string(c.n_dims),
           og, {prefill, decode}, kRopeOp, cache);
}

}  // namespace

TEST_CASE("vulkan ops: rope, both modes, partial rotary and every frequency scheme", "[vulkan][ops]") {
  if (!HaveVulkan()) return;
  Rng rng(6);
  const std::map<std::string, ir::AttrValue> base = {{"freq_base", 10000.0}, {"freq_scale", 1.0}};
  auto with = [&](std::map<std::string, ir::AttrValue> more) {
    auto a = base;
    for (auto& [k, v] : more) a[k] = v;
    return a;
  };
  std::vector<RopeCase> cases;
  cases.push_back({"norm", "norm", 5, 64, 64, base});
  cases.push_back({"neox base=1e6", "neox", 3, 128, 128, with({{"freq_base", 1e6}})});
  cases.push_back({"norm partial", "norm", 5, 64, 32, base});
  cases.push_back({"neox partial", "neox", 7, 40, 24, base});
  cases.push_back({"linear scale=0.25", "neox", 5, 64, 64, with({{"freq_scale", 0.25}})});
  // GGUF rope.scaling.type yarn (spec.cpp / RopeAttrs): ext_factor 1 and ggml's ramp.
  cases.push_back({"YaRN (GGUF, ext_factor) factor=4", "neox", 5, 64, 64,
                   with({{"freq_scale", 0.25}, {"ext_factor", 1.0}, {"attn_factor", 1.0}, {"beta_fast", 32.0},
                         {"beta_slow", 1.0}, {"n_ctx_orig", int64_t{256}}})});
  cases.push_back({"YaRN (GGUF) partial, attn_factor=0.9", "norm", 5, 64, 48,
                   with({{"freq_scale", 0.125}, {"ext_factor", 1.0}, {"attn_factor", 0.9}, {"beta_fast", 32.0},
                         {"beta_slow", 1.0}, {"n_ctx_orig", int64_t{128}}})});
  // HF rope_scaling yarn: per-frequency factors, cos/sin times the attention factor.
  {
    RopeCase c{"YaRN (HF, factors) factor=8", "neox", 5, 64, 64,
               with({{"ext_factor", 0.0}, {"attn_factor", 1.2079}, {"beta_fast", 32.0}, {"beta_slow", 1.0},
                     {"n_ctx_orig", int64_t{256}}})};
    c.factors = YarnFactors(64, 10000.0, 8.0, 256.0);
    cases.push_back(c);
  }
  // HF rope_scaling llama3 (and GGUF rope_freqs.weight, the same factors in the file).
  {
    RopeCase c{"Llama-3 factors", "norm", 5, 64, 64, with({{"freq_base", 500000.0}})};
    c.factors = Llama3Factors(64, 500000.0, 8.0, 1.0, 4.0, 8192.0);
    cases.push_back(c);
  }
  // LongRoPE (Phi-3): short factors while the context stays within long_factors_ctx,
  // long ones beyond it, as the CPU's and llama.cpp's get_rope_factors pick.
  for (int64_t n_ctx : {int64_t{512}, int64_t{2048}}) {
    RopeCase c{n_ctx > 512 ? "LongRoPE long factors (n_ctx 2048 > 512)" : "LongRoPE short factors (n_ctx 512)",
               "neox", 5, 48, 48, with({{"attn_factor", 1.19}, {"long_factors_ctx", int64_t{512}}})};
    for (int i = 0; i < 24; ++i) c.factors.push_back(rng.Uniform(1.0f, 1.5f));
    for (int i = 0; i < 24; ++i) c.long_factors.push_back(rng.Uniform(1.0f, 40.0f));
    c.n_ctx = n_ctx;
    c.max_pos = 500;
    cases.push_back(c);
  }
  for (const RopeCase& c : cases) RunRope(c, rng);
}

TEST_CASE("vulkan ops: LongRoPE's two factor sets give different results", "[vulkan][ops]") {
  // Guards the LongRoPE cases above: a device that ignored input 3 would pass them only
  // if the short and long outputs were the same.
  if (!HaveVulkan()) return;
  Rng rng(7);
  OpGraph og;
  const std::string x = og.Heads(og.Input("x", 2 * 48, 1.0f, rng), 2, 48);
  og.Flat(og.Op("rope",
                {x, "positions", og.F32("s", {24}, std::vector<float>(24, 1.0f)),
                 og.F32("l", {24}, std::vector<float>(24, 4.0f))},
                "y", {{"mode", std::string("neox")}, {"n_dims", int64_t{48}}, {"freq_base", 10000.0},
                      {"long_factors_ctx", int64_t{64}}}),
          "logits");
  auto dev = bv::VulkanProgram::Create(Device(), og.graph(), og.weights());
  REQUIRE(dev.ok());
  const std::vector<Pass> passes = {Tokens(5, 10, rng)};
  const auto short_out = RunPasses(**dev, nullptr, passes, CacheSpec{64});
  const auto long_out = RunPasses(**dev, nullptr, passes, CacheSpec{128});
  const double moved = Nmse(short_out[0], long_out[0]);
  std::printf("vulkan op rope LongRoPE short vs long factors: NMSE between them %.3e (must be > 1e-2)\n", moved);
  CHECK(moved > 1e-2);
}

namespace {

struct AttnCase {
  std::string what;
  int64_t Hq, Hkv, D, Dv;
  double scale;
  int64_t window = 0;      // the op's sliding-window attribute
  double softcap = 0;
  float amp = 1.0f;        // |q|, |k| bound
  CacheSpec cache = {};    // n_ctx, resident window, sinks, max_batch
  std::vector<int64_t> batches = {17, 1, 3};  // the passes' token counts, positions continuing
};

void RunAttention(const AttnCase& c, Rng& rng) {
  OpGraph og;
  const std::string q = og.Heads(og.Input("q", c.Hq * c.D, c.amp, rng), c.Hq, c.D);
  const std::string k = og.Heads(og.Input("k", c.Hkv * c.D, c.amp, rng), c.Hkv, c.D);
  const std::string v = og.Heads(og.Input("v", c.Hkv * c.Dv, 1.0f, rng), c.Hkv, c.Dv);
  std::map<std::string, ir::AttrValue> attrs = {{"layer", int64_t{0}}, {"scale", c.scale}};
  if (c.window > 0) attrs["window"] = c.window;
  if (c.softcap > 0) attrs["softcap"] = c.softcap;
  og.Op("attention", {q, k, v}, "logits", attrs);
  std::vector<Pass> passes;
  int32_t pos = 0;
  for (int64_t T : c.batches) {
    passes.push_back(Tokens(T, pos, rng));
    pos += static_cast<int32_t>(T);
  }
  const Results r = RunBoth(og, passes, c.cache);
  // One line for the prefill, one for each later pass (T = 1: a decode step against
  // the prefill's cells), and one for the rest together when there are many.
  const std::string shape = "Hq=" + std::to_string(c.Hq) + " Hkv=" + std::to_string(c.Hkv) + " D=" +
                            std::to_string(c.D) + "/" + std::to_string(c.Dv);
  const size_t shown = std::min<size_t>(passes.size(), 3);
  for (size_t i = 0; i < shown; ++i)
    Expect("attention " + c.what + " " + shape + " T=" + std::to_string(c.batches[i]) + " at " +
               std::to_string(passes[i].positions[0]),
           Nmse(r.cpu[i], r.dev[i]), kAttention);
  if (passes.size() > shown) {
    std::vector<float> cpu, dev;
    for (size_t i = shown; i < passes.size(); ++i) {
      cpu.insert(cpu.end(), r.cpu[i].begin(), r.cpu[i].end());
      dev.insert(dev.end(), r.dev[i].begin(), r.dev[i].end());
    }
    Expect("attention " + c.what + " " + shape + " the next " + std::to_string(passes.size() - shown) +
               " passes to " + std::to_string(pos - 1),
           Nmse(cpu, dev), kAttention);
  }
}

}  // namespace

TEST_CASE("vulkan ops: attention (GQA, causal, sliding window, soft-cap, KV window with sinks)", "[vulkan][ops]") {
  if (!HaveVulkan()) return;
  Rng rng(8);
  std::vector<AttnCase> cases;
  cases.push_back({"GQA 3:1 causal", 6, 2, 64, 64, 0.125});
  cases.push_back({"MQA 5:1, Dv != D", 5, 1, 80, 48, 1.0 / std::sqrt(80.0)});
  cases.push_back({"MHA 3:3 odd heads, D=34", 3, 3, 34, 34, 1.0 / std::sqrt(34.0)});
  cases.push_back({"GQA 7:1 sliding window 7", 7, 1, 64, 64, 0.125, 7});
  {
    AttnCase c{"GQA 4:2 soft-cap 15", 4, 2, 32, 32, 1.0, 0, 15.0, 1.5f};
    cases.push_back(c);
  }
  {
    // The resident KV window (runtime/kv_cache.h): 16 positions + 4 sinks + batches of up
    // to 8 in a ring of 32 cells, wrapped twice by 68 positions.
    AttnCase c{"KV window 16 + 4 sinks (ring wraps)", 6, 3, 48, 48, 1.0 / std::sqrt(48.0)};
    c.cache = CacheSpec{256, 16, 4, 8};
    c.batches = {8, 1, 3, 8, 8, 8, 8, 8, 8, 1, 1, 6};
    cases.push_back(c);
  }
  {
    AttnCase c{"KV window 16 + 4 sinks, sliding window 12", 4, 2, 32, 32, 0.2, 12};
    c.cache = CacheSpec{256, 16, 4, 8};
    c.batches = {8, 1, 8, 8, 8, 8, 1, 5};
    cases.push_back(c);
  }
  for (const AttnCase& c : cases) RunAttention(c, rng);
}

TEST_CASE("vulkan ops: norm_linear, as the planner fuses rms_norm and matmuls", "[vulkan][ops]") {
  // The planner's passes (lib/planner/fusion.h) on rms_norm -> matmul(s) [-> swiglu /
  // geglu]: the fused op runs on both devices; the device's fused result also equals
  // its unfused one (the same kernels in the same order).
  if (!HaveVulkan()) return;
  Rng rng(9);
  constexpr int64_t K = 160, N = 75;
  int qkv_output = 0;  // which of Q, K, V is the graph's output, in turn
  for (TensorType type : {TensorType::F32, TensorType::Q4_0, TensorType::Q4_K}) {
    const int64_t k = KQuant(type) ? 256 : K;
    for (const std::string act : {"swiglu", "geglu", "", "", ""}) {
      OpGraph og;
      const std::string x = og.Input("x", k, 2.0f, rng);
      const std::string h = og.Op("rms_norm", {x, og.RandomF32("norm", {k}, 0.5f, 1.5f, rng)}, "h", {{"eps", 1e-6}});
      auto W = [&](const std::string& name, int64_t rows) {
        return og.Weight(name, type, {rows, k}, RandomRows(type, rows, k, rng));
      };
      std::string what;
      if (!act.empty()) {
        const std::string g = og.Op("matmul", {h, W("w_gate", N)}, "gate");
        const std::string u = og.Op("matmul", {h, W("w_up", N)}, "up");
        og.Op(act, {g, u}, "logits");
        what = "norm_linear " + act + " " + Name(type) + " " + Dims(N, k);
      } else {
        const int out = qkv_output++ % 3;
        const int64_t rows[3] = {N, 33, 33};  // Q, K, V of different widths
        for (int i = 0; i < 3; ++i)
          og.Op("matmul", {h, W("w" + std::to_string(i), rows[i])}, i == out ? "logits" : "o" + std::to_string(i));
        what = "norm_linear QKV " + Name(type) + " output " + std::to_string(out) + " of 3";
      }
      int fused = 0, gated = 0;
      auto g1 = planner::FuseNormLinear(og.graph(), &fused);
      REQUIRE(g1.ok());
      auto g2 = planner::FuseGatedActivation(*g1, &gated);
      REQUIRE(g2.ok());
      CHECK(fused == 1);
      CHECK(gated == (act.empty() ? 0 : 1));
      const ir::Graph unfused = og.graph();
      og.graph() = *g2;
      bool has_norm_linear = false;
      for (const auto& op : og.graph().ops) has_norm_linear |= op.type == "norm_linear";
      REQUIRE(has_norm_linear);
      const std::vector<Pass> passes = {Tokens(17, 0, rng), Tokens(1, 17, rng)};
      const Results r = RunBoth(og, passes);
      const double limit = CpuProductThreshold(type) + (act == "geglu" ? kGeluOp : 0.0);
      Expect(what + " T=17+1", Nmse(Joined(r.cpu), Joined(r.dev)), limit);
      auto plain = bv::VulkanProgram::Create(Device(), unfused, og.weights());
      REQUIRE(plain.ok());
      auto vk_backend = backends::SelectBackend("vulkan");
      REQUIRE(vk_backend.ok());
      CHECK(Joined(RunPasses(**plain, *vk_backend, passes, {})) == Joined(r.dev));
    }
  }
}

namespace {

struct MoeCase {
  std::string what;
  TensorType type;        // the expert banks' (and the shared expert's)
  int64_t n, k, E, F, Fs;  // experts, used per token, width, expert FFN, shared FFN (0: none)
  std::string gating = "softmax";
  bool norm_w = true, bias = false, shared_gate = false;
  double w_scale = 0;
  // Gemma 4: GELU experts, the router's own input, per-expert output scales; and one
  // fused gate|up bank [n, 2F, E] instead of separate gate and up banks.
  bool gemma4 = false, fused_gate_up = false;
};

void RunMoe(const MoeCase& c, Rng& rng) {
  OpGraph og;
  const std::string x = og.Input("x", c.E, 1.0f, rng);
  auto bank = [&](const std::string& name, const ir::Shape& shape) {
    return og.Weight(name, c.type, shape, RandomRows(c.type, shape[0] * (shape.size() > 2 ? shape[1] : 1), shape.back(), rng));
  };
  // The router F32 on both devices (as the fixtures): its logits differ by summation
  // order only, so every token routes alike (a near-tie would show as a whole row off).
  std::vector<std::string> in = {x, og.RandomF32("router", {c.n, c.E}, -0.3f, 0.3f, rng),
                                 c.fused_gate_up ? bank("gate_up_exps", {c.n, 2 * c.F, c.E})
                                                 : bank("up_exps", {c.n, c.F, c.E}),
                                 c.fused_gate_up ? "" : bank("gate_exps", {c.n, c.F, c.E}),
                                 bank("down_exps", {c.n, c.E, c.F}),
                                 c.bias ? og.RandomF32("exp_probs_b", {c.n}, -0.1f, 0.1f, rng) : ""};
  in.resize(12);
  if (c.Fs > 0) {
    in[6] = bank("up_shexp", {c.Fs, c.E});
    in[7] = bank("gate_shexp", {c.Fs, c.E});
    in[8] = bank("down_shexp", {c.E, c.Fs});
    in[9] = c.shared_gate ? og.RandomF32("gate_inp_shexp", {c.E}, -0.1f, 0.1f, rng) : "";
  }
  if (c.gemma4) {
    in[10] = og.Input("router_x", c.E, 1.0f, rng);
    in[11] = og.RandomF32("down_scale", {c.n}, 0.5f, 1.5f, rng);
  }
  while (!in.empty() && in.back().empty()) in.pop_back();
  std::map<std::string, ir::AttrValue> attrs = {
      {"n_expert_used", c.k}, {"gating", c.gating}, {"norm_w", int64_t{c.norm_w ? 1 : 0}}};
  if (c.w_scale != 0) attrs["w_scale"] = c.w_scale;
  if (c.gemma4) attrs["act"] = std::string("gelu");
  if (c.fused_gate_up) attrs["fused_gate_up"] = int64_t{1};
  og.Op("moe_ffn", in, "logits", attrs);
  const std::vector<Pass> passes = {Tokens(17, 0, rng), Tokens(1, 17, rng)};
  const Results r = RunBoth(og, passes);
  // GELU rounds its input to f16, as the geglu op (kGeluOp): a product that differs in
  // summation order may round the other way.
  const double limit = CpuProductThreshold(c.type) + (c.gemma4 ? kGeluOp : 0.0);
  Expect("moe_ffn " + c.what + " " + Name(c.type) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
             " E=" + std::to_string(c.E) + " F=" + std::to_string(c.F) + " T=17",
         Nmse(r.cpu[0], r.dev[0]), limit);
  Expect("moe_ffn " + c.what + " " + Name(c.type) + " T=1", Nmse(r.cpu[1], r.dev[1]), limit);
}

}  // namespace

TEST_CASE("vulkan ops: moe_ffn on small random banks", "[vulkan][ops]") {
  if (!HaveVulkan()) return;
  Rng rng(10);
  std::vector<MoeCase> cases;
  cases.push_back({"softmax top-2 (Mixtral)", TensorType::F32, 8, 2, 96, 160, 0});
  {
    MoeCase c{"sigmoid top-3 + bias, w_scale 2.5, gated shared expert", TensorType::Q8_0, 7, 3, 96, 64, 32};
    c.gating = "sigmoid";
    c.bias = true;
    c.shared_gate = true;
    c.w_scale = 2.5;
    cases.push_back(c);
  }
  {
    MoeCase c{"softmax top-4 unnormalised + shared expert (Qwen2-MoE)", TensorType::Q4_0, 6, 4, 160, 96, 64};
    c.norm_w = false;
    cases.push_back(c);
  }
  cases.push_back({"softmax top-2", TensorType::F16, 5, 2, 96, 64, 0});
  cases.push_back({"softmax top-2 (K-quant bank)", TensorType::Q4_K, 4, 2, 256, 256, 0});
  for (TensorType t : {TensorType::F32, TensorType::Q8_0, TensorType::Q4_0}) {
    MoeCase c{"Gemma 4: GELU, router input, per-expert scales, fused gate|up", t, 6, 2, 128, 64, 0};
    c.gemma4 = c.fused_gate_up = true;
    cases.push_back(c);
  }
  {
    MoeCase c{"Gemma 4: separate gate and up banks", TensorType::Q8_0, 5, 2, 96, 64, 0};
    c.gemma4 = true;
    cases.push_back(c);
  }
  {
    MoeCase c{"fused gate|up with SiLU and a shared expert", TensorType::Q8_0, 6, 3, 96, 64, 32};
    c.fused_gate_up = true;
    cases.push_back(c);
  }
  for (const MoeCase& c : cases) RunMoe(c, rng);
}
