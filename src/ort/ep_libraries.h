// Plugin execution provider libraries (ORT >= 1.23: an EP shipped as its own
// shared library, e.g. PyPI's onnxruntime-ep-openvino) and the EP devices they
// bring. No ORT types.
//
// Where the libraries come from, in this order (docs/providers.md):
//   1. AddEpLibrary (the command line's --ep-library NAME=PATH);
//   2. PARITY_EP_LIBRARY: entries NAME=PATH or PATH, separated by ':';
//   3. the Python environment, unless PARITY_EP_DISCOVERY=0: every
//      site-packages/onnxruntime_ep_<name>/libonnxruntime_providers_*_plugin.so
//      of the binary's own environment only (PluginSitePackages): under
//      $VIRTUAL_ENV, the environment whose bin/ holds the binary, or the
//      site-packages the binary itself is installed in; never a folder above
//      it (a .venv there may be anyone's), and never a folder, package or
//      file that another user owns or anyone may write.
// Libraries named by the user (1, 2) are registered into the process's ORT
// environment when first needed (a provider ORT does not have built in,
// EpDevices()), once; a discovered one (3) only when a config names its
// provider (RegisterEpLibrariesFor): `parity env` and a report list it
// without loading it. Every library is checked first (core/library_file.h:
// a regular file whose ELF headers lie inside it).
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace parity::ort {

struct EpLibrary {
  std::string name;    // the registration name ("openvino")
  std::string path;    // the shared library
  std::string origin;  // "--ep-library", "PARITY_EP_LIBRARY", "python package onnxruntime_ep_openvino"
  bool discovered = false;  // found in the Python environment, not named by the user
};

// The site-packages folders discovery looks in, for a binary at `exe` (empty:
// unknown) and a $VIRTUAL_ENV of `virtual_env` (empty: none), existing ones
// only, in order.
std::vector<std::string> PluginSitePackages(const std::string& exe, const std::string& virtual_env);

// The registration name of a provider's library: "OpenVINOExecutionProvider"
// and "OpenVINO" -> "openvino".
std::string ProviderLibraryName(std::string_view provider);

// "NAME=PATH" (or a bare PATH: the name is taken from the file,
// libonnxruntime_providers_openvino_plugin.so -> "openvino"). A relative PATH
// is made absolute against the working directory. kInvalidArgument for an
// empty name or path.
Result<EpLibrary> ParseEpLibrary(std::string_view spec, std::string_view origin);

// Adds a library to register (before any session). A name given twice: the
// later path wins.
void AddEpLibrary(EpLibrary library);

// Every library parity would register: AddEpLibrary's, then
// PARITY_EP_LIBRARY's, then those found in the Python environment (a name
// already given earlier is skipped).
std::vector<EpLibrary> EpLibraries();

// EpLibraries() less the discovered ones no provider of `providers` names.
std::vector<EpLibrary> EpLibrariesFor(const std::vector<std::string>& providers);

// Registers every library the user named (EpLibrariesFor({})) not yet
// registered. A library that does not exist, is no regular file or a
// truncated one, or that ORT cannot load as a plugin EP: kInvalidArgument
// naming it and where it came from (one line).
Status RegisterEpLibraries();

// RegisterEpLibraries, and the discovered library of `provider` if any.
Status RegisterEpLibrariesFor(const std::string& provider);

struct EpDeviceInfo {
  std::string ep_name;      // "OpenVINOExecutionProvider"
  std::string ep_vendor;    // "Intel"
  std::string device_type;  // "cpu", "gpu", "npu"
  std::string device_vendor;
  std::string library;  // the registration name of the library that brought it; empty: built in
  std::map<std::string, std::string> metadata;  // the EP's metadata for the device (OPTIMIZATION_CAPABILITIES, ...)
};

// The EP devices of the process's ORT environment, after RegisterEpLibraries
// (its error, if any, is returned).
Result<std::vector<EpDeviceInfo>> EpDevices();

}  // namespace parity::ort
