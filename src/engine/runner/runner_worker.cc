#include "engine/runner/runner_worker.h"

#include <fmt/format.h>

#include <charconv>

#include "core/json_in.h"
#include "core/json_out.h"
#include "core/npz.h"
#include "core/regular_file.h"
#include "core/worker_protocol.h"

namespace parity {
namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxJobJsonBytes = 64 << 20;

Result<nlohmann::json> ReadJson(const fs::path& path) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, kMaxJobJsonBytes));
  return ParseJsonBounded(text, path.string());
}

}  // namespace

Status WriteJobValues(const fs::path& dir, const std::string& stem, const TensorSet& values) {
  TensorSet keyed;
  nlohmann::json names = nlohmann::json::array();
  for (size_t i = 0; i < values.size(); ++i) {
    keyed.Set(fmt::format("t{}", i), values[i].tensor);
    names.push_back(values[i].name);
  }
  PARITY_RETURN_IF_ERROR(WriteNpz(dir / (stem + ".npz"), keyed, {.compression = NpzCompression::kStore}));
  return WriteJsonFile(dir / (stem + ".json"), nlohmann::json{{"names", names}});
}

Result<TensorSet> ReadJobValues(const fs::path& dir, const std::string& stem) {
  PARITY_ASSIGN_OR_RETURN(nlohmann::json j, ReadJson(dir / (stem + ".json")));
  PARITY_ASSIGN_OR_RETURN(TensorSet keyed, ReadNpz(dir / (stem + ".npz")));
  const auto names = j.value("names", std::vector<std::string>{});
  TensorSet out;
  for (size_t i = 0; i < names.size(); ++i) {
    const Tensor* t = keyed.Find(fmt::format("t{}", i));
    if (t == nullptr) return Corrupt(fmt::format("{}: no t{} for '{}'", (dir / stem).string(), i, names[i]));
    out.Set(names[i], *t);
  }
  return out;
}

Status WriteRunnerJob(const fs::path& dir, const RunnerJob& job, const TensorSet& inputs) {
  PARITY_RETURN_IF_ERROR(WriteJobValues(dir, "inputs", inputs));
  // The parent's run limits in force (ort/run_limits.h) bound the child's
  // run too; the job's own time limit replaces the scope's, as in Session::Run.
  ort::RunLimits limits = ort::CurrentRunLimits();
  if (job.timeout_s > 0) limits.seconds = job.timeout_s;
  return WriteJsonFile(dir / "job.json", nlohmann::json{{"model", fs::absolute(job.model).string()},
                                                        {"names", job.names},
                                                        {"save_plan", job.save_plan.string()},
                                                        {"keep_session", job.keep_session},
                                                        {"sample", job.sample},
                                                        {"cpu_mem_arena", job.cpu_mem_arena},
                                                        {"limit_seconds", limits.seconds},
                                                        {"limit_memory_bytes", limits.memory_bytes}});
}

namespace {

// The run limits a job carries; none when it names none or names nonsense
// (negative, not finite).
ort::RunLimits JobLimits(const nlohmann::json& j) {
  ort::RunLimits limits;
  const auto seconds = j.find("limit_seconds");
  if (seconds != j.end() && seconds->is_number()) limits.seconds = seconds->get<double>();
  const auto memory = j.find("limit_memory_bytes");
  if (memory != j.end() && memory->is_number_integer()) limits.memory_bytes = memory->get<int64_t>();
  if (!(limits.seconds >= 0 && limits.seconds < 1e9)) limits.seconds = 0;
  if (limits.memory_bytes < 0) limits.memory_bytes = 0;
  return limits;
}

}  // namespace

Result<RunnerRequest> ReadRunnerJob(const fs::path& dir) {
  PARITY_ASSIGN_OR_RETURN(nlohmann::json j, ReadJson(dir / "job.json"));
  RunnerRequest request;
  try {
    request.job.model = j.at("model").get<std::string>();
    request.job.names = j.at("names").get<std::vector<std::string>>();
    request.job.save_plan = j.at("save_plan").get<std::string>();
    request.job.keep_session = j.value("keep_session", false);
    request.job.sample = j.value("sample", std::string());
    request.job.cpu_mem_arena = j.value("cpu_mem_arena", false);
    request.limits = JobLimits(j);
  } catch (const nlohmann::json::exception& e) {
    return Corrupt(fmt::format("{}: {}", (dir / "job.json").string(), e.what()));
  }
  PARITY_ASSIGN_OR_RETURN(request.inputs, ReadJobValues(dir, "inputs"));
  return request;
}

int ServeRunnerJobs(std::istream& in, std::ostream& out, Runner& runner, std::string* error) {
  const OrtFact& ort = runner.ran().ort;
  out << FormatReadyLine({ort.version, ort.library}) << std::endl;
  std::string line;
  for (bool too_long = false; ReadBoundedLine(in, line, kMaxEntryRecordBytes, too_long);) {
    // Anything but the parent's records ends the worker with one line.
    if (too_long) {
      if (error) *error = fmt::format("runner-worker: a request line longer than {} bytes", kMaxEntryRecordBytes);
      return 2;
    }
    auto record = ParseEntryRecord(line);
    if (!record) {
      if (error) *error = "runner-worker: " + record.error().message();
      return 2;
    }
    const fs::path dir = record->path;
    Status done = [&]() -> Status {
      PARITY_ASSIGN_OR_RETURN(RunnerRequest request, ReadRunnerJob(dir));
      ort::ScopedRunLimits limits(request.limits);
      PARITY_ASSIGN_OR_RETURN(TensorSet values, runner.Run(request.job, request.inputs));
      return WriteJobValues(dir, "outputs", values);
    }();
    if (!done) out << FormatFailedLine(record->index, kWholeJob, done.error().message()) << '\n';
    out << FormatDoneLine(record->index) << std::endl;
  }
  return 0;
}

}  // namespace parity
