#include "engine/generate/corpus_recorder.h"

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "core/child_process.h"

namespace parity {

Status RecordTorchCorpus(const TorchCorpusRequest& r, const std::filesystem::path& dir) {
  SpawnOptions options{.search_path = true};  // r.python may be a name on PATH
  if (!r.pythonpath.empty()) options.env.push_back(PrependedEnv("PYTHONPATH", r.pythonpath));
  std::vector<std::string> argv = {r.python, "-m", "parity.torch", "corpus", r.torch_model, "--prompts", r.prompts,
                                   "--generate", std::to_string(r.generate), "--top-k", std::to_string(r.top_k), "-o",
                                   dir.string(), "--quiet"};
  if (!r.output_names.empty()) argv.insert(argv.end(), {"--output-names", r.output_names});
  PARITY_ASSIGN_OR_RETURN(ChildProcess child, ChildProcess::Start(argv, options));
  std::string line;
  while (child.ReadLine(line, 1 << 16) != ChildProcess::Got::kEnd) {
  }
  const std::string last = child.LastWords();
  const int status = child.Stop(std::chrono::milliseconds(60000));
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  if (code == 2) return InvalidArgument(fmt::format("--torch-model {}: {}", r.torch_model, last));
  if (code != 0)
    return RuntimeError(fmt::format("--torch-model {}: the recorder failed (exit {}): {}", r.torch_model, code, last));
  return {};
}

}  // namespace parity
