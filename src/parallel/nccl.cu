/* nccl.cu - the NCCL communicator (comm.h): gradients summed over device memory
 * with ncclAllReduce, one call per bucket, on the communicator's own stream;
 * each call waits (an event) for the backward kernels queued before it on the
 * backend's stream, and allreduce_end makes the backend's stream wait for them
 * all, so the optimizer update sees the sums while the earlier layers' backward
 * overlaps the later buckets' reduction. Captured into CUDA graphs like any
 * other work of the stream (NCCL >= 2.9): the fork and join are events.
 *
 * A rank's scale (its share of the global batch, comm.h) is NCCL's pre-multiplied
 * sum (ncclRedOpCreatePreMulSum, the scalar rounded as x * scale in float); the
 * ops are kept per scale until the communicator is freed (a captured graph
 * refers to them). Scale 1 (world size 1, or equal shares summed already
 * scaled) is ncclSum: with one rank, a copy, so the update gets the same bits
 * as without a communicator.
 *
 * Host reductions (per-step losses, checksums) go over MPI when the run was
 * launched by mpirun (host != NULL), else (one process, one thread per GPU)
 * through a small device scratch on the communicator's stream. Built only when
 * NCCL is found (Makefile: NCCL=1), into the CUDA module (src/backend/module.h);
 * without it the module's table has no NCCL entries (nccl_module.c says so). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "core/error.h"
#include "backend/module.h"
#include "parallel/comm.h"

static_assert(sizeof(ncclUniqueId) == FFNN_NCCL_ID_BYTES, "NCCL's unique id size");

/* The one check macros of this file: file, line, the call and the library's text. */
#define FFNN_NCCL_CHECK(call)                                                          \
    do {                                                                               \
        ncclResult_t nccl_res_ = (call);                                               \
        if (nccl_res_ != ncclSuccess && nccl_res_ != ncclInProgress)                   \
            return ffnn_fail(FFNN_ERR_CUDA, "%s:%d: %s failed: %s (%s)", __FILE__,     \
                             __LINE__, #call, ncclGetErrorString(nccl_res_),           \
                             ncclGetLastError(NULL));                                  \
    } while (0)
#define FFNN_CUDART_CHECK(call)                                                        \
    do {                                                                               \
        cudaError_t cuda_err_ = (call);                                                \
        if (cuda_err_ != cudaSuccess) {                                                \
            (void)cudaGetLastError();                                                  \
            return ffnn_fail(FFNN_ERR_CUDA, "%s:%d: %s failed: %s (%s)", __FILE__,     \
                             __LINE__, #call, cudaGetErrorString(cuda_err_),           \
                             cudaGetErrorName(cuda_err_));                             \
        }                                                                              \
    } while (0)

enum { MAX_SCALES = 16 };

typedef struct nccl_impl {
    ncclComm_t comm;
    cudaStream_t stream;        /* the communication stream                           */
    cudaEvent_t ready, done;    /* fork (backend -> comm) and join (comm -> backend)  */
    cudaEvent_t t_first, t_backward, t_last; /* timing: first bucket's start, backward
                                   done (backend stream), last bucket's end         */
    int timed;                  /* the step's first bucket recorded t_first           */
    float scale[MAX_SCALES];    /* pre-multiplied sums made so far, by scale          */
    ncclRedOp_t premul[MAX_SCALES];
    int scales;
    void *scratch;              /* [scratch_bytes] device, host reductions without MPI */
    size_t scratch_bytes;
    ffnn_comm *host;            /* the MPI communicator of an mpirun launch, or NULL   */
} nccl_impl;

static nccl_impl *impl_of(ffnn_comm *c) { return (nccl_impl *)c->impl; }

/* A failure NCCL reports asynchronously (a peer gone, a network error). */
static ffnn_status check_async(ffnn_comm *c)
{
    ncclResult_t async = ncclSuccess;
    FFNN_NCCL_CHECK(ncclCommGetAsyncError(impl_of(c)->comm, &async));
    if (async != ncclSuccess && async != ncclInProgress)
        return ffnn_fail(FFNN_ERR_CUDA, "rank %d: NCCL reported an asynchronous error: %s",
                         c->rank, ncclGetErrorString(async));
    return FFNN_OK;
}

