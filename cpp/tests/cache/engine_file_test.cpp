// Tests of the engine file format: round trips and rejection of every kind of damage.
#include "cache/engine_file.hpp"
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/canonical_json.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <cctype>
#include <gtest/gtest.h>

namespace tensoracle {
namespace {

using nlohmann::json;
std::filesystem::path const kPath = "/cache/m-0.engine";

EngineHeader sample_header(std::span<std::byte const> plan) {
    EngineHeader header;
    header.conditions = {{"name", "m\xC3\xBCnchen"}, {"graph_version", "1"}, {"shape", {1, -1, 2}}};
    header.references = {{"workspace_limit", nullptr}, {"outputs", {"result"}}};
    header.plan_size = plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(plan);
    return header;
}

std::vector<std::byte> whole_file(EngineHeader const& header, std::span<std::byte const> plan) {
    auto bytes = encode_engine_prefix(header);
    bytes.insert(bytes.end(), plan.begin(), plan.end());
    return bytes;
}

// A file assembled by hand, so that each field can be wrong on its own.
std::vector<std::byte> assemble(std::uint32_t version, std::uint64_t header_length,
                                std::string_view header_text, std::span<std::byte const> plan,
                                std::string_view magic = "TSRCLENG") {
    std::vector<std::byte> bytes = testing::to_bytes(magic);
    for (std::size_t i = 0; i < 4; ++i) {
        bytes.push_back(static_cast<std::byte>((version >> (8 * i)) & 0xFF));
    }
    for (std::size_t i = 0; i < 8; ++i) {
        bytes.push_back(static_cast<std::byte>((header_length >> (8 * i)) & 0xFF));
    }
    auto const text = testing::to_bytes(header_text);
    bytes.insert(bytes.end(), text.begin(), text.end());
    bytes.insert(bytes.end(), plan.begin(), plan.end());
    return bytes;
}

std::string plan_json(std::span<std::byte const> plan) {
    return R"({"conditions":{"name":"m"},"plan":{"size":)" + std::to_string(plan.size()) +
           R"(,"xxh3_128":")" + plan_checksum_hex(plan) + R"("},"references":{}})";
}

std::string decode_error(std::span<std::byte const> bytes) {
    try {
        decode_engine_header(bytes, bytes.size(), kPath);
    } catch (CorruptEngineError const& error) {
        EXPECT_EQ(error.path(), kPath);
        std::string message = error.what();
        EXPECT_NE(message.find(kPath.string()), std::string::npos) << message;
        return message;
    }
    ADD_FAILURE() << "the bytes were accepted";
    return {};
}

bool contains(std::string const& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

TEST(EngineFile, RoundTrip) {
    auto const plan = testing::random_bytes(1000, 1);
    auto const header = sample_header(plan);
    auto const bytes = whole_file(header, plan);
    auto const decoded = decode_engine_header(bytes, bytes.size(), kPath);
    EXPECT_EQ(decoded.header.conditions, header.conditions);
    EXPECT_EQ(decoded.header.references, header.references);
    EXPECT_EQ(decoded.header.plan_size, plan.size());
    EXPECT_EQ(decoded.header.plan_xxh3_128, header.plan_xxh3_128);
    ASSERT_EQ(decoded.plan_offset + plan.size(), bytes.size());
    EXPECT_TRUE(std::equal(plan.begin(), plan.end(),
                           bytes.begin() + static_cast<std::ptrdiff_t>(decoded.plan_offset)));
}

TEST(EngineFile, AHeaderPastTheReadersValueCapIsNeverWritten) {
    // The sample header holds 14 values besides the outputs' names: exactly the cap is written
    // and read back; one more value is refused at the save, not written for every read to refuse.
    auto header = sample_header({});
    header.references["outputs"] = nlohmann::json::array();
    for (std::size_t i = 0; i + 14 < kMaxHeaderValues; ++i) {
        header.references["outputs"].push_back("o");
    }
    auto const bytes = whole_file(header, {});
    EXPECT_EQ(decode_engine_header(bytes, bytes.size(), kPath).header.references,
              header.references);
    header.references["outputs"].push_back("o");
    try {
        (void)encode_engine_prefix(header);
        ADD_FAILURE() << "a header past the value cap was encoded";
    } catch (InvalidArgument const& error) {
        EXPECT_TRUE(contains(error.what(), "engine header not saved: the JSON text holds more "
                                           "values than the limit of 262144"))
            << error.what();
    }
}

TEST(EngineFile, RoundTripOfAnEmptyPlan) {
    auto const header = sample_header({});
    auto const bytes = whole_file(header, {});
    EXPECT_EQ(decode_engine_header(bytes, bytes.size(), kPath).plan_offset, bytes.size());
}

TEST(EngineFile, PreambleLayout) {
    auto const bytes = encode_engine_prefix(sample_header({}));
    ASSERT_GT(bytes.size(), kEnginePreambleBytes);
    EXPECT_EQ(std::memcmp(bytes.data(), "TSRCLENG", 8), 0);
    EXPECT_EQ(std::to_integer<int>(bytes[8]), 1);
    EXPECT_EQ(std::to_integer<int>(bytes[9]) | std::to_integer<int>(bytes[10]) |
                  std::to_integer<int>(bytes[11]),
              0);
    std::uint64_t length = 0;
    for (std::size_t i = 0; i < 8; ++i) {
        length |= std::to_integer<std::uint64_t>(bytes[12 + i]) << (8 * i);
    }
    EXPECT_EQ(length, bytes.size() - kEnginePreambleBytes);
    EXPECT_EQ(std::to_integer<char>(bytes[20]), '{');
}

TEST(EngineFile, PrefixBytesComeFromThePreamble) {
    auto const plan = testing::random_bytes(64, 3);
    auto const file = whole_file(sample_header(plan), plan);
    auto const prefix = encode_engine_prefix(sample_header(plan));
    auto const preamble = std::span(file).first(kEnginePreambleBytes);
    EXPECT_EQ(engine_prefix_bytes(preamble), prefix.size());
    // The prefix it names is exactly what decode_engine_header needs.
    EXPECT_EQ(
        decode_engine_header(std::span(file).first(prefix.size()), file.size(), kPath).plan_offset,
        prefix.size());
    // Unusable lengths name only what was given or the preamble; decoding then says why.
    EXPECT_EQ(engine_prefix_bytes(preamble.first(7)), 7U);
    EXPECT_EQ(engine_prefix_bytes(assemble(1, 0, "", {})), kEnginePreambleBytes);
    EXPECT_EQ(engine_prefix_bytes(assemble(1, kMaxHeaderBytes + 1, "", {})), kEnginePreambleBytes);
    EXPECT_EQ(engine_prefix_bytes(assemble(1, kMaxHeaderBytes, "", {})),
              kEnginePreambleBytes + kMaxHeaderBytes);
}

TEST(EngineFile, HeaderOnlyPrefixDecodesWithTheFileSize) {
    auto const plan = testing::random_bytes(5000, 2);
    auto const bytes = whole_file(sample_header(plan), plan);
    auto const prefix = std::span(bytes).first(bytes.size() - plan.size());
    EXPECT_EQ(decode_engine_header(prefix, bytes.size(), kPath).header.plan_size, plan.size());
}

TEST(EngineFile, EveryTruncationIsRejected) {
    auto const plan = testing::random_bytes(64, 3);
    auto const bytes = whole_file(sample_header(plan), plan);
    for (std::size_t length = 0; length < bytes.size(); ++length) {
        auto const message = decode_error(std::span(bytes).first(length));
        if (length == 0) {
            EXPECT_TRUE(contains(message, "empty file")) << message;
        } else {
            EXPECT_TRUE(contains(message, "truncated") || contains(message, "not valid JSON"))
                << "length " << length << ": " << message;
        }
    }
}

TEST(EngineFile, TrailingBytesAreRejected) {
    auto const plan = testing::random_bytes(64, 3);
    auto bytes = whole_file(sample_header(plan), plan);
    bytes.push_back(std::byte{0});
    EXPECT_TRUE(contains(decode_error(bytes), "64 bytes but 65 bytes follow"));
}

TEST(EngineFile, BadMagic) {
    auto const plan = testing::random_bytes(4, 4);
    auto const text = plan_json(plan);
    auto const message = decode_error(assemble(1, text.size(), text, plan, "TSRCLENX"));
    EXPECT_TRUE(contains(message, "not a tensoracle engine file")) << message;
    EXPECT_TRUE(contains(message, "TSRCLENX")) << message;
    EXPECT_TRUE(contains(decode_error(testing::to_bytes("\x7f"
                                                        "ELF")),
                         "\\x7fELF"));
}

TEST(EngineFile, NewerVersionIsNamedAsSuch) {
    auto const plan = testing::random_bytes(4, 4);
    auto const text = plan_json(plan);
    auto const message = decode_error(assemble(7, text.size(), text, plan));
    EXPECT_TRUE(contains(message, "written by a newer tensoracle, format version 7; this build "
                                  "reads versions 1 to 3"))
        << message;
    EXPECT_TRUE(contains(decode_error(assemble(0, text.size(), text, plan)), "version 0"));
}

TEST(EngineFile, AbsurdHeaderLengths) {
    auto const plan = testing::random_bytes(4, 4);
    auto const text = plan_json(plan);
    EXPECT_TRUE(contains(decode_error(assemble(1, 0, text, plan)), "header length is 0"));
    auto const huge = decode_error(assemble(1, kMaxHeaderBytes + 1, text, plan));
    EXPECT_TRUE(contains(huge, std::to_string(kMaxHeaderBytes + 1) + " exceeds")) << huge;
    auto const max = decode_error(assemble(1, ~std::uint64_t{0}, text, plan));
    EXPECT_TRUE(contains(max, "18446744073709551615 exceeds")) << max;
    auto const beyond = decode_error(assemble(1, text.size() + plan.size() + 1, text, plan));
    EXPECT_TRUE(contains(beyond, "truncated")) << beyond;
}

TEST(EngineFile, BadJson) {
    std::string const text = R"({"conditions":)";
    auto const message = decode_error(assemble(1, text.size(), text, {}));
    EXPECT_TRUE(contains(message, "not valid JSON")) << message;
}

// The headline hostile headers: 20,000 levels of nesting in a 40 KB header, and a header string
// that is not UTF-8. Both are refused as corrupt, with a message that is valid UTF-8.
TEST(EngineFile, DeeplyNestedHeaderIsCorruptNotACrash) {
    std::string const text = R"({"conditions":{"name":"m"},"references":{"a":)" +
                             std::string(20'000, '[') + std::string(20'000, ']') + "}}";
    auto const message = decode_error(assemble(1, text.size(), text, {}));
    EXPECT_TRUE(contains(message, "nests deeper than the limit of 64 levels")) << message;
}

TEST(EngineFile, InvalidUtf8InAHeaderStringIsCorrupt) {
    std::string const text = "{\"conditions\":{\"name\":\"m\xff\"},\"references\":{}}";
    auto const message = decode_error(assemble(1, text.size(), text, {}));
    EXPECT_TRUE(contains(message, "ill-formed UTF-8")) << message;
    EXPECT_TRUE(contains(message, "\\xff")) << message;
    EXPECT_TRUE(is_valid_utf8(message)) << message;
}

TEST(EngineFile, MisTypedKnownMembersAreCorrupt) {
    auto const plan = testing::random_bytes(16, 2);
    EngineHeader header = sample_header(plan);
    header.references = {{"io", json::array({1, 2})}};
    // Written by hand: encode_engine_prefix refuses such a header.
    std::string const text = R"({"conditions":{"name":"m"},"plan":{"size":16,"xxh3_128":")" +
                             plan_checksum_hex(plan) + R"("},"references":{"io":[1,2]}})";
    auto const message = decode_error(assemble(1, text.size(), text, plan));
    EXPECT_TRUE(contains(message, "references.io is [1,2], expected an object")) << message;
    EXPECT_THROW(encode_engine_prefix(header), InvalidArgument);
}

