// Full reads of saved engines for `tensoracle cache verify`.
#include "cache/verification.hpp"

#include "cache/engine_file_check.hpp"
#include "cache/listing.hpp"

#include <utility>

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
