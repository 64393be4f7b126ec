// Test support: the exit status of a GoogleTest binary as CTest should read it. GoogleTest exits 0
// when every test was skipped (GTEST_SKIP), which CTest counts as passed; a binary none of whose
// tests ran exits 77 instead, the SKIP_RETURN_CODE of every test (tests/CMakeLists.txt), and says
// why on a line that starts with "skipped:" (the line tools/gpu_check reports). A binary with
// some tests skipped and others passed still passes, and names each skipped test and its reason.
#pragma once

#include <gtest/gtest.h>
#include <iostream>
#include <string>
#include <vector>

namespace tensoracle::testing {

// Remembers the message of each GTEST_SKIP, by test.
class SkipRecorder : public ::testing::EmptyTestEventListener {
public:
    struct Skip {
        std::string test;
        std::string reason;
    };

    // Read at the end of each test, from its own result: a listener must not ask UnitTest for
    // the current test while a part result is being reported (that takes GoogleTest's lock).
    void OnTestEnd(::testing::TestInfo const& info) override {
        ::testing::TestResult const& result = *info.result();
        if (!result.Skipped()) {
            return;
        }
        std::string reason;
        for (int i = 0; i < result.total_part_count(); ++i) {
            ::testing::TestPartResult const& part = result.GetTestPartResult(i);
            if (part.skipped()) {
                reason = part.message();
                break;
            }
        }
        skips_.push_back({std::string{info.test_suite_name()} + "." + info.name(),
                          reason.empty() ? "no reason given" : reason});
    }

    std::vector<Skip> const& skips() const noexcept { return skips_; }

private:
    std::vector<Skip> skips_;
};

// Installs a SkipRecorder, runs every test and returns the exit status for CTest. Call after
// ::testing::InitGoogleTest.
inline int run_all_tests_for_ctest() {
    auto* recorder = new SkipRecorder; // owned by GoogleTest's listener list from here on
    ::testing::UnitTest::GetInstance()->listeners().Append(recorder);
    int const status = RUN_ALL_TESTS();
    ::testing::UnitTest const& unit = *::testing::UnitTest::GetInstance();
    if (status != 0 || unit.skipped_test_count() == 0) {
        return status;
    }
    for (auto const& skip : recorder->skips()) {
        std::cout << "skipped test " << skip.test << ": " << skip.reason << '\n';
    }
    if (unit.successful_test_count() > 0) {
        std::cout << unit.skipped_test_count() << " of " << unit.test_to_run_count()
                  << " tests skipped, the others passed\n";
        return status;
    }
    std::string const reason =
        recorder->skips().empty() ? std::string{"every test skipped"} : recorder->skips()[0].reason;
    std::cout << "skipped: " << reason << '\n';
    return 77;
}

} // namespace tensoracle::testing
