#include "e2e_util.h"

#include <optional>

#include "onnx/builder.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace parity::e2e {

Child Start(const std::vector<std::string>& argv) {
  Child child;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0) return child;
  if (pipe(err_pipe) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return child;
  }
  child.start = std::chrono::steady_clock::now();
  child.pid = fork();
  if (child.pid == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  child.out_fd = out_pipe[0];
  child.err_fd = err_pipe[0];
  return child;
}

Child StartParity(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {PARITY_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return Start(argv);
}

ProcessResult Finish(Child& child) {
  ProcessResult result;
  if (child.pid <= 0) return result;
  pollfd fds[2] = {{child.out_fd, POLLIN, 0}, {child.err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  char buf[65536];
  for (int open_fds = 2; open_fds > 0;) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  rusage usage{};
  wait4(child.pid, &status, 0, &usage);
  child.pid = -1;
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - child.start).count();
  result.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  result.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
  result.written_bytes = static_cast<int64_t>(usage.ru_oublock) * 512;
  result.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

ProcessResult RunProgram(const std::vector<std::string>& argv) {
  Child child = Start(argv);
  return Finish(child);
}

ProcessResult RunParity(const std::vector<std::string>& args) {
  Child child = StartParity(args);
  return Finish(child);
}

nlohmann::json ReadJson(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

void WriteText(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

void ExpectExit(const ProcessResult& r, int code) {
  EXPECT_EQ(r.term_signal, 0) << "killed by signal " << r.term_signal << "\n" << r.err;
  EXPECT_EQ(r.exit_code, code) << r.out << r.err;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

Model AddReluModel(float c, const std::string& output, const std::string& scope) {
  ModelBuilder b;
  auto x = b.Input("input", DType::kFloat32, {1, 4});
  std::string y;
  {
    std::optional<ModelBuilder::ScopeGuard> guard;
    if (!scope.empty()) guard.emplace(b.Scope(scope));
    y = b.Relu(b.Add(x, b.ConstWeight("c", {1, 4}, c)));
  }
  b.Output(y, output);
  return *b.Build();
}

Tensor AddReluInput() {
  Tensor t(DType::kFloat32, {1, 4});
  for (float& v : t.mutable_view<float>()) v = 1.0f;
  return t;
}

ProcessResult WriteReshapeModel(const std::string& dir, const std::string& savez_args) {
  const std::string script = R"(
import sys, numpy as np, onnx
from onnx import helper, TensorProto
x = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['n', 8])
s = helper.make_tensor_value_info('s', TensorProto.INT64, [2])
y = helper.make_tensor_value_info('y', TensorProto.FLOAT, None)
g = helper.make_graph([helper.make_node('Reshape', ['x', 's'], ['y'], name='the_reshape')], 'g', [x, s], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.save(m, sys.argv[1] + '/m.onnx')
np.savez(sys.argv[1] + '/in.npz', )" + savez_args + ")\n";
  return RunProgram({PARITY_PYTHON, "-c", script, dir});
}

}  // namespace parity::e2e
