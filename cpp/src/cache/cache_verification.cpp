// Full reads of saved engines for `tensoracle cache verify`.
#include "tensoracle/cache/cache_verification.hpp"

#include "cache/engine_file_check.hpp"
#include "io/platform.hpp"
#include "tensoracle/cache/cache_file.hpp"
#include "tensoracle/cache/cache_listing.hpp"
#include "tensoracle/cache/engine_file.hpp"
#include "tensoracle/cache/store.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/io/file_contents.hpp"

#include <cerrno>
#include <fcntl.h>

namespace tensoracle {
namespace {

std::string_view verify_status_text(VerifyStatus status) noexcept {
    switch (status) {
    case VerifyStatus::intact:
        return "intact";
    case VerifyStatus::damaged:
        return "damaged";
    case VerifyStatus::skipped:
        return "skipped";
    case VerifyStatus::unrecognized:
        return "unrecognized";
    }
    return "damaged";
}

} // namespace

namespace detail {

EngineFileFinding check_engine_file(std::filesystem::path const& path, std::string_view file_name,
                                    PieceObserver const& observe) {
    try {
        platform::Descriptor const file{open_cache_file(path, O_RDONLY)};
        if (!file.valid()) {
            if (errno == ELOOP) {
                return {VerifyStatus::unrecognized, link_refusal(path)};
            }
            throw_file_error("cannot open", path, errno);
        }
        auto const status = platform::status(file.get());
        if (!status) {
            throw_file_error("cannot stat", path, errno);
        }
        if (status->kind != platform::FileKind::regular) {
            return {VerifyStatus::unrecognized,
                    not_regular_refusal(path, status->kind == platform::FileKind::directory)};
        }
        // Copied into this process's memory, as Store::read reads, never mapped: a file cut
        // short while it is checked is a short copy (reported truncated), where the pages of a
        // mapping past the cut would end the process with SIGBUS. The copy is no longer than the
        // size measured at its start, whatever the file grows to meanwhile.
        FileContents const contents(file.get(), path, observe);
        std::span<std::byte const> const bytes = contents.bytes();
        DecodedHeader const decoded = decode_engine_header(bytes, bytes.size(), path);
        if (!file_name.empty()) {
            if (auto mismatch = entry_name_mismatch(file_name, decoded.header.conditions)) {
                return {VerifyStatus::unrecognized, std::move(*mismatch)};
            }
        }
        // The plan's checks are Store::read's own (its XXH3-128, then each chunk's in format 2):
        // what verify calls intact, an open accepts, given the conditions the header records.
        auto const plan = bytes.subspan(static_cast<std::size_t>(decoded.plan_offset));
        if (auto const damage = plan_damage(plan, decoded.header)) {
            return {VerifyStatus::damaged, std::string("plan checksum mismatch: ") + *damage};
        }
        return {};
    } catch (Error const& error) {
        return {VerifyStatus::damaged, error.what()};
    }
}

} // namespace detail

std::string engine_file_damage(std::filesystem::path const& path) {
    return detail::check_engine_file(path, {}, {}).reason;
}

CacheVerification verify_cache(std::filesystem::path const& directory) {
    CacheVerification verification;
    verification.directory = directory;
    for (CacheEntry const& entry : scan_cache(directory, false).entries) {
        VerifiedEntry checked{entry.name, entry.size_bytes, VerifyStatus::intact, {}};
        if (!entry.regular) {
            checked.status = VerifyStatus::unrecognized; // never opened
            checked.reason = entry.reason;
        } else if (entry.temporary || entry.size_bytes == 0) {
            checked.status = VerifyStatus::skipped;
            checked.reason = entry.temporary ? "temporary file (building or leftover)"
                                             : "empty file (building or leftover)";
        } else {
            detail::EngineFileFinding finding =
                detail::check_engine_file(directory / entry.name, entry.name, {});
            checked.status = finding.status;
            checked.reason = std::move(finding.reason);
        }
        verification.damaged_count += checked.status == VerifyStatus::damaged ? 1 : 0;
        verification.unrecognized_count += checked.status == VerifyStatus::unrecognized ? 1 : 0;
        verification.entries.push_back(std::move(checked));
    }
    return verification;
}

nlohmann::json verification_json(CacheVerification const& verification) {
    nlohmann::json entries = nlohmann::json::array();
    nlohmann::json damaged = nlohmann::json::array();
    nlohmann::json unrecognized = nlohmann::json::array();
    std::size_t intact = 0;
    std::size_t skipped = 0;
    for (VerifiedEntry const& entry : verification.entries) {
        nlohmann::json json = {{"file_name", entry.name},
                               {"size_bytes", entry.size_bytes},
                               {"status", verify_status_text(entry.status)}};
        if (!entry.reason.empty()) {
            json["reason"] = entry.reason;
        }
        entries.push_back(std::move(json));
        if (entry.status == VerifyStatus::damaged) {
            damaged.push_back({{"file_name", entry.name}, {"reason", entry.reason}});
        }
        if (entry.status == VerifyStatus::unrecognized) {
            unrecognized.push_back({{"file_name", entry.name}, {"reason", entry.reason}});
        }
        intact += entry.status == VerifyStatus::intact ? 1 : 0;
        skipped += entry.status == VerifyStatus::skipped ? 1 : 0;
    }
    return {{"directory", verification.directory.string()},
            {"entries", std::move(entries)},
            {"damaged", std::move(damaged)},
            {"unrecognized", std::move(unrecognized)},
            {"intact_count", intact},
            {"damaged_count", verification.damaged_count},
            {"skipped_count", skipped},
            {"unrecognized_count", verification.unrecognized_count}};
}

} // namespace tensoracle
