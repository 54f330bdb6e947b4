// SessionOptions.learnCalibration against the default model. The JVM cannot change its own
// environment, so scripts/test.sh runs this class on its own with UAII_HOME set to an empty
// temporary directory (and UAII_MODEL to the default model, which that home lacks).
package dev.uaii

import java.io.File
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Test

class CalibrationTest {
  @Test fun learnCalibrationFoldsTheRunIntoUaiiHome() {
    val home = File(System.getenv("UAII_HOME") ?: error("run by scripts/test.sh with UAII_HOME set"))
    val cache = File(home, "calibration.json")
    assertFalse("UAII_HOME must start without a calibration", cache.exists())
    Model.open().use { model ->
      for (learn in listOf(false, true)) {
        val session = model.newSession(SessionOptions(learnCalibration = learn))
        try {
          session.generate("The capital of France is", GenerateOptions(maxTokens = 4))
        } finally {
          session.close()
        }
        if (!learn) {
          assertFalse("a session that does not learn wrote $cache", cache.exists())
          continue
        }
        val text = cache.readText()
        // The run's figures are folded in under "observed" (docs/storage.md); no JSON
        // library on the test classpath, so the key and a non-empty object are checked.
        assertTrue("no observed figures in $text", Regex("\"observed\"\\s*:\\s*\\{\\s*\"").containsMatchIn(text))
      }
    }
  }
}
