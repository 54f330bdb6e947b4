// Value types of the Swift API: options (defaults read from the library's *_options_init,
// so they never drift from the C ABI), usage, stop reasons, events, chat messages.
import CUaii

/// How a session runs: the C ABI's uaii_session_options (docs/c_api.md, "Session options"),
/// with the library's defaults (uaii_session_options_init).
public struct SessionOptions: Sendable {
  /// Memory presets (docs/storage.md).
  public enum Preset: UInt32, Sendable { case none = 0, laptop = 1, desktop = 2, server = 3, phone = 4 }

  /// "cpu" (default), "auto" (the first real GPU, else the CPU) or "vulkan[:N]".
  public var device: String = "cpu"
  /// A GPU's memory for the weights, in bytes (0: 90% of the device's largest memory heap).
  /// Weights past it stay in host memory the device reads across the bus: slower, the same
  /// logits (docs/backends.md, "The device budget"). No effect on "cpu".
  public var deviceMemoryBytes: UInt64 = 0
  /// <= 0: physical cores.
  public var threads: Int = 0
  /// 0: 4096, or the model's training context when smaller.
  public var maxContext: Int = 0
  /// Each generate / chat call teaches the storage calibration in $UAII_HOME what it read
  /// and how fast it decoded (the C ABI's `learn_calibration`; off by default).
  public var learnCalibration: Bool = false
  /// The memory preset (default none: everything resident).
  public var preset: Preset = .none
  /// A RAM budget in bytes; 0: the preset's. Weights that do not fit stream from disk.
  public var ramBudgetBytes: UInt64 = 0
  /// Resident KV positions: -1 the preset's window, 0 unbounded, n > 0 n positions.
  public var kvWindow: Int = -1
  /// Tokens per forward pass during prefill (0: 512).
  public var prefillChunk: Int = 512
  /// Mixture-of-experts models: experts per token (0: the file's, exact).
  public var moeTopK: Int = 0
  /// Under a budget, read the next layer's experts ahead (results do not change).
  public var moePrefetch: Bool = false
  /// Which proposals a speculative step keeps (uaii_draft_rule; docs/speculative.md).
  public enum DraftRule: UInt32, Sendable {
    /// Exact match for greedy requests and grammars, rejection sampling otherwise.
    case auto = 0
    /// The sampler picks every token: the same reply as without a draft.
    case exact = 1
    /// Leviathan et al.: the target's distribution, more proposals kept when sampling.
    case rejection = 2
  }
  /// Speculative decoding (docs/speculative.md): a smaller model with the same vocabulary
  /// proposes up to `draftMax` tokens a step; the model checks them in one batch and
  /// `draftRule` keeps a prefix of them. nil: none. The session keeps its own reference to
  /// the draft's data.
  public var draftModel: Model?
  /// The drafter as a file (C ABI 0.5 `draft_path`): a gemma4-assistant GGUF drafts for
  /// this session's gemma4 model over its KV cache and hidden state (it is no `Model` of
  /// its own); any other model file drafts as `draftModel` does. nil: none. At most one
  /// of `draftModel`, `draftPath` and `draftAuto`.
  public var draftPath: String?
  /// The model's own in-trunk multi-token-prediction head drafts (`--draft auto`); no
  /// architecture has one yet, so creating the session throws naming it.
  public var draftAuto: Bool = false
  /// Proposals per verification, 1...16 (llama.cpp's --draft-max).
  public var draftMax: Int = 16
  /// The older name of `draftMax`.
  public var nDraft: Int {
    get { draftMax }
    set { draftMax = newValue }
  }
  /// Drafts shorter than this are not verified (--draft-min), 0...draftMax.
  public var draftMin: Int = 0
  /// Stop proposing when the drafter's top probability is below this (--draft-p-min), 0...1.
  public var draftPMin: Float = 0.75
  public var draftRule: DraftRule = .auto

