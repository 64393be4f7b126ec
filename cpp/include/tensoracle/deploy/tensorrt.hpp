// The TensorRT adapter of tensoracle::deploy: header-only, compiled by the application against
// its own TensorRT 11 headers (<NvInferRuntime.h>, which includes CUDA's <cuda_runtime_api.h>).
// tensoracle itself links no TensorRT; an application that includes this header links its
// TensorRT (libnvinfer) and CUDA's runtime (libcudart) as it would without tensoracle. Including
// TensorRT is the adapter's purpose: it and its pieces (deploy/tensorrt/) are the only public
// headers that include a third-party header; every other one includes only the standard library
// (the cmake_package_headers test checks both).
//
// The short path, on the thread and with the CUDA device current that will run the engine:
//
//   namespace trt = tensoracle::deploy::tensorrt;
//   trt::Engine const engine = trt::open_engine("deploy.json", "encoder"); // select, verify, load
//   trt::Execution unit = engine.create_execution();         // IO checked, context created
//   unit.set_input_shapes({{"x", {2, 3, 224, 224}}});        // every ranged input, once
//   unit.bind({{"x", x_device}, {"y", y_device}});           // the caller's device memory
//   unit.enqueue(stream);                                    // the caller synchronizes
//
// The same steps one by one, for an application that wants them: read_manifest, select_recipe
// (or select_for_device) for a described GPU, DeployedEngine::open, Runtime::create, deserialize,
// Execution. Only a DeployedEngine, whose bytes were verified against the manifest when it was
// opened, can reach deserializeCudaEngine. What the library returns keeps alive what it depends
// on: an Engine (or the engine deserialize returns) holds the Runtime and its logger, an
// Execution holds the engine. Every check of an execution unit is ExecutionContract's
// (execution_contract.hpp), made before the TensorRT call it guards; the calls themselves are
// thin: setInputShape, getTensorShape (outputs), setTensorAddress and enqueueV3 on the caller's
// stream. Nothing here allocates device memory, copies or synchronizes: outputs whose sizes depend
// on tensor values get their memory, during enqueueV3, from an allocator the application gives
// (ExecutionOptions::output_memory). A refusal by TensorRT is
// a tensoracle::TensorRtError; the library's own checks throw its other errors. This header
// compiles as C++17.
#pragma once

#include "tensoracle/deploy/tensorrt/deserialize.hpp"
#include "tensoracle/deploy/tensorrt/engine.hpp"
#include "tensoracle/deploy/tensorrt/execution.hpp"
#include "tensoracle/deploy/tensorrt/io.hpp"
#include "tensoracle/deploy/tensorrt/logger.hpp"
#include "tensoracle/deploy/tensorrt/names.hpp"
#include "tensoracle/deploy/tensorrt/plan_stream.hpp"
#include "tensoracle/deploy/tensorrt/plugins.hpp"
#include "tensoracle/deploy/tensorrt/runtime.hpp"
#include "tensoracle/deploy/tensorrt/shapes.hpp"
#include "tensoracle/deploy/tensorrt/version.hpp"

#include <NvInferRuntime.h>

#if !defined(NV_TENSORRT_MAJOR) || NV_TENSORRT_MAJOR < 11
#error "tensoracle/deploy/tensorrt.hpp needs the headers of TensorRT 11 or later"
#endif
