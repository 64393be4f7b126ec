// Test support: where the tests that assemble real cubins find ptxas.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

namespace tensoracle::testing {

// TENSORACLE_PTXAS, else the ptxas of the nvidia-cuda-nvcc wheel in the repository's .venv;
// nullopt when neither exists (the tests then skip with that reason).
inline std::optional<std::filesystem::path> find_ptxas() {
    namespace fs = std::filesystem;
    if (char const* explicit_path = std::getenv("TENSORACLE_PTXAS")) {
        return fs::path{explicit_path};
    }
    // This file is cpp/tests/support/ptxas_support.hpp: four folders up is the repository.
    fs::path const lib =
        fs::path{__FILE__}.parent_path().parent_path().parent_path().parent_path() / ".venv" /
        "lib";
    std::error_code error;
    for (auto const& entry : fs::directory_iterator(lib, error)) {
        fs::path const candidate = entry.path() / "site-packages/nvidia/cu13/bin/ptxas";
        if (fs::is_regular_file(candidate)) {
            return candidate;
        }
    }
    return std::nullopt;
}

} // namespace tensoracle::testing
