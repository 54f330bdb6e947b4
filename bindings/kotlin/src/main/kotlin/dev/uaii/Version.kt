// The ABI check: the loaded libuaii must have the major.minor these sources and the JNI shim
// were built against; otherwise every entry point throws a UaiiException naming both.
package dev.uaii

object Version {
  /** The loaded library's C ABI version (major * 10000 + minor * 100 + patch). */
  @JvmStatic
  val library: Int
    get() {
      Native.ensureLoaded()
      return Native.capiVersion()
    }

  /** The C ABI header (capi/uaii.h) the JNI shim was compiled against, encoded the same way. */
  @JvmStatic
  val shimHeader: Int
    get() {
      Native.ensureLoaded()
      return Native.headerVersion()
    }

  /** As text: "0.5.0". */
  @JvmStatic
  val libraryString: String
    get() = format(library)

  internal fun format(v: Int) = "${v / 10000}.${v / 100 % 100}.${v % 100}"

  /**
   * null when [library] matches [shimHeader] (the header the JNI shim was compiled against)
   * and the Kotlin sources' major.minor; otherwise the message to report.
   */
  @JvmStatic
  @JvmOverloads
  fun mismatch(library: Int, shimHeader: Int, major: Int = Native.BINDING_MAJOR, minor: Int = Native.BINDING_MINOR): String? {
    val want = "$major.$minor"
    val lib = "${library / 10000}.${library / 100 % 100}"
    val shim = "${shimHeader / 10000}.${shimHeader / 100 % 100}"
    if (lib == want && shim == want) return null
    return "libuaii's C ABI is ${format(library)} but the Kotlin SDK was built against $want.x " +
      "(JNI shim compiled with uaii.h ${format(shimHeader)}); use the libuaii and libuaii_jni built with this SDK"
  }
}
