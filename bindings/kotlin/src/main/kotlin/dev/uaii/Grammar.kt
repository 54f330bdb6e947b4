// Structured output helpers over the C ABI (docs/c_api.md, "Grammars and JSON Schemas").
@file:JvmName("Grammar")
package dev.uaii

/**
 * The GBNF grammar for a JSON Schema (its JSON text): what [GenerateOptions.jsonSchema] uses,
 * to read or edit before passing it as [GenerateOptions.grammar]. An invalid or unsupported
 * schema throws a [UaiiException] naming the cause.
 */
fun jsonSchemaToGrammar(schema: String): String {
  Native.ensureLoaded()
  return fromUtf8(Native.jsonSchemaToGrammar(cString(schema, "JSON Schema")))
}
