// Structured output in the Kotlin SDK on the default model: GenerateOptions.grammar (GBNF)
// and .jsonSchema on generate / chat / stream (JSON replies parsed strictly by Gson), a
// Sampler constrained to a vocabulary driven with Session.step, jsonSchemaToGrammar, and
// the errors of each. Sampled runs (temperature > 0, several seeds) must still give text
// the grammar allows.
package dev.uaii

import com.google.gson.Gson
import com.google.gson.JsonElement
import com.google.gson.stream.JsonReader
import com.google.gson.stream.JsonToken
import java.io.StringReader
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Test

class StructuredOutputTest {
  companion object {
    /** The default model, opened on first use and closed after the class. */
    private val opened = lazy { Model.open() }
    val model: Model get() = opened.value

    @AfterClass @JvmStatic
    fun close() {
      if (opened.isInitialized()) opened.value.close()
    }

    /** "yes", "no" or "maybe", a reason of lowercase words, a full stop. */
    const val ANSWER_GRAMMAR = "root ::= (\"yes\" | \"no\" | \"maybe\") \", because \" [a-z ]{3,40} \".\"\n"
    val ANSWER = Regex("(yes|no|maybe), because [a-z ]{3,40}\\.")
    /** A JSON-like list of one to four numbers of up to three digits. */
    const val LIST_GRAMMAR = "root ::= \"[\" [0-9]{1,3} (\",\" [0-9]{1,3}){0,3} \"]\"\n"
    val LIST = Regex("\\[[0-9]{1,3}(,[0-9]{1,3}){0,3}]")
    /** An object with a yes/no `answer` and an integer `confidence` in 0..100, both required. */
    const val ANSWER_SCHEMA = "{\"type\": \"object\", \"properties\": {\"answer\": {\"enum\": [\"yes\", \"no\"]}, " +
      "\"confidence\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 100}}, " +
      "\"required\": [\"answer\", \"confidence\"], \"additionalProperties\": false}"
  }


  /** The UaiiException [body] throws, checked to be INVALID_ARGUMENT with [cause] in its message. */
  private fun assertInvalid(cause: String, body: () -> Unit) {
    try {
      body()
    } catch (e: UaiiException) {
      assertEquals(e.toString(), Status.INVALID_ARGUMENT, e.status)
      assertTrue(e.message!!, e.message!!.contains(cause))
      return
    }
    throw AssertionError("expected a UaiiException naming \"$cause\", nothing was thrown")
  }

  /**
   * Evaluates [prompt] in a new session and steps [sampler] until end-of-generation (at most
   * [max] tokens; every token before it is evaluated). Returns the generated ids.
   */
  private fun stepToTheEnd(prompt: String, sampler: Sampler, tok: Tokenizer, max: Int): IntArray =
    model.newSession().use { s ->
      s.eval(tok.encode(prompt, addSpecial = true))
      val out = ArrayList<Int>()
      while (out.size < max) {
        val step = s.step(sampler)
        if (step.stop == Session.StepStop.END_OF_GENERATION) break
        out.add(step.token)
        assertNull(step.stop)
      }
      out.toIntArray()
    }

  @Test fun grammarConstrainsSampledGenerateOnEverySeed() {
    model.newSession().use { s ->
      for (seed in 1L..5L) {
        val g = s.generate("Is the sky blue? Answer:",
                           GenerateOptions(maxTokens = 64, temperature = 1f, seed = seed, grammar = ANSWER_GRAMMAR))
        assertTrue("seed $seed: ${g.text}", ANSWER.matches(g.text))
        // Once the sentence is whole the grammar allows only end-of-generation.
        assertEquals("seed $seed", StopReason.END_OF_GENERATION, g.usage.stopReason)
      }
    }
  }

  @Test fun grammarOnChatAndStream() {
    val options = GenerateOptions(maxTokens = 64, temperature = 0.8f, seed = 3, grammar = LIST_GRAMMAR)
    model.newSession().use { s ->
      val g = s.chat(listOf(ChatMessage.user("Give me a few small numbers.")), options = options)
      assertTrue(g.text, LIST.matches(g.text))
    }
    model.newSession().use { s ->
      val text = StringBuilder()
      s.stream("Numbers:", options).use { events -> for (ev in events) if (ev is Event.Text) text.append(ev.text) }
      assertTrue(text.toString(), LIST.matches(text))
    }
  }

  @Test fun constrainedSamplerDrivesStep() {
    val options = GenerateOptions(maxTokens = 64, temperature = 0.7f, seed = 11, grammar = LIST_GRAMMAR)
    val prompt = "Numbers:"
    model.tokenizer().use { tok ->
      // The vocabulary as the Model and as its Tokenizer: the same constraint, the same tokens.
      val runs = listOf(Sampler(options, model), Sampler(options, tok)).map { sampler ->
        sampler.use {
          assertFalse(sampler.grammarComplete)
          val out = stepToTheEnd(prompt, sampler, tok, options.maxTokens)
          assertTrue(sampler.grammarComplete)
          val text = tok.decode(out)
          assertTrue(text, LIST.matches(text))
          sampler.reset()
          assertFalse(sampler.grammarComplete)
          out.toList()
        }
      }
      assertEquals(runs[0], runs[1])
      // The same chain and grammar generate uses: a step loop picks what generate picks.
      assertEquals(model.newSession().use { it.generate(prompt, options).text }, tok.decode(runs[0].toIntArray()))
    }
  }

