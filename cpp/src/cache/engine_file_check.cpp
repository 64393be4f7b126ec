// The check of one cache file for `tensoracle cache verify`, reading the file a piece at a time
// (see engine_file_check.hpp).
#include "cache/engine_file_check.hpp"

#include "cache/engine_file.hpp"
#include "cache/file.hpp"
#include "cache/listing.hpp"
#include "cache/store.hpp"
#include "io/file_bytes.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <fcntl.h>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tensoracle::detail {
namespace {

// What the check keeps of a file as its pieces pass: the bytes that decode_engine_header judges
// (the preamble, then the header it announces: at most kEnginePreambleBytes + kMaxHeaderBytes,
// and no more than the file measured), and the plan's digests, never the plan. Judged after the
// read on the length read, these give what decode_engine_header and plan_damage gave on a whole
// copy: decode_engine_header reads no byte past the header, and plan_damage's reasons are
// PlanDamageCheck's.
class EngineReading {
public:
    EngineReading(std::filesystem::path path, std::string_view file_name, std::uint64_t measured)
        : path_(std::move(path)), file_name_(file_name), measured_(measured) {
        prefix_.reserve(static_cast<std::size_t>(std::min(kEnginePreambleBytes, measured)));
    }

    // The file's next piece.
    void take(std::span<std::byte const> piece) {
        while (!piece.empty() && (stage_ == Stage::preamble || stage_ == Stage::header)) {
            auto const count = static_cast<std::size_t>(
                std::min<std::uint64_t>(piece.size(), wanted_ - prefix_.size()));
            auto const kept = piece.first(count);
            prefix_.insert(prefix_.end(), kept.begin(), kept.end());
            piece = piece.subspan(count);
            if (prefix_.size() < wanted_) {
                continue; // the piece is used up
            }
            if (stage_ == Stage::preamble) {
                end_preamble();
            } else {
                end_header();
            }
        }
        if (stage_ == Stage::plan) {
            plan_->update(piece);
        }
    }

    // The preamble and header as read (shorter where the file is).
    std::span<std::byte const> prefix() const noexcept { return prefix_; }

    // The plan's damage against `header`, decoded from prefix() after the read and naming the
    // file. The same bytes decoded and named it when the read reached the plan, so the plan was
    // hashed: a plan not hashed here is a fault of this code, not of the file.
    std::optional<std::string> plan_damage(EngineHeader const& header) {
        if (!plan_) {
            throw std::logic_error("the plan of '" + path_.string() + "' was not hashed");
        }
        return plan_->finish(header);
    }

private:
    enum class Stage {
        preamble, // keeping the first kEnginePreambleBytes bytes
        header,   // keeping the header the preamble announces
        plan,     // hashing the plan
        rest,     // nothing to keep or hash: the header's fault, or the other file it names,
                  // is reported after the read
    };

    void end_preamble() {
        wanted_ = engine_prefix_bytes(prefix_);
        if (wanted_ == kEnginePreambleBytes) {
            stage_ = Stage::rest; // a header length of 0 or beyond the limit
            return;
        }
        prefix_.reserve(static_cast<std::size_t>(std::min(wanted_, measured_)));
        stage_ = Stage::header;
    }

    void end_header() { stage_ = header_names_file() ? Stage::plan : Stage::rest; }

    // Whether the header, whole, decodes and names the file being checked; if so the plan is
    // hashed as it passes. The header is judged as soon as it is whole so that a plan no open
    // would read (its header is damaged, or names another file) is not hashed. Its fault is
    // reported by the judgement after the read, which finds the same: the length read past the
    // header changes nothing in decode_engine_prefix's checks once the header is whole.
    bool header_names_file() {
        try {
            DecodedHeader const decoded = decode_engine_prefix(prefix_, prefix_.size(), path_);
            if (!file_name_.empty() && entry_name_mismatch(file_name_, decoded.header.conditions)) {
                return false;
            }
            plan_.emplace(decoded.header);
            return true;
        } catch (Error const&) {
            return false; // reported after the read
        }
    }

    std::filesystem::path path_;
    std::string_view file_name_;
    std::uint64_t measured_;
    Stage stage_ = Stage::preamble;
    std::uint64_t wanted_ = kEnginePreambleBytes;
    std::vector<std::byte> prefix_;
    std::optional<PlanDamageCheck> plan_;
};

} // namespace

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
        // Read a piece at a time into one buffer, as Store::read's copy is read, and hashed as
        // read: an engine of any size takes a piece and its header of memory, never a copy of
        // it, and is never mapped (the pages of a mapping past a cut made meanwhile would end
        // the process with SIGBUS; a piece read short is reported truncated). No more than the
        // size measured here is read, whatever the file grows to meanwhile.
        std::uint64_t const measured = status->size;
        std::vector<std::byte> buffer(
            static_cast<std::size_t>(std::min<std::uint64_t>(kCheckPieceBytes, measured)));
        EngineReading reading(path, file_name, measured);
        std::uint64_t length = 0; // read: the size measured, or less where the file was cut
        try {
            length = read_piece_by_piece(file.get(), measured, buffer, path,
                                         [&](std::span<std::byte const> piece) {
                                             if (observe) {
                                                 observe(piece);
                                             }
                                             reading.take(piece);
                                         });
        } catch (...) {
            if (observe) {
                observe({}); // abandoned
            }
            throw;
        }
        if (observe) {
            observe({}); // complete
        }
        DecodedHeader const decoded = decode_engine_header(reading.prefix(), length, path);
        if (!file_name.empty()) {
            if (auto mismatch = entry_name_mismatch(file_name, decoded.header.conditions)) {
                return {VerifyStatus::unrecognized, std::move(*mismatch)};
            }
        }
        // The plan's checks are Store::read's own (its XXH3-128, then each chunk's in format 2):
        // what verify calls intact, an open accepts, given the conditions the header records.
        if (auto const damage = reading.plan_damage(decoded.header)) {
            return {VerifyStatus::damaged, std::string("plan checksum mismatch: ") + *damage};
        }
        return {};
    } catch (Error const& error) {
        return {VerifyStatus::damaged, error.what()};
    }
}

} // namespace tensoracle::detail
