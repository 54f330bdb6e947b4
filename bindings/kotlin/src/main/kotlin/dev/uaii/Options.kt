// Value types: options (generation defaults come from the library's uaii_generate_options_init,
// so they never drift from the C ABI), usage, events, chat messages.
package dev.uaii

/** How a session runs: the C ABI's uaii_session_options (docs/c_api.md, "Session options"). */
data class SessionOptions @JvmOverloads constructor(
  /** "cpu" (default), "auto" (the first real GPU, else the CPU) or "vulkan[:N]". */
  val device: String = "cpu",
  /** <= 0: physical cores. */
  val threads: Int = 0,
  /** 0: 4096, or the model's training context when smaller. */
  val maxContext: Long = 0,
  /**
   * Each generate / chat call teaches the storage calibration in $UAII_HOME what it read and
   * how fast it decoded (the C ABI's `learn_calibration`; off by default).
   */
  val learnCalibration: Boolean = false,
  /** The memory preset (docs/storage.md); NONE keeps everything resident. */
  val preset: Preset = Preset.NONE,
  /** A RAM budget in bytes; 0: the preset's. Weights that do not fit stream from disk. */
  val ramBudgetBytes: Long = 0,
  /** Resident KV positions: -1 the preset's window, 0 unbounded, n > 0 n positions. */
  val kvWindow: Long = -1,
  /** Tokens per forward pass during prefill (0: 512). */
  val prefillChunk: Long = 512,
  /** Mixture-of-experts models: experts per token (0: the file's, exact). */
  val moeTopK: Long = 0,
  /** Under a budget, read the next layer's experts ahead (results do not change). */
  val moePrefetch: Boolean = false,
  /**
   * Speculative decoding (docs/speculative.md): a smaller model with the same vocabulary
   * proposes up to [draftMax] tokens a step; the model checks them in one batch and
   * [draftRule] keeps a prefix of them. null: none. The session keeps its own reference to
   * the draft's data.
   */
  val draftModel: Model? = null,
  /**
   * The drafter as a file (C ABI 0.5 `draft_path`): a gemma4-assistant GGUF drafts for this
   * session's gemma4 model over its KV cache and hidden state (it is no [Model] of its own);
   * any other model file drafts as [draftModel] does. null: none. At most one of
   * [draftModel], [draftPath] and [draftAuto].
   */
  val draftPath: String? = null,
  /** The older name of [draftMax] (null: draftMax decides). */
  val nDraft: Int? = null,
  /**
   * A GPU's memory for the weights, in bytes (0: 90% of the device's largest memory heap;
   * negative is refused). Weights past it stay in host memory the device reads across the
   * bus: slower, the same logits (docs/backends.md, "The device budget"). No effect on "cpu";
   * [Session.deviceStats] reports the placement.
   */
  val deviceMemoryBytes: Long = 0,
  /** Proposals per verification, 1..16 (llama.cpp's --draft-max). */
  val draftMax: Int = 16,
  /** Drafts shorter than this are not verified (--draft-min), 0..draftMax. */
  val draftMin: Int = 0,
  /** Stop proposing when the drafter's top probability is below this (--draft-p-min), 0..1. */
  val draftPMin: Float = 0.75f,
  /**
   * The model's own in-trunk multi-token-prediction head drafts (`--draft auto`) instead of
   * [draftModel]; no architecture has one yet, so this throws INVALID_ARGUMENT naming it.
   */
  val draftAuto: Boolean = false,
  /** Which proposals are kept (docs/speculative.md, "Acceptance rules"). */
  val draftRule: DraftRule = DraftRule.AUTO
) {
  enum class Preset(val code: Int) { NONE(0), LAPTOP(1), DESKTOP(2), SERVER(3), PHONE(4) }

  /** uaii_draft_rule: AUTO exact match for greedy requests and grammars, else REJECTION;
   * EXACT the same reply as without a draft; REJECTION the target's distribution (Leviathan et al.). */
  enum class DraftRule(val code: Int) { AUTO(0), EXACT(1), REJECTION(2) }

  internal fun memory() = longArrayOf(preset.code.toLong(), ramBudgetBytes, kvWindow, prefillChunk, moeTopK,
                                      if (moePrefetch) 1L else 0L, deviceMemoryBytes)
}

/** Where a session's weights live on its device (uaii_device_stats); all zero on the CPU. */
data class DeviceStats(
  /** What [SessionOptions.device] resolved to: "cpu", "vulkan:0". */
  val device: String,
  /** The device memory the weights may take ([SessionOptions.deviceMemoryBytes], or the default's figure). */
  val budgetBytes: Long,
  /** Weights in device memory. */
  val residentBytes: Long,
  /** Weights in host memory the device reads across the bus. */
  val hostBytes: Long,
  /** The device buffer host weights are copied into before each use (0: read in place). */
  val stagingBytes: Long,
  /** Weight types without a device kernel, requantized to Q8_0. */
  val requantizedWeights: Int
) {
  internal companion object {
    /** The shim's array (Native.sessionDeviceStats): budget, resident, host, staging, requantized. */
    const val SIZE = 5

    fun of(device: ByteArray, v: LongArray) = DeviceStats(fromUtf8(device), v[0], v[1], v[2], v[3], v[4].toInt())
  }
}

internal object Defaults {
  // The header's documented defaults, used only when the library cannot load (the load
  // error is then thrown by Model.open / Tokenizer.open, not by building options).
  val ints = intArrayOf(256, 40, -1)
  val floats = floatArrayOf(0f, 0.95f, 0.05f, 1f, 0f, 0f)
  val seed: Long = try {
    Native.ensureLoaded()
    Native.generateDefaults(ints, floats)
  } catch (e: Throwable) {
    42L
  }
}

