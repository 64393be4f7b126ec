// The SHA-256 of pieces handed over by another thread (see sha256_worker.hpp).
#include "io/sha256_worker.hpp"

#include <utility>

namespace tensoracle {

Sha256Worker::Sha256Worker() : thread_([this] { run(); }) {}

Sha256Worker::~Sha256Worker() {
    {
        std::scoped_lock const lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void Sha256Worker::add(std::span<std::byte const> piece) {
    {
        std::scoped_lock const lock(mutex_);
        pending_.push_back(piece);
    }
    changed_.notify_one();
}

void Sha256Worker::run() noexcept {
    std::unique_lock lock(mutex_);
    while (true) {
        changed_.wait(lock, [this] { return stopping_ || finishing_ || !pending_.empty(); });
        if (stopping_ || (pending_.empty() && finishing_)) {
            break;
        }
        std::span<std::byte const> const piece = pending_.front();
        pending_.pop_front();
        lock.unlock();
        if (!failure_) {
            try {
                sha256_.update(piece);
            } catch (...) {
                failure_ = std::current_exception();
            }
        }
        lock.lock();
    }
    finished_ = true;
    changed_.notify_all();
}

std::string Sha256Worker::hex_digest() {
    std::unique_lock lock(mutex_);
    finishing_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return finished_; });
    if (failure_) {
        std::rethrow_exception(failure_);
    }
    return sha256_.hex_digest();
}

} // namespace tensoracle