TEST(EngineFile, NonObjectHeader) {
    std::string const text = "[1,2]";
    EXPECT_TRUE(contains(decode_error(assemble(1, text.size(), text, {})), "array, not an object"));
}

TEST(EngineFile, MembersAreCheckedOneByOne) {
    auto const plan = testing::random_bytes(4, 5);
    auto const sum = plan_checksum_hex(plan);
    // The plan member spelled canonically ("size" sorts before "xxh3_128") for a given size.
    auto const plan_member = [&](std::string const& size) {
        return R"("plan":{"size":)" + size + R"(,"xxh3_128":")" + sum + R"("})";
    };
    std::string const good = plan_member("4");
    struct Case {
        std::string header;
        std::string expected;
    };
    std::vector<Case> const cases = {
        {"{" + good + R"(,"references":{}})", "lacks the member \"conditions\""},
        {R"({"conditions":{},"references":{}})", "lacks the member \"plan\""},
        {R"({"conditions":{},)" + good + "}", "lacks the member \"references\""},
        {R"({"conditions":{},"extra":1,)" + good + R"(,"references":{}})",
         "unexpected member \"extra\""},
        {R"({"conditions":[],)" + good + R"(,"references":{}})", "\"conditions\" is a JSON array"},
        {R"({"conditions":{},)" + good + R"(,"references":"x"})",
         "\"references\" is a JSON string"},
        {R"({"conditions":{},"plan":4,"references":{}})", "\"plan\" is a JSON number"},
        {R"({"conditions":{},"plan":{"xxh3_128":")" + sum + R"("},"references":{}})",
         "lacks the member \"size\""},
        {R"({"conditions":{},"plan":{"size":4},"references":{}})", "lacks the member \"xxh3_128\""},
        {R"({"conditions":{},"plan":{"bits":1,"size":4,"xxh3_128":")" + sum +
             R"("},"references":{}})",
         "unexpected member \"bits\""},
        // The SHA-256 member of earlier development builds is not accepted in its place.
        {R"({"conditions":{},"plan":{"sha256":")" + sum + sum + R"(","size":4},"references":{}})",
         "lacks the member \"xxh3_128\""},
        {R"({"conditions":{},)" + plan_member("-4") + R"(,"references":{}})",
         "non-negative integer, not -4"},
        {R"({"conditions":{},)" + plan_member("\"4\"") + R"(,"references":{}})",
         "non-negative integer, not \"4\""},
        {R"({"conditions":{},"plan":{"size":4,"xxh3_128":")" + sum.substr(1) +
             R"("},"references":{}})",
         "32 lowercase hex digits"},
        {R"({"conditions":{},"plan":{"size":4,"xxh3_128":")" + sum + sum + R"("},"references":{}})",
         "32 lowercase hex digits"},
        {R"({"conditions":{},"plan":{"size":4,"xxh3_128":"ABC"},"references":{}})",
         "32 lowercase hex digits, not \"ABC\""},
        {R"({"conditions":{},"plan":{"size":4,"xxh3_128":4},"references":{}})",
         "32 lowercase hex digits"},
        {R"({"conditions":{},)" + plan_member("5") + R"(,"references":{}})",
         "plan of 5 bytes but 4 bytes follow"},
        {R"({"conditions":{"w":1.5},)" + good + R"(,"references":{}})", "/conditions/w"},
        {R"({"conditions":{}, )" + good + R"(,"references":{}})", "not in canonical JSON form"},
        {R"({"conditions":{"a":1,"a":2},)" + good + R"(,"references":{}})",
         "not in canonical JSON form"},
        // Each piece of the header's canonical text is judged: the plan, the references, what
        // follows the last brace, escapes where the character itself is canonical.
        {R"({"conditions":{},"plan":{"size": 4,"xxh3_128":")" + sum + R"("},"references":{}})",
         "not in canonical JSON form"},
        {R"({"conditions":{},"plan":{"xxh3_128":")" + sum + R"(","size":4},"references":{}})",
         "not in canonical JSON form"},
        {R"({"conditions":{},)" + good + R"(,"references":{"b":1,"a":2}})",
         "not in canonical JSON form"},
        {R"({"conditions":{},)" + good + R"(,"references":{} })", "not in canonical JSON form"},
        {std::string(R"({"conditions":{"name":"\u0041"},)") + good + R"(,"references":{}})",
         "not in canonical JSON form"},
        {R"({"references":{},"conditions":{},)" + good + "}", "not in canonical JSON form"},
        {R"({"conditions":{},)" + good + R"(,"references":{"r":[1,2.5]}})", "/references/r/1"},
    };
    for (auto const& c : cases) {
        auto const message = decode_error(assemble(1, c.header.size(), c.header, plan));
        EXPECT_TRUE(contains(message, c.expected)) << c.header << "\n  gave: " << message;
    }
}

