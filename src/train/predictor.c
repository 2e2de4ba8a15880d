/* predictor.c - the inference object: a read-only model run forward with a
 * workspace of its own. On the CPU: lanes, each an omp backend context of one
 * thread with its own activations, and a fork-join pool (pool.c) whose lanes take
 * pieces of the batch's rows in turn - the whole network per piece, no barrier
 * between layers, and workers that sleep rather than spin while the caller does
 * other work. A job of too few rows to give every lane a share (a single row:
 * latency) is split by output columns instead when the net is all dense layers:
 * each lane computes its share of a layer's packed column panels and their
 * activation, one pool job per layer. On cuda: one context with the parameters
 * copied to the device.
 * The layer loop is the trainer's forward (strategy/step_forward.c) without
 * dropout: z = the layer's linear map, then its activation in place. A row's
 * outputs do not depend on the other rows of its batch (the omp matmul's tile
 * and row kernels sum each output in the same order), so the cutting changes no
 * bit. An ensemble model (core/ensemble.c) gets one such network per member,
 * on the same lanes: each lane runs its pieces of the rows through every member
 * (each with its own standardisation), reads each member's outputs as its loss
 * does (probabilities; mse: the targets' units) and sums them, then divides by
 * the member count. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/module.h"
#include "core/error.h"
#include "core/model.h"
#include "train/pool.h"
#include "train/predictor.h"

/* Multiply-adds a slice of a batch should have before it gets a thread of its
 * own (about 50 us of one core): smaller batches run on the calling thread. */
#define SLICE_MIN_WORK ((size_t)1 << 19)
/* Multiply-adds of a layer a lane should have when a few rows are split by
 * columns instead (about 5 us of one core at batch 1, where the row kernel
 * streams the weights: a pool round trip per layer costs a few us). A layer
 * with less runs on fewer lanes, below it on the caller alone. */
#define COLUMN_MIN_WORK ((size_t)1 << 16)
/* Pieces per lane a job of several lanes cuts its rows into, taken in turn by
 * whichever lane is free: a lane that loses its core for a while (a machine
 * shared with other work) holds the call up by at most the piece it is in, the
 * others running the rest. Each piece has at least PIECE_MIN_ROWS rows (two
 * full micro-tiles of the avx512 matmul) and SLICE_MIN_WORK multiply-adds. */
#define PIECES_PER_LANE 8
#define PIECE_MIN_ROWS 24

/* One thread's share of the work: its backend context and buffers. */
typedef struct lane {
    void *ctx;        /* a backend context (cpu: one thread; its own pack buffers) */
    float *act[2];    /* [lane_rows, widest] ping-pong, backend memory             */
    float *host_x;    /* [lane_rows, in] standardised rows (host), or NULL          */
    float *member_y;  /* ensemble: [lane_rows, out] one member's outputs (host)    */
    ffnn_status st;   /* the lane's last status                                    */
} lane;

/* One network the predictor runs: the model's (or an ensemble member's). */
typedef struct net {
    const ffnn_model *model;     /* a plain model (layers, params, standardisation) */
    const float *params;         /* [parameter_count]: model->params on the CPU, a
                                    device copy on cuda                           */
    float *dev_params;           /* the device copy (cuda), else NULL              */
    float *packed;               /* the dense layers' W packed once (backends with
                                    dense_pack: omp; lane 0's memory), else NULL   */
    size_t *packed_at;           /* [layer_count] offset of layer i's in packed     */
    size_t work_per_row;         /* multiply-adds of one row through the network   */
    size_t widest_work;          /* the most multiply-adds of one row in one layer  */
} net;

