// Which entry runs on which GPU: the matching rule and the per-device selection, on described
// devices (no driver, no TensorRT).
#include "cuda/gpu_properties_json.hpp"
#include "deploy/json_forms.hpp"
#include "tensoracle/deploy/selection.hpp"
#include "tensoracle/errors.hpp"

#include <gtest/gtest.h>

namespace tensoracle::deploy {
namespace {

using Properties = std::map<std::string, PropertyValue>;

// A GPU description with every property the driver reports.
DeviceDescription described(std::string const& name, std::string const& capability,
                            Properties const& overrides = {}) {
    DeviceDescription device{{
        {"name", name},
        {"compute_capability", capability},
        {"memory_bus_width_bits", std::int64_t{384}},
        {"l2_cache_bytes", std::int64_t{73400320}},
        {"shared_memory_per_block_bytes", std::int64_t{49152}},
        {"shared_memory_per_block_optin_bytes", std::int64_t{101376}},
        {"shared_memory_per_multiprocessor_bytes", std::int64_t{102400}},
        {"texture_alignment_bytes", std::int64_t{512}},
        {"multiprocessor_count", std::int64_t{128}},
        {"integrated", false},
        {"ecc_enabled", false},
        {"total_memory_bytes", std::int64_t{25757220864}},
    }};
    for (auto const& [key, value] : overrides) {
        device.properties[key] = value;
    }
    return device;
}

// The described GPUs, made on first use.
DeviceDescription const& sm75() {
    static DeviceDescription const device = described("NVIDIA GeForce RTX 2080 Ti", "7.5",
                                                      {{"multiprocessor_count", std::int64_t{68}}});
    return device;
}
DeviceDescription const& sm86() {
    static DeviceDescription const device =
        described("NVIDIA GeForce RTX 3090", "8.6", {{"multiprocessor_count", std::int64_t{82}}});
    return device;
}
DeviceDescription const& sm89() {
    static DeviceDescription const device = described("NVIDIA GeForce RTX 4090", "8.9");
    return device;
}
DeviceDescription const& sm89_laptop() {
    static DeviceDescription const device = described("NVIDIA GeForce RTX 4090 Laptop GPU", "8.9",
                                                      {{"multiprocessor_count", std::int64_t{76}}});
    return device;
}
DeviceDescription const& sm90() {
    static DeviceDescription const device = described(
        "NVIDIA H200", "9.0", {{"multiprocessor_count", std::int64_t{132}}, {"ecc_enabled", true}});
    return device;
}
DeviceDescription const& sm120() {
    static DeviceDescription const device =
        described("NVIDIA GeForce RTX 5090", "12.0", {{"multiprocessor_count", std::int64_t{170}}});
    return device;
}

std::vector<std::string> ci_targets() {
    return {"sm86", "sm89", "sm120"};
}

EntryConditions rtx(std::vector<std::string> targets, std::string version = "1.3.0.35") {
    return {kTensorRtRtx, std::move(version), std::move(targets), std::nullopt, std::nullopt};
}

// A TensorRT 11 entry built on `builder`, recorded as the identity records it.
EntryConditions tensorrt(DeviceDescription const& builder, std::optional<std::string> const& level,
                         std::string version = "11.1.0.106") {
    EntryConditions conditions{kTensorRt, std::move(version), {target_of(builder)}, level, builder};
    if (level == kAmperePlus) {
        conditions.targets.clear();
        conditions.gpu.reset();
    } else if (level == kSameComputeCapability) {
        conditions.gpu = DeviceDescription{
            {{"compute_capability", builder.properties.at("compute_capability")}}};
    }
    return conditions;
}

TEST(DeviceSelection, ADeviceIsWrittenAsItsBuildTarget) {
    EXPECT_EQ(target_of(sm75()), "sm75");
    EXPECT_EQ(target_of(sm86()), "sm86");
    EXPECT_EQ(target_of(sm89()), "sm89");
    EXPECT_EQ(target_of(sm90()), "sm90");
    EXPECT_EQ(target_of(sm120()), "sm120");
    EXPECT_EQ(target_of(DeviceDescription{{{"compute_capability", std::string("08.09")}}}), "sm89");
}

TEST(DeviceSelection, AComputeCapabilityIsNamedEitherWay) {
    EXPECT_EQ(compute_capability_named("8.9"), "8.9");
    EXPECT_EQ(compute_capability_named("sm89"), "8.9");
    EXPECT_EQ(compute_capability_named("sm120"), "12.0");
    EXPECT_EQ(compute_capability_named("12.0"), "12.0");
    for (std::string_view const wrong :
         {"", "sm8", "sm", "smxy", "8", "8.", ".9", "8.9.1", "sm8.9", "ninety"}) {
        EXPECT_EQ(compute_capability_named(wrong), std::nullopt) << wrong;
    }
    // The inverse of target_of.
    for (char const* target : {"sm75", "sm86", "sm89", "sm90", "sm120"}) {
        std::optional<std::string> const capability = compute_capability_named(target);
        ASSERT_TRUE(capability.has_value()) << target;
        EXPECT_EQ(target_of(DeviceDescription{{{"compute_capability", *capability}}}), target);
    }
}

TEST(DeviceSelection, AMalformedComputeCapabilityIsNamed) {
    for (auto const& [value, shown] :
         std::vector<std::pair<PropertyValue, std::string>>{{std::string("ninety"), "'ninety'"},
                                                            {std::string("8.9.1"), "'8.9.1'"},
                                                            {std::string("8."), "'8.'"},
                                                            {std::string("it's"), "\"it's\""},
                                                            {std::int64_t{9}, "'9'"}}) {
        DeviceDescription const device{{{"compute_capability", value}}};
        try {
            (void)target_of(device);
            ADD_FAILURE() << shown << " was accepted";
        } catch (InvalidArgument const& error) {
            EXPECT_EQ(std::string(error.what()), "the GPU description holds compute_capability=" +
                                                     shown + "; expected 'MAJOR.MINOR'");
            EXPECT_EQ(error.refusal().field, "compute_capability");
            EXPECT_EQ(error.refusal().observed, shown);
            EXPECT_EQ(error.refusal().expected, "'MAJOR.MINOR'");
        }
    }
    EXPECT_THROW((void)target_of(DeviceDescription{}), InvalidArgument);
    EXPECT_THROW(
        (void)cannot_run(rtx(ci_targets()), DeviceDescription{{{"name", std::string("x")}}}),
        InvalidArgument);
}

TEST(DeviceSelection, ACiBuiltRtxEntryRunsOnTheGpusOfItsTargets) {
    EntryConditions const entry = rtx(ci_targets());
    for (DeviceDescription const* device : {&sm86(), &sm89(), &sm89_laptop(), &sm120()}) {
        EXPECT_EQ(cannot_run(entry, *device), std::nullopt) << target_of(*device);
    }
    EXPECT_EQ(cannot_run(entry, sm75()),
              "the engine is built for sm86, sm89, sm120; this GPU, NVIDIA GeForce RTX 2080 Ti "
              "(sm75), is not among them");
    EXPECT_EQ(cannot_run(entry, sm90()), "the engine is built for sm86, sm89, sm120; this GPU, "
                                         "NVIDIA H200 (sm90), is not among them");
    EXPECT_EQ(cannot_run(rtx({}), sm90()),
              "the engine is built for no target; this GPU, NVIDIA H200 (sm90), is not among them");
}

TEST(DeviceSelection, AnRtxEntrySavedWithGpuPropertiesIsJudgedByItsTargets) {
    EntryConditions older = rtx({"sm89", "sm120"});
    older.gpu = sm89();
    EXPECT_EQ(cannot_run(older, sm120()), std::nullopt);
    EXPECT_EQ(cannot_run(older, sm89_laptop()), std::nullopt);
    EXPECT_NE(cannot_run(older, sm86()), std::nullopt);
}

TEST(DeviceSelection, TensorRtWithoutALevelRunsOnlyOnItsTwin) {
    EntryConditions const entry = tensorrt(sm89(), std::nullopt);
    EXPECT_EQ(cannot_run(entry, sm89()), std::nullopt);
    EXPECT_EQ(cannot_run(entry, sm89_laptop()),
              "the engine is built for NVIDIA GeForce RTX 4090 and runs only on a GPU with the "
              "same properties; this GPU, NVIDIA GeForce RTX 4090 Laptop GPU (sm89), differs in "
              "multiprocessor_count, name");
    EXPECT_EQ(cannot_run(entry, sm120()),
              "the engine is built for NVIDIA GeForce RTX 4090 and runs only on a GPU with the "
              "same properties; this GPU, NVIDIA GeForce RTX 5090 (sm120), differs in "
              "compute_capability, multiprocessor_count, name");
    // A property only one side describes differs; true and 1 are equal, as in Python.
    DeviceDescription fewer = sm89();
    fewer.properties.erase("l2_cache_bytes");
    fewer.properties["integrated"] = std::int64_t{0};
    fewer.properties["extra"] = std::string("x");
    EXPECT_EQ(cannot_run(entry, fewer),
              "the engine is built for NVIDIA GeForce RTX 4090 and runs only on a GPU with the "
              "same properties; this GPU, NVIDIA GeForce RTX 4090 (sm89), differs in extra, "
              "l2_cache_bytes");
}

TEST(DeviceSelection, TensorRtSameComputeCapabilityRunsOnEveryGpuOfIt) {
    EntryConditions const entry = tensorrt(sm89(), std::string(kSameComputeCapability));
    EXPECT_EQ(cannot_run(entry, sm89()), std::nullopt);
    EXPECT_EQ(cannot_run(entry, sm89_laptop()), std::nullopt);
    EXPECT_EQ(cannot_run(entry, sm86()),
              "the engine is built with hardware_compatibility 'same_compute_capability', for "
              "compute capability 8.9; this GPU, NVIDIA GeForce RTX 3090 (sm86), has 8.6");
    EntryConditions lacking = entry;
    lacking.gpu.reset();
    EXPECT_EQ(cannot_run(lacking, sm89()),
              "the engine is built with hardware_compatibility 'same_compute_capability', for "
              "compute capability None; this GPU, NVIDIA GeForce RTX 4090 (sm89), has 8.9");
}

TEST(DeviceSelection, TensorRtAmperePlusRunsFromSm80On) {
    for (DeviceDescription const* builder : {&sm86(), &sm89(), &sm90(), &sm120()}) {
        EntryConditions const entry = tensorrt(*builder, std::string(kAmperePlus));
        for (DeviceDescription const* device : {&sm86(), &sm89(), &sm90(), &sm120()}) {
            EXPECT_EQ(cannot_run(entry, *device), std::nullopt);
        }
        EXPECT_EQ(cannot_run(entry, sm75()),
                  "the engine is built with hardware_compatibility 'ampere_plus', for sm80 and "
                  "newer; this GPU, NVIDIA GeForce RTX 2080 Ti (sm75), is older");
    }
}

TEST(DeviceSelection, AnUnknownLevelNeverMatches) {
    EntryConditions const entry{kTensorRt, "11.1.0.106", {}, std::string("hopper_plus"), sm90()};
    EXPECT_EQ(cannot_run(entry, sm90()),
              "the engine records hardware_compatibility 'hopper_plus', which is not known here");
    EntryConditions const quoted{kTensorRt, "11.1.0.106", {}, std::string("it's\n"), sm90()};
    EXPECT_EQ(cannot_run(quoted, sm90()),
              "the engine records hardware_compatibility \"it's\\n\", which is not known here");
}

TEST(DeviceSelection, ATensorRtEntryBuiltWithoutAGpuRunsNowhere) {
    EntryConditions const entry{kTensorRt, "11.1.0.106", {}, std::nullopt, std::nullopt};
    for (DeviceDescription const* device : {&sm75(), &sm89(), &sm90(), &sm120()}) {
        EXPECT_EQ(cannot_run(entry, *device), "the engine was built without a GPU by a backend "
                                              "that builds for the GPU in use");
    }
}

TEST(DeviceSelection, TheDriversPropertiesDescribeTheSameGpu) {
    GpuProperties gpu;
    gpu.name = "NVIDIA H200";
    gpu.compute_capability_major = 9;
    gpu.multiprocessor_count = 132;
    gpu.ecc_enabled = true;
    gpu.total_memory_bytes = 150'000'000'000ULL;
    DeviceDescription const device = describe(gpu);
    EXPECT_EQ(target_of(device), "sm90");
    EXPECT_EQ(device.properties.at("ecc_enabled"), PropertyValue(true));
    EXPECT_EQ(device.properties.at("total_memory_bytes"),
              PropertyValue(std::int64_t{150'000'000'000}));
    EXPECT_EQ(device.properties.size(), 12U);
    EXPECT_EQ(cannot_run(tensorrt(device, std::nullopt), describe(gpu)), std::nullopt);
}

RuntimeBackend tensorrt_11_1() {
    return {kTensorRt, "11.1.0.106"};
}
RuntimeBackend rtx_1_3() {
    return {kTensorRtRtx, "1.3.0.35"};
}

TEST(DeviceSelection, OneEntryPerDeviceSoTwoGpusOfAHostGetTheirOwn) {
    std::vector<Candidate> const candidates{
        {"model-sm89.engine", tensorrt(sm89(), std::nullopt)},
        {"model-sm90.engine", tensorrt(sm90(), std::nullopt)},
    };
    Selection const for_sm89 = select_entry(candidates, sm89(), tensorrt_11_1());
    ASSERT_EQ(for_sm89.chosen, 0U);
    EXPECT_EQ(
        for_sm89.why,
        "it is built for a GPU with exactly the properties of NVIDIA GeForce RTX 4090 (sm89)");
    EXPECT_TRUE(for_sm89.refusal.empty());
    ASSERT_EQ(for_sm89.rejected.size(), 1U);
    EXPECT_EQ(for_sm89.rejected[0].candidate, 1U);
    Selection const for_sm90 = select_entry(candidates, sm90(), tensorrt_11_1());
    EXPECT_EQ(for_sm90.chosen, 1U);
}

TEST(DeviceSelection, TheMostSpecificUsableEntryWins) {
    std::vector<Candidate> const candidates{
        {"portable.engine", tensorrt(sm86(), std::string(kAmperePlus))},
        {"same-cc.engine", tensorrt(sm90(), std::string(kSameComputeCapability))},
        {"exact.engine", tensorrt(sm90(), std::nullopt)},
    };
    Selection const exact = select_entry(candidates, sm90(), tensorrt_11_1());
    ASSERT_EQ(exact.chosen, 2U);
    ASSERT_EQ(exact.rejected.size(), 2U);
    EXPECT_EQ(exact.rejected[0].reason,
              "it can run here, but exact.engine is built more specifically for this GPU");
    // Another GPU of compute capability 9.0: not the exact one's twin.
    DeviceDescription const other = described("NVIDIA H100", "9.0");
    Selection const same = select_entry(candidates, other, tensorrt_11_1());
    ASSERT_EQ(same.chosen, 1U);
    EXPECT_EQ(same.why, "it is built with hardware_compatibility 'same_compute_capability' for "
                        "the compute capability of NVIDIA H100 (sm90)");
    Selection const portable = select_entry(candidates, sm120(), tensorrt_11_1());
    ASSERT_EQ(portable.chosen, 0U);
    EXPECT_EQ(portable.why, "it is built with hardware_compatibility 'ampere_plus', for sm80 and "
                            "newer, which include NVIDIA GeForce RTX 5090 (sm120)");
}

TEST(DeviceSelection, ARefusalListsEveryCandidateAndWhy) {
    std::vector<Candidate> const candidates{
        {"rtx.engine", rtx(ci_targets())},
        {"old.engine", tensorrt(sm90(), std::nullopt, "11.0.0.114")},
        {"sm89.engine", tensorrt(sm89(), std::nullopt)},
    };
    Selection const refused = select_entry(candidates, sm90(), tensorrt_11_1());
    EXPECT_EQ(refused.chosen, std::nullopt);
    EXPECT_TRUE(refused.why.empty());
    ASSERT_EQ(refused.rejected.size(), 3U);
    EXPECT_EQ(refused.refusal,
              "no entry can run on NVIDIA H200 (sm90) with tensorrt 11.1.0.106:\n"
              "  rtx.engine: it is built by tensorrt_rtx; this application runs tensorrt; "
              "besides, the engine is built for sm86, sm89, sm120; this GPU, NVIDIA H200 "
              "(sm90), is not among them\n"
              "  old.engine: it is built by tensorrt 11.0.0.114; this application runs tensorrt "
              "11.1.0.106, and an engine runs only on the version that built it\n"
              "  sm89.engine: the engine is built for NVIDIA GeForce RTX 4090 and runs only on a "
              "GPU with the same properties; this GPU, NVIDIA H200 (sm90), differs in "
              "compute_capability, ecc_enabled, multiprocessor_count, name");
}

TEST(DeviceSelection, RtxTargetsSelectByComputeCapabilityAndVersion) {
    std::vector<Candidate> const candidates{
        {"ci.engine", rtx(ci_targets())},
        {"newer.engine", rtx(ci_targets(), "1.4.0.1")},
    };
    Selection const chosen = select_entry(candidates, sm89_laptop(), rtx_1_3());
    ASSERT_EQ(chosen.chosen, 0U);
    EXPECT_EQ(chosen.why, "it is built for sm86, sm89, sm120, which include NVIDIA GeForce RTX "
                          "4090 Laptop GPU (sm89)");
    Selection const refused = select_entry(candidates, sm90(), rtx_1_3());
    EXPECT_EQ(refused.chosen, std::nullopt);
    EXPECT_EQ(refused.refusal,
              "no entry can run on NVIDIA H200 (sm90) with tensorrt_rtx 1.3.0.35:\n"
              "  ci.engine: the engine is built for sm86, sm89, sm120; this GPU, NVIDIA H200 "
              "(sm90), is not among them\n"
              "  newer.engine: it is built by tensorrt_rtx 1.4.0.1; this application runs "
              "tensorrt_rtx 1.3.0.35, and an engine runs only on the version that built it; "
              "besides, the engine is built for sm86, sm89, sm120; this GPU, NVIDIA H200 "
              "(sm90), is not among them");
}

TEST(DeviceSelection, TwoEquallySpecificEntriesAreAmbiguousNotPickedAtRandom) {
    std::vector<Candidate> const candidates{
        {"a.engine", rtx({"sm86", "sm89"})},
        {"b.engine", rtx({"sm89", "sm120"})},
    };
    Selection const refused = select_entry(candidates, sm89(), rtx_1_3());
    EXPECT_EQ(refused.chosen, std::nullopt);
    EXPECT_EQ(refused.refusal,
              "more than one entry can run on NVIDIA GeForce RTX 4090 (sm89) with tensorrt_rtx "
              "1.3.0.35:\n"
              "  a.engine: it can run here, and so can b.engine, built as specifically: which "
              "one to use is ambiguous\n"
              "  b.engine: it can run here, and so can a.engine, built as specifically: which "
              "one to use is ambiguous");
    EXPECT_EQ(select_entry(candidates, sm120(), rtx_1_3()).chosen, 1U);
    Selection const none = select_entry({}, sm89(), rtx_1_3());
    EXPECT_EQ(none.chosen, std::nullopt);
    EXPECT_EQ(none.refusal, "no entry can be selected for NVIDIA GeForce RTX 4090 (sm89) with "
                            "tensorrt_rtx 1.3.0.35: there are no candidates");
}

EntryConditions built_on(EntryConditions conditions, std::string os, std::string arch) {
    conditions.os = std::move(os);
    conditions.arch = std::move(arch);
    return conditions;
}

TEST(DeviceSelection, TheRecordedPlatformMustBeTheApplications) {
    RuntimeBackend const linux_x86{kTensorRt, "11.1.0.106", "linux", "x86_64"};
    std::vector<Candidate> const candidates{
        {"windows.engine",
         built_on(tensorrt(sm86(), std::string(kAmperePlus)), "windows", "x86_64")},
        {"arm.engine", built_on(tensorrt(sm86(), std::string(kAmperePlus)), "linux", "aarch64")},
        {"linux.engine", built_on(tensorrt(sm86(), std::string(kAmperePlus)), "linux", "x86_64")},
    };
    // Three ampere_plus entries would be ambiguous; two are for other platforms.
    Selection const chosen = select_entry(candidates, sm90(), linux_x86);
    ASSERT_EQ(chosen.chosen, 2U);
    ASSERT_EQ(chosen.rejected.size(), 2U);
    EXPECT_EQ(chosen.rejected[0].reason,
              "it is built on windows x86_64; this application runs on linux x86_64");
    EXPECT_EQ(chosen.rejected[1].reason,
              "it is built on linux aarch64; this application runs on linux x86_64");
    std::vector<EntryConditions const*> conditions;
    for (Candidate const& candidate : candidates) {
        conditions.push_back(&candidate.conditions);
    }
    EXPECT_EQ(choose_entry(conditions, sm90(), linux_x86), 2U);
    // For a Windows application only the Windows entry runs; and what the GPU says is told too.
    RuntimeBackend const windows{kTensorRt, "11.1.0.106", "windows", "x86_64"};
    EXPECT_EQ(select_entry(candidates, sm90(), windows).chosen, 0U);
    Selection const refused = select_entry(candidates, sm75(), windows);
    EXPECT_EQ(refused.chosen, std::nullopt);
    EXPECT_NE(refused.refusal.find("  arm.engine: it is built on linux aarch64; this application "
                                   "runs on windows x86_64; besides, "),
              std::string::npos)
        << refused.refusal;
    // Conditions that record no platform are not judged by it.
    EXPECT_EQ(
        select_entry({{"any.engine", tensorrt(sm86(), std::string(kAmperePlus))}}, sm90(), windows)
            .chosen,
        0U);
    // The default platform is the one this library was compiled for.
    EXPECT_EQ(tensorrt_11_1().os, kHostOs);
    EXPECT_EQ(tensorrt_11_1().arch, kHostArch);
}

// However many entries tie or cannot run, a refusal names a few in full and counts the rest:
// its size stays bounded (1,000 tied entries once made an 83 MB message).
TEST(DeviceSelection, ARefusalNamesAFewCandidatesInFullThenACount) {
    std::vector<Candidate> tied;
    for (int i = 0; i < 15; ++i) {
        tied.push_back({"tied-" + std::to_string(i) + ".engine", rtx({"sm89"})});
    }
    Selection const ambiguous = select_entry(tied, sm89(), rtx_1_3());
    EXPECT_EQ(ambiguous.chosen, std::nullopt);
    ASSERT_EQ(ambiguous.rejected.size(), 15U); // every one, for an application that wants them
    EXPECT_EQ(ambiguous.rejected[0].reason,
              "it can run here, and so can tied-1.engine, tied-2.engine, tied-3.engine and 11 "
              "more entries, built as specifically: which one to use is ambiguous");
    EXPECT_EQ(ambiguous.rejected[2].reason,
              "it can run here, and so can tied-0.engine, tied-1.engine, tied-3.engine and 11 "
              "more entries, built as specifically: which one to use is ambiguous");
    EXPECT_NE(ambiguous.refusal.find("\n  tied-9.engine: "), std::string::npos);
    EXPECT_EQ(ambiguous.refusal.find("tied-10.engine: "), std::string::npos);
    EXPECT_TRUE(ambiguous.refusal.ends_with("\n  and 5 more entries, not listed"))
        << ambiguous.refusal;
    std::vector<Candidate> const two_tied(tied.begin(), tied.begin() + 2);
    EXPECT_EQ(select_entry(two_tied, sm89(), rtx_1_3()).rejected[1].reason,
              "it can run here, and so can tied-0.engine, built as specifically: which one to "
              "use is ambiguous");
    // 10,000 tied entries: a refusal of a few kilobytes.
    std::vector<Candidate> many(10'000, tied[0]);
    EXPECT_LT(select_entry(many, sm89(), rtx_1_3()).refusal.size(), 4096U);
}

TEST(DeviceSelection, ConditionsAndDevicesAreReadFromJson) {
    nlohmann::json const conditions = {{"name", "model"},
                                       {"backend", "tensorrt"},
                                       {"backend_version", "11.1.0.106"},
                                       {"targets", {"sm89"}},
                                       {"hardware_compatibility", "same_compute_capability"},
                                       {"os", "linux"},
                                       {"arch", "x86_64"},
                                       {"gpu", {{"compute_capability", "8.9"}}}};
    EntryConditions const read = conditions_from_json(conditions, "deploy.json: entries[0]");
    EXPECT_EQ(read.backend, "tensorrt");
    EXPECT_EQ(read.backend_version, "11.1.0.106");
    EXPECT_EQ(read.targets, std::vector<std::string>{"sm89"});
    EXPECT_EQ(read.hardware_compatibility, "same_compute_capability");
    EXPECT_EQ(read.os, "linux");
    EXPECT_EQ(read.arch, "x86_64");
    ASSERT_TRUE(read.gpu.has_value());
    EXPECT_EQ(cannot_run(read, sm89_laptop()), std::nullopt);
    EntryConditions const unset = conditions_from_json(
        {{"backend", "tensorrt_rtx"}, {"gpu", nullptr}, {"targets", nullptr}}, "x");
    EXPECT_FALSE(unset.gpu.has_value());
    EXPECT_TRUE(unset.targets.empty());
    EXPECT_FALSE(unset.hardware_compatibility.has_value());
    EXPECT_FALSE(unset.os.has_value());
    EXPECT_FALSE(unset.arch.has_value());

    auto const refusal = [](nlohmann::json const& value) {
        try {
            (void)conditions_from_json(value, "deploy.json: entries[0].conditions");
        } catch (InvalidArgument const& error) {
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(refusal({{"backend", 7}}),
              "deploy.json: entries[0].conditions.backend is 7, expected a string");
    EXPECT_EQ(refusal({{"arch", 64}}),
              "deploy.json: entries[0].conditions.arch is 64, expected a string");
    EXPECT_EQ(refusal({{"targets", {"sm89", 86}}}),
              "deploy.json: entries[0].conditions.targets[1] is 86, expected a string");
    EXPECT_EQ(refusal({{"targets", "sm89"}}),
              "deploy.json: entries[0].conditions.targets is \"sm89\", expected an array of "
              "strings");
    EXPECT_EQ(refusal({{"gpu", {{"l2_cache_bytes", 1.5}}}}),
              "deploy.json: entries[0].conditions.gpu.l2_cache_bytes is 1.5, expected a string, "
              "an integer or true/false");
    EXPECT_EQ(refusal({{"gpu", "sm89"}}), "deploy.json: entries[0].conditions.gpu is \"sm89\", "
                                          "expected an object of GPU properties");
    EXPECT_EQ(refusal(nlohmann::json::array()),
              "deploy.json: entries[0].conditions is [], expected an object of identity "
              "conditions");
    EXPECT_EQ(refusal({{"gpu", {{"total_memory_bytes", 18446744073709551615ULL}}}}),
              "deploy.json: entries[0].conditions.gpu.total_memory_bytes is "
              "18446744073709551615, expected a string, an integer or true/false");
}

// choose_entry makes select_entry's choice without its reasons: the same index, or nothing
// wherever select_entry refuses (none usable, or two equally specific).
TEST(DeviceSelection, TheQuickChoiceIsTheFullSelectionsChoice) {
    std::vector<Candidate> const candidates{
        {"rtx.engine", rtx(ci_targets())},
        {"old.engine", tensorrt(sm90(), std::nullopt, "11.0.0.114")},
        {"sm89.engine", tensorrt(sm89(), std::nullopt)},
        {"portable.engine", tensorrt(sm86(), std::string(kAmperePlus))},
        {"same-cc.engine", tensorrt(sm90(), std::string(kSameComputeCapability))},
        {"exact.engine", tensorrt(sm90(), std::nullopt)},
        {"twin.engine", tensorrt(sm90(), std::nullopt)},
        {"windows.engine",
         built_on(tensorrt(sm86(), std::string(kAmperePlus)), "windows", "x86_64")},
    };
    std::vector<DeviceDescription> const devices{sm86(),
                                                 sm89(),
                                                 sm90(),
                                                 sm120(),
                                                 sm89_laptop(),
                                                 described("NVIDIA H100", "9.0"),
                                                 described("Tesla T4", "7.5")};
    std::vector<RuntimeBackend> const backends{tensorrt_11_1(),
                                               rtx_1_3(),
                                               {kTensorRt, "11.0.0.114"},
                                               {kTensorRt, "11.1.0.106", "windows", "x86_64"}};
    // Every subset of the candidates that keeps their order, on every device and backend.
    std::size_t compared = 0;
    std::size_t chosen = 0;
    for (unsigned mask = 0; mask < (1U << candidates.size()); ++mask) {
        std::vector<Candidate> subset;
        for (std::size_t i = 0; i < candidates.size(); ++i) {
            if ((mask >> i) & 1U) {
                subset.push_back(candidates[i]);
            }
        }
        std::vector<EntryConditions const*> conditions;
        for (Candidate const& candidate : subset) {
            conditions.push_back(&candidate.conditions);
        }
        for (DeviceDescription const& device : devices) {
            for (RuntimeBackend const& backend : backends) {
                Selection const full = select_entry(subset, device, backend);
                ASSERT_EQ(choose_entry(conditions, device, backend), full.chosen)
                    << "subset " << mask << " on " << target_of(device) << " with " << backend.name
                    << " " << backend.version;
                ++compared;
                chosen += full.chosen.has_value() ? 1U : 0U;
            }
        }
    }
    EXPECT_EQ(compared, 256U * 7U * 4U);
    EXPECT_GT(chosen, 0U);       // some choices made...
    EXPECT_LT(chosen, compared); // ...and some refused
}

TEST(DeviceSelection, WithoutAGpuNoneIsDescribedAndTheErrorSaysWhy) {
    GpuList const list = query_all_gpu_properties();
    if (!list.devices.empty()) {
        GTEST_SKIP() << "this machine has a GPU: gpu_properties_gpu_test lists it";
    }
    try {
        (void)describe_gpus();
        FAIL() << "a GPU was described";
    } catch (Error const& error) {
        EXPECT_EQ(std::string(error.what()),
                  "no GPU can be described on this machine: " + list.absent_reason);
    }
}

} // namespace
} // namespace tensoracle::deploy
