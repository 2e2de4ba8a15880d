/*
 * bench_util.cu - the CUDA runtime services of the benchmarks (src/bench_util.h):
 * device query, memory, a random fill kernel, streams, events, graph capture and
 * the device-to-device copy ceiling. Every call is checked (FFNN_CUDA_CHECK with no
 * context: the message names file, line and call).
 */
#include <stdlib.h>

#include "bench_util.h"
#include "common.cuh"

extern "C" ffnn_status ffnn_bench_gpu_query(ffnn_bench_gpu_info *info)
{
    if (info == NULL) return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "gpu query: info is NULL");
    memset(info, 0, sizeof *info);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count <= 0) {
        (void)cudaGetLastError();
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "no CUDA device (%s)",
                         err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    }
    cudaDeviceProp prop;
    FFNN_CUDA_CHECK(NULL, cudaGetDeviceProperties(&prop, 0));
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->l2_bytes = (size_t)prop.l2CacheSize;
    FFNN_CUDA_CHECK(NULL, cudaMemGetInfo(&info->free_bytes, &info->total_bytes));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    FFNN_CUDA_CHECK(NULL, cudaMemGetInfo(free_bytes, total_bytes));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_malloc(void **p, size_t bytes)
{
    *p = NULL;
    FFNN_CUDA_CHECK(NULL, cudaMalloc(p, bytes));
    return FFNN_OK;
}