data class GenerateOptions @JvmOverloads constructor(
  val maxTokens: Int = Defaults.ints[0],
  /** 0: greedy; > 0 samples. */
  val temperature: Float = Defaults.floats[0],
  val topK: Int = Defaults.ints[1],
  val topP: Float = Defaults.floats[1],
  val minP: Float = Defaults.floats[2],
  val repeatPenalty: Float = Defaults.floats[3],
  val presencePenalty: Float = Defaults.floats[4],
  val frequencyPenalty: Float = Defaults.floats[5],
  /** The same seed reproduces a sampled run. */
  val seed: Long = Defaults.seed,
  /** Stop strings (not emitted). */
  val stop: List<String> = emptyList(),
  /** Chat only: null is the template's default. */
  val think: Boolean? = null,
  /**
   * Structured output: a GBNF grammar (llama.cpp's format, start rule `root`); the reply is
   * text it allows, ended where it is complete. At most one of [grammar] and [jsonSchema].
   */
  val grammar: String? = null,
  /** Structured output: a JSON Schema (its JSON text); the reply is a JSON document it allows. */
  val jsonSchema: String? = null
) {
  internal fun ints() = intArrayOf(maxTokens, topK, if (think == null) -1 else if (think) 1 else 0)
  internal fun floats() = floatArrayOf(temperature, topP, minP, repeatPenalty, presencePenalty, frequencyPenalty)
  internal fun stops() = stop.map { cString(it, "stop string") }.toTypedArray()
  internal fun grammarBytes() = grammar?.let { cString(it, "grammar") }
  internal fun jsonSchemaBytes() = jsonSchema?.let { cString(it, "jsonSchema") }
}

enum class StopReason(val code: Int) {
  END_OF_GENERATION(1), MAX_TOKENS(2), STOP_STRING(3), CANCELLED(4), CONTEXT_FULL(5), UNKNOWN(-1);

  companion object {
    @JvmStatic
    fun of(code: Int): StopReason = values().firstOrNull { it.code == code } ?: UNKNOWN
  }
}

/** What a generation used and how fast it went (uaii_generate_result). */
data class Usage(
  val stopReason: StopReason,
  val promptTokens: Long,
  val completionTokens: Long,
  /** Prompt tokens reused from the session's KV cache. */
  val cachedTokens: Long,
  val reasoningTokens: Long,
  val peakRssBytes: Long,
  val prefillTokensPerSecond: Double,
  val decodeTokensPerSecond: Double,
  /** Speculative decoding ([SessionOptions.draftModel]): tokens the draft proposed (0 without a draft). */
  val draftTokens: Long = 0,
  /** Of those, the ones the acceptance rule kept (0 <= draftAcceptedTokens <= draftTokens). */
  val draftAcceptedTokens: Long = 0,
  /** draftAcceptedTokens / draftTokens (0 without proposals). */
  val draftAcceptanceRate: Double = 0.0
) {
  internal companion object {
    /** The shim's arrays (NativeSink.onDone): STATS_SIZE longs, three rates. */
    const val STATS_SIZE = 8

    fun of(stats: LongArray, rates: DoubleArray) =
      Usage(StopReason.of(stats[0].toInt()), stats[1], stats[2], stats[3], stats[4], stats[5], rates[0], rates[1],
            stats[6], stats[7], rates[2])
  }
}

/** One streamed piece of a reply. */
sealed class Event {
  /** Visible text. */
  data class Text(val text: String) : Event()
  /** Reasoning text. */
  data class Thinking(val text: String) : Event()
  /** A tool call as JSON: {"name": ..., "arguments": {...}}. */
  data class ToolCall(val json: String) : Event()
  /** A malformed tool call; the reply goes on. */
  data class Error(val message: String) : Event()
  /** The last event of a reply. */
  data class Done(val usage: Usage) : Event()

  internal companion object {
    /** null for a kind this SDK does not know (a newer library). */
    fun of(kind: Int, text: ByteArray): Event? = when (kind) {
      1 -> Text(fromUtf8(text))
      2 -> Thinking(fromUtf8(text))
      3 -> ToolCall(fromUtf8(text))
      4 -> Error(fromUtf8(text))
      else -> null
    }
  }
}

/** A finished reply: its whole visible text and its usage. */
data class Generation(val text: String, val usage: Usage)

/** One OpenAI-style chat message. */
data class ChatMessage(val role: String, val content: String) {
  companion object {
    @JvmStatic fun system(content: String) = ChatMessage("system", content)
    @JvmStatic fun user(content: String) = ChatMessage("user", content)
    @JvmStatic fun assistant(content: String) = ChatMessage("assistant", content)

    /** [{"role": ..., "content": ...}, ...] with JSON string escaping (RFC 8259). */
    @JvmStatic
    fun toJson(messages: List<ChatMessage>): String =
      messages.joinToString(",", "[", "]") { "{\"role\":${quote(it.role)},\"content\":${quote(it.content)}}" }

    private fun quote(s: String): String {
      val out = StringBuilder("\"")
      for (c in s) {
        when {
          c == '"' -> out.append("\\\"")
          c == '\\' -> out.append("\\\\")
          c == '\n' -> out.append("\\n")
          c == '\r' -> out.append("\\r")
          c == '\t' -> out.append("\\t")
          c < ' ' -> out.append(String.format("\\u%04x", c.toInt()))
          else -> out.append(c)
        }
      }
      return out.append('"').toString()
    }
  }
}
