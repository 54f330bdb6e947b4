// The safetensors reader over files written by the safetensors package and over
// malformed files (tests/fixtures/make_hf_fixtures.py): each malformation has a named error.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "loaders/safetensors_file.h"
#include "loaders/safetensors_index.h"
#include "simdjson.h"
#include "test_paths.h"

using namespace uaii;
using namespace uaii::safetensors;

namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

std::string BadFile(const std::string& name) { return test::HfFixture("safetensors/bad_" + name + ".safetensors"); }

}  // namespace

TEST_CASE("safetensors: valid file written by the safetensors package", "[safetensors]") {
  auto f = File::Open(test::HfFixture("safetensors/valid.safetensors"));
  REQUIRE(f.ok());
  const Header& h = (*f)->header();
  REQUIRE(h.tensors.size() == 5);
  REQUIRE(h.metadata.size() == 1);
  CHECK(h.metadata[0] == std::make_pair(std::string("format"), std::string("pt")));
  const TensorInfo* t = h.Find("f32");
  REQUIRE(t != nullptr);
  CHECK(t->dtype == Dtype::F32);
  CHECK(t->shape == std::vector<int64_t>{3, 5});
  CHECK(t->bytes() == 60);
  CHECK((*f)->FileOffset(*t) == h.data_start + t->begin);
  CHECK(h.data_start == 8 + h.header_bytes);
  CHECK(h.Find("empty")->bytes() == 0);
  CHECK(ToTensorType(Dtype::BF16) == TensorType::BF16);
  CHECK(!ToTensorType(Dtype::U8).has_value());
}

TEST_CASE("safetensors: MaterializeF32 matches numpy for F32/F16/BF16/I8/U8", "[safetensors]") {
  std::ifstream in(test::HfFixture("safetensors/valid.expected.json"));
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  simdjson::dom::parser parser;
  simdjson::dom::element expected = parser.parse(ss.str());
  for (const char* file : {"valid.safetensors", "valid_bf16.safetensors"}) {
    auto f = File::Open(test::HfFixture(std::string("safetensors/") + file));
    REQUIRE(f.ok());
    for (const auto& t : (*f)->header().tensors) {
      INFO(t.name);
      auto got = MaterializeF32(**f, t);
      REQUIRE(got.ok());
      simdjson::dom::array want = expected[t.name]["values"];
      REQUIRE(got->size() == want.size());
      size_t i = 0;
      for (double v : want) CHECK((*got)[i++] == static_cast<float>(v));  // exact: every promotion is exact
    }
  }
}

TEST_CASE("safetensors: malformed files give named errors", "[safetensors]") {
  const std::pair<const char*, const char*> cases[] = {
      {"truncated", "truncated"},
      {"truncated_data", "out of range"},
      {"header_beyond_file", "beyond the file"},
      {"header_too_large", "header too large"},
      {"invalid_json", "invalid JSON header"},
      {"overlapping", "overlapping tensors"},
      {"out_of_range", "out of range"},
      {"size_mismatch", "size mismatch"},
      {"unknown_dtype", "unknown dtype \"Q4\""},
      {"duplicate_name", "duplicate tensor name \"a\""},
      {"negative_offset", "data_offsets must be non-negative integers"},
      {"not_object", "does not start with"},
      {"non_utf8_name", "UTF-8"},
      {"huge_dims", "shape too large"},
      {"shape_bytes_mismatch", "size mismatch"},
  };
  for (auto [name, want] : cases) {
    INFO(name);
    auto f = File::Open(BadFile(name));
    REQUIRE(!f.ok());
    CHECK_THAT(Message(f.status()), Catch::Contains(want));
    CHECK_THAT(Message(f.status()), Catch::Contains(BadFile(name)));  // names the file
  }
}

