// The error taxonomy of the C++ core. Every error a user can meet derives from tensoracle::Error;
// the Python bindings map each class onto the exception type named by the specification.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace tensoracle {

// Base of every error the library reports to its users.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A caller passed a value the library cannot accept (Python: ValueError).
class InvalidArgument : public Error {
public:
    using Error::Error;
};

// A filesystem operation failed; the message names the path and the OS reason (Python: OSError).
class FileError : public Error {
public:
    FileError(std::string const& what, std::filesystem::path path)
        : Error(what), path_(std::move(path)) {}
    std::filesystem::path const& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

// Base of the saved-engine errors (Python: tensoracle.EngineCacheError, a ValueError).
class EngineCacheError : public Error {
public:
    EngineCacheError(std::string const& what, std::filesystem::path path)
        : Error(what), path_(std::move(path)) {}
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

// A saved engine's inputs or outputs differ from the declaration.
class EngineIOError : public EngineCacheError {
public:
    using EngineCacheError::EngineCacheError;
};

// Renders "<what> '<path>': <reason of errno>" for OS failures.
[[noreturn]] void throw_file_error(std::string_view what, std::filesystem::path const& path,
                                   int error_number);

} // namespace tensoracle
