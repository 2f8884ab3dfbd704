/* An embedding example in plain C: load a package written by `fuserc compile`, bind its
 * symbols (their hints, or NAME=VALUE arguments), fill the inputs with a fixed pattern on the
 * host, copy them to the GPU, launch the plan, copy the outputs back and print a summary of
 * each. Links libfuserc.so only (the CUDA driver is loaded by it when needed).
 *
 *   run_package PACKAGE.fpkg [N=4096 ...]
 *
 * Without a GPU it stops at the bind with the runtime's message (no CUDA driver). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuserc_runtime.h"

static int fail(const char* what) {
  fprintf(stderr, "run_package: %s: %s\n", what, fuserc_last_error());
  return 1;
}
/* In main: says which step failed, then releases what was made so far. */
#define FAIL(what)   \
  do {               \
    rc = fail(what); \
    goto done;       \
  } while (0)

static size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case FUSERC_BOOL: return 1;
    case FUSERC_F16:
    case FUSERC_BF16: return 2;
    case FUSERC_I32:
    case FUSERC_F32: return 4;
    default: return 8;
  }
}

static const char* dtype_name(int32_t dtype) {
  static const char* names[] = {"bool", "i32", "i64", "f16", "bf16", "f32", "f64"};
  return dtype >= 0 && dtype <= 6 ? names[dtype] : "?";
}

/* float -> IEEE half / bfloat16, round to nearest even (finite, normal-range values). */
static unsigned short to_bf16(float f) {
  unsigned int u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (unsigned short)(u >> 16);
}
static unsigned short to_f16(float f) {
  unsigned int u, sign, mant;
  int exp;
  memcpy(&u, &f, 4);
  sign = (u >> 16) & 0x8000;
  exp = (int)((u >> 23) & 0xff) - 127 + 15;
  mant = u & 0x7fffff;
  if (exp <= 0) return (unsigned short)sign; /* tiny: zero is close enough for a pattern */
  mant += 0xfff + ((mant >> 13) & 1);
  if (mant & 0x800000) mant = 0, exp += 1;
  return (unsigned short)(sign | (unsigned)exp << 10 | mant >> 13);
}
static float from_bf16(unsigned short h) {
  unsigned int u = (unsigned int)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static float from_f16(unsigned short h) {
  int exp = (h >> 10) & 0x1f;
  float m = (float)(h & 0x3ff);
  float v = exp == 0 ? ldexpf(m, -24) : exp == 31 ? INFINITY : ldexpf(m + 1024.0f, exp - 25);
  return (h & 0x8000) ? -v : v;
}

/* Element i of a fixed pattern in [-1, 1) (integers: small values, bools: alternating); a
 * scalar gets 0.001 or 1, positive like the epsilons and factors scalars tend to be. */
static void fill(void* data, int32_t dtype, size_t n, int scalar) {
  for (size_t i = 0; i < n; ++i) {
    float v = scalar ? 0.001f : (float)((long)((i * 2654435761u) % 2000) - 1000) / 1000.0f;
    switch (dtype) {
      case FUSERC_BOOL: ((unsigned char*)data)[i] = (unsigned char)(scalar || i % 2); break;
      case FUSERC_I32: ((int*)data)[i] = scalar ? 1 : (int)(i % 7) - 3; break;
      case FUSERC_I64: ((long long*)data)[i] = scalar ? 1 : (long long)(i % 7) - 3; break;
      case FUSERC_F16: ((unsigned short*)data)[i] = to_f16(v); break;
      case FUSERC_BF16: ((unsigned short*)data)[i] = to_bf16(v); break;
      case FUSERC_F32: ((float*)data)[i] = v; break;
      default: ((double*)data)[i] = v; break;
    }
  }
}

static double element(const void* data, int32_t dtype, size_t i) {
  switch (dtype) {
    case FUSERC_BOOL: return ((const unsigned char*)data)[i];
    case FUSERC_I32: return ((const int*)data)[i];
    case FUSERC_I64: return (double)((const long long*)data)[i];
    case FUSERC_F16: return from_f16(((const unsigned short*)data)[i]);
    case FUSERC_BF16: return from_bf16(((const unsigned short*)data)[i]);
    case FUSERC_F32: return ((const float*)data)[i];
    default: return ((const double*)data)[i];
  }
}

/* Elements of a tensor of `rank` extents, and of memory laid out with `strides`. */
static size_t count(const int64_t* shape, int32_t rank) {
  size_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= (size_t)shape[d];
  return n;
}
static size_t span(const int64_t* shape, const int64_t* strides, int32_t rank) {
  size_t n = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (shape[d] == 0) return 0;
    n += (size_t)(shape[d] - 1) * (size_t)strides[d];
  }
  return n;
}

