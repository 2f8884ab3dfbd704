/* fuserc_runtime.h: the plain C interface of the fuserc runtime (libfuserc.so, or the static
 * fuserc_loader library). It loads packages written by `fuserc compile` and runs them on an
 * NVIDIA GPU through the CUDA driver (libcuda.so.1, loaded when first needed; the CUDA runtime
 * library is not used, so this lives next to any framework in one process), or on the CPU in
 * fuserc's CUDA emulator (load with device FUSERC_DEVICE_EMULATOR; no driver needed).
 *
 *   fuserc_package* pkg;    fuserc_package_load("model.fpkg", NULL, &pkg);
 *   fuserc_plan* plan;      fuserc_bind_shapes(pkg, shapes, ranks, n, &plan);  // once per shape
 *   fuserc_launch(plan, stream, inputs, outputs, NULL, 0);                     // every call
 *
 * Every function that can fail returns a fuserc_status; on failure fuserc_last_error() gives a
 * one-line message for the calling thread. Handles are opaque; strings and arrays a query
 * returns stay valid until the handle they came from is freed. Handles may be used from several
 * threads; launches of one plan are serialised (run a plan on one stream at a time).
 *
 * Tensors: device pointers to the caller's memory. Inputs and outputs are contiguous
 * (row-major) unless the graph declares strides for an input (fuserc_plan_input_strides).
 * A scalar input (is_scalar) is passed as the host address of its value, in its dtype. An
 * output written in place of an input (in_place_of >= 0), or one that is an input of the graph
 * (source_input >= 0), is that input's memory: pass NULL or the same pointer, or another
 * pointer to receive a copy. Intermediates and scratch live in a workspace of
 * fuserc_plan_workspace_bytes() (pass NULL to let the plan allocate one, once, on its first
 * launch that passes none; do that before capturing the stream into a graph yourself).
 * Launching never synchronises the host and never allocates (after that first launch).
 *
 * Constants (inputs the graph gives values for, such as weights and masks) are the package's:
 * they are not among the inputs, are never passed, and are uploaded to the device once, on the
 * first bind (fuserc_package_constant describes them). A scalar input that sets a symbol
 * (fuserc_package_input_symbol >= 0, e.g. a reshape to [K, -1]) is bound by its value:
 * bind with fuserc_bind_inputs (or fuserc_bind), and launch with that same value.
 *
 * A package loaded with options->device = FUSERC_DEVICE_EMULATOR runs each kernel's own CUDA
 * source on the CPU instead (compiled once by the host C++ compiler, cached in
 * $FUSERC_CACHE_DIR): every pointer (inputs, outputs, workspace) is host memory, the stream is
 * NULL, and fuserc_launch returns when the kernels have run. CUDA graphs need a GPU. */
#ifndef FUSERC_RUNTIME_H
#define FUSERC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a declaration here changes incompatibly. */
#define FUSERC_RUNTIME_ABI_VERSION 1

/* fuserc_load_options.device: run the package in the CPU emulator rather than on a GPU. */
#define FUSERC_DEVICE_EMULATOR (-1)

typedef enum fuserc_status {
  FUSERC_OK = 0,
  FUSERC_ERROR_INVALID_ARGUMENT = 1,     /* a null handle or pointer, an index out of range, a
                                            workspace too small, strides the package cannot use */
  FUSERC_ERROR_PACKAGE = 2,              /* unreadable, not a package, corrupted, too new */
  FUSERC_ERROR_SHAPE = 3,                /* shapes or symbol values the package refuses */
  FUSERC_ERROR_NO_DRIVER = 4,            /* no usable CUDA driver (libcuda.so.1) */
  FUSERC_ERROR_NO_DEVICE = 5,            /* no such CUDA device */
  FUSERC_ERROR_NO_COMPATIBLE_KERNEL = 6, /* no cubin or PTX of the package fits the device */
  FUSERC_ERROR_CUDA = 7,                 /* a driver call or a kernel launch failed */
  FUSERC_ERROR_OUT_OF_MEMORY = 8,        /* device (or host) memory exhausted */
  FUSERC_ERROR_INTERNAL = 9,             /* a bug in fuserc */
  FUSERC_ERROR_NO_LIBRARY = 10           /* a CUDA library the plan needs is missing (cuBLASLt
                                            for matrix products; FUSERC_LIBCUBLASLT names it) */
} fuserc_status;

