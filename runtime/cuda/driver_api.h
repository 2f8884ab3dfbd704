// Owns the runtime's view of the CUDA driver API: the few types and constants it uses
// (declared here, with the values of cuda.h, so that the runtime builds without the CUDA
// Toolkit's headers) and the table of driver functions, loaded from libcuda.so.1 with dlopen
// the first time a GPU is needed. Only the driver API is used (no CUDA runtime library), so
// the runtime sits next to any framework's CUDA runtime in one process.
//
// The table is a struct of function pointers: tests install a fake one
// (install_driver_for_testing) to exercise every GPU path without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fuserc::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUlinkState = struct CUlinkState_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;

// CUdevice_attribute
inline constexpr int kAttrMaxThreadsPerBlock = 1;
inline constexpr int kAttrMaxGridDimX = 5;
inline constexpr int kAttrMaxGridDimY = 6;
inline constexpr int kAttrMaxGridDimZ = 7;
inline constexpr int kAttrMaxSharedPerBlock = 8;
inline constexpr int kAttrMultiprocessorCount = 16;
inline constexpr int kAttrMemoryClockKHz = 36;
inline constexpr int kAttrMemoryBusWidthBits = 37;
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;
inline constexpr int kAttrMaxSharedPerBlockOptin = 97;
// CUfunction_attribute
inline constexpr int kFuncAttrMaxDynamicSharedBytes = 8;
// CUjit_option
inline constexpr int kJitErrorLogBuffer = 5;
inline constexpr int kJitErrorLogBufferBytes = 6;
// CUjitInputType
inline constexpr int kJitInputPtx = 1;
// CUstreamCaptureMode, stream and event flags
inline constexpr int kCaptureModeThreadLocal = 1;
inline constexpr unsigned kStreamNonBlocking = 1;
inline constexpr unsigned kEventDefault = 0;

// The driver functions the runtime calls (the _v2 entry points where the driver has them).
struct DriverApi {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);
  CUresult (*cuGetErrorName)(CUresult error, const char** text);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxGetCurrent)(CUcontext* context);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxPushCurrent)(CUcontext context);
  CUresult (*cuCtxPopCurrent)(CUcontext* context);
  CUresult (*cuCtxGetDevice)(CUdevice* device);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned num_options,
                                 int* options, void** values);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuLinkCreate)(unsigned num_options, int* options, void** values, CUlinkState* state);
  CUresult (*cuLinkAddData)(CUlinkState state, int type, void* data, size_t bytes, const char* name,
                            unsigned num_options, int* options, void** values);
  CUresult (*cuLinkComplete)(CUlinkState state, void** cubin, size_t* bytes);
  CUresult (*cuLinkDestroy)(CUlinkState state);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*cuLaunchKernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** params, void** extra);
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr ptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, size_t bytes, CUstream s);
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, size_t bytes, CUstream s);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream s);
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end);
  CUresult (*cuStreamBeginCapture)(CUstream stream, int mode);
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph* graph);
  CUresult (*cuGraphInstantiate)(CUgraphExec* exec, CUgraph graph, unsigned long long flags);
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec);
  CUresult (*cuGraphDestroy)(CUgraph graph);
};

// The driver table, loaded (and cuInit called) on first use. Throws CudaError (kind NoDriver)
// naming what is missing when libcuda.so.1 cannot be loaded or initialised; every GPU path goes
// through here, so that is the one message a machine without a driver gives.
const DriverApi& driver();

// True when the driver loads and initialises (never throws). `why` gets the message if not.
bool driver_available(std::string* why = nullptr);

// Replaces the driver table until called again with nullptr (then the real driver is loaded on
// next use). For tests only; the table must outlive its use.
void install_driver_for_testing(const DriverApi* table);

// Counts install_driver_for_testing calls, so that what was read from one table (device
// properties) is not taken for another's.
uint64_t driver_generation();

// The library dlopen loads: FUSERC_LIBCUDA if set (tests point it at a missing file), else
// libcuda.so.1.
std::string driver_library_name();

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", from the driver when it can say.
std::string error_text(CUresult r);

}  // namespace fuserc::cuda