TEST(EngineFile, TheDecodedConditionsTextIsTheCanonicalTextOfTheConditions) {
    auto const plan = testing::random_bytes(64, 9);
    auto const header = sample_header(plan);
    auto const bytes = whole_file(header, plan);
    auto const decoded = decode_engine_header(bytes, bytes.size(), kPath);
    EXPECT_EQ(decoded.conditions_json, canonical_json(header.conditions));
    std::string const text(reinterpret_cast<char const*>(bytes.data()) + kEnginePreambleBytes,
                           decoded.plan_offset - kEnginePreambleBytes);
    EXPECT_EQ(text.substr(0, 14 + decoded.conditions_json.size()),
              R"({"conditions":)" + decoded.conditions_json);
}

// The references' text is read where it lies in the file: it must be exactly their canonical
// text, and end where the header's closing brace begins.
TEST(EngineFile, TheDecodedReferencesLieInTheFileAsTheirCanonicalText) {
    auto const plan = testing::random_bytes(64, 9);
    auto header = sample_header(plan);
    header.references["long"] = std::string(100000, 'x') + "\n\"\xC3\xA9";
    auto const bytes = whole_file(header, plan);
    auto const decoded = decode_engine_header(bytes, bytes.size(), kPath);
    std::string const references(reinterpret_cast<char const*>(bytes.data()) +
                                     decoded.references_offset,
                                 decoded.references_bytes);
    EXPECT_EQ(references, canonical_json(header.references));
    EXPECT_EQ(decoded.references_offset + decoded.references_bytes + 1, decoded.plan_offset);
}