extern "C" void ffnn_bench_free(void *p)
{
    if (p != NULL && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

extern "C" ffnn_status ffnn_bench_memset(void *p, int byte, size_t bytes)
{
    FFNN_CUDA_CHECK(NULL, cudaMemset(p, byte, bytes));
    FFNN_CUDA_CHECK(NULL, cudaDeviceSynchronize());
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_upload(void *dst, const void *src, size_t bytes)
{
    FFNN_CUDA_CHECK(NULL, cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_download(void *dst, const void *src, size_t bytes)
{
    FFNN_CUDA_CHECK(NULL, cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return FFNN_OK;
}

static __global__ void fill_uniform_kernel(float *p, size_t n, uint64_t seed, float lo,
                                           float hi)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = ffnn_bench_uniform_at(seed, i, lo, hi);
}

extern "C" ffnn_status ffnn_bench_fill_uniform(float *p, size_t n, uint64_t seed, float lo,
                                               float hi)
{
    if (n == 0) return FFNN_OK;
    size_t blocks = (n + FFNN_CUDA_BLOCK - 1) / FFNN_CUDA_BLOCK;
    if (blocks > ((size_t)1 << 16)) blocks = (size_t)1 << 16; /* grid-stride for the rest */
    fill_uniform_kernel<<<(unsigned)blocks, FFNN_CUDA_BLOCK>>>(p, n, seed, lo, hi);
    FFNN_CUDA_LAUNCH_CHECK(NULL, "fill_uniform_kernel");
    FFNN_CUDA_CHECK(NULL, cudaDeviceSynchronize());
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_stream_create(void **stream)
{
    cudaStream_t s = NULL;
    FFNN_CUDA_CHECK(NULL, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = (void *)s;
    return FFNN_OK;
}

extern "C" void ffnn_bench_stream_destroy(void *stream)
{
    if (stream != NULL && cudaStreamDestroy((cudaStream_t)stream) != cudaSuccess)
        (void)cudaGetLastError();
}

extern "C" ffnn_status ffnn_bench_stream_sync(void *stream)
{
    FFNN_CUDA_CHECK(NULL, cudaStreamSynchronize((cudaStream_t)stream));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_event_create(void **event)
{
    cudaEvent_t e = NULL;
    FFNN_CUDA_CHECK(NULL, cudaEventCreate(&e));
    *event = (void *)e;
    return FFNN_OK;
}

extern "C" void ffnn_bench_event_destroy(void *event)
{
    if (event != NULL && cudaEventDestroy((cudaEvent_t)event) != cudaSuccess)
        (void)cudaGetLastError();
}

extern "C" ffnn_status ffnn_bench_event_record(void *event, void *stream)
{
    FFNN_CUDA_CHECK(NULL, cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_event_elapsed_ms(void *start, void *stop, float *ms)
{
    FFNN_CUDA_CHECK(NULL, cudaEventSynchronize((cudaEvent_t)stop));
    FFNN_CUDA_CHECK(NULL, cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)stop));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_capture_begin(void *stream)
{
    FFNN_CUDA_CHECK(NULL, cudaStreamBeginCapture((cudaStream_t)stream,
                                                 cudaStreamCaptureModeThreadLocal));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_capture_end(void *stream, void **graph_exec)
{
    *graph_exec = NULL;
    cudaGraph_t graph = NULL;
    FFNN_CUDA_CHECK(NULL, cudaStreamEndCapture((cudaStream_t)stream, &graph));
    cudaGraphExec_t exec = NULL;
    cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    if (err != cudaSuccess)
        return ffnn_cuda_fail_call(NULL, err, __FILE__, __LINE__, "cudaGraphInstantiate");
    *graph_exec = (void *)exec;
    return FFNN_OK;
}

extern "C" void ffnn_bench_capture_abort(void *stream)
{
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing((cudaStream_t)stream, &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
        cudaGraph_t graph = NULL;
        if (cudaStreamEndCapture((cudaStream_t)stream, &graph) == cudaSuccess && graph)
            cudaGraphDestroy(graph);
    }
    (void)cudaGetLastError();
}

extern "C" ffnn_status ffnn_bench_graph_launch(void *graph_exec, void *stream)
{
    FFNN_CUDA_CHECK(NULL, cudaGraphLaunch((cudaGraphExec_t)graph_exec, (cudaStream_t)stream));
    return FFNN_OK;
}

extern "C" void ffnn_bench_graph_destroy(void *graph_exec)
{
    if (graph_exec != NULL && cudaGraphExecDestroy((cudaGraphExec_t)graph_exec) != cudaSuccess)
        (void)cudaGetLastError();
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Body of ffnn_bench_copy_ceiling once the buffers, stream and events exist. */
static ffnn_status copy_ceiling_run(void *dst, void *src, size_t bytes, cudaStream_t s,
                                    cudaEvent_t e0, cudaEvent_t e1, int warmup, int repeats,
                                    double *times)
{
    for (int i = 0; i < warmup; i++)
        FFNN_CUDA_CHECK(NULL, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
    FFNN_CUDA_CHECK(NULL, cudaStreamSynchronize(s));
    for (int i = 0; i < repeats; i++) {
        float ms = 0.0f;
        FFNN_CUDA_CHECK(NULL, cudaEventRecord(e0, s));
        FFNN_CUDA_CHECK(NULL, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
        FFNN_CUDA_CHECK(NULL, cudaEventRecord(e1, s));
        FFNN_CUDA_CHECK(NULL, cudaEventSynchronize(e1));
        FFNN_CUDA_CHECK(NULL, cudaEventElapsedTime(&ms, e0, e1));
        times[i] = 1e-3 * (double)ms;
    }
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_bench_copy_ceiling(size_t bytes, int warmup, int repeats,
                                               double *median_s, double *bytes_per_s)
{
    if (bytes < 4 || repeats < 1 || warmup < 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "copy ceiling: bytes %zu, repeats %d",
                         bytes, repeats);
    bytes &= ~(size_t)3;
    double *times = (double *)malloc((size_t)repeats * sizeof *times);
    if (times == NULL) return ffnn_fail(FFNN_ERR_NO_MEMORY, "copy ceiling: no host memory");
    void *src = NULL, *dst = NULL;
    void *stream = NULL, *e0 = NULL, *e1 = NULL;
    ffnn_status st = ffnn_bench_malloc(&src, bytes);
    if (st == FFNN_OK) st = ffnn_bench_malloc(&dst, bytes);
    if (st == FFNN_OK) st = ffnn_bench_fill_uniform((float *)src, bytes / 4, 12345, 0.0f, 1.0f);
    if (st == FFNN_OK) st = ffnn_bench_fill_uniform((float *)dst, bytes / 4, 54321, 0.0f, 1.0f);
    if (st == FFNN_OK) st = ffnn_bench_stream_create(&stream);
    if (st == FFNN_OK) st = ffnn_bench_event_create(&e0);
    if (st == FFNN_OK) st = ffnn_bench_event_create(&e1);
    if (st == FFNN_OK)
        st = copy_ceiling_run(dst, src, bytes, (cudaStream_t)stream, (cudaEvent_t)e0,
                              (cudaEvent_t)e1, warmup, repeats, times);
    if (st == FFNN_OK) {
        qsort(times, (size_t)repeats, sizeof *times, cmp_double);
        double med = repeats % 2 ? times[repeats / 2]
                                 : 0.5 * (times[repeats / 2 - 1] + times[repeats / 2]);
        *median_s = med;
        *bytes_per_s = med > 0.0 ? 2.0 * (double)bytes / med : 0.0;
    }
    ffnn_bench_event_destroy(e1);
    ffnn_bench_event_destroy(e0);
    ffnn_bench_stream_destroy(stream);
    ffnn_bench_free(dst);
    ffnn_bench_free(src);
    free(times);
    return st;
}

extern "C" void *ffnn_bench_backend_stream(void *cuda_ctx)
{
    return cuda_ctx == NULL ? NULL : (void *)((ffnn_cuda_ctx *)cuda_ctx)->stream;
}
