// uaii::Session: one conversation's state over a Model — the KV cache and position —
// with chunked prefill, single-token decode and greedy generation.
//
// Prefill is row-exact: a prompt row's logits are bit-identical whether the prompt
// is evaluated at once, in chunks, or token by token.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "uaii/model.h"
#include "uaii/stop_reason.h"

namespace uaii {

// Memory presets (ARCHITECTURE.md, "Memory presets"; docs/storage.md). The values are
// the C ABI's uaii_preset, one-to-one.
enum class Preset : uint32_t { kNone = 0, kLaptop = 1, kDesktop = 2, kServer = 3, kPhone = 4 };
// "none" | "laptop" | "desktop" | "server" | "phone"; "off" is an alias of "none".
// InvalidArgument naming the accepted names otherwise.
absl::StatusOr<Preset> ParsePreset(std::string_view name);
std::string_view PresetName(Preset p);

// max_context when SessionOptions.max_context (or the C ABI's) is 0, unless the
// model's training context is smaller (then that).
inline constexpr int64_t kDefaultMaxContext = 4096;

// Compute threads several Sessions share (the slots of a server): their forward passes
// take turns on them, one parallel step at a time, so a lone busy session uses every
// thread and many busy ones never oversubscribe the cores. Results do not change
// (which thread computes a chunk never does).
//
// With StepBatching::kAcrossSessions the sessions' steps (decode tokens, prefill chunks)
// that are pending at once run as ONE forward pass when they use the same model: the
// weights are read once for all of them, so n sessions decoding together cost far
// less than n passes. Each session's logits stay the bits its own pass gives. Sessions
// under a storage budget (streamed weights) or on another backend run alone.
enum class StepBatching { kOff, kAcrossSessions };

class ComputeThreads {
 public:
  // threads <= 0: the physical cores.
  static std::shared_ptr<ComputeThreads> Create(int threads = 0, StepBatching batching = StepBatching::kOff);
  ~ComputeThreads();
  int size() const;
  // With kAcrossSessions: forward passes run and the sessions' steps they held
  // (steps / passes is the mean batch); zeros otherwise.
  struct BatchStats {
    int64_t passes = 0, steps = 0, max_batch = 0;
  };
  BatchStats batch_stats() const;

