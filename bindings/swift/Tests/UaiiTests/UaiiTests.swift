// The Swift SDK against the default model (Gemma 3 270M, found by Model(path: nil)):
// generation, streaming, cancellation, errors, the tokenizer, the ABI version check.
import XCTest
@testable import Uaii

/// One model for the whole suite (it is Sendable and thread-safe).
let sharedModel: Result<Model, Error> = Result { try Model() }

final class UaiiTests: XCTestCase {
  var model: Model { get throws { try sharedModel.get() } }

  func testVersionMatchesHeader() {
    XCTAssertNil(Version.mismatch(library: Version.library))
    XCTAssertEqual(Version.libraryString, "\(Version.bindingMajor).\(Version.bindingMinor).\(Version.bindingPatch)")
  }

  func testVersionMismatchIsAClearError() throws {
    let error = try XCTUnwrap(Version.mismatch(library: 1_04_02, major: 0, minor: 3))
    XCTAssertEqual(error.status, .versionMismatch)
    XCTAssertTrue(error.message.contains("1.4.2"), error.message)
    XCTAssertTrue(error.message.contains("0.3"), error.message)
    XCTAssertNotNil(Version.mismatch(library: 0_04_00, major: 0, minor: 3))
    XCTAssertNil(Version.mismatch(library: 0_03_07, major: 0, minor: 3))
  }

  func testOptionDefaultsComeFromTheLibrary() {
    let o = GenerateOptions()
    XCTAssertEqual(o.maxTokens, 256)
    XCTAssertEqual(o.seed, 42)
    XCTAssertEqual(o.topP, 0.95)
    XCTAssertNil(o.think)
  }

  func testOpenMissingFileNamesIt() {
    XCTAssertThrowsError(try Model(path: "/nonexistent/swift-model.gguf")) { error in
      let e = error as! UaiiError
      XCTAssertEqual(e.status, .notFound)
      XCTAssertTrue(e.message.contains("/nonexistent/swift-model.gguf"), e.message)
      XCTAssertEqual(e.status.description, "not found")
    }
  }

  func testTokenizerRoundTrip() throws {
    let tok = try model.tokenizer()
    XCTAssertGreaterThan(tok.vocabSize, 1000)
    let text = "Hello, world! Ünïcødé 🦙 and tabs\tnewlines\n"
    let ids = try tok.encode(text)
    XCTAssertFalse(ids.isEmpty)
    XCTAssertEqual(try tok.decode(ids), text)
    let withBos = try tok.encode(text, addSpecial: true)
    XCTAssertEqual(withBos.count, ids.count + 1)
    XCTAssertEqual(Array(withBos.dropFirst()), ids)
    XCTAssertEqual(try tok.decode(withBos, skipSpecial: true), text)
    XCTAssertEqual(try tok.encode(""), [])
  }

  func testDecodeGrowsItsBufferByTheBufferRule() throws {
    let tok = try model.tokenizer()
    // Few ids, many bytes each: the first guess (8 bytes per id) is too small.
    let text = "a" + String(repeating: " ", count: 600) + "b"
    let ids = try tok.encode(text)
    XCTAssertLessThan(ids.count * 8 + 16, text.utf8.count)
    XCTAssertEqual(try tok.decode(ids), text)
  }

  func testDecodeRejectsAnIdOutsideTheVocabulary() throws {
    let tok = try model.tokenizer()
    XCTAssertThrowsError(try tok.decode([1, Int32(tok.vocabSize)])) { error in
      let e = error as! UaiiError
      XCTAssertEqual(e.status, .invalidArgument)
      XCTAssertTrue(e.message.contains("outside the vocabulary"), e.message)
    }
  }

  func testStandaloneTokenizerMatchesTheModels() throws {
    let alone = try Tokenizer(path: nil)
    XCTAssertEqual(try alone.encode("The capital of France"), try model.tokenizer().encode("The capital of France"))
  }

