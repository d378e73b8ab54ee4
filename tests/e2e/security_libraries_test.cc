// Issue 46, third hostile-input review: the shared libraries parity loads.
// Class 1: plugin-EP discovery ran a library planted in a .venv above the
// binary, on `parity env` and every `check --report`, though no provider
// asked for it. Class 6: a truncated library or a FIFO given as the ORT or a
// plugin EP died with SIGBUS or blocked. Class 7 (its library part): a bad
// --ep-library with `check` was a FAIL (exit 1).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "core/npz.h"
#include "e2e_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using e2e::RunParity;
using e2e::RunProgram;
using e2e::TempDir;

using e2e::ExpectExit;

// ROOT/lib/python3.12/site-packages/onnxruntime_ep_planted/libonnxruntime_providers_planted_plugin.so,
// a copy of the planted fixture.
fs::path Plant(const fs::path& root) {
  const fs::path pkg = root / "lib" / "python3.12" / "site-packages" / "onnxruntime_ep_planted";
  fs::create_directories(pkg);
  const fs::path lib = pkg / "libonnxruntime_providers_planted_plugin.so";
  fs::copy_file(PARITY_PLANTED_FIXTURE, lib, fs::copy_options::overwrite_existing);
  return lib;
}

// Runs `binary args...` with discovery on, no VIRTUAL_ENV unless given, and
// the planted library's mark at `marker`.
e2e::ProcessResult RunWith(const std::string& binary, const fs::path& marker, const std::string& venv,
                           const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"env", "-u", "VIRTUAL_ENV", "-u", "PARITY_EP_LIBRARY", "PARITY_EP_DISCOVERY=1",
                                   "PARITY_PLANTED_MARKER=" + marker.string()};
  if (!venv.empty()) argv.push_back("VIRTUAL_ENV=" + venv);
  argv.push_back(binary);
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv);
}

// Class 1: a .venv beside a folder above the binary is anyone's who can
// write that folder. The binary (copied into a shared folder) never looks
// there: neither `env` nor `check --report` loads or lists what lies there.
TEST(SecurityLibraries, ALibraryPlantedInAVenvAboveTheBinaryIsNeverLoaded) {
  TempDir tmp("parity_planted");
  const fs::path shared = tmp / "shared";
  fs::create_directories(shared / "tools");
  const fs::path binary = shared / "tools" / "parity";
  fs::copy_file(PARITY_BINARY, binary);
  Plant(shared / ".venv");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  const fs::path marker = tmp / "ran";

  auto env = RunWith(binary.string(), marker, "", {"env"});
  ExpectExit(env, 0);
  EXPECT_FALSE(fs::exists(marker)) << "the planted library's constructor ran";
  EXPECT_EQ(env.out.find("planted"), std::string::npos) << env.out;

  auto check = RunWith(binary.string(), marker, "",
                       {"check", (tmp / "m.onnx").string(), "--runs", "1", "--report", (tmp / "r").string()});
  ExpectExit(check, 0);
  EXPECT_FALSE(fs::exists(marker)) << "the planted library's constructor ran";
}

