// A Vulkan device's memory read bandwidth, the decode roofline of the Vulkan backend
// (benchmarks/device/run_gpu.sh divides it by the weight bytes a token reads).
//
// A device-local buffer of --mib MiB (in chunks of at most 1 GiB or the device's
// maxStorageBufferRange, each its own allocation, as vk_weights.cpp chunks weights) is
// filled on the device with a hash of each word's index (incompressible data), then
// the kernel benchmarks/membw_read.comp sums every uvec4 of it in a grid-stride loop:
// --warmup + --reps passes in one command buffer,
// each pass bracketed by timestamps (a barrier between passes), then the same passes
// again timed by the wall clock around one submission. GB/s = 10^9 bytes read per
// second. The sum of every pass is checked against the host's (32-bit wrap) so a pass
// that read nothing cannot count.
//
//   uaii_bench_vulkan_membw [--device N] [--mib 1024] [--reps 20] [--warmup 3]
//                           [--groups G] [--no-verify]
// --groups: workgroups (256 invocations) per chunk dispatch, 0 (default): one per
// 1024 uvec4s, at most 65535 x 64. The kernel runs on the library's Device / Buffer /
// Kernels (its pipeline layout); its SPIR-V is compiled by benchmarks/CMakeLists.txt.
// Prints a human line on stderr and one JSON line on stdout.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/vulkan/vk.h"
#include "backends/vulkan/vk_buffer.h"
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vk_kernels.h"

