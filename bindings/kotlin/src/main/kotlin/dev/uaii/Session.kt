// Session: one conversation (KV cache, sampler). The C ABI lets a session belong to one
// thread at a time: a second call while one runs (a stream's worker included) is refused with
// INVALID_STATE, and close() waits for the running call (cancelling a stream first).
package dev.uaii

class Session internal constructor(
  handle: Long,
  /** Kept alive by the session. */ val model: Model,
  /**
   * The speculative draft ([SessionOptions.draftModel]; null: none). The C session holds its
   * own reference to the draft's data: closing this Model while the session runs is safe.
   */
  val draftModel: Model? = null
) : AutoCloseable {
  private val handle = Handle(handle, "Session", Native::sessionDestroy)

  /**
   * Where the session's weights live on its device ([SessionOptions.deviceMemoryBytes] is their
   * budget there); all zero on the CPU. Read at creation, where the placement is fixed, so it
   * never waits for a running call and stays readable after close().
   */
  val deviceStats: DeviceStats = try {
    val v = LongArray(DeviceStats.SIZE)
    DeviceStats.of(Native.sessionDeviceStats(handle, v), v)
  } catch (e: Throwable) {
    this.handle.close()
    throw e
  }
  private val lock = Object()
  private var owner: Thread? = null // the thread running a call on the handle
  @Volatile private var stream: EventStream? = null

  /**
   * Continues the raw [prompt] (the whole text; the KV cache is reused for the longest prefix
   * the session already holds). [onEvent] sees each event as it comes; returning false stops
   * the engine (stop reason CANCELLED); an exception it throws stops it and propagates.
   */
  @JvmOverloads
  fun generate(prompt: String, options: GenerateOptions = GenerateOptions(), onEvent: ((Event) -> Boolean)? = null): Generation {
    val p = cString(prompt, "prompt")
    return exclusive { run(false, p, null, options, onEvent?.let { ListenerSink(it) }) }
  }

  /** One chat turn over the model's chat template; [messages] is the whole conversation. */
  @JvmOverloads
  fun chat(messages: List<ChatMessage>, toolsJson: String? = null, options: GenerateOptions = GenerateOptions(),
           onEvent: ((Event) -> Boolean)? = null): Generation =
    chatJson(ChatMessage.toJson(messages), toolsJson, options, onEvent)

  /** One chat turn from an OpenAI-style messages array in JSON (tool calls, tool results...). */
  @JvmOverloads
  fun chatJson(messagesJson: String, toolsJson: String? = null, options: GenerateOptions = GenerateOptions(),
               onEvent: ((Event) -> Boolean)? = null): Generation {
    val m = cString(messagesJson, "messages JSON")
    val t = toolsJson?.let { cString(it, "tools JSON") }
    return exclusive { run(true, m, t, options, onEvent?.let { ListenerSink(it) }) }
  }

  /**
   * [generate] as a blocking iterator of events ending with [Event.Done], produced on a worker
   * thread. close() it (or `use` it) to stop early: that cancels the engine and waits for it.
   */
  @JvmOverloads
  fun stream(prompt: String, options: GenerateOptions = GenerateOptions()): EventStream {
    val p = cString(prompt, "prompt")
    return startStream { sink -> run(false, p, null, options, sink) }
  }

  /** [chat] as a blocking iterator of events. */
  @JvmOverloads
  fun chatStream(messages: List<ChatMessage>, toolsJson: String? = null, options: GenerateOptions = GenerateOptions()): EventStream {
    val m = cString(ChatMessage.toJson(messages), "messages JSON")
    val t = toolsJson?.let { cString(it, "tools JSON") }
    return startStream { sink -> run(true, m, t, options, sink) }
  }

  /** Forgets the conversation (the KV cache). */
  fun reset() = exclusive { Native.sessionReset(handle.get()) }

  // Token-level control (uaii_session_eval / _truncate / _step).

  /**
   * Evaluates [tokens] at positions [nPast].. and returns the last row's logits (the model's
   * vocabulary), or every row's, row-major, with [allLogits]. The last row is kept for [step];
   * generate / chat afterwards reuse the cache exactly.
   */
  @JvmOverloads
  fun eval(tokens: IntArray, allLogits: Boolean = false): FloatArray =
    exclusive { Native.sessionEval(handle.get(), model.rawHandle(), tokens, allLogits) }

  /** Positions the KV cache holds. */
  val nPast: Long get() = Native.sessionNPast(handle.get())
  /** Positions the session can hold. */
  val maxContext: Long get() = Native.sessionMaxContext(handle.get())

  /** Forgets positions >= [n] (0 <= n <= nPast). */
  fun truncate(n: Long) = exclusive { Native.sessionTruncate(handle.get(), n) }

  /** A step's token, and why it was not evaluated (null: it was). */
  data class Step(val token: Int, val stop: StepStop?)
  enum class StepStop { END_OF_GENERATION, CONTEXT_FULL }

  /**
   * One token of a generation you drive: samples from the last evaluated row with [sampler],
   * records it there and evaluates it unless [Step.stop] says otherwise.
   */
  fun step(sampler: Sampler): Step = exclusive {
    val flags = IntArray(1)
    val token = Native.sessionStep(handle.get(), sampler.rawHandle(), flags)
    Step(token, when {
      flags[0] and 1 != 0 -> StepStop.END_OF_GENERATION
      flags[0] and 2 != 0 -> StepStop.CONTEXT_FULL
      else -> null
    })
  }

  /** Cancels a running stream, waits for a running call, then frees the session. */
  override fun close() {
    stream?.close()
    synchronized(lock) {
      check(owner !== Thread.currentThread()) { "a Session cannot be closed from inside its own event listener" }
      while (owner != null) lock.wait()
      handle.close()
    }
  }

  private fun acquire(thread: Thread) = synchronized(lock) {
    handle.get() // closed sessions fail here
    if (owner != null) {
      throw UaiiException(Status.INVALID_STATE,
        "the session is busy with another generation (a session runs one at a time); " +
          "finish or close its stream first, or use another Session")
    }
    owner = thread
  }

  internal fun release() = synchronized(lock) {
    owner = null
    lock.notifyAll()
  }

  private fun <T> exclusive(body: () -> T): T {
    acquire(Thread.currentThread())
    try {
      return body()
    } finally {
      release()
    }
  }

  private fun startStream(body: (NativeSink) -> Generation): EventStream {
    val s = EventStream(this, body)
    acquire(s.worker) // decided on the caller's thread, in call order
    stream = s
    s.start()
    return s
  }

  internal fun run(chat: Boolean, prompt: ByteArray, tools: ByteArray?, options: GenerateOptions, sink: NativeSink?): Generation {
    val stats = LongArray(Usage.STATS_SIZE)
    val rates = DoubleArray(3)
    val text = Native.sessionRun(handle.get(), chat, prompt, tools, options.ints(), options.floats(), options.seed,
      options.stops(), options.grammarBytes(), options.jsonSchemaBytes(), sink, stats, rates)
    return Generation(fromUtf8(text), Usage.of(stats, rates))
  }

  private class ListenerSink(private val listener: (Event) -> Boolean) : NativeSink {
    override fun onEvent(kind: Int, text: ByteArray): Boolean = Event.of(kind, text)?.let(listener) ?: true
    override fun onDone(stats: LongArray, rates: DoubleArray): Boolean = listener(Event.Done(Usage.of(stats, rates)))
  }
}
