// Model: an opened model file. Thread-safe per the C ABI (a model and its tokenizer may be
// shared by any number of threads), hence Sendable.
import CUaii

public final class Model: @unchecked Sendable {
  let handle: OpaquePointer

  /// Opens a GGUF file (or a Hugging Face directory where supported). `nil`: $UAII_MODEL,
  /// then the default model in the cache ($UAII_HOME, default ~/.cache/uaii).
  public init(path: String? = nil) throws {
    try ensureCompatibleLibrary()
    var out: OpaquePointer?
    let status: uaii_status
    if let path {
      status = path.withCString { uaii_model_open($0, nil, &out) }
    } else {
      status = uaii_model_open(nil, nil, &out)
    }
    try check(status)
    handle = out!
  }

  deinit { uaii_model_destroy(handle) }

  /// The `uaii inspect --json` document (docs/json/inspect.schema.json).
  public func inspectJSON() throws -> String {
    var out: UnsafeMutablePointer<CChar>?
    try check(uaii_model_inspect_json(handle, &out))
    defer { uaii_string_free(out) }
    return String(cString: out!)
  }

  /// The model's tokenizer (it keeps the model's data alive on its own).
  public func tokenizer() throws -> Tokenizer {
    var out: OpaquePointer?
    try check(uaii_model_tokenizer(handle, &out))
    return Tokenizer(handle: out!)
  }

  /// A new conversation over this model (KV cache and sampler state of its own).
  public func makeSession(options: SessionOptions = SessionOptions()) throws -> Session {
    try Session(model: self, options: options)
  }
}
