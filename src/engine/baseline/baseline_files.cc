// A baseline sample's tensor files: named, written as .npy with their
// SHA-256 and statistics, checked again by the determinism run.
#include <algorithm>
#include <atomic>
#include <functional>
#include <future>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/npy_header.h"
#include "core/progress.h"
#include "core/sha256.h"
#include "engine/baseline/baseline_internal.h"

namespace fs = std::filesystem;

namespace parity::baseline_internal {
namespace {

// Gives each name a unique file name "<prefix><sanitised>.npy".
class FileNamer {
 public:
  std::string Make(const std::string& stem) {
    std::string name = stem;
    for (int n = 1; !used_.insert(name).second; ++n) name = fmt::format("{}_{}", stem, n);
    return name + ".npy";
  }

 private:
  std::unordered_set<std::string> used_;
};

// The SHA-256 of the .npy file of `t` with its `header`: the manifest's
// sha256, and what determinism's second run is compared with.
std::string NpySha256(std::span<const std::byte> header, const Tensor& t) {
  Sha256Hasher hasher;
  hasher.Update(header);
  hasher.Update(t.bytes());
  return DigestToHex(hasher.Finish());
}

// Writes one tensor as .npy (header, then the data straight from the tensor:
// no second copy of a large tensor), its SHA-256 and statistics computed on
// a second thread while the kernel copies the bytes for a large tensor
// (gpt2_small's 150 MB transposed embedding, 553 files: hashing, statistics
// and writing one after the other were most of baseline's time after the
// run).
Status WriteTensorFile(const fs::path& path, const Tensor& t, BaselineFile& rec) {
  constexpr size_t kOverlapFrom = size_t{1} << 20;
  PARITY_ASSIGN_OR_RETURN(std::string header, WithContext(EncodeNpyHeader(t.dtype(), t.shape()), path.string()));
  PARITY_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path, Sync::kByFolder));  // in the StagedDir
  const auto header_bytes = std::as_bytes(std::span(header.data(), header.size()));
  const auto summarize = [&] {
    rec.stats = ComputeStats(t);
    rec.sha256 = NpySha256(header_bytes, t);
  };
  std::future<void> summary;
  if (t.byte_size() >= kOverlapFrom) summary = std::async(std::launch::async, summarize);
  Status written = file.Write(header_bytes);
  if (written) written = file.Write(t.bytes());
  if (written) written = WithContext(file.Commit(), path.string());
  if (summary.valid()) summary.get();  // joined before `t` or `rec` can go
  else summarize();
  PARITY_RETURN_IF_ERROR(written);
  rec.bytes = static_cast<int64_t>(header.size() + t.byte_size());
  rec.dtype = std::string(DTypeName(t.dtype()));
  rec.shape = t.shape();
  return {};
}

// work(0) .. work(n - 1) on up to kFileThreads threads, this one among them:
// after the run, each file's statistics, hash and write are independent, and
// one thread did them one after the other (resnet50: 122 files, 106 MB, 0.2 s
// against ORT's 0.15 s run). Returns the first failure in index order; work
// not yet started is skipped once one fails. A hand-written loop, not a
// library: OpenMP's workers spin after a loop, taking the cores from ORT's
// next run, and the C++ parallel algorithms need TBB, which the stack lacks.
Status ForEachFile(size_t n, const std::function<Status(size_t)>& work) {
  constexpr size_t kFileThreads = 4;
  const size_t threads = std::min({n, kFileThreads, size_t{std::max(1u, std::thread::hardware_concurrency())}});
  std::vector<Status> results(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    for (size_t i = next++; i < n && !failed; i = next++) {
      results[i] = work(i);
      if (!results[i]) failed = true;
    }
  };
  std::vector<std::future<void>> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.push_back(std::async(std::launch::async, worker));
  worker();
  for (auto& h : helpers) h.get();
  for (auto& r : results)
    if (!r) return r;
  return {};
}

}  // namespace

FileTemplates NameFiles(const GraphView& graph, const std::vector<Layer>& layers) {
  const int width = std::max<int>(4, static_cast<int>(std::to_string(layers.size()).size()));
  FileNamer namer;
  FileTemplates templates;
  auto add = [&](const std::string& tensor, FileRole role, const std::string& stem, int64_t index,
                 const std::string& producer, const std::string& op) {
    auto& target = role == FileRole::kInput ? templates.inputs : templates.others;
    BaselineFile f;
    f.file = namer.Make(stem);
    f.tensor = tensor;
    f.role = role;
    f.index = index;
    f.producer = producer;
    f.op_type = op;
    target[tensor] = f;
  };
  for (const auto& name : graph.inputs)
    add(name, FileRole::kInput, graph.inputs.size() == 1 ? "input" : "input_" + SanitizeFileName(name), -1, "", "");
  for (const auto& l : layers)
    add(l.tensor, FileRole::kLayer, fmt::format("layer_{:0{}}_{}", l.index, width, SanitizeFileName(l.tensor)), l.index,
        l.producer, l.op_type);
  for (const auto& name : graph.outputs) {
    const GraphNode* p = graph.Producer(name);
    add(name, FileRole::kOutput, graph.outputs.size() == 1 ? "output" : "output_" + SanitizeFileName(name), -1,
        p ? p->name : "", p ? p->op_type : "");
  }
  return templates;
}

