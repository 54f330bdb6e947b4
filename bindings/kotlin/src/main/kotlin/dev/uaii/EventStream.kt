// EventStream: a generation's events as a blocking iterator. A worker thread runs the C call
// and queues each event; close() raises a flag that makes the C callback return non-zero (the
// engine stops after the current token) and joins the worker.
package dev.uaii

import java.util.concurrent.LinkedBlockingQueue

class EventStream internal constructor(private val session: Session, body: (NativeSink) -> Generation) :
  Iterator<Event>, AutoCloseable {

  private object End
  private class Failure(val error: Throwable)

  private val queue = LinkedBlockingQueue<Any>()
  @Volatile private var cancelled = false
  private var peeked: Any? = null
  private var over = false

  /** The usage, once [Event.Done] has been produced (also after close() cancelled the reply). */
  @Volatile var usage: Usage? = null
    private set

  private val sink = object : NativeSink {
    override fun onEvent(kind: Int, text: ByteArray): Boolean {
      if (cancelled) return false
      Event.of(kind, text)?.let { queue.put(it) }
      return !cancelled
    }

    override fun onDone(stats: LongArray, rates: DoubleArray): Boolean {
      val u = Usage.of(stats, rates)
      usage = u
      queue.put(Event.Done(u))
      return true
    }
  }

  // An 8 MiB stack: template rendering recurses, and JVM threads default to 1 MiB.
  internal val worker = Thread(null, {
    try {
      body(sink)
      queue.put(End)
    } catch (t: Throwable) {
      queue.put(Failure(t))
    } finally {
      session.release()
    }
  }, "uaii-stream", 8L shl 20).apply { isDaemon = true }

  internal fun start() = worker.start()

  /** Blocks until the next event or the end; rethrows the engine's error (a UaiiException). */
  override fun hasNext(): Boolean {
    if (over) return false
    if (peeked == null) peeked = queue.take()
    val item = peeked
    if (item === End) {
      over = true
      peeked = null
      worker.join()
      return false
    }
    if (item is Failure) {
      over = true
      peeked = null
      worker.join()
      throw item.error
    }
    return true
  }

  override fun next(): Event {
    if (!hasNext()) throw NoSuchElementException("the reply has ended")
    val e = peeked as Event
    peeked = null
    return e
  }

  /** Stops the engine (when still running) and waits for the worker; idempotent. */
  override fun close() {
    cancelled = true
    over = true
    if (Thread.currentThread() !== worker) worker.join()
  }
}
