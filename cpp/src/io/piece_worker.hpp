// Work on the pieces of a file done on a thread of its own (hashing them, say): the thread that
// reads the file hands each piece over as it is read and goes on reading, so that the work and
// the reading overlap on two cores. The pieces must stay valid and unchanged until finish()
// returns (the bytes of a private copy do).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>

namespace tensoracle {

class PieceWorker {
public:
    using Work = std::function<void(std::span<std::byte const> piece)>;

    // A thread that calls `work` on each piece added, in order; `work` must outlive the worker.
    explicit PieceWorker(Work work);
    PieceWorker(PieceWorker const&) = delete;
    PieceWorker& operator=(PieceWorker const&) = delete;
    PieceWorker(PieceWorker&&) = delete;
    PieceWorker& operator=(PieceWorker&&) = delete;
    // Stops the thread; the pieces it was still to work on are dropped.
    ~PieceWorker();

    // Queues `piece`, worked on after every piece queued before it.
    void add(std::span<std::byte const> piece);
    // Waits until every queued piece is worked on; rethrows what the work threw (no piece is
    // worked on after that). Call it once.
    void finish();

private:
    void run() noexcept;

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::span<std::byte const>> pending_;
    bool finishing_ = false; // hex_digest() waits: hash what is queued, then stop
    bool stopping_ = false;  // the destructor: stop now
    bool finished_ = false;  // the thread has stopped
    std::exception_ptr failure_;
    Work work_;
    std::thread thread_; // last: started once everything above exists
};

} // namespace tensoracle
