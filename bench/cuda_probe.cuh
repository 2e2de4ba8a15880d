// cuda_probe.cuh - what the standalone CUDA probes of bench/ (lt_survey.cu, lt_search.cu,
// wgmma_lab.cu; built by hand with nvcc, outside libffnn) share: a check that ends the
// probe on any CUDA / cuBLAS error, the timing of a launch, and random operands.
#ifndef FFNN_BENCH_CUDA_PROBE_CUH
#define FFNN_BENCH_CUDA_PROBE_CUH
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>

#define CK(x)                                                                              \
    do {                                                                                   \
        auto e_ = (x);                                                                     \
        if ((int)e_ != 0) {                                                                \
            printf("err %d at %s:%d\n", (int)e_, __FILE__, __LINE__);                      \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

// Microseconds per call of launch(): 20 calls captured in a CUDA graph, the graph run once
// to warm up, then the best of reps runs.
template <typename F>
static float graph_us(cudaStream_t st, int reps, F launch)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int r = 0; r < 20; r++) launch();
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, st));
    float best = 1e9f;
    for (int rep = 0; rep < reps; rep++) {
        CK(cudaEventRecord(e0, st));
        CK(cudaGraphLaunch(ge, st));
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        best = std::min(best, ms * 1000 / 20);
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return best;
}

// f[i] uniform in [-1, 1) from a hash of (i, seed), and h[i] its bf16 rounding.
__global__ void probe_fill(float *f, __nv_bfloat16 *h, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed;
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        const float v = (float)(x & 0xffffff) / 8388608.0f - 1.0f;
        f[i] = v;
        h[i] = __float2bfloat16_rn(v);
    }
}
#endif
