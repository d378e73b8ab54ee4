// The loop of one Ray actor of the corpus check (engine/ray/corpus_ray.h),
// served by the hidden `parity corpus-worker MODEL --corpus DIR`
// (cli/cmd_corpus_worker.cc). The protocol is the one worker protocol
// (core/worker_protocol.h), as the dataset worker speaks it: "O<TAB>0" once the session exists, then for
// each entry record read (its index is a prompt's) the prompt's row
// (FormatCorpusRow, engine/generate/corpus_result.h) and "E<TAB>INDEX".
#pragma once

#include <iosfwd>
#include <string>

#include "core/status.h"

namespace parity {

struct CorpusWorkerOptions {
  std::string model, corpus, target_config;  // the step model, the record's folder, a RunConfig JSON file
  int threads = 0;                           // > 0: the session's intra-op threads
};

// Loads the record and the config, opens the model's session once
// (CorpusSession), writes "O<TAB>0", then answers every record read from `in`
// until it ends. Returns {} when `in` ends; an error (nothing more written)
// for a file that does not load, a session ORT refuses, a prompt that fails,
// or a line that is too long, no record, or names a prompt the corpus does not
// have (kInvalidArgument).
Status ServeCorpusWorker(const CorpusWorkerOptions& o, std::istream& in, std::ostream& out);

}  // namespace parity