/* Element types, as in the package format. */
typedef enum fuserc_dtype {
  FUSERC_BOOL = 0,
  FUSERC_I32 = 1,
  FUSERC_I64 = 2,
  FUSERC_F16 = 3,
  FUSERC_BF16 = 4,
  FUSERC_F32 = 5,
  FUSERC_F64 = 6
} fuserc_dtype;

typedef struct fuserc_package fuserc_package;
typedef struct fuserc_plan fuserc_plan;
typedef struct fuserc_graph fuserc_graph;

typedef struct fuserc_load_options {
  int32_t device; /* the CUDA device whose primary context is used when none is current (0),
                     or FUSERC_DEVICE_EMULATOR: host memory, kernels run on the CPU */
  void* context;  /* a CUcontext to run in (kept alive by the caller), or NULL */
} fuserc_load_options;

typedef struct fuserc_symbol_info {
  const char* name;
  int64_t min, max; /* every value in [min, max] is supported */
  int64_t hint;     /* the size the kernels were tuned for */
} fuserc_symbol_info;

typedef struct fuserc_tensor_info {
  const char* name;
  int32_t dtype;             /* fuserc_dtype */
  int32_t rank;              /* 0 for a scalar */
  int32_t is_scalar;         /* declared without a shape: passed by value (host address) */
  int32_t in_place_of;       /* outputs: the input it is written into, else -1 */
  int32_t source_input;      /* outputs: the input it is (returned unchanged or updated), else -1 */
  int32_t has_strides;       /* inputs: declared strides (see fuserc_plan_input_strides) */
  const int32_t* dim_symbol; /* per dimension: the symbol it is, or -1 */
  const int64_t* dim_value;  /* per dimension: its fixed value when not a symbol, or -1 */
  const char* const* dim_formula; /* per dimension: as text over the symbols ("N", "4", "N * 4") */
} fuserc_tensor_info;

typedef struct fuserc_constant_info {
  const char* name;
  int32_t dtype;        /* fuserc_dtype */
  int32_t rank;
  const int64_t* shape; /* rank extents */
  uint64_t bytes;
  uint64_t hash;        /* XXH3-64 of the bytes, as the package records it */
} fuserc_constant_info;

/* ---- the library */
const char* fuserc_version(void); /* "0.1.0" */
int32_t fuserc_abi_version(void); /* FUSERC_RUNTIME_ABI_VERSION of the library */
const char* fuserc_status_name(fuserc_status status); /* "FUSERC_ERROR_SHAPE" */
/* The message of the last failed call on this thread ("" if none). */
const char* fuserc_last_error(void);
/* FUSERC_OK when the CUDA driver loads and device `device` exists; else the reason. */
fuserc_status fuserc_driver_check(int32_t device);

/* ---- packages (no GPU work: loading only reads and verifies the package) */
fuserc_status fuserc_package_load(const char* path, const fuserc_load_options* options,
                                  fuserc_package** out);
/* A package in memory; copy = 0 borrows the bytes (keep them alive and unchanged). */
fuserc_status fuserc_package_load_bytes(const void* data, size_t size, int32_t copy,
                                        const fuserc_load_options* options, fuserc_package** out);
void fuserc_package_free(fuserc_package* package); /* plans and graphs stay valid */

const char* fuserc_package_name(const fuserc_package* package);
int32_t fuserc_package_num_symbols(const fuserc_package* package);
int32_t fuserc_package_num_inputs(const fuserc_package* package);
int32_t fuserc_package_num_outputs(const fuserc_package* package);
fuserc_status fuserc_package_symbol(const fuserc_package* package, int32_t index,
                                    fuserc_symbol_info* out);
fuserc_status fuserc_package_input(const fuserc_package* package, int32_t index,
                                   fuserc_tensor_info* out);
fuserc_status fuserc_package_output(const fuserc_package* package, int32_t index,
                                    fuserc_tensor_info* out);
/* The symbol scalar input `index` sets with its value, or -1 (also for tensor inputs). */
int32_t fuserc_package_input_symbol(const fuserc_package* package, int32_t index);
/* The constants the package holds (never passed by the caller). */
int32_t fuserc_package_num_constants(const fuserc_package* package);
fuserc_status fuserc_package_constant(const fuserc_package* package, int32_t index,
                                      fuserc_constant_info* out);
