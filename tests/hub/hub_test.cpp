// The offline parts of `uaii pull`: SHA-256, listing parsing, name safety, file
// selection, repo ids, URL encoding and the preset fit estimate. (The network parts run
// against a fake Hub in tests/python/test_pull.py.)
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "hub/fit.h"
#include "hub/hub_api.h"
#include "hub/pull.h"
#include "util/sha256.h"

using namespace uaii;
using namespace uaii::hub;

namespace {
std::string Message(const absl::Status& s) { return std::string(s.message()); }
}  // namespace

TEST_CASE("hub: SHA-256 known answers (FIPS 180-2)", "[hub]") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Streaming in uneven pieces equals one shot; a million 'a' is the third FIPS vector.
  Sha256 h;
  std::string a(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.Update(a.data(), a.size());
  CHECK(h.HexDigest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  const auto path = std::filesystem::temp_directory_path() / ("uaii_sha_" + std::to_string(::getpid()));
  { std::ofstream(path) << "abc"; }
  CHECK(*FileSha256(path.string()) == Sha256Hex("abc"));
  std::filesystem::remove(path);
  CHECK(!FileSha256("/nonexistent/file").ok());
}

TEST_CASE("hub: listing parsing", "[hub]") {
  auto l = ParseListing(R"({"sha":"abc","siblings":[{"rfilename":"config.json","size":12},
      {"rfilename":"model.safetensors","size":134,"lfs":{"sha256":"BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD","size":99}}]})",
                        "u");
  REQUIRE(l.ok());
  CHECK(l->sha == "abc");
  REQUIRE(l->files.size() == 2);
  CHECK(*l->files[0].size == 12);
  CHECK(l->files[0].sha256.empty());
  CHECK(*l->files[1].size == 99);  // lfs.size wins over the pointer's size
  CHECK(l->files[1].sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK_THAT(Message(ParseListing(R"({"siblings":[{"rfilename":"x","lfs":{"sha256":"zz"}}]})", "u").status()),
             Catch::Contains("not a SHA-256"));
  CHECK_THAT(Message(ParseListing(R"({"id":"x"})", "u").status()), Catch::Contains("siblings"));
  CHECK_THAT(Message(ParseListing("{oops", "u").status()), Catch::Contains("invalid JSON"));
}

TEST_CASE("hub: hostile names are refused", "[hub]") {
  for (const char* bad : {"../evil", "/etc/passwd", "a/../../b", "a\\b", "./x", "a//b", "x.partial", "a\nb"}) {
    INFO(bad);
    RepoListing l;
    l.files.push_back({"config.json", 2, ""});
    l.files.push_back({bad, 2, ""});
    CHECK(!ValidateListing(l).ok());
  }
  RepoListing ok;
  ok.files.push_back({"original/params.json", 2, ""});
  CHECK(ValidateListing(ok).ok());
}

TEST_CASE("hub: default selection skips other weight formats", "[hub]") {
  std::vector<HubFile> all = {{"config.json", {}, ""},          {"model.safetensors", {}, ""},
                              {"pytorch_model.bin", {}, ""},    {"original/consolidated.00.pth", {}, ""},
                              {"tokenizer.json", {}, ""},       {"model.gguf", {}, ""}};
  std::vector<std::string> names;
  for (const auto& f : SelectFiles(all, {})) names.push_back(f.path);
  CHECK(names == std::vector<std::string>{"config.json", "model.safetensors", "tokenizer.json"});
  names.clear();
  for (const auto& f : SelectFiles(all, {"*.json", "original/*"})) names.push_back(f.path);
  CHECK(names == std::vector<std::string>{"config.json", "original/consolidated.00.pth", "tokenizer.json"});
  // Without safetensors nothing is filtered by default (the loader will explain what it needs).
  std::vector<HubFile> bin_only = {{"config.json", {}, ""}, {"pytorch_model.bin", {}, ""}};
  CHECK(SelectFiles(bin_only, {}).size() == 2);
}

TEST_CASE("hub: repository ids revisions and URLs", "[hub]") {
  CHECK(ValidateRepoId("meta-llama/Llama-3.2-1B").ok());
  CHECK(ValidateRepoId("gpt2").ok());
  for (const char* bad : {"", "../x", "a/b/c", "/a", "a/", "a/..", "a b/c", "a/.hidden", "a?b/c"}) {
    INFO(bad);
    CHECK(!ValidateRepoId(bad).ok());
  }
  CHECK(ValidateRevision("refs/pr/1").ok());
  CHECK(!ValidateRevision("a b").ok());
  CHECK(!ValidateRevision("../main").ok());
  CHECK(ResolveUrl("https://huggingface.co", "org/m", "refs/pr/1", "sub dir/a+b.json") ==
        "https://huggingface.co/org/m/resolve/refs%2Fpr%2F1/sub%20dir/a%2Bb.json");
}

