#include "cli/model_explorer_option.h"

#include <fmt/format.h>

#include <filesystem>

#include "cli/output.h"
#include "onnx/graph.h"
#include "onnx/model.h"

namespace parity::cli {

void AddModelExplorerOption(CLI::App* cmd, std::string* dir) {
  cmd->add_option("--model-explorer", *dir,
                  "write Model Explorer node data (per-node error, status, module, fused node) into DIR "
                  "(docs/model-explorer.md)");
}

Status CheckModelExplorerOption(const std::string& dir) {
  if (dir.empty()) return {};
  PARITY_RETURN_IF_ERROR(CheckOutputPath(dir, "--model-explorer", /*directory=*/true));
  return CheckModelExplorerDir(dir);
}

Status WriteModelExplorerOption(const std::string& dir, ModelExplorerInput in,
                                std::optional<ModelExplorerLinks>* links, const std::string& report_dir) {
  if (dir.empty()) return {};
  // The graph's structure only: the weights play no part in node ids.
  auto model = Model::Load(in.model, {.external_data = false});
  if (!model) return std::unexpected(model.error().With("--model-explorer"));
  auto view = BuildGraphView(*model);
  if (!view) return std::unexpected(view.error().With("--model-explorer"));
  in.graph = &*view;
  std::error_code ec;
  in.model = std::filesystem::absolute(in.model, ec).string();  // the README's command works from anywhere
  // Everything is rendered before the first byte is written.
  const auto files = RenderModelExplorerFiles(in, dir);
  PARITY_RETURN_IF_ERROR(WriteModelExplorerFiles(dir, files));
  fmt::print("model explorer: {} ({} files; open as {}/README.md says)\n", dir, files.size(), dir);
  if (links) {
    namespace fs = std::filesystem;
    ModelExplorerLinks l{.dir = dir};
    const fs::path abs = fs::absolute(dir, ec);
    if (!report_dir.empty()) {
      const fs::path rel = fs::absolute(dir, ec).lexically_relative(fs::absolute(report_dir, ec));
      l.href_dir = rel.empty() ? abs.string() : rel.string();
    } else {
      l.href_dir = abs.string();
    }
    for (const auto& f : files) l.files.push_back(f.name);
    l.commands.push_back(ModelExplorerCommand(files, abs, in.model, false));
    for (const auto& f : files)
      if (f.optimized_graph) {
        l.commands.push_back(ModelExplorerCommand(files, abs, in.model, true));
        break;
      }
    *links = std::move(l);
  }
  return {};
}

}  // namespace parity::cli
