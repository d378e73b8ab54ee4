#include "engine/runner/runner_worker.h"

#include <fmt/format.h>

#include <charconv>

#include "core/json_in.h"
#include "core/json_out.h"
#include "core/npz.h"
#include "core/regular_file.h"

namespace parity {
namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxJobJsonBytes = 64 << 20;

// One line whatever the message holds: tabs and newlines would break the framing.
std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

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
  return WriteJsonFile(dir / "job.json", nlohmann::json{{"model", fs::absolute(job.model).string()},
                                                        {"names", job.names},
                                                        {"save_plan", job.save_plan.string()},
                                                        {"keep_session", job.keep_session}});
}

Result<std::pair<RunnerJob, TensorSet>> ReadRunnerJob(const fs::path& dir) {
  PARITY_ASSIGN_OR_RETURN(nlohmann::json j, ReadJson(dir / "job.json"));
  RunnerJob job;
  try {
    job.model = j.at("model").get<std::string>();
    job.names = j.at("names").get<std::vector<std::string>>();
    job.save_plan = j.at("save_plan").get<std::string>();
    job.keep_session = j.value("keep_session", false);
  } catch (const nlohmann::json::exception& e) {
    return Corrupt(fmt::format("{}: {}", (dir / "job.json").string(), e.what()));
  }
  PARITY_ASSIGN_OR_RETURN(TensorSet inputs, ReadJobValues(dir, "inputs"));
  return std::pair{std::move(job), std::move(inputs)};
}

int ServeRunnerJobs(std::istream& in, std::ostream& out, Runner& runner) {
  const OrtFact& ort = runner.ran().ort;
  out << "O\t" << OneLine(ort.version) << '\t' << OneLine(ort.library) << std::endl;
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    size_t index = 0;
    if (tab == std::string::npos || std::from_chars(line.data(), line.data() + tab, index).ptr != line.data() + tab)
      return 2;
    const fs::path dir = line.substr(tab + 1);
    Status done = [&]() -> Status {
      PARITY_ASSIGN_OR_RETURN(auto job, ReadRunnerJob(dir));
      PARITY_ASSIGN_OR_RETURN(TensorSet values, runner.Run(job.first, job.second));
      return WriteJobValues(dir, "outputs", values);
    }();
    if (done)
      out << "E\t" << index << std::endl;
    else
      out << "B\t" << index << "\tjob\t" << OneLine(done.error().message()) << std::endl;
  }
  return 0;
}

OrtFact ParseReadyLine(const std::string& line) {
  if (!line.starts_with("O\t")) return {};
  const size_t tab = line.find('\t', 2);
  if (tab == std::string::npos) return {};
  return {.version = line.substr(2, tab - 2), .library = line.substr(tab + 1), .origin = "ort_library"};
}

}  // namespace parity
