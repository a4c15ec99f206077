// The version every sessionrt binary prints for --version: the CMake project version, plus
// `git describe --tags --always --dirty` of the source tree when it was a git checkout at
// configure time, e.g. "0.1.0 (git e95def8-dirty)". Generated into the build by the top-level
// CMakeLists.txt (<build>/generated/sessionrt_version.cpp, part of sessionrt_runtime).
#pragma once

namespace sessionrt::runtime {

const char* version_string();

}  // namespace sessionrt::runtime
