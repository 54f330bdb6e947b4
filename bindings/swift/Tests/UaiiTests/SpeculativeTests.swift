// Speculative decoding through the Swift SDK (docs/speculative.md): a session with a draft
// model gives the replies a session without one gives, and its usage counts the proposals;
// a draft of another vocabulary and an out-of-range nDraft are refused with the C message.
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
    let spec = try model.makeSession(options: SessionOptions(threads: 1, draftModel: draft, nDraft: 3))
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

  func testNDraftOutOfRangeIsRefused() throws {
    let (model, draft) = try tinyModels.get()
    for n in [0, 65, -1] {
      XCTAssertThrowsError(try model.makeSession(options: SessionOptions(draftModel: draft, nDraft: n))) { error in
        let e = error as! UaiiError
        XCTAssertEqual(e.status, .invalidArgument)
        XCTAssertTrue(e.message.contains("n_draft"), e.message)
      }
    }
  }
}
