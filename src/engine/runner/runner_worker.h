// The child side of an ORT runner in another process (`parity runner-worker`,
// hidden) and the files a job travels in. The framing is the dataset
// worker's (cli/cmd_dataset_worker.cc): the child's first line says it is
// ready, "O<TAB>VERSION<TAB>LIBRARY" (the ORT it loaded); then each request
// line "INDEX<TAB>DIR" on its stdin is answered by "E<TAB>INDEX" once
// DIR/outputs.npz is written, or "B<TAB>INDEX<TAB>job<TAB>MESSAGE" (one line)
// when the job failed. A job folder holds job.json ({"model", "names",
// "save_plan", "inputs": [names]}) and inputs.npz (keys t0, t1, ... in that
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

namespace parity {

Status WriteRunnerJob(const std::filesystem::path& dir, const RunnerJob& job, const TensorSet& inputs);
Result<std::pair<RunnerJob, TensorSet>> ReadRunnerJob(const std::filesystem::path& dir);
Status WriteJobValues(const std::filesystem::path& dir, const std::string& stem, const TensorSet& values);
Result<TensorSet> ReadJobValues(const std::filesystem::path& dir, const std::string& stem);

// The child's loop: says it is ready, then runs each request on `runner`
// until `in` ends. Returns 0; a malformed request line ends it with 2.
int ServeRunnerJobs(std::istream& in, std::ostream& out, Runner& runner);

// "O\tVERSION\tLIBRARY" back into the fact (empty fields when it is not one).
OrtFact ParseReadyLine(const std::string& line);

}  // namespace parity