TEST_CASE("safetensors: header parsing from memory (dry runs)", "[safetensors]") {
  uint8_t prefix[8] = {0x10, 0, 0, 0, 0, 0, 0, 0};
  CHECK(*ParseHeaderLength(prefix, std::nullopt, "u") == 16);
  uint8_t huge[8] = {0, 0, 0, 0, 0, 0, 0, 0x80};
  CHECK_THAT(Message(ParseHeaderLength(huge, std::nullopt, "u").status()), Catch::Contains("header too large"));
  auto h = ParseHeader(R"({"w":{"dtype":"BF16","shape":[4,2],"data_offsets":[0,16]}})", std::nullopt, "url");
  REQUIRE(h.ok());
  CHECK(h->data_bytes == 16);
  // Without the file size only the header's own consistency is checked.
  CHECK(!ParseHeader(R"({"w":{"dtype":"BF16","shape":[4,2],"data_offsets":[0,15]}})", std::nullopt, "u").ok());
  CHECK_THAT(Message(ParseHeader(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", std::nullopt,
                                 "u").status()),
             Catch::Contains("unexpected field"));
  CHECK_THAT(Message(ParseHeader(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", std::nullopt,
                                 "u").status()),
             Catch::Contains("invalid shape entry"));
  CHECK_THAT(Message(ParseHeader(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})",
                                 std::nullopt, "u").status()),
             Catch::Contains("shape too large"));
  CHECK_THAT(Message(ParseHeader(R"({"__metadata__":{"a":1}})", std::nullopt, "u").status()),
             Catch::Contains("is not a string"));
  // Sub-byte F4: shape must fill whole bytes.
  CHECK(ParseHeader(R"({"w":{"dtype":"F4","shape":[4],"data_offsets":[0,2]}})", std::nullopt, "u").ok());
  CHECK_THAT(Message(ParseHeader(R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", std::nullopt,
                                 "u").status()),
             Catch::Contains("whole bytes"));
}

TEST_CASE("safetensors: index parsing and safe shard paths", "[safetensors]") {
  auto idx = ParseIndex(R"({"metadata":{"total_size":32},"weight_map":{"b":"m-2.safetensors","a":"m-1.safetensors",
                            "c":"m-1.safetensors"}})",
                        "index.json");
  REQUIRE(idx.ok());
  CHECK(idx->total_size == 32);
  CHECK(idx->shards == std::vector<std::string>{"m-1.safetensors", "m-2.safetensors"});
  for (const char* bad : {"../evil.safetensors", "/etc/passwd", "a/../../b", "a\\b", "", "./x", "a//b"}) {
    INFO(bad);
    CHECK(!IsSafeRelativePath(bad));
    std::string json = std::string(R"({"weight_map":{"a":")") + (std::string(bad) == "a\\b" ? "a\\\\b" : bad) + "\"}}";
    CHECK(!ParseIndex(json, "i").ok());
  }
  CHECK(IsSafeRelativePath("sub/dir/model.safetensors"));
  CHECK_THAT(Message(ParseIndex(R"({"metadata":{}})", "i").status()), Catch::Contains("weight_map"));
  CHECK_THAT(Message(ParseIndex(R"({"weight_map":{}})", "i").status()), Catch::Contains("empty"));
}

TEST_CASE("safetensors: seeded mutations of a valid file never crash", "[safetensors]") {
  std::ifstream in(test::HfFixture("safetensors/valid.safetensors"), std::ios::binary);
  REQUIRE(in);
  std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(good.size() > 16);
  uint64_t state = 0x9E3779B97F4A7C15ull;  // xorshift64: reproducible
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bytes = good;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = next() % bytes.size();
      switch (next() % 4) {
        case 0: bytes[pos] = static_cast<char>(next()); break;                      // flip a byte
        case 1: bytes.resize(pos + 1); break;                                       // truncate
        case 2: bytes[pos] = "{}[]\",:0123456789-"[next() % 18]; break;            // JSON-ish byte
        case 3: bytes.insert(pos, 1, static_cast<char>(next())); break;             // insert
      }
    }
    if (bytes.size() < 8) { ++rejected; continue; }
    auto n = ParseHeaderLength(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "fuzz");
    if (!n.ok()) { ++rejected; continue; }
    auto h = ParseHeader(std::string_view(bytes).substr(8, *n), bytes.size() - 8 - *n, "fuzz");
    if (!h.ok()) { ++rejected; continue; }
    for (const auto& t : h->tensors) {  // whatever passed is in range and consistent
      CHECK(t.end <= bytes.size() - 8 - *n);
      CHECK(t.end - t.begin == t.numel() * GetDtypeInfo(t.dtype).bits / 8);
    }
  }
  CHECK(rejected > 1000);
}
