// The ABI check: the Swift layer is written against the header's major.minor; a library
// with another major or minor is refused with a message naming both versions.
import CUaii

public enum Version {
  /// The C ABI version this binding was compiled against (the header's macros).
  public static let bindingMajor = UInt32(UAII_CAPI_VERSION_MAJOR)
  public static let bindingMinor = UInt32(UAII_CAPI_VERSION_MINOR)
  public static let bindingPatch = UInt32(UAII_CAPI_VERSION_PATCH)

  /// The loaded library's ABI version, encoded as major * 10000 + minor * 100 + patch.
  public static var library: UInt32 { uaii_capi_version() }
  /// The loaded library's ABI version as text ("0.5.0").
  public static var libraryString: String { String(cString: uaii_capi_version_string()) }

  /// nil when `library` (encoded as uaii_capi_version()) has the expected major and minor;
  /// otherwise the error to report.
  public static func mismatch(library: UInt32, major: UInt32 = bindingMajor,
                              minor: UInt32 = bindingMinor) -> UaiiError? {
    let libMajor = library / 10000, libMinor = (library / 100) % 100, libPatch = library % 100
    if libMajor == major && libMinor == minor { return nil }
    return UaiiError(
      status: .versionMismatch,
      message: "libuaii's C ABI is \(libMajor).\(libMinor).\(libPatch) but the Swift SDK was built "
        + "against \(major).\(minor).x (capi/uaii.h); rebuild the SDK against this library, or "
        + "load the libuaii it was built with")
  }
}

/// Checked once per process, on first use of any handle.
private let abiMismatch: UaiiError? = Version.mismatch(library: uaii_capi_version())

func ensureCompatibleLibrary() throws {
  if let error = abiMismatch { throw error }
}
