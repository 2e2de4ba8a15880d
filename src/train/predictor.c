/* predictor.c - the inference object: a read-only model run forward on a backend
 * context of its own (omp on the CPU, cuda when asked) with its own workspace.
 * The layer loop is the trainer's forward (strategy/step.c forward) without
 * dropout: z = the layer's linear map, then its activation in place. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"
#include "core/model.h"
#include "train/predictor.h"

struct ffnn_predictor {
    const ffnn_model *model;     /* shared, read only                              */
    const ffnn_backend_ops *ops;
    void *ctx;                   /* the backend context (its own pack buffers)     */
    ffnn_device device;          /* FFNN_DEVICE_CPU or FFNN_DEVICE_CUDA            */
    size_t max_batch;            /* rows per forward pass (larger calls chunked)   */
    const float *params;         /* [parameter_count]: model->params on the CPU, a
                                    device copy on cuda                           */
    float *dev_params;           /* the device copy (cuda), else NULL              */
    float *act[2];               /* [max_batch, widest] ping-pong, device memory   */
    float *dev_x, *dev_y;        /* cuda: [max_batch, in], [max_batch, out]        */
    float *host_x;               /* [max_batch, in]: standardised rows (host)      */
    float *packed;               /* the dense layers' W packed once (backends with
                                    dense_pack: omp), else NULL                   */
    size_t *packed_at;           /* [layer_count] offset of layer i's in packed     */
};

static size_t widest_layer(const ffnn_model *m)
{
    size_t w = m->input_size;
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].out > w)
            w = m->layers[i].out;
    return w;
}

static ffnn_status pick(ffnn_device device, const ffnn_backend_ops **ops, ffnn_device *used)
{
    const ffnn_backend_ops *cuda = ffnn_cuda_backend();
    if (device == FFNN_DEVICE_AUTO)
        device = cuda && ffnn_cuda_device_count() > 0 ? FFNN_DEVICE_CUDA : FFNN_DEVICE_CPU;
    if (device == FFNN_DEVICE_CUDA) {
        if (!cuda)
            return ffnn_fail(FFNN_ERR_UNSUPPORTED, "predictor: device cuda: this build of ffnn "
                             "has no CUDA (nvcc was not found at build time); use cpu");
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

static ffnn_status dev_alloc(ffnn_predictor *p, size_t floats, float **out)
{
    void *ptr = NULL;
    ffnn_status st = p->ops->alloc(p->ctx, floats * sizeof(float), &ptr);
    *out = ptr;
    return st;
}

/* The dense layers' weights in the matmul's layout, packed once (omp: the panels
 * of W^T that its dense_forward packs on every call). */
static ffnn_status pack_weights(ffnn_predictor *p)
{
    const ffnn_model *m = p->model;
    size_t total = 0;
    ffnn_status st = FFNN_OK;
    if (!p->ops->dense_pack || !p->ops->dense_forward_packed || !p->ops->dense_pack_floats)
        return FFNN_OK;
    if (!(p->packed_at = malloc((size_t)m->layer_count * sizeof *p->packed_at)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "predictor: out of memory");
    for (int i = 0; i < m->layer_count; i++)
        if (m->layers[i].kind == FFNN_LAYER_DENSE) {
            p->packed_at[i] = total;
            total += p->ops->dense_pack_floats(p->ctx, m->layers[i].in, m->layers[i].out);
        }
    if (total == 0)
        return FFNN_OK;
    if ((st = dev_alloc(p, total, &p->packed)) != FFNN_OK)
        return st;
    for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
        const ffnn_layer *l = &m->layers[i];
        if (l->kind == FFNN_LAYER_DENSE)
            st = p->ops->dense_pack(p->ctx, p->params + l->weight_offset, l->in, l->out,
                                    p->packed + p->packed_at[i]);
    }
    return st;
}

static ffnn_status allocate(ffnn_predictor *p)
{
    const ffnn_model *m = p->model;
    const size_t rows = p->max_batch, w = widest_layer(m);
    const size_t out = m->layers[m->layer_count - 1].out;
    ffnn_status st;
    if (rows > SIZE_MAX / sizeof(float) / w)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "predictor: max_batch %zu x %zu units overflows",
                         rows, w);
    if ((st = dev_alloc(p, rows * w, &p->act[0])) != FFNN_OK ||
        (st = dev_alloc(p, rows * w, &p->act[1])) != FFNN_OK)
        return st;
    if (m->input_mean && !(p->host_x = malloc(rows * m->input_size * sizeof(float))))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "predictor: out of memory for %zu rows", rows);
    if (!(p->ops->caps & FFNN_CAP_DEVICE)) { /* host memory: read the model's arena */
        p->params = m->params;
        return pack_weights(p);
    }
    if ((st = dev_alloc(p, m->parameter_count, &p->dev_params)) != FFNN_OK ||
        (st = dev_alloc(p, rows * m->input_size, &p->dev_x)) != FFNN_OK ||
        (st = dev_alloc(p, rows * out, &p->dev_y)) != FFNN_OK ||
        (st = p->ops->upload(p->ctx, p->dev_params, m->params,
                             m->parameter_count * sizeof(float))) != FFNN_OK ||
        (st = p->ops->synchronize(p->ctx)) != FFNN_OK)
        return st;
    p->params = p->dev_params;
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
    if (m->stale)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_predictor_create: the model is in "
                         "training and its trainer holds newer weights; call "
                         "ffnn_trainer_sync_model first");
    ffnn_predictor *p = calloc(1, sizeof *p);
    if (!p)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory creating a predictor");
    p->model = m;
    p->max_batch = max_batch;
    const ffnn_backend_options options = {threads, FFNN_MATMUL_TILED, FFNN_PRECISION_FP32, 0, 0};
    if ((st = pick(device, &p->ops, &p->device)) != FFNN_OK ||
        (st = p->ops->create(&options, &p->ctx)) != FFNN_OK ||
        (st = allocate(p)) != FFNN_OK) {
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
    if (p->ctx) {
        void *bufs[] = {p->act[0], p->act[1], p->dev_params, p->dev_x, p->dev_y, p->packed};
        for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
            if (bufs[i])
                p->ops->release(p->ctx, bufs[i]);
        p->ops->destroy(p->ctx);
    }
    free(p->host_x);
    free(p->packed_at);
    free(p);
}

