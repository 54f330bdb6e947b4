// The device budget through the Swift SDK (docs/backends.md, "The device budget"):
// SessionOptions.deviceMemoryBytes bounds the weights a GPU holds, the rest stay in host
// memory with the same logits, and Session.deviceStats reports the placement. On whatever
// Vulkan device the machine has (CI: lavapipe); those cases skip without one. The tiny
// q4_0 fixture (tinyModels.draft, SpeculativeTests.swift) is the model.
import XCTest
@testable import Uaii

final class DeviceTests: XCTestCase {
  let prompt: [Int32] = [1, 260, 261, 262, 263]

  /// A session on "vulkan", or a skip when the engine has no Vulkan device.
  func vulkanSession(_ model: Model, deviceMemoryBytes: UInt64 = 0) throws -> Session {
    do {
      return try model.makeSession(options: SessionOptions(device: "vulkan", threads: 1, maxContext: 64,
                                                           deviceMemoryBytes: deviceMemoryBytes))
    } catch let e as UaiiError where e.status == .unsupported {
      throw XCTSkip("no Vulkan device (\(e.message))")
    }
  }

  func testASmallBudgetLeavesWeightsInHostMemoryWithTheSameLogits() throws {
    let model = try tinyModels.get().draft
    let whole = try vulkanSession(model)
    // 400 kB of the model's 1.2 MB: the rest in host memory, through a staging buffer.
    let small = try vulkanSession(model, deviceMemoryBytes: 400_000)
    let w = whole.deviceStats, s = small.deviceStats
    XCTAssertTrue(w.device.hasPrefix("vulkan"), w.device)
    XCTAssertEqual(s.device, w.device)
    XCTAssertEqual(w.hostBytes, 0)
    XCTAssertGreaterThan(w.residentBytes, 0)
    XCTAssertEqual(s.budgetBytes, 400_000)
    XCTAssertGreaterThan(s.hostBytes, 0)
    XCTAssertGreaterThan(s.stagingBytes, 0)
    XCTAssertLessThanOrEqual(s.residentBytes + s.stagingBytes, s.budgetBytes)
    XCTAssertEqual(s.residentBytes + s.hostBytes, w.residentBytes)
    // Where the weights live changes no bit.
    XCTAssertEqual(try small.eval(prompt, allLogits: true), try whole.eval(prompt, allLogits: true))
  }

  func testOnTheCPUTheStatsAreZero() throws {
    let model = try tinyModels.get().model
    XCTAssertEqual(SessionOptions().deviceMemoryBytes, 0)  // 90% of the device's largest heap
    // A device budget changes nothing on the CPU.
    let session = try model.makeSession(options: SessionOptions(threads: 1, maxContext: 64, deviceMemoryBytes: 4096))
    let stats = session.deviceStats
    XCTAssertEqual(stats.device, "cpu")
    XCTAssertEqual(stats.budgetBytes, 0)
    XCTAssertEqual(stats.residentBytes, 0)
    XCTAssertEqual(stats.hostBytes, 0)
    XCTAssertEqual(stats.stagingBytes, 0)
    XCTAssertEqual(stats.requantizedWeights, 0)
  }
}
