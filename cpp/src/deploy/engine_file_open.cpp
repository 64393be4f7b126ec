// Opening one engine file on its own (DeployedEngine::open_file and open_bytes,
// deployed_engine.hpp): the bytes held once, then judged as a downloaded remote object is
// (verify_remote_object: the signature trailer first when a key is set, then the header, the plan
// and its chunks), and the entry made from the verified header.
#include "cache/engine_file.hpp"
#include "cache/entry_file.hpp"
#include "cache/identity.hpp"
#include "deploy/deployed_engine_state.hpp"
#include "deploy/io_signature.hpp"
#include "deploy/json_forms.hpp"
#include "deploy/plan_unsealing.hpp"
#include "deploy/verify_key_option.hpp"
#include "io/file_contents.hpp"
#include "io/platform.hpp"
#include "remote/object.hpp"
#include "remote/signature.hpp"
#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <algorithm>
#include <cerrno>
#include <span>
#include <utility>

namespace tensoracle::deploy {
namespace {

std::optional<VerifyKey> verify_key_of(EngineFileOptions const& options) {
    return deploy::verify_key_of(options.verify_key, options.verify_key_pem, "EngineFileOptions");
}

// The entry name a signature of `engine` names: the identity of its header's conditions, read
// from its preamble and header alone (within the limits of every header read).
std::string entry_name_of(std::span<std::byte const> engine, std::filesystem::path const& label) {
    std::uint64_t const wanted =
        std::min<std::uint64_t>(engine_prefix_bytes(engine.first(
                                    std::min<std::size_t>(engine.size(), kEnginePreambleBytes))),
                                engine.size());
    DecodedHeader const prefix =
        decode_engine_prefix(engine.first(static_cast<std::size_t>(wanted)), engine.size(), label);
    try {
        return recorded_file_name(prefix.header.conditions, prefix.conditions_json);
    } catch (InvalidArgument const& error) {
        throw CorruptEngineError("engine file '" + label.string() +
                                     "' is unusable: its conditions have no identity (" +
                                     error.what() + ")",
                                 label);
    }
}

// The refusal of a path that is not a regular file: the file may be anywhere, a cache's or not,
// so it says what open_file opens rather than what to remove. Appended to a string that starts
// with the text, not prepended (GCC bug 105329, see cache/file.cpp).
std::string not_a_file(std::filesystem::path const& path, char const* what) {
    std::string text = "engine file '";
    text += path.string();
    text += "' is ";
    text += what;
    text += ": open_file opens regular files only";
    return text;
}

std::string string_or_empty(nlohmann::json const& object, char const* key) {
    auto const found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

} // namespace

void DeployedEngine::verify_held(State& state, std::byte const* held, std::size_t size,
                                 std::string const& name, EngineFileOptions const& options) {
    std::filesystem::path const label{name};
    std::optional<VerifyKey> const trusted = verify_key_of(options);
    std::optional<encryption::DecryptKey> const decrypt_key =
        decrypt_key_of(options.decrypt_key, options.decrypt_key_pem, "EngineFileOptions");
    std::span<std::byte const> const object(held, size);
    bool const is_signed = has_signature_trailer(object.size(), object);
    if (is_signed && !trusted && !options.skip_signature_verification) {
        refuse_unverified("engine file '" + name + "' ends in a signature",
                          "EngineFileOptions::verify_key or verify_key_pem",
                          "EngineFileOptions::skip_signature_verification", label);
    }
    auto const engine = is_signed ? object.first(object.size() - kSignatureTrailerBytes) : object;
    std::string const file_name = entry_name_of(engine, label);
    RemoteEngine const verified =
        verify_remote_object(object, name, file_name, nullptr, trusted ? &*trusted : nullptr);
    EngineHeader const& header = verified.decoded.header;
    state.path = label;
    state.signer = verified.signer;
    state.plan_offset = verified.decoded.plan_offset;
    state.plan_size = header.plan_size;
    state.plan_xxh3_128 = header.plan_xxh3_128;
    ManifestEntry& entry = state.entry;
    entry.recipe = string_or_empty(header.conditions, "name");
    entry.graph_version = string_or_empty(header.conditions, "graph_version");
    entry.file_name = file_name;
    entry.conditions_json = verified.decoded.conditions_json;
    entry.runs_on = conditions_from_json(header.conditions, JsonPlace(name).member("conditions"));
    if (auto const io = header.references.find("io");
        io != header.references.end() && !io->is_null()) {
        entry.io = io_from_json(*io, JsonPlace(name).member("references").member("io"));
        entry.io_json = canonical_json(*io);
    }
    entry.plan_size = header.plan_size;
    entry.plan_xxh3_128 = header.plan_xxh3_128;
    entry.engine_bytes = verified.engine_bytes;
    state.unsealed =
        unseal_plan(label, header, decrypt_key, "EngineFileOptions::decrypt_key or decrypt_key_pem",
                    object.subspan(static_cast<std::size_t>(state.plan_offset),
                                   static_cast<std::size_t>(state.plan_size)));
}

DeployedEngine DeployedEngine::open_file(std::filesystem::path const& path,
                                         EngineFileOptions const& options) {
    // A key that cannot be used is the caller's error, whatever the file.
    (void)verify_key_of(options);
    (void)decrypt_key_of(options.decrypt_key, options.decrypt_key_pem, "EngineFileOptions");
    EntryFile const entry = open_entry_file(path, "engine file");
    switch (entry.finding) {
    case EntryFinding::regular:
        break;
    case EntryFinding::missing:
        throw_file_error("cannot open engine file", path, ENOENT);
    case EntryFinding::link:
        throw CorruptEngineError(not_a_file(path, "a symbolic link") + ", not links", path);
    case EntryFinding::directory:
        throw CorruptEngineError(not_a_file(path, "a directory"), path);
    case EntryFinding::not_regular:
        throw CorruptEngineError(not_a_file(path, "a FIFO, socket or device"), path);
    }
    platform::Descriptor const& file = entry.file;
    auto state = std::make_unique<State>();
    state->contents.emplace(file.get(), path);
    auto const bytes = state->contents->bytes();
    verify_held(*state, bytes.data(), bytes.size(), path.string(), options);
    return DeployedEngine(std::move(state));
}

DeployedEngine DeployedEngine::open_bytes(void const* data, std::size_t size,
                                          std::string const& name,
                                          EngineFileOptions const& options) {
    if (data == nullptr && size != 0) {
        throw InvalidArgument("DeployedEngine::open_bytes: data is null for " +
                              std::to_string(size) + " bytes of '" + name + "'");
    }
    auto state = std::make_unique<State>();
    auto const* const first = static_cast<std::byte const*>(data);
    state->owned.assign(first, first + size); // judged and handed on: only this copy
    verify_held(*state, state->owned.data(), state->owned.size(), name, options);
    return DeployedEngine(std::move(state));
}

} // namespace tensoracle::deploy
