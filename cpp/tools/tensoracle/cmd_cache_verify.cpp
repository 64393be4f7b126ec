// `tensoracle cache verify`: reads every saved engine fully and reports damaged ones.
#include "commands.hpp"
#include "tensoracle/cache/cache_verification.hpp"

#include <iostream>
#include <memory>

namespace tensoracle::cli {
namespace {

int verify(std::string const& cache_dir) {
    CacheVerification const verification = verify_cache(resolve_cache_directory(cache_dir));
    std::cout << verification_json(verification)
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return verification.damaged_count == 0 ? kExitSuccess : kExitFailure;
}

} // namespace

void add_cache_verify_command(CLI::App& cache, Action& action) {
    auto cache_dir = std::make_shared<std::string>();
    CLI::App* command = cache.add_subcommand(
        "verify", "Read every saved engine completely and check its header and plan checksum; "
                  "exit status 1 when any is damaged. Changes no file and no recorded time");
    add_cache_dir_option(*command, *cache_dir);
    command->callback([cache_dir, &action] {
        action = [cache_dir] {
            return run_reporting_errors("tensoracle cache verify",
                                        [&] { return verify(*cache_dir); });
        };
    });
}

} // namespace tensoracle::cli