// Class 1: a library of the binary's own environment ($VIRTUAL_ENV) is listed
// but loaded only when a config names its provider; one in a package folder
// anyone may write is not even listed.
TEST(SecurityLibraries, ADiscoveredLibraryIsLoadedOnlyWhenAProviderNamesIt) {
  TempDir tmp("parity_planted");
  const fs::path lib = Plant(tmp / "venv");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  const fs::path marker = tmp / "ran";
  const std::string venv = (tmp / "venv").string();

  auto env = RunWith(PARITY_BINARY, marker, venv, {"env"});
  ExpectExit(env, 0);
  EXPECT_NE(env.out.find("python package onnxruntime_ep_planted"), std::string::npos) << env.out;
  EXPECT_FALSE(fs::exists(marker)) << "`parity env` loaded a library no provider names";
  auto check = RunWith(PARITY_BINARY, marker, venv,
                       {"check", (tmp / "m.onnx").string(), "--runs", "1", "--report", (tmp / "r").string()});
  ExpectExit(check, 0);
  EXPECT_FALSE(fs::exists(marker)) << "`check --report` loaded a library no provider names";

  // Named: loaded (and, being no EP, refused by ORT: bad input, one line).
  TensorSet in;
  ASSERT_TRUE(in.Add("input", e2e::AddReluInput()));
  ASSERT_TRUE(WriteNpz(tmp / "in.npz", in));
  auto named = RunWith(PARITY_BINARY, marker, venv,
                       {"run", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npz").string(), "--providers",
                        "planted", "-o", (tmp / "o.npz").string()});
  ExpectExit(named, 2);
  EXPECT_TRUE(fs::exists(marker)) << named.err;
  EXPECT_EQ(e2e::Lines(named.err).size(), 1u) << named.err;

  fs::permissions(lib.parent_path(), fs::perms::others_write, fs::perm_options::add);
  auto writable = RunWith(PARITY_BINARY, marker, venv, {"env"});
  ExpectExit(writable, 0);
  EXPECT_EQ(writable.out.find("onnxruntime_ep_planted"), std::string::npos) << writable.out;
}

// Class 6: a truncated library (an interrupted copy) and a FIFO, as the ORT
// (--ort-library, PARITY_ORT_LIBRARY) and as a plugin EP: one line, exit 2,
// never a signal nor a hang.
TEST(SecurityLibraries, TruncatedLibrariesAndFifosAreRefusedBeforeLoading) {
  TempDir tmp("parity_lib");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  auto where = RunParity({"env"});
  ASSERT_EQ(where.exit_code, 0) << where.err;
  const size_t at = where.out.find("onnxruntime   ");
  ASSERT_NE(at, std::string::npos) << where.out;
  const size_t open = where.out.find('(', at), close = where.out.find(")\n", at);
  const fs::path ort = where.out.substr(open + 1, close - open - 1);
  ASSERT_TRUE(fs::is_regular_file(ort)) << ort;
  const fs::path cut = tmp / "libonnxruntime.so.1";
  {
    std::ifstream in(ort, std::ios::binary);
    std::string bytes(static_cast<size_t>(fs::file_size(ort)) / 2, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(cut, std::ios::binary) << bytes;
  }
  const fs::path fifo = tmp / "fifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const fs::path& bad : {cut, fifo}) {
    auto a = RunParity({"run", (tmp / "m.onnx").string(), "--ort-library", bad.string()});
    ExpectExit(a, 2);
    EXPECT_EQ(e2e::Lines(a.err).size(), 1u) << a.err;
    auto b = RunProgram({"env", "PARITY_ORT_LIBRARY=" + bad.string(), PARITY_BINARY, "env"});
    ExpectExit(b, 2);
    auto c = RunParity({"run", (tmp / "m.onnx").string(), "--ep-library", "x=" + bad.string()});
    ExpectExit(c, 2);
    EXPECT_EQ(e2e::Lines(c.err).size(), 1u) << c.err;
  }
  auto a = RunParity({"env", "--ort-library", cut.string()});
  EXPECT_NE(a.err.find("truncated"), std::string::npos) << a.err;
  auto f = RunParity({"env", "--ep-library", "x=" + fifo.string()});
  EXPECT_NE(f.err.find("FIFO"), std::string::npos) << f.err;
}

// Class 7: a bad --ep-library is a mistake in the command: `check` says so
// (exit 2), it does not report a FAIL (exit 1) that CI reads as divergence.
TEST(SecurityLibraries, ABadEpLibraryWithCheckIsBadInputNotAFail) {
  TempDir tmp("parity_lib");
  ASSERT_TRUE(e2e::AddReluModel().Save(tmp / "m.onnx"));
  for (const std::string& bad : {std::string("x=/nonexistent/libx.so"), "x=" + (tmp / "m.onnx").string()}) {
    auto r = RunParity({"check", (tmp / "m.onnx").string(), "--runs", "1", "--ep-library", bad});
    ExpectExit(r, 2);
    EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
  }
}

}  // namespace
}  // namespace parity