struct ffnn_predictor {
    const ffnn_model *model;     /* shared, read only                              */
    const ffnn_backend_ops *ops;
    ffnn_device device;          /* FFNN_DEVICE_CPU or FFNN_DEVICE_CUDA            */
    size_t max_batch;            /* rows per forward pass (larger calls chunked)   */
    lane *lanes;                 /* [lane_count]; lane 0 runs on the caller        */
    int lane_count;
    size_t lane_rows;            /* rows a lane runs at once                       */
    ffnn_pool *pool;             /* lane_count - 1 workers (cpu), or NULL          */
    net *nets;                   /* [net_count]: the model, or an ensemble's members */
    int net_count;
    int ensemble;                /* 1: nets are an ensemble's members (averaged)    */
    ffnn_loss loss;              /* ensemble: how each member's outputs are read    */
    size_t in, out;              /* the model's input and output widths            */
    size_t work_per_row;         /* multiply-adds of one row through every net     */
    size_t widest_work;          /* the most multiply-adds of one row in one layer  */
    int columns_ok;              /* every net dense, packed, > 1 lane: few rows may
                                    be split by output columns                    */
    float *dev_x, *dev_y;        /* cuda: [max_batch, in], [max_batch, out]        */
    float *member_y;             /* ensemble, column split or cuda: [max_batch, out] */
    size_t column_min_work;      /* COLUMN_MIN_WORK (tests: lower)                 */
    /* the job the lanes run (ffnn_predictor_forward_raw) */
    const float *job_x;          /* [job_rows, in] host                            */
    float *job_y;                /* [job_rows, out] host                           */
    size_t job_rows;
    size_t job_pieces;           /* row pieces of the job (>= job_slices)          */
    atomic_size_t job_next;      /* the next piece no lane has taken               */
    int job_slices, job_standardize; /* lanes that run the job; standardise x      */
    /* the layer the lanes split by columns (forward_columns) */
    const net *col_net;
    const ffnn_layer *col_layer;
    const float *col_in, *col_packed; /* [col_rows, layer.in], the layer's panels  */
    float *col_z;                /* [col_rows, layer.out]                           */
    size_t col_rows;
};

static size_t widest_layer(const ffnn_predictor *p)
{
    size_t w = p->in;
    for (int n = 0; n < p->net_count; n++) {
        const ffnn_model *m = p->nets[n].model;
        for (int i = 0; i < m->layer_count; i++)
            w = m->layers[i].out > w ? m->layers[i].out : w;
    }
    return w;
}

static ffnn_status pick(ffnn_device device, const ffnn_backend_ops **ops, ffnn_device *used)
{
    if (device == FFNN_DEVICE_AUTO) /* (the count first: backend/module.h) */
        device = ffnn_cuda_device_count() > 0 ? FFNN_DEVICE_CUDA : FFNN_DEVICE_CPU;
    const ffnn_backend_ops *cuda = device == FFNN_DEVICE_CUDA ? ffnn_cuda_backend() : NULL;
    if (device == FFNN_DEVICE_CUDA) {
        if (!cuda)
            return ffnn_fail(FFNN_ERR_UNSUPPORTED, "predictor: device cuda: %s",
                             ffnn_cuda_module_error());
        if (ffnn_cuda_device_count() == 0)
            return ffnn_fail(FFNN_ERR_UNSUPPORTED, "predictor: device cuda: no CUDA GPU is "
                             "visible; use cpu");
        *ops = cuda;
    } else if (device == FFNN_DEVICE_CPU) {
        *ops = &ffnn_omp_backend;
    } else {
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "predictor: unknown device %d", (int)device);
    }
    *used = device;
    return FFNN_OK;
}

static ffnn_status dev_alloc(ffnn_predictor *p, void *ctx, size_t floats, float **out)
{
    void *ptr = NULL;
    ffnn_status st = p->ops->alloc(ctx, floats * sizeof(float), &ptr);
    *out = ptr;
    return st;
}

/* Net n's dense layers' weights in the matmul's layout, packed once (omp: the
 * panels of W^T that its dense_forward packs on every call), shared by the lanes. */
static ffnn_status pack_weights(ffnn_predictor *p, net *n)
{
    const ffnn_model *m = n->model;
    void *ctx = p->lanes[0].ctx;
    size_t total = 0;
    ffnn_status st = FFNN_OK;
    if (!p->ops->packed)
        return FFNN_OK;
    if (!(n->packed_at = malloc((size_t)m->layer_count * sizeof *n->packed_at)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "predictor: out of memory");
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].kind == FFNN_LAYER_DENSE) {
            n->packed_at[i] = total;
            total += p->ops->packed->dense_pack_floats(ctx, m->layers[i].in, m->layers[i].out);
        }
    if (total == 0)
        return FFNN_OK;
    if ((st = dev_alloc(p, ctx, total, &n->packed)) != FFNN_OK)
        return st;
    for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
        const ffnn_layer *l = &m->layers[i];
        if (l->kind == FFNN_LAYER_DENSE)
            st = p->ops->packed->dense_pack(ctx, n->params + l->weight_offset, l->in, l->out,
                                            n->packed + n->packed_at[i]);
    }
    return st;
}

