// The cubin runtime: per-context module loading, argument checks and kernel launches.
#include "tensoracle/cubin/runtime.hpp"

#include "cuda/loaded_driver.hpp"
#include "io/hash.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <array>

namespace tensoracle::cubin {
namespace {

constexpr std::uint32_t default_shared_limit = 48 * 1024;
constexpr std::uint32_t hidden_scratch_args = 2;
constexpr std::size_t max_launch_params = 64;

char const* type_name(ArgType type) {
    switch (type) {
    case ArgType::pointer:
        return "pointer";
    case ArgType::i32:
        return "i32";
    case ArgType::i64:
        return "i64";
    case ArgType::f32:
        return "fp32";
    case ArgType::f64:
        return "fp64";
    }
    return "unknown";
}

std::string sm_list(KernelRecord const& record) {
    std::string text;
    for (CubinImage const& image : record.images) {
        text += (text.empty() ? "sm" : ", sm") + std::to_string(image.sm);
    }
    return text.empty() ? "none" : text;
}

} // namespace

std::uint64_t ArgValue::integer_bits() const noexcept {
    switch (type_) {
    case ArgType::i32: {
        std::int32_t value = 0;
        std::memcpy(&value, storage_.data(), sizeof value);
        return static_cast<std::uint64_t>(value < 0 ? -static_cast<std::int64_t>(value) : value);
    }
    case ArgType::i64: {
        std::int64_t value = 0;
        std::memcpy(&value, storage_.data(), sizeof value);
        return value < 0 ? 0 - static_cast<std::uint64_t>(value)
                         : static_cast<std::uint64_t>(value);
    }
    default: {
        std::uint64_t value = 0;
        std::memcpy(&value, storage_.data(), sizeof value);
        return value;
    }
    }
}

std::optional<std::string> Kernel::reject_reason(std::span<ArgValue const> args) const {
    KernelRecord const& kernel = *record_;
    if (args.size() != kernel.args.size()) {
        return "kernel '" + std::string{kernel.name} + "' takes " +
               std::to_string(kernel.args.size()) + " arguments, got " +
               std::to_string(args.size());
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
        ArgSpec const& spec = kernel.args[i];
        if (args[i].type() != spec.type) {
            return "argument " + std::to_string(i) + " ('" + std::string{spec.name} +
                   "') of kernel '" + std::string{kernel.name} + "' must be " +
                   type_name(spec.type) + ", got " + type_name(args[i].type());
        }
        bool const integral =
            spec.type == ArgType::pointer || spec.type == ArgType::i32 || spec.type == ArgType::i64;
        if (integral && spec.divisibility > 1 && args[i].integer_bits() % spec.divisibility != 0) {
            return "argument " + std::to_string(i) + " ('" + std::string{spec.name} +
                   "') of kernel '" + std::string{kernel.name} + "' must be divisible by " +
                   std::to_string(spec.divisibility) + ", got " +
                   std::to_string(args[i].integer_bits());
        }
    }
    return std::nullopt;
}

void Kernel::launch(Grid grid, cuda::Stream stream, std::span<ArgValue const> args) const {
    if (auto reason = reject_reason(args)) {
        throw InvalidArgument(*reason);
    }
    cuda::Driver const& driver = cuda::Driver::get();
    cuda::Context context = nullptr;
    driver.check(driver.ctx_get_current(&context), "cuCtxGetCurrent");
    if (context == nullptr) {
        throw CubinRuntimeError("kernel '" + std::string{record_->name} +
                                "' launched with no current CUDA context");
    }
    CubinRuntime::Loaded const& loaded = runtime_->function_for(*this, context);
    // No allocation per launch: the parameter array lives on the stack. The driver only reads
    // the values during the call, so pointing it at the caller's const arguments is safe.
    if (args.size() + hidden_scratch_args > max_launch_params) {
        throw InvalidArgument("kernel '" + std::string{record_->name} + "' has " +
                              std::to_string(args.size()) + " arguments; at most " +
                              std::to_string(max_launch_params - hidden_scratch_args) +
                              " are supported");
    }
    std::array<void*, max_launch_params> params{};
    std::size_t count = 0;
    for (ArgValue const& value : args) {
        params[count++] = const_cast<ArgValue&>(value).storage();
    }
    cuda::DevicePtr global_scratch = 0;
    cuda::DevicePtr profile_scratch = 0;
    params[count++] = &global_scratch;
    params[count++] = &profile_scratch;
    driver.check(driver.launch_kernel(loaded.function, grid.x, grid.y, grid.z, loaded.block_threads,
                                      1, 1, loaded.shared_bytes, stream, params.data(), nullptr),
                 "cuLaunchKernel");
}

CubinRuntime::CubinRuntime(BundleRecord const& bundle) : bundle_(bundle) {
    for (KernelRecord const& record : bundle_.kernels) {
        if (record.hidden_args != hidden_scratch_args) {
            throw CubinRuntimeError("kernel '" + std::string{record.name} + "' declares " +
                                    std::to_string(record.hidden_args) +
                                    " hidden arguments; the runtime supports exactly 2 (scratch)");
        }
        kernels_.push_back(Kernel{*this, record});
    }
}

CubinRuntime::~CubinRuntime() {
    std::lock_guard const lock(mutex_);
    if (driver_ == nullptr) {
        return;
    }
    for (auto const& [key, loaded] : modules_) {
        // A context destroyed before the runtime took its modules with it; nothing to undo then.
        if (driver_->ctx_push_current(key.second) == 0) {
            driver_->module_unload(loaded.module);
            cuda::Context popped = nullptr;
            driver_->ctx_pop_current(&popped);
        }
    }
}

Kernel const& CubinRuntime::kernel(std::string_view name) const {
    for (Kernel const& kernel : kernels_) {
        if (kernel.record().name == name) {
            return kernel;
        }
    }
    std::string names;
    for (Kernel const& kernel : kernels_) {
        names += (names.empty() ? "" : ", ") + std::string{kernel.record().name};
    }
    throw InvalidArgument("the bundle has no kernel '" + std::string{name} + "' (it has: " + names +
                          ")");
}

CubinImage const* CubinRuntime::select_image(KernelRecord const& record,
                                             std::uint32_t sm) noexcept {
    CubinImage const* best = nullptr;
    for (CubinImage const& image : record.images) {
        if (image.sm == sm) {
            return &image;
        }
        // Arch-specific cubins (sm90 and newer, built with the "a" suffix) run on their SM only.
        bool const same_family = image.sm / 10 == sm / 10 && image.sm < sm && image.sm < 90;
        if (same_family && (best == nullptr || image.sm > best->sm)) {
            best = &image;
        }
    }
    return best;
}

void CubinRuntime::release_context(cuda::Context context) {
    std::lock_guard const lock(mutex_);
    if (driver_ == nullptr) {
        return;
    }
    for (auto it = modules_.begin(); it != modules_.end();) {
        if (it->first.second == context) {
            driver_->check(driver_->ctx_push_current(context), "cuCtxPushCurrent");
            cuda::Result const result = driver_->module_unload(it->second.module);
            cuda::Context popped = nullptr;
            driver_->ctx_pop_current(&popped);
            driver_->check(result, "cuModuleUnload");
            it = modules_.erase(it);
        } else {
            ++it;
        }
    }
}

std::size_t CubinRuntime::loaded_modules() const {
    std::lock_guard const lock(mutex_);
    return modules_.size();
}

CubinRuntime::Loaded const& CubinRuntime::function_for(Kernel const& kernel,
                                                       cuda::Context context) {
    std::lock_guard const lock(mutex_);
    driver_ = &cuda::Driver::get();
    auto const key = std::make_pair(&kernel.record(), context);
    auto found = modules_.find(key);
    if (found == modules_.end()) {
        found = modules_.emplace(key, load(kernel.record(), context)).first;
    }
    return found->second;
}

CubinRuntime::Loaded CubinRuntime::load(KernelRecord const& record, cuda::Context /*context*/) {
    cuda::Device device = 0;
    driver_->check(driver_->ctx_get_device(&device), "cuCtxGetDevice");
    auto const attribute = [&](cuda::DeviceAttribute which) {
        return driver_->attribute(which, device);
    };
    auto const sm =
        static_cast<std::uint32_t>(attribute(cuda::DeviceAttribute::compute_capability_major) * 10 +
                                   attribute(cuda::DeviceAttribute::compute_capability_minor));
    CubinImage const* image = select_image(record, sm);
    std::string const name{record.name};
    if (image == nullptr) {
        throw CubinRuntimeError("kernel '" + name + "' has no cubin for this device (sm" +
                                std::to_string(sm) + "); the bundle holds " + sm_list(record));
    }
    std::string const digest = sha256_hex(std::as_bytes(image->bytes));
    if (digest != image->sha256) {
        throw CubinRuntimeError("the sm" + std::to_string(image->sm) + " cubin of kernel '" + name +
                                "' has SHA-256 " + digest + ", the bundle records " +
                                std::string{image->sha256});
    }
    std::uint32_t const threads = image->block_threads;
    auto const max_threads =
        static_cast<std::uint32_t>(attribute(cuda::DeviceAttribute::max_threads_per_block));
    auto const max_shared =
        static_cast<std::uint32_t>(attribute(cuda::DeviceAttribute::max_shared_per_block_optin));
    if (threads > max_threads) {
        throw CubinRuntimeError("kernel '" + name + "' needs " + std::to_string(threads) +
                                " threads per block; the device allows " +
                                std::to_string(max_threads));
    }
    if (image->shared_bytes > max_shared) {
        throw CubinRuntimeError(
            "kernel '" + name + "' needs " + std::to_string(image->shared_bytes) +
            " bytes of shared memory; the device allows " + std::to_string(max_shared));
    }
    Loaded loaded;
    loaded.shared_bytes = image->shared_bytes;
    loaded.block_threads = threads;
    driver_->check(driver_->module_load_data(&loaded.module, image->bytes.data()),
                   "cuModuleLoadData");
    try {
        std::string const function{image->function};
        driver_->check(
            driver_->module_get_function(&loaded.function, loaded.module, function.c_str()),
            "cuModuleGetFunction");
        int registers = 0;
        driver_->check(driver_->func_get_attribute(
                           &registers, static_cast<int>(cuda::FunctionAttribute::num_registers),
                           loaded.function),
                       "cuFuncGetAttribute");
        auto const max_registers =
            static_cast<std::uint32_t>(attribute(cuda::DeviceAttribute::max_registers_per_block));
        if (static_cast<std::uint32_t>(registers) * threads > max_registers) {
            throw CubinRuntimeError("kernel '" + name + "' needs " + std::to_string(registers) +
                                    " registers x " + std::to_string(threads) +
                                    " threads; the device allows " + std::to_string(max_registers) +
                                    " per block");
        }
        if (image->shared_bytes > default_shared_limit) {
            driver_->check(driver_->func_set_attribute(
                               loaded.function,
                               static_cast<int>(cuda::FunctionAttribute::max_dynamic_shared_bytes),
                               static_cast<int>(image->shared_bytes)),
                           "cuFuncSetAttribute");
        }
    } catch (...) {
        driver_->module_unload(loaded.module);
        throw;
    }
    return loaded;
}

} // namespace tensoracle::cubin
