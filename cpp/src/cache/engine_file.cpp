// Encoding and strict decoding of the saved-engine file preamble and header.
#include "cache/engine_file.hpp"

#include "cache/file.hpp"
#include "cache/header_schema.hpp"
#include "cache/plan_checksum.hpp"
#include "encryption/plan_sealing.hpp"
#include "io/file_bytes.hpp"
#include "io/hash.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/canonical_json.hpp"
#include "text/json_excerpt.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <fcntl.h>
#include <string>

namespace tensoracle {
namespace {

// read_engine_header's first read: the preamble and, for most headers, all of the header.
constexpr std::uint64_t kFirstHeaderReadBytes = 4096;

[[noreturn]] void corrupt(std::filesystem::path const& path, std::string const& reason) {
    throw CorruptEngineError("saved engine '" + path.string() + "' is unusable: " + reason, path);
}

template <typename Integer>
Integer read_le(std::span<std::byte const> bytes, std::size_t offset) {
    Integer value = 0;
    for (std::size_t i = 0; i < sizeof(Integer); ++i) {
        value |= static_cast<Integer>(static_cast<Integer>(bytes[offset + i]) << (8U * i));
    }
    return value;
}

template <typename Integer>
void append_le(std::vector<std::byte>& out, Integer value) {
    for (std::size_t i = 0; i < sizeof(Integer); ++i) {
        out.push_back(static_cast<std::byte>((value >> (8U * i)) & 0xFFU));
    }
}

// Shows at most `limit` bytes of unknown content in a message, escaping what is not printable.
std::string printable(std::span<std::byte const> bytes, std::size_t limit = 16) {
    std::string out;
    constexpr std::string_view kDigits = "0123456789abcdef";
    for (std::size_t i = 0; i < std::min(bytes.size(), limit); ++i) {
        auto const c = std::to_integer<unsigned char>(bytes[i]);
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            out.push_back(static_cast<char>(c));
        } else {
            out += "\\x";
            out.push_back(kDigits[c >> 4U]);
            out.push_back(kDigits[c & 0x0FU]);
        }
    }
    return out;
}

std::string type_name(nlohmann::json const& value) {
    return value.type_name();
}

void expect_members(nlohmann::json const& object, std::initializer_list<char const*> names,
                    std::string const& where, std::filesystem::path const& path) {
    for (char const* name : names) {
        if (!object.contains(name)) {
            corrupt(path, where + " lacks the member \"" + name + "\"");
        }
    }
    for (auto const& item : object.items()) {
        bool const known = std::any_of(names.begin(), names.end(),
                                       [&](char const* name) { return item.key() == name; });
        if (!known) {
            corrupt(path, where + " has an unexpected member \"" + item.key() + "\"");
        }
    }
}

// The "chunks" member of a version 2 header's plan: one digest of each kind per chunk.
PlanChunks chunks_from_json(nlohmann::json const& chunks, std::uint64_t plan_size,
                            std::filesystem::path const& path) {
    if (!chunks.is_object()) {
        corrupt(path, R"("plan"."chunks" is a JSON )" + type_name(chunks) + ", not an object");
    }
    expect_members(chunks, {"sha256", "xxh3_128"}, R"("plan"."chunks")", path);
    std::uint64_t const count = plan_chunk_count(plan_size);
    PlanChunks read;
    struct Kind {
        char const* name;
        std::size_t digits;
        std::vector<std::string>& into;
    };
    for (Kind const kind : {Kind{"sha256", 64, read.sha256}, Kind{"xxh3_128", 32, read.xxh3_128}}) {
        auto const& list = chunks.at(kind.name);
        std::string const where = std::string(R"("plan"."chunks".")") + kind.name + '"';
        if (!list.is_array() || list.size() != count) {
            corrupt(path, where + " must be a list of " + std::to_string(count) +
                              " digests (one per " + std::to_string(kPlanChunkBytes) +
                              " bytes of a plan of " + std::to_string(plan_size) + "), not " +
                              (list.is_array() ? std::to_string(list.size()) + " items"
                                               : "a JSON " + type_name(list)));
        }
        kind.into.reserve(list.size());
        for (std::size_t index = 0; index < list.size(); ++index) {
            auto const& digest = list[index];
            bool const hex =
                digest.is_string() &&
                (kind.digits == 64 ? is_sha256_hex(digest.get_ref<std::string const&>())
                                   : is_plan_checksum_hex(digest.get_ref<std::string const&>()));
            if (!hex) {
                corrupt(path, where + "[" + std::to_string(index) + "] must be " +
                                  std::to_string(kind.digits) + " lowercase hex digits, not " +
                                  json_excerpt(digest));
            }
            kind.into.push_back(digest.get<std::string>());
        }
    }
    return read;
}

// The header's members are moved out of `json`, which is left with null values.
EngineHeader header_from_json(nlohmann::json& json, std::uint32_t version,
                              std::filesystem::path const& path) {
    if (!json.is_object()) {
        corrupt(path, "the header is a JSON " + type_name(json) + ", not an object");
    }
    if (version == kEncryptedFormatVersion) {
        expect_members(json, {"conditions", "encryption", "plan", "references"},
                       "the header (format version 3)", path);
    } else {
        expect_members(json, {"conditions", "plan", "references"}, "the header", path);
    }
    EngineHeader header;
    for (char const* name : {"conditions", "references"}) {
        if (!json.at(name).is_object()) {
            corrupt(path, std::string("header member \"") + name + "\" is a JSON " +
                              type_name(json.at(name)) + ", not an object");
        }
    }
    header.conditions = std::move(json.at("conditions"));
    header.references = std::move(json.at("references"));
    auto const& plan = json.at("plan");
    if (!plan.is_object()) {
        corrupt(path, "header member \"plan\" is a JSON " + type_name(plan) + ", not an object");
    }
    if (version == kUnchunkedFormatVersion) {
        expect_members(plan, {"size", "xxh3_128"}, "header member \"plan\" (format version 1)",
                       path);
    } else {
        expect_members(plan, {"chunks", "size", "xxh3_128"}, "header member \"plan\"", path);
    }
    auto const& size = plan.at("size");
    if (!size.is_number_unsigned()) {
        corrupt(path, R"("plan"."size" must be a non-negative integer, not )" + size.dump());
    }
    header.plan_size = size.get<std::uint64_t>();
    auto const& checksum = plan.at("xxh3_128");
    if (!checksum.is_string() || !is_plan_checksum_hex(checksum.get_ref<std::string const&>())) {
        corrupt(path,
                R"("plan"."xxh3_128" must be 32 lowercase hex digits, not )" + checksum.dump());
    }
    header.plan_xxh3_128 = checksum.get<std::string>();
    if (version != kUnchunkedFormatVersion) {
        header.chunks = chunks_from_json(plan.at("chunks"), header.plan_size, path);
    }
    if (version == kEncryptedFormatVersion) {
        header.encryption = encryption::plan_encryption_from_json(json.at("encryption"), path);
        if (!encryption::is_sealed_body_size(header.plan_size, header.encryption->plan_size)) {
            std::uint64_t const sealed = encryption::sealed_body_size(header.encryption->plan_size);
            corrupt(path, R"("plan"."size" is )" + std::to_string(header.plan_size) +
                              R"(, but a plan of "encryption"."plan_size" )" +
                              std::to_string(header.encryption->plan_size) +
                              " bytes is stored sealed in " +
                              (sealed < header.encryption->plan_size ? std::string("more")
                                                                     : std::to_string(sealed)));
        }
    }
    if (auto const violation = header_schema_violation(header.conditions, header.references)) {
        corrupt(path, "the header's " + *violation);
    }
    return header;
}

// The header's "plan" member.
nlohmann::json plan_json(EngineHeader const& header) {
    nlohmann::json plan = {{"size", header.plan_size}, {"xxh3_128", header.plan_xxh3_128}};
    if (header.chunks) {
        plan["chunks"] = {{"sha256", header.chunks->sha256}, {"xxh3_128", header.chunks->xxh3_128}};
    }
    return plan;
}

// The canonical JSON of a header whose members header_from_json has checked, in the pieces it is
// made of: the conditions, the plan (two members of known types, so one spelling) and the
// references. When `text` is exactly that JSON, keeps the conditions' piece and where the
// references' lies in `decoded`; refuses the header otherwise, as canonical_json of the whole
// header would.
void check_canonical_header(DecodedHeader& decoded, std::string_view text,
                            std::filesystem::path const& path) {
    EngineHeader const& header = decoded.header;
    std::string conditions;
    std::string_view rest = text;
    bool canonical = false;
    try {
        conditions = canonical_json(header.conditions);
        std::string const encryption =
            header.encryption ? R"(,"encryption":)" +
                                    canonical_json(encryption::encryption_json(*header.encryption))
                              : std::string();
        std::string const plan =
            R"(,"plan":)" + canonical_json(plan_json(header)) + R"(,"references":)";
        canonical = true;
        for (std::string_view const piece :
             {std::string_view(R"({"conditions":)"), std::string_view(conditions),
              std::string_view(encryption), std::string_view(plan)}) {
            if (!rest.starts_with(piece)) {
                canonical = false;
                break;
            }
            rest.remove_prefix(piece.size());
        }
        // The references, often the largest piece, are compared where they lie, not written;
        // walked whatever came before, so that what they hold is refused as canonical_json would.
        canonical = canonical && rest.ends_with('}');
        bool const references = is_canonical_json(
            header.references, canonical ? rest.substr(0, rest.size() - 1) : std::string_view{});
        canonical = canonical && references;
    } catch (Error const&) {
        // The whole header again, for the message canonical_json gives of it (the JSON pointer of
        // the value from the header's root).
        nlohmann::json whole = {{"conditions", header.conditions},
                                {"plan", plan_json(header)},
                                {"references", header.references}};
        if (header.encryption) {
            whole["encryption"] = encryption::encryption_json(*header.encryption);
        }
        try {
            (void)canonical_json(whole);
        } catch (Error const& error) {
            corrupt(path, std::string("the header is not canonical JSON: ") + error.what());
        }
        throw;
    }
    if (!canonical) {
        corrupt(path, "the header is not in canonical JSON form (sorted keys, no white space, "
                      "no duplicate keys)");
    }
    decoded.conditions_json = std::move(conditions);
    decoded.references_offset = kEnginePreambleBytes + (text.size() - rest.size());
    decoded.references_bytes = rest.size() - 1;
}

} // namespace

