// Sampler: the engine's sampling chain (uaii_sampler) over any logits, for loops an
// application drives itself (Session.eval / Session.step), optionally constrained by a
// grammar or JSON Schema over a vocabulary (uaii_sampler_create_constrained). One thread
// at a time.
package dev.uaii

class Sampler private constructor(handle: Long) : AutoCloseable {
  private val handle = Handle(handle, "Sampler", Native::samplerDestroy)

  /**
   * The sampling fields of [options] (maxTokens, stop and think are ignored); the defaults
   * are greedy. With [GenerateOptions.grammar] or [GenerateOptions.jsonSchema], [vocabulary]
   * is the tokenizer whose ids the logits index (or pass the [Model]): [sample] then returns
   * only tokens the grammar allows next, and [accept] follows the grammar. A grammar without
   * a vocabulary, an invalid grammar or schema, or both at once throw a [UaiiException]
   * (INVALID_ARGUMENT) naming the cause.
   */
  @JvmOverloads
  constructor(options: GenerateOptions = GenerateOptions(), vocabulary: Tokenizer? = null) :
    this(create(options, vocabulary))

  /** A sampler constrained over [vocabulary]'s tokenizer (see the Tokenizer overload). */
  constructor(options: GenerateOptions, vocabulary: Model) : this(vocabulary.tokenizer().use { create(options, it) })

  private companion object {
    fun create(options: GenerateOptions, vocabulary: Tokenizer?): Long {
      Native.ensureLoaded()
      if (vocabulary == null && (options.grammar != null || options.jsonSchema != null)) {
        throw UaiiException(Status.INVALID_ARGUMENT,
          "a grammar or jsonSchema needs the vocabulary: pass vocabulary (the Model or Tokenizer whose token ids " +
            "the logits index)")
      }
      return Native.samplerCreate(options.ints(), options.floats(), options.seed, options.grammarBytes(),
                                  options.jsonSchemaBytes(), vocabulary?.rawHandle() ?: 0L)
    }
  }

  /** Picks a token id from [logits] without recording it. */
  fun sample(logits: FloatArray): Int = Native.samplerSample(handle.get(), logits)

  /**
   * Records a token in the penalty window and follows the grammar, if any (so with one,
   * accept only generated tokens: a token it does not allow throws INVALID_ARGUMENT).
   */
  fun accept(token: Int) = Native.samplerAccept(handle.get(), token)

  /** Back to the state right after creation: empty window, the seed's PRNG, the grammar at its start. */
  fun reset() = Native.samplerReset(handle.get())

  /** True when the tokens accepted so far form a whole sentence of the grammar (false without one). */
  val grammarComplete: Boolean get() = Native.samplerGrammarComplete(handle.get())

  internal fun rawHandle(): Long = handle.get()

  override fun close() = handle.close()
}
