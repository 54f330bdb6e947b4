// Tokenizer: text <-> ids. Thread-safe per the C ABI, hence Sendable. Buffers follow the
// ABI's (buf, cap, out_len) rule: a first try with a guessed size, then the exact size.
import CUaii

public final class Tokenizer: @unchecked Sendable {
  let handle: OpaquePointer

  init(handle: OpaquePointer) { self.handle = handle }

  /// A tokenizer alone: a GGUF file or a directory of tokenizer files (nil: the default model).
  public init(path: String?) throws {
    try ensureCompatibleLibrary()
    var out: OpaquePointer?
    let status: uaii_status
    if let path {
      status = path.withCString { uaii_tokenizer_open($0, &out) }
    } else {
      status = uaii_tokenizer_open(nil, &out)
    }
    try check(status)
    handle = out!
  }

  deinit { uaii_tokenizer_destroy(handle) }

  public var vocabSize: Int { Int(uaii_tokenizer_vocab_size(handle)) }

  /// UTF-8 text -> token ids. `addSpecial`: BOS/EOS as the tokenizer's configuration says;
  /// `parseSpecial`: control tokens written in the text are recognised.
  public func encode(_ text: String, addSpecial: Bool = false, parseSpecial: Bool = false) throws -> [Int32] {
    var flags: UInt32 = 0
    if addSpecial { flags |= UInt32(UAII_TOKENIZE_ADD_SPECIAL) }
    if parseSpecial { flags |= UInt32(UAII_TOKENIZE_PARSE_SPECIAL) }
    var bytes = Array(text.utf8)
    let count = bytes.count
    return try bytes.withUnsafeMutableBufferPointer { textBuf in
      try withBufferRule(initial: count + 8, element: Int32(0)) { ids, cap, outLen in
        textBuf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(count, 1)) { text in
          uaii_tokenize(handle, count == 0 ? nil : text, count, flags, ids, cap, outLen)
        }
      }
    }
  }

  /// Token ids -> bytes; they may end inside a UTF-8 character when the ids split one.
  public func decodeBytes(_ ids: [Int32], skipSpecial: Bool = false) throws -> [UInt8] {
    let flags: UInt32 = skipSpecial ? UInt32(UAII_DETOKENIZE_SKIP_SPECIAL) : 0
    let chars = try ids.withUnsafeBufferPointer { idBuf in
      try withBufferRule(initial: ids.count * 8 + 16, element: CChar(0)) { buf, cap, outLen in
        uaii_detokenize(handle, idBuf.baseAddress, idBuf.count, flags, buf, cap, outLen)
      }
    }
    return chars.map { UInt8(bitPattern: $0) }
  }

  /// Token ids -> text (invalid UTF-8, e.g. a split character, becomes U+FFFD).
  public func decode(_ ids: [Int32], skipSpecial: Bool = false) throws -> String {
    String(decoding: try decodeBytes(ids, skipSpecial: skipSpecial), as: UTF8.self)
  }
}

/// Calls `body(buf, cap, &outLen)` with a buffer of `initial` elements; when it answers
/// UAII_ERR_BUFFER_TOO_SMALL, once more with the size it asked for.
func withBufferRule<T>(initial: Int, element: T,
                       _ body: (UnsafeMutablePointer<T>, Int, UnsafeMutablePointer<Int>) -> uaii_status) throws -> [T] {
  var cap = max(initial, 1)
  for _ in 0..<2 {
    var buffer = [T](repeating: element, count: cap)
    var outLen = 0
    let status = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, cap, &outLen) }
    if status == UAII_OK { return Array(buffer.prefix(outLen)) }
    if status != UAII_ERR_BUFFER_TOO_SMALL || outLen <= cap { throw lastError(status) }
    cap = outLen
  }
  throw UaiiError(status: .internal, message: "the library asked for a bigger buffer twice")
}