std::vector<std::byte> encode_engine_prefix(EngineHeader const& header) {
    if (!header.conditions.is_object() || !header.references.is_object()) {
        throw InvalidArgument("engine header conditions and references must be JSON objects");
    }
    if (auto const violation = header_schema_violation(header.conditions, header.references)) {
        throw InvalidArgument("engine header not saved: its " + *violation);
    }
    if (!is_plan_checksum_hex(header.plan_xxh3_128)) {
        throw InvalidArgument("engine header plan_xxh3_128 must be 32 lowercase hex digits, not '" +
                              header.plan_xxh3_128 + "'");
    }
    if (header.chunks) {
        std::uint64_t const count = plan_chunk_count(header.plan_size);
        bool const well_formed =
            header.chunks->sha256.size() == count && header.chunks->xxh3_128.size() == count &&
            std::all_of(header.chunks->sha256.begin(), header.chunks->sha256.end(),
                        [](std::string const& digest) { return is_sha256_hex(digest); }) &&
            std::all_of(header.chunks->xxh3_128.begin(), header.chunks->xxh3_128.end(),
                        [](std::string const& digest) { return is_plan_checksum_hex(digest); });
        if (!well_formed) {
            throw InvalidArgument("engine header chunks must hold " + std::to_string(count) +
                                  " SHA-256 and " + std::to_string(count) +
                                  " XXH3-128 hex digests for a plan of " +
                                  std::to_string(header.plan_size) + " bytes");
        }
    }
    if (header.encryption &&
        (!header.chunks ||
         !encryption::is_sealed_body_size(header.plan_size, header.encryption->plan_size))) {
        throw InvalidArgument("an encrypted engine header needs chunk digests and a plan size of "
                              "the sealed body");
    }
    nlohmann::json json = {
        {"conditions", header.conditions},
        {"references", header.references},
        {"plan", plan_json(header)},
    };
    if (header.encryption) {
        json["encryption"] = encryption::encryption_json(*header.encryption);
    }
    if (std::size_t const depth = json_depth(json); depth > kMaxJsonDepth) {
        throw InvalidArgument("engine header nests " + std::to_string(depth) +
                              " levels deep, beyond the limit of " + std::to_string(kMaxJsonDepth) +
                              " levels");
    }
    std::string const text = canonical_json(json);
    if (text.size() > kMaxHeaderBytes) {
        throw InvalidArgument("engine header of " + std::to_string(text.size()) +
                              " bytes exceeds the limit of " + std::to_string(kMaxHeaderBytes) +
                              " bytes");
    }
    // What a reader refuses is never written: the header within the readers' value cap too.
    try {
        (void)parse_bounded_json(text,
                                 {.max_bytes = kMaxHeaderBytes, .max_values = kMaxHeaderValues});
    } catch (JsonLimitError const& error) {
        throw InvalidArgument(std::string("engine header not saved: ") + error.what());
    }
    std::vector<std::byte> out;
    out.reserve(kEnginePreambleBytes + text.size());
    for (char const c : kEngineMagic) {
        out.push_back(static_cast<std::byte>(c));
    }
    append_le<std::uint32_t>(out, header.encryption ? kEncryptedFormatVersion
                                  : header.chunks   ? kEngineFormatVersion
                                                    : kUnchunkedFormatVersion);
    append_le<std::uint64_t>(out, text.size());
    auto const text_bytes = std::as_bytes(std::span(text));
    out.insert(out.end(), text_bytes.begin(), text_bytes.end());
    return out;
}

