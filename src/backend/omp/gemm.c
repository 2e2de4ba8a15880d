/* gemm.c - the omp backend's matmul kernels (gemm_template.h), compiled once per
 * instruction set, and the choice among them at run time. Built with -O3
 * -ffp-contract=fast (Makefile): a*b+c in the kernels becomes one fma where the
 * instruction set has it (avx2, avx512; the generic x86-64 set has none). The
 * binary runs on any x86-64: the avx2/avx512 kernels are only called when
 * __builtin_cpu_supports says so. Other architectures get the generic kernels
 * (4-float vectors: NEON, SSE). */
#include <string.h>

#include "omp_kernels.h"

typedef int v4i __attribute__((vector_size(4 * sizeof(int)))); /* shuffle masks */

#define OMP_STR2(x) #x
#define OMP_STR(x) OMP_STR2(x)

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FFNN_OMP_X86 1
#else
#define FFNN_OMP_X86 0
#endif

#if FFNN_OMP_X86
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#define ISA avx512
#define VEC 16
#define MR 8
#define NV 2
#include "gemm_template.h"
#undef ISA
#undef VEC
#undef MR
#undef NV
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define ISA avx2
#define VEC 8
#define MR 6
#define NV 2
#include "gemm_template.h"
#undef ISA
#undef VEC
#undef MR
#undef NV
#pragma GCC pop_options
#endif

#define ISA generic
#define VEC 4
#define MR 6
#define NV 2
#include "gemm_template.h"
#undef ISA
#undef VEC
#undef MR
#undef NV

static int supported(const ffnn_omp_gemm_isa *isa)
{
#if FFNN_OMP_X86
    __builtin_cpu_init();
    if (isa == &gemm_isa_avx512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
               __builtin_cpu_supports("fma");
    if (isa == &gemm_isa_avx2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    return isa == &gemm_isa_generic;
}

static const ffnn_omp_gemm_isa *const all_isas[] = {
#if FFNN_OMP_X86
    &gemm_isa_avx512, &gemm_isa_avx2,
#endif
    &gemm_isa_generic,
};

const ffnn_omp_gemm_isa *ffnn_omp_gemm_best(void)
{
    for (size_t i = 0; i < sizeof all_isas / sizeof all_isas[0]; i++)
        if (supported(all_isas[i]))
            return all_isas[i];
    return &gemm_isa_generic;
}

const ffnn_omp_gemm_isa *ffnn_omp_gemm_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof all_isas / sizeof all_isas[0]; i++)
        if (strcmp(all_isas[i]->name, name) == 0)
            return supported(all_isas[i]) ? all_isas[i] : NULL;
    return NULL;
}
