// The device budget through the Kotlin SDK (docs/backends.md, "The device budget"):
// SessionOptions.deviceMemoryBytes bounds the weights a GPU holds, the rest stay in host
// memory with the same logits, and Session.deviceStats reports the placement. On whatever
// Vulkan device the machine has (CI: lavapipe); those cases are skipped (a failed
// assumption) without one. The tiny fixtures are in -Duaii.fixtures.dir (scripts/test.sh).
package dev.uaii

import java.io.File
import org.junit.Assert.assertArrayEquals
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assume.assumeTrue
import org.junit.Test

class DeviceTest {
  private val prompt = intArrayOf(1, 260, 261, 262, 263)

  private fun tiny(name: String): Model {
    val dir = System.getProperty("uaii.fixtures.dir") ?: error("run by scripts/test.sh with -Duaii.fixtures.dir set")
    val file = File(dir, "tiny/$name")
    assertTrue("fixture missing: $file (tests/fixtures/make_tiny_models.py writes it)", file.exists())
    return Model.open(file.path)
  }

  /** A session on "vulkan"; the test is skipped when the engine has no Vulkan device. */
  private fun vulkanSession(model: Model, deviceMemoryBytes: Long = 0): Session =
    try {
      model.newSession(SessionOptions(device = "vulkan", threads = 1, maxContext = 64,
                                      deviceMemoryBytes = deviceMemoryBytes))
    } catch (e: UaiiException) {
      assumeTrue("no Vulkan device (${e.message})", e.status != Status.UNSUPPORTED)
      throw e
    }

  @Test fun aSmallBudgetLeavesWeightsInHostMemoryWithTheSameLogits() {
    tiny("tiny-llama-q4_0.gguf").use { model ->
      val (w, wholeLogits) = vulkanSession(model).use { Pair(it.deviceStats, it.eval(prompt, allLogits = true)) }
      // 400 kB of the model's 1.2 MB: the rest in host memory, through a staging buffer.
      val small = vulkanSession(model, deviceMemoryBytes = 400_000)
      val smallLogits = small.use { it.eval(prompt, allLogits = true) }
      val s = small.deviceStats  // read at creation: still there after close()
      assertTrue(w.device, w.device.startsWith("vulkan"))
      assertEquals(w.device, s.device)
      assertEquals(0L, w.hostBytes)
      assertTrue(w.residentBytes > 0)
      assertEquals(400_000L, s.budgetBytes)
      assertTrue("$s", s.hostBytes > 0 && s.stagingBytes > 0)
      assertTrue("$s", s.residentBytes + s.stagingBytes <= s.budgetBytes)
      assertEquals(w.residentBytes, s.residentBytes + s.hostBytes)
      assertArrayEquals(wholeLogits, smallLogits, 0f) // where the weights live changes no bit
    }
  }

  @Test fun onTheCpuTheStatsAreZero() {
    assertEquals(0L, SessionOptions().deviceMemoryBytes) // 90% of the device's largest heap
    tiny("tiny-llama-f32.gguf").use { model ->
      // A device budget changes nothing on the CPU.
      val stats = model.newSession(SessionOptions(threads = 1, maxContext = 64, deviceMemoryBytes = 4096)).use {
        it.deviceStats
      }
      assertEquals(DeviceStats("cpu", 0, 0, 0, 0, 0), stats)
      val e = assertThrows<UaiiException> { model.newSession(SessionOptions(deviceMemoryBytes = -1)) }
      assertEquals(Status.INVALID_ARGUMENT, e.status)
      assertTrue(e.message!!, e.message!!.contains("deviceMemoryBytes -1 is negative"))
    }
  }
}
