// Speculative decoding through the Swift SDK (docs/speculative.md): a session with a draft
// model under the exact-match rule (and any greedy one) gives the replies a session without
// one gives, and its usage counts the proposals; the knobs (draftMax, draftMin, draftPMin,
// draftRule, draftAuto) reach the library, whose messages refuse bad values.
// The tiny fixture models (build/fixtures/tiny, written by the build; $UAII_FIXTURES_DIR
// overrides) share one vocabulary; the default model (Gemma) has another.
import Foundation
import XCTest
@testable import Uaii

let fixturesDir: String = ProcessInfo.processInfo.environment["UAII_FIXTURES_DIR"]
  ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("build/fixtures").path

let tinyModels: Result<(model: Model, draft: Model), Error> = Result {
  (try Model(path: fixturesDir + "/tiny/tiny-llama-f32.gguf"), try Model(path: fixturesDir + "/tiny/tiny-llama-q4_0.gguf"))
}

final class SpeculativeTests: XCTestCase {
  func assertSameReply(_ options: GenerateOptions, file: StaticString = #filePath, line: UInt = #line) throws {
    let (model, draft) = try tinyModels.get()
    let plain = try model.makeSession(options: SessionOptions(threads: 1))
    // The tiny models' logits are nearly flat: draftPMin 0 lets the draft propose at all.
    let spec = try model.makeSession(options: SessionOptions(threads: 1, draftModel: draft, nDraft: 3, draftPMin: 0,
                                                             draftRule: .exact))
    let a = try plain.generate("tok5 tok6 tok7", options: options)
    let b = try spec.generate("tok5 tok6 tok7", options: options)
    XCTAssertFalse(a.text.isEmpty, file: file, line: line)
    XCTAssertEqual(a.text, b.text, file: file, line: line)
    XCTAssertEqual(a.usage.completionTokens, b.usage.completionTokens, file: file, line: line)
    XCTAssertEqual(a.usage.draftTokens, 0, file: file, line: line)
    XCTAssertEqual(a.usage.draftAcceptedTokens, 0, file: file, line: line)
    XCTAssertGreaterThan(b.usage.draftTokens, 0, file: file, line: line)
    XCTAssertGreaterThanOrEqual(b.usage.draftAcceptedTokens, 0, file: file, line: line)
    XCTAssertLessThanOrEqual(b.usage.draftAcceptedTokens, b.usage.draftTokens, file: file, line: line)
    XCTAssertEqual(b.usage.draftAcceptanceRate, Double(b.usage.draftAcceptedTokens) / Double(b.usage.draftTokens),
                   accuracy: 1e-12, file: file, line: line)
  }

  func testADraftChangesNothingButThePassesGreedy() throws {
    try assertSameReply(GenerateOptions(maxTokens: 30, temperature: 0))
  }

  func testADraftChangesNothingButThePassesSampled() throws {
    try assertSameReply(GenerateOptions(maxTokens: 30, temperature: 0.9, seed: 4))
    try assertSameReply(GenerateOptions(maxTokens: 30, temperature: 1.2, seed: 8, topK: 0))
  }

  func testADraftOfAnotherVocabularyIsRefused() throws {
    let (model, _) = try tinyModels.get()
    let gemma = try sharedModel.get()
    XCTAssertThrowsError(try model.makeSession(options: SessionOptions(draftModel: gemma))) { error in
      let e = error as! UaiiError
      XCTAssertEqual(e.status, .invalidArgument)
      XCTAssertTrue(e.message.contains("same vocabulary"), e.message)
    }
  }

