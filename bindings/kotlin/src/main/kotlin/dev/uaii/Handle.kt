// A native handle owned by one Kotlin object: released once by close(); use after close is
// an IllegalStateException naming the object.
package dev.uaii

import java.util.concurrent.atomic.AtomicLong

internal class Handle(value: Long, private val what: String, private val destroy: (Long) -> Unit) {
  private val value = AtomicLong(value)

  fun get(): Long {
    val h = value.get()
    check(h != 0L) { "$what is closed" }
    return h
  }

  val isClosed: Boolean get() = value.get() == 0L

  fun close() {
    val h = value.getAndSet(0L)
    if (h != 0L) destroy(h)
  }
}
