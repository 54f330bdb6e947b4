// Sampler: the engine's sampling chain (uaii_sampler) over any logits, for loops an
// application drives itself (Session.eval / Session.step). One thread at a time.
package dev.uaii

class Sampler @JvmOverloads constructor(
  /** The sampling fields (maxTokens, stop and think are ignored); the defaults are greedy. */
  options: GenerateOptions = GenerateOptions()
) : AutoCloseable {
  private val handle: Handle

  init {
    Native.ensureLoaded()
    handle = Handle(Native.samplerCreate(options.ints(), options.floats(), options.seed), "Sampler",
                    Native::samplerDestroy)
  }

  /** Picks a token id from [logits] without recording it. */
  fun sample(logits: FloatArray): Int = Native.samplerSample(handle.get(), logits)

  /** Records a token in the penalty window. */
  fun accept(token: Int) = Native.samplerAccept(handle.get(), token)

  /** Back to the state right after creation: empty window, the seed's PRNG. */
  fun reset() = Native.samplerReset(handle.get())

  internal fun rawHandle(): Long = handle.get()

  override fun close() = handle.close()
}
