// Windows: a saved engine file that another process keeps open itself (as an application's own
// open() does: sharing read and write, not delete) cannot be replaced or removed until it is
// closed. A save over it fails with a clear error and leaves the saved engine as it was; a prune
// reports the entry as a failed removal and keeps it; once the file is closed, a save replaces it.
// The store's own reads never hold the file: see file_contents.hpp.
#include "cache/listing.hpp"
#include "cache/pruning.hpp"
#include "cache/store.hpp"
#include "support/cache_test_support.hpp"
#include "support/child_process.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <cerrno>
#include <chrono>
#include <fstream>
#include <gtest/gtest.h>
#include <thread>
#include <windows.h>

namespace tensoracle {
namespace {

EngineIdentity held_identity() {
    return make_identity({{"name", "held"}, {"graph_version", "1"}});
}

// Child: opens arguments[0] as an application would (GENERIC_READ, sharing read and write),
// creates the file arguments[1] to say so, and keeps the file open until arguments[2] exists.
int holder_role(std::vector<std::string> const& arguments) {
    std::filesystem::path const entry = arguments.at(0);
    HANDLE file = ::CreateFileW(entry.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
                                nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) {
        return 3;
    }
    std::ofstream(arguments.at(1)) << "open";
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (!std::filesystem::exists(arguments.at(2)) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::CloseHandle(file);
    return 0;
}
// Registered before main, as GoogleTest registers the tests themselves; a failure there ends the
// binary before any test runs.
// NOLINTNEXTLINE(cert-err58-cpp)
bool const holder_registered = testing::register_child_role("entry_holder", holder_role);

// Another process that keeps `entry` open until release() (or the destructor).
class Holder {
public:
    Holder(std::filesystem::path const& entry, std::filesystem::path const& scratch)
        : opened_(scratch / "opened"), release_(scratch / "release"),
          child_("entry_holder", {entry.string(), opened_.string(), release_.string()}) {
        auto const deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
        while (!std::filesystem::exists(opened_)) {
            if (std::chrono::steady_clock::now() > deadline) {
                throw std::runtime_error("the holding process did not open the entry");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    Holder(Holder const&) = delete;
    Holder& operator=(Holder const&) = delete;
    ~Holder() { release(); }
    int release() {
        if (!status_) {
            std::ofstream(release_) << "release";
            status_ = child_.wait().value_or(-1);
        }
        return *status_;
    }

private:
    std::filesystem::path opened_;
    std::filesystem::path release_;
    testing::ChildProcess child_;
    std::optional<int> status_;
};

bool same_plan(std::optional<SavedEngine> const& saved, std::vector<std::byte> const& plan) {
    return saved && saved->plan().size() == plan.size() &&
           std::equal(plan.begin(), plan.end(), saved->plan().begin());
}

TEST(StoreHeldOpen, ASaveOverAnEntryHeldOpenFailsClearlyAndTheEntryStays) {
    testing::TemporaryDirectory cache;
    testing::TemporaryDirectory scratch;
    Store const store(cache.path());
    auto const id = held_identity();
    auto const first = testing::random_bytes(40'000, 1);
    auto const second = testing::random_bytes(30'000, 2);
    auto const entry = store.save(id, nlohmann::json::object(), first);
    auto const names_before = testing::names_in(cache.path());

    Holder holder(entry, scratch.path());
    try {
        store.save(id, nlohmann::json::object(), second);
        FAIL() << "expected FileError: the entry is held open by another process";
    } catch (FileError const& error) {
        EXPECT_EQ(error.error_number(), EACCES);
        EXPECT_EQ(error.path(), entry);
        std::string const message = error.what();
        EXPECT_NE(message.find(entry.string()), std::string::npos) << message;
        EXPECT_NE(message.find("another process keeps the file open"), std::string::npos)
            << message;
        EXPECT_NE(message.find("the saved engine is unchanged"), std::string::npos) << message;
    }
    // Nothing saved is lost, no temporary file stays, and the store still reads the entry while
    // the other process holds it.
    EXPECT_EQ(testing::names_in(cache.path()), names_before);
    EXPECT_TRUE(same_plan(store.read(id), first));

    EXPECT_EQ(holder.release(), 0);
    store.save(id, nlohmann::json::object(), second); // what force_rebuild=True does
    EXPECT_TRUE(same_plan(store.read(id), second));
}

TEST(StoreHeldOpen, APruneOfAnEntryHeldOpenIsAFailedRemovalAndItStays) {
    testing::TemporaryDirectory cache;
    testing::TemporaryDirectory scratch;
    Store const store(cache.path());
    auto const plan = testing::random_bytes(10'000, 3);
    auto const entry = store.save(held_identity(), nlohmann::json::object(), plan);
    auto const plan_all = [&] {
        PruneCriterion criterion;
        criterion.cutoff_ns = std::numeric_limits<std::int64_t>::max();
        auto const scan = scan_cache(cache.path());
        return plan_prune(scan.entries, criterion, [](CacheEntry const&) { return false; });
    };

    {
        Holder holder(entry, scratch.path());
        PrunePlan const planned = plan_all();
        ASSERT_EQ(planned.selected.size(), 1U);
        PruneResult const result = execute_prune(store, planned);
        EXPECT_TRUE(result.removed.empty());
        ASSERT_EQ(result.failed.size(), 1U);
        EXPECT_EQ(result.failed[0].name, entry.filename().string());
        EXPECT_NE(result.failed[0].reason.find("another process keeps the file open"),
                  std::string::npos)
            << result.failed[0].reason;
        EXPECT_TRUE(same_plan(store.read(held_identity()), plan));
    }
    // Planned again: the read above recorded its time in the entry.
    PruneResult const again = execute_prune(store, plan_all());
    EXPECT_EQ(again.removed.size(), 1U);
    EXPECT_FALSE(std::filesystem::exists(entry));
}

} // namespace
} // namespace tensoracle
