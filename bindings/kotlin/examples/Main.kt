// uaii-kotlin-example [PROMPT [MODEL]]: streams a continuation of PROMPT from MODEL (default:
// $UAII_MODEL, then the default model in the cache) and prints the usage.
import dev.uaii.Event
import dev.uaii.GenerateOptions
import dev.uaii.Model

fun main(args: Array<String>) {
  val prompt = args.getOrElse(0) { "The capital of France is" }
  val model = Model.open(args.getOrNull(1))
  try {
    val session = model.newSession()
    try {
      session.generate(prompt, GenerateOptions(maxTokens = 32)) { ev ->
        when (ev) {
          is Event.Text -> print(ev.text)
          is Event.Done -> println("\n[${ev.usage.promptTokens} prompt tokens, ${ev.usage.completionTokens} generated, " +
            "${ev.usage.decodeTokensPerSecond.toInt()} tok/s, stop: ${ev.usage.stopReason}]")
          else -> {}
        }
        true
      }
    } finally {
      session.close()
    }
  } finally {
    model.close()
  }
}
