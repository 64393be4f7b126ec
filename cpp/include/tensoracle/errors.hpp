// The error taxonomy of the C++ core. Every error a user can meet derives from tensoracle::Error;
// the Python bindings map each class onto the exception type named by the specification.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace tensoracle {

// What a refusal is about, as data, beside the message that tells it: the Python bindings copy
// these onto the exception (e.path, e.field, e.observed, e.expected, e.remedy), so that callers
// act on a refusal without parsing its text. A member is empty where it does not apply.
struct Refusal {
    // The file or object refused: a path, a URL or an object key.
    std::string subject{};
    // Where, members joined by '.', indexes in brackets (`entries[0].io.tensors[1].shape`); for an
    // engine or cubin file, in its manifest entry (`io.tensors[1].dtype`); empty for all of it.
    std::string field{};
    // What was found there, as text.
    std::string observed{};
    // What was required instead, as text.
    std::string expected{};
    // What the user can do about it, where the library knows.
    std::string remedy{};
};

// A refusal about `subject` as a whole. (The deploy headers are C++17: no designated
// initializers here.)
inline Refusal refusal_of(std::string subject) {
    Refusal refusal;
    refusal.subject = std::move(subject);
    return refusal;
}

// The one wording of a refusal: "<where> <found>, expected <expected>. <remedy>", each part left
// out where it is empty (": expected <expected>" when nothing is found), as in
// "deploy.json: entries[0].plan.size is \"9\", expected a whole number >= 0".
std::string refusal_text(std::string_view where, std::string_view found, std::string_view expected,
                         std::string_view remedy = {});

// The message of a refusal made from its fields alone, in that wording: "<subject>: <field> is
// <observed>, expected <expected>. <remedy>".
std::string render(Refusal const& refusal);

// Base of every error the library reports to its users.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    // A refusal told by `what`, carrying its fields.
    Error(std::string const& what, Refusal refusal)
        : std::runtime_error(what), refusal_(std::move(refusal)) {}
    // A refusal whose message is render(refusal).
    explicit Error(Refusal refusal)
        : std::runtime_error(render(refusal)), refusal_(std::move(refusal)) {}
    // The refusal's fields; all empty for an error raised without them.
    Refusal const& refusal() const noexcept { return refusal_; }

private:
    Refusal refusal_;
};

// A caller passed a value the library cannot accept (Python: ValueError).
class InvalidArgument : public Error {
public:
    using Error::Error;
};

// A filesystem operation failed; the message names the path and the OS reason (Python: OSError,
// or the subclass of its errno, such as FileNotFoundError for ENOENT).
class FileError : public Error {
public:
    FileError(std::string const& what, std::filesystem::path path, int error_number = 0)
        : Error(what, refusal_of(path.string())), path_(std::move(path)),
          error_number_(error_number) {}
    std::filesystem::path const& path() const noexcept { return path_; }
    // The errno of the failed call; 0 when the failure is not one of the operating system's.
    int error_number() const noexcept { return error_number_; }

private:
    std::filesystem::path path_;
    int error_number_;
};

// Base of the saved-engine errors (Python: tensoracle.EngineCacheError, a ValueError).
class EngineCacheError : public Error {
public:
    EngineCacheError(std::string const& what, std::filesystem::path path)
        : Error(what, refusal_of(path.string())), path_(std::move(path)) {}
    // The refusal's subject is the path.
    EngineCacheError(std::string const& what, Refusal const& refusal)
        : Error(what, refusal), path_(refusal.subject) {}
    explicit EngineCacheError(Refusal const& refusal) : Error(refusal), path_(refusal.subject) {}
    std::filesystem::path const& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

// A saved engine file is incomplete, damaged, or written in a format this build cannot read.
class CorruptEngineError : public EngineCacheError {
public:
    using EngineCacheError::EngineCacheError;
};

// A saved header records build conditions other than the ones asked for.
class EngineConditionError : public EngineCacheError {
public:
    using EngineCacheError::EngineCacheError;
};

// A remote engine is unsigned, or not signed by the key this node trusts.
class UntrustedEngineError : public EngineCacheError {
public:
    using EngineCacheError::EngineCacheError;
};

// An encrypted engine cannot be opened with the key given: none was given, it is no recipient
// of the engine, or what it unwraps is not the engine's data key (Python:
// tensoracle.EngineKeyError, an EngineCacheError).
class EngineKeyError : public EngineCacheError {
public:
    using EngineCacheError::EngineCacheError;
};

// A saved engine's inputs or outputs differ from the declaration.
class EngineIOError : public EngineCacheError {
public:
    using EngineCacheError::EngineCacheError;
};

// No saved engine can run on this machine's GPU with this runtime: the message lists every
// candidate and why (Python: tensoracle.EngineTargetError, a ValueError).
class EngineTargetError : public Error {
public:
    using Error::Error;
};

// TensorRT refused what the library asked of it (a runtime, an execution context, a shape, an
// address, an enqueue), as opposed to a refusal of the library's own checks: the message quotes
// the errors TensorRT logged where it logged any. Raised by the header-only TensorRT adapter
// (tensoracle/deploy/tensorrt.hpp); the Python package raises RuntimeError for these, as 1.x.
class TensorRtError : public Error {
public:
    using Error::Error;
};

// Base of the cubin bundle errors: a bundle directory, its cubins or a plugin library that cannot
// be trusted as they are (Python: tensoracle.BundleError, a ValueError). Carries the path.
class BundleError : public Error {
public:
    BundleError(std::string const& what, std::filesystem::path path)
        : Error(what, refusal_of(path.string())), path_(std::move(path)) {}
    // The refusal's subject is the path.
    BundleError(std::string const& what, Refusal const& refusal)
        : Error(what, refusal), path_(refusal.subject) {}
    std::filesystem::path const& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

// A cubin file that an entry of bundle.json names does not exist.
class MissingCubinError : public BundleError {
public:
    using BundleError::BundleError;
};

// A cubin's length or SHA-256 differs from its entry, or it lacks the entry's kernel function.
class CorruptCubinError : public BundleError {
public:
    using BundleError::BundleError;
};

// A cubin's ELF header names no SM the inspector accepts, or another SM than its entry's
// target_sm.
class CubinArchitectureError : public BundleError {
public:
    using BundleError::BundleError;
};

// A plugin library is unreadable, lacks the bundle digest symbol, carries another digest, or does
// not export an entry's cubin bytes.
class PluginBundleMismatchError : public BundleError {
public:
    using BundleError::BundleError;
};

// A kernel's parameter ABI or scratch needs are not the ones the cubin runtime supports. Every
// BundleAbiError is a BundleError; catching BundleError is enough.
class BundleAbiError : public BundleError {
public:
    using BundleError::BundleError;
};

// The cubin runtime cannot run a kernel here: no cubin for the device's SM, resources beyond the
// device's limits, or a CUDA driver call that failed (the message names the call and the code).
class CubinRuntimeError : public Error {
public:
    using Error::Error;
};

// Renders "<what> '<path>': <reason of errno>" for OS failures.
[[noreturn]] void throw_file_error(std::string_view what, std::filesystem::path const& path,
                                   int error_number);

} // namespace tensoracle
