// Structured output in the Swift SDK on the default model: GenerateOptions.grammar (GBNF)
// and .jsonSchema on generate / chat / stream (JSON replies parsed by Foundation), a
// Sampler constrained to a vocabulary driven with Session.step, jsonSchemaToGrammar, and
// the errors of each. Sampled runs (temperature > 0, several seeds) must still give text
// the grammar allows.
import Foundation
import XCTest
@testable import Uaii

/// "yes", "no" or "maybe", a reason of lowercase words, a full stop.
let answerGrammar = #"root ::= ("yes" | "no" | "maybe") ", because " [a-z ]{3,40} "."\#n"#
let answerPattern = #"(yes|no|maybe), because [a-z ]{3,40}\."#
/// A JSON-like list of one to four numbers of up to three digits.
let listGrammar = #"root ::= "[" [0-9]{1,3} ("," [0-9]{1,3}){0,3} "]"\#n"#
let listPattern = #"\[[0-9]{1,3}(,[0-9]{1,3}){0,3}\]"#

/// An object with a yes/no `answer` and an integer `confidence` in 0...100, both required.
let answerSchema = #"""
  {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]},
   "confidence": {"type": "integer", "minimum": 0, "maximum": 100}},
   "required": ["answer", "confidence"], "additionalProperties": false}
  """#

/// `text` parses as JSON (Foundation's parser) and fits `answerSchema`.
func assertFitsAnswerSchema(_ text: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
  let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8))
  let doc = try XCTUnwrap(parsed as? [String: Any], "\(what): not an object: \(text)", file: file, line: line)
  XCTAssertEqual(Set(doc.keys), ["answer", "confidence"], "\(what): \(text)", file: file, line: line)
  XCTAssertTrue(["yes", "no"].contains(doc["answer"] as? String ?? ""), "\(what): \(text)", file: file, line: line)
  let confidence = try XCTUnwrap(doc["confidence"] as? NSNumber, "\(what): \(text)", file: file, line: line)
  XCTAssertEqual(confidence.doubleValue, confidence.doubleValue.rounded(), "\(what): \(text)", file: file, line: line)
  XCTAssertTrue((0...100).contains(confidence.intValue), "\(what): \(text)", file: file, line: line)
}

/// `call` throws a UaiiError of status .invalidArgument whose message contains `cause`.
func expectInvalidArgument(_ cause: String, file: StaticString = #filePath, line: UInt = #line,
                           _ call: () throws -> Void) {
  XCTAssertThrowsError(try call(), cause, file: file, line: line) { error in
    let e = error as! UaiiError
    XCTAssertEqual(e.status, .invalidArgument, "\(cause): \(e)", file: file, line: line)
    XCTAssertTrue(e.message.contains(cause), e.message, file: file, line: line)
  }
}

func fullyMatches(_ text: String, _ pattern: String) throws -> Bool {
  try Regex(pattern).wholeMatch(in: text) != nil
}

final class StructuredOutputTests: XCTestCase {
  var model: Model { get throws { try sharedModel.get() } }

  /// Evaluates `prompt` in a new session and steps `sampler` until end-of-generation (at most
  /// `max` tokens; every token before it is evaluated). Returns the generated ids.
  func stepToTheEnd(_ prompt: String, _ sampler: Sampler, max: Int) throws -> [Int32] {
    let model = try self.model
    let session = try model.makeSession()
    _ = try session.eval(try model.tokenizer().encode(prompt, addSpecial: true))
    var out: [Int32] = []
    while out.count < max {
      let (token, stop) = try session.step(sampler)
      if stop == .endOfGeneration { break }
      out.append(token)
      XCTAssertNil(stop)
    }
    return out
  }

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
      let out = try stepToTheEnd(prompt, sampler, max: options.maxTokens)
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
    expectInvalidArgument("undefined rule 'nope'") { try session.generate("x", options: bad) }
    expectInvalidArgument("undefined rule 'nope'") { try session.chat([.user("x")], options: bad) }
    expectInvalidArgument("undefined rule 'nope'") { _ = try Sampler(options: bad, vocabulary: model) }
    expectInvalidArgument("exclude each other") { try session.generate("x", options: both) }
    expectInvalidArgument("exclude each other") { _ = try Sampler(options: both, vocabulary: model) }
    expectInvalidArgument("needs the vocabulary") { _ = try Sampler(options: GenerateOptions(grammar: #"root ::= "a""#)) }
    expectInvalidArgument("needs the vocabulary") { _ = try Sampler(options: GenerateOptions(jsonSchema: "{}")) }
    // Nothing ran: the session is still empty.
    XCTAssertEqual(session.nPast, 0)
  }

  func testJSONSchemaRepliesParseAndFitOnEverySeed() throws {
    let session = try model.makeSession()
    for seed in UInt64(1)...4 {
      let options = GenerateOptions(maxTokens: 96, temperature: 1.0, seed: seed, jsonSchema: answerSchema)
      let g = try session.generate("Is the sky blue? Reply in JSON:", options: options)
      XCTAssertEqual(g.usage.stopReason, .endOfGeneration, "seed \(seed)")
      try assertFitsAnswerSchema(g.text, "seed \(seed)")
    }
    let chat = try session.chat([.user("Is water wet? Reply in JSON.")],
                                options: GenerateOptions(maxTokens: 96, temperature: 0.8, seed: 7, jsonSchema: answerSchema))
    try assertFitsAnswerSchema(chat.text, "chat")
  }

  func testJSONSchemaSamplerAndConverter() throws {
    let model = try self.model
    let tok = try model.tokenizer()
    let options = GenerateOptions(maxTokens: 96, temperature: 0.7, seed: 5, jsonSchema: answerSchema)
    let sampler = try Sampler(options: options, vocabulary: model)
    let out = try stepToTheEnd("JSON:", sampler, max: options.maxTokens)
    XCTAssertTrue(sampler.grammarComplete)
    try assertFitsAnswerSchema(try tok.decode(out), "step loop")
    // The converter's GBNF, passed as a grammar, constrains exactly as the schema does.
    let gbnf = try jsonSchemaToGrammar(answerSchema)
    XCTAssertTrue(gbnf.contains("root ::="), gbnf)
    let viaSchema = try model.makeSession().generate("JSON:", options: options)
    let viaGrammar = try model.makeSession().generate(
      "JSON:", options: GenerateOptions(maxTokens: 96, temperature: 0.7, seed: 5, grammar: gbnf))
    XCTAssertEqual(viaGrammar.text, viaSchema.text)
    // Errors name the cause.
    expectInvalidArgument("invalid JSON") { _ = try jsonSchemaToGrammar("[1, 2") }
    expectInvalidArgument("unrecognized type color") {
      try model.makeSession().generate("x", options: GenerateOptions(jsonSchema: #"{"type": "color"}"#))
    }
  }
}
