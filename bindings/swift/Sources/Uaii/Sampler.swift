// Sampler: the engine's sampling chain (uaii_sampler) over any logits, for loops an
// application drives itself (Session.eval / Session.step). Not Sendable: one thread at a time.
import CUaii

public final class Sampler {
  let handle: OpaquePointer

  /// The sampling fields of `options` (maxTokens, stop and think are ignored); the default
  /// options are greedy. The same options and seed pick what Session.generate picks.
  public init(options: GenerateOptions = GenerateOptions()) throws {
    var out: OpaquePointer?
    try check(withCOptions(options) { uaii_sampler_create($0, &out) })
    handle = out!
  }

  deinit { uaii_sampler_destroy(handle) }

  /// Picks a token id from `logits` without recording it.
  public func sample(_ logits: [Float]) throws -> Int32 {
    var token: Int32 = -1
    try check(logits.withUnsafeBufferPointer { uaii_sampler_sample(handle, $0.baseAddress, $0.count, &token) })
    return token
  }

  /// Records a token in the penalty window.
  public func accept(_ token: Int32) throws { try check(uaii_sampler_accept(handle, token)) }

  /// Back to the state right after creation: empty window, the seed's PRNG.
  public func reset() throws { try check(uaii_sampler_reset(handle)) }
}