  public init(device: String = "cpu", threads: Int = 0, maxContext: Int = 0, learnCalibration: Bool = false,
              preset: Preset = .none, ramBudgetBytes: UInt64 = 0, kvWindow: Int = -1, prefillChunk: Int = 512,
              moeTopK: Int = 0, moePrefetch: Bool = false, draftModel: Model? = nil, draftPath: String? = nil,
              draftAuto: Bool = false,
              draftMax: Int = 16, nDraft: Int? = nil, draftMin: Int = 0, draftPMin: Float = 0.75,
              draftRule: DraftRule = .auto, deviceMemoryBytes: UInt64 = 0) {
    self.device = device
    self.deviceMemoryBytes = deviceMemoryBytes
    self.threads = threads
    self.maxContext = maxContext
    self.learnCalibration = learnCalibration
    self.preset = preset
    self.ramBudgetBytes = ramBudgetBytes
    self.kvWindow = kvWindow
    self.prefillChunk = prefillChunk
    self.moeTopK = moeTopK
    self.moePrefetch = moePrefetch
    self.draftModel = draftModel
    self.draftPath = draftPath
    self.draftAuto = draftAuto
    self.draftMax = nDraft ?? draftMax
    self.draftMin = draftMin
    self.draftPMin = draftPMin
    self.draftRule = draftRule
  }
}

public struct GenerateOptions: Sendable {
  public var maxTokens: Int
  /// 0: greedy; > 0 samples.
  public var temperature: Float
  public var topK: Int
  public var topP: Float
  public var minP: Float
  public var repeatPenalty: Float
  public var presencePenalty: Float
  public var frequencyPenalty: Float
  /// The same seed reproduces a sampled run.
  public var seed: UInt64
  /// Stop strings (not emitted).
  public var stop: [String]
  /// Chat only: nil is the template's default.
  public var think: Bool?
  /// Structured output: a GBNF grammar (llama.cpp's format, start rule `root`); the reply is
  /// text it allows, ended where it is complete. At most one of `grammar` and `jsonSchema`.
  public var grammar: String?
  /// Structured output: a JSON Schema (its JSON text); the reply is a JSON document it allows.
  public var jsonSchema: String?

  /// The library's defaults (uaii_generate_options_init) for every argument left nil.
  public init(maxTokens: Int? = nil, temperature: Float? = nil, seed: UInt64? = nil, stop: [String] = [],
              topK: Int? = nil, topP: Float? = nil, minP: Float? = nil, repeatPenalty: Float? = nil,
              presencePenalty: Float? = nil, frequencyPenalty: Float? = nil,
              grammar: String? = nil, jsonSchema: String? = nil) {
    var o = uaii_generate_options()
    uaii_generate_options_init(&o)
    self.maxTokens = maxTokens ?? Int(o.max_tokens)
    self.temperature = temperature ?? o.temperature
    self.topK = topK ?? Int(o.top_k)
    self.topP = topP ?? o.top_p
    self.minP = minP ?? o.min_p
    self.repeatPenalty = repeatPenalty ?? o.repeat_penalty
    self.presencePenalty = presencePenalty ?? o.presence_penalty
    self.frequencyPenalty = frequencyPenalty ?? o.frequency_penalty
    self.seed = seed ?? o.seed
    self.stop = stop
    think = o.think < 0 ? nil : o.think != 0
    self.grammar = grammar
    self.jsonSchema = jsonSchema
  }
}

public enum StopReason: Sendable, Equatable {
  case endOfGeneration, maxTokens, stopString, cancelled, contextFull
  /// A reason added by a newer library.
  case other(UInt32)

  init(raw: UInt32) {
    switch raw {
    case UAII_STOP_END_OF_GENERATION.rawValue: self = .endOfGeneration
    case UAII_STOP_MAX_TOKENS.rawValue: self = .maxTokens
    case UAII_STOP_STRING.rawValue: self = .stopString
    case UAII_STOP_CANCELLED.rawValue: self = .cancelled
    case UAII_STOP_CONTEXT_FULL.rawValue: self = .contextFull
    default: self = .other(raw)
    }
  }
}