/* 1 when work queued on stream is being captured into a CUDA graph. */
static int capturing(cudaStream_t stream)
{
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
           status != cudaStreamCaptureStatusNone;
}

/* The reduction op for this rank's scale. */
static ffnn_status op_for(ffnn_comm *c, float scale, ncclRedOp_t *op)
{
    nccl_impl *n = impl_of(c);
    if (scale == 1.0f || scale == 0.0f) { /* 0: the buffer is zeroed first */
        *op = ncclSum;
        return FFNN_OK;
    }
    for (int i = 0; i < n->scales; i++)
        if (n->scale[i] == scale) {
            *op = n->premul[i];
            return FFNN_OK;
        }
    if (n->scales == MAX_SCALES)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "rank %d: more than %d distinct gradient "
                         "scales", c->rank, MAX_SCALES);
    /* made at most once per scale, maybe while a graph is being captured: with the
     * capture mode relaxed for this call, as cublas.cu does for cuBLAS's setup */
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    FFNN_CUDART_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    ncclResult_t res = ncclRedOpCreatePreMulSum(&n->premul[n->scales], &scale, ncclFloat,
                                                ncclScalarHostImmediate, n->comm);
    FFNN_CUDART_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    FFNN_NCCL_CHECK(res);
    n->scale[n->scales] = scale;
    *op = n->premul[n->scales++];
    return FFNN_OK;
}

static ffnn_status nccl_allreduce_begin(ffnn_comm *c, float *buf, size_t count, float scale,
                                        void *stream)
{
    nccl_impl *n = impl_of(c);
    cudaStream_t compute = (cudaStream_t)stream;
    ncclRedOp_t op = ncclSum;
    ffnn_status st;
    if ((st = check_async(c)) != FFNN_OK || (st = op_for(c, scale, &op)) != FFNN_OK)
        return st;
    FFNN_CUDART_CHECK(cudaEventRecord(n->ready, compute));
    FFNN_CUDART_CHECK(cudaStreamWaitEvent(n->stream, n->ready, 0));
    if (c->timing.on && !n->timed && !capturing(compute)) {
        FFNN_CUDART_CHECK(cudaEventRecord(n->t_first, n->stream));
        n->timed = 1;
    }
    if (scale == 0.0f)
        FFNN_CUDART_CHECK(cudaMemsetAsync(buf, 0, count * sizeof *buf, n->stream));
    FFNN_NCCL_CHECK(ncclAllReduce(buf, buf, count, ncclFloat, op, n->comm, n->stream));
    return FFNN_OK;
}

static ffnn_status nccl_allreduce_end(ffnn_comm *c, void *stream)
{
    nccl_impl *n = impl_of(c);
    if (n->timed) /* the backward pass is done here, on the backend's stream */
        FFNN_CUDART_CHECK(cudaEventRecord(n->t_backward, (cudaStream_t)stream));
    FFNN_CUDART_CHECK(cudaEventRecord(n->done, n->stream));
    FFNN_CUDART_CHECK(cudaStreamWaitEvent((cudaStream_t)stream, n->done, 0));
    if (n->timed) {
        float span = 0.0f, exposed = 0.0f;
        n->timed = 0;
        FFNN_CUDART_CHECK(cudaEventRecord(n->t_last, n->stream));
        FFNN_CUDART_CHECK(cudaEventSynchronize(n->t_last));
        FFNN_CUDART_CHECK(cudaEventSynchronize(n->t_backward));
        FFNN_CUDART_CHECK(cudaEventElapsedTime(&span, n->t_first, n->t_last));
        FFNN_CUDART_CHECK(cudaEventElapsedTime(&exposed, n->t_backward, n->t_last));
        c->timing.steps++;
        c->timing.span_ms += span;
        c->timing.exposed_ms += exposed > 0.0f ? exposed : 0.0f;
    }
    return check_async(c);
}

