// Uses the installed core: identity of a tiny conditions object, printed as its file name.
#include <iostream>
#include <tensoracle/cache/identity.hpp>

int main() {
    auto const identity = tensoracle::make_identity({{"name", "consumer"}, {"graph_version", "1"}});
    std::cout << identity.file_name << '\n';
    return identity.file_name.starts_with("consumer-") ? 0 : 1;
}
