#!/usr/bin/env python3
"""Golden for uaii's JSON-Schema-to-GBNF converter (lib/sampling/json_schema_grammar.h):
which instances llama.cpp accepts under the grammar that llama.cpp's own converter builds.

The converter is llama.cpp's C++ one (common/json-schema-to-grammar.cpp + json-schema.cpp,
what llama-server and llama-cli use; llama-cpp-python's Python port in llama_grammar.py is
an older, different converter): tests/oracles/json_schema_grammar_tool.cpp is compiled with
g++ against the vendor/llama.cpp sources of the llama-cpp-python 0.3.36 sdist. Acceptance
is decided by llama.cpp's grammar sampler through llama-cpp-python's low-level bindings:
a vocab-only model (the sdist's models/ggml-vocab-llama-bpe.gguf), llama_sampler_init_grammar
(vocab, gbnf, "root"), the instance tokenized and fed token by token (llama_sampler_apply on
a one-candidate array says whether the token is allowed, then llama_sampler_accept), and at
the end the EOS token must be allowed (the whole instance is a sentence of the grammar).

Run (needs `pip install -r requirements/oracle.txt`, g++, and the sdist at
$UAII_LLAMA_CPP_SDIST or ~/.cache/uaii/downloads/llama_cpp_python-0.3.36.tar.gz):
  python3 tests/oracles/json_schema_grammar_oracle.py   (writes tests/golden/json_schema_grammar.json)
"""
import ctypes
import hashlib
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile

import llama_cpp as L

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SDIST = os.environ.get("UAII_LLAMA_CPP_SDIST") or os.path.expanduser(
    "~/.cache/uaii/downloads/llama_cpp_python-0.3.36.tar.gz")
VOCAB = "ggml-vocab-llama-bpe.gguf"
SOURCES = ["json-schema-to-grammar.cpp", "json-schema.cpp", "json.cpp", "trie.cpp", "unicode.cpp"]


def case(name, schema, valid, invalid):
    return dict(name=name, schema=schema, instances=[(s, True) for s in valid] + [(s, False) for s in invalid])


