// Writing a saved engine's header and plan (engine_writing.hpp).
#include "cache/engine_writing.hpp"

#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "encryption/plan_encryption.hpp"
#include "encryption/plan_sealing.hpp"

#include <utility>

namespace tensoracle {

EngineHeader write_engine(AtomicFile& file, nlohmann::json conditions, nlohmann::json references,
                          std::span<std::byte const> plan,
                          std::span<encryption::RecipientKey const> encrypt_to) {
    EngineHeader header;
    header.conditions = std::move(conditions);
    header.references = std::move(references);
    if (encrypt_to.empty()) {
        header.plan_size = plan.size();
        header.plan_xxh3_128 = plan_checksum_hex(plan);
        header.chunks = plan_chunks_of(plan);
        file.write(encode_engine_prefix(header));
        file.write(plan);
        return header;
    }
    encryption::Key const data_key = encryption::fresh_data_key();
    header.encryption = encryption::encryption_for(data_key, plan.size(), encrypt_to);
    PlanChecksum whole;
    PlanChunkHasher chunks;
    encryption::for_each_sealed_chunk(data_key, plan, [&](std::span<std::byte const> chunk) {
        whole.update(chunk);
        chunks.update(chunk);
    });
    header.plan_size = encryption::sealed_body_size(plan.size());
    header.plan_xxh3_128 = whole.hex_digest();
    header.chunks = chunks.finish();
    file.write(encode_engine_prefix(header));
    encryption::for_each_sealed_chunk(
        data_key, plan, [&file](std::span<std::byte const> chunk) { file.write(chunk); });
    return header;
}

} // namespace tensoracle
