// Session: one conversation (KV cache, sampler). The C ABI lets a session belong to one
// thread at a time, so `Session` is not Sendable; its handle lives in a SessionCore that a
// stream's worker thread shares, which admits one generation at a time.
//
// Streaming: the blocking C call runs on a worker thread and yields each event into an
// AsyncThrowingStream. When the consuming task is cancelled or the stream is dropped,
// onTermination raises a flag that makes the C callback return non-zero, so the engine
// stops after the current token (stop reason `.cancelled`).
import CUaii
import Foundation

public final class Session {
  /// The model this session runs (kept alive by the session).
  public let model: Model
  let core: SessionCore

  init(model: Model, options: SessionOptions) throws {
    var o = uaii_session_options()
    uaii_session_options_init(&o)
    o.threads = Int32(clamping: options.threads)
    o.max_context = Int64(options.maxContext)
    o.learn_calibration = options.learnCalibration ? 1 : 0
    o.preset = options.preset.rawValue
    o.ram_budget_bytes = options.ramBudgetBytes
    o.kv_window = Int64(options.kvWindow)
    o.prefill_chunk = Int64(options.prefillChunk)
    o.moe_top_k = Int64(options.moeTopK)
    o.moe_prefetch = options.moePrefetch ? 1 : 0
    o.device_memory_bytes = options.deviceMemoryBytes
    // The C ABI reads draft_max 0 as its default (16); here 0 is out of range like any other
    // value outside 1...16, which the library refuses with its own message.
    if options.draftMax == 0 {
      throw UaiiError(status: .invalidArgument, message: "draft_max 0 is outside 1..16")
    }
    o.draft_model = options.draftModel?.handle
    o.draft_auto = options.draftAuto ? 1 : 0
    o.draft_max = Int32(clamping: options.draftMax)
    o.draft_min = Int32(clamping: options.draftMin)
    o.draft_p_min = options.draftPMin
    o.draft_rule = options.draftRule.rawValue
    var out: OpaquePointer?
    let status = options.device.withCString { device -> uaii_status in
      o.device = device
      guard let path = options.draftPath else { return uaii_session_create(model.handle, &o, &out) }
      return path.withCString { p in
        o.draft_path = p
        return uaii_session_create(model.handle, &o, &out)
      }
    }
    try withExtendedLifetime(options.draftModel) { try check(status) }
    let core = SessionCore(handle: out!, model: model)  // destroys the handle if a call below throws
    // The placement is fixed at creation: read once, so that reading it never needs the
    // handle while a stream runs on it.
    var stats = uaii_device_stats()
    stats.struct_size = UInt32(MemoryLayout<uaii_device_stats>.size)
    try check(uaii_session_device_stats(core.handle, &stats))
    deviceStats = DeviceStats(stats)
    self.model = model
    self.core = core
  }

  /// Where the session's weights live on its device (`SessionOptions.deviceMemoryBytes` is
  /// their budget there); all zero on the CPU.
  public let deviceStats: DeviceStats

  /// Continues the raw `prompt` (the whole text; the KV cache is reused for the longest prefix
  /// the session already holds). `onEvent` sees each event as it comes; return false to stop.
  @discardableResult
  public func generate(_ prompt: String, options: GenerateOptions = GenerateOptions(),
                       onEvent: ((Event) -> Bool)? = nil) throws -> Generation {
    let ticket = try core.begin()
    return try core.run(ticket, .generate(prompt), options, sink: onEvent.map(EventSink.init))
  }

  /// `generate` as a stream of events ending with `.done`. Cancelling the consuming task (or
  /// dropping the stream) stops the engine.
  public func stream(_ prompt: String, options: GenerateOptions = GenerateOptions()) -> AsyncThrowingStream<Event, Error> {
    makeStream(.generate(prompt), options)
  }

  /// One chat turn over the model's chat template; the messages are the whole conversation.
  @discardableResult
  public func chat(_ messages: [ChatMessage], toolsJSON: String? = nil, options: GenerateOptions = GenerateOptions(),
                   onEvent: ((Event) -> Bool)? = nil) throws -> Generation {
    try chat(messagesJSON: Uaii.messagesJSON(messages), toolsJSON: toolsJSON, options: options, onEvent: onEvent)
  }

  /// One chat turn from an OpenAI-style messages array in JSON (tool calls, tool results...).
  @discardableResult
  public func chat(messagesJSON: String, toolsJSON: String? = nil, options: GenerateOptions = GenerateOptions(),
                   onEvent: ((Event) -> Bool)? = nil) throws -> Generation {
    let ticket = try core.begin()
    return try core.run(ticket, .chat(messagesJSON, toolsJSON), options, sink: onEvent.map(EventSink.init))
  }

  /// A chat turn as a stream of events (text, thinking, tool calls) ending with `.done`.
  public func chatStream(_ messages: [ChatMessage], toolsJSON: String? = nil,
                         options: GenerateOptions = GenerateOptions()) -> AsyncThrowingStream<Event, Error> {
    makeStream(.chat(Uaii.messagesJSON(messages), toolsJSON), options)
  }