static ffnn_status grow_scratch(nccl_impl *n, size_t bytes)
{
    if (bytes <= n->scratch_bytes)
        return FFNN_OK;
    if (n->scratch)
        FFNN_CUDART_CHECK(cudaFree(n->scratch));
    n->scratch = NULL;
    n->scratch_bytes = 0;
    FFNN_CUDART_CHECK(cudaMalloc(&n->scratch, bytes));
    n->scratch_bytes = bytes;
    return FFNN_OK;
}

/* Wait for the communication stream, with NCCL's asynchronous errors checked. */
static ffnn_status wait_stream(ffnn_comm *c)
{
    FFNN_CUDART_CHECK(cudaStreamSynchronize(impl_of(c)->stream));
    return check_async(c);
}

static ffnn_status nccl_reduce_host(ffnn_comm *c, double *v, size_t count, ffnn_reduce_op op)
{
    nccl_impl *n = impl_of(c);
    if (n->host)
        return n->host->ops->reduce_host(n->host, v, count, op);
    ffnn_status st = grow_scratch(n, count * sizeof *v);
    if (st != FFNN_OK)
        return st;
    ncclRedOp_t nop = op == FFNN_REDUCE_MIN ? ncclMin : op == FFNN_REDUCE_MAX ? ncclMax : ncclSum;
    FFNN_CUDART_CHECK(cudaMemcpyAsync(n->scratch, v, count * sizeof *v, cudaMemcpyHostToDevice,
                                      n->stream));
    FFNN_NCCL_CHECK(ncclAllReduce(n->scratch, n->scratch, count, ncclDouble, nop, n->comm,
                                  n->stream));
    FFNN_CUDART_CHECK(cudaMemcpyAsync(v, n->scratch, count * sizeof *v, cudaMemcpyDeviceToHost,
                                      n->stream));
    return wait_stream(c);
}

static ffnn_status nccl_broadcast_host(ffnn_comm *c, void *bytes, size_t size, int root)
{
    nccl_impl *n = impl_of(c);
    if (n->host)
        return n->host->ops->broadcast_host(n->host, bytes, size, root);
    ffnn_status st = grow_scratch(n, size);
    if (st != FFNN_OK)
        return st;
    FFNN_CUDART_CHECK(cudaMemcpyAsync(n->scratch, bytes, size, cudaMemcpyHostToDevice,
                                      n->stream));
    FFNN_NCCL_CHECK(ncclBroadcast(n->scratch, n->scratch, size, ncclUint8, root, n->comm,
                                  n->stream));
    FFNN_CUDART_CHECK(cudaMemcpyAsync(bytes, n->scratch, size, cudaMemcpyDeviceToHost,
                                      n->stream));
    return wait_stream(c);
}

static ffnn_status nccl_bind_device(ffnn_comm *c)
{
    FFNN_CUDART_CHECK(cudaSetDevice(c->device));
    return FFNN_OK;
}

static void nccl_abort(ffnn_comm *c, int code)
{
    nccl_impl *n = impl_of(c);
    (void)ncclCommAbort(n->comm);
    n->comm = NULL;
    if (n->host)
        n->host->ops->abort(n->host, code); /* MPI_Abort: does not return */
}

static void nccl_destroy(ffnn_comm *c)
{
    nccl_impl *n = impl_of(c);
    if (n) {
        (void)cudaSetDevice(c->device);
        if (n->stream)
            (void)cudaStreamSynchronize(n->stream);
        if (n->comm) {
            for (int i = 0; i < n->scales; i++)
                (void)ncclRedOpDestroy(n->premul[i], n->comm);
            (void)ncclCommDestroy(n->comm);
        }
        if (n->scratch) (void)cudaFree(n->scratch);
        if (n->ready) (void)cudaEventDestroy(n->ready);
        if (n->done) (void)cudaEventDestroy(n->done);
        if (n->t_first) (void)cudaEventDestroy(n->t_first);
        if (n->t_backward) (void)cudaEventDestroy(n->t_backward);
        if (n->t_last) (void)cudaEventDestroy(n->t_last);
        if (n->stream) (void)cudaStreamDestroy(n->stream);
        if (n->host) n->host->ops->destroy(n->host);
        free(n);
    }
    free(c);
}

