// The main of every GoogleTest binary of the core (in place of gtest_main): runs the tests and
// exits 77, CTest's skip, when all of them were skipped (skip_exit.hpp). A test file that defines
// its own main calls run_all_tests_for_ctest itself. A binary started as the child process of
// one of its tests runs that child's role instead (child_process.hpp).
#include "support/child_process.hpp"
#include "support/skip_exit.hpp"

#include <gtest/gtest.h>

int main(int argc, char** argv) {
    if (auto const status = tensoracle::testing::run_child_role()) {
        return *status;
    }
    ::testing::InitGoogleTest(&argc, argv);
    return tensoracle::testing::run_all_tests_for_ctest();
}
