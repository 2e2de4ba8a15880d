/* gemm.c - the omp backend's matmul kernels (gemm_template.h), compiled once per
 * instruction set, and the choice among them at run time. Built with -O3
 * -ffp-contract=fast (Makefile): a*b+c in the kernels becomes one fma where the
 * instruction set has it (avx2, avx512; the baseline x86-64 set has none). The
 * binary runs on any x86-64: the avx2/avx512 kernels are only called when
 * __builtin_cpu_supports says so. Other architectures get the baseline kernels
 * (4-float vectors: NEON, SSE).
 *
 * The environment variable FFNN_OMP_ISA=avx512|avx2|baseline forces one set (for
 * comparing them, and for reproducing another machine's bits: each set gives its
 * own last bits); a set this CPU lacks is refused, never run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

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
#define MR 12
#define NV 2
#include "gemm_template.h" /* undefines ISA, VEC, MR, NV */
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define ISA avx2
#define VEC 8
#define MR 6
#define NV 2
#include "gemm_template.h" /* undefines ISA, VEC, MR, NV */
#pragma GCC pop_options
#endif

#define ISA baseline
#define VEC 4
#define MR 6
#define NV 2
#include "gemm_template.h" /* undefines ISA, VEC, MR, NV */

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
    return isa == &gemm_isa_baseline;
}

static const ffnn_omp_gemm_isa *const all_isas[] = {
#if FFNN_OMP_X86
    &gemm_isa_avx512, &gemm_isa_avx2,
#endif
    &gemm_isa_baseline,
};

const ffnn_omp_gemm_isa *ffnn_omp_gemm_best(void)
{
    for (size_t i = 0; i < sizeof all_isas / sizeof all_isas[0]; i++)
        if (supported(all_isas[i]))
            return all_isas[i];
    return &gemm_isa_baseline;
}

const ffnn_omp_gemm_isa *ffnn_omp_gemm_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof all_isas / sizeof all_isas[0]; i++)
        if (strcmp(all_isas[i]->name, name) == 0)
            return supported(all_isas[i]) ? all_isas[i] : NULL;
    return NULL;
}

/* "avx512, avx2, baseline" into buf: every set of this build (runnable_only: those
 * this CPU runs). */
static const char *isa_list(char *buf, size_t size, int runnable_only)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof all_isas / sizeof all_isas[0]; i++) {
        if (runnable_only && !supported(all_isas[i]))
            continue;
        int w = snprintf(buf + n, size - n, "%s%s", n ? ", " : "", all_isas[i]->name);
        if (w < 0 || (size_t)w >= size - n)
            break;
        n += (size_t)w;
    }
    return buf;
}

ffnn_status ffnn_omp_gemm_select(const ffnn_omp_gemm_isa **out)
{
    const char *forced = getenv("FFNN_OMP_ISA");
    if (!forced || !*forced) {
        *out = ffnn_omp_gemm_best();
        return FFNN_OK;
    }
    char sets[64];
    for (size_t i = 0; i < sizeof all_isas / sizeof all_isas[0]; i++) {
        if (strcmp(all_isas[i]->name, forced) != 0)
            continue;
        if (!supported(all_isas[i]))
            return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                             "FFNN_OMP_ISA=%s: this CPU cannot run the %s kernels (it runs: "
                             "%s); unset FFNN_OMP_ISA to use the best it runs",
                             forced, forced, isa_list(sets, sizeof sets, 1));
        *out = all_isas[i];
        return FFNN_OK;
    }
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                     "FFNN_OMP_ISA=%.40s: not a kernel set of this build (its sets: %s)",
                     forced, isa_list(sets, sizeof sets, 0));
}