int main(int argc, char** argv) {
  fuserc_package* pkg = NULL;
  fuserc_plan* plan = NULL;
  int32_t ni = 0, no = 0, ns, i, j;
  int64_t symbols[64];
  void* in_dev[64] = {0};
  void* in_host[64] = {0};
  void* out_dev[64] = {0};
  const void* inputs[64];
  void* host = NULL;
  int rc = 1; /* a failure below releases what was made so far (FAIL: goto done) */
  if (argc < 2) {
    fprintf(stderr, "usage: run_package PACKAGE.fpkg [SYMBOL=VALUE ...]\n");
    return 2;
  }
  printf("fuserc runtime %s (ABI %d)\n", fuserc_version(), fuserc_abi_version());
  if (fuserc_package_load(argv[1], NULL, &pkg) != FUSERC_OK) return fail("loading");
  ni = fuserc_package_num_inputs(pkg);
  no = fuserc_package_num_outputs(pkg);
  ns = fuserc_package_num_symbols(pkg);
  if (ni > 64 || no > 64 || ns > 64) {
    fprintf(stderr, "run_package: more than 64 inputs, outputs or symbols\n");
    ni = no = 0;
    goto done;
  }

  /* Symbols: their hints, clamped to their ranges, unless given on the command line. */
  for (i = 0; i < ns; ++i) {
    fuserc_symbol_info s;
    fuserc_package_symbol(pkg, i, &s);
    symbols[i] = s.hint < s.min ? s.min : s.hint > s.max ? s.max : s.hint;
    for (j = 2; j < argc; ++j) {
      size_t len = strlen(s.name);
      if (strncmp(argv[j], s.name, len) == 0 && argv[j][len] == '=')
        symbols[i] = strtoll(argv[j] + len + 1, NULL, 10);
    }
    printf("symbol %s = %lld\n", s.name, (long long)symbols[i]);
  }
  if (fuserc_bind(pkg, symbols, ns, &plan) != FUSERC_OK) FAIL("binding");
  printf("package %s: %d kernel launches, workspace %zu B\n", fuserc_package_name(pkg),
         fuserc_plan_num_kernel_launches(plan), fuserc_plan_workspace_bytes(plan));

  /* Inputs: a pattern, laid out in the strides the package wants. */
  for (i = 0; i < ni; ++i) {
    fuserc_tensor_info t;
    int64_t shape[16], strides[16];
    size_t n, bytes;
    fuserc_package_input(pkg, i, &t);
    if (t.rank > 16) {
      fprintf(stderr, "run_package: rank above 16\n");
      goto done;
    }
    fuserc_plan_input_shape(plan, i, shape);
    fuserc_plan_input_strides(plan, i, strides);
    n = t.is_scalar ? 1 : span(shape, strides, t.rank);
    bytes = n * dtype_size(t.dtype);
    in_host[i] = calloc(n ? n : 1, dtype_size(t.dtype));
    fill(in_host[i], t.dtype, n, t.is_scalar);
    printf("input  %-10s %-4s rank %d, %zu elements\n", t.name, dtype_name(t.dtype), t.rank,
           t.is_scalar ? (size_t)1 : count(shape, t.rank));
    if (t.is_scalar) continue; /* passed by its host address */
    if (fuserc_device_malloc(bytes, &in_dev[i]) != FUSERC_OK) FAIL("allocating");
    if (fuserc_copy_to_device(in_dev[i], in_host[i], bytes) != FUSERC_OK) FAIL("copying");
  }
  for (i = 0; i < ni; ++i) {
    fuserc_tensor_info t;
    fuserc_package_input(pkg, i, &t);
    inputs[i] = t.is_scalar ? in_host[i] : in_dev[i];
  }

  /* Outputs: device buffers (none for those that are an input's memory). */
  for (j = 0; j < no; ++j) {
    fuserc_tensor_info t;
    int64_t shape[16];
    fuserc_package_output(pkg, j, &t);
    fuserc_plan_output_shape(plan, j, shape);
    if (t.in_place_of >= 0 || t.source_input >= 0) continue;
    if (fuserc_device_malloc(count(shape, t.rank) * dtype_size(t.dtype), &out_dev[j]) !=
        FUSERC_OK)
      FAIL("allocating");
  }

  if (fuserc_launch(plan, NULL, inputs, out_dev, NULL, 0) != FUSERC_OK) FAIL("launching");
  if (fuserc_stream_synchronize(NULL) != FUSERC_OK) FAIL("running");

  for (j = 0; j < no; ++j) {
    fuserc_tensor_info t;
    int64_t shape[16];
    size_t n, k;
    double sum = 0;
    const void* src;
    fuserc_package_output(pkg, j, &t);
    fuserc_plan_output_shape(plan, j, shape);
    n = count(shape, t.rank);
    src = t.in_place_of >= 0 ? in_dev[t.in_place_of]
          : t.source_input >= 0 ? in_dev[t.source_input]
                                : out_dev[j];
    host = calloc(n ? n : 1, dtype_size(t.dtype));
    if (fuserc_copy_to_host(host, src, n * dtype_size(t.dtype)) != FUSERC_OK)
      FAIL("copying back");
    for (k = 0; k < n; ++k) sum += element(host, t.dtype, k);
    printf("output %-10s %-4s %zu elements, sum %.6g, first %.6g\n", t.name, dtype_name(t.dtype),
           n, sum, n ? element(host, t.dtype, 0) : 0.0);
    free(host);
    host = NULL;
  }
  rc = 0;

done: /* free, fuserc_device_free, fuserc_plan_free and fuserc_package_free accept NULL */
  free(host);
  for (i = 0; i < ni; ++i) {
    fuserc_device_free(in_dev[i]);
    free(in_host[i]);
  }
  for (j = 0; j < no; ++j) fuserc_device_free(out_dev[j]);
  fuserc_plan_free(plan);
  fuserc_package_free(pkg);
  return rc;
}
