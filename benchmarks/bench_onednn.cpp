// Prefill GEMM: uaii's own kernels (kernels/matmul.h) against oneDNN's matmul
// (Debian's libdnnl 2.6) on the float weight types, side by side in one run, and
// whether oneDNN keeps the fixed summation order uaii's results rely on.
//
// For each type (F32; BF16 and F16: both operands in the type, as oneDNN 2.6 wants
// them) and TinyLlama's prefill shapes (512 rows against 2048x2048 and 5632x2048
// weights) it prints the best call's GFLOP/s of both at 1 and 2 threads, then three
// checks of oneDNN's results, bit for bit:
//   same as uaii   - outputs equal to uaii's (which are ggml's reference order:
//                    4 x 8 f32 lanes over steps of 32, vec_dot.h);
//   rows invariant - the 512-row call against the same rows run 7 at a time and 1 at
//                    a time (uaii's prefill chunks and decode's one row);
//   threads        - 1 thread against 2.
// uaii's own results pass all three by construction (kernels/matmul.h; tested in
// tests/kernels). The f16 primitive is created at run time and its absence (oneDNN
// 2.6 has f16 matmul only on CPUs with AVX512-FP16) is reported, not fatal: that is
// the query an engine path would make before falling back to uaii's kernel.
//   uaii_bench_onednn [--quick]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "formats/fp16.h"
#include "formats/tensor_type.h"
#include "kernels/matmul.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct TypeCase {
  const char* name;
  uaii::TensorType uaii_type;
  dt dnnl_type;
};

// Values exactly representable in the type, so both engines see the same numbers.
float RoundTo(dt t, float v) {
  if (t == dt::bf16) return uaii::Bf16ToFp32(uaii::Fp32ToBf16(v));
  if (t == dt::f16) return uaii::Fp16ToFp32(uaii::Fp32ToFp16(v));
  return v;
}

// The buffer oneDNN reads for `vals` in type t (f32, or 16-bit patterns).
std::vector<uint8_t> Encode(dt t, const std::vector<float>& vals) {
  const size_t es = t == dt::f32 ? 4 : 2;
  std::vector<uint8_t> out(vals.size() * es);
  for (size_t i = 0; i < vals.size(); ++i) {
    if (t == dt::f32) {
      std::memcpy(&out[4 * i], &vals[i], 4);
    } else {
      const uint16_t h = t == dt::bf16 ? uaii::Fp32ToBf16(vals[i]) : uaii::Fp32ToFp16(vals[i]);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

// One oneDNN matmul of fixed shape: y [m x n] f32 = x [m x k] . W^T, W stored [n x k]
// row-major (GGUF's layout) as oneDNN's weights [k x n] in format "ba".
class DnnlMatmul {
 public:
  DnnlMatmul(const dnnl::engine& eng, dt type, int64_t m, int64_t n, int64_t k)
      : x_md_({m, k}, type, tag::ab), w_md_({k, n}, type, tag::ba), y_md_({m, n}, dt::f32, tag::ab) {
    pd_ = dnnl::matmul::primitive_desc(dnnl::matmul::desc(x_md_, w_md_, y_md_), eng);
    prim_ = dnnl::matmul(pd_);
  }
  std::string impl() const { return pd_.impl_info_str(); }
  void Run(const dnnl::engine& eng, dnnl::stream& s, const void* x, const void* w, float* y) const {
    dnnl::memory xm(x_md_, eng, const_cast<void*>(x)), wm(w_md_, eng, const_cast<void*>(w)), ym(y_md_, eng, y);
    prim_.execute(s, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}});
    s.wait();
  }

 private:
  dnnl::memory::desc x_md_, w_md_, y_md_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
};

// The run-time query: can oneDNN build this matmul here? (2.6 throws "unimplemented"
// for f16 on CPUs without AVX512-FP16.)
bool Supported(const dnnl::engine& eng, dt type, int64_t m, int64_t n, int64_t k, std::string* why) {
  try {
    DnnlMatmul(eng, type, m, n, k);
    return true;
  } catch (const dnnl::error& e) {
    *why = e.what();
    return false;
  }
}

double BestSeconds(int iters, const std::function<void()>& call) {
  call();  // warm up (first-touch, primitive caches)
  double best = 1e30;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

size_t CountSame(const std::vector<float>& a, const std::vector<float>& b) {
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += std::memcmp(&a[i], &b[i], 4) == 0;
  return same;
}

double MaxRelDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(double(a[i]) - b[i]) / std::max(1e-6, std::fabs(double(b[i]))));
  return worst;
}

