// Engine identity: canonical conditions → SHA-256 digest → file name.
#include "tensoracle/cache/identity.hpp"

#include "tensoracle/errors.hpp"
#include "tensoracle/io/hash.hpp"
#include "tensoracle/text/canonical_json.hpp"

namespace tensoracle {
namespace {

constexpr std::size_t kMaxSafeNameLength = 64;

// The name only makes file listings readable; the digest alone keeps identities apart, so any
// byte outside a portable file-name alphabet may be replaced without losing uniqueness.
std::string safe_name(std::string const& name) {
    std::string out;
    for (char const c : name) {
        if (out.size() == kMaxSafeNameLength) {
            break;
        }
        bool const portable = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        out.push_back(portable ? c : '_');
    }
    return out;
}

} // namespace

EngineIdentity make_identity(nlohmann::json conditions) {
    if (!conditions.is_object()) {
        throw InvalidArgument(std::string("engine conditions must be a JSON object, not a ") +
                              conditions.type_name());
    }
    auto const name = conditions.find("name");
    if (name == conditions.end() || !name->is_string() ||
        name->get_ref<std::string const&>().empty()) {
        throw InvalidArgument("engine conditions need a non-empty string member \"name\", got " +
                              (name == conditions.end() ? std::string("none") : name->dump()));
    }
    EngineIdentity identity;
    identity.digest = sha256_hex(canonical_json(conditions));
    identity.file_name = safe_name(name->get<std::string>()) + "-" + identity.digest + ".engine";
    identity.conditions = std::move(conditions);
    return identity;
}

} // namespace tensoracle
