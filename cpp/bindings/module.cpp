// The extension module tensoracle._core: private; tensoracle/__init__.py re-exports what is public.
#include "bindings.hpp"

NB_MODULE(_core, module) {
    using namespace tensoracle::bindings;
    bind_errors(module);
    bind_store(module);
    bind_gpu(module);
    bind_compare(module);
    bind_bundle(module);
    bind_library_exports(module);
    bind_condition_difference(module);
    bind_remote(module);
    bind_remote_receiver(module);
    bind_deploy(module);
    bind_manifest_entry_check(module);
    bind_io_difference(module);
}
