// Sampler: the engine's sampling chain (uaii_sampler) over any logits, for loops an
// application drives itself (Session.eval / Session.step), optionally constrained by a
// grammar or JSON Schema over a vocabulary (uaii_sampler_create_constrained). Not
// Sendable: one thread at a time.
import CUaii

public final class Sampler {
  let handle: OpaquePointer

  /// The sampling fields of `options` (maxTokens, stop and think are ignored); the default
  /// options are greedy. The same options and seed pick what Session.generate picks.
  ///
  /// With `options.grammar` or `options.jsonSchema`, `vocabulary` is the tokenizer whose ids
  /// the logits index (a model's: `Sampler(options:vocabulary:)` with the Model); `sample`
  /// then returns only tokens the grammar allows next, and `accept` follows the grammar.
  /// Without one, `vocabulary` is not needed (a constrained sampler over it without a
  /// grammar samples as an unconstrained one). A grammar without a vocabulary, an invalid
  /// grammar or schema, or both at once throw `.invalidArgument` naming the cause.
  public init(options: GenerateOptions = GenerateOptions(), vocabulary: Tokenizer? = nil) throws {
    var out: OpaquePointer?
    if let vocabulary {
      try check(withCOptions(options) { uaii_sampler_create_constrained(vocabulary.handle, $0, &out) })
    } else {
      if options.grammar != nil || options.jsonSchema != nil {
        throw UaiiError(status: .invalidArgument,
                        message: "a grammar or jsonSchema needs the vocabulary: pass vocabulary: (the Model or "
                          + "Tokenizer whose token ids the logits index)")
      }
      try check(withCOptions(options) { uaii_sampler_create($0, &out) })
    }
    handle = out!
  }

  /// A sampler constrained over `vocabulary`'s tokenizer (see `init(options:vocabulary:)`).
  public convenience init(options: GenerateOptions = GenerateOptions(), vocabulary: Model) throws {
    try self.init(options: options, vocabulary: try vocabulary.tokenizer())
  }

  deinit { uaii_sampler_destroy(handle) }

  /// Picks a token id from `logits` without recording it.
  public func sample(_ logits: [Float]) throws -> Int32 {
    var token: Int32 = -1
    try check(logits.withUnsafeBufferPointer { uaii_sampler_sample(handle, $0.baseAddress, $0.count, &token) })
    return token
  }

  /// Records a token in the penalty window and follows the grammar, if any (so with one,
  /// accept only generated tokens: a token it does not allow throws `.invalidArgument`).
  public func accept(_ token: Int32) throws { try check(uaii_sampler_accept(handle, token)) }

  /// Back to the state right after creation: empty window, the seed's PRNG, the grammar at
  /// its start.
  public func reset() throws { try check(uaii_sampler_reset(handle)) }

  /// True when the tokens accepted so far form a whole sentence of the grammar (false
  /// without one).
  public var grammarComplete: Bool { uaii_sampler_grammar_complete(handle) != 0 }
}

/// The GBNF grammar for a JSON Schema (its JSON text): what `GenerateOptions.jsonSchema`
/// uses, to read or edit before passing it as `grammar`. An invalid or unsupported schema
/// throws `.invalidArgument` naming the cause.
public func jsonSchemaToGrammar(_ schema: String) throws -> String {
  var out: UnsafeMutablePointer<CChar>?
  try check(schema.withCString { uaii_json_schema_to_grammar($0, &out) })
  defer { uaii_string_free(out) }
  return String(cString: out!)
}
