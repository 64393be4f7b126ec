#!/bin/bash
# examples/cpp_inference on the GPU machine, with the TensorRT 11.4 lean runtime as its TensorRT.
# Copy this script into a folder holding, made on any machine without a GPU:
#   cpp_inference            examples/cpp_inference built as its README says, with
#                            -DTENSORRT_INCLUDE_DIR=build/tensorrt-headers/11.1.0.106/include,
#                            -DTENSORRT_LIBRARY=<site-packages>/tensorrt_lean_libs/libnvinfer_lean.so.11
#                            -DCUDART_LIBRARY=<site-packages>/nvidia/cu13/lib/libcudart.so.13
#   libnvinfer_lean.so.11.xz that library, xz-compressed (14 MB instead of 100)
#   libcudart.so.13          CUDA's runtime library, from the same place
#   fixture/                 python dev/device_cpp_inference.py fixture
# and run it there. Made dev/logs/cpp-inference-h200-2026-12-03.log.
cd "$(dirname "$0")"
xz -dkf libnvinfer_lean.so.11.xz 2>/dev/null || python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('libnvinfer_lean.so.11.xz'), open('libnvinfer_lean.so.11','wb'))"
echo "== machine"; nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv; grep PRETTY /etc/os-release; ldd ./cpp_inference | grep -E "nvinfer|crypto|not found"
export LD_LIBRARY_PATH=$PWD XDG_CACHE_HOME=$PWD/fixture/cache
run() { ./cpp_inference "fixture/$1.json" "$2" fixture/inputs out --expected fixture/expected; echo "exit status $?"; }
for m in deploy-tensorrt deploy-rtx; do echo "== cpp_inference fixture/$m.json encoder fixture/inputs out --expected fixture/expected"; run $m encoder; done
echo "== the entry changed after the manifest was written (one plan byte)"
f=$(ls fixture/cache/tensoracle/encoder-b4c0*.engine); printf '\x5a' | dd of="$f" bs=1 seek=$(( $(stat -c %s "$f") - 10 )) conv=notrunc status=none
run deploy-tensorrt encoder
echo "== no such recipe"; run deploy-tensorrt decoder
