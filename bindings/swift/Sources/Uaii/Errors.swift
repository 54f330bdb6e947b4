// Errors: every failed C call becomes a `UaiiError` carrying the engine's status and the
// thread-local message from uaii_last_error(), read on the same thread right after the call.
import CUaii

/// A uaii status code (`uaii_status`). A struct, not an enum, so codes added by a newer
/// library still round-trip.
public struct Status: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  public let rawValue: Int32
  public init(rawValue: Int32) { self.rawValue = rawValue }

  public static let ok = Status(rawValue: 0)
  public static let invalidArgument = Status(rawValue: 100)
  public static let bufferTooSmall = Status(rawValue: 101)
  public static let invalidState = Status(rawValue: 102)
  public static let notFound = Status(rawValue: 200)
  public static let io = Status(rawValue: 201)
  public static let outOfMemory = Status(rawValue: 202)
  public static let invalidModel = Status(rawValue: 300)
  public static let unsupported = Status(rawValue: 301)
  public static let backend = Status(rawValue: 400)
  public static let cancelled = Status(rawValue: 500)
  public static let `internal` = Status(rawValue: 900)
  /// The binding itself refused: the library's ABI version does not match.
  public static let versionMismatch = Status(rawValue: -1)

  /// The library's fixed English name for the code ("not found").
  public var description: String {
    if self == .versionMismatch { return "version mismatch" }
    return String(cString: uaii_status_string(uaii_status(rawValue: UInt32(bitPattern: rawValue))))
  }
}

/// An error from libuaii: the status and the engine's message naming the cause.
public struct UaiiError: Error, Sendable, CustomStringConvertible {
  public let status: Status
  public let message: String

  public init(status: Status, message: String) {
    self.status = status
    self.message = message
  }

  public var description: String { "\(status): \(message)" }
}

#if canImport(Foundation)
import Foundation
extension UaiiError: LocalizedError {
  public var errorDescription: String? { description }
}
#endif

/// The error of the call that just failed on this thread.
func lastError(_ status: uaii_status) -> UaiiError {
  UaiiError(status: Status(rawValue: Int32(bitPattern: status.rawValue)),
            message: String(cString: uaii_last_error()))
}

/// Throws the engine's error unless `status` is UAII_OK.
@inline(__always)
func check(_ status: uaii_status) throws {
  if status != UAII_OK { throw lastError(status) }
}
