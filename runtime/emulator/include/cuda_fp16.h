// Stand-in for CUDA's cuda_fp16.h when a kernel is compiled for CPU emulation: __half and its
// functions come from the emulation prelude (force-included before the kernel text anyway).
#pragma once
#include "../cuda_emulation.h"