TEST(EngineFile, EncodeRefusesInvalidHeaders) {
    EngineHeader header = sample_header({});
    header.plan_xxh3_128 = "xyz";
    EXPECT_THROW(encode_engine_prefix(header), InvalidArgument);
    header = sample_header({});
    header.conditions = json::array();
    EXPECT_THROW(encode_engine_prefix(header), InvalidArgument);
    header = sample_header({});
    header.references["ratio"] = 0.5;
    EXPECT_THROW(encode_engine_prefix(header), InvalidArgument);
    // Nothing is written that the decoder would refuse for its depth.
    header = sample_header({});
    json deep = 1;
    for (std::size_t i = 0; i < kMaxJsonDepth; ++i) {
        deep = json::array({deep});
    }
    header.references["deep"] = deep;
    EXPECT_THROW(encode_engine_prefix(header), InvalidArgument);
}

// Format version 2: a header with chunk digests is written as version 2 and read back with them;
// one without is written as version 1, the format of entries saved before chunks existed.
TEST(EngineFile, AHeaderWithChunksRoundTripsAsVersion2) {
    for (std::size_t const size :
         {std::size_t{0}, std::size_t{1000}, static_cast<std::size_t>(kPlanChunkBytes) + 1000}) {
        SCOPED_TRACE("plan of " + std::to_string(size) + " bytes");
        auto const plan = testing::random_bytes(size, 31);
        EngineHeader header = sample_header(plan);
        header.chunks = plan_chunks_of(plan);
        auto const bytes = whole_file(header, plan);
        EXPECT_EQ(std::to_integer<int>(bytes[8]), 2) << "the preamble's format version";
        EXPECT_EQ(engine_format_version(bytes), 2U);
        auto const decoded = decode_engine_header(bytes, bytes.size(), kPath);
        EXPECT_EQ(decoded.format_version, 2U);
        ASSERT_TRUE(decoded.header.chunks.has_value()) << "\"plan\".\"chunks\" was not read";
        EXPECT_EQ(*decoded.header.chunks, *header.chunks);
        EXPECT_EQ(decoded.header.chunks->sha256.size(), plan_chunk_count(size));
        EXPECT_EQ(decoded.header.plan_xxh3_128, header.plan_xxh3_128);
        EXPECT_EQ(decoded.header.conditions, header.conditions);
        EXPECT_EQ(decoded.header.references, header.references);
        EXPECT_EQ(decoded.plan_offset + size, bytes.size());
    }
}

