// The Kotlin SDK against the default model (Gemma 3 270M, found by Model.open()): generation,
// callback and iterator streaming, cancellation, errors, the tokenizer, the ABI check.
package dev.uaii

import org.junit.AfterClass
import org.junit.Assert.assertArrayEquals
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNotNull
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Test

class UaiiTest {
  companion object {
    lateinit var model: Model

    @BeforeClass @JvmStatic
    fun open() {
      model = Model.open()
    }

    @AfterClass @JvmStatic
    fun close() = model.close()
  }

  @Test fun versionMatchesTheHeader() {
    assertEquals("0.5.0", Version.libraryString)
    assertNull(Version.mismatch(Version.library, Version.shimHeader))
  }

  @Test fun versionMismatchIsAClearError() {
    val msg = Version.mismatch(10402, 300, 0, 3)
    assertNotNull(msg)
    assertTrue(msg!!, msg.contains("1.4.2") && msg.contains("0.3"))
    assertNotNull(Version.mismatch(400, 400, 0, 3))
    assertNotNull(Version.mismatch(300, 400, 0, 3)) // a shim built against another header
    assertNull(Version.mismatch(307, 301, 0, 3))
  }

  @Test fun optionDefaultsComeFromTheLibrary() {
    val o = GenerateOptions()
    assertEquals(256, o.maxTokens)
    assertEquals(42L, o.seed)
    assertEquals(0.95f, o.topP, 0f)
    assertNull(o.think)
  }

  @Test fun openMissingFileNamesIt() {
    val e = assertThrows<UaiiException> { Model.open("/nonexistent/kotlin-model.gguf") }
    assertEquals(Status.NOT_FOUND, e.status)
    assertEquals(200, e.code)
    assertTrue(e.message!!, e.message!!.contains("/nonexistent/kotlin-model.gguf"))
  }

  @Test fun tokenizerRoundTripKeepsUtf8() {
    model.tokenizer().use { tok ->
      assertTrue(tok.vocabSize > 1000)
      val text = "Hello, world! Ünïcødé 🦙 and tabs\tnewlines\n"
      val ids = tok.encode(text)
      assertTrue(ids.isNotEmpty())
      assertEquals(text, tok.decode(ids))
      val withBos = tok.encode(text, addSpecial = true)
      assertEquals(ids.size + 1, withBos.size)
      assertArrayEquals(ids, withBos.copyOfRange(1, withBos.size))
      assertEquals(text, tok.decode(withBos, skipSpecial = true))
      assertEquals(0, tok.encode("").size)
    }
  }

  @Test fun decodeGrowsItsBufferByTheBufferRule() {
    model.tokenizer().use { tok ->
      val text = "a" + " ".repeat(600) + "b" // few ids, many bytes each
      val ids = tok.encode(text)
      assertTrue(ids.size * 8 + 16 < text.length)
      assertEquals(text, tok.decode(ids))
    }
  }

  @Test fun decodeRejectsAnIdOutsideTheVocabulary() {
    model.tokenizer().use { tok ->
      val e = assertThrows<UaiiException> { tok.decode(intArrayOf(1, tok.vocabSize)) }
      assertEquals(Status.INVALID_ARGUMENT, e.status)
      assertTrue(e.message!!, e.message!!.contains("outside the vocabulary"))
    }
  }

  @Test fun standaloneTokenizerMatchesTheModels() {
    Tokenizer.open(null).use { alone ->
      model.tokenizer().use { tok -> assertArrayEquals(tok.encode("The capital of France"), alone.encode("The capital of France")) }
    }
  }

  @Test fun generateIsGreedyAndEventsMakeTheText() {
    val pieces = StringBuilder()
    var done: Usage? = null
    model.newSession().use { session ->
      val g = session.generate("The capital of France is", GenerateOptions(maxTokens = 8)) { ev ->
        when (ev) {
          is Event.Text -> pieces.append(ev.text)
          is Event.Done -> done = ev.usage
          else -> fail("unexpected $ev")
        }
        true
      }
      assertTrue(g.text.isNotEmpty())
      assertEquals(g.text, pieces.toString())
      assertEquals(g.usage, done)
      assertTrue(g.usage.promptTokens > 0 && g.usage.completionTokens <= 8)
      if (g.usage.completionTokens < 8) assertEquals(StopReason.END_OF_GENERATION, g.usage.stopReason)
      model.newSession().use { assertEquals(g.text, it.generate("The capital of France is", GenerateOptions(maxTokens = 8)).text) }
      val reused = session.generate("The capital of France is", GenerateOptions(maxTokens = 8))
      assertEquals(g.text, reused.text)
      assertTrue(reused.usage.cachedTokens > 0)
    }
  }

