// The calibration cache (storage/calibration.h): figures under the current key
// (CPU model, thread count, kMatMulKernelVersion) are read back without measuring;
// rates under another key (an older kernel version) are ignored and the current ones
// measured through MatMul and added beside them. Figures observed on a model's runs
// (FoldObservation) form a weighted mean per model and key; a corrupt or missing file
// falls back to the probe with a note, and an unwritable one fails only the fold.
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

// Observed figures (FoldObservation): learned from runs, per model and matmul key.
TEST_CASE("calibration: a run's figure is folded in as the median of the recent runs, with their spread",
          "[storage][calibration]") {
  const std::string dir = Dir("calibration_observed");
  WriteCache(dir, MatMulCalibrationKey(1), 123);
  const std::string model = "/models/a.gguf|1000";
  auto first = FoldObservation(dir, model, 1, ObservedFigure::kDisk, 2e9);
  REQUIRE(first.ok());
  CHECK(first->bytes_per_s == Approx(2e9));  // the first run replaces the probe outright
  CHECK(first->samples == 1);
  CHECK(!first->updated_at.empty());
  auto second = FoldObservation(dir, model, 1, ObservedFigure::kDisk, 1e9);
  REQUIRE(second.ok());
  CHECK(second->bytes_per_s == Approx(1.5e9));  // the median of two: their mean
  CHECK(second->samples == 2);
  auto third = FoldObservation(dir, model, 1, ObservedFigure::kDisk, 9e9);
  REQUIRE(third.ok());
  CHECK(third->bytes_per_s == Approx(2e9));  // one fast run does not move the median far
  CHECK(third->samples == 3);
  CHECK(third->low() == Approx(1e9));
  CHECK(third->high() == Approx(9e9));
  CHECK(third->recent == std::vector<double>{2e9, 1e9, 9e9});
  REQUIRE(FoldObservation(dir, model, 1, ObservedFigure::kResident, 9e9).ok());

  // Read back under the same model and threads; the probe figures are untouched.
  const Calibration c = LoadCachedCalibration(dir, 1, {TensorType::Q4_0}, model);
  CHECK(c.note.empty());
  CHECK(c.disk_read_bytes_per_s == Approx(1e9));
  CHECK(c.matmul_bytes_per_s.at(TensorType::Q4_0) == Approx(123));
  CHECK(c.observed_key == model + "|" + MatMulCalibrationKey(1));
  REQUIRE(c.observed.count(ObservedFigure::kDisk));
  CHECK(c.observed.at(ObservedFigure::kDisk).samples == 3);
  CHECK(c.observed.count(ObservedFigure::kWarmStream) == 0);
  const MachineRates observed = RatesOf(c);
  CHECK(observed.disk_bytes_per_s == Approx(third->bytes_per_s));
  CHECK(observed.observed_resident_bytes_per_s == Approx(9e9));
  CHECK(observed.observed_warm_stream_bytes_per_s == 0);
  // The ends of the range: each figure at the slowest / fastest of its recent runs.
  CHECK(RatesOf(c, true, Spread::kLow).disk_bytes_per_s == Approx(1e9));
  CHECK(RatesOf(c, true, Spread::kHigh).disk_bytes_per_s == Approx(9e9));
  CHECK(RatesOf(c, true, Spread::kLow).observed_resident_bytes_per_s == Approx(9e9));  // one run: no spread
  const MachineRates probe = RatesOf(c, /*use_observed=*/false);
  CHECK(probe.disk_bytes_per_s == Approx(1e9));
  CHECK(probe.observed_resident_bytes_per_s == 0);

  // Another model, or another thread count, has its own figures (none yet).
  CHECK(LoadCachedCalibration(dir, 1, {TensorType::Q4_0}, "/models/b.gguf|1000").observed.empty());
  CHECK(LoadCachedCalibration(dir, 2, {TensorType::Q4_0}, model).observed.empty());
  CHECK(LoadCachedCalibration(dir, 1, {TensorType::Q4_0}, "").observed.empty());
  // Only the last kRecentRuns are kept: the oldest leave first.
  for (int k = 0; k < static_cast<int>(kRecentRuns); ++k)
    REQUIRE(FoldObservation(dir, model, 1, ObservedFigure::kDisk, 4e9 + k).ok());
  const ObservedRate last = LoadCachedCalibration(dir, 1, {TensorType::Q4_0}, model).observed.at(ObservedFigure::kDisk);
  CHECK(last.recent.size() == kRecentRuns);
  CHECK(last.samples == 3 + static_cast<int64_t>(kRecentRuns));
  CHECK(last.low() == Approx(4e9));
  CHECK(last.bytes_per_s == Approx(4e9 + 3.5));
  // LoadOrMeasureCalibration reads them too, and keeps them when it writes the file.
  auto full = LoadOrMeasureCalibration(dir, 1, {TensorType::Q4_0}, "", model);
  REQUIRE(full.ok());
  CHECK(full->observed.at(ObservedFigure::kResident).bytes_per_s == Approx(9e9));
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibration: the model key names the file and its size", "[storage][calibration]") {
  const std::string dir = Dir("calibration_model_key");
  const std::string f = dir + "/m.gguf";
  std::ofstream(f) << "12345";
  const std::string key = ModelCalibrationKey(f);
  CHECK(key.find("m.gguf|5") != std::string::npos);
  CHECK(ModelCalibrationKey(dir).find('|') == std::string::npos);  // a directory: its path
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibration: a missing or corrupt cache falls back to the probe with a note, never a crash",
          "[storage][calibration]") {
  const std::string dir = Dir("calibration_corrupt");
  // Missing: nothing cached, nothing to say.
  Calibration c = LoadCachedCalibration(dir, 1, {TensorType::Q4_0}, "m|1");
  CHECK(c.note.empty());
  CHECK(c.disk_read_bytes_per_s == 0);
  CHECK(c.observed.empty());
  // Not JSON: a note naming the file; no figures.
  std::ofstream(dir + "/calibration.json") << "{\"disk_read_bytes_per_s\": 1e9, \"observed\": {";
  c = LoadCachedCalibration(dir, 1, {TensorType::Q4_0}, "m|1");
  CHECK(c.note.find(dir + "/calibration.json") != std::string::npos);
  CHECK(c.note.find("measured again") != std::string::npos);
  CHECK(c.observed.empty());
  CHECK(RatesOf(c).disk_bytes_per_s == 0);
  // A run folding into it rewrites it with its own figure.
  REQUIRE(FoldObservation(dir, "m|1", 1, ObservedFigure::kWarmStream, 4e9).ok());
  c = LoadCachedCalibration(dir, 1, {TensorType::Q4_0}, "m|1");
  CHECK(c.note.empty());
  CHECK(c.observed.at(ObservedFigure::kWarmStream).samples == 1);
  // Observed entries that are not positive rates are ignored, with a note naming them.
  const std::string key = "m|1|" + MatMulCalibrationKey(1);
  std::ofstream(dir + "/calibration.json") << R"({"disk_read_bytes_per_s": 1e9, "observed": {")" << key
                                           << R"(": {"disk": {"bytes_per_s": -5, "samples": 2}, "resident": "fast",
        "warm_stream": {"bytes_per_s": 3e9, "samples": "many"},
        "cold_compute": {"bytes_per_s": 5e9, "samples": 3, "recent": [4e9, -1, "x", 6e9]}}}})";
  c = LoadCachedCalibration(dir, 1, {TensorType::Q4_0}, "m|1");
  CHECK(c.note.find("bytes_per_s") != std::string::npos);
  CHECK(c.observed.count(ObservedFigure::kDisk) == 0);
  CHECK(c.observed.count(ObservedFigure::kResident) == 0);
  CHECK(c.observed.at(ObservedFigure::kWarmStream).samples == 1);  // a bad count counts as one
  // A cache from before the recent runs were kept: the figure stands for one run.
  CHECK(c.observed.at(ObservedFigure::kWarmStream).recent == std::vector<double>{3e9});
  CHECK(c.observed.at(ObservedFigure::kColdCompute).recent == std::vector<double>{4e9, 6e9});  // non-rates left out
  CHECK(RatesOf(c).disk_bytes_per_s == Approx(1e9));                // the probe's
  std::ofstream(dir + "/calibration.json") << R"({"disk_read_bytes_per_s": 1e9, "observed": [1, 2]})";
  c = LoadCachedCalibration(dir, 1, {TensorType::Q4_0}, "m|1");
  CHECK(c.note.find("\"observed\" is not an object") != std::string::npos);
  // Figures that are not rates cannot be folded in.
  CHECK(!FoldObservation(dir, "m|1", 1, ObservedFigure::kDisk, 0).ok());
  CHECK(!FoldObservation(dir, "m|1", 1, ObservedFigure::kDisk, -1).ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("calibration: a cache that cannot be written fails the fold, not the caller", "[storage][calibration]") {
  const std::string dir = Dir("calibration_unwritable");
  // calibration.json is a directory: it reads as corrupt and cannot be replaced.
  std::filesystem::create_directories(dir + "/calibration.json/x");
  auto r = FoldObservation(dir, "m|1", 1, ObservedFigure::kDisk, 1e9);
  CHECK(!r.ok());
  CHECK(std::string(r.status().message()).find("calibration.json") != std::string::npos);
  CHECK(std::filesystem::is_directory(dir + "/calibration.json/x"));  // left as it was
  std::filesystem::remove_all(dir);
}