/* 1 when the package runs in the CPU emulator (loaded with FUSERC_DEVICE_EMULATOR), else 0. */
int32_t fuserc_package_is_emulated(const fuserc_package* package);
/* What `fuserc inspect --json` prints for the package (the same keys and values), with
 * `symbol_values` (package order) also the sizes they give, or unbound when it is NULL. Written
 * to `buffer` NUL-terminated when `buffer_size` holds it (else nothing is written); `*length`
 * gets the text's length without the NUL (call with buffer NULL, size 0 to learn it). */
fuserc_status fuserc_package_inspect_json(const fuserc_package* package,
                                          const int64_t* symbol_values, int32_t num_symbols,
                                          char* buffer, size_t buffer_size, size_t* length);

/* ---- binding a shape (cached per shape: binding one seen before is cheap). The first bind
 * chooses the CUDA context and loads the kernels. */
fuserc_status fuserc_bind(fuserc_package* package, const int64_t* symbol_values,
                          int32_t num_symbols, fuserc_plan** out);
/* From the inputs' shapes: shapes[i] has ranks[i] extents (a scalar: rank 0, shape NULL).
 * Refused for a package with a scalar input that sets a symbol: use fuserc_bind_inputs. */
fuserc_status fuserc_bind_shapes(fuserc_package* package, const int64_t* const* shapes,
                                 const int32_t* ranks, int32_t num_inputs, fuserc_plan** out);
/* The same, with scalar_values[i] the host address of scalar input i's value (in its dtype;
 * read for the scalar inputs that set a symbol, NULL allowed for the others). */
fuserc_status fuserc_bind_inputs(fuserc_package* package, const int64_t* const* shapes,
                                 const int32_t* ranks, const void* const* scalar_values,
                                 int32_t num_inputs, fuserc_plan** out);
void fuserc_plan_free(fuserc_plan* plan);

size_t fuserc_plan_workspace_bytes(const fuserc_plan* plan);
int32_t fuserc_plan_num_kernel_launches(const fuserc_plan* plan);
fuserc_status fuserc_plan_symbol_values(const fuserc_plan* plan, int64_t* values);
fuserc_status fuserc_plan_input_shape(const fuserc_plan* plan, int32_t index, int64_t* shape);
/* The strides (in elements) the input's memory must have: declared, or contiguous. */
fuserc_status fuserc_plan_input_strides(const fuserc_plan* plan, int32_t index, int64_t* strides);
fuserc_status fuserc_plan_output_shape(const fuserc_plan* plan, int32_t index, int64_t* shape);

/* ---- launching. `stream` is a CUstream / cudaStream_t (NULL: the legacy default stream; it
 * must be NULL for the emulator, where the call returns once the kernels have run). */
fuserc_status fuserc_launch(fuserc_plan* plan, void* stream, const void* const* inputs,
                            void* const* outputs, void* workspace, size_t workspace_bytes);
/* The same, checking the inputs' strides (input_strides[i]: NULL, or the buffer's strides in
 * elements) against what the package needs; a mismatch is FUSERC_ERROR_INVALID_ARGUMENT. */
fuserc_status fuserc_launch_strided(fuserc_plan* plan, void* stream, const void* const* inputs,
                                    const int64_t* const* input_strides, void* const* outputs,
                                    void* workspace, size_t workspace_bytes);

/* ---- CUDA graphs: one launch of the plan with these pointers, captured on `stream` (not the
 * legacy default stream); replaying costs one cuGraphLaunch for all its kernels. */
fuserc_status fuserc_graph_capture(fuserc_plan* plan, void* stream, const void* const* inputs,
                                   void* const* outputs, void* workspace, size_t workspace_bytes,
                                   fuserc_graph** out);
fuserc_status fuserc_graph_launch(fuserc_graph* graph, void* stream);
void fuserc_graph_free(fuserc_graph* graph);

/* ---- device memory, for programs that have no CUDA library of their own (examples, tests):
 * in the calling thread's current context, else device 0's primary context (retained for the
 * process and made current). The copies are synchronous. */
fuserc_status fuserc_device_malloc(size_t bytes, void** out);
fuserc_status fuserc_device_free(void* pointer);
fuserc_status fuserc_copy_to_device(void* device_dst, const void* host_src, size_t bytes);
fuserc_status fuserc_copy_to_host(void* host_dst, const void* device_src, size_t bytes);
fuserc_status fuserc_stream_synchronize(void* stream);

#ifdef __cplusplus
}
#endif

#endif /* FUSERC_RUNTIME_H */
