// ORT in a child process: `parity runner-worker --ort-library LIB --config
// CFG` (cli/cmd_runner_worker.cc) runs each job on its own ORT, the jobs and
// their values travelling in a scratch folder (runner_worker.h). Used for a
// runtime library other than the process's: one ORT per process. The child's
// pipes are read with limits (core/child_process.h, the one worker protocol
// core/worker_protocol.h): its start has a deadline, its replies a length,
// its stderr a bounded tail.
#include <signal.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <optional>

#include "core/child_process.h"
#include "core/json_out.h"
#include "core/scratch_dir.h"
#include "core/worker_protocol.h"
#include "engine/runner/runner.h"
#include "engine/runner/runner_worker.h"
#include "ort/ep_libraries.h"
#include "ort/run_count.h"

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

// How long a child may take from its start to its ready line (loading its
// runtime library): PARITY_RUNNER_START_TIMEOUT seconds (docs/errors.md),
// default 60.
constexpr int kRunnerStartSeconds = 60;
std::chrono::milliseconds StartTimeout() {
  if (const char* env = std::getenv("PARITY_RUNNER_START_TIMEOUT"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end != env && *end == '\0' && s > 0 && s < 1e6) return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
  }
  return std::chrono::seconds(kRunnerStartSeconds);
}

class ChildRunner final : public Runner {
 public:
  ChildRunner(ScratchDir scratch, RanWhat ran) : scratch_(std::move(scratch)), ran_(std::move(ran)) {}
  ~ChildRunner() override { Stop(); }
  const RanWhat& ran() const override { return ran_; }

  Status Start(const std::string& binary) {
    PARITY_RETURN_IF_ERROR(WriteJsonFile(scratch_ / "config.json", RunConfigToJson(ran_.config)));
    std::vector<std::string> argv = {SelfBinary(binary), "runner-worker", "--ort-library", ran_.config.ort_library,
                                     "--config", (scratch_ / "config.json").string()};
    // The parent's plugin EP libraries (--ep-library, PARITY_EP_LIBRARY, and
    // a discovered one the config's providers name) reach the child as
    // flags: the child registers them into its own ORT, as the parent would.
    for (const ort::EpLibrary& lib : ort::EpLibrariesFor(ran_.config.providers))
      argv.insert(argv.end(), {"--ep-library", lib.name + "=" + lib.path});
    PARITY_ASSIGN_OR_RETURN(ChildProcess child, ChildProcess::Start(argv));
    child_.emplace(std::move(child));
    // The library loads in the child: one that hangs, floods its output or
    // dies there is the user's input (exit 2), found within the deadline.
    const auto library = [&](const std::string& what) {
      Stop(std::chrono::milliseconds(0));  // it has nothing of ours to finish
      return InvalidArgument(fmt::format("runtime library '{}': {}", ran_.config.ort_library, what));
    };
    const auto timeout = StartTimeout();
    std::string ready;
    switch (child_->ReadLine(ready, kMaxWorkerLineBytes, ChildProcess::Clock::now() + timeout)) {
      case ChildProcess::Got::kTimeout:
        return library(fmt::format("the child process that loads it did not say it was ready within {:g} s (a "
                                   "library that hangs when loaded?); it was stopped",
                                   std::chrono::duration<double>(timeout).count()));
      case ChildProcess::Got::kTooLong:
        return library(fmt::format("the child process that loads it wrote more than {} bytes on its stdout without "
                                   "a newline before saying it was ready; it was stopped",
                                   kMaxWorkerLineBytes));
      case ChildProcess::Got::kEnd: {
        std::string words = child_->LastWords();
        // The child names its own flag ("--ort-library LIB: ..."); the library is named here.
        if (const std::string own = fmt::format("--ort-library {}: ", ran_.config.ort_library); words.starts_with(own))
          words.erase(0, own.size());
        return library(words.empty() ? "the child process that loads it did not start" : words);
      }
      case ChildProcess::Got::kLine:
        break;
    }
    auto reply = ParseWorkerLine(ready);
    if (!reply || reply->kind != WorkerLine::Kind::kReady || reply->facts.size() != 2)
      return library(fmt::format("the child process that loads it wrote something else on its stdout than that it "
                                 "is ready ({}); it was stopped",
                                 reply ? "another line" : reply.error().message()));
    ran_.ort = {.version = reply->facts[0], .library = reply->facts[1], .origin = "ort_library"};
    return {};
  }

