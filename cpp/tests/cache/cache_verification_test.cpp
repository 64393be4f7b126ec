// `cache verify` judges an entry as Store::read does, chunk digests included, from the file read
// a piece at a time into one buffer, never held whole nor mapped: a file cut short while it is
// read is reported, not a SIGBUS, no more than the size measured is read, and the memory is a
// piece's. The check of one file is the private detail::check_engine_file
// (src/cache/engine_file_check.hpp), whose pieces the tests watch.
#include "cache/engine_file.hpp"
#include "cache/engine_file_check.hpp"
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "cache/store.hpp"
#include "cache/verification.hpp"
#include "io/file_contents.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <span>
#include <string>
#include <vector>

namespace tensoracle {
namespace {

EngineIdentity identity() {
    return make_identity({{"name", "model"}, {"graph_version", "1"}});
}

bool contains(std::string const& text, std::string const& part) {
    return text.find(part) != std::string::npos;
}

// What follows `marker` in `text` (empty when it is not there).
std::string after(std::string const& text, std::string const& marker) {
    auto const at = text.find(marker);
    return at == std::string::npos ? std::string() : text.substr(at + marker.size());
}

// The entry of `id` as Store::save writes it, but with the header recording `chunk_1_xxh3` as the
// XXH3-128 of chunk 1: the whole plan's checksum, the chunk SHA-256s and every length are right.
void save_with_chunk_1_digest(Store const& store, EngineIdentity const& id,
                              std::span<std::byte const> plan, std::string const& chunk_1_xxh3) {
    EngineHeader header;
    header.conditions = id.conditions;
    header.plan_size = plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(plan);
    header.chunks = plan_chunks_of(plan);
    header.chunks->xxh3_128.at(1) = chunk_1_xxh3;
    std::vector<std::byte> bytes = encode_engine_prefix(header);
    bytes.insert(bytes.end(), plan.begin(), plan.end());
    testing::write_all(store.entry_path(id), bytes);
}

TEST(CacheVerification, AChunkDigestTheHeaderRecordsWronglyIsDamageAsStoreReadRefusesIt) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    auto const id = identity();
    // Two chunks: the first whole, the second 1000 bytes.
    std::vector<std::byte> const plan = testing::random_bytes(kPlanChunkBytes + 1000, 7);
    std::string const observed = plan_chunks_of(plan).xxh3_128.at(1);
    std::string const recorded = plan_checksum_hex(testing::random_bytes(1000, 8));
    ASSERT_NE(observed, recorded);
    save_with_chunk_1_digest(store, id, plan, recorded);
    ASSERT_EQ(read_engine_header(store.entry_path(id)).header.plan_xxh3_128,
              plan_checksum_hex(plan)); // the whole plan's checksum holds

    CacheVerification const verification = verify_cache(store.directory());
    ASSERT_EQ(verification.entries.size(), 1U);
    VerifiedEntry const& entry = verification.entries[0];
    EXPECT_EQ(entry.name, id.file_name);
    EXPECT_EQ(entry.status, VerifyStatus::damaged);
    EXPECT_EQ(verification.damaged_count, 1U);
    EXPECT_FALSE(verification.passed());
    EXPECT_EQ(entry.reason, "plan checksum mismatch: chunk 1 (" + chunk_range_text(1, plan.size()) +
                                "): XXH3-128 " + observed + ", the header records " + recorded);
    EXPECT_EQ(engine_file_damage(store.entry_path(id)), entry.reason);

    // The store's reader refuses the entry for the same difference, in the same words.
    try {
        (void)store.read(id);
        ADD_FAILURE() << "Store::read accepted the entry that verify reports";
    } catch (CorruptEngineError const& error) {
        EXPECT_EQ(after(error.what(), "is unusable: "),
                  after(entry.reason, "plan checksum mismatch: "))
            << error.what();
    }
}

// An intact entry of three pieces of FileContents::kPieceBytes and a header; returns its path.
std::filesystem::path saved_entry(Store const& store) {
    auto const id = identity();
    return store.save(id, nlohmann::json::object(),
                      testing::random_bytes(3 * FileContents::kPieceBytes, 9));
}

// The file is cut to half its size once the first piece is read: the copy is short, and the
// check reports the truncation. A mapping would show no piece to the observer, and the pages
// past the cut would end the process with SIGBUS.
TEST(CacheVerification, AFileCutShortWhileItIsReadIsReportedTruncatedNotMapped) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    auto const path = saved_entry(store);
    auto const measured = std::filesystem::file_size(path);
    auto const plan_size = read_engine_header(path).header.plan_size;
    std::size_t pieces = 0;
    std::uint64_t copied = 0;
    detail::EngineFileFinding const finding = detail::check_engine_file(
        path, path.filename().string(), [&](std::span<std::byte const> piece) {
            if (piece.empty()) {
                return; // the end of the copy
            }
            if (pieces++ == 0) {
                std::filesystem::resize_file(path, measured / 2);
            }
            copied += piece.size();
        });
    EXPECT_EQ(pieces, 2U); // the first piece whole, the second up to the cut
    EXPECT_EQ(copied, measured / 2);
    EXPECT_EQ(finding.status, VerifyStatus::damaged);
    EXPECT_TRUE(contains(finding.reason, "the header records a plan of " +
                                             std::to_string(plan_size) + " bytes but"))
        << finding.reason;
    EXPECT_TRUE(contains(finding.reason, "(truncated)")) << finding.reason;
    EXPECT_TRUE(contains(finding.reason, path.string())) << finding.reason;
}