  // MARK: Token-level control (uaii_session_eval / _truncate / _step)

  /// Evaluates `tokens` at positions `nPast`..; returns the last row's logits (the model's
  /// vocabulary size), or every row's, row-major, with `allLogits`. The last row is kept
  /// for `step`. generate / chat afterwards reuse the cache exactly.
  public func eval(_ tokens: [Int32], allLogits: Bool = false) throws -> [Float] {
    let ticket = try core.begin()
    defer { core.end(ticket, usage: nil) }
    let vocab = uaii_model_n_vocab(model.handle)
    var logits = [Float](repeating: 0, count: (allLogits ? tokens.count : 1) * vocab)
    var len = 0
    let status = tokens.withUnsafeBufferPointer { ids in
      logits.withUnsafeMutableBufferPointer { out in
        uaii_session_eval(core.handle, ids.baseAddress, ids.count, allLogits ? UInt32(UAII_EVAL_ALL_LOGITS) : 0,
                          out.baseAddress, out.count, &len)
      }
    }
    try check(status)
    return logits
  }

  /// Positions the KV cache holds.
  public var nPast: Int { Int(uaii_session_n_past(core.handle)) }
  /// Positions the session can hold.
  public var maxContext: Int { Int(uaii_session_max_context(core.handle)) }

  /// Forgets positions >= n (0 <= n <= nPast).
  public func truncate(_ n: Int) throws {
    let ticket = try core.begin()
    defer { core.end(ticket, usage: nil) }
    try check(uaii_session_truncate(core.handle, Int64(n)))
  }

  /// Why a step's token was not evaluated.
  public enum StepStop: Sendable, Equatable { case endOfGeneration, contextFull }

  /// One token of a generation you drive: samples from the last evaluated row with `sampler`,
  /// records it there and evaluates it unless `stop` says otherwise.
  public func step(_ sampler: Sampler) throws -> (token: Int32, stop: StepStop?) {
    let ticket = try core.begin()
    defer { core.end(ticket, usage: nil) }
    var token: Int32 = -1
    var flags: UInt32 = 0
    try check(uaii_session_step(core.handle, sampler.handle, &token, &flags))
    if flags & UInt32(UAII_STEP_END_OF_GENERATION) != 0 { return (token, .endOfGeneration) }
    if flags & UInt32(UAII_STEP_CONTEXT_FULL) != 0 { return (token, .contextFull) }
    return (token, nil)
  }

  /// Forgets the conversation (the KV cache).
  public func reset() throws {
    let ticket = try core.begin()
    defer { core.end(ticket, usage: nil) }
    try check(uaii_session_reset(core.handle))
  }

  /// The usage of the last finished generation, cancelled streams included (waits for a
  /// cancelled stream to wind down first).
  public var lastUsage: Usage? { core.lastUsage() }