std::uint64_t engine_prefix_bytes(std::span<std::byte const> preamble) {
    if (preamble.size() < kEnginePreambleBytes) {
        return preamble.size();
    }
    auto const header_length = read_le<std::uint64_t>(preamble, 12);
    if (header_length == 0 || header_length > kMaxHeaderBytes) {
        return kEnginePreambleBytes;
    }
    return kEnginePreambleBytes + header_length;
}

std::uint32_t engine_format_version(std::span<std::byte const> bytes) noexcept {
    auto const magic = std::as_bytes(std::span(kEngineMagic));
    if (bytes.size() < kEnginePreambleBytes ||
        !std::equal(magic.begin(), magic.end(), bytes.begin())) {
        return 0;
    }
    return read_le<std::uint32_t>(bytes, 8);
}

std::uint64_t check_engine_preamble(std::span<std::byte const> bytes, std::uint64_t file_size,
                                    std::filesystem::path const& path) {
    if (bytes.size() > file_size) {
        throw InvalidArgument("decode_engine_header: " + std::to_string(bytes.size()) +
                              " bytes given for a file of " + std::to_string(file_size) +
                              " bytes ('" + path.string() + "')");
    }
    if (file_size == 0) {
        corrupt(path, "empty file (a build in progress or an interrupted save)");
    }
    std::size_t const magic_bytes = std::min(bytes.size(), kEngineMagic.size());
    auto const magic = std::as_bytes(std::span(kEngineMagic)).first(magic_bytes);
    if (!std::equal(magic.begin(), magic.end(), bytes.begin())) {
        corrupt(path, "not a tensoracle engine file: it starts with \"" +
                          printable(bytes.first(magic_bytes)) + R"(", expected "TSRCLENG")");
    }
    if (bytes.size() < kEnginePreambleBytes) {
        corrupt(path, "truncated: " + std::to_string(file_size) + " bytes, fewer than the " +
                          std::to_string(kEnginePreambleBytes) + "-byte preamble");
    }
    auto const version = read_le<std::uint32_t>(bytes, 8);
    std::string const readable =
        "; this build reads versions 1 to " + std::to_string(kEncryptedFormatVersion);
    if (version > kEncryptedFormatVersion) {
        corrupt(path, "written by a newer tensoracle, format version " + std::to_string(version) +
                          readable);
    }
    if (version == 0) {
        corrupt(path, "unknown format version " + std::to_string(version) + readable);
    }
    auto const header_length = read_le<std::uint64_t>(bytes, 12);
    if (header_length == 0) {
        corrupt(path, "header length is 0");
    }
    if (header_length > kMaxHeaderBytes) {
        corrupt(path, "header length " + std::to_string(header_length) + " exceeds the limit of " +
                          std::to_string(kMaxHeaderBytes) + " bytes");
    }
    std::uint64_t const plan_offset = kEnginePreambleBytes + header_length;
    if (plan_offset > file_size) {
        corrupt(path, "truncated: header length " + std::to_string(header_length) + " needs " +
                          std::to_string(plan_offset) + " bytes, the file has " +
                          std::to_string(file_size));
    }
    return plan_offset;
}

