// Full reads of saved engines for `tensoracle cache verify`.
#include "tensoracle/cache/cache_verification.hpp"

#include "io/platform.hpp"
#include "tensoracle/cache/cache_file.hpp"
#include "tensoracle/cache/cache_listing.hpp"
#include "tensoracle/cache/engine_file.hpp"
#include "tensoracle/cache/plan_checksum.hpp"
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

namespace {

struct Finding {
    VerifyStatus status = VerifyStatus::intact;
    std::string reason;
};

// The full check of one file; with `file_name`, an engine whose header names another file is
// unrecognized (checked before its plan is hashed: no open reads it anyway).
Finding check_engine_file(std::filesystem::path const& path, std::string_view file_name) {
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
        // Mapped: the check hands nothing on, and a save over the entry stays possible.
        FileContents const contents(file.get(), path, Holding::mapped);
        contents.advise_sequential();
        std::span<std::byte const> const bytes = contents.bytes();
        DecodedHeader const decoded = decode_engine_header(bytes, bytes.size(), path);
        EngineHeader const& header = decoded.header;
        if (!file_name.empty()) {
            if (auto mismatch = entry_name_mismatch(file_name, header.conditions)) {
                return {VerifyStatus::unrecognized, std::move(*mismatch)};
            }
        }
        if (decoded.plan_offset > bytes.size() ||
            bytes.size() - decoded.plan_offset != header.plan_size) {
            return {VerifyStatus::damaged, "the file holds " + std::to_string(bytes.size()) +
                                               " bytes but its header records a plan of " +
                                               std::to_string(header.plan_size) +
                                               " bytes at offset " +
                                               std::to_string(decoded.plan_offset)};
        }
        std::string const checksum = plan_checksum_hex(bytes.subspan(decoded.plan_offset));
        if (checksum != header.plan_xxh3_128) {
            return {VerifyStatus::damaged, "plan checksum mismatch: the header records XXH3-128 " +
                                               header.plan_xxh3_128 + " but the plan hashes to " +
                                               checksum};
        }
        return {};
    } catch (Error const& error) {
        return {VerifyStatus::damaged, error.what()};
    }
}

} // namespace

std::string engine_file_damage(std::filesystem::path const& path) {
    return check_engine_file(path, {}).reason;
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
            Finding finding = check_engine_file(directory / entry.name, entry.name);
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
