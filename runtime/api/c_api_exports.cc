// libfuserc.so: the C interface of the runtime as a shared library. Its code is c_api.cc in
// fuserc_loader, linked whole; exports.map exports the fuserc_* functions of fuserc_runtime.h
// and nothing else. This file holds a check that the header compiles as C++ on its own.
#include "fuserc_runtime.h"

static_assert(FUSERC_RUNTIME_ABI_VERSION >= 1);