/* The parameters of every net where the backend reads them: the models' arenas
 * (host backends, with the dense weights packed), or device copies (cuda). */
static ffnn_status place_params(ffnn_predictor *p)
{
    ffnn_status st = FFNN_OK;
    void *ctx = p->lanes[0].ctx;
    p->columns_ok = p->ops->packed && p->lane_count > 1;
    for (int k = 0; k < p->net_count && st == FFNN_OK; k++) {
        net *n = &p->nets[k];
        const ffnn_model *m = n->model;
        if (!(p->ops->caps & FFNN_CAP_DEVICE)) { /* host memory: read the model's arena */
            n->params = m->params;
            if ((st = pack_weights(p, n)) != FFNN_OK)
                return st;
            p->columns_ok &= n->packed != NULL;
            for (int i = 0; i < m->layer_count; i++)
                p->columns_ok &= m->layers[i].kind == FFNN_LAYER_DENSE;
            continue;
        }
        if ((st = dev_alloc(p, ctx, m->parameter_count, &n->dev_params)) == FFNN_OK)
            st = p->ops->upload(ctx, n->dev_params, m->params,
                                m->parameter_count * sizeof(float));
        n->params = n->dev_params;
    }
    if (st != FFNN_OK || !(p->ops->caps & FFNN_CAP_DEVICE))
        return st;
    p->columns_ok = 0;
    if ((st = dev_alloc(p, ctx, p->max_batch * p->in, &p->dev_x)) != FFNN_OK ||
        (st = dev_alloc(p, ctx, p->max_batch * p->out, &p->dev_y)) != FFNN_OK)
        return st;
    return p->ops->synchronize(ctx);
}

/* Lanes (cpu: one per thread, each a one-thread omp context; cuda: one) with
 * their buffers, the pool, and the parameters where the backend reads them. */
static ffnn_status allocate(ffnn_predictor *p, int threads)
{
    const size_t w = widest_layer(p), out = p->out;
    ffnn_backend_options options = {threads, FFNN_MATMUL_TILED, FFNN_PRECISION_FP32, 0, 0};
    ffnn_status st;
    void *probe = NULL;
    int lanes = 1, standardized = 0;
    for (int k = 0; k < p->net_count; k++)
        standardized |= p->nets[k].model->input_mean != NULL;
    if (p->device == FFNN_DEVICE_CPU) { /* threads 0: the backend's count (all cores) */
        if ((st = p->ops->create(&options, &probe)) != FFNN_OK)
            return st;
        lanes = p->ops->threads(probe);
        p->ops->destroy(probe);
        options.threads = 1;
    }
    p->lane_rows = (p->max_batch + (size_t)lanes - 1) / (size_t)lanes;
    if (p->lane_rows > SIZE_MAX / sizeof(float) / w / 2)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "predictor: max_batch %zu x %zu units overflows",
                         p->max_batch, w);
    if (!(p->lanes = calloc((size_t)lanes, sizeof *p->lanes)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "predictor: out of memory");
    p->lane_count = lanes;
    for (int k = 0; k < lanes; k++) {
        lane *ln = &p->lanes[k];
        if ((st = p->ops->create(&options, &ln->ctx)) != FFNN_OK ||
            (st = dev_alloc(p, ln->ctx, p->lane_rows * w, &ln->act[0])) != FFNN_OK ||
            (st = dev_alloc(p, ln->ctx, p->lane_rows * w, &ln->act[1])) != FFNN_OK)
            return st;
        if ((standardized && !(ln->host_x = malloc(p->lane_rows * p->in * sizeof(float)))) ||
            (p->ensemble && !(ln->member_y = malloc(p->lane_rows * out * sizeof(float)))))
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "predictor: out of memory for %zu rows",
                             p->lane_rows);
    }
    if (p->ensemble && !(p->member_y = malloc(p->max_batch * out * sizeof(float))))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "predictor: out of memory for %zu rows",
                         p->max_batch);
    if (lanes > 1 && (st = ffnn_pool_create(lanes - 1, &p->pool)) != FFNN_OK)
        return st;
    return place_params(p);
}

