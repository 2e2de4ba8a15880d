/* mpi.c - the MPI communicator (comm.h): the ranks of an mpirun launch, the
 * gradients summed over host memory (the cpu backends') with MPI_Iallreduce per
 * bucket, host reductions with MPI_Allreduce; and the bootstrap of the NCCL
 * communicator of a multi-process GPU run (NCCL's unique id broadcast over
 * MPI). Built only when MPI is found (Makefile: MPI=1, mpicc), into the MPI
 * module libffnn-mpi.so (mpi_module.h) with mpi_host.c; libffnn's mpi_module.c
 * loads it.
 *
 * Same result on every rank: Open MPI's allreduce algorithms (recursive
 * doubling, ring, reduce + broadcast) give every rank the same sums for MPI_SUM
 * over floats (commutative pairwise additions or one reduction then a copy);
 * the trainer checks it at every checkpoint (a CRC-32 of the parameters per
 * rank must agree). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/module.h"
#include "core/error.h"
#include "parallel/comm.h"
#include "parallel/mpi_module.h"

/* The one check of an MPI call: on failure, a message with file, line, the call
 * and MPI's description of the error code. */
static ffnn_status mpi_failed(int code, const char *file, int line, const char *call)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    return ffnn_fail(FFNN_ERR_IO, "%s:%d: %s failed: %s", file, line, call, text);
}
#define FFNN_MPI_CHECK(call)                                                         \
    do {                                                                             \
        int mpi_code_ = (call);                                                      \
        if (mpi_code_ != MPI_SUCCESS)                                                \
            return mpi_failed(mpi_code_, __FILE__, __LINE__, #call);                 \
    } while (0)

/* A message of at most this many elements per MPI call (counts are int). */
#define MPI_CHUNK ((size_t)1 << 30)

typedef struct mpi_impl {
    MPI_Comm comm;          /* a duplicate of MPI_COMM_WORLD, errors returned        */
    int finalize;           /* 1: MPI_Init was ours, MPI_Finalize at destroy          */
    MPI_Request *pending;   /* [pending_count] the allreduces begun, not waited for   */
    size_t pending_count, pending_cap;
    double first_begin;     /* timing: the host clock at the step's first bucket     */
} mpi_impl;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static mpi_impl *impl_of(ffnn_comm *c) { return (mpi_impl *)c->impl; }

static ffnn_status mpi_allreduce_begin(ffnn_comm *c, float *buf, size_t count, float scale,
                                       void *stream)
{
    mpi_impl *m = impl_of(c);
    int finished = 0;
    (void)stream;
    if (c->timing.on && m->pending_count == 0)
        m->first_begin = now_ms();
    /* Open MPI advances non-blocking collectives inside MPI calls only: test the
     * buckets in flight, so they progress while this rank computes the next */
    if (m->pending_count > 0)
        FFNN_MPI_CHECK(MPI_Testall((int)m->pending_count, m->pending, &finished,
                                   MPI_STATUSES_IGNORE));
    if (scale == 0.0f)
        memset(buf, 0, count * sizeof *buf);
    else if (scale != 1.0f)
        for (size_t i = 0; i < count; i++)
            buf[i] *= scale;
    for (size_t done = 0; done < count; done += MPI_CHUNK) {
        size_t n = count - done < MPI_CHUNK ? count - done : MPI_CHUNK;
        if (m->pending_count == m->pending_cap) {
            size_t cap = m->pending_cap ? 2 * m->pending_cap : 16;
            MPI_Request *p = realloc(m->pending, cap * sizeof *p);
            if (!p)
                return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for MPI requests");
            m->pending = p;
            m->pending_cap = cap;
        }
        FFNN_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, buf + done, (int)n, MPI_FLOAT, MPI_SUM,
                                      m->comm, &m->pending[m->pending_count]));
        m->pending_count++;
    }
    return FFNN_OK;
}