  func testTheRejectionRuleSamplesAndCounts() throws {
    let (model, draft) = try tinyModels.get()
    let spec = try model.makeSession(options: SessionOptions(threads: 1, draftModel: draft, draftMax: 4, draftPMin: 0))
    let options = GenerateOptions(maxTokens: 30, temperature: 1.0, seed: 3)
    let a = try spec.generate("tok5 tok6 tok7", options: options)
    try spec.reset()
    let b = try spec.generate("tok5 tok6 tok7", options: options)
    XCTAssertEqual(a.text, b.text)  // a seed reproduces a speculative run
    XCTAssertEqual(b.usage.completionTokens, 30)
    XCTAssertGreaterThan(b.usage.draftTokens, 0)
    // The model drafting for itself: the rejection rule draws proposals from q = p and keeps
    // every one; exact match proposes greedily and keeps only those the sampler picks too.
    var rate: [SessionOptions.DraftRule: Double] = [:]
    for rule in [SessionOptions.DraftRule.rejection, .exact] {
      let s = try model.makeSession(options: SessionOptions(threads: 1, draftModel: model, draftMax: 4, draftPMin: 0,
                                                            draftRule: rule))
      let g = try s.generate("tok5 tok6 tok7", options: options)
      XCTAssertGreaterThan(g.usage.draftTokens, 0)
      rate[rule] = g.usage.draftAcceptanceRate
    }
    XCTAssertEqual(rate[.rejection], 1.0)
    XCTAssertLessThan(rate[.exact]!, 0.5)
  }

  func testPMinCutsEveryProposalOfTheTinyModel() throws {
    let (model, _) = try tinyModels.get()
    let spec = try model.makeSession(options: SessionOptions(threads: 1, draftModel: model))  // draftPMin 0.75
    let g = try spec.generate("tok5 tok6 tok7", options: GenerateOptions(maxTokens: 20, temperature: 0))
    XCTAssertEqual(g.usage.draftTokens, 0)
    XCTAssertEqual(g.usage.draftAcceptanceRate, 0)
  }

  func testBadKnobsAreRefused() throws {
    let (model, draft) = try tinyModels.get()
    let cases: [(SessionOptions, String)] = [
      (SessionOptions(draftModel: draft, draftMax: 0), "draft_max 0 is outside 1..16"),
      (SessionOptions(draftModel: draft, draftMax: 17), "draft_max 17 is outside 1..16"),
      (SessionOptions(draftModel: draft, nDraft: -1), "draft_max -1 is negative"),
      (SessionOptions(draftModel: draft, draftMax: 4, draftMin: 5), "draft_min 5 is outside 0..draft_max (4)"),
      (SessionOptions(draftModel: draft, draftPMin: 2), "p_min 2 is outside [0, 1]"),
      (SessionOptions(draftAuto: true), "architecture 'llama' has no in-trunk multi-token-prediction head"),
    ]
    for (options, message) in cases {
      XCTAssertThrowsError(try model.makeSession(options: options)) { error in
        let e = error as! UaiiError
        XCTAssertEqual(e.status, .invalidArgument)
        XCTAssertTrue(e.message.contains(message), e.message)
      }
    }
  }

  // The gemma4 assistant is no Model of its own: draftPath names its file (C ABI 0.5).
  // Greedy replies equal the plain session's; the assistant proposed.
  func testTheGemma4AssistantDraftsByPath() throws {
    for kind in ["f32", "q8_0", "q4_0"] {
      let model = try Model(path: fixturesDir + "/gemma4/\(kind).gguf")
      let plain = try model.makeSession(options: SessionOptions(threads: 1))
      let spec = try model.makeSession(options: SessionOptions(
        threads: 1, draftPath: fixturesDir + "/gemma4-assistant/\(kind).gguf", draftPMin: 0))
      var drafted = 0
      for prompt in ["tok5 tok6 tok7", "tok9 tok10"] {
        let options = GenerateOptions(maxTokens: 24, temperature: 0)
        let a = try plain.generate(prompt, options: options)
        let b = try spec.generate(prompt, options: options)
        XCTAssertEqual(a.text, b.text, kind)
        drafted += b.usage.draftTokens
      }
      XCTAssertGreaterThan(drafted, 0, kind)
    }
    let (model, draft) = try tinyModels.get()
    XCTAssertThrowsError(try model.makeSession(options: SessionOptions(
      draftModel: draft, draftPath: fixturesDir + "/tiny/tiny-llama-q4_0.gguf"))) { error in
      let e = error as! UaiiError
      XCTAssertEqual(e.status, .invalidArgument)
      XCTAssertTrue(e.message.contains("at most one of draft_model, draft_path and draft_auto"), e.message)
    }
  }
}