Result<BaselineSample> WriteSampleFiles(Tracer& tracer, const Sample& sample, const fs::path& sample_dir,
                                        const std::string& sample_subdir, const std::vector<std::string>& inputs,
                                        FileTemplates& templates, const fs::path& inputs_path) {
  BaselineSample out;
  out.name = sample.name;
  out.dir = sample_subdir;
  auto rel = [&](const std::string& file) { return out.dir.empty() ? file : out.dir + "/" + file; };
  for (const auto& name : inputs) {
    const Tensor* t = sample.tensors.Find(name);
    if (t == nullptr)
      return InvalidArgument(fmt::format("{}: sample '{}' has no input '{}'", inputs_path.string(), sample.name, name));
    BaselineFile rec = templates.inputs[name];
    PARITY_RETURN_IF_ERROR(WriteTensorFile(sample_dir / rec.file, *t, rec));
    out.input_scale = std::max(out.input_scale, rec.stats.max_abs);
    rec.file = rel(rec.file);
    out.files.push_back(std::move(rec));
  }
  const double scale_limit = kScaleFactor * std::max(1.0, out.input_scale);
  std::vector<BaselineFile> outputs;
  // Progress on a terminal (core/progress.h): tensors written of those observed.
  size_t planned = 0, written = 0;
  for (const auto& b : tracer.batches()) planned += b.size();
  const std::string what = "baseline " + sample.name;
  ReportProgress(what, 0, planned);
  auto sink = [&](const std::vector<NamedTensor>& batch) -> Status {
    std::vector<BaselineFile> recs;
    for (const auto& [name, t] : batch) recs.push_back(templates.others[name]);
    PARITY_RETURN_IF_ERROR(ForEachFile(batch.size(), [&](size_t i) {
      return WriteTensorFile(sample_dir / recs[i].file, batch[i].tensor, recs[i]);
    }));
    for (auto& rec : recs) {
      rec.file = rel(rec.file);
      rec.out_of_scale = rec.stats.max_abs > scale_limit;
      (rec.role == FileRole::kOutput ? outputs : out.files).push_back(std::move(rec));
    }
    written += batch.size();
    ReportProgress(what, std::min(written, planned), planned);
    return {};
  };
  PARITY_RETURN_IF_ERROR(tracer.TraceBatches(sample, sink));
  for (auto& rec : outputs) out.files.push_back(std::move(rec));
  return out;
}

// The second run: hashes every tensor again as its file would be and marks
// the files whose bytes differ from the first run's (inputs are given, never
// non-deterministic). The first run hashed each tensor once, as its file.
Status CheckDeterminism(Tracer& tracer, const Sample& sample, BaselineSample& out) {
  std::unordered_map<std::string, const std::string*> first;  // tensor -> its file's sha256
  for (const auto& rec : out.files) first.emplace(rec.tensor, &rec.sha256);
  std::unordered_set<std::string> differing;
  auto recheck = [&](const std::vector<NamedTensor>& batch) -> Status {
    std::vector<std::string> shas(batch.size());
    PARITY_RETURN_IF_ERROR(ForEachFile(batch.size(), [&](size_t i) -> Status {
      const Tensor& t = batch[i].tensor;
      PARITY_ASSIGN_OR_RETURN(std::string header, EncodeNpyHeader(t.dtype(), t.shape()));
      shas[i] = NpySha256(std::as_bytes(std::span(header.data(), header.size())), t);
      return {};
    }));
    for (size_t i = 0; i < batch.size(); ++i) {
      const auto it = first.find(batch[i].name);
      if (it == first.end() || *it->second != shas[i]) differing.insert(batch[i].name);
    }
    return {};
  };
  PARITY_RETURN_IF_ERROR(tracer.TraceBatches(sample, recheck));
  for (auto& rec : out.files) {
    rec.deterministic = !differing.contains(rec.tensor) || rec.role == FileRole::kInput;
    if (!rec.deterministic) out.nondeterministic.push_back(rec.tensor);
  }
  return {};
}

// The first NaN, the first Inf and the out-of-scale tensors, in file order.
void RecordFindings(BaselineSample& out) {
  for (const auto& rec : out.files) {
    if (rec.stats.nan > 0 && !out.first_nan) out.first_nan = rec.tensor;
    if (rec.stats.inf > 0 && !out.first_inf) out.first_inf = rec.tensor;
    if (rec.out_of_scale) out.out_of_scale.push_back(rec.tensor);
  }
}

}  // namespace parity::baseline_internal
