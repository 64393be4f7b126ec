// Work on pieces handed over by another thread (see piece_worker.hpp).
#include "io/piece_worker.hpp"

#include <utility>

namespace tensoracle {

PieceWorker::PieceWorker(Work work) : work_(std::move(work)), thread_([this] { run(); }) {}

PieceWorker::~PieceWorker() {
    {
        std::scoped_lock const lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void PieceWorker::add(std::span<std::byte const> piece) {
    {
        std::scoped_lock const lock(mutex_);
        pending_.push_back(piece);
    }
    changed_.notify_one();
}

void PieceWorker::run() noexcept {
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
                work_(piece);
            } catch (...) {
                failure_ = std::current_exception();
            }
        }
        lock.lock();
    }
    finished_ = true;
    changed_.notify_all();
}

void PieceWorker::finish() {
    std::unique_lock lock(mutex_);
    finishing_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return finished_; });
    if (failure_) {
        std::rethrow_exception(failure_);
    }
}

} // namespace tensoracle