  @Test fun iteratorMatchesGenerate() {
    val expected = model.newSession().use { it.generate("Once upon a time", GenerateOptions(maxTokens = 12)) }
    model.newSession().use { session ->
      val text = StringBuilder()
      var last: Event? = null
      session.stream("Once upon a time", GenerateOptions(maxTokens = 12)).use { events ->
        for (ev in events) {
          if (ev is Event.Text) text.append(ev.text)
          last = ev
        }
      }
      assertEquals(expected.text, text.toString())
      assertEquals(expected.usage.completionTokens, (last as Event.Done).usage.completionTokens)
    }
  }

  @Test fun listenerReturningFalseStops() {
    model.newSession().use { session ->
      var n = 0
      val g = session.generate("One, two, three, four,", GenerateOptions(maxTokens = 64)) { ev ->
        if (ev is Event.Text) n++
        n < 2
      }
      assertEquals(StopReason.CANCELLED, g.usage.stopReason)
      assertTrue(g.usage.completionTokens < 64)
    }
  }

  @Test fun listenerExceptionStopsAndPropagates() {
    model.newSession().use { session ->
      val e = assertThrows<IllegalStateException> {
        session.generate("One, two, three,", GenerateOptions(maxTokens = 64)) { throw IllegalStateException("from the listener") }
      }
      assertEquals("from the listener", e.message)
      assertTrue(session.generate("Hello", GenerateOptions(maxTokens = 2)).text.isNotEmpty())
    }
  }

  @Test fun closingAStreamEarlyCancelsTheEngine() {
    model.newSession().use { session ->
      val events = session.stream("One, two, three, four,", GenerateOptions(maxTokens = 200))
      var n = 0
      for (ev in events) {
        if (ev is Event.Text && ++n == 2) break
      }
      events.close()
      assertEquals(StopReason.CANCELLED, events.usage!!.stopReason)
      assertTrue(events.usage!!.completionTokens < 200)
      assertFalse(events.hasNext())
      // The session is free again at once.
      assertTrue(session.generate("Hello", GenerateOptions(maxTokens = 2)).text.isNotEmpty())
    }
  }

  @Test fun aSecondCallWhileStreamingIsRefused() {
    model.newSession().use { session ->
      session.stream("One, two, three,", GenerateOptions(maxTokens = 4)).use { events ->
        val e = assertThrows<UaiiException> { session.generate("Hello") }
        assertEquals(Status.INVALID_STATE, e.status)
        var n = 0
        for (ev in events) n++
        assertTrue(n > 0)
      }
    }
  }

  // The default model's GGUF carries no chat template: the built-in Gemma one stands in
  // ("<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n" is 10 tokens).
  @Test fun chatOnAModelWithoutTemplateUsesTheBuiltInOne() {
    model.newSession().use { session ->
      val g = session.chat(listOf(ChatMessage.user("Hi")), options = GenerateOptions(maxTokens = 2))
      assertEquals(10L, g.usage.promptTokens)
      session.reset()
      var done = false
      session.chatStream(listOf(ChatMessage.user("Hi")), options = GenerateOptions(maxTokens = 2)).use { events ->
        while (events.hasNext()) {
          val e = events.next()
          if (e is Event.Done) {
            assertEquals(10L, e.usage.promptTokens)
            done = true
          }
        }
      }
      assertTrue(done)
    }
  }

  @Test fun badOptionsAreRejectedWithNamedErrors() {
    model.newSession().use { session ->
      val e = assertThrows<UaiiException> { session.generate("x", GenerateOptions(maxTokens = -1)) }
      assertEquals(Status.INVALID_ARGUMENT, e.status)
      assertTrue(e.message!!, e.message!!.contains("max_tokens"))
      assertThrows<IllegalArgumentException> { session.generate("nul\u0000inside") }
    }
    val e = assertThrows<UaiiException> { model.newSession(SessionOptions(device = "tpu")) }
    assertEquals(Status.UNSUPPORTED, e.status)
    assertTrue(e.message!!, e.message!!.contains("tpu"))
  }

  @Test fun stopStrings() {
    val free = model.newSession().use { it.generate("One, two, three, four,", GenerateOptions(maxTokens = 16)) }
    val words = free.text.split(" ").filter { it.isNotEmpty() }
    if (words.size < 2) return // too short a continuation to pick a stop string
    val stopped = model.newSession().use {
      it.generate("One, two, three, four,", GenerateOptions(maxTokens = 16, stop = listOf(words[1])))
    }
    assertEquals(StopReason.STOP_STRING, stopped.usage.stopReason)
    assertFalse(stopped.text.contains(words[1]))
  }