/* p's networks: the model, or each member of an ensemble, with its work. */
static ffnn_status make_nets(ffnn_predictor *p, const ffnn_model *m)
{
    p->ensemble = m->member_count > 0;
    p->net_count = p->ensemble ? m->member_count : 1;
    p->in = m->input_size;
    p->out = ffnn_model_out(m);
    p->loss = m->loss;
    if (!(p->nets = calloc((size_t)p->net_count, sizeof *p->nets)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory creating a predictor");
    for (int k = 0; k < p->net_count; k++) {
        net *n = &p->nets[k];
        n->model = p->ensemble ? m->members[k] : m;
        for (int i = 0; i < n->model->layer_count; i++) {
            const size_t work = n->model->layers[i].out * n->model->layers[i].fan_in;
            n->work_per_row += work;
            n->widest_work = work > n->widest_work ? work : n->widest_work;
        }
        p->work_per_row += n->work_per_row;
        p->widest_work = n->widest_work > p->widest_work ? n->widest_work : p->widest_work;
    }
    return FFNN_OK;
}

ffnn_status ffnn_predictor_create(const ffnn_model *m, ffnn_device device, int threads,
                                  size_t max_batch, ffnn_predictor **out)
{
    ffnn_status st;
    if (!m || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_predictor_create: NULL argument");
    if (max_batch == 0 || threads < 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_predictor_create: max_batch must be "
                         ">= 1 and threads >= 0 (0: all cores), found %zu and %d", max_batch,
                         threads);
    if ((st = ffnn_model_fresh(m)) != FFNN_OK)
        return ffnn_fail_context(st, "ffnn_predictor_create");
    ffnn_predictor *p = calloc(1, sizeof *p);
    if (!p)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory creating a predictor");
    p->model = m;
    p->max_batch = max_batch;
    p->column_min_work = COLUMN_MIN_WORK;
    if ((st = make_nets(p, m)) != FFNN_OK || (st = pick(device, &p->ops, &p->device)) != FFNN_OK ||
        (st = allocate(p, threads)) != FFNN_OK) {
        ffnn_predictor_free(p);
        return st;
    }
    *out = p;
    return FFNN_OK;
}

void ffnn_predictor_free(ffnn_predictor *p)
{
    if (!p)
        return;
    ffnn_pool_free(p->pool);
    for (int k = p->lane_count - 1; k >= 0; k--) {
        lane *ln = &p->lanes[k];
        if (!ln->ctx)
            continue;
        void *bufs[] = {ln->act[0], ln->act[1], k ? NULL : p->dev_x, k ? NULL : p->dev_y};
        for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
            if (bufs[i])
                p->ops->release(ln->ctx, bufs[i]);
        for (int n = 0; k == 0 && n < p->net_count; n++) {
            if (p->nets[n].dev_params)
                p->ops->release(ln->ctx, p->nets[n].dev_params);
            if (p->nets[n].packed)
                p->ops->release(ln->ctx, p->nets[n].packed);
        }
        p->ops->destroy(ln->ctx);
        free(ln->host_x);
        free(ln->member_y);
    }
    for (int n = 0; n < p->net_count; n++)
        free(p->nets[n].packed_at);
    free(p->nets);
    free(p->lanes);
    free(p->member_y);
    free(p);
}

const ffnn_model *ffnn_predictor_model(const ffnn_predictor *p) { return p ? p->model : NULL; }

int ffnn_predictor_threads(const ffnn_predictor *p)
{
    return p && p->device == FFNN_DEVICE_CPU ? p->lane_count : 0;
}

/* Net n on rows <= lane_rows rows already in the context's memory:
 * x [rows, in] -> y [rows, out] (both backend pointers), with lane ln. */
static ffnn_status forward_chunk(ffnn_predictor *p, const net *n, lane *ln, const float *x,
                                 size_t rows, float *y)
{
    const ffnn_model *m = n->model;
    const float *in = x; /* [rows, layer.in] */
    ffnn_status st = FFNN_OK;
    for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
        const ffnn_layer *l = &m->layers[i];
        float *z = i == m->layer_count - 1 ? y : ln->act[i % 2]; /* [rows, out] */
        const float *W = n->params + l->weight_offset;           /* [out, fan_in] */
        const float *b = l->has_bias ? n->params + l->bias_offset : NULL;
        if (l->kind == FFNN_LAYER_DENSE && n->packed)
            st = p->ops->packed->dense_forward_packed(ln->ctx, in, n->packed + n->packed_at[i],
                                                      b, z, rows, l->in, l->out);
        else if (l->kind == FFNN_LAYER_DENSE)
            st = p->ops->dense_forward(ln->ctx, in, W, b, z, rows, l->in, l->out);
        else if (l->kind == FFNN_LAYER_EMBEDDING)
            st = p->ops->embedding_forward(ln->ctx, in, W, z, rows, &l->spec.embedding);
        else
            st = p->ops->local1d_forward(ln->ctx, in, W, b, z, rows, l->in, l->spec.local1d.R,
                                         l->spec.local1d.padding, FFNN_ACT_IDENTITY);
        if (st == FFNN_OK && l->act != FFNN_ACT_IDENTITY)
            st = p->ops->activation_forward(ln->ctx, l->act, l->act_param, z, z, rows * l->out);
        in = z;
    }
    return st;
}

/* x [rows, in] (host) in net n's units: into buf with its standardisation, or x
 * itself (standardize 0, or no standardisation). */
static const float *net_input(const net *n, int standardize, const float *x, size_t rows,
                              float *buf)
{
    const ffnn_model *m = n->model;
    const size_t in = m->input_size;
    if (!standardize || !m->input_mean)
        return x;
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < in; j++)
            buf[r * in + j] = (x[r * in + j] - m->input_mean[j]) / m->input_scale[j];
    return buf;
}

/* Ensemble: member k's outputs o [rows, out] (host) read as the loss reads them
 * (written), added into sum [rows, out] in member order (member 0 copied); after
 * the last member the sum is divided by the member count. */
static void accumulate(const ffnn_predictor *p, int k, float *o, size_t rows, float *sum)
{
    const size_t count = rows * p->out;
    ffnn_predict_read_rows(p->nets[k].model, p->loss, o, rows);
    if (k == 0)
        memcpy(sum, o, count * sizeof *sum);
    else
        for (size_t i = 0; i < count; i++)
            sum[i] += o[i];
    if (k == p->net_count - 1)
        for (size_t i = 0; i < count; i++)
            sum[i] /= (float)p->net_count;
}

/* Lane k's share of the job (host memory): pieces of its rows taken one at a
 * time from the job's counter until none is left, each lane_rows rows at a
 * time through every net (an ensemble's members summed, then averaged). Which
 * lane runs a piece changes no bit (a row's outputs do not depend on its
 * neighbours). A failed piece ends the job for every lane. */
static void run_lane(void *user, int k)
{
    ffnn_predictor *p = user;
    lane *ln = &p->lanes[k];
    const size_t n = p->job_pieces;
    ln->st = FFNN_OK;
    for (size_t s; ln->st == FFNN_OK &&
                   (s = atomic_fetch_add_explicit(&p->job_next, 1, memory_order_relaxed)) < n;) {
        const size_t r0 = p->job_rows * s / n, r1 = p->job_rows * (s + 1) / n;
        for (size_t first = r0; ln->st == FFNN_OK && first < r1; first += p->lane_rows) {
            const size_t rows = r1 - first < p->lane_rows ? r1 - first : p->lane_rows;
            float *y = p->job_y + first * p->out; /* [rows, out] */
            for (int j = 0; j < p->net_count && ln->st == FFNN_OK; j++) {
                const float *xr = net_input(&p->nets[j], p->job_standardize,
                                            p->job_x + first * p->in, rows, ln->host_x);
                float *yj = p->ensemble ? ln->member_y : y;
                ln->st = forward_chunk(p, &p->nets[j], ln, xr, rows, yj);
                if (ln->st == FFNN_OK && p->ensemble)
                    accumulate(p, j, yj, rows, y);
            }
        }
    }
    if (ln->st != FFNN_OK)
        atomic_store_explicit(&p->job_next, n, memory_order_relaxed);
}

/* Lane k's share of the output columns of layer col_layer, then its activation
 * on those columns, row by row (elementwise: the same bits however cut). */
static void run_lane_columns(void *user, int k)
{
    ffnn_predictor *p = user;
    lane *ln = &p->lanes[k];
    const ffnn_layer *l = p->col_layer;
    const float *b = l->has_bias ? p->col_net->params + l->bias_offset : NULL;
    size_t j0 = 0, j1 = 0;
    ln->st = p->ops->packed->dense_forward_packed_part(ln->ctx, p->col_in, p->col_packed, b,
                                                       p->col_z, p->col_rows, l->in, l->out,
                                                       k, p->job_slices, &j0, &j1);
    if (ln->st == FFNN_OK && l->act != FFNN_ACT_IDENTITY && j1 > j0)
        for (size_t r = 0; r < p->col_rows && ln->st == FFNN_OK; r++) {
            float *zr = p->col_z + r * l->out + j0; /* [j1 - j0] */
            ln->st = p->ops->activation_forward(ln->ctx, l->act, l->act_param, zr, zr, j1 - j0);
        }
}

/* Lanes to split `work` multiply-adds by columns over: 1 .. lane_count. */
static int column_parts(const ffnn_predictor *p, size_t work)
{
    const size_t parts = work / p->column_min_work;
    return parts < 1 ? 1 : parts > (size_t)p->lane_count ? p->lane_count : (int)parts;
}

/* The first of the lanes' statuses that failed, or FFNN_OK. */
static ffnn_status lanes_status(const ffnn_predictor *p)
{
    for (int k = 0; k < p->job_slices; k++)
        if (p->lanes[k].st != FFNN_OK)
            return k == 0 ? p->lanes[0].st /* the message is this thread's */
                          : ffnn_fail(p->lanes[k].st, "predictor: lane %d of %d failed "
                                      "(status %d)", k, p->job_slices, (int)p->lanes[k].st);
    return FFNN_OK;
}

/* Few rows split by columns: net n on x [rows, in] -> y [rows, out] (host),
 * lane_rows rows at a time through lane 0's buffers, one pool job per layer (its
 * join the barrier between layers) on column_parts lanes for that layer's work.
 * Every output is the dot product the row split computes, in the same order:
 * the same bits. */
static ffnn_status forward_columns(ffnn_predictor *p, const net *n, const float *x, size_t rows,
                                   int standardize, float *y)
{
    const ffnn_model *m = n->model;
    const size_t in = p->in, out = p->out;
    lane *ln = &p->lanes[0];
    ffnn_status st = FFNN_OK;
    p->col_net = n;
    for (size_t first = 0; st == FFNN_OK && first < rows; first += p->lane_rows) {
        const size_t count = rows - first < p->lane_rows ? rows - first : p->lane_rows;
        p->col_in = net_input(n, standardize, x + first * in, count, ln->host_x);
        p->col_rows = count;
        for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
            p->col_layer = &m->layers[i];
            p->job_slices = column_parts(p, count * m->layers[i].in * m->layers[i].out);
            p->col_packed = n->packed + n->packed_at[i];
            p->col_z = i == m->layer_count - 1 ? y + first * out : ln->act[i % 2];
            ffnn_pool_run(p->pool, p->job_slices, run_lane_columns, p);
            st = lanes_status(p);
            p->col_in = p->col_z;
        }
    }
    return st;
}