 private:
  struct Impl;
  friend class Session;
  explicit ComputeThreads(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// How a session runs. The C ABI's uaii_session_options carries the same fields with
// the same defaults and meanings (docs/c_api.md, "Session options"):
//   max_context  KV cache positions; 0 means kDefaultMaxContext or the model's training
//                context when that is smaller. More than the training context fails
//                ("context_length N exceeds the model maximum M"), never a silent clamp.
//   kv_window    resident KV positions (+ attention sinks): -1 the preset's window
//                (unbounded for Preset::kNone), 0 unbounded up to max_context, n > 0
//                that many positions.
struct SessionOptions {
  int threads = 0;             // <= 0: physical cores (ignored with compute_threads)
  // Threads shared with other sessions (ComputeThreads); null: the session's own.
  std::shared_ptr<ComputeThreads> compute_threads = nullptr;
  int64_t max_context = 0;     // KV cache positions (0: min(kDefaultMaxContext, the model's maximum))
  int64_t prefill_chunk = 512; // tokens per forward pass during prefill
  std::string device = "cpu";  // "cpu", "auto" (the first GPU backend reporting a real device, else the CPU) or a backend's device name
  // A GPU's memory for the weights, a budget like ram_budget_bytes (0: 90% of the
  // device's largest memory heap): weights beyond it stay in host memory the device
  // reads across the bus — slower, never a failure (docs/backends.md).
  uint64_t device_memory_bytes = 0;
  // Memory (ARCHITECTURE.md, "Memory presets"; docs/storage.md). The library applies
  // no preset unless asked; the CLI defaults to "laptop".
  Preset preset = Preset::kNone;
  uint64_t ram_budget_bytes = 0;    // 0: the preset's budget
  int64_t kv_window = -1;           // -1: the preset's, 0: unbounded, n > 0: n positions (+ sinks)
  // Mixture-of-experts models (docs/moe.md): experts per token. 0: the file's
  // expert_used_count (exact); k > 0 uses min(k, file's), an explicit approximation.
  int64_t moe_top_k = 0;
  // Under a budget, read ahead the experts the next MoE layer chose for the previous
  // token while a layer computes (a background thread; results do not change).
  bool moe_prefetch = false;
  // Called while Session::Create prepares the model's weights — reads the pinned ones
  // under a budget, builds the CPU kernels' interleaved copies without one: the slow part
  // of opening a large model — with the bytes done of the total, after each weight. Never concurrently (calls are serialized), never
  // after Create returns. Empty: no calls. The CLI draws its load progress bar with it.
  std::function<void(uint64_t done_bytes, uint64_t total_bytes)> on_load_progress = nullptr;
};

// Where a GPU session's weights live (all zero on the CPU): docs/backends.md.
struct DeviceStats {
  std::string device;             // "cpu", "vulkan:0"
  uint64_t budget_bytes = 0;      // the device memory the weights may take
  uint64_t resident_bytes = 0;    // weights in device memory
  uint64_t host_bytes = 0;        // weights in host memory the device reads over the bus
  uint64_t staging_bytes = 0;     // the device buffer they stream through per use (0: read in place)
  int requantized_weights = 0;    // weight types without a device kernel, requantized to Q8_0
};

// What the storage engine did so far (all zero without a budget).
struct StorageStats {
  uint64_t budget_bytes = 0;        // 0: unlimited
  uint64_t pinned_bytes = 0;        // weights held in memory
  uint64_t streamed_bytes = 0;      // weights left on disk
  uint64_t staging_bytes = 0;       // all staging buffers together
  uint64_t kv_bytes = 0;            // the KV cache as allocated
  int64_t kv_window = 0;            // 0: unbounded
  uint64_t bytes_read = 0;          // weight bytes read from disk by streaming
  double io_wait_seconds = 0;       // time the forward passes waited for reads
  double compute_seconds = 0;       // forward-pass time not spent waiting
  uint64_t staging_hits = 0;        // slices already staged (prefetched) when needed
  uint64_t staging_misses = 0;      // slices read synchronously
  double read_seconds = 0;          // time the staging reads took (prefetches and misses)
  uint64_t direct_bytes = 0;        // staged bytes read from the device (O_DIRECT): a cold run
  uint64_t cached_bytes = 0;        // staged bytes copied from the page cache: a warm run
  // The expert LRU of a mixture-of-experts model under a budget (docs/moe.md).
  uint64_t expert_cache_bytes = 0;  // capacity (0: no expert LRU)
  uint64_t expert_hits = 0, expert_misses = 0;  // expert slices found / read
  uint64_t expert_bytes_read = 0;   // all expert reads (prefill and decode)
  double expert_io_wait_seconds = 0;
  bool expert_io_uring = false;     // expert reads through io_uring (else pread)
  bool expert_prefetch = false;     // read-ahead on
  uint64_t expert_prefetch_reads = 0, expert_prefetch_hits = 0, expert_prefetch_wasted = 0;
  uint64_t expert_decode_bytes_read = 0;  // expert reads during single-token steps
  int64_t decode_tokens = 0;              // single-token steps
};

class Session {
 public:
  static absl::StatusOr<std::unique_ptr<Session>> Create(std::shared_ptr<const Model> model,
                                                         const SessionOptions& options = {});
  ~Session();

  // Appends `tokens` at positions n_past().. and runs them in chunks of prefill_chunk.
  // With all_logits, returns [tokens.size(), n_vocab] logits; else only the last row's.
  // On error the session keeps its previous position.
  absl::StatusOr<std::vector<float>> Eval(std::span<const TokenId> tokens, bool all_logits = false);
  // Eval of one token; returns its logits [n_vocab].
  absl::StatusOr<std::vector<float>> Decode(TokenId token) { return Eval({&token, 1}); }
  // The same, writing the logits into *logits. Pass the same vector every step: its
  // storage is traded for the buffer the logits were computed in, so a generation
  // loop neither allocates nor copies a vocabulary-sized row per token (Gemma 3's
  // 262144 logits are 1 MiB). On error *logits is unspecified.
  absl::Status EvalInto(std::span<const TokenId> tokens, std::vector<float>* logits, bool all_logits = false);
  absl::Status DecodeInto(TokenId token, std::vector<float>* logits) { return EvalInto({&token, 1}, logits); }
  // EvalInto that also writes the model's hidden state for the same rows into *hidden
  // ([rows, n_embd]: the head's input after the final norm, what a drafter such as the
  // gemma4 assistant continues from; docs/speculative.md). FailedPrecondition when the
  // model's graph declares no hidden output (gemma4 does) or the device's backend does
  // not return it (the CPU does).
  absl::Status EvalWithHidden(std::span<const TokenId> tokens, std::vector<float>* logits,
                              std::vector<float>* hidden, bool all_logits = false);

  int64_t n_past() const;
  // The device that runs this session ("cpu", "vulkan:0"): what SessionOptions::device resolved to.
  std::string device() const;
  // Why "auto" runs on the CPU, or on another device than the one it chose first (the
  // GPU backend could not compile the model): "" when there is nothing to say.
  const std::string& device_note() const;
  int64_t max_context() const;
  // Forgets positions >= n (0 clears everything).
  void Truncate(int64_t n);
  const Model& model() const;
  StorageStats storage_stats() const;
  DeviceStats device_stats() const;

 private:
  struct Impl;
  friend struct SessionInternals;  // the library's drafters read the KV cache (runtime/session_internals.h)
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Greedy decoding (argmax, lowest id on ties, as llama.cpp's greedy sampler).
struct GenerateOptions {
  int64_t max_tokens = 128;
};
struct GenerateResult {
  std::vector<TokenId> tokens;  // generated ids (the end-of-generation token excluded)
  StopReason stop = StopReason::kMaxTokens;  // kEndOfGeneration, kMaxTokens, kCancelled or kContextFull
  int64_t prompt_tokens = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;
};
// Prefills `prompt`, then decodes greedily; `on_token` (may be null) sees each id as
// it is produced and may return false to stop.
absl::StatusOr<GenerateResult> GenerateGreedy(Session& session, std::span<const TokenId> prompt,
                                              const GenerateOptions& options,
                                              const std::function<bool(TokenId)>& on_token = nullptr);

// Index of the largest logit (lowest index on ties).
TokenId ArgMax(std::span<const float> logits);

}  // namespace uaii
