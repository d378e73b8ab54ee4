#include "engine/ray/corpus_worker.h"

#include <istream>
#include <ostream>

#include <fmt/format.h>

#include "core/worker_protocol.h"
#include "core/run_config.h"
#include "engine/generate/corpus_check.h"
#include "engine/generate/corpus_record.h"
#include "engine/generate/corpus_result.h"

namespace parity {

Status ServeCorpusWorker(const CorpusWorkerOptions& o, std::istream& in, std::ostream& out) {
  PARITY_ASSIGN_OR_RETURN(const CorpusRecord record, LoadCorpusRecord(o.corpus));
  PARITY_ASSIGN_OR_RETURN(RunConfig config, LoadRunConfig(o.target_config));
  if (o.threads > 0) config.intra_op_threads = o.threads;
  PARITY_ASSIGN_OR_RETURN(const CorpusSession session, CorpusSession::Open(o.model, config, record));
  out << FormatReadyLine({"0"}) << std::endl;
  std::string line;
  for (bool too_long = false; ReadBoundedLine(in, line, kMaxEntryRecordBytes, too_long);) {
    if (too_long) return InvalidArgument("corpus-worker: a request line too long");
    PARITY_ASSIGN_OR_RETURN(const EntryRecord entry, WithContext(ParseEntryRecord(line), "corpus-worker"));
    const auto index = static_cast<int64_t>(entry.index);
    if (index >= record.prompts)
      return InvalidArgument(fmt::format("corpus-worker: prompt {} is not in the corpus", index));
    PARITY_ASSIGN_OR_RETURN(const CorpusPrompt row, session.Run(index));
    out << FormatCorpusRow(row) << '\n' << FormatDoneLine(index) << std::endl;
  }
  return {};
}

}  // namespace parity
