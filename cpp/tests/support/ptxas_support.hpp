// Test support: where the tests that assemble real cubins find ptxas.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

namespace tensoracle::testing {

// Why a test that needs ptxas fails without one: ptxas is part of the test setup (`make test`
// installs it into .venv), so a missing one is a failure, never a skip.
inline constexpr char const* kNoPtxas =
    "no ptxas: set TENSORACLE_PTXAS, or run `make setup` (installs nvidia-cuda-nvcc into .venv)";

// TENSORACLE_PTXAS, else the ptxas of the nvidia-cuda-nvcc wheel in the repository's .venv;
// nullopt when neither exists (the tests then fail with kNoPtxas).
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
