/*
 * harness.cu - the device side of the lab's harness (harness.h): device query,
 * memory, a random fill kernel, streams, events, graph capture, the spin kernel, the
 * timing loop and the device-to-device copy ceiling. Every CUDA call is checked
 * (FFNN_CUDA_CHECK with no context: the message names file, line and call).
 */
#include <math.h>
#include <stdlib.h>

#include "backend/cuda/common.cuh"
#include "harness.h"

extern "C" ffnn_status ffnn_lab_gpu_query(ffnn_lab_gpu_info *info)
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

extern "C" ffnn_status ffnn_lab_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    FFNN_CUDA_CHECK(NULL, cudaMemGetInfo(free_bytes, total_bytes));
    return FFNN_OK;
}

/* ------------------------------------------------------------------ memory */

extern "C" ffnn_status ffnn_lab_malloc(void **p, size_t bytes)
{
    *p = NULL;
    FFNN_CUDA_CHECK(NULL, cudaMalloc(p, bytes));
    return FFNN_OK;
}

extern "C" void ffnn_lab_free(void *p)
{
    if (p != NULL && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

extern "C" ffnn_status ffnn_lab_memset(void *p, int byte, size_t bytes)
{
    FFNN_CUDA_CHECK(NULL, cudaMemset(p, byte, bytes));
    FFNN_CUDA_CHECK(NULL, cudaDeviceSynchronize());
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_lab_upload(void *dst, const void *src, size_t bytes)
{
    FFNN_CUDA_CHECK(NULL, cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_lab_download(void *dst, const void *src, size_t bytes)
{
    FFNN_CUDA_CHECK(NULL, cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return FFNN_OK;
}

static __global__ void fill_uniform_kernel(float *p, size_t n, uint64_t seed, float lo,
                                           float hi)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = ffnn_lab_uniform_at(seed, i, lo, hi);
}

extern "C" ffnn_status ffnn_lab_fill_uniform(float *p, size_t n, uint64_t seed, float lo,
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

/* ------------------------------------------------------------------ streams, events */

extern "C" ffnn_status ffnn_lab_stream_create(void **stream)
{
    cudaStream_t s = NULL;
    FFNN_CUDA_CHECK(NULL, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = (void *)s;
    return FFNN_OK;
}

extern "C" void ffnn_lab_stream_destroy(void *stream)
{
    if (stream != NULL && cudaStreamDestroy((cudaStream_t)stream) != cudaSuccess)
        (void)cudaGetLastError();
}

extern "C" ffnn_status ffnn_lab_stream_sync(void *stream)
{
    FFNN_CUDA_CHECK(NULL, cudaStreamSynchronize((cudaStream_t)stream));
    return FFNN_OK;
}

extern "C" void *ffnn_lab_backend_stream(void *cuda_ctx)
{
    return cuda_ctx == NULL ? NULL : (void *)((ffnn_cuda_ctx *)cuda_ctx)->stream;
}

extern "C" ffnn_status ffnn_lab_event_create(void **event)
{
    cudaEvent_t e = NULL;
    FFNN_CUDA_CHECK(NULL, cudaEventCreate(&e));
    *event = (void *)e;
    return FFNN_OK;
}

extern "C" void ffnn_lab_event_destroy(void *event)
{
    if (event != NULL && cudaEventDestroy((cudaEvent_t)event) != cudaSuccess)
        (void)cudaGetLastError();
}

/* ------------------------------------------------------------------ graphs */

extern "C" ffnn_status ffnn_lab_capture_begin(void *stream)
{
    FFNN_CUDA_CHECK(NULL, cudaStreamBeginCapture((cudaStream_t)stream,
                                                 cudaStreamCaptureModeThreadLocal));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_lab_capture_end(void *stream, void **graph_exec)
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

extern "C" void ffnn_lab_capture_abort(void *stream)
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

extern "C" ffnn_status ffnn_lab_graph_launch(void *graph_exec, void *stream)
{
    FFNN_CUDA_CHECK(NULL, cudaGraphLaunch((cudaGraphExec_t)graph_exec, (cudaStream_t)stream));
    return FFNN_OK;
}

extern "C" void ffnn_lab_graph_destroy(void *graph_exec)
{
    if (graph_exec != NULL && cudaGraphExecDestroy((cudaGraphExec_t)graph_exec) != cudaSuccess)
        (void)cudaGetLastError();
}

/* ------------------------------------------------------------------ timing */

static __global__ void spin_kernel(long long cycles)
{
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

extern "C" ffnn_status ffnn_lab_gpu_spin(void *stream, double microseconds)
{
    int khz = 0;
    FFNN_CUDA_CHECK(NULL, cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    long long cycles = (long long)(microseconds * 1e-3 * (double)khz);
    spin_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(cycles);
    FFNN_CUDA_CHECK(NULL, cudaGetLastError());
    return FFNN_OK;
}

/* Microseconds of `calls` calls between two events (after a spin when spin_us > 0). */
static ffnn_status time_sample(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                               ffnn_lab_launch_fn launch, void *arg, int calls,
                               double spin_us, double *us)
{
    if (spin_us > 0.0) {
        ffnn_status st = ffnn_lab_gpu_spin(s, spin_us);
        if (st != FFNN_OK) return st;
    }
    FFNN_CUDA_CHECK(NULL, cudaEventRecord(e0, s));
    for (int i = 0; i < calls; i++) {
        ffnn_status st = launch(arg);
        if (st != FFNN_OK) return st;
    }
    FFNN_CUDA_CHECK(NULL, cudaEventRecord(e1, s));
    FFNN_CUDA_CHECK(NULL, cudaEventSynchronize(e1));
    float ms = 0.0f;
    FFNN_CUDA_CHECK(NULL, cudaEventElapsedTime(&ms, e0, e1));
    *us = 1e3 * (double)ms;
    return FFNN_OK;
}

/* ffnn_lab_time once the events and the samples' array exist. */
static ffnn_status time_loop(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                             ffnn_lab_launch_fn launch, void *arg, const ffnn_lab_timing *t,
                             double *samples, int *inner)
{
    for (int i = 0; i < t->warmup; i++) {
        ffnn_status st = launch(arg);
        if (st != FFNN_OK) return st;
    }
    FFNN_CUDA_CHECK(NULL, cudaStreamSynchronize(s));
    *inner = t->inner;
    if (*inner < 1) { /* one call alone sizes the samples */
        double us = 0.0;
        ffnn_status st = time_sample(s, e0, e1, launch, arg, 1, 0.0, &us);
        if (st != FFNN_OK) return st;
        *inner = (int)ceil(t->target_us / fmax(us, 1.0));
        if (*inner < 1) *inner = 1;
        if (*inner > t->max_inner) *inner = t->max_inner > 0 ? t->max_inner : 1;
    }
    for (int r = 0; r < t->repeats; r++) {
        ffnn_status st = time_sample(s, e0, e1, launch, arg, *inner, t->spin_us, &samples[r]);
        if (st != FFNN_OK) return st;
        samples[r] /= *inner;
    }
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_lab_time(void *stream, ffnn_lab_launch_fn launch, void *arg,
                                     const ffnn_lab_timing *t, ffnn_lab_times *out)
{
    if (launch == NULL || t == NULL || out == NULL || t->repeats < 1)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "lab time: bad arguments");
    double *samples = (double *)malloc((size_t)t->repeats * sizeof *samples);
    if (samples == NULL) return ffnn_fail(FFNN_ERR_NO_MEMORY, "lab time: no host memory");
    void *e0 = NULL, *e1 = NULL;
    int inner = 1;
    ffnn_status st = ffnn_lab_event_create(&e0);
    if (st == FFNN_OK) st = ffnn_lab_event_create(&e1);
    if (st == FFNN_OK)
        st = time_loop((cudaStream_t)stream, (cudaEvent_t)e0, (cudaEvent_t)e1, launch, arg, t,
                       samples, &inner);
    if (st == FFNN_OK) {
        out->median_us = ffnn_lab_median(samples, (size_t)t->repeats, &out->min_us, &out->max_us);
        out->inner = inner;
    }
    ffnn_lab_event_destroy(e1);
    ffnn_lab_event_destroy(e0);
    free(samples);
    return st;
}

/* ------------------------------------------------------------------ copy ceiling */

typedef struct copy_job {
    void *dst;
    const void *src;
    size_t bytes;
    cudaStream_t stream;
} copy_job;

static ffnn_status copy_once(void *arg)
{
    const copy_job *j = (const copy_job *)arg;
    FFNN_CUDA_CHECK(NULL, cudaMemcpyAsync(j->dst, j->src, j->bytes, cudaMemcpyDeviceToDevice,
                                          j->stream));
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_lab_copy_ceiling(size_t bytes, int repeats, double *median_s,
                                             double *bytes_per_s)
{
    if (bytes < 4 || repeats < 1)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "copy ceiling: bytes %zu, repeats %d",
                         bytes, repeats);
    bytes &= ~(size_t)3;
    void *src = NULL, *dst = NULL, *stream = NULL;
    ffnn_status st = ffnn_lab_malloc(&src, bytes);
    if (st == FFNN_OK) st = ffnn_lab_malloc(&dst, bytes);
    if (st == FFNN_OK) st = ffnn_lab_fill_uniform((float *)src, bytes / 4, 12345, 0.0f, 1.0f);
    if (st == FFNN_OK) st = ffnn_lab_fill_uniform((float *)dst, bytes / 4, 54321, 0.0f, 1.0f);
    if (st == FFNN_OK) st = ffnn_lab_stream_create(&stream);
    ffnn_lab_times times;
    if (st == FFNN_OK) {
        copy_job job = {dst, src, bytes, (cudaStream_t)stream};
        const ffnn_lab_timing t = {3, repeats, 1, 0.0, 1, 0.0};
        st = ffnn_lab_time(stream, copy_once, &job, &t, &times);
    }
    if (st == FFNN_OK) {
        *median_s = 1e-6 * times.median_us;
        *bytes_per_s = *median_s > 0.0 ? 2.0 * (double)bytes / *median_s : 0.0;
    }
    ffnn_lab_stream_destroy(stream);
    ffnn_lab_free(dst);
    ffnn_lab_free(src);
    return st;
}
