// The dtype names the manifest records and the DataType enum (data_type.hpp), both ways.
#include "tensoracle/deploy/data_type.hpp"
#include "tensoracle/deploy/execution_contract.hpp"

#include <gtest/gtest.h>
#include <set>
#include <string>

namespace tensoracle::deploy {
namespace {

TEST(DataType, EveryNameGivesItsTypeAndEveryTypeItsName) {
    std::set<std::string_view> names;
    for (DataTypeInfo const& info : kDataTypes) {
        EXPECT_EQ(data_type_from_name(info.name), info.type) << info.name;
        EXPECT_EQ(data_type_name(info.type), info.name);
        EXPECT_EQ(element_bits(info.type), element_bits(std::string(info.name))) << info.name;
        names.insert(info.name);
    }
    // One row per enumerator, in the enumerators' order, each name once.
    EXPECT_EQ(names.size(), kDataTypes.size());
    for (std::size_t i = 0; i < kDataTypes.size(); ++i) {
        EXPECT_EQ(static_cast<std::size_t>(kDataTypes[i].type), i);
    }
}

TEST(DataType, TheNamesAreTheManifestsExactly) {
    EXPECT_EQ(data_type_from_name("FLOAT"), DataType::float32);
    EXPECT_EQ(data_type_from_name("HALF"), DataType::float16);
    EXPECT_EQ(data_type_from_name("BF16"), DataType::bfloat16);
    EXPECT_EQ(data_type_from_name("BOOL"), DataType::boolean);
    EXPECT_EQ(data_type_name(DataType::int64), "INT64");
    EXPECT_EQ(data_type_name(DataType::fp4), "FP4");
    EXPECT_EQ(element_bits(DataType::int4), 4);
    EXPECT_EQ(element_bits(DataType::int64), 64);
    EXPECT_FALSE(data_type_from_name("float").has_value());
    EXPECT_FALSE(data_type_from_name("DOUBLE").has_value());
    EXPECT_FALSE(data_type_from_name("").has_value());
}

TEST(DataType, ATensorDescriptionGivesItsDtypeAsTheEnum) {
    TensorDescription tensor;
    tensor.dtype = "HALF";
    EXPECT_EQ(tensor.data_type(), DataType::float16);
    tensor.dtype = "COMPLEX";
    EXPECT_FALSE(tensor.data_type().has_value());
}

} // namespace
} // namespace tensoracle::deploy