DecodedHeader decode_engine_prefix(std::span<std::byte const> bytes, std::uint64_t file_size,
                                   std::filesystem::path const& path) {
    std::uint64_t const plan_offset = check_engine_preamble(bytes, file_size, path);
    std::uint64_t const header_length = plan_offset - kEnginePreambleBytes;
    if (plan_offset > bytes.size()) {
        corrupt(path, "truncated: header length " + std::to_string(header_length) + " needs " +
                          std::to_string(plan_offset) + " bytes, the file has " +
                          std::to_string(file_size));
    }
    auto const header_bytes = bytes.subspan(kEnginePreambleBytes, header_length);
    std::string_view const text(reinterpret_cast<char const*>(header_bytes.data()),
                                header_bytes.size());
    nlohmann::json json;
    try {
        json = parse_bounded_json(text,
                                  {.max_bytes = kMaxHeaderBytes, .max_values = kMaxHeaderValues});
    } catch (JsonLimitError const& error) {
        corrupt(path, std::string("the header is not valid JSON: ") + error.what());
    }
    DecodedHeader decoded;
    decoded.format_version = read_le<std::uint32_t>(bytes, 8);
    decoded.header = header_from_json(json, decoded.format_version, path);
    decoded.plan_offset = plan_offset;
    // A header that is not canonical was not written by tensoracle (or holds duplicate keys,
    // which a JSON parser would silently collapse): refuse it rather than guess.
    check_canonical_header(decoded, text, path);
    return decoded;
}