  /// learnCalibration: off, nothing is written to $UAII_HOME; on, the call's figures are
  /// folded into $UAII_HOME/calibration.json (a temporary home, set after the model loaded).
  func testLearnCalibrationFoldsTheRunIntoUaiiHome() throws {
    let model = try self.model
    let home = FileManager.default.temporaryDirectory.appendingPathComponent("uaii-swift-home-\(getpid())")
    try? FileManager.default.removeItem(at: home)
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    let saved = ProcessInfo.processInfo.environment["UAII_HOME"]
    setenv("UAII_HOME", home.path, 1)
    defer {
      if let saved { setenv("UAII_HOME", saved, 1) } else { unsetenv("UAII_HOME") }
      try? FileManager.default.removeItem(at: home)
    }
    let cache = home.appendingPathComponent("calibration.json")
    for learn in [false, true] {
      let session = try model.makeSession(options: SessionOptions(learnCalibration: learn))
      _ = try session.generate("The capital of France is", options: GenerateOptions(maxTokens: 4))
      if !learn {
        XCTAssertFalse(FileManager.default.fileExists(atPath: cache.path))
        continue
      }
      let doc = try JSONSerialization.jsonObject(with: Data(contentsOf: cache)) as? [String: Any]
      let observed = doc?["observed"] as? [String: Any] ?? [:]
      XCTAssertFalse(observed.isEmpty, "a learning session folded nothing into the calibration")
    }
  }

  func testGenerateIsGreedyAndEventsMakeTheText() throws {
    let session = try model.makeSession()
    var pieces: [String] = []
    var done: Usage?
    let g = try session.generate("The capital of France is", options: GenerateOptions(maxTokens: 8)) { event in
      switch event {
      case .text(let t): pieces.append(t)
      case .done(let u): done = u
      default: XCTFail("unexpected \(event)")
      }
      return true
    }
    XCTAssertFalse(g.text.isEmpty)
    XCTAssertEqual(pieces.joined(), g.text)
    XCTAssertEqual(done?.completionTokens, g.usage.completionTokens)
    XCTAssertGreaterThan(g.usage.promptTokens, 0)
    XCTAssertTrue(g.usage.completionTokens <= 8)
    if g.usage.completionTokens < 8 { XCTAssertEqual(g.usage.stopReason, .endOfGeneration) }
    // Greedy is deterministic: a fresh session gives the same text.
    let again = try model.makeSession().generate("The capital of France is", options: GenerateOptions(maxTokens: 8))
    XCTAssertEqual(again.text, g.text)
    // The same prompt on the same session reuses its KV cache.
    let reused = try session.generate("The capital of France is", options: GenerateOptions(maxTokens: 8))
    XCTAssertEqual(reused.text, g.text)
    XCTAssertGreaterThan(reused.usage.cachedTokens, 0)
  }

  func testStepLoopEqualsGenerateGreedyAndSampled() throws {
    let tok = try model.tokenizer()
    let prompt = "The capital of France is"
    for options in [GenerateOptions(maxTokens: 10), GenerateOptions(maxTokens: 10, temperature: 0.8, seed: 11)] {
      let want = try model.makeSession().generate(prompt, options: options)
      let session = try model.makeSession()
      let sampler = try Sampler(options: options)
      XCTAssertThrowsError(try session.step(sampler)) { error in
        XCTAssertEqual((error as! UaiiError).status, .invalidState)
      }
      let ids = try tok.encode(prompt, addSpecial: true)
      let logits = try session.eval(ids)
      XCTAssertEqual(logits.count, tok.vocabSize)  // Gemma 3: the model's vocabulary is the tokenizer's
      XCTAssertEqual(session.nPast, ids.count)
      var out: [Int32] = []
      while out.count < options.maxTokens {
        let (token, stop) = try session.step(sampler)
        if stop == .endOfGeneration { break }
        out.append(token)
        if stop != nil { break }
      }
      XCTAssertEqual(try tok.decode(out), want.text)
      XCTAssertEqual(out.count, want.usage.completionTokens)
    }
  }

