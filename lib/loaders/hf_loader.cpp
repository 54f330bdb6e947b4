#include "loaders/hf_loader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "loaders/hf_family.h"
#include "loaders/hf_tokenizer_info.h"
#include "loaders/safetensors_index.h"
#include "util/str_cat.h"

namespace uaii::hf {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(p.string(), ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool EndsWith(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.substr(s.size() - suf.size()) == suf;
}

}  // namespace

bool IsHfDirectory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / "config.json", ec);
}

absl::StatusOr<WeightFiles> FindWeightFiles(const std::string& dir_str) {
  const fs::path dir = fs::absolute(dir_str);
  std::vector<std::string> indexes, singles, torch;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (EndsWith(name, ".safetensors.index.json")) indexes.push_back(name);
    else if (EndsWith(name, ".safetensors")) singles.push_back(name);
    else if (EndsWith(name, ".bin") || EndsWith(name, ".pt") || EndsWith(name, ".pth")) torch.push_back(name);
  }
  if (ec) return absl::NotFoundError(StrCat(dir.string(), ": cannot list: ", ec.message()));
  std::sort(indexes.begin(), indexes.end());
  std::sort(singles.begin(), singles.end());
  WeightFiles out;
  std::string index;
  if (std::find(indexes.begin(), indexes.end(), "model.safetensors.index.json") != indexes.end()) {
    index = "model.safetensors.index.json";
  } else if (indexes.size() == 1) {
    index = indexes[0];
  } else if (indexes.size() > 1) {
    std::string list;
    for (const auto& i : indexes) list += StrCat(list.empty() ? "" : ", ", i);
    return absl::InvalidArgumentError(StrCat(dir.string(), ": several safetensors indexes (", list,
                                             "); keep one, or name model.safetensors.index.json"));
  }
  if (!index.empty()) {
    out.index = (dir / index).string();
    auto text = ReadText(out.index);
    if (!text.ok()) return text.status();
    auto idx = safetensors::ParseIndex(*text, out.index);
    if (!idx.ok()) return idx.status();
    for (const auto& s : idx->shards) {
      fs::path p = dir / s;
      if (!fs::is_regular_file(p, ec))
        return absl::NotFoundError(StrCat(out.index, ": shard ", s, " is missing from ", dir.string()));
      out.files.push_back(p.string());
    }
    return out;
  }
  if (std::find(singles.begin(), singles.end(), "model.safetensors") != singles.end()) {
    out.files.push_back((dir / "model.safetensors").string());
  } else if (singles.size() == 1) {
    out.files.push_back((dir / singles[0]).string());
  } else if (singles.size() > 1) {
    return absl::InvalidArgumentError(StrCat(dir.string(), ": ", singles.size(),
                                             " .safetensors files and no *.safetensors.index.json to say which to load"));
  } else if (!torch.empty()) {
    return absl::UnimplementedError(StrCat(dir.string(), ": only PyTorch checkpoints (", torch[0],
                                           "); convert to safetensors or to GGUF"));
  } else {
    return absl::NotFoundError(StrCat(dir.string(), ": no .safetensors weights"));
  }
  return out;
}

