// Tokenizer: text <-> ids. Thread-safe per the C ABI.
package dev.uaii

class Tokenizer internal constructor(handle: Long) : AutoCloseable {
  private val handle = Handle(handle, "Tokenizer", Native::tokenizerDestroy)

  companion object {
    private const val ADD_SPECIAL = 1
    private const val PARSE_SPECIAL = 2
    private const val SKIP_SPECIAL = 1

    /** A tokenizer alone: a GGUF file or a directory of tokenizer files (null: the default model). */
    @JvmStatic
    fun open(path: String?): Tokenizer {
      Native.ensureLoaded()
      return Tokenizer(Native.tokenizerOpen(path?.let { cString(it, "path") }))
    }
  }

  val vocabSize: Int get() = Native.tokenizerVocabSize(handle.get()).toInt()

  /** Text -> ids. [addSpecial]: BOS/EOS as configured; [parseSpecial]: control tokens in the text. */
  @JvmOverloads
  fun encode(text: String, addSpecial: Boolean = false, parseSpecial: Boolean = false): IntArray =
    Native.tokenize(handle.get(), utf8(text), (if (addSpecial) ADD_SPECIAL else 0) or (if (parseSpecial) PARSE_SPECIAL else 0))

  /** Ids -> bytes (they may end inside a UTF-8 character when the ids split one). */
  @JvmOverloads
  fun decodeBytes(ids: IntArray, skipSpecial: Boolean = false): ByteArray =
    Native.detokenize(handle.get(), ids, if (skipSpecial) SKIP_SPECIAL else 0)

  /** Ids -> text (a split UTF-8 character becomes U+FFFD). */
  @JvmOverloads
  fun decode(ids: IntArray, skipSpecial: Boolean = false): String = fromUtf8(decodeBytes(ids, skipSpecial))

  internal fun rawHandle(): Long = handle.get()

  override fun close() = handle.close()
}