  @Test fun samplerFollowsTheGrammarOnAccept() {
    model.tokenizer().use { tok ->
      val z = tok.encode("z").last()
      Sampler(GenerateOptions(grammar = "root ::= \"a\""), tok).use { sampler ->
        assertInvalid("not allowed") { sampler.accept(z) }
        // A logits row favouring "z" still yields the grammar's "a".
        val logits = FloatArray(tok.vocabSize).also { it[z] = 100f }
        val a = sampler.sample(logits)
        assertEquals("a", tok.decode(intArrayOf(a)))
        sampler.accept(a)
        assertTrue(sampler.grammarComplete)
      }
      // Without a grammar a sampler over a vocabulary samples as a plain one.
      Sampler(vocabulary = tok).use { assertEquals(1, it.sample(floatArrayOf(0.5f, 3f, -1f, 2f))) }
    }
  }

  @Test fun grammarErrorsCarryTheEnginesMessage() {
    val bad = GenerateOptions(grammar = "root ::= nope\n")
    val both = GenerateOptions(grammar = "root ::= \"a\"", jsonSchema = "{\"type\": \"string\"}")
    model.newSession().use { s ->
      assertInvalid("undefined rule 'nope'") { s.generate("x", bad) }
      assertInvalid("undefined rule 'nope'") { s.chat(listOf(ChatMessage.user("x")), options = bad) }
      assertInvalid("undefined rule 'nope'") { Sampler(bad, model).close() }
      assertInvalid("exclude each other") { s.generate("x", both) }
      assertInvalid("exclude each other") { Sampler(both, model).close() }
      assertInvalid("needs the vocabulary") { Sampler(GenerateOptions(grammar = "root ::= \"a\"")).close() }
      assertInvalid("needs the vocabulary") { Sampler(GenerateOptions(jsonSchema = "{}")).close() }
      // Nothing ran: the session is still empty.
      assertEquals(0L, s.nPast)
    }
  }

  @Test fun jsonSchemaRepliesParseAndFitOnEverySeed() {
    model.newSession().use { s ->
      for (seed in 1L..4L) {
        val options = GenerateOptions(maxTokens = 96, temperature = 1f, seed = seed, jsonSchema = ANSWER_SCHEMA)
        val g = s.generate("Is the sky blue? Reply in JSON:", options)
        assertEquals("seed $seed", StopReason.END_OF_GENERATION, g.usage.stopReason)
        assertFitsAnswerSchema(g.text)
      }
      val chat = s.chat(listOf(ChatMessage.user("Is water wet? Reply in JSON.")),
                        options = GenerateOptions(maxTokens = 96, temperature = 0.8f, seed = 7, jsonSchema = ANSWER_SCHEMA))
      assertFitsAnswerSchema(chat.text)
    }
  }

  @Test fun jsonSchemaSamplerAndConverter() {
    val options = GenerateOptions(maxTokens = 96, temperature = 0.7f, seed = 5, jsonSchema = ANSWER_SCHEMA)
    model.tokenizer().use { tok ->
      Sampler(options, model).use { sampler ->
        val out = stepToTheEnd("JSON:", sampler, tok, options.maxTokens)
        assertTrue(sampler.grammarComplete)
        assertFitsAnswerSchema(tok.decode(out))
      }
    }
    // The converter's GBNF, passed as a grammar, constrains exactly as the schema does.
    val gbnf = jsonSchemaToGrammar(ANSWER_SCHEMA)
    assertTrue(gbnf, gbnf.contains("root ::="))
    val viaSchema = model.newSession().use { it.generate("JSON:", options).text }
    val viaGrammar = model.newSession().use { it.generate("JSON:", options.copy(jsonSchema = null, grammar = gbnf)).text }
    assertEquals(viaSchema, viaGrammar)
    assertInvalid("invalid JSON") { jsonSchemaToGrammar("[1, 2") }
    model.newSession().use { s -> assertInvalid("unrecognized type color") { s.generate("x", GenerateOptions(jsonSchema = "{\"type\": \"color\"}")) } }
  }

  /** [text] parses as one JSON document (Gson, strict) and fits [ANSWER_SCHEMA]. */
  private fun assertFitsAnswerSchema(text: String) {
    val reader = JsonReader(StringReader(text)).apply { isLenient = false }
    val doc = Gson().getAdapter(JsonElement::class.java).read(reader)
    assertEquals(text, JsonToken.END_DOCUMENT, reader.peek())
    assertTrue(text, doc.isJsonObject)
    val o = doc.asJsonObject
    assertEquals(text, setOf("answer", "confidence"), o.keySet())
    assertTrue(text, o["answer"].asJsonPrimitive.isString && o["answer"].asString in setOf("yes", "no"))
    val confidence = o["confidence"].asJsonPrimitive
    assertTrue(text, confidence.isNumber && confidence.asBigDecimal.stripTrailingZeros().scale() <= 0)
    assertTrue(text, confidence.asInt in 0..100)
  }
}