absl::StatusOr<HfModel> LoadHfModel(const std::string& dir_str) {
  HfModel m;
  m.dir = fs::absolute(dir_str).lexically_normal().string();
  if (!m.dir.empty() && m.dir.back() == '/') m.dir.pop_back();
  const fs::path dir(m.dir);
  const std::string config_path = (dir / "config.json").string();
  auto config_text = ReadText(config_path);
  if (!config_text.ok()) return absl::NotFoundError(StrCat(m.dir, ": not a Hugging Face directory (no config.json)"));
  auto cfg = ParseHfConfig(*config_text, config_path);
  if (!cfg.ok()) return cfg.status();
  m.config = *std::move(cfg);

  auto wf = FindWeightFiles(m.dir);
  if (!wf.ok()) return wf.status();
  m.weight_files = wf->files;
  // Map and validate every shard; the index (when any) must agree with the shard headers.
  std::map<std::string, std::pair<size_t, const safetensors::TensorInfo*>> by_name;  // -> (file #, info)
  for (size_t i = 0; i < wf->files.size(); ++i) {
    auto f = safetensors::File::Open(wf->files[i]);
    if (!f.ok()) return f.status();
    m.files.push_back(std::shared_ptr<const safetensors::File>(std::move(*f)));
    for (const auto& t : m.files.back()->header().tensors) {
      auto [it, fresh] = by_name.emplace(t.name, std::make_pair(i, &t));
      if (!fresh)
        return absl::InvalidArgumentError(StrCat("duplicate tensor name \"", t.name, "\" in ",
                                                 wf->files[it->second.first], " and ", wf->files[i]));
    }
  }
  if (!wf->index.empty()) {
    auto text = ReadText(wf->index);
    if (!text.ok()) return text.status();
    auto idx = safetensors::ParseIndex(*text, wf->index);
    if (!idx.ok()) return idx.status();
    for (const auto& [name, shard] : idx->weight_map) {
      auto it = by_name.find(name);
      const std::string want = (dir / shard).string();
      if (it == by_name.end() || wf->files[it->second.first] != want)
        return absl::InvalidArgumentError(StrCat(wf->index, ": tensor ", name, " is listed in ", shard,
                                                 " but that shard's header does not hold it"));
    }
  }

  std::vector<TensorDesc> descs;
  std::vector<std::pair<size_t, const safetensors::TensorInfo*>> refs;
  for (const auto& [name, ref] : by_name) {  // std::map: sorted by name
    descs.push_back({name, ref.second->dtype, ref.second->shape});
    refs.push_back(ref);
  }
  auto det = DetectFamily(m.config, descs);
  if (!det.ok()) return absl::Status(det.status().code(), StrCat(m.dir, ": ", std::string(det.status().message())));
  m.arch = std::move(det->arch);
  for (size_t i = 0; i < descs.size(); ++i) {
    const auto& [fi, info] = refs[i];
    const auto& file = *m.files[fi];
    HfTensor t;
    t.name = info->name;
    t.file = file.path();
    t.offset = file.FileOffset(*info);
    t.bytes = info->bytes();
    t.stored = info->dtype;
    t.shape = info->shape;
    auto tt = safetensors::ToTensorType(info->dtype);
    t.promote_to_f32 = info->dtype == safetensors::Dtype::I8 || info->dtype == safetensors::Dtype::U8;
    t.dtype = t.promote_to_f32 || !tt ? TensorType::F32 : *tt;
    const TensorRole& r = det->roles[i];
    t.role = r.role;
    t.is_bias = r.is_bias;
    t.layer = r.layer;
    t.expert = r.expert;
    m.tensors.push_back(std::move(t));
  }
  auto tok = ReadTokenizerInfo(m.dir, m.config);
  if (!tok.ok()) return tok.status();
  m.tokenizer = *std::move(tok);
  return m;
}

const HfTensor* HfModel::Find(const std::string& name) const {
  auto it = std::lower_bound(tensors.begin(), tensors.end(), name,
                             [](const HfTensor& t, const std::string& n) { return t.name < n; });
  return it != tensors.end() && it->name == name ? &*it : nullptr;
}

const HfTensor* HfModel::FindRole(const std::string& role, int layer, int expert, bool bias) const {
  for (const auto& t : tensors)
    if (t.role == role && t.layer == layer && t.expert == expert && t.is_bias == bias) return &t;
  return nullptr;
}

uint64_t HfModel::TotalTensorBytes() const {
  uint64_t n = 0;
  for (const auto& t : tensors) n += t.bytes;
  return n;
}

absl::Status CheckRunnable(const HfModel& m) {
  if (m.arch.runnable) return absl::OkStatus();
  return absl::FailedPreconditionError(StrCat(m.dir, ": family ", m.arch.family, ": ", m.arch.not_runnable_reason));
}

absl::StatusOr<std::vector<float>> MaterializeF32(const HfModel& m, const HfTensor& t) {
  for (const auto& f : m.files) {
    if (f->path() != t.file) continue;
    const auto* info = f->header().Find(t.name);
    if (info == nullptr) break;
    return safetensors::MaterializeF32(*f, *info);
  }
  return absl::NotFoundError(StrCat("tensor ", t.name, ": not in the model's files"));
}

}  // namespace uaii::hf