  func testEvalRowsTruncateAndSamplers() throws {
    let tok = try model.tokenizer()
    let ids = try tok.encode("Once upon a time", addSpecial: true)
    let session = try model.makeSession(options: SessionOptions(maxContext: 64, prefillChunk: 2))
    XCTAssertEqual(session.maxContext, 64)
    let rows = try session.eval(ids, allLogits: true)
    let vocab = rows.count / ids.count
    try session.truncate(1)
    XCTAssertEqual(session.nPast, 1)
    let last = try session.eval(Array(ids[1...]))
    let lastRowStart = (ids.count - 1) * vocab
    XCTAssertEqual(last, Array(rows[lastRowStart..<rows.count]))  // rows are exact
    XCTAssertThrowsError(try session.truncate(session.nPast + 1))
    XCTAssertThrowsError(try session.eval([Int32(vocab)])) { error in
      XCTAssertEqual((error as! UaiiError).status, .invalidArgument)
    }
    let greedy = try Sampler()
    XCTAssertEqual(try greedy.sample([0.5, 3, -1, 3]), 1)
    let penalized = try Sampler(options: GenerateOptions(repeatPenalty: 2))
    try penalized.accept(1)
    XCTAssertEqual(try penalized.sample([0.5, 3, -1, 2]), 3)
    try penalized.reset()
    XCTAssertEqual(try penalized.sample([0.5, 3, -1, 2]), 1)
    XCTAssertThrowsError(try Sampler(options: GenerateOptions(topP: 1.5)))
  }

  func testMemoryOptionsReachTheEngine() throws {
    // A budget far below the model's minimum is refused by name: the option got through.
    XCTAssertThrowsError(try model.makeSession(options: SessionOptions(ramBudgetBytes: 1024))) { error in
      XCTAssertEqual((error as! UaiiError).status, .outOfMemory, "\(error)")
    }
    let phone = try model.makeSession(options: SessionOptions(preset: .phone, kvWindow: 0, moeTopK: 0, moePrefetch: true))
    XCTAssertFalse(try phone.generate("Hi", options: GenerateOptions(maxTokens: 2)).text.isEmpty)
  }

  func testStreamMatchesGenerate() async throws {
    let expected = try model.makeSession().generate("Once upon a time", options: GenerateOptions(maxTokens: 12))
    let session = try model.makeSession()
    var text = ""
    var usage: Usage?
    for try await event in session.stream("Once upon a time", options: GenerateOptions(maxTokens: 12)) {
      switch event {
      case .text(let t): text += t
      case .done(let u): usage = u
      default: break
      }
    }
    XCTAssertEqual(text, expected.text)
    XCTAssertEqual(usage?.completionTokens, expected.usage.completionTokens)
  }

  func testCallbackReturningFalseStops() throws {
    let session = try model.makeSession()
    var count = 0
    let g = try session.generate("One, two, three, four,", options: GenerateOptions(maxTokens: 64)) { event in
      if case .text = event { count += 1 }
      return count < 2
    }
    XCTAssertEqual(g.usage.stopReason, .cancelled)
    XCTAssertLessThan(g.usage.completionTokens, 64)
  }

  func testBreakingOutOfAStreamCancelsTheEngine() async throws {
    let session = try model.makeSession()
    var pieces = 0
    for try await event in session.stream("One, two, three, four,", options: GenerateOptions(maxTokens: 200)) {
      if case .text = event {
        pieces += 1
        if pieces == 2 { break }
      }
    }
    let usage = try XCTUnwrap(session.lastUsage)
    XCTAssertEqual(usage.stopReason, .cancelled)
    XCTAssertLessThan(usage.completionTokens, 200)
    // The session is free again at once.
    XCTAssertFalse(try session.generate("Hello", options: GenerateOptions(maxTokens: 2)).text.isEmpty)
  }

