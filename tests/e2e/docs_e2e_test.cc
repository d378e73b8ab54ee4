// The docs match the binary (issue 15): every option that any `--help`
// prints is written somewhere in README.md or docs/, every command is, and the
// report schemas in docs/ validate what the binary writes (the JSON Schema
// checks live next to each report's e2e test; this file checks the compare
// report and that every schema file is valid JSON Schema).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/npz.h"
#include "e2e_util.h"
#include "onnx/builtin_models.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string AllDocs() {
  std::string text = ReadAll(fs::path(PARITY_SOURCE_DIR) / "README.md");
  for (const auto& entry : fs::directory_iterator(fs::path(PARITY_SOURCE_DIR) / "docs"))
    if (entry.path().extension() == ".md") text += ReadAll(entry.path());
  return text;
}

// The subcommands `parity --help` lists (CLI11: "Subcommands:" then "  name  description").
std::vector<std::string> Subcommands(const std::string& help) {
  std::vector<std::string> out;
  bool in_section = false;
  for (const auto& line : e2e::Lines(help)) {
    if (line.starts_with("Subcommands:")) {
      in_section = true;
      continue;
    }
    std::smatch m;
    static const std::regex kName(R"(^  ([a-z][a-z-]*)\s)");
    if (in_section && std::regex_search(line, m, kName)) out.push_back(m[1]);
  }
  return out;
}

// The long options a help text lists ("  --atol FLOAT ...").
std::set<std::string> Options(const std::string& help) {
  std::set<std::string> out;
  static const std::regex kOption(R"((?:^|[ ,])(--[a-z][a-z0-9-]+))");
  for (const auto& line : e2e::Lines(help)) {
    // Only the option column: from the first '-' of an indented line up to
    // the first run of two spaces (the description follows).
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || start == 0 || line[start] != '-') continue;
    const size_t end = line.find("  ", start);
    const std::string column = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    for (std::sregex_iterator it(column.begin(), column.end(), kOption), stop; it != stop; ++it)
      out.insert((*it)[1]);
  }
  out.erase("--help");
  return out;
}

TEST(Docs, EveryCommandAndEveryOptionOfEveryHelpIsDocumented) {
  const std::string docs = AllDocs();
  auto top = e2e::RunParity({"--help"});
  ASSERT_EQ(top.exit_code, 0);
  const auto commands = Subcommands(top.out);
  // The 11 commands of src/cli/cmd_*.cc (align, baseline, bench, check, compare, demo, env, inputs,
  // inspect, locate, run): fewer means the help was not parsed, and nothing below would be checked.
  ASSERT_GE(commands.size(), 11u) << top.out;
  std::vector<std::vector<std::string>> helps;
  for (const auto& c : commands) helps.push_back({c});
  helps.push_back({"baseline", "verify"});
  std::vector<std::string> missing;
  for (const auto& words : helps) {
    const std::string cmd = fmt::format("{}", fmt::join(words, " "));
    if (docs.find("parity " + cmd) == std::string::npos) missing.push_back(fmt::format("command 'parity {}'", cmd));
    std::vector<std::string> args = words;
    args.push_back("--help");
    auto r = e2e::RunParity(args);
    ASSERT_EQ(r.exit_code, 0) << cmd;
    // A help text is never cut mid-sentence.
    EXPECT_EQ(r.out.find("'s\n"), std::string::npos) << r.out;
    for (const auto& opt : Options(r.out)) {
      static const std::string kBoundary = " `[(|,=";
      bool found = false;
      for (size_t at = docs.find(opt); at != std::string::npos && !found; at = docs.find(opt, at + 1)) {
        const size_t after = at + opt.size();
        found = after >= docs.size() || !(std::isalnum(static_cast<unsigned char>(docs[after])) || docs[after] == '-');
      }
      if (!found) missing.push_back(fmt::format("parity {} {}", cmd, opt));
    }
  }
  EXPECT_TRUE(missing.empty()) << "not in README.md or docs/*.md:\n  " << fmt::format("{}", fmt::join(missing, "\n  "));
}