TEST(EngineFile, AHeaderWithoutChunksRoundTripsAsVersion1) {
    auto const plan = testing::random_bytes(1000, 32);
    EngineHeader const header = sample_header(plan);
    ASSERT_FALSE(header.chunks.has_value());
    auto const bytes = whole_file(header, plan);
    EXPECT_EQ(std::to_integer<int>(bytes[8]), 1) << "the preamble's format version";
    EXPECT_EQ(engine_format_version(bytes), 1U);
    auto const decoded = decode_engine_header(bytes, bytes.size(), kPath);
    EXPECT_EQ(decoded.format_version, 1U);
    EXPECT_FALSE(decoded.header.chunks.has_value()) << "a version 1 header has no chunks";
    EXPECT_EQ(decoded.header.plan_xxh3_128, header.plan_xxh3_128);
    // The text of its plan member has no "chunks" member at all.
    std::string const text(reinterpret_cast<char const*>(bytes.data()) + kEnginePreambleBytes,
                           decoded.plan_offset - kEnginePreambleBytes);
    EXPECT_FALSE(contains(text, "chunks")) << text;
}

TEST(EngineFile, TheFormatVersionIsReadFromThePreambleAlone) {
    auto const plan = testing::random_bytes(4, 33);
    auto const text = plan_json(plan);
    EXPECT_EQ(engine_format_version(assemble(1, text.size(), text, plan)), 1U);
    EXPECT_EQ(engine_format_version(assemble(2, text.size(), text, plan)), 2U);
    EXPECT_EQ(engine_format_version(assemble(7, text.size(), text, plan)), 7U);
    EXPECT_EQ(engine_format_version(assemble(2, text.size(), text, plan, "TSRCLENX")), 0U);
    auto const version_2 = assemble(2, text.size(), text, plan);
    EXPECT_EQ(engine_format_version(std::span(version_2).first(19)), 0U);
    EXPECT_EQ(engine_format_version(std::span(version_2).first(20)), 2U);
}

