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

  /**
   * A new conversation (KV cache, sampler) over this model; with [SessionOptions.draftModel],
   * speculative decoding (a draft of another vocabulary, or draftMax outside 1..16, throws
   * UaiiException(INVALID_ARGUMENT) with the library's message).
   */
  @JvmOverloads
  fun newSession(options: SessionOptions = SessionOptions()): Session {
    // The C ABI reads draft_max 0 as its default (16); here the default is 16 itself, so 0 is
    // out of range like any other value outside 1..16, which the library refuses with its message.
    val draftMax = options.nDraft ?: options.draftMax
    if (draftMax == 0) throw UaiiException(Status.INVALID_ARGUMENT, "draft_max 0 is outside 1..16")
    // The C field is unsigned: a negative Long would read as an enormous budget.
    if (options.deviceMemoryBytes < 0) {
      throw UaiiException(Status.INVALID_ARGUMENT, "deviceMemoryBytes ${options.deviceMemoryBytes} is negative")
    }
    val draft = options.draftModel
    return Session(
      Native.sessionCreate(
        handle.get(), cString(options.device, "device"), options.threads, options.maxContext, options.learnCalibration,
        options.memory(), draft?.rawHandle() ?: 0L, options.draftPath?.let { cString(it, "draftPath") },
        intArrayOf(draftMax, options.draftMin, if (options.draftAuto) 1 else 0, options.draftRule.code),
        options.draftPMin
      ),
      this, draft)
  }

  /** Width of a logits row (the model's vocabulary; may exceed the tokenizer's). */
  val nVocab: Long get() = Native.modelNVocab(handle.get())

  internal fun rawHandle(): Long = handle.get()

  override fun close() = handle.close()
}