// Bytes appended once the first piece is read are not read: the copy ends at the size measured,
// and the bytes measured are judged (intact, as Store::read would judge them).
TEST(CacheVerification, NoMoreThanTheSizeMeasuredIsRead) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    auto const path = saved_entry(store);
    auto const measured = std::filesystem::file_size(path);
    std::size_t pieces = 0;
    std::uint64_t copied = 0;
    detail::EngineFileFinding const finding = detail::check_engine_file(
        path, path.filename().string(), [&](std::span<std::byte const> piece) {
            if (piece.empty()) {
                return;
            }
            if (pieces++ == 0) {
                std::ofstream out(path, std::ios::binary | std::ios::app);
                std::vector<char> const more(2 * FileContents::kPieceBytes, 'x');
                out.write(more.data(), static_cast<std::streamsize>(more.size()));
            }
            copied += piece.size();
        });
    EXPECT_GT(std::filesystem::file_size(path), measured); // it did grow
    EXPECT_GE(pieces, 2U);
    EXPECT_EQ(copied, measured);
    EXPECT_EQ(finding.status, VerifyStatus::intact) << finding.reason;
}

// A file of several chunks is read a piece at a time into one buffer of detail::kCheckPieceBytes:
// every piece the read shows lies within that one buffer, however long the file. A copy of the
// whole file, or a mapping, would show pieces spread over the file's length (FileContents reads
// its copy's pieces one after the other in one allocation of the file's size).
TEST(CacheVerification, AFileOfSeveralChunksIsReadThroughOneBufferOfAPiece) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    auto const path = store.save(identity(), nlohmann::json::object(),
                                 testing::random_bytes(3 * kPlanChunkBytes + 1000, 10));
    auto const measured = std::filesystem::file_size(path);
    ASSERT_GT(measured, 12 * detail::kCheckPieceBytes);
    std::size_t pieces = 0;
    std::uint64_t read = 0;
    std::byte const* lowest = nullptr;
    std::byte const* highest = nullptr; // one past the end of the highest piece
    detail::EngineFileFinding const finding = detail::check_engine_file(
        path, path.filename().string(), [&](std::span<std::byte const> piece) {
            if (piece.empty()) {
                return;
            }
            ++pieces;
            read += piece.size();
            // std::less: a total order on pointers into different allocations too.
            if (lowest == nullptr || std::less<>{}(piece.data(), lowest)) {
                lowest = piece.data();
            }
            if (highest == nullptr || std::less<>{}(highest, piece.data() + piece.size())) {
                highest = piece.data() + piece.size();
            }
        });
    EXPECT_EQ(finding.status, VerifyStatus::intact) << finding.reason;
    EXPECT_EQ(read, measured);
    EXPECT_GT(pieces, 12U);
    ASSERT_NE(lowest, nullptr);
    auto const held = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(highest) -
                                                 reinterpret_cast<std::uintptr_t>(lowest));
    EXPECT_LE(held, detail::kCheckPieceBytes)
        << "the pieces of a " << measured << "-byte file span " << held << " bytes of memory";
}

// A header longer than a piece is kept whole across pieces and decoded, and a plan damaged in its
// last chunk, read after it, is damage in Store::read's words.
TEST(CacheVerification, AHeaderLongerThanAPieceIsReadAcrossPiecesAndThePlanJudgedAsStoreReadDoes) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    auto const id = identity();
    nlohmann::json const references = {
        {"note", std::string(detail::kCheckPieceBytes + detail::kCheckPieceBytes / 2, 'n')}};
    auto const path = store.save(id, references, testing::random_bytes(kPlanChunkBytes + 1000, 11));
    ASSERT_GT(read_engine_header(path).plan_offset, detail::kCheckPieceBytes);
    EXPECT_EQ(verify_cache(store.directory()).entries.at(0).status, VerifyStatus::intact);

    // One byte of the plan's last chunk changed: the whole plan's checksum differs.
    auto const size = std::filesystem::file_size(path);
    {
        std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
        auto const at = static_cast<std::streamoff>(size - 10);
        char byte = 0;
        file.seekg(at).read(&byte, 1);
        byte = static_cast<char>(byte ^ 0x5A);
        file.seekp(at).write(&byte, 1);
        ASSERT_TRUE(file.good());
    }
    CacheVerification const verification = verify_cache(store.directory());
    ASSERT_EQ(verification.entries.size(), 1U);
    VerifiedEntry const& entry = verification.entries[0];
    EXPECT_EQ(entry.status, VerifyStatus::damaged);
    EXPECT_TRUE(contains(entry.reason, "plan checksum mismatch: the plan's XXH3-128 checksum is "))
        << entry.reason;
    try {
        (void)store.read(id);
        ADD_FAILURE() << "Store::read accepted the entry that verify reports";
    } catch (CorruptEngineError const& error) {
        EXPECT_EQ(after(error.what(), "is unusable: "),
                  after(entry.reason, "plan checksum mismatch: "))
            << error.what();
    }
}

} // namespace
} // namespace tensoracle