  @Test fun closedHandlesRefuseUse() {
    val session = model.newSession()
    session.close()
    session.close() // idempotent
    val e = assertThrows<IllegalStateException> { session.generate("x") }
    assertTrue(e.message!!, e.message!!.contains("Session is closed"))
    val tok = model.tokenizer()
    tok.close()
    assertThrows<IllegalStateException> { tok.encode("x") }
  }

  @Test fun twoThreadsShareOneModel() {
    val expected = model.newSession().use { it.generate("Paris is", GenerateOptions(maxTokens = 6)).text }
    val results = arrayOfNulls<String>(2)
    val threads = (0..1).map { i ->
      Thread { results[i] = model.newSession().use { it.generate("Paris is", GenerateOptions(maxTokens = 6)).text } }
    }
    threads.forEach { it.start() }
    threads.forEach { it.join() }
    assertEquals(listOf(expected, expected), results.toList())
  }

  @Test fun resetAndInspect() {
    model.newSession().use { session ->
      session.generate("Hello", GenerateOptions(maxTokens = 2))
      session.reset()
      assertEquals(0L, session.generate("Hello", GenerateOptions(maxTokens = 2)).usage.cachedTokens)
    }
    assertTrue(model.inspectJson().contains("gemma3"))
  }

  @Test fun messagesJsonEscapes() {
    assertEquals("[{\"role\":\"user\",\"content\":\"a \\\"q\\\"\\n\\u0001é\"}]",
      ChatMessage.toJson(listOf(ChatMessage.user("a \"q\"\n\u0001é"))))
  }

  @Test fun stepLoopEqualsGenerateGreedyAndSampled() {
    val prompt = "The capital of France is"
    model.tokenizer().use { tok ->
      for (options in listOf(GenerateOptions(maxTokens = 10), GenerateOptions(maxTokens = 10, temperature = 0.8f, seed = 11))) {
        val want = model.newSession().use { it.generate(prompt, options) }
        model.newSession().use { s ->
          Sampler(options).use { sampler ->
            val e = assertThrows<UaiiException> { s.step(sampler) }
            assertEquals(Status.INVALID_STATE, e.status)
            val ids = tok.encode(prompt, addSpecial = true)
            assertEquals(model.nVocab, s.eval(ids).size.toLong())
            assertEquals(ids.size.toLong(), s.nPast)
            val out = ArrayList<Int>()
            while (out.size < options.maxTokens) {
              val step = s.step(sampler)
              if (step.stop == Session.StepStop.END_OF_GENERATION) break
              out.add(step.token)
              if (step.stop != null) break
            }
            assertEquals(want.text, tok.decode(out.toIntArray()))
            assertEquals(want.usage.completionTokens, out.size.toLong())
          }
        }
      }
    }
  }

  @Test fun evalRowsTruncateSamplersAndMemoryOptions() {
    model.tokenizer().use { tok ->
      val ids = tok.encode("Once upon a time", addSpecial = true)
      model.newSession(SessionOptions(maxContext = 64, prefillChunk = 2)).use { s ->
        assertEquals(64L, s.maxContext)
        val rows = s.eval(ids, allLogits = true)
        val vocab = rows.size / ids.size
        s.truncate(1)
        assertEquals(1L, s.nPast)
        val last = s.eval(ids.copyOfRange(1, ids.size))
        assertArrayEquals(rows.copyOfRange((ids.size - 1) * vocab, rows.size), last, 0f)  // rows are exact
        assertThrows<UaiiException> { s.truncate(s.nPast + 1) }
        assertEquals(Status.INVALID_ARGUMENT, assertThrows<UaiiException> { s.eval(intArrayOf(vocab)) }.status)
      }
    }
    Sampler().use { assertEquals(1, it.sample(floatArrayOf(0.5f, 3f, -1f, 3f))) }
    Sampler(GenerateOptions(repeatPenalty = 2f)).use {
      it.accept(1)
      assertEquals(3, it.sample(floatArrayOf(0.5f, 3f, -1f, 2f)))
      it.reset()
      assertEquals(1, it.sample(floatArrayOf(0.5f, 3f, -1f, 2f)))
    }
    assertThrows<UaiiException> { Sampler(GenerateOptions(topP = 1.5f)) }
    // A budget far below the model's minimum is refused by name: the memory options get through.
    assertEquals(Status.OUT_OF_MEMORY,
      assertThrows<UaiiException> { model.newSession(SessionOptions(ramBudgetBytes = 1024)) }.status)
    model.newSession(SessionOptions(preset = SessionOptions.Preset.PHONE, kvWindow = 0, moePrefetch = true)).use {
      assertFalse(it.generate("Hi", GenerateOptions(maxTokens = 2)).text.isEmpty())
    }
  }
}
