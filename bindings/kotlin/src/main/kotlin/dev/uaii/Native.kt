// The JNI shim's functions (bindings/kotlin/jni/uaii_jni.c) and the one-time load + ABI check.
// Text crosses as UTF-8 byte arrays; handles as Long.
package dev.uaii

internal object Native {
  /** The C ABI version these Kotlin sources are written against (capi/uaii.h). */
  const val BINDING_MAJOR = 0
  const val BINDING_MINOR = 5

  private val loadFailure: Throwable? = try {
    val explicit = System.getProperty("uaii.jni.library")
    if (explicit != null) System.load(explicit) else System.loadLibrary("uaii_jni")
    Version.mismatch(capiVersion(), headerVersion())?.let { UaiiException(Status.VERSION_MISMATCH, it) }
  } catch (e: UnsatisfiedLinkError) {
    UnsatisfiedLinkError("uaii: cannot load the JNI library libuaii_jni (and libuaii next to it): ${e.message}; " +
      "put it on java.library.path or name it with -Duaii.jni.library=/path/to/libuaii_jni.so").also { it.initCause(e) }
  }

  /** Throws the load or version error, every time, until the process restarts. */
  fun ensureLoaded() {
    loadFailure?.let { throw it }
  }

  @JvmStatic external fun capiVersion(): Int
  @JvmStatic external fun headerVersion(): Int
  @JvmStatic external fun statusString(status: Int): ByteArray

  @JvmStatic external fun modelOpen(path: ByteArray?): Long
  @JvmStatic external fun modelDestroy(handle: Long)
  @JvmStatic external fun modelInspectJson(handle: Long): ByteArray
  @JvmStatic external fun modelTokenizer(handle: Long): Long

  @JvmStatic external fun tokenizerOpen(path: ByteArray?): Long
  @JvmStatic external fun tokenizerDestroy(handle: Long)
  @JvmStatic external fun tokenizerVocabSize(handle: Long): Long
  @JvmStatic external fun tokenize(handle: Long, text: ByteArray, flags: Int): IntArray
  @JvmStatic external fun detokenize(handle: Long, ids: IntArray, flags: Int): ByteArray

  /**
   * memory: [preset, ramBudgetBytes, kvWindow, prefillChunk, moeTopK, moePrefetch (0/1),
   * deviceMemoryBytes];
   * draftModel: a model handle for speculative decoding, or 0; draftPath: a drafter file's
   * NUL-terminated UTF-8 path, or null; draft: [draftMax, draftMin,
   * draftAuto (0/1), draftRule] and draftPMin as the C ABI reads them.
   */
  @JvmStatic external fun sessionCreate(
    model: Long, device: ByteArray?, threads: Int, maxContext: Long, learnCalibration: Boolean, memory: LongArray,
    draftModel: Long, draftPath: ByteArray?, draft: IntArray, draftPMin: Float
  ): Long
  @JvmStatic external fun sessionDestroy(handle: Long)
  @JvmStatic external fun sessionReset(handle: Long)
  /** Returns the device name; fills [out] as DeviceStats.of reads it (DeviceStats.SIZE longs). */
  @JvmStatic external fun sessionDeviceStats(handle: Long, out: LongArray): ByteArray
  @JvmStatic external fun generateDefaults(ints: IntArray, floats: FloatArray): Long
  @JvmStatic external fun modelNVocab(handle: Long): Long
  @JvmStatic external fun sessionEval(handle: Long, model: Long, tokens: IntArray, allLogits: Boolean): FloatArray
  @JvmStatic external fun sessionNPast(handle: Long): Long
  @JvmStatic external fun sessionMaxContext(handle: Long): Long
  @JvmStatic external fun sessionTruncate(handle: Long, n: Long)
  @JvmStatic external fun sessionStep(handle: Long, sampler: Long, outFlags: IntArray): Int
  /** [vocabulary]: a tokenizer handle to constrain by [grammar] / [jsonSchema] over, or 0. */
  @JvmStatic external fun samplerCreate(
    ints: IntArray, floats: FloatArray, seed: Long, grammar: ByteArray?, jsonSchema: ByteArray?, vocabulary: Long
  ): Long
  @JvmStatic external fun samplerGrammarComplete(handle: Long): Boolean
  @JvmStatic external fun jsonSchemaToGrammar(schema: ByteArray): ByteArray
  @JvmStatic external fun samplerDestroy(handle: Long)
  @JvmStatic external fun samplerSample(handle: Long, logits: FloatArray): Int
  @JvmStatic external fun samplerAccept(handle: Long, token: Int)
  @JvmStatic external fun samplerReset(handle: Long)
  @JvmStatic external fun sessionRun(
    handle: Long, chat: Boolean, prompt: ByteArray, tools: ByteArray?, ints: IntArray, floats: FloatArray,
    seed: Long, stop: Array<ByteArray>, grammar: ByteArray?, jsonSchema: ByteArray?, sink: NativeSink?,
    outStats: LongArray, outRates: DoubleArray
  ): ByteArray
}

/** Receives the C events on the generating thread (called from the JNI shim). */
internal interface NativeSink {
  /** Text, thinking, tool-call and error events; false stops the generation. */
  fun onEvent(kind: Int, text: ByteArray): Boolean
  /**
   * The last event: [stop, prompt, completion, cached, reasoning, peakRss, draft, draftAccepted]
   * (Usage.STATS_SIZE), [prefill, decode] tok/s and the draft acceptance rate.
   */
  fun onDone(stats: LongArray, rates: DoubleArray): Boolean
}

internal fun utf8(s: String): ByteArray = s.toByteArray(Charsets.UTF_8)
internal fun fromUtf8(b: ByteArray): String = String(b, Charsets.UTF_8)

/** UTF-8 bytes of a string the C ABI reads NUL-terminated; a NUL inside would cut it short. */
internal fun cString(s: String, what: String): ByteArray {
  require(s.indexOf('\u0000') < 0) { "$what contains a NUL character (U+0000), which the C ABI cannot pass" }
  return utf8(s)
}
