// The view binder (runtime/view_weights.h) on a safetensors file written here: each
// view kind binds the elements its declaration says (identity and row slices
// zero-copy into the mapping, the rest as copies), and hostile references (bytes past
// the file, a header that disagrees, parts that disagree) are errors naming the cause.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "formats/fp16.h"
#include "runtime/view_weights.h"

namespace uaii::runtime {
namespace {

namespace fs = std::filesystem;

struct Stored {
  std::string name, dtype;
  ir::Shape shape;
  std::string bytes;
};

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// A safetensors file of `tensors` (in order, back to back); returns each tensor's
// absolute offset.
std::vector<uint64_t> WriteSafetensors(const std::string& path, const std::vector<Stored>& tensors) {
  std::string header = "{", data;
  std::vector<uint64_t> begin;
  for (const auto& t : tensors) {
    std::string shape;
    for (int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    header += (header.size() > 1 ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"" + t.dtype +
              "\",\"shape\":[" + shape + "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    begin.push_back(data.size());
    data += t.bytes;
  }
  header += "}";
  while ((8 + header.size()) % 8) header += ' ';
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header << data;
  for (auto& b : begin) b += 8 + n;
  return begin;
}

class ViewFixture {
 public:
  ViewFixture() {
    // Per process: ctest runs this file's cases in parallel.
    dir_ = fs::temp_directory_path() / ("uaii_view_weights_test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path = (dir_ / "m.safetensors").string();
    std::vector<uint16_t> bf16, f16;
    for (int i = 0; i < 6; ++i) bf16.push_back(Fp32ToBf16(0.5f * i - 1.0f));
    for (int i = 0; i < 6; ++i) f16.push_back(Fp32ToFp16(0.25f * i));
    std::vector<float> rows(6 * 4), e0(2 * 3), e1(2 * 3);
    for (int i = 0; i < 24; ++i) rows[i] = static_cast<float>(i);
    for (int i = 0; i < 6; ++i) e0[i] = 100.0f + i, e1[i] = 200.0f + i;
    std::vector<uint8_t> u8 = {0, 7, 255};
    stored = {{"rows", "F32", {6, 4}, Bytes(rows)}, {"bf16", "BF16", {2, 3}, Bytes(bf16)},
              {"f16", "F16", {2, 3}, Bytes(f16)},   {"e0", "F32", {2, 3}, Bytes(e0)},
              {"e1", "F32", {2, 3}, Bytes(e1)},     {"u8", "U8", {3}, Bytes(u8)}};
    offsets = WriteSafetensors(path, stored);
  }
  ~ViewFixture() { fs::remove_all(dir_); }

  ir::TensorRef Ref(const std::string& name) const {
    for (size_t i = 0; i < stored.size(); ++i)
      if (stored[i].name == name) {
        ir::TensorRef r{path, name, offsets[i], stored[i].bytes.size()};
        r.view.emplace().source_dtype = stored[i].dtype;
        r.view->source_shape = stored[i].shape;
        return r;
      }
    FAIL("no stored tensor " << name);
    return {};
  }

  std::string path;
  std::vector<Stored> stored;
  std::vector<uint64_t> offsets;

 private:
  fs::path dir_;
};

ir::Graph OneWeight(const std::string& name, TensorType dtype, ir::Shape shape, ir::TensorRef ref) {
  ir::Graph g;
  g.tensors.push_back({name, dtype, std::move(shape), std::move(ref)});
  return g;
}

std::vector<float> F32(const BoundWeight& w) {
  std::vector<float> v(w.bytes / 4);
  std::memcpy(v.data(), w.data, w.bytes);
  return v;
}

std::string Message(const absl::Status& st) { return std::string(st.message()); }

}  // namespace

TEST_CASE("view binder: identity and row slices point into the mapping", "[views]") {
  ViewFixture fx;
  ir::Graph g = OneWeight("whole", TensorType::F32, {6, 4}, fx.Ref("rows"));
  ir::TensorRef slice = fx.Ref("rows");
  slice.view->row_begin = 2;
  slice.view->row_count = 3;
  g.tensors.push_back({"slice", TensorType::F32, {3, 4}, slice});
  ir::TensorRef tail = fx.Ref("rows");
  tail.view->row_begin = 5;  // row_count -1: to the end
  g.tensors.push_back({"tail", TensorType::F32, {4}, tail});  // [1, 4] read as [4]
  auto ws = BindGraphWeights(g);
  INFO((ws.ok() ? "" : Message(ws.status())));
  REQUIRE(ws.ok());
  const BoundWeight* whole = (*ws)->Find("whole");
  const BoundWeight* s = (*ws)->Find("slice");
  const BoundWeight* t = (*ws)->Find("tail");
  REQUIRE((whole && s && t));
  CHECK(whole->file == fx.path);
  CHECK(whole->offset == fx.offsets[0]);
  CHECK(whole->bytes == 96);
  CHECK(whole->row_bytes == 16);
  CHECK(s->data == whole->data + 2 * 16);  // zero-copy: the same mapping
  CHECK(s->offset == fx.offsets[0] + 32);
  CHECK(s->file == fx.path);
  CHECK(F32(*s) == std::vector<float>{8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19});
  CHECK(F32(*t) == std::vector<float>{20, 21, 22, 23});
  CHECK(t->shape == ir::Shape{4});
}

TEST_CASE("view binder: transpose, widen, add-one, concat and synthetic values are copies", "[views]") {
  ViewFixture fx;
  ir::TensorRef tr = fx.Ref("f16");
  tr.view->transpose = true;  // [2, 3] -> [3, 2]
  ir::Graph g = OneWeight("transposed", TensorType::F16, {3, 2}, tr);
  ir::TensorRef wide = fx.Ref("bf16");
  wide.view->widen_f32 = true;
  wide.view->add_one = true;
  g.tensors.push_back({"norm", TensorType::F32, {6}, wide});
  ir::TensorRef wide_t = fx.Ref("bf16");
  wide_t.view->widen_f32 = true;
  wide_t.view->transpose = true;
  wide_t.view->row_begin = 1;  // row 1 of [2, 3], read [3, 1]
  g.tensors.push_back({"sliced_t", TensorType::F32, {3, 1}, wide_t});
  ir::TensorRef u8 = fx.Ref("u8");
  u8.view->widen_f32 = true;
  g.tensors.push_back({"u8", TensorType::F32, {3}, u8});
  ir::TensorRef bank;
  bank.view.emplace().parts = {fx.Ref("e0"), fx.Ref("e1")};
  g.tensors.push_back({"bank", TensorType::F32, {2, 2, 3}, bank});  // stacked: [2, 3] parts
  ir::TensorRef rows;
  ir::TensorRef row1 = fx.Ref("e1");
  row1.view->row_begin = 1;
  rows.view.emplace().parts = {fx.Ref("e0"), row1};
  g.tensors.push_back({"rows3", TensorType::F32, {3, 3}, rows});  // [2, 3] + [1, 3] along dim 0
  ir::TensorRef synth;
  synth.view.emplace().values = {0.5f, 1e-20f};
  g.tensors.push_back({"synth", TensorType::F32, {2}, synth});
  auto ws = BindGraphWeights(g);
  INFO((ws.ok() ? "" : Message(ws.status())));
  REQUIRE(ws.ok());

  const BoundWeight* t = (*ws)->Find("transposed");
  REQUIRE(t);
  CHECK(t->file.empty());  // a copy: resident, never streamed from the file
  std::vector<float> got;
  for (int i = 0; i < 6; ++i) got.push_back(Fp16ToFp32(reinterpret_cast<const uint16_t*>(t->data)[i]));
  CHECK(got == std::vector<float>{0.0f, 0.75f, 0.25f, 1.0f, 0.5f, 1.25f});  // source [[0 .25 .5] [.75 1 1.25]]
  CHECK(t->row_bytes == 4);
  CHECK(F32(*(*ws)->Find("norm")) == std::vector<float>{0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f});  // (0.5 i - 1) + 1
  CHECK(F32(*(*ws)->Find("sliced_t")) == std::vector<float>{0.5f, 1.0f, 1.5f});
  CHECK(F32(*(*ws)->Find("u8")) == std::vector<float>{0, 7, 255});
  CHECK(F32(*(*ws)->Find("bank")) == std::vector<float>{100, 101, 102, 103, 104, 105, 200, 201, 202, 203, 204, 205});
  CHECK(F32(*(*ws)->Find("rows3")) == std::vector<float>{100, 101, 102, 103, 104, 105, 203, 204, 205});
  CHECK(F32(*(*ws)->Find("synth")) == std::vector<float>{0.5f, 1e-20f});
}

TEST_CASE("view binder: hostile references are errors naming the cause", "[views]") {
  ViewFixture fx;
  auto bind = [&](ir::TensorRef r, TensorType dtype, ir::Shape shape) {
    return BindGraphWeights(OneWeight("w", dtype, std::move(shape), std::move(r))).status();
  };
  const uint64_t file_bytes = fs::file_size(fx.path);
  {
    ir::TensorRef r = fx.Ref("u8");  // bytes past the end of the file
    r.offset = file_bytes - 1;
    r.view->widen_f32 = true;
    auto st = bind(r, TensorType::F32, {3});
    CHECK(absl::IsOutOfRange(st));
    CHECK_THAT(Message(st), Catch::Contains("outside the file of " + std::to_string(file_bytes) + " bytes"));
    CHECK_THAT(Message(st), Catch::Contains("weight 'w' view source"));
  }
  {
    ir::TensorRef r = fx.Ref("e0");  // offset inside the file, but not where the header puts e0
    r.offset += 4;
    auto st = bind(r, TensorType::F32, {2, 3});
    CHECK(absl::IsInvalidArgument(st));
    CHECK_THAT(Message(st), Catch::Contains("the file has F32 [2,3]"));
  }
  {
    ir::TensorRef r = fx.Ref("e0");
    r.tensor = "e9";
    CHECK_THAT(Message(bind(r, TensorType::F32, {2, 3})), Catch::Contains("e9: tensor not in the file"));
  }
  {
    ir::TensorRef r = fx.Ref("bf16");  // declared F16: the file says BF16
    r.view->source_dtype = "F16";
    CHECK_THAT(Message(bind(r, TensorType::F16, {2, 3})), Catch::Contains("the file has BF16"));
  }
  {
    ir::TensorRef bank;  // parts of different types
    bank.view.emplace().parts = {fx.Ref("e0"), fx.Ref("bf16")};
    auto st = bind(bank, TensorType::F32, {2, 2, 3});
    CHECK(absl::IsInvalidArgument(st));
    CHECK_THAT(Message(st), Catch::Contains("bad tensor: 'w' view: concat parts disagree: part 1"));
  }
  {
    ir::TensorRef r = fx.Ref("rows");
    r.file = fx.path + ".missing";
    CHECK_FALSE(bind(r, TensorType::F32, {6, 4}).ok());
  }
}

}  // namespace uaii::runtime