static const ffnn_comm_ops nccl_ops = {
    "nccl", 1, nccl_allreduce_begin, nccl_allreduce_end, nccl_reduce_host, nccl_broadcast_host,
    nccl_bind_device, nccl_abort, nccl_destroy,
};

/* The communicator around an initialised NCCL comm on `device`: its stream and
 * events. On failure the comm (and host) are released. */
static ffnn_status wrap(ncclComm_t comm, int size, int rank, int device, ffnn_comm *host,
                        ffnn_comm **out)
{
    ffnn_comm *c = (ffnn_comm *)calloc(1, sizeof *c);
    nccl_impl *n = (nccl_impl *)calloc(1, sizeof *n);
    if (!c || !n) {
        free(c);
        free(n);
        (void)ncclCommDestroy(comm);
        if (host) host->ops->destroy(host);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for an NCCL communicator");
    }
    c->ops = &nccl_ops;
    c->impl = n;
    c->rank = rank;
    c->size = size;
    c->device = device;
    n->comm = comm;
    n->host = host;
    cudaError_t err = cudaSetDevice(device);
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&n->ready, cudaEventDisableTiming);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&n->done, cudaEventDisableTiming);
    if (err == cudaSuccess) err = cudaEventCreate(&n->t_first);
    if (err == cudaSuccess) err = cudaEventCreate(&n->t_backward);
    if (err == cudaSuccess) err = cudaEventCreate(&n->t_last);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        nccl_destroy(c);
        return ffnn_fail(FFNN_ERR_CUDA, "rank %d, GPU %d: cannot create the communication "
                         "stream: %s", rank, device, cudaGetErrorString(err));
    }
    *out = c;
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_nccl_module_unique_id(unsigned char *id)
{
    ncclUniqueId u;
    FFNN_NCCL_CHECK(ncclGetUniqueId(&u));
    memcpy(id, &u, sizeof u);
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_nccl_module_comm_create(const unsigned char *id, int size,
                                                    int rank, int device, ffnn_comm *host,
                                                    ffnn_comm **out)
{
    ncclUniqueId u;
    ncclComm_t comm = NULL;
    memcpy(&u, id, sizeof u);
    cudaError_t err = cudaSetDevice(device);
    ncclResult_t res = err == cudaSuccess ? ncclCommInitRank(&comm, size, u, rank) : ncclSuccess;
    if (err != cudaSuccess || res != ncclSuccess) {
        (void)cudaGetLastError();
        if (host) host->ops->destroy(host);
        return ffnn_fail(FFNN_ERR_CUDA, "rank %d of %d, GPU %d: NCCL initialisation failed: %s",
                         rank, size, device,
                         err != cudaSuccess ? cudaGetErrorString(err) : ncclGetErrorString(res));
    }
    return wrap(comm, size, rank, device, host, out);
}

extern "C" ffnn_status ffnn_nccl_module_group_create(int gpus, ffnn_comm **comms)
{
    int visible = 0;
    FFNN_CUDART_CHECK(cudaGetDeviceCount(&visible));
    if (gpus > visible)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "gpus %d: only %d CUDA GPU%s visible", gpus,
                         visible, visible == 1 ? " is" : "s are");
    ncclComm_t *raw = (ncclComm_t *)calloc((size_t)gpus, sizeof *raw);
    if (!raw)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    ncclResult_t res = ncclCommInitAll(raw, gpus, NULL); /* devices 0 .. gpus-1 */
    if (res != ncclSuccess) {
        free(raw);
        return ffnn_fail(FFNN_ERR_CUDA, "ncclCommInitAll over %d GPUs failed: %s", gpus,
                         ncclGetErrorString(res));
    }
    ffnn_status st = FFNN_OK;
    int made = 0;
    for (; made < gpus && st == FFNN_OK; made++)
        if ((st = wrap(raw[made], gpus, made, made, NULL, &comms[made])) != FFNN_OK)
            break;
    if (st != FFNN_OK) { /* wrap released raw[made]; release the rest */
        for (int i = 0; i < made; i++)
            nccl_destroy(comms[i]);
        for (int i = made + 1; i < gpus; i++)
            (void)ncclCommDestroy(raw[i]);
    }
    free(raw);
    (void)cudaSetDevice(0);
    return st;
}
