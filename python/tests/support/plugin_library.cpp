// A minimal TensorRT plugin library for tests: one V3 plugin creator that creates nothing.
// The pip wheels ship no TensorRT headers, so the interface layout (IVersionedInterface ->
// IPluginCreatorV3One) is declared here by hand. Compile with -DPLUGIN_NAME="..." and
// -DPLUGIN_VERSION="..." to vary the creator and the library bytes.
#include <cstdint>

namespace {

struct InterfaceInfo {
    char const* kind;
    std::int32_t major;
    std::int32_t minor;
};

enum class ApiLanguage : std::int32_t { cpp = 0, python = 1 };

class VersionedInterface {
public:
    virtual ApiLanguage getAPILanguage() const noexcept { return ApiLanguage::cpp; }
    virtual InterfaceInfo getInterfaceInfo() const noexcept = 0;
    virtual ~VersionedInterface() noexcept = default;
};

struct FieldCollection {
    std::int32_t count = 0;
    void const* fields = nullptr;
};

class Creator : public VersionedInterface {
public:
    InterfaceInfo getInterfaceInfo() const noexcept override {
        return {"PLUGIN CREATOR_V3ONE", 1, 0};
    }
    virtual void* createPlugin(char const*, void const*, std::int32_t) noexcept { return nullptr; }
    virtual void const* getFieldNames() noexcept { return &fields_; }
    virtual char const* getPluginName() const noexcept { return PLUGIN_NAME; }
    virtual char const* getPluginVersion() const noexcept { return PLUGIN_VERSION; }
    virtual char const* getPluginNamespace() const noexcept { return ""; }

private:
    FieldCollection fields_;
};

Creator creator;
VersionedInterface* creators[] = {&creator};

} // namespace

extern "C" void setLoggerFinder(void*) {}

extern "C" VersionedInterface* const* getCreators(std::int32_t& count) {
    count = 1;
    return creators;
}
