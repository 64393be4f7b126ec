// A SHA-256 computed on a thread of its own: the thread that reads a file hands each piece over
// as it is read and goes on reading, so that hashing and reading overlap on two cores. The pieces
// must stay valid and unchanged until hex_digest() returns (the bytes of a private copy do).
#pragma once

#include "tensoracle/io/hash.hpp"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <span>
#include <string>
#include <thread>

namespace tensoracle {

class Sha256Worker {
public:
    Sha256Worker();
    Sha256Worker(Sha256Worker const&) = delete;
    Sha256Worker& operator=(Sha256Worker const&) = delete;
    Sha256Worker(Sha256Worker&&) = delete;
    Sha256Worker& operator=(Sha256Worker&&) = delete;
    // Stops the thread; what it was still to hash is dropped.
    ~Sha256Worker();

    // Queues `piece`, hashed after every piece queued before it.
    void add(std::span<std::byte const> piece);
    // Waits until every queued piece is hashed and returns the digest (64 lowercase hex digits);
    // rethrows what hashing threw. Call it once.
    std::string hex_digest();

private:
    void run() noexcept;

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::span<std::byte const>> pending_;
    bool finishing_ = false; // hex_digest() waits: hash what is queued, then stop
    bool stopping_ = false;  // the destructor: stop now
    bool finished_ = false;  // the thread has stopped
    std::exception_ptr failure_;
    Sha256 sha256_;
    std::thread thread_; // last: started once everything above exists
};

} // namespace tensoracle
