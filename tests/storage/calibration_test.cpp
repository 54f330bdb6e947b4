// The calibration cache (storage/calibration.h): figures under the current key
// (CPU model, thread count, kMatMulKernelVersion) are read back without measuring;
// rates under another key (an older kernel version) are ignored and the current ones
// measured through MatMul and added beside them.
#include <catch2/catch.hpp>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/matmul.h"
#include "storage/calibration.h"

using namespace uaii::storage;
using uaii::TensorType;

namespace {
std::string Dir(const std::string& name) {
  const std::string d = std::string(UAII_FIXTURE_DIR) + "/" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

void WriteCache(const std::string& dir, const std::string& key, double q4_0) {
  std::ofstream(dir + "/calibration.json") << R"({"disk_read_bytes_per_s": 1e9, "cached_read_bytes_per_s": 5e9,
    "memory_bytes_per_s": 1e10, "measured_at": "2026-01-01T00:00:00Z",
    "matmul": {")" << key << R"(": {"Q4_0": )" << q4_0
                                                      << R"(, "Q4_0/interleaved": 0, "Q4_0/warm_stream": 77, "memory_read": 2e10}}})";
}
}  // namespace

TEST_CASE("calibration: the key names the CPU, the threads and the kernel version", "[storage][calibration]") {
  const std::string key = MatMulCalibrationKey(3);
  CHECK(key.find("|threads=3|") != std::string::npos);
  CHECK(key.find("|kernels=" + std::to_string(uaii::kMatMulKernelVersion)) != std::string::npos);
}

TEST_CASE("calibration: cached figures under the current key are used as they are", "[storage][calibration]") {
  const std::string dir = Dir("calibration_cached");
  WriteCache(dir, MatMulCalibrationKey(1), 123);
  auto c = LoadOrMeasureCalibration(dir, 1, {TensorType::Q4_0});
  REQUIRE(c.ok());
  CHECK(c->from_cache);
  CHECK(c->disk_read_bytes_per_s == Approx(1e9));
  CHECK(c->memory_bytes_per_s == Approx(2e10));  // the read bandwidth under the key, not memcpy's
  CHECK(c->matmul_bytes_per_s.at(TensorType::Q4_0) == Approx(123));
  CHECK(c->main_matmul_bytes_per_s == Approx(123));
  CHECK(c->warm_stream_bytes_per_s.at(TensorType::Q4_0) == Approx(77));
  CHECK(c->interleaved_bytes_per_s.count(TensorType::Q4_0) == 0);  // 0 cached: "no such kernel"
  const auto rates = RatesOf(*c);
  CHECK(rates.threads == 1);
  CHECK(rates.matmul_bytes_per_s.at(TensorType::Q4_0) == Approx(123));
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibration: rates of another kernel version are measured again", "[storage][calibration]") {
  const std::string dir = Dir("calibration_stale");
  std::string stale = MatMulCalibrationKey(1);
  stale.replace(stale.find("kernels="), std::string::npos, "kernels=0");
  WriteCache(dir, stale, 123);
  auto c = LoadOrMeasureCalibration(dir, 1, {TensorType::Q4_0});
  REQUIRE(c.ok());
  CHECK(!c->from_cache);
  CHECK(c->disk_read_bytes_per_s == Approx(1e9));  // machine figures kept
  CHECK(c->matmul_bytes_per_s.at(TensorType::Q4_0) > 1e8);  // measured through MatMul
  CHECK(c->matmul_bytes_per_s.at(TensorType::Q4_0) != Approx(123));
  // Both keys are in the file now; a second call reads the new one back.
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.load(dir + "/calibration.json").get(doc) == simdjson::SUCCESS);
  double old_rate = 0, new_rate = 0;
  CHECK(doc["matmul"][stale]["Q4_0"].get_double().get(old_rate) == simdjson::SUCCESS);
  CHECK(doc["matmul"][MatMulCalibrationKey(1)]["Q4_0"].get_double().get(new_rate) == simdjson::SUCCESS);
  CHECK(old_rate == Approx(123));
  auto again = LoadOrMeasureCalibration(dir, 1, {TensorType::Q4_0});
  REQUIRE(again.ok());
  CHECK(again->from_cache);
  CHECK(again->matmul_bytes_per_s.at(TensorType::Q4_0) == Approx(new_rate));
  std::filesystem::remove_all(dir);
}
