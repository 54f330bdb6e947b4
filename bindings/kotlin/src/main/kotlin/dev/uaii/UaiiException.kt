// Errors: the engine's status code and its message naming the cause.
package dev.uaii

/** A uaii status code (uaii_status). */
enum class Status(val code: Int) {
  OK(0),
  INVALID_ARGUMENT(100),
  BUFFER_TOO_SMALL(101),
  INVALID_STATE(102),
  NOT_FOUND(200),
  IO(201),
  OUT_OF_MEMORY(202),
  INVALID_MODEL(300),
  UNSUPPORTED(301),
  BACKEND(400),
  CANCELLED(500),
  INTERNAL(900),
  /** The SDK refused the loaded library: another C ABI major.minor. */
  VERSION_MISMATCH(-1),
  /** A code added by a newer library; [UaiiException.code] holds it. */
  UNKNOWN(-2);

  companion object {
    @JvmStatic
    fun of(code: Int): Status = values().firstOrNull { it.code == code } ?: UNKNOWN
  }
}

/** A failed uaii call: [status] (and the raw [code]) with the engine's message. */
class UaiiException(val status: Status, message: String, val code: Int = status.code) : RuntimeException(message) {
  /** Called by the JNI shim: the C status and uaii_last_error() as UTF-8. */
  internal constructor(code: Int, messageUtf8: ByteArray) : this(Status.of(code), fromUtf8(messageUtf8), code)

  override fun toString(): String = "${javaClass.name} (${status.name.toLowerCase()}): $message"
}
