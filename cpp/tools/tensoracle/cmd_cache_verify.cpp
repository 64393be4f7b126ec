// `tensoracle cache verify`: reads every saved engine fully and reports damaged ones.
#include "cache/verification.hpp"
#include "commands.hpp"
#include "output_format.hpp"
#include "text/size_text.hpp"
#include "text/utf8_text.hpp"

#include <iostream>
#include <memory>

namespace tensoracle::cli {
namespace {

struct VerifyOptions {
    std::string cache_dir;
    std::string format{kJson};
};

// One row per entry (name, size, status, why damaged or skipped), then the counts.
std::string verification_table(nlohmann::json const& report) {
    std::vector<std::vector<std::string>> rows = {{"NAME", "SIZE", "STATUS", "REASON"}};
    for (nlohmann::json const& entry : report["entries"]) {
        rows.push_back({entry["file_name"].get<std::string>(),
                        format_size_human(entry["size_bytes"].get<std::uint64_t>()),
                        entry["status"].get<std::string>(),
                        one_line(entry.value("reason", std::string()))});
    }
    std::size_t const count = report["entries"].size();
    return aligned_rows(rows) + std::to_string(count) + (count == 1 ? " entry: " : " entries: ") +
           report["intact_count"].dump() + " intact, " + report["damaged_count"].dump() +
           " damaged, " + report["skipped_count"].dump() + " skipped, " +
           report["unrecognized_count"].dump() + " unrecognized, in " +
           escape_for_terminal(report["directory"].get<std::string>()) + "\n";
}

int verify(VerifyOptions const& options) {
    CacheVerification const verification = verify_cache(resolve_cache_directory(options.cache_dir));
    nlohmann::json const report = verification_json(verification);
    if (options.format == kTable) {
        std::cout << verification_table(report);
    } else {
        std::cout << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    return verification.passed() ? kExitSuccess : kExitFailure;
}

} // namespace

void add_cache_verify_command(CLI::App& cache, Action& action) {
    auto options = std::make_shared<VerifyOptions>();
    CLI::App* command = cache.add_subcommand(
        "verify", "Read every saved engine whole and check its header and plan");
    command->footer("Read every saved engine completely and check its header and plan checksum; "
                    "exit status 1 when any is damaged or unrecognized (a link, a directory or an "
                    "engine under another name). Changes no file and no recorded time");
    add_cache_dir_option(*command, options->cache_dir);
    add_format_option(*command, options->format);
    command->callback([options, &action] {
        action = [options] {
            return run_reporting_errors("tensoracle cache verify",
                                        [&] { return verify(*options); });
        };
    });
}

} // namespace tensoracle::cli
