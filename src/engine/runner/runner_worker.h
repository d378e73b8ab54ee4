// The child side of an ORT runner in another process (`parity runner-worker`,
// hidden) and the files a job travels in. The lines are the one worker
// protocol's (core/worker_protocol.h): the child's first line says it is
// ready, "O<TAB>VERSION<TAB>LIBRARY" (the ORT it loaded); then each request
// on its stdin, a framed record of the job's index and folder DIR, is
// answered by "E<TAB>INDEX" once DIR/outputs.npz is written, or by
// "B<TAB>INDEX<TAB>job<TAB>MESSAGE" (one line) and then "E<TAB>INDEX" when
// the job failed. A job folder holds job.json ({"model", "names",
// "save_plan", "keep_session", "sample", "cpu_mem_arena", "limit_seconds", "limit_memory_bytes": the
// parent's run limits, ort/run_limits.h, the job's timeout_s in place of the
// seconds, which bound the child's run}) and inputs.npz (keys t0, t1, ... in that
// order, so tensor names never become zip paths); the answer outputs.npz and
// outputs.json ({"names"}) likewise.
#pragma once

#include <filesystem>
#include <istream>
#include <ostream>
#include <string>
#include <utility>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/runner/runner.h"
#include "ort/run_limits.h"

namespace parity {

Status WriteRunnerJob(const std::filesystem::path& dir, const RunnerJob& job, const TensorSet& inputs);
// A job as the child reads it: what to run, on which inputs, within which limits.
struct RunnerRequest {
  RunnerJob job;
  TensorSet inputs;
  ort::RunLimits limits;  // the parent's when it wrote the job; none when the job names none
};
Result<RunnerRequest> ReadRunnerJob(const std::filesystem::path& dir);
Status WriteJobValues(const std::filesystem::path& dir, const std::string& stem, const TensorSet& values);
Result<TensorSet> ReadJobValues(const std::filesystem::path& dir, const std::string& stem);

// The child's loop: says it is ready, then runs each request on `runner`
// until `in` ends. Returns 0; a request line that is no record (or longer
// than kMaxEntryRecordBytes, read no further) ends it with 2 and one line in
// `error`.
int ServeRunnerJobs(std::istream& in, std::ostream& out, Runner& runner, std::string* error = nullptr);

}  // namespace parity