/* cuda: net n on chunks of max_batch rows uploaded, run, downloaded. */
static ffnn_status forward_device(ffnn_predictor *p, const net *n, const float *x, size_t batch,
                                  int standardize, float *y)
{
    const size_t in = p->in, out = p->out;
    lane *ln = &p->lanes[0];
    ffnn_status st = FFNN_OK;
    for (size_t first = 0; st == FFNN_OK && first < batch; first += p->max_batch) {
        size_t rows = batch - first < p->max_batch ? batch - first : p->max_batch;
        const float *xr = net_input(n, standardize, x + first * in, rows, ln->host_x);
        if ((st = p->ops->upload(ln->ctx, p->dev_x, xr, rows * in * sizeof(float))) == FFNN_OK &&
            (st = forward_chunk(p, n, ln, p->dev_x, rows, p->dev_y)) == FFNN_OK)
            st = p->ops->download(ln->ctx, y + first * out, p->dev_y, rows * out * sizeof(float));
    }
    return st;
}

/* A chunk of rows <= max_batch split by columns: the net, or each member into
 * member_y, then summed into y. */
static ffnn_status columns_all(ffnn_predictor *p, const float *x, size_t rows, int standardize,
                               float *y)
{
    ffnn_status st = FFNN_OK;
    for (int k = 0; k < p->net_count && st == FFNN_OK; k++) {
        float *yk = p->ensemble ? p->member_y : y;
        st = forward_columns(p, &p->nets[k], x, rows, standardize, yk);
        if (st == FFNN_OK && p->ensemble)
            accumulate(p, k, yk, rows, y);
    }
    return st;
}

