// The checks of a pulled or saved entry against its manifest entry (see manifest_entry_check.hpp).
#include "deploy/manifest_entry_check.hpp"

#include "cache/engine_file.hpp"
#include "cache/entry_file.hpp"
#include "io/hash.hpp"
#include "io/hex_digits.hpp"
#include "remote/object.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/message_text.hpp"

#include <algorithm>
#include <cerrno>
#include <set>
#include <utility>

namespace tensoracle::deploy::detail {

namespace {

// A value as the messages show it (as Python's repr shows the manifest's numbers and texts).
std::string quoted(std::string const& text) {
    return "'" + text + "'";
}

Signature signature_of(std::string const& hex) {
    Signature signature{};
    tensoracle::detail::from_lower_hex(hex, signature);
    return signature;
}

// Throws EngineConditionError naming the first field in which `what` (an object or a file whose
// decoded header is `decoded`, of `size` bytes) differs from `expected`.
void check_difference(ExpectedEntry const& expected, std::string const& what,
                      DecodedHeader const& decoded, std::uint64_t size,
                      std::filesystem::path const& path) {
    std::string const not_the_entry = what + " is not the entry " + expected.where + " records: ";
    nlohmann::json const& found = decoded.header.conditions;
    if (found != expected.conditions) {
        std::set<std::string> keys;
        for (nlohmann::json const* side : {&found, &expected.conditions}) {
            for (auto const& [key, value] : side->items()) {
                auto const other = (side == &found ? expected.conditions : found).find(key);
                if (other == (side == &found ? expected.conditions : found).end() ||
                    *other != value) {
                    keys.insert(key);
                }
            }
        }
        throw EngineConditionError(
            not_the_entry + "its conditions differ in " +
                joined(std::vector<std::string>(keys.begin(), keys.end()), ", ") + " (" +
                expected.where + ".conditions)",
            Refusal{.subject = path.string(),
                    .field = "conditions",
                    .observed = "conditions that differ in " +
                                joined(std::vector<std::string>(keys.begin(), keys.end()), ", "),
                    .expected = "the conditions " + expected.where + " records"});
    }
    ManifestEntry const& entry = *expected.entry;
    if (decoded.header.plan_size != entry.plan_size) {
        throw EngineConditionError(not_the_entry + expected.where + ".plan.size is " +
                                       std::to_string(entry.plan_size) + ", its header records " +
                                       std::to_string(decoded.header.plan_size),
                                   Refusal{.subject = path.string(),
                                           .field = "plan.size",
                                           .observed = std::to_string(decoded.header.plan_size),
                                           .expected = std::to_string(entry.plan_size)});
    }
    if (decoded.header.plan_xxh3_128 != entry.plan_xxh3_128) {
        throw EngineConditionError(not_the_entry + expected.where + ".plan.xxh3_128 is " +
                                       quoted(entry.plan_xxh3_128) + ", its header records " +
                                       quoted(decoded.header.plan_xxh3_128),
                                   Refusal{.subject = path.string(),
                                           .field = "plan.xxh3_128",
                                           .observed = quoted(decoded.header.plan_xxh3_128),
                                           .expected = quoted(entry.plan_xxh3_128)});
    }
    if (size != entry.engine_bytes) {
        throw EngineConditionError(not_the_entry + expected.where + ".engine_bytes is " +
                                       std::to_string(entry.engine_bytes) + ", it holds " +
                                       std::to_string(size),
                                   Refusal{.subject = path.string(),
                                           .field = "engine_bytes",
                                           .observed = std::to_string(size),
                                           .expected = std::to_string(entry.engine_bytes)});
    }
}

// Throws UntrustedEngineError (a verified signed manifest's entry) or EngineConditionError when
// the SHA-256 of the preamble and header `prefix` of `what` is not the manifest's header_sha256.
void check_header_digest(ExpectedEntry const& expected, std::string const& what,
                         std::span<std::byte const> prefix, std::filesystem::path const& path) {
    std::optional<std::string> const& recorded = expected.entry->header_sha256;
    if (!recorded) {
        return;
    }
    std::string const digest = sha256_hex(prefix);
    if (digest == *recorded) {
        return;
    }
    std::string const message = what + " is not the entry " + expected.where +
                                " records: the SHA-256 of its preamble and header is " + digest +
                                ", " + expected.where + ".header_sha256 is " + *recorded;
    Refusal refusal{.subject = path.string(),
                    .field = "header_sha256",
                    .observed = digest,
                    .expected = *recorded};
    if (expected.bound) {
        throw UntrustedEngineError(message, refusal);
    }
    throw EngineConditionError(message, refusal);
}

// Judges the complete preamble and header `prefix` of `what`, an engine file of `size` bytes.
void check_prefix(ExpectedEntry const& expected, std::string const& what,
                  std::span<std::byte const> prefix, std::uint64_t size,
                  std::filesystem::path const& path) {
    DecodedHeader const decoded = decode_engine_header(prefix, size, path);
    check_difference(expected, what, decoded, size, path);
    // Then the whole header, which binds every chunk's digest (what the fields above do not show).
    check_header_digest(expected, what, prefix, path);
}

} // namespace

ExpectedEntry expected_entry(ManifestEntry const& entry, std::string where) {
    ExpectedEntry expected;
    expected.entry = &entry;
    expected.where = std::move(where);
    expected.conditions =
        parse_bounded_json(entry.conditions_json, {.max_bytes = entry.conditions_json.size()});
    if (entry.fleet && entry.fleet->signature) {
        expected.signature = signature_of(*entry.fleet->signature);
    }
    expected.bound = !entry.manifest_signers.empty();
    return expected;
}

void check_saved_entry(std::filesystem::path const& path, ExpectedEntry const& expected) {
    auto const entry = open_regular_entry(path, {"the saved entry", ""});
    if (!entry) {
        throw_file_error("cannot open the saved entry", path, ENOENT);
    }
    std::uint64_t const size = entry->status.size;
    auto const prefix = read_engine_prefix(entry->file.get(), size, path);
    check_prefix(expected, "the saved entry " + path.string(), prefix, size, path);
}

ObjectCheck::ObjectCheck(ExpectedEntry const& expected, std::string url, std::uint64_t object_size)
    : expected_(expected), url_(std::move(url)), needed_(kEnginePreambleBytes) {
    std::uint64_t const engine_bytes = expected.entry->engine_bytes;
    if (object_size == engine_bytes && expected.signature) {
        throw EngineConditionError("the remote engine " + url_ + " is not the object " +
                                       expected.where + " records: it is unsigned, and " +
                                       expected.where + ".fleet.signature records a signature",
                                   Refusal{.subject = url_,
                                           .field = "fleet.signature",
                                           .observed = "an unsigned object",
                                           .expected = "an object signed as the entry records"});
    }
    if (object_size != engine_bytes && object_size != engine_bytes + kSignatureTrailerBytes) {
        throw EngineConditionError(
            "the remote engine " + url_ + " is not the entry " + expected.where +
                " records: " + expected.where + ".engine_bytes is " + std::to_string(engine_bytes) +
                ", and the object holds " + std::to_string(object_size) +
                " bytes (neither that nor that with a " + std::to_string(kSignatureTrailerBytes) +
                "-byte signature trailer)",
            Refusal{.subject = url_,
                    .field = "engine_bytes",
                    .observed = std::to_string(object_size) + " bytes",
                    .expected = std::to_string(engine_bytes) + " bytes, or that with a " +
                                std::to_string(kSignatureTrailerBytes) +
                                "-byte signature trailer"});
    }
}

void ObjectCheck::feed(std::span<std::byte const> bytes) {
    std::span<std::byte const> rest = bytes;
    while (!header_checked_ && !rest.empty()) {
        std::size_t const take = static_cast<std::size_t>(
            std::min<std::uint64_t>(needed_ - prefix_.size(), rest.size()));
        prefix_.insert(prefix_.end(), rest.begin(), rest.begin() + static_cast<long>(take));
        rest = rest.subspan(take);
        if (prefix_.size() < needed_) {
            break;
        }
        if (needed_ == kEnginePreambleBytes) {
            needed_ = engine_prefix_bytes(prefix_);
            if (needed_ > prefix_.size()) {
                continue;
            }
        }
        check_prefix(expected_, "the remote engine " + url_, prefix_, expected_.entry->engine_bytes,
                     url_);
        header_checked_ = true;
        prefix_ = {};
    }
    std::size_t const keep = kSignatureTrailerBytes;
    if (bytes.size() >= keep) {
        tail_.assign(bytes.end() - static_cast<long>(keep), bytes.end());
    } else {
        tail_.insert(tail_.end(), bytes.begin(), bytes.end());
        if (tail_.size() > keep) {
            tail_.erase(tail_.begin(), tail_.end() - static_cast<long>(keep));
        }
    }
}

void ObjectCheck::finish() const {
    if (expected_.signature &&
        (tail_.size() < kSignatureBytes ||
         !std::equal(expected_.signature->begin(), expected_.signature->end(), tail_.begin()))) {
        throw EngineConditionError("the remote engine " + url_ + " is not the object " +
                                       expected_.where + " records: its signature is not " +
                                       expected_.where +
                                       ".fleet.signature (published again since the manifest "
                                       "was written, or signed by another key)",
                                   Refusal{.subject = url_,
                                           .field = "fleet.signature",
                                           .observed = "another signature",
                                           .expected = "the signature the entry records"});
    }
    if (!header_checked_) {
        throw CorruptEngineError("the remote engine " + url_ + " ended before its header", url_);
    }
}

} // namespace tensoracle::deploy::detail