namespace {

namespace vkb = uaii::backends::vulkan;

const uint32_t kReadSpv[] =
#include "membw_read.inc"
    ;
const uint32_t kFillSpv[] =
#include "membw_read_fill.inc"
    ;

uint32_t Hash(uint32_t x) {  // membw_read.comp's
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// The sum of Hash(w) over words [0, words), 32-bit wrap, on the host's threads.
uint32_t HostSum(uint64_t words) {
  const unsigned t = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<uint32_t> part(t, 0);
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < t; ++k)
    pool.emplace_back([&, k] {
      const uint64_t lo = words * k / t, hi = words * (k + 1) / t;
      uint32_t s = 0;
      for (uint64_t w = lo; w < hi; ++w) s += Hash(static_cast<uint32_t>(w));
      part[k] = s;
    });
  for (auto& th : pool) th.join();
  uint32_t s = 0;
  for (uint32_t p : part) s += p;
  return s;
}

struct Args {
  int device = 0;
  uint64_t mib = 1024;
  int reps = 20;
  int warmup = 3;
  uint32_t groups = 0;
  bool verify = true;
};

int Usage() {
  std::fprintf(stderr,
               "usage: uaii_bench_vulkan_membw [--device N] [--mib 1024] [--reps 20] [--warmup 3] [--groups G] "
               "[--no-verify]\n");
  return 2;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int Run(const Args& a) {
  auto devices = vkb::ListDevices();
  if (!devices.ok()) {
    std::fprintf(stderr, "uaii_bench_vulkan_membw: %s\n", std::string(devices.status().message()).c_str());
    return 1;
  }
  auto dev = vkb::Device::Open(a.device);
  if (!dev.ok()) {
    std::fprintf(stderr, "uaii_bench_vulkan_membw: %s\n", std::string(dev.status().message()).c_str());
    return 1;
  }
  const std::shared_ptr<vkb::Device> device = *dev;
  const vkb::DeviceInfo& info = device->info();
  auto kernels_or = vkb::Kernels::Get(device);
  if (!kernels_or.ok()) {
    std::fprintf(stderr, "uaii_bench_vulkan_membw: %s\n", std::string(kernels_or.status().message()).c_str());
    return 1;
  }
  const std::shared_ptr<vkb::Kernels> kernels = *kernels_or;
  const vk::Device d = device->handle();

  // Chunks of whole uvec4s, at most 1 GiB and the device's storage-buffer range.
  const uint64_t total = a.mib << 20;
  const uint64_t range = std::min<uint64_t>(info.max_storage_buffer_range, 1ull << 30);
  const uint64_t chunk = std::max<uint64_t>(16, range / 16 * 16);
  std::vector<std::unique_ptr<vkb::Buffer>> chunks;
  std::vector<uint64_t> chunk_bytes;
  for (uint64_t off = 0; off < total; off += chunk) {
    const uint64_t n = std::min(chunk, total - off);
    auto b = vkb::Buffer::Create(device, n, vkb::Buffer::Kind::kDevice);
    if (!b.ok()) {
      std::fprintf(stderr, "uaii_bench_vulkan_membw: %s\n", std::string(b.status().message()).c_str());
      return 1;
    }
    chunks.push_back(*std::move(b));
    chunk_bytes.push_back(n);
  }
  auto sum_or = vkb::Buffer::Create(device, 16, vkb::Buffer::Kind::kHost);
  if (!sum_or.ok()) {
    std::fprintf(stderr, "uaii_bench_vulkan_membw: %s\n", std::string(sum_or.status().message()).c_str());
    return 1;
  }
  const std::unique_ptr<vkb::Buffer> sum = *std::move(sum_or);

  auto make_pipeline = [&](const uint32_t* words, size_t bytes) {
    vk::ShaderModule module = d.createShaderModule(vk::ShaderModuleCreateInfo({}, bytes, words));
    vk::PipelineShaderStageCreateInfo stage({}, vk::ShaderStageFlagBits::eCompute, module, "main");
    auto made = d.createComputePipeline(nullptr, vk::ComputePipelineCreateInfo({}, stage, kernels->layout()));
    d.destroyShaderModule(module);
    if (made.result != vk::Result::eSuccess) throw std::runtime_error("vkCreateComputePipelines failed");
    return made.value;
  };
  const vk::Pipeline read = make_pipeline(kReadSpv, sizeof(kReadSpv));
  const vk::Pipeline fill = make_pipeline(kFillSpv, sizeof(kFillSpv));

  // One descriptor set per chunk: data, sum, and the layout's two unused bindings.
  const uint32_t n_sets = static_cast<uint32_t>(chunks.size());
  vk::DescriptorPoolSize pool_size(vk::DescriptorType::eStorageBuffer, n_sets * vkb::kBindings);
  vk::DescriptorPool set_pool = d.createDescriptorPool(vk::DescriptorPoolCreateInfo({}, n_sets, pool_size));
  std::vector<vk::DescriptorSetLayout> layouts(n_sets, kernels->set_layout());
  std::vector<vk::DescriptorSet> sets = d.allocateDescriptorSets(vk::DescriptorSetAllocateInfo(set_pool, layouts));
  for (uint32_t c = 0; c < n_sets; ++c) {
    vk::DescriptorBufferInfo bi[vkb::kBindings] = {
        {chunks[c]->handle(), 0, chunk_bytes[c]},
        {sum->handle(), 0, 16},
        {kernels->dummy().handle(), 0, VK_WHOLE_SIZE},
        {kernels->dummy().handle(), 0, VK_WHOLE_SIZE}};
    std::vector<vk::WriteDescriptorSet> writes;
    for (uint32_t b = 0; b < vkb::kBindings; ++b)
      writes.emplace_back(sets[c], b, 0, 1, vk::DescriptorType::eStorageBuffer, nullptr, &bi[b]);
    d.updateDescriptorSets(writes, {});
  }

  // Groups per dispatch: one per 1024 uvec4s (4 loads per invocation) unless --groups.
  const uint32_t max_x = std::min<uint32_t>(info.max_workgroup_count[0], 65535);
  auto grid = [&](uint64_t n_vec, uint32_t* gx, uint32_t* gy) {
    uint64_t g = a.groups ? a.groups : std::max<uint64_t>(1, (n_vec + 1023) / 1024);
    g = std::min<uint64_t>(g, uint64_t{max_x} * 64);
    *gx = static_cast<uint32_t>(std::min<uint64_t>(g, max_x));
    *gy = static_cast<uint32_t>((g + *gx - 1) / *gx);
  };
  auto record_pass = [&](vk::CommandBuffer cmd, vk::Pipeline p) {
    cmd.bindPipeline(vk::PipelineBindPoint::eCompute, p);
    uint64_t base = 0;
    for (uint32_t c = 0; c < n_sets; ++c) {
      const uint64_t n_vec = chunk_bytes[c] / 16;
      uint32_t push[vkb::kBindings + vkb::kParams] = {};
      push[vkb::kBindings + 0] = static_cast<uint32_t>(n_vec);
      push[vkb::kBindings + 1] = static_cast<uint32_t>(base);
      cmd.bindDescriptorSets(vk::PipelineBindPoint::eCompute, kernels->layout(), 0, sets[c], {});
      cmd.pushConstants(kernels->layout(), vk::ShaderStageFlagBits::eCompute, 0, sizeof(push), push);
      uint32_t gx, gy;
      grid(n_vec, &gx, &gy);
      cmd.dispatch(gx, gy, 1);
      base += n_vec;
    }
  };
  auto barrier = [](vk::CommandBuffer cmd) {
    vk::MemoryBarrier mb(vk::AccessFlagBits::eShaderWrite | vk::AccessFlagBits::eTransferWrite,
                         vk::AccessFlagBits::eShaderRead | vk::AccessFlagBits::eShaderWrite);
    cmd.pipelineBarrier(vk::PipelineStageFlagBits::eComputeShader | vk::PipelineStageFlagBits::eTransfer,
                        vk::PipelineStageFlagBits::eComputeShader, {}, mb, {}, {});
  };

  const auto families = device->physical().getQueueFamilyProperties();
  const uint32_t ts_bits = families[device->queue_family()].timestampValidBits;
  const double ts_period_ns = device->physical().getProperties().limits.timestampPeriod;
  const int passes = a.warmup + a.reps;
  vk::QueryPool queries;
  if (ts_bits > 0)
    queries = d.createQueryPool(vk::QueryPoolCreateInfo({}, vk::QueryType::eTimestamp, 2 * passes));

  vk::CommandPool cmd_pool = d.createCommandPool(
      vk::CommandPoolCreateInfo(vk::CommandPoolCreateFlagBits::eResetCommandBuffer, device->queue_family()));
  vk::CommandBuffer cmd =
      d.allocateCommandBuffers(vk::CommandBufferAllocateInfo(cmd_pool, vk::CommandBufferLevel::ePrimary, 1))[0];
  vk::Fence fence = d.createFence({});
  auto submit = [&]() {
    const absl::Status st = device->SubmitAndWait(cmd, fence);
    if (!st.ok()) throw std::runtime_error(std::string(st.message()));
  };

  // Fill.
  auto t_fill = std::chrono::steady_clock::now();
  cmd.begin(vk::CommandBufferBeginInfo(vk::CommandBufferUsageFlagBits::eOneTimeSubmit));
  record_pass(cmd, fill);
  cmd.end();
  submit();
  const double fill_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_fill).count();

  // Timestamped passes: zero the sum, then warmup + reps read passes.
  auto record_reads = [&](bool stamps) {
    cmd.reset();
    cmd.begin(vk::CommandBufferBeginInfo(vk::CommandBufferUsageFlagBits::eOneTimeSubmit));
    if (stamps) cmd.resetQueryPool(queries, 0, 2 * passes);
    cmd.fillBuffer(sum->handle(), 0, 16, 0);
    barrier(cmd);
    for (int p = 0; p < passes; ++p) {
      if (stamps) cmd.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, queries, 2 * p);
      record_pass(cmd, read);
      if (stamps) cmd.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, queries, 2 * p + 1);
      barrier(cmd);
    }
    cmd.end();
  };
  const uint32_t expect = a.verify ? HostSum(total / 4) * static_cast<uint32_t>(passes) : 0;
  auto sum_value = [&]() {
    uint32_t v;
    std::memcpy(&v, sum->mapped(), 4);
    return v;
  };
  bool verified = true;
  std::vector<double> gbs;
  if (ts_bits > 0) {
    record_reads(true);
    submit();
    if (a.verify && sum_value() != expect) verified = false;
    std::vector<uint64_t> ts(2 * passes);
    (void)d.getQueryPoolResults(queries, 0, 2 * passes, ts.size() * 8, ts.data(), 8,
                                vk::QueryResultFlagBits::e64 | vk::QueryResultFlagBits::eWait);
    const uint64_t mask = ts_bits >= 64 ? ~0ull : ((1ull << ts_bits) - 1);
    for (int p = a.warmup; p < passes; ++p) {
      const double ns = static_cast<double>((ts[2 * p + 1] - ts[2 * p]) & mask) * ts_period_ns;
      if (ns > 0) gbs.push_back(static_cast<double>(total) / ns);
    }
  }
  // Wall clock around one submission of the same passes (no timestamps).
  record_reads(false);
  auto t0 = std::chrono::steady_clock::now();
  submit();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (a.verify && sum_value() != expect) verified = false;
  const double wall_gbs = static_cast<double>(total) * passes / wall_s / 1e9;

  const double best = gbs.empty() ? 0 : *std::max_element(gbs.begin(), gbs.end());
  const double median = gbs.empty() ? 0 : Median(gbs);
  uint32_t gx, gy;
  grid(chunk_bytes[0] / 16, &gx, &gy);
  std::fprintf(stderr,
               "uaii_bench_vulkan_membw: vulkan:%d %s: %.2f GiB in %zu chunk(s), %u x %u groups of 256 per chunk; "
               "read %.1f GB/s median, %.1f best (timestamps, %d passes after %d warm-up); wall clock %.1f GB/s over "
               "%d passes; fill %.2f s; sum %s\n",
               a.device, info.name.c_str(), static_cast<double>(total) / (1 << 30), chunks.size(), gx, gy, median,
               best, a.reps, a.warmup, wall_gbs, passes, fill_s,
               a.verify ? (verified ? "checked" : "WRONG") : "not checked");
  std::printf(
      "{\"device\": \"vulkan:%d\", \"name\": \"%s\", \"type\": \"%s\", \"bytes\": %" PRIu64
      ", \"chunks\": %zu, \"groups\": [%u, %u], \"reps\": %d, \"warmup\": %d, \"timestamps\": %s, "
      "\"read_gb_per_s\": %.3f, \"read_gb_per_s_best\": %.3f, \"read_gb_per_s_wall\": %.3f, \"verified\": %s}\n",
      a.device, info.name.c_str(), info.type.c_str(), total, chunks.size(), gx, gy, a.reps, a.warmup,
      ts_bits > 0 ? "true" : "false", ts_bits > 0 ? median : wall_gbs, ts_bits > 0 ? best : wall_gbs, wall_gbs,
      a.verify ? (verified ? "true" : "false") : "null");

  d.destroyFence(fence);
  d.destroyCommandPool(cmd_pool);
  if (queries) d.destroyQueryPool(queries);
  d.destroyDescriptorPool(set_pool);
  d.destroyPipeline(read);
  d.destroyPipeline(fill);
  return verified ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (f == "--no-verify") a.verify = false;
    else if (f == "-h" || f == "--help") return Usage(), 0;
    else if ((f == "--device" || f == "--mib" || f == "--reps" || f == "--warmup" || f == "--groups") && (v = next())) {
      const long long x = std::atoll(v);
      if (f == "--device") a.device = static_cast<int>(x);
      else if (f == "--mib") a.mib = static_cast<uint64_t>(std::max(1LL, x));
      else if (f == "--reps") a.reps = static_cast<int>(std::max(1LL, x));
      else if (f == "--warmup") a.warmup = static_cast<int>(std::max(0LL, x));
      else a.groups = static_cast<uint32_t>(std::max(0LL, x));
    } else {
      return Usage();
    }
  }
  try {
    return Run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uaii_bench_vulkan_membw: %s\n", e.what());
    return 1;
  }
}
