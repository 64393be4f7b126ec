// Environment variables set for a test's scope, on POSIX and Windows alike.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace tensoracle::testing {

inline void set_variable(char const* name, char const* value) {
#ifdef _WIN32
    ::_putenv_s(name, value);
#else
    ::setenv(name, value, 1);
#endif
}

inline void unset_variable(char const* name) {
#ifdef _WIN32
    ::_putenv_s(name, ""); // removes it
#else
    ::unsetenv(name);
#endif
}

// Sets (or unsets, with nullopt) an environment variable for the life of the object.
class ScopedEnvironment {
public:
    ScopedEnvironment(char const* name, std::optional<std::string> const& value) : name_(name) {
        if (char const* old = std::getenv(name)) {
            old_ = old;
        }
        if (value) {
            set_variable(name, value->c_str());
        } else {
            unset_variable(name);
        }
    }
    ScopedEnvironment(ScopedEnvironment const&) = delete;
    ScopedEnvironment& operator=(ScopedEnvironment const&) = delete;
    ~ScopedEnvironment() {
        if (old_) {
            set_variable(name_, old_->c_str());
        } else {
            unset_variable(name_);
        }
    }

private:
    char const* name_;
    std::optional<std::string> old_;
};

} // namespace tensoracle::testing
