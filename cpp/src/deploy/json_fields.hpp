// The members of one JSON object of a manifest or a trust policy: the one reader of typed JSON
// members (text/json_members.hpp), refusing with InvalidArgument. Private to the deploy library.
#pragma once

#include "tensoracle/errors.hpp"
#include "text/json_members.hpp"
#include "text/message_text.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace tensoracle::deploy {

using Json = nlohmann::json;

// The members of one JSON object, which must be an object; `place` names the document and the
// path to the object ("deploy.json: entries[0]").
class Fields : public JsonMembers<InvalidArgument> {
public:
    Fields(Json const& object, JsonPlace place) : JsonMembers(object, std::move(place)) {
        if (!object.is_object()) {
            refuse_at(this->place(), object, "an object");
        }
    }
    using JsonMembers::place;

    // Refuses a document whose "schema_version" is not `readable`, the version this library
    // reads.
    void schema_version(int readable) const {
        Json const& version = any("schema_version");
        if (!version.is_number_integer() || version.get<std::int64_t>() != readable) {
            JsonPlace const at = place("schema_version");
            std::string const expected = "version " + std::to_string(readable);
            throw InvalidArgument(at.text() + " is " + shown(version) + ": this library reads " +
                                      expected,
                                  Refusal{.subject = at.subject(),
                                          .field = at.field(),
                                          .observed = shown(version),
                                          .expected = expected});
        }
    }
};

} // namespace tensoracle::deploy