# (name, schema, instances llama.cpp should accept, instances it should reject): the
# expectations are only a check on the corpus; the golden records what llama.cpp decided.
# A schema given as a str is passed as that text (bad JSON, odd spacing).
CASES = [
    case("empty_schema", {}, ['{}', '[1, "a", null]', '"x"', '-1.5e3', 'true', 'null', '{"a": {"b": [1]}}'],
         ['', 'nul', '{', '01', '[1,]', "'a'"]),
    case("true_schema", "true", [], []),  # llama.cpp's builder wants an object: recorded as an error
    case("type_string", {"type": "string"},
         ['""', '"hello"', '"esc \\" \\\\ \\n \\u00e9"', '"caf\u00e9"', '"\u6f22\u5b57"'],
         ['hello', '"unterminated', '"bad \\x escape"', '"ctl \u0001"', '"tab\t"', '1']),
    case("type_number", {"type": "number"},
         ['0', '-0', '1.5', '-12.25e+10', '3E-2', '1234567890123456'],
         ['01', '1.', '.5', '+1', '1e', '"1"', '12345678901234567', '1.12345678901234567']),
    case("type_integer", {"type": "integer"}, ['0', '-7', '42', '1234567890123456'],
         ['1.0', '-', '007', '1e3', '12345678901234567']),
    case("type_boolean", {"type": "boolean"}, ['true', 'false'], ['True', '1', 'tru', '"true"']),
    case("type_null", {"type": "null"}, ['null'], ['None', '""', 'nul']),
    case("type_list", {"type": ["string", "null", "integer"]}, ['"a"', 'null', '5'], ['true', '1.5', '[]']),
    case("type_list_with_keywords", {"type": ["string", "array"], "minLength": 2, "items": {"type": "integer"}},
         ['"ab"', '[1, 2]', '[]'], ['"a"', '["a"]']),
    case("type_object_plain", {"type": "object"}, ['{}', '{"a": 1}', '{"a": [true], "b": {"c": null}}'],
         ['[]', '{"a"}', '{a: 1}', '{"a": 1,}']),
    case("type_array_plain", {"type": "array"}, ['[]', '[1, "two", {"three": 3}]'], ['[', '{}', '[1 2]']),
    case("object_required",
         {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
          "required": ["name", "age"]},
         ['{"name": "Ann", "age": 30}', '{"name":"Ann","age":30}', '{"name": "Ann",\n  "age": 30\n}'],
         ['{"age": 30, "name": "Ann"}', '{"name": "Ann"}', '{"name": "Ann", "age": 30, "x": 1}',
          '{"name": "Ann", "age": "30"}', '{"name" : "Ann", "age": 30}', '{"name": "Ann" , "age": 30}',
          '{"name": "Ann", "age": 30', '{}']),
    case("object_optional",
         {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}}},
         ['{}', '{"a": 1}', '{"b": "x"}', '{"c": true}', '{"a": 1, "c": false}', '{"a": 1, "b": "x", "c": true}',
          '{"b": "x", "c": true}'],
         ['{"b": "x", "a": 1}', '{"c": true, "a": 1}', '{"a": 1, "a": 2}', '{"d": 1}', '{,}', '{"a": 1,}']),
    case("object_mixed_required",
         {"type": "object", "properties": {"id": {"type": "integer"}, "tag": {"type": "string"}, "ok": {"type": "boolean"}},
          "required": ["ok"]},
         ['{"ok": true}', '{"ok": true, "id": 1}', '{"ok": false, "tag": "t"}', '{"ok": true, "id": 2, "tag": "t"}'],
         ['{"id": 1, "ok": true}', '{}', '{"ok": true, "tag": "t", "id": 2}', '{"ok": true,}']),
    case("additional_false",
         {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
         ['{}', '{"a": 1}'], ['{"b": 1}', '{"a": 1, "b": 2}']),
    case("additional_true",
         {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": True},
         ['{"a": 1}', '{"a": 1, "b": 2}', '{"a": 1, "b": [1], "c": {"d": null}}'],
         ['{"b": 2}', '{"a": 1, "a": 2}', '{"a": "1"}', '{"b": 2, "a": 1}']),
    case("additional_schema",
         {"type": "object", "properties": {"n": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
         ['{}', '{"n": "x"}', '{"x": 1}', '{"n": "x", "x": 1, "y": 2}', '{"x": 1, "y": 2}', '{"nn": 1}', '{"": 3}'],
         ['{"x": "s"}', '{"n": 1}', '{"x": 1, "n": "x"}']),
    case("additional_only_schema", {"additionalProperties": {"type": "boolean"}},
         ['{}', '{"a": true}', '{"a": true, "b": false}'], ['{"a": 1}', '[]']),
    case("additional_keys_excluded",
         {"type": "object", "properties": {"and": {"type": "null"}, "also": {"type": "null"}},
          "additionalProperties": {"type": "integer"}},
         ['{"and": null}', '{"an": 1}', '{"al": 1}', '{"andx": 1}', '{"alsoo": 1}', '{"b": 1}', '{"": 1}',
          '{"and": null, "also": null, "x": 1}'],
         ['{"and": 1}', '{"also": 1}', '{"x": 1, "and": null}']),
    case("nested_objects",
         {"type": "object", "properties": {
             "user": {"type": "object", "properties": {"name": {"type": "string"},
                                                       "address": {"type": "object", "properties": {"city": {"type": "string"}},
                                                                   "required": ["city"]}},
                      "required": ["name"]},
             "tags": {"type": "array", "items": {"type": "string"}}},
          "required": ["user"]},
         ['{"user": {"name": "a"}}', '{"user": {"name": "a", "address": {"city": "b"}}, "tags": ["x", "y"]}',
          '{"user": {"name": "a"}, "tags": []}'],
         ['{"user": {"address": {"city": "b"}}}', '{"user": {"name": "a", "address": {}}}', '{"tags": []}',
          '{"user": {"name": "a"}, "tags": [1]}']),
    case("array_items", {"type": "array", "items": {"type": "integer"}},
         ['[]', '[1]', '[1, 2, 3]', '[1,2,3]', '[ 1 ]', '[\n1,\n2\n]'], ['[1, "2"]', '[1,]', '[,1]', '[1 2]', '1']),
    case("array_min_items", {"type": "array", "items": {"type": "boolean"}, "minItems": 2},
         ['[true, false]', '[true, true, true]'], ['[]', '[true]']),
    case("array_max_items", {"type": "array", "items": {"type": "null"}, "maxItems": 2},
         ['[]', '[null]', '[null, null]'], ['[null, null, null]']),
    case("array_min_max_items", {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
         ['["a"]', '["a", "b", "c"]'], ['[]', '["a", "b", "c", "d"]']),
    case("array_exact_items", {"items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
         ['[1, 2]'], ['[1]', '[1, 2, 3]']),
    case("array_zero_items", {"type": "array", "items": {"type": "integer"}, "maxItems": 0},
         ['[]', '[ ]'], ['[1]']),
    case("array_min_items_any", {"type": "array", "minItems": 1},
         ['[1]', '["a", {}]'], ['[]']),
    case("prefix_items", {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
         ['["a", 1]'], ['["a"]', '["a", 1, 2]', '[1, "a"]', '[]']),
    case("items_tuple_form", {"type": "array", "items": [{"type": "boolean"}, {"type": "null"}, {"enum": [1, 2]}]},
         ['[true, null, 2]'], ['[true, null]', '[true, null, 3]']),
    case("enum_mixed", {"enum": ["red", "green", 1, None, True, {"a": 1}, [1, 2]]},
         ['"red"', '"green"', '1', 'null', 'true', '{"a":1}', '[1,2]'],
         ['"blue"', '"Red"', '2', 'false', '{"a": 1}', '[1, 2]', '"red" ']),
    case("enum_strings_with_escapes", {"enum": ["a\"b", "c\\d", "line\nbreak", "\u00e9t\u00e9"]},
         ['"a\\"b"', '"c\\\\d"', '"line\\nbreak"', '"\u00e9t\u00e9"'], ['"a"b"', '"line\nbreak"', '"ete"']),
    case("const_string", {"const": "fixed"}, ['"fixed"'], ['"Fixed"', 'fixed', '"fixed"x']),
    case("const_object", {"const": {"k": [1, "v"], "z": None}}, ['{"k":[1,"v"],"z":null}'],
         ['{"k": [1, "v"], "z": null}', '{"z":null,"k":[1,"v"]}']),
    case("const_number", {"type": "integer", "const": 42}, ['42'], ['42.0', '43']),
    case("any_of", {"anyOf": [{"type": "integer"}, {"type": "object", "properties": {"x": {"type": "string"}},
                                                    "required": ["x"]}]},
         ['7', '{"x": "y"}'], ['"7"', '{}', '{"x": 1}']),
    case("one_of", {"oneOf": [{"type": "string", "maxLength": 2}, {"type": "boolean"}, {"enum": [1, 2]}]},
         ['""', '"ab"', 'false', '2'], ['"abc"', '3', 'null']),
    case("all_of_objects",
         {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                    {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}]},
         ['{"a": 1, "b": "x"}'], ['{"a": 1}', '{"b": "x", "a": 1}', '{"a": 1, "b": "x", "c": 0}']),
    case("all_of_with_any_of",
         {"allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                    {"anyOf": [{"properties": {"b": {"type": "boolean"}}}, {"properties": {"c": {"type": "null"}}}]}]},
         ['{"a": 1}', '{"a": 1, "b": true}', '{"a": 1, "c": null}', '{"a": 1, "b": true, "c": null}'],
         ['{"b": true}', '{"a": 1, "c": null, "b": true}']),
    case("all_of_ref",
         {"$defs": {"base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
          "allOf": [{"$ref": "#/$defs/base"}, {"properties": {"note": {"type": "string"}}}]},
         ['{"id": 3}', '{"id": 3, "note": "n"}'], ['{"note": "n"}', '{}']),
    case("all_of_enums", {"allOf": [{"enum": ["a", "b", "c"]}, {"enum": ["b", "c", "d"]}]},
         ['"b"', '"c"'], ['"a"', '"d"']),
    case("string_type_all_of", {"type": "string", "allOf": [{"enum": ["x", "y"]}, {"enum": ["y"]}]},
         ['"y"'], ['"x"']),
    case("ref_definitions",
         {"definitions": {"pt": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                                 "required": ["x", "y"]}},
          "type": "object", "properties": {"from": {"$ref": "#/definitions/pt"}, "to": {"$ref": "#/definitions/pt"}},
          "required": ["from", "to"]},
         ['{"from": {"x": 0, "y": 1}, "to": {"x": 2.5, "y": -3}}'], ['{"from": {"x": 0}, "to": {"x": 2, "y": 3}}']),
    case("ref_defs_recursive",
         {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
                                                             "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                             "required": ["v"]}},
          "$ref": "#/$defs/node"},
         ['{"v": 1}', '{"v": 1, "kids": []}', '{"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}, {"v": 4}]}'],
         ['{"v": 1, "kids": [{}]}', '{"kids": []}']),
    case("ref_root_recursive",
         {"type": "object", "properties": {"next": {"$ref": "#"}, "n": {"type": "integer"}}},
         [], []),  # llama.cpp takes only "#/..." references: an error
    case("ref_unresolvable", {"$ref": "#/$defs/missing"}, [], []),
    case("ref_remote", {"$ref": "https://example.com/schema.json"}, [], []),
    case("ref_array_index", {"anyOf": [{"type": "null"}, {"$ref": "#/anyOf/0"}]}, ['null'], ['1']),
    case("string_min_length", {"type": "string", "minLength": 2}, ['"ab"', '"abcdef"', '"\\n\\t"'], ['""', '"a"']),
    case("string_max_length", {"type": "string", "maxLength": 3}, ['""', '"abc"', '"\u00e9\u00e9\u00e9"'],
         ['"abcd"']),
    case("string_min_max_length", {"type": "string", "minLength": 1, "maxLength": 2}, ['"a"', '"\\u0041b"'],
         ['""', '"abc"']),
    case("string_length_untyped", {"maxLength": 1}, ['""', '"a"'], ['"ab"', '1']),
    case("format_date", {"type": "string", "format": "date"}, ['"2024-02-29"', '"0000-12-31"'],
         ['"2024-13-01"', '"2024-00-10"', '"2024-1-01"', '"2024-01-32"', '"24-01-01"']),
    case("format_time", {"type": "string", "format": "time"}, ['"23:59:59Z"', '"00:00:00.123+05:30"', '"12:00:00-01:00"'],
         ['"24:00:00Z"', '"12:00:00"', '"12:60:00Z"', '"12:00:00.12Z"']),
    case("format_date_time", {"type": "string", "format": "date-time"}, ['"2024-01-02T03:04:05Z"'],
         ['"2024-01-02 03:04:05Z"', '"2024-01-02"']),
    case("format_uuid", {"type": "string", "format": "uuid"}, ['"123e4567-e89b-12d3-a456-426614174000"',
                                                               '"ABCDEF01-2345-6789-abcd-ef0123456789"'],
         ['"123e4567e89b12d3a456426614174000"', '"123e4567-e89b-12d3-a456-42661417400g"']),
    case("format_uuid4", {"format": "uuid4"}, ['"00000000-0000-0000-0000-000000000000"'], ['"0"']),
    case("format_unknown", {"type": "string", "format": "email"}, ['"a@b.c"', '"anything"'], ['1']),
    case("pattern_basic", {"type": "string", "pattern": "^[a-z]+[0-9]{2,3}$"}, ['"abc12"', '"z999"'],
         ['"abc1"', '"12"', '"abc1234"', '"ABC12"']),
    case("pattern_groups_alternation", {"pattern": "^(foo|ba(r|z))+-(?:x|yy)?$"},
         ['"foo-"', '"barbaz-x"', '"foobar-yy"'], ['"-x"', '"fo-x"', '"foo-xy"']),
    case("pattern_unsupported_escape", {"type": "string", "pattern": "^\\d+$"}, ['"12"', '"any string"'], ['12']),
    case("pattern_literal_escapes", {"type": "string", "pattern": "^a\\.b\\(c\\)\\[d\\]\\|e\\*\\+\\?\\{\\}$"},
         ['"a.b(c)[d]|e*+?{}"'], ['"axb(c)[d]|e*+?{}"']),
    case("pattern_dot_and_quote", {"type": "string", "pattern": "^.\"?.$"}, ['"ab"', '"a\\"b"'], ['"a"', '"abc"']),
    case("pattern_class_escapes", {"type": "string", "pattern": "^[\\x41-\\x43\\-_]{1,}$"},
         ['"ABC"', '"-_A"'], ['"D"', '""']),
    case("pattern_repetitions", {"type": "string", "pattern": "^(ab){2}c{0,2}d{3,}e?$"},
         ['"ababddd"', '"ababccdddde"'], ['"abddd"', '"ababcccddd"', '"ababdd"']),
    case("pattern_unanchored", {"type": "string", "pattern": "[a-z]+"}, ['"ABC"', '""'], ['1']),
    case("pattern_lookahead", {"type": "string", "pattern": "^(?=a)a$"}, ['"anything"'], []),
    case("pattern_unbalanced", {"type": "string", "pattern": "^(ab$"}, [], []),
    case("pattern_unterminated_class", {"type": "string", "pattern": "^[ab$"}, [], []),
    case("pattern_nothing_to_repeat", {"type": "string", "pattern": "^*a$"}, [], []),
    case("pattern_trailing_backslash", {"type": "string", "pattern": "^a\\$"}, [], []),
    case("integer_min_max", {"type": "integer", "minimum": 3, "maximum": 250},
         ['3', '9', '10', '99', '100', '199', '249', '250'], ['2', '251', '0', '-3', '03', '1000', '300']),
    case("integer_negative_range", {"type": "integer", "minimum": -25, "maximum": -3},
         ['-3', '-9', '-10', '-25'], ['-2', '-26', '3', '0', '-0']),
    case("integer_cross_zero", {"type": "integer", "minimum": -5, "maximum": 12},
         ['-5', '-1', '0', '7', '12'], ['-6', '13', '-0', '00']),
    case("integer_minimum_only", {"type": "integer", "minimum": 17},
         ['17', '18', '99', '100', '12345'], ['16', '9', '0', '-17', '017']),
    case("integer_minimum_zero", {"type": "integer", "minimum": 0}, ['0', '1', '10', '999'], ['-1', '01']),
    case("integer_minimum_negative", {"type": "integer", "minimum": -12},
         ['-12', '-9', '-1', '0', '5', '123'], ['-13', '-100']),
    case("integer_maximum_only", {"type": "integer", "maximum": 42},
         ['42', '0', '-1', '-99999', '9'], ['43', '100', '420']),
    case("integer_maximum_negative", {"type": "integer", "maximum": -10}, ['-10', '-11', '-500'], ['-9', '0', '10']),
    case("integer_exclusive", {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
         ['1', '5', '9'], ['0', '10']),
    case("integer_fractional_bounds", {"type": "integer", "minimum": 1.5, "maximum": 4.5}, ['2', '3', '4'], ['1', '5']),
    case("integer_single_value", {"type": "integer", "minimum": 7, "maximum": 7}, ['7'], ['6', '8', '77']),
    case("number_ignores_bounds", {"type": "number", "minimum": 0, "maximum": 1}, ['0.5', '-3', '2e5'], ['x']),
    case("enum_numbers", {"enum": [1.5, 100.0, 1e100, 1e-7, 0.001, -0.0, 12345678901234567890, 0.1, 123456789012345.6]},
         ['1.5', '100.0', '1e+100', '1e-07', '0.001', '-0.0', '12345678901234567890', '0.1', '123456789012345.6'],
         ['100', '1e100', '1.0e+100', '0', '-0']),
    case("const_controls_and_unicode", {"const": "tab\t nul\u0000 bell\u0007 del\u007f \u00e9 \U0001f600"},
         ['"tab\\t nul\\u0000 bell\\u0007 del\u007f \u00e9 \U0001f600"'], ['"tab\t nul"']),
    case("rule_name_collisions",
         {"type": "object", "properties": {"space": {"type": "string", "maxLength": 1}, "dot": {"pattern": "^.$"},
                                           "a": {"type": "integer"}, "a-kv": {"type": "boolean"}, "": {"type": "null"},
                                           "n\u00e4me": {"type": "integer", "minimum": 1}},
          "required": ["space", "dot", "a", "a-kv", "", "n\u00e4me"]},
         ['{"space": "x", "dot": "y", "a": 1, "a-kv": true, "": null, "n\u00e4me": 1}'],
         ['{"space": "xy", "dot": "y", "a": 1, "a-kv": true, "": null, "n\u00e4me": 1}',
          '{"space": "x", "dot": "y", "a": 1, "a-kv": true, "": null, "n\u00e4me": 0}']),
    case("root_named_property", {"properties": {"": {"type": "integer"}}}, ['1', '{}'], ['{"": 1}']),
    case("additional_unicode_keys",
         {"properties": {"\u00e9t\u00e9": {"type": "integer"}, "a-b": {"type": "integer"}}, "additionalProperties": {"type": "null"}},
         ['{"\u00e9t\u00e9": 1}', '{"a-b": 2}', '{"zz": null}', '{"\u00e9x": null}'], ['{"\u00e9t\u00e9": null}', '{"a-b": null}']),
    case("min_items_above_max", {"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 1},
         [], ['[]', '[1]', '[1, 2, 3]']),
    case("format_on_other_type", {"type": "integer", "format": "date", "pattern": "^x$"}, ['12'], ['"x"']),
    case("empty_pattern", {"type": "string", "pattern": ""}, ['"abc"'], ['1']),
    case("pattern_quotes_in_class", {"type": "string", "pattern": "^[\"a]+\"$"}, ['"a\""'], ['"a"']),
    case("nested_refs_and_any_of",
         {"definitions": {"id": {"type": "integer", "minimum": 0}, "name": {"type": "string", "minLength": 1},
                          "entity": {"anyOf": [{"$ref": "#/definitions/id"}, {"$ref": "#/definitions/name"}]}},
          "type": "array", "items": {"$ref": "#/definitions/entity"}, "maxItems": 3},
         ['[]', '[0, "x", 12]'], ['[-1]', '[""]', '[1, 2, 3, 4]']),
    case("type_list_integer_bounds", {"type": ["integer", "null"], "minimum": 10, "maximum": 20}, ['10', '20', 'null'],
         ['9', '21']),
    case("prefix_items_nested",
         {"prefixItems": [{"type": "array", "items": {"type": "integer"}, "minItems": 1},
                          {"type": "object", "properties": {"ok": {"const": True}}, "required": ["ok"]}]},
         ['[[1], {"ok": true}]', '[[1,2],{"ok":true}]'], ['[[], {"ok": true}]', '[[1], {"ok": false}]']),
    case("all_of_type_object_with_required_only",
         {"type": "object", "allOf": [{"properties": {"x": {"type": "integer"}}},
                                      {"properties": {"y": {"type": "integer"}}, "required": ["y"]}]},
         ['{"x": 1, "y": 2}'], ['{"y": 2}', '{"x": 1}']),
    case("enum_in_object_property",
         {"type": "object", "properties": {"level": {"enum": ["low", "mid", "high"]}, "n": {"type": "number"}},
          "required": ["level"], "additionalProperties": False},
         ['{"level": "mid"}', '{"level": "low", "n": -1.25}'], ['{"level": "max"}', '{"n": 1}', '{"level": "low", "m": 1}']),
    case("bad_json", '{"type": "string",', [], []),
    case("bad_json_trailing", '{"type": "string"} x', [], []),
    case("unsupported_type", {"type": "color"}, [], []),
    case("type_not_string", {"type": 5}, [], []),
    case("bad_min_items", {"type": "array", "minItems": -1}, [], []),
    case("bad_max_length", {"type": "string", "maxLength": "3"}, [], []),
    case("bad_properties", {"type": "object", "properties": [1]}, [], []),
    case("bad_additional", {"type": "object", "additionalProperties": 3}, [], []),
    case("empty_enum", {"enum": []}, [], []),
    case("empty_any_of", {"anyOf": []}, [], []),
    case("schema_not_object", "[1, 2]", [], []),
    case("tool_call_like",
         {"type": "object", "properties": {
             "name": {"const": "get_weather"},
             "arguments": {"type": "object", "properties": {
                 "city": {"type": "string", "minLength": 1},
                 "unit": {"enum": ["c", "f"]},
                 "days": {"type": "integer", "minimum": 1, "maximum": 14}},
                 "required": ["city"], "additionalProperties": False}},
          "required": ["name", "arguments"]},
         ['{"name": "get_weather", "arguments": {"city": "Oslo"}}',
          '{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "c", "days": 14}}',
          '{"name":"get_weather","arguments":{"city":"Oslo","days":1}}'],
         ['{"name": "get_weather", "arguments": {"city": ""}}',
          '{"name": "get_weather", "arguments": {"city": "Oslo", "days": 15}}',
          '{"name": "other", "arguments": {"city": "Oslo"}}',
          '{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "k"}}',
          '{"name": "get_weather", "arguments": {"city": "Oslo"}']),
    case("property_names_need_escaping",
         {"type": "object", "properties": {"a b": {"type": "integer"}, "q\"uote": {"type": "integer"},
                                           "root": {"type": "null"}, "string": {"type": "boolean"}},
          "required": ["a b", "q\"uote", "root", "string"]},
         ['{"a b": 1, "q\\"uote": 2, "root": null, "string": true}'], ['{"a b": 1, "q\\"uote": 2, "root": null}']),
    case("whitespace_variants", {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "integer"}}}},
         ['[{"k": 1}]', '[ {"k":1} ]', '[\n  {\n    "k": 1\n  }\n]', '[\n\n\t{"k": 1}]', '[{"k":\n 1}]'],
         ['[\n\n\n{"k": 1}]', ' [{"k": 1}]', '[{"k": 1}] ', '[{"k" : 1}]', '[\t{"k": 1}]',
          '[' + '\n' + ' ' * 21 + '1]']),
]


# A seeded random corpus on top (grammar text only, as SHA-256, to keep the golden small):
# schemas combining the keywords above at random, nested, with $defs, recursion and the
# odd names and patterns that test rule naming, escaping and the regex subset.
RANDOM_SEED, RANDOM_COUNT = 28, 600
RANDOM_NAMES = ["a", "b", "id", "name", "root", "string", "space", "dot", "a-b", "", "x y", "\u00e9", "value",
                "a-kv", "q\"", "and", "an", "char", "date", "[k]", "\\", "-"]
RANDOM_PATTERNS = ["^[a-z]+$", "^a{2,3}b?$", "^(ab|cd)*$", "^\\d+$", "^.{1,3}$", "^(?:x|y)+z$", "^[^\"]*$", "^a\\.b$",
                   "^((a))$", "^a{,2}$", "^a{3}$", "^(a|)$", "abc", "^$", "^a|b$", "^[\\x41-\\x5A]$", "^\\w$", "^(a$",
                   "^a)$", "^[a$", "^+$", "^a{x}$", "^\"q\"$", "^(a){2}(a){2}$", "^\\u00e9$", "^}$", "^a\\$", "^a{2,1}$"]
TYPES = ["string", "number", "integer", "boolean", "null", "object", "array"]


def random_schema(r, d=0):
    k = r.randrange(26 if d < 4 else 12)
    if k == 0:
        return {}
    if k == 1:
        return {"type": r.choice(TYPES)}
    if k == 2:
        return {"type": r.sample(TYPES, r.randint(1, 3))}
    if k == 3:
        return {"enum": [r.choice(["a", 1, None, True, 1.5, {"k": [1]}, "\u00e9", "q\"", 1e20, -0.0, 0.1])
                         for _ in range(r.randint(1, 4))]}
    if k == 4:
        return {"const": r.choice(["x", 2, [1, {"a": None}], False, 0.25])}
    if k == 5:
        keys = r.sample(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"], r.randint(1, 3))
        return {"type": "integer", **{kk: r.choice([0, 1, 5, 9, 10, 17, 99, 100, 123, -1, -7, -10, -150, 2.5, 10 ** 6,
                                                    -98765, 4294967296]) for kk in keys}}
    if k == 6:
        return {"type": "string", **{kk: r.choice([0, 1, 2, 5]) for kk in r.sample(["minLength", "maxLength"], r.randint(1, 2))}}
    if k == 7:
        return {"type": r.choice(["string", None]), "format": r.choice(["date", "time", "date-time", "uuid", "uuid3", "email"])}
    if k in (8, 9):
        return {**({"type": "string"} if k == 8 else {}), "pattern": r.choice(RANDOM_PATTERNS)}
    if k in (10, 11, 12, 13):
        props = {r.choice(RANDOM_NAMES): random_schema(r, d + 1) for _ in range(r.randint(0, 4))}
        s = {"type": "object", "properties": props}
        if r.random() < 0.6 and props:
            s["required"] = r.sample(list(props), r.randint(0, len(props)))
        if r.random() < 0.4:
            s["additionalProperties"] = r.choice([True, False, random_schema(r, d + 1)])
        if r.random() < 0.3:
            del s["type"]
        return s
    if k == 14:
        return {"additionalProperties": r.choice([True, False, random_schema(r, d + 1)])}
    if k in (15, 16):
        s = {"type": "array", "items": random_schema(r, d + 1)}
        for kk in r.sample(["minItems", "maxItems"], r.randint(0, 2)):
            s[kk] = r.randint(0, 4)
        return s
    if k == 17:
        return {r.choice(["items", "prefixItems"]): [random_schema(r, d + 1) for _ in range(r.randint(0, 3))]}
    if k in (18, 19):
        return {r.choice(["anyOf", "oneOf"]): [random_schema(r, d + 1) for _ in range(r.randint(1, 3))]}
    if k == 20:
        return {"allOf": [random_schema(r, d + 1) for _ in range(r.randint(1, 3))]}
    if k == 21:
        return {"allOf": [{"anyOf": [random_schema(r, d + 1), random_schema(r, d + 1)]}, random_schema(r, d + 1)]}
    if k == 22:
        return {"type": "string", "allOf": [{"enum": ["a", "b"]}, {"enum": ["b", "c"]}]}
    if k == 23:
        return {"$ref": r.choice(["#/$defs/A", "#/$defs/B", "#/definitions/C", "#/$defs/missing", "#"])}
    if k == 24:
        return {"minItems": r.randint(0, 3), "items": random_schema(r, d + 1)}
    return {"type": "array", "maxItems": r.randint(0, 2)}


def random_corpus():
    """(schema text) for RANDOM_COUNT schemas; $defs A and C plain, B recursive through a property."""
    r = random.Random(RANDOM_SEED)
    out = []
    while len(out) < RANDOM_COUNT:
        s = random_schema(r)
        if r.random() < 0.5:
            s["$defs"] = {"A": random_schema(r, 2),
                          "B": {"type": "object", "properties": {"n": {"$ref": "#/$defs/B"}, "v": random_schema(r, 3)}}}
            s["definitions"] = {"C": random_schema(r, 3)}
        out.append(json.dumps(s, ensure_ascii=r.random() < 0.5))
    return out


def has_rule_cycle(gbnf):
    """Whether rules whose whole body is one other rule's name go round (x ::= y, y ::= x): what
    llama.cpp writes for a $ref cycle with no schema in it. Its grammar loader refuses that (left
    recursion) and uaii refuses the schema, so such schemas are left out of the random corpus."""
    alias = {}
    for line in gbnf.splitlines():
        name, _, body = line.partition(" ::= ")
        if body and all(ch.isalnum() or ch == "-" for ch in body):
            alias[name] = body
    for start in alias:
        seen, at = set(), start
        while at in alias and at not in seen:
            seen.add(at)
            at = alias[at]
        if at in seen:
            return True
    return False


def extract_sources(tmp):
    """vendor/llama.cpp's common/, include/, ggml/include/ and vendor/nlohmann/ plus the vocab, from the sdist."""
    want = ("/vendor/llama.cpp/common/", "/vendor/llama.cpp/include/", "/vendor/llama.cpp/ggml/include/",
            "/vendor/llama.cpp/vendor/nlohmann/", "/vendor/llama.cpp/models/" + VOCAB)
    with tarfile.open(SDIST) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and any(w in m.name for w in want)]
        tar.extractall(tmp, members=members)
    top = next(os.scandir(tmp)).path
    return os.path.join(top, "vendor", "llama.cpp")


def build_tool(llama_dir, tmp):
    libdir = os.path.join(os.path.dirname(L.__file__), "lib")
    exe = os.path.join(tmp, "json_schema_grammar_tool")
    common = os.path.join(llama_dir, "common")
    cmd = ["g++", "-std=c++17", "-O1", "-I", common, "-I", os.path.join(llama_dir, "include"),
           "-I", os.path.join(llama_dir, "ggml", "include"), "-I", os.path.join(llama_dir, "vendor"),
           os.path.join(HERE, "json_schema_grammar_tool.cpp")] + [os.path.join(common, s) for s in SOURCES] + [
           "-L", libdir, "-lggml-base", "-Wl,-rpath," + libdir, "-o", exe]
    subprocess.run(cmd, check=True)
    return exe


def convert_all(exe, texts):
    out = subprocess.run([exe], input="\n".join(texts) + "\n", capture_output=True, text=True, check=True).stdout
    results = [json.loads(line) for line in out.splitlines()]
    assert len(results) == len(texts), (len(results), len(texts))
    return results


@L.llama_log_callback
def _quiet(level, text, user_data):
    pass


class Vocab:
    def __init__(self, path):
        L.llama_log_set(_quiet, ctypes.c_void_p())
        L.llama_backend_init()
        params = L.llama_model_default_params()
        params.vocab_only = True
        self.model = L.llama_model_load_from_file(path.encode(), params)
        assert self.model, path
        self.vocab = L.llama_model_get_vocab(self.model)
        self.eos = L.llama_vocab_eos(self.vocab)

    def tokenize(self, text):
        raw = text.encode("utf-8")
        buf = (L.llama_token * (len(raw) + 8))()
        n = L.llama_tokenize(self.vocab, raw, len(raw), buf, len(buf), False, False)
        assert n >= 0, text
        return list(buf[:n])

    def allowed(self, smpl, token):
        data = (L.llama_token_data * 1)()
        data[0].id, data[0].logit, data[0].p = token, 0.0, 0.0
        arr = L.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
        L.llama_sampler_apply(smpl, ctypes.byref(arr))
        return data[0].logit != float("-inf")

    def accepts(self, gbnf, text):
        """True when llama.cpp's grammar sampler takes every token of `text` and then EOS."""
        smpl = L.llama_sampler_init_grammar(self.vocab, gbnf.encode(), b"root")
        assert smpl, "llama.cpp could not parse the grammar:\n" + gbnf
        try:
            for tok in self.tokenize(text):
                if not self.allowed(smpl, tok):
                    return False
                L.llama_sampler_accept(smpl, tok)
            return self.allowed(smpl, self.eos)
        finally:
            L.llama_sampler_free(smpl)


def schema_text(schema):
    return schema if isinstance(schema, str) else json.dumps(schema, ensure_ascii=False)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        llama_dir = extract_sources(tmp)
        exe = build_tool(llama_dir, tmp)
        vocab = Vocab(os.path.join(llama_dir, "models", VOCAB))
        texts = [schema_text(c["schema"]) for c in CASES]
        assert all("\n" not in t for t in texts)
        results = convert_all(exe, texts)
        cases, n_inst, surprises = [], 0, []
        for c, text, res in zip(CASES, texts, results):
            entry = dict(name=c["name"], schema=text)
            if "error" in res:
                entry["error"] = res["error"]
                assert not c["instances"], (c["name"], res["error"])
            else:
                entry["gbnf"] = res["gbnf"]
                entry["instances"] = []
                for inst, expected in c["instances"]:
                    got = vocab.accepts(res["gbnf"], inst)
                    if got != expected:
                        surprises.append((c["name"], inst, got))
                    entry["instances"].append(dict(text=inst, accepted=got))
                    n_inst += 1
            cases.append(entry)
        randoms = random_corpus()
        random_cases = []
        for text, res in zip(randoms, convert_all(exe, randoms)):
            if "gbnf" in res and has_rule_cycle(res["gbnf"]):
                continue
            entry = dict(schema=text)
            if "error" in res:
                entry["error"] = True
            else:
                entry["gbnf_sha256"] = hashlib.sha256(res["gbnf"].encode()).hexdigest()
            random_cases.append(entry)
    for s in surprises:
        print("note: llama.cpp decided differently from the corpus' expectation:", s, file=sys.stderr)
    golden = dict(
        reference="llama.cpp's json_schema_to_grammar (common/json-schema-to-grammar.cpp) and grammar sampler "
                  "(llama_sampler_init_grammar), vendor/llama.cpp of the llama-cpp-python sdist",
        generator="tests/oracles/json_schema_grammar_oracle.py",
        llama_cpp_python=L.__version__,
        vocab=VOCAB,
        cases=cases,
        random_seed=RANDOM_SEED,
        random_cases=random_cases)
    path = os.path.join(ROOT, "tests", "golden", "json_schema_grammar.json")
    with open(path, "w") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {path}: {len(cases)} schemas, {n_inst} instances, "
          f"{sum('error' in c for c in cases)} error cases; {len(random_cases)} random schemas, "
          f"{sum('error' in c for c in random_cases)} of them errors")


if __name__ == "__main__":
    main()
