// Stand-in for CUDA's cuda_bf16.h when a kernel is compiled for CPU emulation: __nv_bfloat16 and
// its functions come from the emulation prelude (force-included before the kernel text anyway).
#pragma once
#include "../cuda_emulation.h"
