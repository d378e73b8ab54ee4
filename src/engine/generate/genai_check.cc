#include "engine/generate/genai_check.h"

#include <sys/wait.h>

#include <chrono>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/child_process.h"
#include "core/npy.h"
#include "core/scratch_dir.h"
#include "engine/generate/corpus_check.h"

namespace parity {
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// At most this long for the driver's next line (one prompt's two decodes).
constexpr auto kLineWait = std::chrono::minutes(30);
constexpr size_t kMaxLine = size_t{1} << 24;

// The driver, started: PYTHON (found on PATH) -c BOOT PYTHONPATH PACKAGE CORPUS SCRATCH.
Result<ChildProcess> StartDriver(const GenAiPython& py, const fs::path& package, const CorpusRecord& r,
                                 const fs::path& scratch) {
  const std::string boot =
      "import sys; p = sys.argv.pop(1)\nif p: sys.path.insert(0, p)\n"
      "from parity._genai_driver import main; sys.exit(main(sys.argv[1:]))";
  return ChildProcess::Start({py.python, "-c", boot, py.pythonpath, fs::absolute(package).string(),
                              fs::absolute(r.dir).string(), scratch.string()},
                             {.search_path = true});
}

// The driver's exit as a Status: exit 2 is bad input (its last words).
std::unexpected<Error> DriverEnded(ChildProcess& child, const std::string& why) {
  const std::string words = child.LastWords();
  const int status = child.Stop(std::chrono::milliseconds(10000));
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  if (code == 2) return InvalidArgument(words.empty() ? "onnxruntime-genai driver: bad input" : words);
  return RuntimeError(fmt::format("the ORT GenAI driver (python -m parity._genai_driver) {} (exit {}): {}", why,
                                  code, words.empty() ? "no output" : words));
}

// The next JSON object the driver wrote (lines that are not one, a library's
// own output, are skipped); nullopt when it ended or went quiet.
std::optional<Json> NextObject(ChildProcess& child) {
  std::string line;
  for (;;) {
    const auto got = child.ReadLine(line, kMaxLine, ChildProcess::Clock::now() + kLineWait);
    if (got == ChildProcess::Got::kEnd || got == ChildProcess::Got::kTimeout) return std::nullopt;
    if (got != ChildProcess::Got::kLine) continue;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded() && j.is_object()) return j;
  }
}

GenAiRun RunOf(const fs::path& package, const Json& hello) {
  auto str = [&](const char* key) { return hello.contains(key) && hello[key].is_string() ? hello[key].get<std::string>() : ""; };
  return GenAiRun{.package = package.string(),
                  .config_path = str("config"),
                  .search_json = hello.contains("search") ? hello["search"].dump() : "{}",
                  .session_options_json = hello.contains("session_options") ? hello["session_options"].dump() : "{}",
                  .genai_version = str("genai_version"),
                  .ort_version = str("ort_version"),
                  .greedy = hello.value("greedy", true)};
}

// One prompt's answer: the teacher-forced logits compared step by step, the
// free run judged.
Result<CorpusPrompt> PromptRow(const CorpusRecord& r, int64_t p, const Json& a) {
  CorpusPrompt row{.index = p, .prompt_length = static_cast<int64_t>(r.PromptIds(p).size())};
  if (a.value("prompt", int64_t{-1}) != p || !a.contains("logits") || !a["logits"].is_string())
    return RuntimeError(fmt::format("the ORT GenAI driver answered {:.120} for prompt {}", a.dump(), p));
  row.error = a.value("error", std::string());
  row.ort_ms = a.value("ort_ms", 0.0);
  PARITY_ASSIGN_OR_RETURN(const Tensor logits, ReadNpy(a["logits"].get<std::string>()));
  const Shape& shape = logits.shape();
  if (logits.size() > 0) {
    if (logits.dtype() != DType::kFloat32 || shape.size() != 2 || shape[0] > r.steps)
      return RuntimeError(fmt::format("the ORT GenAI driver's logits for prompt {}: {} float32 rows expected, got {}",
                                      p, r.steps, ShapeToString(shape)));
    if (shape[1] != r.vocab)
      return InvalidArgument(fmt::format("the package's logits have {} entries where the corpus's vocabulary is {}: "
                                         "the corpus was not recorded from this model", shape[1], r.vocab));
    const auto all = logits.view<float>();
    for (int64_t s = 0; s < shape[0]; ++s)
      row.steps.push_back(CompareCorpusStep(r, p, s, all.subspan(s * r.vocab, r.vocab)));
  }
  if (row.error.empty() && static_cast<int64_t>(row.steps.size()) != r.steps)
    row.error = fmt::format("onnxruntime-genai gave {} of {} steps", row.steps.size(), r.steps);
  if (a.contains("free_tokens") && a["free_tokens"].is_array())
    JudgeFreeRun(r, p, a["free_tokens"].get<std::vector<int64_t>>(), row);
  return row;
}

}  // namespace

