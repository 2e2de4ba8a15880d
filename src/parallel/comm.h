/* comm.h - the communicator of a data-parallel run: rank, world size and the
 * collectives synchronous data parallelism needs (docs/ARCHITECTURE.md, "Data
 * parallelism"). One interface, three implementations:
 *   none      no communicator at all: the trainer's comm is NULL (world size 1)
 *   mpi.c     MPI over host memory (the cpu backends' buffers): MPI_Iallreduce
 *             per bucket, host reductions with MPI_Allreduce (Open MPI)
 *   nccl.cu   NCCL over device memory (the cuda backend): ncclAllReduce per bucket
 *             on its own stream, ordered after the backward kernels by events;
 *             host reductions over MPI when launched by mpirun, else through a
 *             device scratch (the one-process --gpus N group)
 * A build without MPI (without NCCL) links mpi_none.c (nccl_none.c), whose
 * constructors refuse with what is missing.
 *
 * Every rank makes the same calls in the same order (collectives): the trainer
 * and the step do so by construction (the same steps, read-backs and
 * checkpoints on every rank).
 */
#ifndef FFNN_PARALLEL_COMM_H
#define FFNN_PARALLEL_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ffnn_reduce_op {
    FFNN_REDUCE_SUM = 0,
    FFNN_REDUCE_MIN = 1,
    FFNN_REDUCE_MAX = 2
} ffnn_reduce_op;

typedef struct ffnn_comm_ops {
    const char *name;        /* "mpi", "nccl"                                        */
    int device_buffers;      /* 1: gradient buffers are CUDA device memory; 0: host  */
    /* Start buf[count] = sum over ranks r of scale_r * buf_r, in place (count
     * floats; host or device memory as device_buffers says). scale 0: this rank
     * contributes zeros whatever buf holds (a rank without rows in a step).
     * stream: the backend's stream (device comms; the reduction starts after the
     * work queued on it so far); NULL for host comms, whose buf must be ready. */
    ffnn_status (*allreduce_begin)(ffnn_comm *c, float *buf, size_t count, float scale,
                                   void *stream);
    /* Every reduction begun so far is complete before anything queued on stream
     * after this call (device), or when it returns (host). */
    ffnn_status (*allreduce_end)(ffnn_comm *c, void *stream);
    /* Blocking: v[n] (host doubles) = op over the ranks' v. */
    ffnn_status (*reduce_host)(ffnn_comm *c, double *v, size_t n, ffnn_reduce_op op);
    /* Blocking: root's bytes[size] to every rank (host memory). */
    ffnn_status (*broadcast_host)(ffnn_comm *c, void *bytes, size_t size, int root);
    /* Make this thread's current device the rank's GPU (before the backend context
     * is created); NULL for host comms. */
    ffnn_status (*bind_device)(ffnn_comm *c);
    /* Stop every rank now (MPI_Abort / ncclCommAbort): for a caller that cannot
     * go on; returns only for an in-process group (the caller then exits). */
    void (*abort)(ffnn_comm *c, int code);
    void (*destroy)(ffnn_comm *c);
} ffnn_comm_ops;

/* Measured when on (ffnn_comm_set_timing): per step (one allreduce_end), the span
 * from the start of its first bucket's reduction to the end of its last, and the
 * part of it the update waited for after the backward pass (not overlapped).
 * nccl: CUDA events, read with a synchronisation per step (timing runs only;
 * steps inside a CUDA graph capture are not timed); mpi: the host clock. */
typedef struct ffnn_comm_clock {
    int on;
    uint64_t steps;          /* steps timed                                          */
    double span_ms;          /* sum over the steps                                   */
    double exposed_ms;       /* sum over the steps                                   */
} ffnn_comm_clock;

struct ffnn_comm {
    const ffnn_comm_ops *ops;
    int rank, size;          /* this rank, ranks in all (>= 1)                        */
    int device;              /* the rank's CUDA device ordinal; -1 for host comms    */
    ffnn_comm_clock timing;
    void *impl;              /* the implementation's own state                        */
    int reduce_alone;        /* 0 (made so): a group of one rank trains as the plain
                                run, no all-reduce stage; 1: the stage runs anyway
                                (an identity there: tests of the NCCL/MPI path on one
                                GPU or process)                                       */
};

/* The rows of a batch of `rows` rows that rank `rank` of `size` computes:
 * [*first, *first + *count). The first rows % size ranks take one row more
 * than the others (rows / size), in rank order, so the shards tile the batch
 * in the order a single process visits it. A rank may get 0 rows (rows < size). */
void ffnn_shard_range(size_t rows, int rank, int size, size_t *first, size_t *count);

/* The gradient buckets of a backward pass: all-reduce a run of layers' gradients
 * once it holds at least this many bytes (or at the first layer), so later
 * buckets are reduced while the earlier layers' backward runs. PyTorch DDP's
 * default bucket_cap_mb is 25. */
#define FFNN_BUCKET_BYTES ((size_t)25 << 20)

/* Implementations (mpi.c or mpi_none.c; nccl.cu or nccl_none.c). */
int ffnn_mpi_built(void);
int ffnn_nccl_built(void);
/* NCCL's unique id, made by rank 0 and broadcast by the caller. */
#define FFNN_NCCL_ID_BYTES 128
ffnn_status ffnn_nccl_unique_id(unsigned char id[FFNN_NCCL_ID_BYTES]);
/* One rank of an NCCL communicator of `size` ranks on CUDA device `device`;
 * host (owned by the result from then on, also on failure) does its host
 * reductions, broadcasts and abort. */
ffnn_status ffnn_nccl_comm_create(const unsigned char id[FFNN_NCCL_ID_BYTES], int size,
                                  int rank, int device, ffnn_comm *host, ffnn_comm **out);
/* comms[gpus]: one rank per GPU 0 .. gpus-1 of this process (ncclCommInitAll). */
ffnn_status ffnn_nccl_group_create(int gpus, ffnn_comm **comms);

#ifdef __cplusplus
}
#endif
#endif