// Validates with Debian's python3-jsonschema; empty when valid.
std::string SchemaErrors(const std::string& schema, const fs::path& report) {
  const std::string script =
      "import json, sys, jsonschema\n"
      "s = json.load(open(sys.argv[1]))\n"
      "jsonschema.Draft202012Validator.check_schema(s)\n"
      "if len(sys.argv) > 2: jsonschema.validate(json.load(open(sys.argv[2])), s)\n";
  std::vector<std::string> argv = {PARITY_PYTHON, "-c", script,
                                   (fs::path(PARITY_SOURCE_DIR) / "docs" / schema).string()};
  if (!report.empty()) argv.push_back(report.string());
  auto r = e2e::RunProgram(argv);
  return r.exit_code == 0 ? "" : r.err + r.out;
}

bool HaveJsonSchema() {
  return e2e::RunProgram({PARITY_PYTHON, "-c", "import jsonschema"}).exit_code == 0;
}

TEST(Docs, EverySchemaFileIsAValidJsonSchema) {
  ASSERT_TRUE(HaveJsonSchema()) << PARITY_PYTHON " lacks jsonschema (make creates .venv/)";
  int n = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(PARITY_SOURCE_DIR) / "docs"))
    if (entry.path().string().ends_with(".schema.json")) {
      ++n;
      EXPECT_EQ(SchemaErrors(entry.path().filename().string(), {}), "") << entry.path();
    }
  EXPECT_GE(n, 2);
}

TEST(Docs, TheCompareReportValidatesAgainstItsSchema) {
  ASSERT_TRUE(HaveJsonSchema()) << PARITY_PYTHON " lacks jsonschema (make creates .venv/)";
  const fs::path dir = e2e::MakeTempDir("parity-docs-compare");
  TensorSet a, b;
  Tensor x(DType::kFloat32, {4}), y(DType::kFloat32, {4});
  for (int i = 0; i < 4; ++i) {
    x.mutable_view<float>()[i] = static_cast<float>(i);
    y.mutable_view<float>()[i] = static_cast<float>(i) * 1.5f;
  }
  ASSERT_TRUE(a.Add("out", x).has_value());
  ASSERT_TRUE(b.Add("out", y).has_value());
  ASSERT_TRUE(WriteNpz(dir / "a.npz", a).has_value());
  ASSERT_TRUE(WriteNpz(dir / "b.npz", b).has_value());
  auto r = e2e::RunParity({"compare", (dir / "a.npz").string(), (dir / "b.npz").string(), "--json",
                           (dir / "c.json").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(SchemaErrors("compare.schema.json", dir / "c.json"), "");
  fs::remove_all(dir);
}

TEST(Docs, TheEnvAndInspectReportsValidateAgainstTheirSchemas) {
  ASSERT_TRUE(HaveJsonSchema()) << PARITY_PYTHON " lacks jsonschema (make creates .venv/)";
  const fs::path dir = e2e::MakeTempDir("parity-docs-env");
  ASSERT_TRUE(ConvBnRelu().Save(dir / "m.onnx").has_value());
  ASSERT_EQ(e2e::RunParity({"env", "--json", (dir / "env.json").string()}).exit_code, 0);
  ASSERT_EQ(e2e::RunParity({"inspect", (dir / "m.onnx").string(), "--json", (dir / "i.json").string()}).exit_code, 0);
  EXPECT_EQ(SchemaErrors("env.schema.json", dir / "env.json"), "");
  EXPECT_EQ(SchemaErrors("inspect.schema.json", dir / "i.json"), "");
  fs::remove_all(dir);
}

TEST(Docs, TheLocateReportValidatesAgainstItsSchema) {
  ASSERT_TRUE(HaveJsonSchema()) << PARITY_PYTHON " lacks jsonschema (make creates .venv/)";
  const fs::path dir = e2e::MakeTempDir("parity-docs-locate");
  const fs::path model = dir / "conv_bn_relu.onnx";
  ASSERT_TRUE(ConvBnRelu().Save(model).has_value());
  auto r = e2e::RunParity({"locate", model.string(), "--no-ablation", "--json", (dir / "l.json").string()});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_EQ(SchemaErrors("locate.schema.json", dir / "l.json"), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parity
