// What a DeployedEngine holds (deployed_engine.hpp), shared with the PlanReaders made from it.
#pragma once

#include "encryption/primitives.hpp"
#include "io/file_contents.hpp"
#include "io/platform.hpp"
#include "tensoracle/deploy/deployed_engine.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::deploy {

// How a streamed plan's chunks are checked: against the digests of the verified header.
struct ChunkCheck {
    bool sha256 = false;              // SHA-256 (a signature binds them), else XXH3-128
    std::vector<std::string> digests; // one per chunk, lowercase hex
};

// What an encrypted engine's open unsealed (plan_unsealing.hpp).
struct Unsealed {
    std::optional<encryption::Key> data_key; // absent for a plain engine
    std::uint64_t plan_size = 0;             // the plan's own size
    std::vector<std::byte> plan;             // opened whole: the plan, decrypted
};

struct DeployedEngine::State {
    ManifestEntry entry;
    std::string plan_xxh3_128; // the verified header's (and the manifest's) checksum of the plan
    std::filesystem::path path;
    std::optional<std::string> signer;
    std::uint64_t plan_offset = 0; // in the file
    std::uint64_t plan_size = 0;
    // Opened whole: the verified copy of the file (`owned` instead for bytes given in memory).
    std::optional<FileContents> contents;
    std::vector<std::byte> owned;
    // Streamed: the file open since the header was verified, and what each chunk must be.
    std::shared_ptr<platform::Descriptor const> file;
    ChunkCheck chunks;
    // Encrypted (format 3): the data key the decrypt key unwrapped, the plan's own size (plan_size
    // above is the stored body's) and, opened whole, the plan decrypted from the verified copy.
    Unsealed unsealed;

    // The size of the plan handed on: the decrypted plan's for an encrypted engine.
    std::uint64_t handed_size() const noexcept {
        return unsealed.data_key ? unsealed.plan_size : plan_size;
    }

    // The first byte of the verified copy (contents or owned), null when streamed.
    std::byte const* held() const noexcept {
        if (contents) {
            return contents->bytes().data();
        }
        return owned.empty() ? nullptr : owned.data();
    }
};

} // namespace tensoracle::deploy
