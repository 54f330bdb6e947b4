// Speculative decoding through the Kotlin SDK (docs/speculative.md): a session whose
// SessionOptions name a draft model gives, under the exact-match rule (and greedily under
// any), the replies a session without one gives, and its Usage counts the proposals; the
// knobs (draftMax, draftMin, draftPMin, draftRule, draftAuto) reach the library, whose
// messages refuse bad values and a draft of another vocabulary. The default model (Gemma 3 270M) is its own draft;
// the other vocabulary is the tiny llama fixture (tests/fixtures/make_tiny_models.py, in the
// directory -Duaii.fixtures.dir that bindings/kotlin/scripts/test.sh sets).
package dev.uaii

import java.io.File
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.BeforeClass
import org.junit.Test

class SpeculativeTest {
  companion object {
    lateinit var model: Model

    @BeforeClass @JvmStatic
    fun open() {
      model = Model.open()
    }

    @AfterClass @JvmStatic
    fun close() = model.close()

    const val PROMPT = "The capital of France is"
  }

  /** The same request without and with [draft]: the replies must be token for token the same. */
  private fun compare(options: GenerateOptions, draft: Model, nDraft: Int): Pair<Generation, Generation> {
    val plain = model.newSession().use { it.generate(PROMPT, options) }
    // draftPMin 0: every proposal the draft makes, however unsure (the default 0.75 cuts some).
    val spec = model.newSession(SessionOptions(draftModel = draft, nDraft = nDraft, draftPMin = 0f,
                                               draftRule = SessionOptions.DraftRule.EXACT))
      .use { it.generate(PROMPT, options) }
    assertTrue(plain.text.isNotEmpty())
    assertEquals(plain.text, spec.text)
    assertEquals(plain.usage.completionTokens, spec.usage.completionTokens)
    assertEquals(plain.usage.stopReason, spec.usage.stopReason)
    assertEquals(0L, plain.usage.draftTokens)
    assertEquals(0L, plain.usage.draftAcceptedTokens)
    assertTrue("the draft proposed nothing: ${spec.usage}", spec.usage.draftTokens > 0)
    assertTrue("${spec.usage}", spec.usage.draftAcceptedTokens in 0..spec.usage.draftTokens)
    assertEquals(spec.usage.draftAcceptedTokens.toDouble() / spec.usage.draftTokens, spec.usage.draftAcceptanceRate, 1e-12)
    return Pair(plain, spec)
  }

  @Test fun greedyReplyWithTheModelAsItsOwnDraftIsTheSame() {
    val (_, spec) = compare(GenerateOptions(maxTokens = 24), model, 4)
    // Its own draft proposes what the model picks greedily: every proposal is kept.
    assertEquals(spec.usage.draftTokens, spec.usage.draftAcceptedTokens)
    assertEquals(1.0, spec.usage.draftAcceptanceRate, 0.0)
  }

  @Test fun sampledReplyWithADraftIsTheSame() {
    compare(GenerateOptions(maxTokens = 24, temperature = 0.8f, seed = 11), model, 3)
  }

  @Test fun streamedDoneEventCarriesTheDraftCounts() {
    model.newSession(SessionOptions(draftModel = model, draftMax = 5, draftPMin = 0f)).use { session ->
      var done: Usage? = null
      val g = session.generate(PROMPT, GenerateOptions(maxTokens = 12)) { ev ->
        if (ev is Event.Done) done = ev.usage
        true
      }
      assertEquals(g.usage, done)
      assertTrue("${g.usage}", g.usage.draftTokens > 0)
      var last: Event? = null
      session.reset()
      session.stream(PROMPT, GenerateOptions(maxTokens = 12)).use { events -> for (ev in events) last = ev }
      val streamed = (last as Event.Done).usage
      assertEquals(g.usage.draftTokens, streamed.draftTokens)
      assertEquals(g.usage.draftAcceptedTokens, streamed.draftAcceptedTokens)
      assertEquals(g.usage.draftAcceptanceRate, streamed.draftAcceptanceRate, 0.0)
    }
  }

  @Test fun theSessionKeepsAClosedDraftModelsData() {
    val options = GenerateOptions(maxTokens = 16)
    val want = model.newSession().use { it.generate(PROMPT, options) }
    val draft = Model.open() // a second handle on the default model, closed before the session runs
    val session = try {
      model.newSession(SessionOptions(draftModel = draft, draftPMin = 0f))
    } finally {
      draft.close()
    }
    session.use {
      val got = it.generate(PROMPT, options)
      assertEquals(want.text, got.text)
      assertTrue("${got.usage}", got.usage.draftTokens > 0)
    }
    // A closed draft handle cannot start a new session.
    val e = assertThrows<IllegalStateException> { model.newSession(SessionOptions(draftModel = draft)) }
    assertTrue(e.message!!, e.message!!.contains("Model is closed"))
  }

