// ORT in a child process: `parity runner-worker --ort-library LIB --config
// CFG` (cli/cmd_runner_worker.cc) runs each job on its own ORT, the jobs and
// their values travelling in a scratch folder (runner_worker.h). Used for a
// runtime library other than the process's: one ORT per process.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/json_out.h"
#include "engine/run/optimized_plan.h"
#include "engine/runner/runner.h"
#include "engine/runner/runner_worker.h"

namespace parity {
namespace fs = std::filesystem;

namespace {

std::string SelfBinary(const std::string& binary) {
  if (!binary.empty()) return binary;
  if (const char* env = std::getenv("PARITY_BINARY"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "parity" : self.string();
}

// The last non-empty line the child wrote on its stderr (its one-line error).
std::string LastWords(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  for (std::string_view prefix : {"parity: ", "error: "})
    if (last.starts_with(prefix)) last = last.substr(prefix.size());
  return last;
}

class ChildRunner final : public Runner {
 public:
  ChildRunner(ScratchDir scratch, RanWhat ran) : scratch_(std::move(scratch)), ran_(std::move(ran)) {}
  ~ChildRunner() override { Stop(); }
  const RanWhat& ran() const override { return ran_; }

  Status Start(const std::string& binary) {
    PARITY_RETURN_IF_ERROR(WriteJsonFile(scratch_ / "config.json", RunConfigToJson(ran_.config)));
    const std::vector<std::string> argv = {SelfBinary(binary), "runner-worker", "--ort-library", ran_.config.ort_library,
                                           "--config", (scratch_ / "config.json").string()};
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0)
      return RuntimeError("runner: cannot make a pipe to a child process");
    const std::string log = (scratch_ / "stderr.txt").string();
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::fflush(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(to_child[0], 0);
      ::dup2(from_child[1], 1);
      const int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (err >= 0) ::dup2(err, 2);
      ::execv(args[0], args.data());
      _exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    if (pid_ < 0) return RuntimeError("runner: fork failed");
    to_ = ::fdopen(to_child[1], "w");
    from_ = ::fdopen(from_child[0], "r");
    std::string ready;
    if (!ReadLine(ready) || !ready.starts_with("O\t")) {
      std::string words = LastWords(log);
      // The child names its own flag ("--ort-library LIB: ..."); the library is named here.
      if (const std::string own = fmt::format("--ort-library {}: ", ran_.config.ort_library); words.starts_with(own))
        words.erase(0, own.size());
      return InvalidArgument(fmt::format("runtime library '{}': {}", ran_.config.ort_library,
                                         words.empty() ? "the child process that loads it did not start" : words));
    }
    ran_.ort = ParseReadyLine(ready);
    return {};
  }

  Result<TensorSet> Run(const RunnerJob& job, const TensorSet& inputs) override {
    if (from_ == nullptr) return RuntimeError("runner: the child process is gone");
    const size_t index = jobs_++;
    const fs::path dir = scratch_ / fmt::format("job{}", index);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return RuntimeError(fmt::format("runner: cannot make {}: {}", dir.string(), ec.message()));
    PARITY_RETURN_IF_ERROR(WriteRunnerJob(dir, job, inputs));
    const std::string request = fmt::format("{}\t{}\n", index, dir.string());
    std::string answer;
    const bool sent = std::fputs(request.c_str(), to_) >= 0 && std::fflush(to_) == 0;
    if (!sent || !ReadLine(answer)) {
      const std::string words = LastWords(scratch_ / "stderr.txt");
      Stop();
      return RuntimeError(fmt::format("onnxruntime {} in a child process died{}{}", ran_.ort.version,
                                      words.empty() ? "" : ": ", words));
    }
    auto result = [&]() -> Result<TensorSet> {
      if (answer == fmt::format("E\t{}", index)) return ReadJobValues(dir, "outputs");
      const std::string prefix = fmt::format("B\t{}\tjob\t", index);
      if (answer.starts_with(prefix)) return RuntimeError(answer.substr(prefix.size()));
      return RuntimeError(fmt::format("runner: unexpected answer from the child: '{}'", answer));
    }();
    fs::remove_all(dir, ec);  // the values are in memory now
    if (!result) return std::unexpected(result.error().With(fmt::format("onnxruntime {}", ran_.ort.version)));
    return result;
  }

 private:
  bool ReadLine(std::string& line) {
    char* buf = nullptr;
    size_t cap = 0;
    ssize_t n = 0;
    while ((n = ::getline(&buf, &cap, from_)) < 0 && errno == EINTR) clearerr(from_);
    if (n > 0) line.assign(buf, buf[n - 1] == '\n' ? n - 1 : n);
    std::free(buf);
    return n > 0;
  }

  void Stop() {
    if (to_ != nullptr) std::fclose(to_);  // the child's stdin ends: it exits
    if (from_ != nullptr) std::fclose(from_);
    to_ = from_ = nullptr;
    if (pid_ > 0) {
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
  }

  ScratchDir scratch_;
  RanWhat ran_;
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  size_t jobs_ = 0;
};

}  // namespace

Result<std::unique_ptr<Runner>> MakeOrtRunner(const RunConfig& config, const std::string& binary) {
  if (config.ort_library.empty()) return MakeSessionRunner(config);
  // The process's own library (symlinks resolved) runs here.
  std::error_code ec;
  const fs::path wanted = fs::canonical(config.ort_library, ec);
  if (ec)
    return InvalidArgument(fmt::format("runtime library '{}': {}", config.ort_library, "no such file"));
  const OrtFact here = CurrentOrt();
  if (!here.library.empty() && fs::equivalent(wanted, here.library, ec)) return MakeSessionRunner(config);
  // A write to a child that died must be an error, not a SIGPIPE that ends parity.
  ::signal(SIGPIPE, SIG_IGN);
  PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create("runner"));
  RunConfig child_config = config;
  child_config.ort_library = wanted.string();
  auto runner = std::make_unique<ChildRunner>(std::move(scratch),
                                              RanWhat{.kind = RanWhat::Kind::kOrtChild, .config = child_config});
  PARITY_RETURN_IF_ERROR(runner->Start(binary));
  return std::unique_ptr<Runner>(std::move(runner));
}

}  // namespace parity