// A header of version 2 assembled by hand: its plan member with the chunks text given.
std::string chunked_header(std::span<std::byte const> plan, std::string const& chunks) {
    return R"({"conditions":{"name":"m"},"plan":{"chunks":)" + chunks + R"(,"size":)" +
           std::to_string(plan.size()) + R"(,"xxh3_128":")" + plan_checksum_hex(plan) +
           R"("},"references":{}})";
}

// The canonical text of a "chunks" member.
std::string chunks_text(std::vector<std::string> const& sha256,
                        std::vector<std::string> const& xxh3_128) {
    return json{{"sha256", sha256}, {"xxh3_128", xxh3_128}}.dump();
}

TEST(EngineFile, TheChunksMemberIsRequiredInVersion2AndRefusedInVersion1) {
    auto const plan = testing::random_bytes(4, 34);
    PlanChunks const chunks = plan_chunks_of(plan);
    std::string const with_chunks =
        chunked_header(plan, chunks_text(chunks.sha256, chunks.xxh3_128));
    std::string const without_chunks = plan_json(plan);
    // As a check of the helpers: each is accepted in its own version.
    auto const v2 = assemble(2, with_chunks.size(), with_chunks, plan);
    auto const decoded = decode_engine_header(v2, v2.size(), kPath);
    EXPECT_EQ(decoded.format_version, 2U);
    EXPECT_EQ(decoded.header.chunks, chunks);
    auto const v1 = assemble(1, without_chunks.size(), without_chunks, plan);
    EXPECT_EQ(decode_engine_header(v1, v1.size(), kPath).format_version, 1U);

    std::string const missing =
        decode_error(assemble(2, without_chunks.size(), without_chunks, plan));
    EXPECT_TRUE(contains(missing, R"(header member "plan" lacks the member "chunks")")) << missing;
    std::string const unexpected = decode_error(assemble(1, with_chunks.size(), with_chunks, plan));
    EXPECT_TRUE(contains(unexpected, R"(header member "plan" (format version 1) has an unexpected )"
                                     R"(member "chunks")"))
        << unexpected;
}

