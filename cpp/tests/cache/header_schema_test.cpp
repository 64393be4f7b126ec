// header_schema_violation: every header member tensoracle reads back has the type it writes.
#include "cache/header_schema.hpp"

#include <gtest/gtest.h>

namespace tensoracle {
namespace {

using nlohmann::json;

json good_references() {
    json const tensor = {{"name", "x"},
                         {"mode", "INPUT"},
                         {"dtype", "FLOAT"},
                         {"shape", {1, -1}},
                         {"location", "DEVICE"},
                         {"format", "LINEAR"},
                         {"profile", {{"min", {1, 1}}, {"opt", {1, 4}}, {"max", {1, 8}}}}};
    return {{"workspace_limit", nullptr},
            {"shape_tensor_outputs", json::array()},
            {"io", {{"tensors", {tensor}}}},
            {"targets", {"sm89"}},
            {"tensoracle_version", "0.1.0"},
            {"built_at", "2026-12-01T00:00:00Z"},
            {"build_milliseconds", 1200},
            {"rebuild_reason",
             {{"compared_with", "m-1.engine"},
              {"differences", {{{"key", "graph_version"}, {"description", "1 -> 2"}}}}}},
            {"something_newer", {{"any", "shape"}}}};
}

json good_conditions() {
    return {{"name", "m"},
            {"graph_version", "1"},
            {"inputs", {{"x", {{"min", {1}}, {"opt", {2}}, {"max", {4}}}}}},
            {"optimization_level", 3},
            {"tf32", false},
            {"weights", {std::string(64, 'a')}},
            {"gpu", nullptr},
            {"targets", {"sm89"}}};
}

std::string violation(json conditions, json references) {
    auto const found = header_schema_violation(conditions, references);
    return found ? *found : "";
}

TEST(HeaderSchema, WhatTensoracleWritesPasses) {
    EXPECT_EQ(violation(good_conditions(), good_references()), "");
    EXPECT_EQ(violation(json::object(), json::object()), "");
}

TEST(HeaderSchema, EachWrongTypeIsNamedByItsPath) {
    auto references = good_references();
    references["io"] = "FLOAT";
    EXPECT_EQ(violation(good_conditions(), references),
              "references.io is \"FLOAT\", expected an object");
    references = good_references();
    references["io"]["tensors"][0]["shape"] = "1x2";
    EXPECT_EQ(violation(good_conditions(), references),
              "references.io.tensors[0].shape is \"1x2\", expected an array of integers");
    references = good_references();
    references["io"]["tensors"][0].erase("dtype");
    EXPECT_EQ(violation(good_conditions(), references),
              "references.io.tensors[0].dtype is missing");
    references = good_references();
    references["workspace_limit"] = "1 GiB";
    EXPECT_EQ(violation(good_conditions(), references),
              "references.workspace_limit is \"1 GiB\", expected an integer or null");
    references = good_references();
    references["rebuild_reason"]["differences"] = {{{"key", 3}}};
    EXPECT_EQ(violation(good_conditions(), references),
              "references.rebuild_reason.differences[0].key is 3, expected a string");

    auto conditions = good_conditions();
    conditions["gpu"] = "H200";
    EXPECT_EQ(violation(conditions, good_references()),
              "conditions.gpu is \"H200\", expected an object or null");
    conditions = good_conditions();
    conditions["targets"] = {"sm89", 90};
    EXPECT_EQ(violation(conditions, good_references()),
              "conditions.targets[1] is 90, expected a string");
    conditions = good_conditions();
    conditions["hardware_compatibility"] = 1;
    EXPECT_EQ(violation(conditions, good_references()),
              "conditions.hardware_compatibility is 1, expected a string");
    conditions = good_conditions();
    conditions["hardware_compatibility"] = "ampere_plus";
    EXPECT_EQ(violation(conditions, good_references()), "");
    references = good_references();
    references["rebuild_reason"]["cannot_run_here"] = false;
    EXPECT_EQ(violation(good_conditions(), references),
              "references.rebuild_reason.cannot_run_here is false, expected a string");
    conditions = good_conditions();
    conditions["name"] = "";
    EXPECT_EQ(violation(conditions, good_references()),
              "conditions.name is \"\", expected a non-empty string");
    conditions = good_conditions();
    conditions["inputs"]["x"]["max"] = {4.5};
    EXPECT_EQ(violation(conditions, good_references()),
              "conditions.inputs[\"x\"].max[0] is 4.5, expected an integer");
}

} // namespace
} // namespace tensoracle
