// The header member of an encrypted engine (plan_encryption.hpp).
#include "encryption/plan_encryption.hpp"

#include "encryption/plan_sealing.hpp"
#include "io/hash.hpp"
#include "io/hex_digits.hpp"
#include "tensoracle/errors.hpp"
#include "text/json_members.hpp"

#include <algorithm>

namespace tensoracle::encryption {
namespace {

constexpr std::size_t kShownKeyDigits = 16;

bool is_lower_hex(std::string_view text, std::size_t digits) {
    return text.size() == digits && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

std::string hex_of(std::span<std::byte const> bytes) {
    return detail::lower_hex(
        std::span(reinterpret_cast<unsigned char const*>(bytes.data()), bytes.size()));
}

std::string short_id(std::string const& id) {
    return id.substr(0, kShownKeyDigits) + "…";
}

using Members = JsonMembers<CorruptEngineError>;

// The hex text of `digits` digits that the member `name` holds, as bytes into `into`.
void hex_member(Members const& members, std::string_view name, std::span<std::byte> into) {
    std::string const expected = std::to_string(into.size() * 2) + " lowercase hex digits";
    std::string const text = members.text(name, expected);
    if (!is_lower_hex(text, into.size() * 2)) {
        members.refuse(name, members.any(name), expected);
    }
    detail::from_lower_hex(text, into);
}

} // namespace

PlanEncryption encryption_for(Key const& data_key, std::uint64_t plan_size,
                              std::span<RecipientKey const> recipients) {
    if (recipients.empty()) {
        throw InvalidArgument("an encrypted engine needs at least one recipient's public key");
    }
    PlanEncryption encryption;
    encryption.plan_size = plan_size;
    encryption.key_commitment = key_commitment(data_key);
    for (RecipientKey const& recipient : recipients) {
        std::string const id = recipient.id();
        bool const listed = std::any_of(encryption.recipients.begin(), encryption.recipients.end(),
                                        [&](WrappedKey const& w) { return w.recipient == id; });
        if (!listed) {
            encryption.recipients.push_back(wrap_data_key(data_key, recipient));
        }
    }
    std::sort(encryption.recipients.begin(), encryption.recipients.end(),
              [](WrappedKey const& a, WrappedKey const& b) { return a.recipient < b.recipient; });
    return encryption;
}

nlohmann::json encryption_json(PlanEncryption const& encryption) {
    nlohmann::json recipients = nlohmann::json::array();
    for (WrappedKey const& wrapped : encryption.recipients) {
        recipients.push_back({{"ephemeral", hex_of(wrapped.ephemeral.bytes())},
                              {"key", wrapped.recipient},
                              {"wrapped_key", hex_of(wrapped.wrapped)}});
    }
    return {{"cipher", kCipherName},
            {"key_commitment", encryption.key_commitment},
            {"plan_size", encryption.plan_size},
            {"recipients", std::move(recipients)}};
}

PlanEncryption plan_encryption_from_json(nlohmann::json const& value,
                                         std::filesystem::path const& path) {
    JsonPlace const place = JsonPlace(path.string()).member("encryption");
    Members const members(value, place);
    if (!value.is_object()) {
        members.refuse_at(place, value, "an object");
    }
    for (auto const& item : value.items()) {
        if (item.key() != "cipher" && item.key() != "key_commitment" && item.key() != "plan_size" &&
            item.key() != "recipients") {
            members.refuse(item.key(), item.value(), "no such member");
        }
    }
    std::string const cipher = members.text("cipher", "\"aes-256-gcm\"");
    if (cipher != kCipherName) {
        members.refuse("cipher", members.any("cipher"),
                       "\"aes-256-gcm\" (the only cipher this build reads)");
    }
    PlanEncryption encryption;
    encryption.plan_size = members.count("plan_size");
    encryption.key_commitment = members.text("key_commitment", "64 lowercase hex digits");
    if (!is_sha256_hex(encryption.key_commitment)) {
        members.refuse("key_commitment", members.any("key_commitment"), "64 lowercase hex digits");
    }
    nlohmann::json const& list = members.any("recipients", "a list of recipients");
    if (!list.is_array() || list.empty()) {
        members.refuse("recipients", list, "a list of at least one recipient");
    }
    for (std::size_t index = 0; index < list.size(); ++index) {
        JsonPlace const at = members.place("recipients").index(index);
        Members const recipient(list[index], at);
        if (!list[index].is_object() || list[index].size() != 3) {
            recipient.refuse_at(at, list[index],
                                R"(an object of "ephemeral", "key" and "wrapped_key")");
        }
        WrappedKey wrapped;
        std::array<std::byte, kKeyBytes> id{};
        hex_member(recipient, "key", id);
        wrapped.recipient = hex_of(id);
        hex_member(recipient, "ephemeral", wrapped.ephemeral.bytes());
        hex_member(recipient, "wrapped_key", wrapped.wrapped);
        if (!encryption.recipients.empty() &&
            encryption.recipients.back().recipient >= wrapped.recipient) {
            recipient.refuse("key", recipient.any("key"), "recipients sorted by key, none twice");
        }
        encryption.recipients.push_back(std::move(wrapped));
    }
    return encryption;
}

std::vector<std::string> recipient_ids(PlanEncryption const& encryption) {
    std::vector<std::string> ids;
    ids.reserve(encryption.recipients.size());
    for (WrappedKey const& wrapped : encryption.recipients) {
        ids.push_back(wrapped.recipient);
    }
    return ids;
}

std::string recipient_list(PlanEncryption const& encryption) {
    std::string out;
    for (WrappedKey const& wrapped : encryption.recipients) {
        out += (out.empty() ? "" : ", ") + short_id(wrapped.recipient);
    }
    return out;
}

Key open_data_key(PlanEncryption const& encryption, DecryptKey const& key,
                  std::filesystem::path const& path) {
    std::string const id = key.recipient().id();
    auto const found =
        std::find_if(encryption.recipients.begin(), encryption.recipients.end(),
                     [&](WrappedKey const& wrapped) { return wrapped.recipient == id; });
    Refusal refusal{.subject = path.string(),
                    .field = "encryption.recipients",
                    .observed = id,
                    .expected = "one of " + recipient_list(encryption),
                    .remedy = "open it with the private key of one of its recipients"};
    std::string const where = "encrypted engine '" + path.string() + "'";
    if (found == encryption.recipients.end()) {
        throw EngineKeyError(where + " is not encrypted for " + key.origin() + " (key " +
                                 short_id(id) + "): its recipients are " +
                                 recipient_list(encryption) + "; " + refusal.remedy,
                             refusal);
    }
    auto const data_key = unwrap_data_key(*found, key);
    if (!data_key) {
        refusal.field = "encryption.recipients[" +
                        std::to_string(found - encryption.recipients.begin()) + "].wrapped_key";
        refusal.observed = "does not authenticate";
        refusal.expected = "the data key wrapped for key " + short_id(id);
        refusal.remedy = "the header was changed: fetch the engine again";
        throw EngineKeyError(where + ": the copy of its data key wrapped for " + key.origin() +
                                 " does not authenticate; the header was changed since it "
                                 "was written",
                             refusal);
    }
    if (key_commitment(*data_key) != encryption.key_commitment) {
        refusal.field = "encryption.key_commitment";
        refusal.observed = key_commitment(*data_key);
        refusal.expected = encryption.key_commitment;
        refusal.remedy = "the engine's recipients were given different keys: do not use it";
        throw EngineKeyError(where + ": the data key wrapped for " + key.origin() +
                                 " is not the one the header commits to; its recipients would "
                                 "read different plans",
                             refusal);
    }
    return *data_key;
}

std::vector<std::byte> opened_plan(PlanEncryption const& encryption, DecryptKey const& key,
                                   std::span<std::byte const> body,
                                   std::filesystem::path const& path) {
    return open_plan(open_data_key(encryption, key, path), encryption.plan_size, body, path);
}

} // namespace tensoracle::encryption
