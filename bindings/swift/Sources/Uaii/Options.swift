// Value types of the Swift API: options (defaults read from the library's *_options_init,
// so they never drift from the C ABI), usage, stop reasons, events, chat messages.
import CUaii

/// How a session runs. Memory presets and KV windows are not implemented by the engine yet,
/// so only the fields it honours are exposed.
public struct SessionOptions: Sendable {
  /// "cpu" (default) or "auto".
  public var device: String = "cpu"
  /// <= 0: physical cores.
  public var threads: Int = 0
  /// 0: the model's training context, capped at 4096.
  public var maxContext: Int = 0
  /// Each generate / chat call teaches the storage calibration in $UAII_HOME what it read
  /// and how fast it decoded (the C ABI's `learn_calibration`; off by default).
  public var learnCalibration: Bool = false

  public init(device: String = "cpu", threads: Int = 0, maxContext: Int = 0, learnCalibration: Bool = false) {
    self.device = device
    self.threads = threads
    self.maxContext = maxContext
    self.learnCalibration = learnCalibration
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

  /// The library's defaults (uaii_generate_options_init), with `maxTokens` overridable.
  public init(maxTokens: Int? = nil, temperature: Float? = nil, seed: UInt64? = nil, stop: [String] = []) {
    var o = uaii_generate_options()
    uaii_generate_options_init(&o)
    self.maxTokens = maxTokens ?? Int(o.max_tokens)
    self.temperature = temperature ?? o.temperature
    topK = Int(o.top_k)
    topP = o.top_p
    minP = o.min_p
    repeatPenalty = o.repeat_penalty
    presencePenalty = o.presence_penalty
    frequencyPenalty = o.frequency_penalty
    self.seed = seed ?? o.seed
    self.stop = stop
    think = o.think < 0 ? nil : o.think != 0
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

  init(_ r: uaii_generate_result) {
    stopReason = StopReason(raw: r.stop_reason)
    promptTokens = Int(r.prompt_tokens)
    completionTokens = Int(r.completion_tokens)
    cachedTokens = Int(r.cached_tokens)
    reasoningTokens = Int(r.reasoning_tokens)
    prefillTokensPerSecond = r.prefill_tokens_per_s
    decodeTokensPerSecond = r.decode_tokens_per_s
    peakRSSBytes = r.peak_rss_bytes
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
