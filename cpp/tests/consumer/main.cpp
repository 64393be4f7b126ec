// Uses the installed core: identity of a tiny conditions object, printed as its file name. One
// header of every part folder is included, so that a part missing from the install fails here.
#include <iostream>
#include <tensoracle/cache/identity.hpp>
#include <tensoracle/cache/store.hpp>
#include <tensoracle/compare/compare.hpp>
#include <tensoracle/cubin/bundle_manifest.hpp>
#include <tensoracle/cuda/gpu_properties.hpp>
#include <tensoracle/errors.hpp>
#include <tensoracle/io/hash.hpp>
#include <tensoracle/remote/remote_object.hpp>
#include <tensoracle/text/canonical_json.hpp>

int main() {
    auto const identity = tensoracle::make_identity({{"name", "consumer"}, {"graph_version", "1"}});
    std::cout << identity.file_name << '\n';
    return identity.file_name.starts_with("consumer-") ? 0 : 1;
}
