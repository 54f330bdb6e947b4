package dev.uaii

// What the suites share: an exception check (JUnit 4.12 has no assertThrows) and a
// session closed after its block.

internal inline fun <reified E : Throwable> assertThrows(body: () -> Unit): E {
  try {
    body()
  } catch (e: Throwable) {
    if (e is E) return e
    throw AssertionError("expected ${E::class.java.simpleName}, got $e", e)
  }
  throw AssertionError("expected ${E::class.java.simpleName}, nothing was thrown")
}

internal fun <T> Session.use(body: (Session) -> T): T = try { body(this) } finally { close() }