  func testTaskCancellationCancelsTheEngine() async throws {
    let session = try model.makeSession()
    let stream = session.stream("One, two, three, four,", options: GenerateOptions(maxTokens: 200))
    let (firstText, signal) = AsyncStream<Void>.makeStream()
    let consumer = Task {
      var pieces = 0
      for try await event in stream {
        if case .text = event {
          pieces += 1
          signal.yield()
        }
      }
      return pieces
    }
    for await _ in firstText { break }
    consumer.cancel()
    let pieces = try await consumer.value
    XCTAssertGreaterThan(pieces, 0)
    let usage = try XCTUnwrap(session.lastUsage)
    XCTAssertEqual(usage.stopReason, .cancelled)
    XCTAssertLessThan(usage.completionTokens, 200)
  }

  func testASecondGenerationWhileStreamingIsRefused() async throws {
    let session = try model.makeSession()
    let stream = session.stream("One, two, three,", options: GenerateOptions(maxTokens: 4))
    XCTAssertThrowsError(try session.generate("Hello")) { error in
      XCTAssertEqual((error as! UaiiError).status, .invalidState)
    }
    var events = 0
    for try await _ in stream { events += 1 }
    XCTAssertGreaterThan(events, 0)
  }

  // The default model's GGUF carries no chat template: the built-in Gemma one stands in
  // ("<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n" is 10 tokens).
  func testChatOnAModelWithoutTemplateUsesTheBuiltInOne() async throws {
    let session = try model.makeSession()
    let g = try session.chat([.user("Hi")], options: GenerateOptions(maxTokens: 2))
    XCTAssertEqual(g.usage.promptTokens, 10)
    try session.reset()
    var done = false
    for try await e in session.chatStream([.user("Hi")], options: GenerateOptions(maxTokens: 2)) {
      if case .done(let usage) = e {
        XCTAssertEqual(usage.promptTokens, 10)
        done = true
      }
    }
    XCTAssertTrue(done)
  }

  func testBadOptionsAreRejectedWithNamedErrors() throws {
    let session = try model.makeSession()
    XCTAssertThrowsError(try session.generate("x", options: GenerateOptions(maxTokens: -1))) { error in
      let e = error as! UaiiError
      XCTAssertEqual(e.status, .invalidArgument)
      XCTAssertTrue(e.message.contains("max_tokens"), e.message)
    }
    XCTAssertThrowsError(try model.makeSession(options: SessionOptions(device: "tpu"))) { error in
      let e = error as! UaiiError
      XCTAssertEqual(e.status, .unsupported)
      XCTAssertTrue(e.message.contains("tpu"), e.message)
    }
  }

  func testStopStrings() throws {
    let session = try model.makeSession()
    let free = try session.generate("One, two, three, four,", options: GenerateOptions(maxTokens: 16))
    let words = free.text.split(separator: " ")
    try XCTSkipIf(words.count < 2, "the model's continuation is too short to pick a stop string")
    let stopAt = String(words[1])
    let stopped = try model.makeSession().generate("One, two, three, four,",
                                                   options: GenerateOptions(maxTokens: 16, stop: [stopAt]))
    XCTAssertEqual(stopped.usage.stopReason, .stopString)
    XCTAssertFalse(stopped.text.contains(stopAt))
  }

  func testTwoThreadsShareOneModel() async throws {
    let model = try self.model
    let expected = try model.makeSession().generate("Paris is", options: GenerateOptions(maxTokens: 6)).text
    let texts = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<2 {
        group.addTask { try model.makeSession().generate("Paris is", options: GenerateOptions(maxTokens: 6)).text }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    XCTAssertEqual(texts, [expected, expected])
  }

  func testResetAndInspect() throws {
    let session = try model.makeSession()
    try session.generate("Hello", options: GenerateOptions(maxTokens: 2))
    try session.reset()
    let g = try session.generate("Hello", options: GenerateOptions(maxTokens: 2))
    XCTAssertEqual(g.usage.cachedTokens, 0)
    XCTAssertTrue(try model.inspectJSON().contains("gemma3"))
  }

  func testMessagesJSONEscapes() {
    XCTAssertEqual(messagesJSON([.user("a \"q\"\n\u{1}é")]),
                   "[{\"role\":\"user\",\"content\":\"a \\\"q\\\"\\n\\u0001é\"}]")
  }
}