/* cuda, an ensemble: each chunk of max_batch rows through every member. */
static ffnn_status forward_device_ensemble(ffnn_predictor *p, const float *x, size_t batch,
                                           float *y)
{
    ffnn_status st = FFNN_OK;
    for (size_t first = 0; st == FFNN_OK && first < batch; first += p->max_batch) {
        size_t rows = batch - first < p->max_batch ? batch - first : p->max_batch;
        for (int k = 0; k < p->net_count && st == FFNN_OK; k++) {
            st = forward_device(p, &p->nets[k], x + first * p->in, rows, 1, p->member_y);
            if (st == FFNN_OK)
                accumulate(p, k, p->member_y, rows, y + first * p->out);
        }
    }
    return st;
}

/* Row pieces for a job of `rows` rows (by_work: its SLICE_MIN_WORK units) on
 * `lanes` lanes: PIECES_PER_LANE each where the rows and work allow, at least one
 * a lane. */
static size_t pieces(size_t rows, size_t by_work, int lanes)
{
    size_t n = (size_t)lanes * PIECES_PER_LANE;
    n = n < by_work ? n : by_work;
    n = n < rows / PIECE_MIN_ROWS ? n : rows / PIECE_MIN_ROWS;
    return n > (size_t)lanes ? n : (size_t)lanes;
}