  @Test fun sampledRepliesWithTheRejectionRuleAreReproducible() {
    val options = GenerateOptions(maxTokens = 24, temperature = 1.0f, seed = 5)
    model.newSession(SessionOptions(draftModel = model, draftPMin = 0f)).use { spec ->
      val a = spec.generate(PROMPT, options)
      spec.reset()
      val b = spec.generate(PROMPT, options)
      assertEquals(a.text, b.text)
      // The model drafting for itself with q = p: every proposal is kept.
      assertTrue("${b.usage}", b.usage.draftTokens > 0)
      assertEquals(b.usage.draftTokens, b.usage.draftAcceptedTokens)
    }
  }

  @Test fun badKnobsAreRefusedWithTheLibrarysMessage() {
    val cases = listOf(
      SessionOptions(draftModel = model, draftMax = 17) to "draft_max 17 is outside 1..16",
      SessionOptions(draftModel = model, nDraft = 0) to "draft_max 0 is outside 1..16",
      SessionOptions(draftModel = model, draftMax = -1) to "draft_max -1 is negative",
      SessionOptions(draftModel = model, draftMax = 4, draftMin = 5) to "draft_min 5 is outside 0..draft_max (4)",
      SessionOptions(draftModel = model, draftPMin = 2f) to "p_min 2 is outside [0, 1]",
      SessionOptions(draftAuto = true) to "architecture 'gemma3' has no in-trunk multi-token-prediction head"
    )
    for ((options, message) in cases) {
      val e = assertThrows<UaiiException> { model.newSession(options) }
      assertEquals(Status.INVALID_ARGUMENT, e.status)
      assertTrue(e.message!!, e.message!!.contains(message))
    }
    // 1 and 16 are the bounds the library takes.
    for (n in listOf(1, 16)) model.newSession(SessionOptions(draftModel = model, draftMax = n)).close()
  }

  @Test fun aDraftOfAnotherVocabularyIsRefused() {
    val dir = System.getProperty("uaii.fixtures.dir") ?: error("run by scripts/test.sh with -Duaii.fixtures.dir set")
    val tiny = File(dir, "tiny/tiny-llama-f32.gguf")
    assertTrue("fixture missing: $tiny (tests/fixtures/make_tiny_models.py writes it; scripts/test.sh runs that)", tiny.exists())
    Model.open(tiny.path).use { other ->
      val e = assertThrows<UaiiException> { model.newSession(SessionOptions(draftModel = other)) }
      assertEquals(Status.INVALID_ARGUMENT, e.status)
      assertTrue(e.message!!, e.message!!.contains("same vocabulary"))
    }
  }

  // The gemma4 assistant is no Model of its own (it reads its target's cache and hidden
  // state): draftPath names its file (C ABI 0.5). Greedy replies equal the plain session's.
  @Test fun theGemma4AssistantDraftsByPath() {
    val dir = System.getProperty("uaii.fixtures.dir") ?: error("run by scripts/test.sh with -Duaii.fixtures.dir set")
    for (kind in listOf("f32", "q8_0", "q4_0")) {
      val target = File(dir, "gemma4/$kind.gguf")
      val assistant = File(dir, "gemma4-assistant/$kind.gguf")
      assertTrue("fixture missing: $assistant (tests/fixtures/make_gemma4_assistant_models.py)", assistant.exists())
      Model.open(target.path).use { gemma4 ->
        val options = GenerateOptions(maxTokens = 24, temperature = 0f)
        gemma4.newSession(SessionOptions(threads = 1)).use { plain ->
          gemma4.newSession(SessionOptions(threads = 1, draftPath = assistant.path, draftPMin = 0f)).use { spec ->
            var drafted = 0L
            for (prompt in listOf("tok5 tok6 tok7", "tok9 tok10")) {
              val a = plain.generate(prompt, options)
              val b = spec.generate(prompt, options)
              assertEquals(kind, a.text, b.text)
              drafted += b.usage.draftTokens
            }
            assertTrue("$kind: the assistant proposed nothing", drafted > 0)
          }
        }
        val e = assertThrows<UaiiException> {
          gemma4.newSession(SessionOptions(draftModel = gemma4, draftPath = assistant.path))
        }
        assertEquals(Status.INVALID_ARGUMENT, e.status)
        assertTrue(e.message!!, e.message!!.contains("at most one of draft_model, draft_path and draft_auto"))
      }
    }
  }
}