/// Where a session's weights live on its device (uaii_device_stats), fixed when the session
/// was created. All zero on the CPU.
public struct DeviceStats: Sendable, Equatable {
  /// What `SessionOptions.device` resolved to: "cpu", "vulkan:0".
  public var device: String
  /// The device memory the weights may take (`deviceMemoryBytes`, or the default's figure).
  public var budgetBytes: UInt64
  /// Weights in device memory.
  public var residentBytes: UInt64
  /// Weights in host memory the device reads across the bus.
  public var hostBytes: UInt64
  /// The device buffer host weights are copied into before each use (0: read in place).
  public var stagingBytes: UInt64
  /// Weight types without a device kernel, requantized to Q8_0.
  public var requantizedWeights: Int

  init(_ s: uaii_device_stats) {
    device = s.device.map { String(cString: $0) } ?? ""
    budgetBytes = s.budget_bytes
    residentBytes = s.resident_bytes
    hostBytes = s.host_bytes
    stagingBytes = s.staging_bytes
    requantizedWeights = Int(s.requantized_weights)
  }
}

/// What a generation used and how fast it went (uaii_generate_result).
public struct Usage: Sendable {
  public var stopReason: StopReason
  public var promptTokens: Int
  public var completionTokens: Int
  /// Prompt tokens reused from the session's KV cache.
  public var cachedTokens: Int
  public var reasoningTokens: Int
  public var prefillTokensPerSecond: Double
  public var decodeTokensPerSecond: Double
  public var peakRSSBytes: UInt64
  /// Speculative decoding: tokens the drafter proposed (0 without a draft).
  public var draftTokens: Int
  /// Of those, the ones the acceptance rule kept (0 <= draftAcceptedTokens <= draftTokens).
  public var draftAcceptedTokens: Int
  /// draftAcceptedTokens / draftTokens (0 without proposals).
  public var draftAcceptanceRate: Double

  init(_ r: uaii_generate_result) {
    stopReason = StopReason(raw: r.stop_reason)
    promptTokens = Int(r.prompt_tokens)
    completionTokens = Int(r.completion_tokens)
    cachedTokens = Int(r.cached_tokens)
    reasoningTokens = Int(r.reasoning_tokens)
    prefillTokensPerSecond = r.prefill_tokens_per_s
    decodeTokensPerSecond = r.decode_tokens_per_s
    peakRSSBytes = r.peak_rss_bytes
    draftTokens = Int(r.draft_tokens)
    draftAcceptedTokens = Int(r.draft_accepted_tokens)
    draftAcceptanceRate = r.draft_acceptance_rate
  }
}

/// One streamed piece of a reply.
public enum Event: Sendable, Equatable {
  /// Visible text.
  case text(String)
  /// Reasoning text.
  case thinking(String)
  /// A tool call as JSON: {"name": ..., "arguments": {...}}.
  case toolCall(String)
  /// A malformed tool call; the reply goes on.
  case error(String)
  /// The last event of a reply.
  case done(Usage)

  public static func == (a: Event, b: Event) -> Bool {
    switch (a, b) {
    case let (.text(x), .text(y)), let (.thinking(x), .thinking(y)), let (.toolCall(x), .toolCall(y)),
         let (.error(x), .error(y)):
      return x == y
    case let (.done(x), .done(y)):
      return x.stopReason == y.stopReason && x.completionTokens == y.completionTokens
    default:
      return false
    }
  }
}

/// A finished reply: its whole visible text and its usage.
public struct Generation: Sendable {
  public var text: String
  public var usage: Usage
}

/// One OpenAI-style chat message.
public struct ChatMessage: Sendable, Equatable {
  public var role: String
  public var content: String

  public init(role: String, content: String) {
    self.role = role
    self.content = content
  }

  public static func system(_ content: String) -> ChatMessage { ChatMessage(role: "system", content: content) }
  public static func user(_ content: String) -> ChatMessage { ChatMessage(role: "user", content: content) }
  public static func assistant(_ content: String) -> ChatMessage { ChatMessage(role: "assistant", content: content) }
}

/// [{"role": ..., "content": ...}, ...] with JSON string escaping (RFC 8259).
func messagesJSON(_ messages: [ChatMessage]) -> String {
  func quote(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
  let items = messages.map { "{\"role\":\(quote($0.role)),\"content\":\(quote($0.content))}" }
  return "[" + items.joined(separator: ",") + "]"
}