const ffnn_model *ffnn_predictor_model(const ffnn_predictor *p) { return p ? p->model : NULL; }

int ffnn_predictor_threads(const ffnn_predictor *p)
{
    return p && p->device == FFNN_DEVICE_CPU ? p->ops->threads(p->ctx) : 0;
}

/* The network on rows <= max_batch rows already in the context's memory:
 * x [rows, in] -> y [rows, out] (both backend pointers). */
static ffnn_status forward_chunk(ffnn_predictor *p, const float *x, size_t rows, float *y)
{
    const ffnn_model *m = p->model;
    const float *in = x; /* [rows, layer.in] */
    ffnn_status st = FFNN_OK;
    for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
        const ffnn_layer *l = &m->layers[i];
        float *z = i == m->layer_count - 1 ? y : p->act[i % 2]; /* [rows, out] */
        const float *W = p->params + l->weight_offset;          /* [out, fan_in] */
        const float *b = l->has_bias ? p->params + l->bias_offset : NULL;
        if (l->kind == FFNN_LAYER_DENSE && p->packed)
            st = p->ops->dense_forward_packed(p->ctx, in, p->packed + p->packed_at[i], b, z,
                                              rows, l->in, l->out);
        else if (l->kind == FFNN_LAYER_DENSE)
            st = p->ops->dense_forward(p->ctx, in, W, b, z, rows, l->in, l->out);
        else
            st = p->ops->local1d_forward(p->ctx, in, W, b, z, rows, l->in, l->spec.local1d.R,
                                         l->spec.local1d.padding, FFNN_ACT_IDENTITY);
        if (st == FFNN_OK && l->act != FFNN_ACT_IDENTITY)
            st = p->ops->activation_forward(p->ctx, l->act, l->act_param, z, z, rows * l->out);
        in = z;
    }
    return st;
}

ffnn_status ffnn_predictor_forward_raw(ffnn_predictor *p, const float *x, size_t batch,
                                       int standardize, float *y)
{
    const ffnn_model *m = p->model;
    const size_t in = m->input_size, out = m->layers[m->layer_count - 1].out;
    ffnn_status st = FFNN_OK;
    for (size_t first = 0; st == FFNN_OK && first < batch; first += p->max_batch) {
        size_t rows = batch - first < p->max_batch ? batch - first : p->max_batch;
        const float *xr = x + first * in; /* [rows, in] host */
        float *yr = y + first * out;      /* [rows, out] host */
        if (standardize && m->input_mean) {
            for (size_t r = 0; r < rows; r++)
                for (size_t j = 0; j < in; j++)
                    p->host_x[r * in + j] =
                        (xr[r * in + j] - m->input_mean[j]) / m->input_scale[j];
            xr = p->host_x;
        }
        if (!p->dev_x) { /* host memory */
            st = forward_chunk(p, xr, rows, yr);
            continue;
        }
        if ((st = p->ops->upload(p->ctx, p->dev_x, xr, rows * in * sizeof(float))) == FFNN_OK &&
            (st = forward_chunk(p, p->dev_x, rows, p->dev_y)) == FFNN_OK)
            st = p->ops->download(p->ctx, yr, p->dev_y, rows * out * sizeof(float));
    }
    return st;
}

ffnn_status ffnn_predictor_forward(ffnn_predictor *p, const float *x, size_t batch, float *y)
{
    if (!p || (batch && (!x || !y)))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_predictor_forward: NULL argument");
    return ffnn_predictor_forward_raw(p, x, batch, 0, y);
}