ffnn_status ffnn_predictor_forward_raw(ffnn_predictor *p, const float *x, size_t batch,
                                       int standardize, float *y)
{
    standardize |= p->ensemble; /* each member's own, always */
    if (p->dev_x)
        return p->ensemble ? forward_device_ensemble(p, x, batch, y)
                           : forward_device(p, &p->nets[0], x, batch, standardize, y);
    const size_t in = p->in, out = p->out;
    for (size_t first = 0; first < batch; first += p->max_batch) {
        const size_t rows = batch - first < p->max_batch ? batch - first : p->max_batch;
        const size_t by_work = rows * p->work_per_row / SLICE_MIN_WORK;
        size_t slices = by_work < (size_t)p->lane_count ? by_work : (size_t)p->lane_count;
        slices = slices < rows ? slices : rows;
        const size_t chunk = rows < p->lane_rows ? rows : p->lane_rows; /* forward_columns' */
        ffnn_status st;
        p->job_x = x + first * in, p->job_y = y + first * out, p->job_rows = rows;
        p->job_slices = slices ? (int)slices : 1, p->job_standardize = standardize;
        p->job_pieces = pieces(rows, by_work, p->job_slices);
        atomic_store_explicit(&p->job_next, 0, memory_order_relaxed); /* the pool publishes */
        if (p->columns_ok && column_parts(p, chunk * p->widest_work) > p->job_slices) {
            st = columns_all(p, p->job_x, rows, standardize, p->job_y); /* few rows */
        } else {
            ffnn_pool_run(p->pool, p->job_slices, run_lane, p);
            st = lanes_status(p);
        }
        if (st != FFNN_OK)
            return st;
    }
    return FFNN_OK;
}

void ffnn_predictor_set_column_work(ffnn_predictor *p, size_t min_work)
{
    p->column_min_work = min_work ? min_work : 1;
}

int ffnn_predictor_is_ensemble(const ffnn_predictor *p)
{
    return p->ensemble;
}

ffnn_status ffnn_predictor_forward(ffnn_predictor *p, const float *x, size_t batch, float *y)
{
    if (!p || (batch && (!x || !y)))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_predictor_forward: NULL argument");
    if (p->ensemble)
        return ffnn_model_refuse_ensemble(p->model, "ffnn_predictor_forward (the network "
                                          "alone; ffnn_predictor_predict averages members)");
    return ffnn_predictor_forward_raw(p, x, batch, 0, y);
}
