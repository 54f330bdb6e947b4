// GGUF reader: every value type on a valid file, and one named error per defect on the
// corrupt variants written by tests/fixtures/make_gguf_fixtures.py.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "formats/gguf_file.h"
#include "loaders/gguf_summary.h"

using uaii::gguf::File;
using uaii::gguf::ValueType;

namespace {

std::string FixturePath(const std::string& name) {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/gguf/" + name;
}

std::unique_ptr<File> OpenValid() {
  auto f = File::Open(FixturePath("valid.gguf"));
  INFO((f.ok() ? "" : std::string(f.status().message())));
  REQUIRE(f.ok());
  return *std::move(f);
}

}  // namespace

TEST_CASE("gguf: reads every metadata value type", "[gguf]") {
  auto f = OpenValid();
  CHECK(f->version() == 3);
  CHECK(f->alignment() == 32);
  CHECK(*f->GetString("general.architecture") == "llama");
  CHECK(f->Find("test.u8")->num.u == 200);
  CHECK(f->Find("test.i8")->num.i == -100);
  CHECK(f->Find("test.u16")->num.u == 60000);
  CHECK(f->Find("test.i16")->num.i == -30000);
  CHECK(*f->GetInt("test.u32") == 4000000000LL);
  CHECK(*f->GetInt("test.i32") == -2000000000LL);
  CHECK(f->Find("test.u64")->num.u == (uint64_t{1} << 63) + 5);
  CHECK(!f->GetInt("test.u64").ok());  // does not fit int64: an error, not a wrap-around
  CHECK(*f->GetInt("test.i64") == -(int64_t{1} << 62));
  CHECK(*f->GetFloat("test.f32") == 0.25);
  CHECK(*f->GetFloat("test.f64") == -1.5e300);
  CHECK(*f->GetBool("test.bool") == true);
  CHECK(*f->GetString("test.str") == "h\xC3\xA9llo \xE2\x96\x81 \xE4\xB8\x96\xE7\x95\x8C");

  auto arr = f->GetArray("test.arr_i32", ValueType::INT32);
  REQUIRE(arr.ok());
  REQUIRE((*arr)->elems.size() == 3);
  CHECK((*arr)->elems[1].num.i == -2);

  auto nested = f->GetArray("test.arr_nested", ValueType::ARRAY);
  REQUIRE(nested.ok());
  REQUIRE((*nested)->elems.size() == 2);
  CHECK((*nested)->elems[1].elems.size() == 3);
  CHECK((*nested)->elems[1].elems[2].as_int() == 5);

  auto strs = f->GetArray("test.arr_str", ValueType::STRING);
  REQUIRE(strs.ok());
  CHECK((*strs)->elems[1].str.empty());
  CHECK((*strs)->elems[2].str == "ccc");
  auto f64 = f->GetArray("test.arr_f64", ValueType::FLOAT64);
  REQUIRE(f64.ok());
  CHECK((*f64)->elems[1].as_double() == -0.5);
}

TEST_CASE("gguf: typed accessors name the key and the type", "[gguf]") {
  auto f = OpenValid();
  auto missing = f->GetInt("llama.no_such_key");
  REQUIRE(!missing.ok());
  CHECK(std::string(missing.status().message()) == "GGUF metadata llama.no_such_key: missing");
  auto wrong = f->GetString("test.u32");
  REQUIRE(!wrong.ok());
  CHECK_THAT(std::string(wrong.status().message()), Catch::Contains("test.u32") && Catch::Contains("expected string, got uint32"));
  auto wrong_elem = f->GetArray("test.arr_i32", ValueType::STRING);
  REQUIRE(!wrong_elem.ok());
  CHECK_THAT(std::string(wrong_elem.status().message()), Catch::Contains("expected array of string, got array of int32"));
}

TEST_CASE("gguf: tensor infos point at the right bytes", "[gguf]") {
  auto f = OpenValid();
  REQUIRE(f->tensors().size() == 15);
  const char* names[] = {"t.f32", "t.f16", "t.bf16", "t.q4_0", "t.q4_1", "t.q5_0", "t.q5_1",
                         "t.q8_0", "t.q2_k", "t.q3_k", "t.q4_k", "t.q5_k", "t.q6_k", "t.q8_k"};
  for (int salt = 0; salt < 14; ++salt) {
    const auto* t = f->FindTensor(names[salt]);
    INFO(names[salt]);
    REQUIRE(t != nullptr);
    CHECK(t->dims.size() == 2);
    CHECK(t->dims[1] == 3);
    CHECK(t->offset % f->alignment() == 0);
    CHECK(t->bytes == t->dims[1] * (t->dims[0] / t->traits->block_size) * t->traits->type_size);
    // Bytes follow the generator's pattern: byte i = (i * 131 + salt * 7) & 0xff.
    bool ok = true;
    for (uint64_t i = 0; i < t->bytes; ++i)
      ok &= t->data[i] == static_cast<uint8_t>((i * 131 + salt * 7) & 0xFF);
    CHECK(ok);
  }
  CHECK(f->FindTensor("missing") == nullptr);
}