static ffnn_status mpi_allreduce_end(ffnn_comm *c, void *stream)
{
    mpi_impl *m = impl_of(c);
    (void)stream;
    size_t n = m->pending_count;
    double wait_begin = c->timing.on ? now_ms() : 0.0;
    m->pending_count = 0;
    if (n > 0)
        FFNN_MPI_CHECK(MPI_Waitall((int)n, m->pending, MPI_STATUSES_IGNORE));
    if (c->timing.on && n > 0) {
        double end = now_ms();
        c->timing.steps++;
        c->timing.span_ms += end - m->first_begin;
        c->timing.exposed_ms += end - wait_begin;
    }
    return FFNN_OK;
}

static ffnn_status mpi_reduce_host(ffnn_comm *c, double *v, size_t n, ffnn_reduce_op op)
{
    MPI_Op mop = op == FFNN_REDUCE_MIN ? MPI_MIN : op == FFNN_REDUCE_MAX ? MPI_MAX : MPI_SUM;
    for (size_t done = 0; done < n; done += MPI_CHUNK) {
        size_t k = n - done < MPI_CHUNK ? n - done : MPI_CHUNK;
        FFNN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v + done, (int)k, MPI_DOUBLE, mop,
                                     impl_of(c)->comm));
    }
    return FFNN_OK;
}

static ffnn_status mpi_broadcast_host(ffnn_comm *c, void *bytes, size_t size, int root)
{
    for (size_t done = 0; done < size; done += MPI_CHUNK) {
        size_t k = size - done < MPI_CHUNK ? size - done : MPI_CHUNK;
        FFNN_MPI_CHECK(MPI_Bcast((char *)bytes + done, (int)k, MPI_BYTE, root, impl_of(c)->comm));
    }
    return FFNN_OK;
}

static void mpi_abort(ffnn_comm *c, int code) { MPI_Abort(impl_of(c)->comm, code); }

static void mpi_destroy(ffnn_comm *c)
{
    mpi_impl *m = impl_of(c);
    if (m) {
        if (m->pending_count)
            MPI_Waitall((int)m->pending_count, m->pending, MPI_STATUSES_IGNORE);
        free(m->pending);
        MPI_Comm_free(&m->comm);
        if (m->finalize)
            MPI_Finalize();
        free(m);
    }
    free(c);
}

static const ffnn_comm_ops mpi_ops = {
    "mpi", 0, mpi_allreduce_begin, mpi_allreduce_end, mpi_reduce_host, mpi_broadcast_host,
    NULL, mpi_abort, mpi_destroy,
};

/* The host communicator over MPI_COMM_WORLD (MPI initialised here if it was not). */
static ffnn_status mpi_world(ffnn_comm **out)
{
    int initialized = 0, provided = 0;
    FFNN_MPI_CHECK(MPI_Initialized(&initialized));
    if (!initialized)
        FFNN_MPI_CHECK(MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided));
    ffnn_comm *c = calloc(1, sizeof *c);
    mpi_impl *m = calloc(1, sizeof *m);
    if (!c || !m) {
        free(c);
        free(m);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for an MPI communicator");
    }
    c->ops = &mpi_ops;
    c->impl = m;
    c->device = -1;
    m->finalize = !initialized;
    m->comm = MPI_COMM_NULL;
    ffnn_status st = FFNN_OK;
    int code = MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
    if (code == MPI_SUCCESS)
        code = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    if (code == MPI_SUCCESS)
        code = MPI_Comm_rank(m->comm, &c->rank);
    if (code == MPI_SUCCESS)
        code = MPI_Comm_size(m->comm, &c->size);
    if (code != MPI_SUCCESS) {
        st = mpi_failed(code, __FILE__, __LINE__, "MPI_Comm_dup/set_errhandler/rank/size");
        if (m->comm != MPI_COMM_NULL)
            MPI_Comm_free(&m->comm);
        if (m->finalize)
            MPI_Finalize();
        free(m);
        free(c);
        return st;
    }
    *out = c;
    return FFNN_OK;
}