DecodedHeader decode_engine_header(std::span<std::byte const> bytes, std::uint64_t file_size,
                                   std::filesystem::path const& path) {
    DecodedHeader decoded = decode_engine_prefix(bytes, file_size, path);
    std::uint64_t const remaining = file_size - decoded.plan_offset;
    if (decoded.header.plan_size != remaining) {
        corrupt(path, "the header records a plan of " + std::to_string(decoded.header.plan_size) +
                          " bytes but " + std::to_string(remaining) + " bytes follow the header" +
                          (remaining < decoded.header.plan_size ? " (truncated)" : ""));
    }
    return decoded;
}

DecodedHeader read_engine_header(std::filesystem::path const& path) {
    platform::Descriptor const file{open_cache_file(path, O_RDONLY)};
    int const fd = file.get();
    if (fd < 0) {
        if (errno == ELOOP) {
            corrupt(path, link_refusal(path));
        }
        throw_file_error("cannot open saved engine", path, errno);
    }
    auto const status = platform::status(fd);
    if (!status) {
        throw_file_error("cannot stat saved engine", path, errno);
    }
    if (status->kind != platform::FileKind::regular) {
        corrupt(path, "not a regular file");
    }
    auto const file_size = status->size;
    auto read_prefix = [&](std::uint64_t wanted) {
        std::vector<std::byte> buffer(static_cast<std::size_t>(std::min(wanted, file_size)));
        // A file that shrank while we read it comes back short: decode reports the truncation.
        buffer.resize(read_from_start(fd, buffer, path));
        return buffer;
    };
    // One read answers most files: the preamble and a header of the usual few kilobytes.
    auto const first = read_prefix(kFirstHeaderReadBytes);
    if (first.size() < kEnginePreambleBytes) {
        return decode_engine_header(first, std::max<std::uint64_t>(file_size, first.size()), path);
    }
    auto const header_length = read_le<std::uint64_t>(first, 12);
    if (header_length == 0 || header_length > kMaxHeaderBytes) {
        return decode_engine_header(std::span(first).first(kEnginePreambleBytes), file_size,
                                    path); // reports the bad length
    }
    std::uint64_t const prefix_bytes = kEnginePreambleBytes + header_length;
    if (prefix_bytes <= first.size()) {
        return decode_engine_header(std::span(first).first(prefix_bytes), file_size, path);
    }
    auto const prefix = read_prefix(prefix_bytes);
    return decode_engine_header(prefix, file_size, path);
}

} // namespace tensoracle