// Every way the "chunks" member can be wrong is refused naming the member, the list and, for a
// digest, its index.
TEST(EngineFile, ChunkDigestsAreCheckedOneByOneNamingTheField) {
    // A plan of two chunks, so that a digest past the first is judged too.
    std::vector<std::byte> const plan(static_cast<std::size_t>(kPlanChunkBytes) + 1, std::byte{7});
    PlanChunks const good = plan_chunks_of(plan);
    ASSERT_EQ(good.sha256.size(), 2U);
    std::string const sha = good.sha256[0];
    std::string const xxh = good.xxh3_128[0];
    auto upper = [](std::string text) {
        std::transform(text.begin(), text.end(), text.begin(),
                       [](char c) { return static_cast<char>(std::toupper(c)); });
        return text;
    };
    ASSERT_NE(upper(sha), sha); // holds a letter
    ASSERT_NE(upper(xxh), xxh);
    struct Case {
        std::string chunks;
        std::string expected;
    };
    std::vector<Case> const cases = {
        {"[]", R"("plan"."chunks" is a JSON array, not an object)"},
        {"null", R"("plan"."chunks" is a JSON null, not an object)"},
        {R"({"sha256":[]})", R"("plan"."chunks" lacks the member "xxh3_128")"},
        {R"({"xxh3_128":[]})", R"("plan"."chunks" lacks the member "sha256")"},
        {R"({"md5":[],"sha256":[],"xxh3_128":[]})",
         R"("plan"."chunks" has an unexpected member "md5")"},
        // Lists of the wrong length, or not lists.
        {chunks_text({sha}, good.xxh3_128),
         R"("plan"."chunks"."sha256" must be a list of 2 digests (one per 4194304 bytes of a )"
         R"(plan of 4194305), not 1 items)"},
        {chunks_text({sha, sha, sha}, good.xxh3_128),
         R"("plan"."chunks"."sha256" must be a list of 2 digests)"},
        {chunks_text(good.sha256, {}), R"("plan"."chunks"."xxh3_128" must be a list of 2 digests)"},
        {chunks_text(good.sha256, {xxh, xxh, xxh}),
         R"("plan"."chunks"."xxh3_128" must be a list of 2 digests)"},
        {R"({"sha256":")" + sha + R"(","xxh3_128":[]})",
         R"("plan"."chunks"."sha256" must be a list of 2 digests (one per 4194304 bytes of a )"
         R"(plan of 4194305), not a JSON string)"},
        // Digests that are not lowercase hex of their kind's length.
        {chunks_text({upper(sha), sha}, good.xxh3_128),
         R"("plan"."chunks"."sha256"[0] must be 64 lowercase hex digits, not ")" + upper(sha) +
             "\""},
        {chunks_text({sha, sha.substr(1)}, good.xxh3_128),
         R"("plan"."chunks"."sha256"[1] must be 64 lowercase hex digits, not ")" + sha.substr(1) +
             "\""},
        {chunks_text({sha, sha + "0"}, good.xxh3_128),
         R"("plan"."chunks"."sha256"[1] must be 64 lowercase hex digits)"},
        {chunks_text({xxh, sha}, good.xxh3_128), // an XXH3-128 in place of a SHA-256
         R"("plan"."chunks"."sha256"[0] must be 64 lowercase hex digits)"},
        {R"({"sha256":[7,")" + sha + R"("],"xxh3_128":[")" + xxh + R"(",")" + xxh + R"("]})",
         R"("plan"."chunks"."sha256"[0] must be 64 lowercase hex digits, not 7)"},
        {chunks_text(good.sha256, {upper(xxh), xxh}),
         R"("plan"."chunks"."xxh3_128"[0] must be 32 lowercase hex digits, not ")" + upper(xxh) +
             "\""},
        {chunks_text(good.sha256, {xxh, sha}), // a SHA-256 in place of an XXH3-128
         R"("plan"."chunks"."xxh3_128"[1] must be 32 lowercase hex digits)"},
        {chunks_text(good.sha256, {xxh, xxh.substr(0, 31) + "g"}),
         R"("plan"."chunks"."xxh3_128"[1] must be 32 lowercase hex digits)"},
        // Well-formed, but not in canonical form.
        {R"({"xxh3_128":[")" + xxh + R"(",")" + xxh + R"("],"sha256":[")" + sha + R"(",")" + sha +
             R"("]})",
         "not in canonical JSON form"},
    };
    for (auto const& c : cases) {
        std::string const header = chunked_header(plan, c.chunks);
        auto const message = decode_error(assemble(2, header.size(), header, plan));
        EXPECT_TRUE(contains(message, c.expected)) << c.chunks << "\n  gave: " << message;
    }
    // The same member with the good digests is accepted.
    std::string const header = chunked_header(plan, chunks_text(good.sha256, good.xxh3_128));
    auto const bytes = assemble(2, header.size(), header, plan);
    EXPECT_EQ(decode_engine_header(bytes, bytes.size(), kPath).header.chunks, good);
}

