/* comm.c - the public face of the communicators (include/ffnn.h) and the batch
 * split (comm.h). */
#include <stddef.h>

#include "core/error.h"
#include "parallel/comm.h"

void ffnn_shard_range(size_t rows, int rank, int size, size_t *first, size_t *count)
{
    size_t r = (size_t)rank, n = (size_t)size, base = rows / n, extra = rows % n;
    *count = base + (r < extra ? 1 : 0);
    *first = r * base + (r < extra ? r : extra);
}

int ffnn_has_mpi(void) { return ffnn_mpi_built(); }

int ffnn_has_nccl(void) { return ffnn_nccl_built(); }

ffnn_status ffnn_comm_create_gpus(int gpus, ffnn_comm **comms)
{
    if (gpus < 1 || !comms)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_comm_create_gpus: gpus %d: expected at least 1 (and comms set)",
                         gpus);
    return ffnn_nccl_group_create(gpus, comms);
}

int ffnn_comm_rank(const ffnn_comm *c) { return c ? c->rank : 0; }

int ffnn_comm_size(const ffnn_comm *c) { return c ? c->size : 1; }

int ffnn_comm_device(const ffnn_comm *c) { return c ? c->device : -1; }

const char *ffnn_comm_kind(const ffnn_comm *c) { return c ? c->ops->name : "none"; }

void ffnn_comm_abort(ffnn_comm *c, int code)
{
    if (c)
        c->ops->abort(c, code);
}

void ffnn_comm_free(ffnn_comm *c)
{
    if (c)
        c->ops->destroy(c);
}

ffnn_status ffnn_comm_reduce(ffnn_comm *c, double *v, size_t n, ffnn_comm_op op)
{
    if (op != FFNN_COMM_SUM && op != FFNN_COMM_MIN && op != FFNN_COMM_MAX)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_comm_reduce: op %d", (int)op);
    if (!c || n == 0)
        return FFNN_OK;
    if (!v)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_comm_reduce: v is NULL");
    /* the values of ffnn_comm_op are those of comm.h's ffnn_reduce_op */
    return c->ops->reduce_host(c, v, n, (ffnn_reduce_op)op);
}

ffnn_status ffnn_comm_broadcast(ffnn_comm *c, void *bytes, size_t size, int root)
{
    if (c && (root < 0 || root >= c->size))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_comm_broadcast: root %d of %d ranks",
                         root, c->size);
    if (!c || size == 0)
        return FFNN_OK;
    if (!bytes)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_comm_broadcast: bytes is NULL");
    return c->ops->broadcast_host(c, bytes, size, root);
}

void ffnn_comm_set_timing(ffnn_comm *c, int on)
{
    if (c)
        c->timing.on = on != 0;
}

void ffnn_comm_timing(const ffnn_comm *c, uint64_t *steps, double *span_ms, double *exposed_ms)
{
    *steps = c ? c->timing.steps : 0;
    *span_ms = c ? c->timing.span_ms : 0.0;
    *exposed_ms = c ? c->timing.exposed_ms : 0.0;
}
