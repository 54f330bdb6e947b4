// Model: an opened model file. Thread-safe per the C ABI: any number of threads may share a
// model (and its tokenizer); close it once nobody uses it (sessions and tokenizers made from
// it keep its data alive on their own).
package dev.uaii

class Model private constructor(handle: Long) : AutoCloseable {
  private val handle = Handle(handle, "Model", Native::modelDestroy)

  companion object {
    /**
     * Opens a GGUF file (or a Hugging Face directory where supported). null: $UAII_MODEL,
     * then the default model in the cache ($UAII_HOME, default ~/.cache/uaii).
     */
    @JvmStatic
    @JvmOverloads
    fun open(path: String? = null): Model {
      Native.ensureLoaded()
      return Model(Native.modelOpen(path?.let { cString(it, "path") }))
    }
  }

  /** The `uaii inspect --json` document (docs/json/inspect.schema.json). */
  fun inspectJson(): String = fromUtf8(Native.modelInspectJson(handle.get()))

  /** The model's tokenizer, a handle of its own: close it too. */
  fun tokenizer(): Tokenizer = Tokenizer(Native.modelTokenizer(handle.get()))

  /** A new conversation (KV cache, sampler) over this model. */
  @JvmOverloads
  fun newSession(options: SessionOptions = SessionOptions()): Session =
    Session(
      Native.sessionCreate(
        handle.get(), cString(options.device, "device"), options.threads, options.maxContext, options.learnCalibration,
        options.memory()
      ),
      this)

  /** Width of a logits row (the model's vocabulary; may exceed the tokenizer's). */
  val nVocab: Long get() = Native.modelNVocab(handle.get())

  internal fun rawHandle(): Long = handle.get()

  override fun close() = handle.close()
}