  private func makeStream(_ request: Request, _ options: GenerateOptions) -> AsyncThrowingStream<Event, Error> {
    let core = self.core
    // Taken on the caller's thread so that "busy" is decided in call order.
    let begun = Result { try core.begin() }
    return AsyncThrowingStream { continuation in
      let ticket: Int
      switch begun {
      case .failure(let error):
        continuation.finish(throwing: error)
        return
      case .success(let t): ticket = t
      }
      let stop = StopFlag()
      continuation.onTermination = { _ in
        if stop.raise() { core.markDraining(ticket) }
      }
      let sink = EventSink { event in
        if stop.isRaised { return false }
        continuation.yield(event)
        return true
      }
      let worker = Thread {
        do {
          _ = try core.run(ticket, request, options, sink: sink)
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      worker.stackSize = 8 << 20  // template rendering recurses; keep a main-thread-sized stack
      worker.start()
    }
  }
}

@available(*, unavailable, message: "a uaii session belongs to one thread at a time")
extension Session: Sendable {}

enum Request: Sendable {
  case generate(String)
  case chat(String, String?)
}

/// Receives C events on the generating thread. Only a stream shares it with a worker thread,
/// and then its handler is @Sendable.
final class EventSink: @unchecked Sendable {
  let handler: (Event) -> Bool
  init(_ handler: @escaping (Event) -> Bool) { self.handler = handler }
}

final class StopFlag: @unchecked Sendable {
  private let lock = NSLock()
  private var raised = false

  var isRaised: Bool { lock.lock(); defer { lock.unlock() }; return raised }

  /// Raises the flag; true the first time.
  func raise() -> Bool {
    lock.lock(); defer { lock.unlock() }
    if raised { return false }
    raised = true
    return true
  }
}

/// The C session handle and who is using it. States: idle, running (ticket), draining
/// (ticket, cancelled: it ends after the current token, so `begin` waits for it).
final class SessionCore: @unchecked Sendable {
  let handle: OpaquePointer
  private let model: Model
  private let cond = NSCondition()
  private var current = 0  // ticket of the running generation, 0: idle
  private var draining = false
  private var nextTicket = 1
  private var usage: Usage?

  init(handle: OpaquePointer, model: Model) {
    self.handle = handle
    self.model = model
  }

  deinit { uaii_session_destroy(handle) }

  func begin() throws -> Int {
    cond.lock(); defer { cond.unlock() }
    while current != 0 && draining { cond.wait() }
    if current != 0 {
      throw UaiiError(status: .invalidState,
                      message: "the session is busy with another generation (a session runs one at a time); "
                        + "finish or cancel its stream first, or use another Session")
    }
    current = nextTicket
    nextTicket += 1
    return current
  }

  func markDraining(_ ticket: Int) {
    cond.lock(); defer { cond.unlock() }
    if current == ticket { draining = true }
  }

  func end(_ ticket: Int, usage: Usage?) {
    cond.lock(); defer { cond.unlock() }
    guard current == ticket else { return }
    current = 0
    draining = false
    if let usage { self.usage = usage }
    cond.broadcast()
  }

  func lastUsage() -> Usage? {
    cond.lock(); defer { cond.unlock() }
    while current != 0 && draining { cond.wait() }
    return usage
  }

  /// Runs one generation under `ticket` (from `begin`) and ends it.
  func run(_ ticket: Int, _ request: Request, _ options: GenerateOptions, sink: EventSink?) throws -> Generation {
    var finished: Usage?
    defer { end(ticket, usage: finished) }
    var result = uaii_generate_result()
    result.struct_size = UInt32(MemoryLayout<uaii_generate_result>.size)
    var text: UnsafeMutablePointer<CChar>?
    let callback: uaii_event_fn? = sink == nil ? nil : { event, userData in
      guard let event, let userData else { return 0 }
      let sink = Unmanaged<EventSink>.fromOpaque(userData).takeUnretainedValue()
      guard let converted = Event(event.pointee) else { return 0 }
      return sink.handler(converted) ? 0 : 1
    }
    let userData = sink.map { Unmanaged.passUnretained($0).toOpaque() }
    let status = withExtendedLifetime(sink) {
      withCOptions(options) { opts in
        switch request {
        case .generate(let prompt):
          return prompt.withCString {
            uaii_session_generate(handle, $0, opts, callback, userData, &result, &text)
          }
        case .chat(let messages, let tools):
          return messages.withCString { m in
            withOptionalCString(tools) { t in
              uaii_session_chat(handle, m, t, opts, callback, userData, &result, &text)
            }
          }
        }
      }
    }
    try check(status)
    defer { uaii_string_free(text) }
    let generation = Generation(text: text.map { String(cString: $0) } ?? "", usage: Usage(result))
    finished = generation.usage
    return generation
  }
}

extension Event {
  /// nil for an event kind this binding does not know (a newer library).
  init?(_ e: uaii_event) {
    let text = e.text_len == 0 || e.text == nil
      ? "" : String(decoding: UnsafeRawBufferPointer(start: e.text, count: e.text_len), as: UTF8.self)
    switch e.kind {
    case UAII_EVENT_TEXT.rawValue: self = .text(text)
    case UAII_EVENT_THINKING.rawValue: self = .thinking(text)
    case UAII_EVENT_TOOL_CALL.rawValue: self = .toolCall(text)
    case UAII_EVENT_ERROR.rawValue: self = .error(text)
    case UAII_EVENT_DONE.rawValue:
      guard let r = e.result else { return nil }
      self = .done(Usage(r.pointee))
    default: return nil
    }
  }
}

func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
  guard let s else { return body(nil) }
  return s.withCString { body($0) }
}

/// The C options struct for `o`, valid during `body` (stop strings included).
func withCOptions<R>(_ o: GenerateOptions, _ body: (UnsafePointer<uaii_generate_options>) -> R) -> R {
  var c = uaii_generate_options()
  uaii_generate_options_init(&c)
  c.max_tokens = Int32(clamping: o.maxTokens)
  c.temperature = o.temperature
  c.top_k = Int32(clamping: o.topK)
  c.top_p = o.topP
  c.min_p = o.minP
  c.repeat_penalty = o.repeatPenalty
  c.presence_penalty = o.presencePenalty
  c.frequency_penalty = o.frequencyPenalty
  c.seed = o.seed
  c.think = o.think.map { $0 ? 1 : 0 } ?? -1
  let owned = o.stop.map { strdup($0) }
  defer { owned.forEach { free($0) } }
  let pointers: [UnsafePointer<CChar>?] = owned.map { $0.map { UnsafePointer($0) } }
  return pointers.withUnsafeBufferPointer { stops in
    c.stop = stops.count == 0 ? nil : stops.baseAddress
    c.n_stop = stops.count
    return withOptionalCString(o.grammar) { grammar in
      withOptionalCString(o.jsonSchema) { schema in
        c.grammar = grammar
        c.json_schema = schema
        return withUnsafePointer(to: &c) { body($0) }
      }
    }
  }
}
