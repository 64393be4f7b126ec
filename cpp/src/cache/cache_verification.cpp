// Full reads of saved engines for `tensoracle cache verify`.
#include "tensoracle/cache/cache_verification.hpp"

#include "io/platform.hpp"
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
    }
    return "damaged";
}

} // namespace

std::string engine_file_damage(std::filesystem::path const& path) {
    try {
        platform::Descriptor const file{
            platform::open_file(path, O_RDONLY, 0, platform::Follow::links)};
        if (!file.valid()) {
            throw_file_error("cannot open", path, errno);
        }
        FileContents const contents(file.get(), path); // a save over the entry stays possible
        contents.advise_sequential();
        std::span<std::byte const> const bytes = contents.bytes();
        DecodedHeader const decoded = decode_engine_header(bytes, bytes.size(), path);
        EngineHeader const& header = decoded.header;
        if (decoded.plan_offset > bytes.size() ||
            bytes.size() - decoded.plan_offset != header.plan_size) {
            return "the file holds " + std::to_string(bytes.size()) +
                   " bytes but its header records a plan of " + std::to_string(header.plan_size) +
                   " bytes at offset " + std::to_string(decoded.plan_offset);
        }
        std::string const checksum = plan_checksum_hex(bytes.subspan(decoded.plan_offset));
        if (checksum != header.plan_xxh3_128) {
            return "plan checksum mismatch: the header records XXH3-128 " + header.plan_xxh3_128 +
                   " but the plan hashes to " + checksum;
        }
        return {};
    } catch (Error const& error) {
        return error.what();
    }
}

CacheVerification verify_cache(std::filesystem::path const& directory) {
    CacheVerification verification;
    verification.directory = directory;
    for (CacheEntry const& entry : scan_cache(directory, false).entries) {
        VerifiedEntry checked{entry.name, entry.size_bytes, VerifyStatus::intact, {}};
        if (entry.temporary || entry.size_bytes == 0) {
            checked.status = VerifyStatus::skipped;
            checked.reason = entry.temporary ? "temporary file (building or leftover)"
                                             : "empty file (building or leftover)";
        } else if (std::string damage = engine_file_damage(directory / entry.name);
                   !damage.empty()) {
            checked.status = VerifyStatus::damaged;
            checked.reason = std::move(damage);
            ++verification.damaged_count;
        }
        verification.entries.push_back(std::move(checked));
    }
    return verification;
}

nlohmann::json verification_json(CacheVerification const& verification) {
    nlohmann::json entries = nlohmann::json::array();
    nlohmann::json damaged = nlohmann::json::array();
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
        intact += entry.status == VerifyStatus::intact ? 1 : 0;
        skipped += entry.status == VerifyStatus::skipped ? 1 : 0;
    }
    return {{"directory", verification.directory.string()},
            {"entries", std::move(entries)},
            {"damaged", std::move(damaged)},
            {"intact_count", intact},
            {"damaged_count", verification.damaged_count},
            {"skipped_count", skipped}};
}

} // namespace tensoracle
