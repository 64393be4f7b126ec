// Test support: the cubins that the cubin tests read, assembled from the PTX kernels in
// cpp/tests/cubin/ptx/ (<kernel>.ptx.in, the target written @TARGET@). On Linux ptxas assembles
// them at test time. On Windows, where the Linux ptxas cannot run, the build machine's ptxas
// assembles them at build time from the same files (cpp/tests/CMakeLists.txt) into
// TENSORACLE_TEST_CUBIN_DIR as <kernel>.<arch>.cubin: a cubin's bytes do not depend on the OS
// that reads them.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <system_error>

namespace tensoracle::testing {

// Why a test that needs cubins fails without them: ptxas is part of the test setup (`make test`
// installs it into .venv), so a missing one is a failure, never a skip.
inline constexpr char const* kNoPtxas =
    "no ptxas: set TENSORACLE_PTXAS, or run `make setup` (installs nvidia-cuda-nvcc into .venv)";
inline constexpr char const* kNoPrebuiltCubins =
    "no cubins were assembled at build time: configure with TENSORACLE_HOST_PTXAS set to the "
    "build machine's ptxas, or run `make setup` (installs nvidia-cuda-nvcc into .venv)";

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

// The PTX of test kernel `kernel` for `arch` ("sm_86"); empty when its file cannot be read.
inline std::string kernel_ptx(std::string const& kernel, std::string const& arch) {
    std::filesystem::path const file = std::filesystem::path{__FILE__}.parent_path().parent_path() /
                                       "cubin" / "ptx" / (kernel + ".ptx.in");
    std::ifstream in(file, std::ios::binary);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::string const placeholder = "@TARGET@";
    for (auto at = text.find(placeholder); at != std::string::npos;
         at = text.find(placeholder, at)) {
        text.replace(at, placeholder.size(), arch);
    }
    return text;
}

// Where this machine gets the tests' cubins: ptxas (Linux) or the build's folder of cubins
// (Windows).
class CubinMaker {
public:
    // nullopt, with the reason in `why`, when there is neither.
    static std::optional<CubinMaker> find(std::string& why) {
#ifdef _WIN32
#ifdef TENSORACLE_TEST_CUBIN_DIR
        if (std::filesystem::is_directory(TENSORACLE_TEST_CUBIN_DIR)) {
            return CubinMaker{std::filesystem::path{TENSORACLE_TEST_CUBIN_DIR}};
        }
#endif
        why = kNoPrebuiltCubins;
        return std::nullopt;
#else
        if (auto ptxas = find_ptxas()) {
            return CubinMaker{*ptxas};
        }
        why = kNoPtxas;
        return std::nullopt;
#endif
    }

    // Writes the cubin of `kernel` for `arch` ("sm_86") to `cubin`; false when that fails, with
    // the command or the missing file in `why`.
    bool make(std::string const& kernel, std::string const& arch,
              std::filesystem::path const& cubin, std::string& why) const {
#ifdef _WIN32
        std::filesystem::path const built = source_ / (kernel + "." + arch + ".cubin");
        std::error_code error;
        std::filesystem::copy_file(built, cubin, std::filesystem::copy_options::overwrite_existing,
                                   error);
        if (error) {
            why = "cannot copy " + built.string() + ": " + error.message();
            return false;
        }
        return true;
#else
        std::filesystem::path const ptx = cubin.string() + ".ptx";
        std::string const text = kernel_ptx(kernel, arch);
        if (text.empty()) {
            why = "no PTX for kernel '" + kernel + "'";
            return false;
        }
        std::ofstream(ptx, std::ios::binary) << text;
        std::string const command =
            source_.string() + " --gpu-name=" + arch + " " + ptx.string() + " -o " + cubin.string();
        bool const ok = std::system(command.c_str()) == 0;
        std::filesystem::remove(ptx);
        if (!ok) {
            why = "failed: " + command;
        }
        return ok;
#endif
    }

private:
    explicit CubinMaker(std::filesystem::path source) : source_(std::move(source)) {}

    std::filesystem::path source_; // ptxas, or the folder of cubins assembled at build time
};

} // namespace tensoracle::testing
