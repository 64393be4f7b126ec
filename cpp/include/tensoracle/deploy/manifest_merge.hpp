// The manifests of a sharded build joined into one: `tensoracle build --shard I/N --manifest PART`
// writes part I's entries and a `shard` member (the part, and every recipe of the whole build in
// the package's order); merge_manifests gives the manifest the unsharded build writes. This
// header compiles as C++17 and includes no third-party header.
#pragma once

#include <string>
#include <vector>

namespace tensoracle::deploy {

// One part: its text, and the name messages give it (its file).
struct ManifestPart {
    std::string name;
    std::string text;
};

// The manifest of the whole build, as `tensoracle build --manifest` writes it (JSON, two-space
// indented, keys sorted, a final newline): the parts' entries in the order of the build's
// recipes, without a `shard` member. Throws tensoracle::InvalidArgument naming the parts, the
// field and the values when a part is not a manifest (parse_manifest's refusals) or not a part
// of a sharded build, when parts differ in spec, remote, part count or the recipes of the build,
// when two parts are the same part or a part is missing, and when an entry is in a part its
// recipe does not belong to (by `tensoracle build --shard`'s split) or repeats another.
std::string merge_manifests(std::vector<ManifestPart> const& parts);

} // namespace tensoracle::deploy