TEST_CASE("hub: presets and the fit estimate", "[hub]") {
  REQUIRE(FindPreset("laptop") != nullptr);
  CHECK(FindPreset("laptop")->budget_bytes == 8ull << 30);
  CHECK(FindPreset("phone")->kv_window == 512);
  CHECK(FindPreset("off")->budget_bytes == 0);
  CHECK(FindPreset("tablet") == nullptr);
  auto cfg = *hf::ParseHfConfig(R"({"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,
      "num_key_value_heads":8,"max_position_embeddings":131072,"sliding_window":1024})", "c");
  std::vector<bool> arch(32, false);
  // Llama-3-8B-like: 32 layers * 2 * 8 heads * 128 * 2 bytes = 128 KiB per token.
  auto f = EstimateFit(cfg, arch, 16ull << 30, *FindPreset("laptop"));
  CHECK(f.kv_window == 2048);
  CHECK(f.kv_bytes == 128ull * 1024 * 2048);
  CHECK(!f.fits);
  CHECK(EstimateFit(cfg, arch, 16ull << 30, *FindPreset("desktop")).fits);
  auto none = EstimateFit(cfg, arch, 1, *FindPreset("none"));
  CHECK(none.kv_window == 131072);
  CHECK(none.fits);
  // Sliding layers keep only their window.
  arch.assign(32, true);
  CHECK(EstimateFit(cfg, arch, 0, *FindPreset("laptop")).kv_bytes == 128ull * 1024 * 1024);
}

TEST_CASE("hub: server responses read as data (statuses, listing, header ranges)", "[hub]") {
  const std::string u = "https://h/x";
  CHECK(DownloadStatusError(u, 200).ok());
  CHECK(DownloadStatusError(u, 206).ok());
  CHECK(DownloadStatusError(u, 0).ok());  // no response: the transfer error decides
  CHECK(DownloadStatusError(u, 416).code() == absl::StatusCode::kOutOfRange);
  CHECK(DownloadStatusError(u, 403).code() == absl::StatusCode::kPermissionDenied);
  CHECK(DownloadStatusError(u, 404).code() == absl::StatusCode::kNotFound);
  CHECK(DownloadStatusError(u, 302).code() == absl::StatusCode::kUnavailable);

  CHECK(ListingFromResponse({401, ""}, u, "o/m", "main").status().code() == absl::StatusCode::kPermissionDenied);
  CHECK_THAT(Message(ListingFromResponse({404, ""}, u, "o/m", "dev").status()), Catch::Contains("o/m at revision dev"));
  CHECK(ListingFromResponse({500, "{}"}, u, "o/m", "main").status().code() == absl::StatusCode::kUnavailable);
  CHECK(ListingFromResponse({200, R"({"siblings":[]})"}, u, "o/m", "main").ok());

  const std::string json = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string pre(8, '\0');
  pre[0] = static_cast<char>(json.size());
  auto n = HeaderLengthFromRange(u, {206, pre}, 8 + json.size() + 8);
  REQUIRE(n.ok());
  CHECK(*n == json.size());
  CHECK(!HeaderLengthFromRange(u, {206, pre.substr(0, 7)}, std::nullopt).ok());           // short body
  CHECK(!HeaderLengthFromRange(u, {404, pre}, std::nullopt).ok());                        // HTTP error
  CHECK_THAT(Message(HeaderLengthFromRange(u, {206, pre}, 20).status()), Catch::Contains("beyond"));  // past the file
  auto h = HeaderFromRange(u, {206, json}, *n, 8 + json.size() + 8);
  REQUIRE(h.ok());
  CHECK(h->tensors.size() == 1);
  CHECK(!HeaderFromRange(u, {200, json}, *n, std::nullopt).ok());               // Range ignored
  CHECK(!HeaderFromRange(u, {206, json.substr(1)}, *n, std::nullopt).ok());     // wrong length
  CHECK(!HeaderFromRange(u, {206, json}, *n, 8 + json.size() + 4).ok());        // data past the listed size
}
