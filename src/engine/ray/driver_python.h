// Which Python runs the Ray engine's driver (python/parity/_ray_engine.py,
// engine/ray/ray_driver.h), and the other Python parts of parity (the GenAI
// driver, fix's derived copies, `parity view`, the corpus recorder):
// --ray-python, else $PARITY_PYTHON, else the Python of the parity package
// this binary belongs to: the environment of the site-packages it is
// installed in, or, for a binary built in a checkout (BUILD/parity beside
// python/parity/), the checkout's .venv with python/ on PYTHONPATH; else
// python3 from PATH.
#pragma once

#include <string>

#include "core/status.h"

namespace parity {

struct DriverPython {
  std::string python;      // a path, or a name found on PATH
  std::string pythonpath;  // prepended to PYTHONPATH when not empty (a checkout's python/)
  std::string origin;      // "--ray-python", "PARITY_PYTHON", "the package's environment", ...
};

// For the binary at `exe`. kInvalidArgument, one line naming where the
// Python came from, when it is not an executable file (or not on PATH).
Result<DriverPython> FindDriverPython(const std::string& ray_python, const std::string& exe);
Result<DriverPython> FindDriverPython(const std::string& ray_python);  // exe: /proc/self/exe

// `python` as a path to run: itself when it has a '/', else the first
// executable file of that name in a PATH folder (FindDriverPython's
// search), else itself.
std::string PythonPath(const std::string& python);

// The driver's Python found and asked, before anything runs, whether it can
// import parity and ray (importlib's find_spec: neither is imported; 60 s at
// most). kInvalidArgument, one line naming the Python, where it came from
// and what it lacks: `PARITY_PYTHON=/bin/false` or a Python without parity
// was exit 3 after the dataset was listed (issue 56, class 15).
Result<DriverPython> CheckDriverPython(const std::string& ray_python);

}  // namespace parity
