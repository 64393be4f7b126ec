// The check of an engine's IO against its manifest entry's (see execution_contract.hpp): the one
// IO comparison (io_difference.hpp), refused as an EngineIOError carrying its fields.
#include "deploy/io_difference.hpp"
#include "tensoracle/deploy/execution_contract.hpp"
#include "tensoracle/errors.hpp"

#include <string>

namespace tensoracle::deploy {
namespace {

std::string named(std::string const& name) {
    return "'" + name + "'";
}

std::string engine_text(std::filesystem::path const& engine) {
    return engine.empty() ? std::string("the engine") : "the engine '" + engine.string() + "'";
}

} // namespace

void check_engine_io(std::vector<TensorDescription> const& engine,
                     std::vector<TensorDescription> const& manifest,
                     std::filesystem::path const& path) {
    auto const difference = first_io_difference(engine, manifest);
    if (!difference) {
        return;
    }
    throw EngineIOError("engine IO mismatch in " + engine_text(path) + " against its manifest " +
                            "entry: tensor " + named(difference->tensor) + " field '" +
                            difference->field + "': observed=" + difference->observed +
                            ", expected=" + difference->expected,
                        Refusal{.subject = path.string(),
                                .field = io_field(*difference, manifest),
                                .observed = difference->observed,
                                .expected = difference->expected});
}

} // namespace tensoracle::deploy