// oneDNN's y for x's rows run `chunk` rows per call (the last call takes the rest).
std::vector<float> DnnlInChunks(const dnnl::engine& eng, dnnl::stream& s, dt type, int64_t m, int64_t n,
                                int64_t k, const std::vector<uint8_t>& x, const std::vector<uint8_t>& w,
                                int64_t chunk) {
  const size_t es = type == dt::f32 ? 4 : 2;
  std::vector<float> y(static_cast<size_t>(m * n));
  for (int64_t r = 0; r < m; r += chunk) {
    const int64_t rows = std::min(chunk, m - r);
    DnnlMatmul(eng, type, rows, n, k).Run(eng, s, x.data() + r * k * es, w.data(), y.data() + r * n);
  }
  return y;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
  const int iters = quick ? 3 : 10;
  const int64_t m = 512;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{2048, 2048}, {5632, 2048}};  // out x in
  const TypeCase types[] = {{"F32", uaii::TensorType::F32, dt::f32},
                            {"BF16", uaii::TensorType::BF16, dt::bf16},
                            {"F16", uaii::TensorType::F16, dt::f16}};
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(eng);
  const dnnl_version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d (CPU runtime: OpenMP), %lld-row prefill GEMMs; ms and GFLOP/s of the best call\n",
              v->major, v->minor, v->patch, static_cast<long long>(m));
  std::printf("%-5s %11s %7s %10s %10s %8s   %s\n", "type", "out x in", "threads", "uaii GF/s", "oneDNN GF/s",
              "ratio", "oneDNN implementation");
  for (const TypeCase& tc : types) {
    for (const auto& [n, k] : shapes) {
      std::mt19937 rng(7);
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> wv(static_cast<size_t>(n * k)), xv(static_cast<size_t>(m * k));
      for (auto& f : wv) f = RoundTo(tc.dnnl_type, dist(rng));
      for (auto& f : xv) f = RoundTo(tc.dnnl_type, dist(rng));
      const std::vector<uint8_t> w = Encode(tc.dnnl_type, wv), x = Encode(tc.dnnl_type, xv);
      // uaii reads W in its own type and x as f32 (rounded to the type inside, to the
      // same values: they are representable).
      std::vector<float> y_uaii(static_cast<size_t>(m * n)), y_dnnl(y_uaii.size()), y_dnnl_1t(y_uaii.size());
      const double flop = 2.0 * m * n * k;
      if (std::string why; !Supported(eng, tc.dnnl_type, m, n, k, &why)) {
        for (int threads : {1, 2}) {
          uaii::ThreadPool pool(threads);
          const double t_uaii = BestSeconds(iters, [&] {
            (void)uaii::MatMul(tc.uaii_type, w.data(), n, k, xv.data(), m, y_uaii.data(), &pool);
          });
          std::printf("%-5s %5lldx%-5lld %7d %10.1f %10s %8s   none on this CPU (%s): uaii's kernel is the only path\n",
                      tc.name, static_cast<long long>(n), static_cast<long long>(k), threads, flop / t_uaii * 1e-9,
                      "-", "-", why.c_str());
        }
        continue;
      }
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        uaii::ThreadPool pool(threads);
        const DnnlMatmul mm(eng, tc.dnnl_type, m, n, k);  // created under this thread count
        const double t_uaii = BestSeconds(iters, [&] {
          (void)uaii::MatMul(tc.uaii_type, w.data(), n, k, xv.data(), m, y_uaii.data(), &pool);
        });
        std::vector<float>& y = threads == 1 ? y_dnnl_1t : y_dnnl;
        const double t_dnnl = BestSeconds(iters, [&] { mm.Run(eng, stream, x.data(), w.data(), y.data()); });
        std::printf("%-5s %5lldx%-5lld %7d %10.1f %10.1f %7.2fx   %s\n", tc.name, static_cast<long long>(n),
                    static_cast<long long>(k), threads, flop / t_uaii * 1e-9, flop / t_dnnl * 1e-9,
                    t_uaii / t_dnnl, mm.impl().c_str());
      }
      omp_set_num_threads(2);
      const std::vector<float> y7 = DnnlInChunks(eng, stream, tc.dnnl_type, m, n, k, x, w, 7);
      const std::vector<float> y1 = DnnlInChunks(eng, stream, tc.dnnl_type, 64, n, k, x, w, 1);
      const std::vector<float> y_head(y_dnnl.begin(), y_dnnl.begin() + 64 * n);
      const size_t all = y_dnnl.size();
      std::printf("      oneDNN bits: same as uaii %zu/%zu (max rel diff %.2e); 512 rows vs 7 at a time %zu/%zu, "
                  "vs 1 at a time (first 64 rows) %zu/%zu; 1 vs 2 threads %zu/%zu\n",
                  CountSame(y_dnnl, y_uaii), all, MaxRelDiff(y_dnnl, y_uaii), CountSame(y_dnnl, y7), all,
                  CountSame(y_head, y1), y1.size(), CountSame(y_dnnl, y_dnnl_1t), all);
    }
  }
  return 0;
}
