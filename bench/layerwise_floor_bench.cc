// The every-layer job's own floor as a process (issue 26): what a C++
// program on the same ORT does with nothing of parity's in it. Given the
// mark-all model (every node output a graph output) prepared beforehand,
// untimed, it makes ORT's environment, the session at `disable`, one run,
// and writes one .npy per output (header + ORT's bytes, one write each, no
// hash, no statistics, no fsync, no manifest). Time the whole process
// against `parity baseline` (farm-bench): process start, loading ORT and
// reading the inputs are in both, as they are in any command-line tool;
// bench/peers/layerwise_floor.py is the same job inside a running Python.
//
//   layerwise_floor_bench MARKED.onnx INPUTS.npz OUT_DIR
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

// The wrapper reaches the ORT that parity loads (ort/ort_library.h).
#ifndef ORT_API_MANUAL_INIT
#define ORT_API_MANUAL_INIT
#endif
#include <onnxruntime_cxx_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/npy_header.h"
#include "core/npz.h"
#include "ort/ort_library.h"

namespace {

using namespace parity;

// FLOOR_TIMES=1: each step's end in ms since main began, on stderr.
void Mark(const char* step) {
  static const auto start = std::chrono::steady_clock::now();
  static const bool on = std::getenv("FLOOR_TIMES") != nullptr;
  if (on)
    std::fprintf(stderr, "%s %.1f ms\n", step,
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int Main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: layerwise_floor_bench MARKED.onnx INPUTS.npz OUT_DIR\n");
    return 2;
  }
  Mark("start");
  auto inputs = ReadNpz(argv[2]);
  if (!inputs) {
    std::fprintf(stderr, "%s\n", inputs.error().message().c_str());
    return 2;
  }
  if (auto lib = ort::LoadedOrtLibrary(); !lib) {
    std::fprintf(stderr, "%s\n", lib.error().message().c_str());
    return 2;
  }
  Mark("inputs, ORT loaded");
  Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "floor");
  Mark("env");
  Ort::SessionOptions so;
  so.SetGraphOptimizationLevel(ORT_DISABLE_ALL);
  Ort::Session session(env, argv[1], so);
  Mark("session");
  Ort::AllocatorWithDefaultOptions alloc;
  std::vector<std::string> in_names, out_names;
  for (size_t i = 0; i < session.GetInputCount(); ++i)
    in_names.push_back(session.GetInputNameAllocated(i, alloc).get());
  for (size_t i = 0; i < session.GetOutputCount(); ++i)
    out_names.push_back(session.GetOutputNameAllocated(i, alloc).get());
  const Ort::MemoryInfo cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  std::vector<Ort::Value> feeds;
  std::vector<const char*> in_ptrs, out_ptrs;
  for (const auto& name : in_names) {
    const Tensor* t = inputs->Find(name);
    if (t == nullptr) {
      std::fprintf(stderr, "input '%s' not in %s\n", name.c_str(), argv[2]);
      return 2;
    }
    feeds.push_back(Ort::Value::CreateTensor(cpu, const_cast<void*>(static_cast<const void*>(t->data())),
                                             t->byte_size(), t->shape().data(), t->shape().size(),
                                             static_cast<ONNXTensorElementDataType>(DTypeToOnnx(t->dtype()))));
    in_ptrs.push_back(name.c_str());
  }
  for (const auto& name : out_names) out_ptrs.push_back(name.c_str());
  auto outs = session.Run(Ort::RunOptions{nullptr}, in_ptrs.data(), feeds.data(), feeds.size(), out_ptrs.data(),
                          out_ptrs.size());
  Mark("run");
  const std::filesystem::path dir = argv[3];
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i < outs.size(); ++i) {
    auto info = outs[i].GetTensorTypeAndShapeInfo();
    const auto dtype = DTypeFromOnnx(static_cast<int>(info.GetElementType()));
    if (!dtype) continue;
    const Shape shape = info.GetShape();
    auto header = EncodeNpyHeader(*dtype, shape);
    if (!header) continue;
    const size_t bytes = info.GetElementCount() * DTypeSize(*dtype);
    const std::string path = (dir / fmt::format("{:04d}.npy", i)).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || !WriteAll(fd, header->data(), header->size()) ||
        !WriteAll(fd, outs[i].GetTensorRawData(), bytes)) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 2;
    }
    ::close(fd);
  }
  Mark("written");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const Ort::Exception& e) {
    std::fprintf(stderr, "layerwise_floor_bench: %s\n", e.what());
    return 2;
  }
}