TEST(EngineFile, EncodeRefusesChunksOfTheWrongCountOrForm) {
    auto const plan = testing::random_bytes(4, 35);
    PlanChunks const good = plan_chunks_of(plan);
    auto refusal = [&](PlanChunks const& chunks) {
        EngineHeader header = sample_header(plan);
        header.chunks = chunks;
        try {
            (void)encode_engine_prefix(header);
        } catch (InvalidArgument const& error) {
            return std::string(error.what());
        }
        ADD_FAILURE() << "chunks of " << chunks.sha256.size() << " SHA-256 and "
                      << chunks.xxh3_128.size() << " XXH3-128 digests were encoded";
        return std::string();
    };
    std::string const expected =
        "engine header chunks must hold 1 SHA-256 and 1 XXH3-128 hex digests for a plan of 4 bytes";
    for (PlanChunks const& chunks :
         {PlanChunks{}, PlanChunks{{}, good.xxh3_128}, PlanChunks{good.sha256, {}},
          PlanChunks{{good.sha256[0], good.sha256[0]}, good.xxh3_128},
          PlanChunks{good.sha256, {good.xxh3_128[0], good.xxh3_128[0]}},
          PlanChunks{{good.xxh3_128[0]}, good.xxh3_128}, PlanChunks{good.sha256, {good.sha256[0]}},
          PlanChunks{{"X" + good.sha256[0].substr(1)}, good.xxh3_128}}) {
        std::string const message = refusal(chunks);
        EXPECT_TRUE(contains(message, expected)) << message;
    }
    // An empty plan has no chunks: one digest for it is refused, none is written.
    EngineHeader empty = sample_header({});
    empty.chunks = plan_chunks_of(plan);
    EXPECT_THROW((void)encode_engine_prefix(empty), InvalidArgument);
    empty.chunks = PlanChunks{};
    EXPECT_EQ(std::to_integer<int>(encode_engine_prefix(empty)[8]), 2);
}

TEST(EngineFile, ReadHeaderFromDiskWithoutThePlan) {
    testing::TemporaryDirectory dir;
    auto const plan = testing::random_bytes(3 << 20, 6);
    auto const header = sample_header(plan);
    auto const bytes = whole_file(header, plan);
    auto const path = dir.path() / "e.engine";
    testing::write_all(path, bytes);
    auto const decoded = read_engine_header(path);
    EXPECT_EQ(decoded.header.conditions, header.conditions);
    EXPECT_EQ(decoded.plan_offset, bytes.size() - plan.size());

    for (std::size_t length :
         {std::size_t{0}, std::size_t{5}, std::size_t{20}, std::size_t{40}, bytes.size() - 1}) {
        testing::write_all(path, std::span(bytes).first(length));
        EXPECT_THROW(read_engine_header(path), CorruptEngineError) << length;
    }
    EXPECT_THROW(read_engine_header(dir.path() / "absent.engine"), FileError);
}

// The header is read in one piece when it fits the first read (4,096 bytes with the preamble),
// else in two: headers ending just before, at and after that size, and one much longer.
TEST(EngineFile, HeadersOfEveryLengthAroundTheFirstReadAreReadWhole) {
    testing::TemporaryDirectory dir;
    auto const plan = testing::random_bytes(5000, 8);
    auto const path = dir.path() / "e.engine";
    EngineHeader base = sample_header(plan);
    base.references["pad"] = "";
    std::size_t const base_prefix = encode_engine_prefix(base).size();
    for (std::size_t const prefix :
         {std::size_t{4095}, std::size_t{4096}, std::size_t{4097}, std::size_t{70000}}) {
        EngineHeader header = base;
        header.references["pad"] = std::string(prefix - base_prefix, 'x');
        auto const bytes = whole_file(header, plan);
        ASSERT_EQ(bytes.size(), prefix + plan.size());
        testing::write_all(path, bytes);
        auto const decoded = read_engine_header(path);
        EXPECT_EQ(decoded.plan_offset, prefix);
        EXPECT_EQ(decoded.header.references, header.references);
        EXPECT_EQ(decoded.conditions_json, canonical_json(header.conditions));
        // Cut inside the header, and inside the plan.
        for (std::size_t const length : {prefix - 1, prefix + 10}) {
            testing::write_all(path, std::span(bytes).first(length));
            EXPECT_THROW(read_engine_header(path), CorruptEngineError) << prefix << " " << length;
        }
    }
}

} // namespace
} // namespace tensoracle