Status CheckGenAiPackage(const fs::path& dir) {
  const fs::path config = dir / "genai_config.json";
  if (!fs::is_regular_file(config))
    return InvalidArgument(fmt::format("{}: a folder without genai_config.json is not an ORT GenAI package "
                                       "(give a .onnx model, or the package's folder)", dir.string()));
  std::ifstream in(config);
  const Json j = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return InvalidArgument(fmt::format("{}: not a JSON object", config.string()));
  const Json* name = nullptr;
  if (j.contains("model") && j["model"].is_object() && j["model"].contains("decoder") &&
      j["model"]["decoder"].is_object() && j["model"]["decoder"].contains("filename"))
    name = &j["model"]["decoder"]["filename"];
  if (!name || !name->is_string() || name->get<std::string>().empty())
    return InvalidArgument(fmt::format("{}: model.decoder.filename: expected the decoder's file name", config.string()));
  const fs::path model = dir / name->get<std::string>();
  if (!fs::is_regular_file(model))
    return InvalidArgument(fmt::format("{}: model.decoder.filename names {}, which is not a file", config.string(),
                                       model.string()));
  return {};
}

void JudgeFreeRun(const CorpusRecord& r, int64_t p, const std::vector<int64_t>& tokens, CorpusPrompt& row) {
  row.free_steps = static_cast<int64_t>(tokens.size());
  row.free_divergent.reset();
  for (int64_t s = 0; s < row.free_steps && s < r.steps; ++s)
    if (tokens[s] != r.Token(p, s)) {
      row.free_divergent = s;
      return;
    }
}

Result<std::vector<CorpusPrompt>> RunGenAiCorpus(const GenAiPython& py, const fs::path& package,
                                                 const CorpusRecord& r, GenAiRun& run,
                                                 const std::function<void(size_t, size_t)>& done) {
  PARITY_RETURN_IF_ERROR(CheckGenAiPackage(package));
  PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create("genai"));
  PARITY_ASSIGN_OR_RETURN(ChildProcess child, StartDriver(py, package, r, scratch.path()));
  const auto hello = NextObject(child);
  if (!hello) return DriverEnded(child, "ended before it loaded the package");
  run = RunOf(package, *hello);
  std::vector<CorpusPrompt> rows;
  const auto n = static_cast<size_t>(r.prompts);
  for (int64_t p = 0; p < r.prompts; ++p) {
    const auto answer = NextObject(child);
    if (!answer) return DriverEnded(child, fmt::format("ended at prompt {}", p));
    PARITY_ASSIGN_OR_RETURN(CorpusPrompt row, PromptRow(r, p, *answer));
    rows.push_back(std::move(row));
    child.Send("\n");  // the next prompt (its logits replace these)
    if (done) done(rows.size(), n);
  }
  const auto last = NextObject(child);
  if (!last || !last->value("done", false)) return DriverEnded(child, "did not finish");
  child.Stop();
  return rows;
}

}  // namespace parity
