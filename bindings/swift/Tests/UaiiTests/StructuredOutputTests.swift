// Structured output in the Swift SDK on the default model: GenerateOptions.grammar (GBNF)
// and .jsonSchema on generate / chat / stream, a Sampler constrained to a vocabulary driven
// with Session.step, jsonSchemaToGrammar, and the errors of each. Sampled runs (temperature
// > 0, several seeds) must still give text the grammar allows.
import XCTest
@testable import Uaii

/// "yes", "no" or "maybe", a reason of lowercase words, a full stop.
let answerGrammar = #"root ::= ("yes" | "no" | "maybe") ", because " [a-z ]{3,40} "."\#n"#
let answerPattern = #"(yes|no|maybe), because [a-z ]{3,40}\."#
/// A JSON-like list of one to four numbers of up to three digits.
let listGrammar = #"root ::= "[" [0-9]{1,3} ("," [0-9]{1,3}){0,3} "]"\#n"#
let listPattern = #"\[[0-9]{1,3}(,[0-9]{1,3}){0,3}\]"#

func fullyMatches(_ text: String, _ pattern: String) throws -> Bool {
  try Regex(pattern).wholeMatch(in: text) != nil
}

final class StructuredOutputTests: XCTestCase {
  var model: Model { get throws { try sharedModel.get() } }

  func testGrammarConstrainsSampledGenerateOnEverySeed() throws {
    let session = try model.makeSession()
    for seed in UInt64(1)...5 {
      let options = GenerateOptions(maxTokens: 64, temperature: 1.0, seed: seed, grammar: answerGrammar)
      let g = try session.generate("Is the sky blue? Answer:", options: options)
      XCTAssertTrue(try fullyMatches(g.text, answerPattern), "seed \(seed): \(g.text.debugDescription)")
      // Once the sentence is whole the grammar allows only end-of-generation.
      XCTAssertEqual(g.usage.stopReason, .endOfGeneration, "seed \(seed)")
    }
  }

  func testGrammarOnChatAndStream() async throws {
    let session = try model.makeSession()
    let options = GenerateOptions(maxTokens: 64, temperature: 0.8, seed: 3, grammar: listGrammar)
    let g = try session.chat([.user("Give me a few small numbers.")], options: options)
    XCTAssertTrue(try fullyMatches(g.text, listPattern), g.text.debugDescription)
    var text = ""
    for try await event in try model.makeSession().stream("Numbers:", options: options) {
      if case .text(let t) = event { text += t }
    }
    XCTAssertTrue(try fullyMatches(text, listPattern), text.debugDescription)
  }

  func testConstrainedSamplerDrivesStep() throws {
    let model = try self.model
    let tok = try model.tokenizer()
    let options = GenerateOptions(maxTokens: 64, temperature: 0.7, seed: 11, grammar: listGrammar)
    let prompt = "Numbers:"
    var runs: [[Int32]] = []
    // The vocabulary as the Model and as its Tokenizer: the same constraint, the same tokens.
    for sampler in [try Sampler(options: options, vocabulary: model), try Sampler(options: options, vocabulary: tok)] {
      XCTAssertFalse(sampler.grammarComplete)
      let session = try model.makeSession()
      _ = try session.eval(try tok.encode(prompt, addSpecial: true))
      var out: [Int32] = []
      while out.count < options.maxTokens {
        let (token, stop) = try session.step(sampler)
        if stop == .endOfGeneration { break }
        out.append(token)
        XCTAssertNil(stop)
      }
      XCTAssertTrue(sampler.grammarComplete)
      let text = try tok.decode(out)
      XCTAssertTrue(try fullyMatches(text, listPattern), text.debugDescription)
      try sampler.reset()
      XCTAssertFalse(sampler.grammarComplete)
      runs.append(out)
    }
    XCTAssertEqual(runs[0], runs[1])
    // The same chain and grammar generate uses: a step loop picks what generate picks.
    XCTAssertEqual(try model.makeSession().generate(prompt, options: options).text, try tok.decode(runs[0]))
  }

  func testSamplerFollowsTheGrammarOnAccept() throws {
    let tok = try model.tokenizer()
    let sampler = try Sampler(options: GenerateOptions(grammar: #"root ::= "a""#), vocabulary: tok)
    XCTAssertThrowsError(try sampler.accept(try tok.encode("z").last!)) { error in
      let e = error as! UaiiError
      XCTAssertEqual(e.status, .invalidArgument)
      XCTAssertTrue(e.message.contains("not allowed"), e.message)
    }
    // A logits row favouring "z" still yields the grammar's "a".
    var logits = [Float](repeating: 0, count: tok.vocabSize)
    logits[Int(try tok.encode("z").last!)] = 100
    let a = try sampler.sample(logits)
    XCTAssertEqual(try tok.decode([a]), "a")
    try sampler.accept(a)
    XCTAssertTrue(sampler.grammarComplete)
    // Without a grammar a sampler over a vocabulary samples as a plain one.
    XCTAssertEqual(try Sampler(vocabulary: tok).sample([0.5, 3, -1, 2]), 1)
  }

  func testGrammarErrorsCarryTheEnginesMessage() throws {
    let model = try self.model
    let session = try model.makeSession()
    let bad = GenerateOptions(grammar: "root ::= nope\n")
    let both = GenerateOptions(grammar: #"root ::= "a""#, jsonSchema: #"{"type": "string"}"#)
    func expect(_ what: String, _ call: () throws -> Void) {
      XCTAssertThrowsError(try call(), what) { error in
        let e = error as! UaiiError
        XCTAssertEqual(e.status, .invalidArgument, "\(what): \(e)")
        XCTAssertTrue(e.message.contains(what), e.message)
      }
    }
    expect("undefined rule 'nope'") { try session.generate("x", options: bad) }
    expect("undefined rule 'nope'") { try session.chat([.user("x")], options: bad) }
    expect("undefined rule 'nope'") { _ = try Sampler(options: bad, vocabulary: model) }
    expect("exclude each other") { try session.generate("x", options: both) }
    expect("exclude each other") { _ = try Sampler(options: both, vocabulary: model) }
    expect("needs the vocabulary") { _ = try Sampler(options: GenerateOptions(grammar: #"root ::= "a""#)) }
    expect("needs the vocabulary") { _ = try Sampler(options: GenerateOptions(jsonSchema: "{}")) }
    // Nothing ran: the session is still empty.
    XCTAssertEqual(session.nPast, 0)
  }

  func testJSONSchemaReachesTheEngine() throws {
    // TEMPORARY (grammar-wip's converter is a shim): the schema reaches the C ABI and its
    // error comes back as a UaiiError.
    let session = try model.makeSession()
    XCTAssertThrowsError(try session.generate("x", options: GenerateOptions(jsonSchema: #"{"type": "boolean"}"#))) {
      XCTAssertEqual(($0 as! UaiiError).status, .unsupported)
    }
    XCTAssertThrowsError(try jsonSchemaToGrammar(#"{"type": "boolean"}"#)) {
      XCTAssertEqual(($0 as! UaiiError).status, .unsupported)
    }
  }
}