TEST_CASE("gguf: summary of the valid fixture", "[gguf]") {
  auto f = OpenValid();
  auto s = uaii::SummarizeGguf(*f);
  REQUIRE(s.ok());
  CHECK(s->architecture == "llama");
  CHECK(s->tensor_count == 15);
  CHECK(s->tensors_by_type.at("Q4_K") == 1);
  CHECK(s->tensors_by_type.at("F32") == 2);
  CHECK(s->largest_tensor == "token_embd.weight");
  CHECK(s->vocab_size == 8);
  REQUIRE(s->end_of_generation.size() == 1);
  CHECK(s->end_of_generation[0].piece == "</s>");
}

// Each corrupt fixture and a fragment of the error it must produce.
struct Corrupt {
  const char* file;
  const char* error;
};

TEST_CASE("gguf: malformed files are rejected with a named error", "[gguf][malformed]") {
  const Corrupt cases[] = {
      {"bad_magic", "not a GGUF file (bad magic"},
      {"version_1", "unsupported GGUF version 1"},
      {"big_endian", "big-endian"},
      {"truncated_header", "truncated GGUF file: tensor count at byte 8"},
      {"truncated_metadata", "truncated GGUF file"},
      {"truncated_tensor_info", "tensor count 15 exceeds what the"},
      {"truncated_data", "runs past the end of the file"},
      {"absurd_tensor_count", "tensor count 4611686018427387904 exceeds"},
      {"absurd_kv_count", "metadata count 2305843009213693952 exceeds"},
      {"absurd_string_length", "GGUF metadata test.str: string length 1152921504606846976 exceeds"},
      {"absurd_array_count", "GGUF metadata test.arr_i32: array count 576460752303423488"},
      {"absurd_dim", "tensor t.f32: element count overflows"},
      {"dims_overflow", "tensor t.f32: element count overflows"},
      {"zero_dim", "tensor t.f16: dimension 0 is 0"},
      {"too_many_dims", "tensor t.f16: 9 dimensions"},
      {"unknown_value_type", "GGUF metadata test.u8: unknown value type 99"},
      {"unknown_array_element_type", "GGUF metadata test.arr_i32: unknown array element type 77"},
      {"invalid_bool", "GGUF metadata test.bool: invalid bool byte 7"},
      {"duplicate_key", "duplicate metadata key test.u8"},
      {"duplicate_tensor_name", "duplicate tensor name t.q4_0"},
      {"offset_past_end", "tensor t.q6_k: data [1099511627776"},
      {"misaligned_offset", "tensor t.q6_k: data offset"},
      {"overlapping_tensors", "overlap"},
      {"unknown_tensor_type", "unsupported tensor type type#99 in t.q4_0"},
      {"row_not_block_multiple", "tensor t.q4_k: row length 100 is not a multiple of Q4_K's block size 256"},
      {"alignment_not_power_of_two", "general.alignment: 48 is not a power of two"},
      {"nested_arrays_too_deep", "GGUF metadata test.deep: arrays nested deeper than"},
      {"tokens_wrong_element_type", "tokenizer.ggml.tokens: expected array of string, got array of"},
      {"hparam_block_count_zero", "llama.block_count: 0 is out of range"},
      {"hparam_embedding_huge", "llama.embedding_length: 2147483648 is out of range"},
      {"hparam_heads_inconsistent", "llama.attention.head_count_kv: 3 does not divide"},
      {"hparam_block_count_missing", "GGUF metadata llama.block_count: missing"},
      {"hparam_embedding_mismatch", "tensor token_embd.weight: row length 128 does not match llama.embedding_length (256)"},
      {"hparam_block_count_beyond_blocks", "llama.block_count: 4000, but the file holds no tensor of block 2 (2 blocks present)"},
      {"vocab_size_mismatch", "llama.vocab_size: 9 disagrees with the 8 tokens of tokenizer.ggml.tokens"},
      {"special_id_outside_vocab", "tokenizer.ggml.bos_token_id: 999999 is outside the vocabulary of 8 tokens"},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    std::string path = FixturePath(std::string("corrupt/") + c.file + ".gguf");
    auto f = File::Open(path);
    std::string message;
    if (f.ok()) {
      auto s = uaii::SummarizeGguf(**f);  // hyper-parameter defects surface here
      REQUIRE(!s.ok());
      message = std::string(s.status().message());
    } else {
      message = std::string(f.status().message());
    }
    CHECK_THAT(message, Catch::Contains(c.error));
  }
}

TEST_CASE("gguf: missing file and empty file", "[gguf][malformed]") {
  auto f = File::Open(FixturePath("does_not_exist.gguf"));
  REQUIRE(!f.ok());
  CHECK_THAT(std::string(f.status().message()), Catch::Contains("does_not_exist.gguf: cannot open"));
}
