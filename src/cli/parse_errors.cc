#include "cli/parse_errors.h"

#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/inputs/input_check.h"

namespace parity::cli {
namespace {

std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

// "--report", "-o", ... of `app` (its help flag included).
std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::string Suggest(const std::string& word, const std::vector<std::string>& names) {
  const std::string close = ClosestName(word, names);
  return close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close);
}

// The deepest selected subcommand ("baseline verify"), or nullptr.
const CLI::App* Selected(const CLI::App& app) {
  const CLI::App* at = nullptr;
  for (const CLI::App* cur = &app;;) {
    const auto subs = cur->get_subcommands();
    if (subs.empty()) return at;
    at = cur = subs.front();
  }
}

std::string Path(const CLI::App* sub) {
  std::string path;
  for (const CLI::App* a = sub; a != nullptr && a->get_parent() != nullptr; a = a->get_parent())
    path = path.empty() ? a->get_name() : a->get_name() + " " + path;
  return path;
}

// The message without the help hint; `sub` is the selected subcommand.
std::string Explain(const CLI::App& app, const CLI::App* sub, const CLI::ParseError& e, int argc, char** argv) {
  // No command chosen: the first word is a typo or missing.
  if (sub == nullptr) {
    const std::vector<std::string> commands = CommandNames(app);
    for (int i = 1; i < argc; ++i) {
      const std::string word = argv[i];
      if (word.starts_with("-")) continue;
      return fmt::format("unknown command '{}'{}; commands: {}", word, Suggest(word, commands),
                         fmt::join(commands, ", "));
    }
    return fmt::format("a command is required: {}", fmt::join(commands, ", "));
  }
  const std::string where = Path(sub);
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    // The words no option or positional took, in command-line order.
    std::vector<std::string> extras;
    for (const CLI::App* a = sub; a != nullptr; a = a->get_parent())
      for (const auto& w : a->remaining()) extras.push_back(w);
    const std::vector<std::string> options = OptionNames(*sub);
    for (const std::string& word : extras) {
      if (word.starts_with("-") && word.size() > 1 && !std::isdigit(static_cast<unsigned char>(word[1]))) {
        const std::string name = word.substr(0, word.find('='));
        return fmt::format("{}: unknown option '{}'{}", where, name, Suggest(name, options));
      }
    }
    if (!extras.empty()) {
      const std::vector<std::string> commands = CommandNames(*sub);
      return fmt::format("{}: unexpected argument '{}'{}", where, extras.front(),
                         commands.empty() ? " (every positional argument is already given)"
                                          : Suggest(extras.front(), commands));
    }
  }
  return fmt::format("{}: {}", where, e.what());
}

}  // namespace

std::string ExplainParseError(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const CLI::App* sub = Selected(app);
  const std::string help = sub == nullptr ? "parity --help" : "parity " + Path(sub) + " --help";
  return Explain(app, sub, e, argc, argv) + " (see " + help + ")";
}

}  // namespace parity::cli