  Result<TensorSet> Run(const RunnerJob& job, const TensorSet& inputs) override {
    if (job.source != nullptr)
      return InvalidArgument(fmt::format("{}: a runner in a child process runs model files, not ORT's own input "
                                         "given in memory (RunnerJob::source)",
                                         job.model.string()));
    if (!child_)
      return RuntimeError(fmt::format("onnxruntime {} {} earlier; nothing more runs there", ran_.ort.version,
                                      kRunnerDied));
    const size_t index = jobs_++;
    const fs::path dir = scratch_ / fmt::format("job{}", index);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return RuntimeError(fmt::format("runner: cannot make {}: {}", dir.string(), ec.message()));
    RunnerJob to_send = job;
    if (job.loaded != nullptr) {
      PARITY_ASSIGN_OR_RETURN(to_send.model, Written(*job.loaded));
      to_send.loaded = nullptr;
    }
    PARITY_RETURN_IF_ERROR(WriteRunnerJob(dir, to_send, inputs));
    ort::CountOrtRuns(1);  // the child's ORT runs it for us
    if (!child_->Send(FormatEntryRecord(index, dir.string()) + "\n")) return Died(ChildProcess::Got::kEnd);
    PARITY_ASSIGN_OR_RETURN(const std::optional<std::string> failed, Answer(index));
    auto result = failed ? Result<TensorSet>(RuntimeError(*failed)) : ReadJobValues(dir, "outputs");
    fs::remove_all(dir, ec);  // the values are in memory now
    if (!result) return std::unexpected(result.error().With(fmt::format("onnxruntime {}", ran_.ort.version)));
    return result;
  }

 private:
  // The child's answer to job `index` (core/worker_protocol.h): nullopt once
  // it said "E", the message of its "B ... job ..." line before that when the
  // job failed. An error (the child stopped) when it died, wrote a line too
  // long, or anything but these lines.
  Result<std::optional<std::string>> Answer(size_t index) {
    std::optional<std::string> failed;
    for (std::string line;;) {
      const ChildProcess::Got got = child_->ReadLine(line, kMaxWorkerLineBytes);
      if (got != ChildProcess::Got::kLine) return Died(got);
      auto reply = ParseWorkerLine(line);
      if (reply && reply->index == index && reply->kind == WorkerLine::Kind::kDone) return failed;
      if (reply && reply->index == index && reply->kind == WorkerLine::Kind::kFailed && reply->id == kWholeJob &&
          !failed) {
        failed = reply->why;
        continue;
      }
      const std::string what = !reply                                     ? reply.error().message()
                               : reply->kind == WorkerLine::Kind::kRow   ? std::string("a row, which it never writes")
                               : reply->kind == WorkerLine::Kind::kReady ? std::string("a second ready line")
                                                                         : fmt::format("a line of job {} in job {}'s "
                                                                                       "answer", reply->index, index);
      Stop(std::chrono::milliseconds(0));  // out of step with us: nothing more it says can be trusted
      return RuntimeError(fmt::format("onnxruntime {}: runner: unexpected answer from the child (stopped): {}",
                                      ran_.ort.version, what));
    }
  }

  // The child ended, or wrote a line too long (`got`): it is stopped.
  std::unexpected<Error> Died(ChildProcess::Got got) {
    const std::string words = got == ChildProcess::Got::kTooLong
                                  ? fmt::format("it wrote a reply of more than {} bytes and was stopped",
                                                kMaxWorkerLineBytes)
                                  : child_->LastWords();
    Stop();
    return RuntimeError(fmt::format("onnxruntime {} {}{}{}", ran_.ort.version, kRunnerDied, words.empty() ? "" : ": ",
                                    words));
  }

  // A model in memory, written to the scratch folder once (the child loads files).
  Result<fs::path> Written(const Model& model) {
    if (written_ == &model) return written_path_;
    const fs::path path = scratch_ / fmt::format("model{}.onnx", models_++);
    PARITY_RETURN_IF_ERROR(model.Save(path));
    written_ = &model;
    written_path_ = path;
    return path;
  }

  void Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000)) {
    if (child_) child_->Stop(grace);  // its stdin ends: it exits (or is killed after the grace period)
    child_.reset();
  }

  ScratchDir scratch_;
  RanWhat ran_;
  std::optional<ChildProcess> child_;
  size_t jobs_ = 0;
  const Model* written_ = nullptr;  // the last model in memory written, at written_path_
  fs::path written_path_;
  size_t models_ = 0;
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