/* The rank's GPU: its rank among the processes of its node, modulo the GPUs
 * (collective: every rank calls it). */
static ffnn_status local_gpu(ffnn_comm *host, int *device)
{
    MPI_Comm node;
    int local = 0;
    FFNN_MPI_CHECK(MPI_Comm_split_type(impl_of(host)->comm, MPI_COMM_TYPE_SHARED, host->rank,
                                       MPI_INFO_NULL, &node));
    int code = MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    if (code != MPI_SUCCESS)
        return mpi_failed(code, __FILE__, __LINE__, "MPI_Comm_rank(node)");
    int gpus = ffnn_cuda_device_count();
    if (gpus <= 0)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "rank %d: no CUDA GPU is visible (NCCL needs "
                         "one per rank); use device cpu", host->rank);
    *device = local % gpus;
    return FFNN_OK;
}

ffnn_status ffnn_mpi_module_comm_create(ffnn_device device, ffnn_comm **out)
{
    if (!out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_comm_create_mpi: NULL argument");
    ffnn_comm *host = NULL;
    ffnn_status st = mpi_world(&host);
    if (st != FFNN_OK)
        return st;
    if (device == FFNN_DEVICE_AUTO)
        device = ffnn_cuda_device_count() > 0 && ffnn_nccl_built() ? FFNN_DEVICE_CUDA
                                                                    : FFNN_DEVICE_CPU;
    if (device != FFNN_DEVICE_CUDA) {
        *out = host;
        return FFNN_OK;
    }
    if (!ffnn_nccl_built()) {
        mpi_destroy(host);
        return ffnn_fail(FFNN_ERR_UNSUPPORTED, "an MPI run on cuda needs NCCL, and this build "
                         "of ffnn has none (nccl.h and libnccl were not found under "
                         "CUDA_HOME at build time); use device cpu or rebuild");
    }
    /* rank 0 makes NCCL's id; it goes to every rank with a flag saying whether it
     * could, so that a failure there stops every rank instead of leaving them
     * waiting in NCCL's initialisation */
    unsigned char id[FFNN_NCCL_ID_BYTES + 1];
    char why[512] = "";
    memset(id, 0, sizeof id);
    int gpu = 0;
    st = local_gpu(host, &gpu);
    if (st == FFNN_OK && host->rank == 0 && (st = ffnn_nccl_unique_id(id)) == FFNN_OK)
        id[FFNN_NCCL_ID_BYTES] = 1;
    if (st != FFNN_OK)
        snprintf(why, sizeof why, "%s", ffnn_last_error());
    ffnn_status bst = mpi_broadcast_host(host, id, sizeof id, 0);
    if (st == FFNN_OK && bst != FFNN_OK)
        st = bst, snprintf(why, sizeof why, "%s", ffnn_last_error());
    if (st == FFNN_OK && !id[FFNN_NCCL_ID_BYTES]) {
        st = FFNN_ERR_CUDA;
        snprintf(why, sizeof why, "rank 0 could not set up NCCL (its message names the cause)");
    }
    if (st != FFNN_OK) {
        mpi_destroy(host);
        return ffnn_fail(st, "%s", why);
    }
    return ffnn_nccl_comm_create(id, host->size, host->rank, gpu, host, out);
}

/* The module's one exported function (mpi_module.h): its table; the library's
 * services kept when it speaks this interface (else the loader refuses the table). */
__attribute__((visibility("default"))) const void *ffnn_mpi_module_entry(const void *arg)
{
    static const ffnn_mpi_module table = {
        FFNN_MPI_MODULE_VERSION, FFNN_MODULE_ABI, sizeof(ffnn_mpi_module),
        ffnn_mpi_module_comm_create,
    };
    const ffnn_mpi_host *host = (const ffnn_mpi_host *)arg;
    if (host && host->version == FFNN_MPI_MODULE_VERSION && host->abi == FFNN_MODULE_ABI &&
        host->size == sizeof(ffnn_mpi_host))
        ffnn_mpi_module_set_host(host);
    return &table;
}
