// uaii-swift-example [PROMPT [MODEL]]: streams a continuation of PROMPT from MODEL
// (default: $UAII_MODEL, then the default model in the cache) and prints the usage.
import Foundation
import Uaii

let args = CommandLine.arguments
let prompt = args.count > 1 ? args[1] : "The capital of France is"
let path = args.count > 2 ? args[2] : nil

do {
  let model = try Model(path: path)
  let session = try model.makeSession()
  for try await event in session.stream(prompt, options: GenerateOptions(maxTokens: 32)) {
    switch event {
    case .text(let piece): print(piece, terminator: "")
    case .done(let usage):
      print("\n[\(usage.promptTokens) prompt tokens, \(usage.completionTokens) generated, "
        + "\(Int(usage.decodeTokensPerSecond)) tok/s, stop: \(usage.stopReason)]")
    default: break
    }
  }
} catch {
  FileHandle.standardError.write("uaii-swift-example: \(error)\n".data(using: .utf8)!)
  exit(1)
}
