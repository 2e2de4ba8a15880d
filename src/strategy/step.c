/* step.c - one training step on a backend, op by op (step.h). */
#include <stdlib.h>
#include <string.h>

#include "core/dropout.h"
#include "core/error.h"
#include "core/optim.h"
#include "data/dataset.h"
#include "strategy/step.h"

ffnn_optimizer_step ffnn_run_update_at(const ffnn_run *r, uint64_t t)
{
    return ffnn_optimizer_step_lr(r->cfg, t,
                                  ffnn_schedule_lr(r->cfg, r->plateau, t, r->steps_per_epoch));
}

size_t ffnn_step_batch(size_t n, size_t batch_size, size_t s)
{
    size_t first = s * batch_size;
    return n - first < batch_size ? n - first : batch_size;
}

/* Layer i's dropout on n values of in into out at step t (the same call drops
 * the forward's outputs and the backward's gradients). */
static ffnn_status layer_dropout(ffnn_run *r, int i, uint64_t t, const float *in, float *out,
                                 size_t n)
{
    const double p = r->model->layers[i].dropout;
    /* a rank's rows start at row dropout_row0 of the step's batch: its elements are
     * the single-process run's elements from dropout_row0 * width on */
    const uint64_t key = ffnn_dropout_key_at(ffnn_dropout_key(r->cfg->seed, t, i),
                                             (uint64_t)r->dropout_row0 * r->model->layers[i].out);
    return r->ops->dropout(r->ctx, in, out, n, key, ffnn_dropout_threshold(p),
                           ffnn_dropout_scale(p));
}

/* 1 when step t runs the mixed-precision pipeline (step.h ffnn_mixed): training
 * steps with the bf16 buffers made (every layer dense and fused: per_op.c). */
static int mixed_step(const ffnn_run *r, uint64_t t)
{
    return r->mixed != NULL && t > 0;
}

/* The forward pass in bf16 (ffnn_mixed): x16 = bf16(x) (unless gathered as bf16:
 * x16_gathered); each layer's matmul reads the bf16 shadow of its weights and
 * writes act16[i] (the last layer: the fp32 logits act[L-1]). */
static ffnn_status forward_bf16(ffnn_run *r, size_t batch, float **output, int x16_gathered,
                                int layers)
{
    const ffnn_model *m = r->model;
    ffnn_mixed *mx = r->mixed;
    ffnn_status st = ffnn_mixed_sync(r);
    if (st != FFNN_OK ||
        (!x16_gathered && (st = r->ops->bf16->to_bf16(r->ctx, r->x, mx->x16, batch, m->input_size,
                                                m->input_size)) != FFNN_OK))
        return st;
    const uint16_t *in = mx->x16; /* [batch, layer.in] */
    for (int i = 0; i < layers; i++) {
        const ffnn_layer *l = &m->layers[i];
        const int last = i == m->layer_count - 1;
        if ((st = r->ops->bf16->dense_act_forward_bf16(
                 r->ctx, in, mx->params16 + l->weight_offset,
                 l->has_bias ? r->params + l->bias_offset : NULL,
                 l->has_bias ? mx->params16 + l->bias_offset : NULL, last ? r->act[i] : NULL,
                 last ? NULL : mx->act16[i], batch, l->in, l->out, l->act)))
            return st;
        in = mx->act16[i];
    }
    *output = r->act[m->layer_count - 1];
    return FFNN_OK;
}

static int has_side(const ffnn_run *r);
static ffnn_status side_open(ffnn_run *r, int *pending);
static ffnn_status side_close(ffnn_run *r, ffnn_status st);

/* Layer i's input prepared for its weight gradient (backend.h prepare_xt: x^T
 * [in, batch], or tf32x3's split x^T) that the training step makes where the
 * layer's weight gradient takes it at this batch (backend.h dense_backward_wants_xt;
 * asked per step: a short last batch may not): layer 0's r->xt, written by the
 * step's gather, a hidden layer's r->act_t[i - 1], written beside the forward; else
 * NULL. Only the step's own gather and forward write them (queue_step): a caller of
 * ffnn_step_forward / _backward gets none. */
static float *layer_xt(const ffnn_run *r, int i, size_t batch)
{
    float *xt = i == 0 ? r->xt : r->act_t ? r->act_t[i - 1] : NULL;
    const ffnn_layer *l = &r->model->layers[i];
    return xt && (size_t)r->ops->xt->dense_backward_wants_xt(r->ctx, batch, l->in, l->out) ==
                     r->xt_parts
               ? xt
               : NULL;
}

/* Forward pass of `batch` rows already gathered into r->x (or, for a mixed step
 * with x16_gathered, into r->mixed->x16) through the first `layers` layers (all
 * but the last for a head step: the head op computes the logits); returns the
 * last layer's output buffer. xt_side (or NULL: none made): after layer i's
 * forward, act[i]^T into r->act_t[i] on the second stream where layer i + 1 takes
 * it (layer_xt); *xt_side is then 1 until a join (run_head, backward). */
static ffnn_status forward(ffnn_run *r, size_t batch, uint64_t t, float **output,
                           int x16_gathered, int layers, int *xt_side)
{
    const ffnn_model *m = r->model;
    const float *in = r->x; /* [batch, layer.in] */
    ffnn_status st;
    if (mixed_step(r, t))
        return forward_bf16(r, batch, output, x16_gathered, layers);
    for (int i = 0; i < layers; i++) {
        const ffnn_layer *l = &m->layers[i];
        const float *W = r->params + l->weight_offset; /* [out, fan_in] */
        const float *b = l->has_bias ? r->params + l->bias_offset : NULL;
        if (r->fused && l->kind == FFNN_LAYER_DENSE) { /* bias + act in the epilogue */
            if ((st = r->ops->fused->dense_act_forward(r->ctx, in, W, b, r->act[i], batch, l->in,
                                                l->out, l->act)))
                return st;
            float *act_t = xt_side ? layer_xt(r, i + 1, batch) : NULL;
            if (act_t && ((st = side_open(r, xt_side)) != FFNN_OK ||
                          (st = side_close(r, r->ops->xt->prepare_xt(r->ctx, r->act[i], batch,
                                                                 l->out, act_t))) != FFNN_OK))
                return st;
            in = r->act[i];
            continue;
        }
        /* z [batch, out]: in place, or kept in pre[i] for a backward that reads it */
        float *z = r->pre[i] ? r->pre[i] : r->act[i];
        switch (l->kind) {
        case FFNN_LAYER_DENSE:
            st = r->ops->dense_forward(r->ctx, in, W, b, z, batch, l->in, l->out);
            break;
        case FFNN_LAYER_LOCAL1D: /* the activation runs below, as for dense layers */
            st = r->ops->local1d_forward(r->ctx, in, W, b, z, batch, l->in,
                                         l->spec.local1d.R, l->spec.local1d.padding,
                                         FFNN_ACT_IDENTITY);
            break;
        default:
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "layer %d: unknown kind %d", i,
                           (int)l->kind);
        }
        if (st != FFNN_OK)
            return st;
        if ((l->act != FFNN_ACT_IDENTITY || z != r->act[i]) &&
            (st = r->ops->activation_forward(r->ctx, l->act, l->act_param, z, r->act[i],
                                             batch * l->out)))
            return st;
        in = r->act[i];
        if (t > 0 && l->has_dropout) { /* training: the next layer sees d = dropout(a) */
            if ((st = layer_dropout(r, i, t, r->act[i], r->drop[i], batch * l->out)))
                return st;
            in = r->drop[i];
        }
    }
    *output = r->act[m->layer_count - 1];
    return FFNN_OK;
}

ffnn_status ffnn_step_forward(ffnn_run *r, size_t batch, uint64_t t, float **output)
{
    return forward(r, batch, t, output, 0, r->model->layer_count, NULL);
}

/* ---- the head: the output layer and its loss as one op (step.h) ---- */

int ffnn_step_head_applies(const ffnn_run *r)
{
    const ffnn_model *m = r->model;
    if (r->ops->head == NULL || !r->fused || r->comm != NULL ||
        r->cfg->loss != FFNN_LOSS_SOFTMAX_CE || r->train.targets != NULL ||
        r->train.labels == NULL || r->train.weights != NULL || m->layer_count < 2)
        return 0;
    const ffnn_layer *top = &m->layers[m->layer_count - 1], *below = top - 1;
    return top->kind == FFNN_LAYER_DENSE && below->kind == FFNN_LAYER_DENSE &&
           top->act == FFNN_ACT_IDENTITY && !top->has_dropout && !below->has_dropout &&
           top->out <= FFNN_HEAD_CMAX && top->out * top->in <= FFNN_HEAD_MAX_WEIGHTS &&
           top->in % 4 == 0 && top->weight_offset % 4 == 0 &&
           (below->act == FFNN_ACT_IDENTITY || below->act == FFNN_ACT_RELU ||
            below->act == FFNN_ACT_SIGMOID || below->act == FFNN_ACT_TANH);
}

ffnn_status ffnn_step_head_create(ffnn_run *r)
{
    r->head_scratch = NULL;
    if (!ffnn_step_head_applies(r))
        return FFNN_OK;
    const ffnn_layer *top = &r->model->layers[r->model->layer_count - 1];
    const size_t n = ffnn_head_scratch_floats(r->cfg->batch_size, top->in, top->out);
    void *p = NULL;
    ffnn_status st = r->ops->alloc(r->ctx, n * sizeof(float), &p);
    if (st == FFNN_OK)
        r->head_scratch = (float *)p;
    return st;
}

void ffnn_step_head_free(ffnn_run *r)
{
    if (r->head_scratch != NULL)
        r->ops->release(r->ctx, r->head_scratch);
    r->head_scratch = NULL;
}

ffnn_status ffnn_step_xt_create(ffnn_run *r)
{
    const ffnn_layer *l0 = &r->model->layers[0];
    const size_t B = r->cfg->batch_size;
    r->xt = NULL;
    r->xt_parts = 0;
    if (!r->ops->xt || !r->fused || r->mixed ||
        l0->kind != FFNN_LAYER_DENSE || l0->has_dropout)
        return FFNN_OK;
    const int parts = r->ops->xt->dense_backward_wants_xt(r->ctx, B, l0->in, l0->out);
    if (parts < 1)
        return FFNN_OK;
    r->xt_parts = (size_t)parts;
    void *p = NULL;
    ffnn_status st = r->ops->alloc(r->ctx, r->xt_parts * B * l0->in * sizeof(float), &p);
    if (st != FFNN_OK)
        return st;
    r->xt = (float *)p;
    /* the hidden layers' inputs, transposed beside the forward (not the head's
     * layer: the head op reads h as it is) */
    const ffnn_model *m = r->model;
    const int last = m->layer_count - 1 - (r->head_scratch != NULL);
    for (int i = 1; i <= last && has_side(r); i++) {
        const ffnn_layer *l = &m->layers[i];
        if (l->kind != FFNN_LAYER_DENSE || m->layers[i - 1].has_dropout ||
            (size_t)r->ops->xt->dense_backward_wants_xt(r->ctx, B, l->in, l->out) != r->xt_parts)
            continue;
        if (!r->act_t && !(r->act_t = calloc((size_t)m->layer_count, sizeof *r->act_t))) {
            ffnn_step_xt_free(r);
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
        }
        p = NULL;
        if ((st = r->ops->alloc(r->ctx, r->xt_parts * B * l->in * sizeof(float), &p)) !=
            FFNN_OK) {
            ffnn_step_xt_free(r);
            return st;
        }
        r->act_t[i - 1] = (float *)p;
    }
    return FFNN_OK;
}

void ffnn_step_xt_free(ffnn_run *r)
{
    if (r->xt != NULL)
        r->ops->release(r->ctx, r->xt);
    r->xt = NULL;
    for (int i = 0; r->act_t && i < r->model->layer_count; i++)
        if (r->act_t[i] != NULL)
            r->ops->release(r->ctx, r->act_t[i]);
    free(r->act_t);
    r->act_t = NULL;
    r->xt_parts = 0;
}

/* 1 when training step t runs the head op. */
static int head_step(const ffnn_run *r, uint64_t t)
{
    return r->head_scratch != NULL && t > 0;
}

/* 1 when the backend has a second stream (backend.h side_begin, side_end, side_join). */
static int has_side(const ffnn_run *r)
{
    return r->ops->side != NULL;
}

/* The ops queued after side_open go to the second stream (*pending set to 1: the
 * caller joins it) until side_close, which returns st, or side_end's error. */
static ffnn_status side_open(ffnn_run *r, int *pending)
{
    const ffnn_status st = r->ops->side->side_begin(r->ctx);
    if (st == FFNN_OK)
        *pending = 1;
    return st;
}

static ffnn_status side_close(ffnn_run *r, ffnn_status st)
{
    const ffnn_status end = r->ops->side->side_end(r->ctx);
    return st != FFNN_OK ? st : end;
}

/* 1 when the head's sums run apart (softmax_ce_head_sums, on the second stream). */
static int head_sums_apart(const ffnn_run *r)
{
    return r->ops->head && has_side(r);
}

/* The head of step t over `batch` rows whose losses go to row `first` of the
 * epoch: the last layer's dW, db, the layer below's dz (into grad_buf[0], or
 * grad16[0] for a mixed step, rows of its width) and its db. Where the backend has
 * softmax_ce_head_sums and the second stream, the sums (dW, db and the layer below's
 * db, which only the update reads) go to the second stream, concurrently with the
 * layer below's backward: *side is then 1 and the caller joins before the update;
 * with sgd (r->fused_sgd) they also update the last layer and the layer below's
 * bias (update_rest leaves those). */
static ffnn_status run_head(ffnn_run *r, size_t batch, uint64_t t, size_t first,
                            const ffnn_optimizer_step *sgd, int *side, int *xt_side)
{
    const ffnn_model *m = r->model;
    const ffnn_layer *top = &m->layers[m->layer_count - 1], *below = top - 1;
    const int bf16 = mixed_step(r, t);
    const void *h = bf16 ? (const void *)r->mixed->act16[m->layer_count - 2]
                         : (const void *)r->act[m->layer_count - 2];
    const void *W = bf16 ? (const void *)(r->mixed->params16 + top->weight_offset)
                         : (const void *)(r->params + top->weight_offset);
    void *dh = bf16 ? (void *)r->mixed->grad16[0] : (void *)r->grad_buf[0];
    float *dW = r->grads + top->weight_offset;
    float *db = top->has_bias ? r->grads + top->bias_offset : NULL;
    float *dh_db = below->has_bias ? r->grads + below->bias_offset : NULL;
    const int later = head_sums_apart(r);
    ffnn_status st = r->ops->head->softmax_ce_head(
        r->ctx, bf16, h, W, top->has_bias ? r->params + top->bias_offset : NULL, r->y, batch,
        top->in, top->out, below->act, later ? NULL : dW, db, dh, dh_db,
        r->train.row_loss + first, r->train.row_correct + first, r->head_scratch);
    if (st != FFNN_OK || !later)
        return st;
    /* the forward's transposes joined first, so the layers below do not wait for
     * the sums (the second stream is one queue) */
    if (*xt_side && (st = r->ops->side->side_join(r->ctx)) != FFNN_OK)
        return st;
    *xt_side = 0;
    if ((st = side_open(r, side)) != FFNN_OK)
        return st;
    const ffnn_head_sgd update = {r->params + top->weight_offset,
                                  db ? r->params + top->bias_offset : NULL,
                                  dh_db ? r->params + below->bias_offset : NULL,
                                  sgd ? sgd->lr : 0.0f};
    st = r->ops->head->softmax_ce_head_sums(r->ctx, batch, top->in, top->out, dW, db, dh_db,
                                      r->head_scratch, sgd ? &update : NULL);
    return side_close(r, st);
}

/* 1 when training step t gathers its batch straight into bf16 (x16). */
static int gathers_bf16(const ffnn_run *r, uint64_t t)
{
    return mixed_step(r, t) && r->ops->bf16;
}

/* The gather of a training step t into r's batch buffers, or (into not NULL) into
 * those: x, or straight into bf16 (x16) for a mixed step. *x16: 1 when it gathered
 * into x16. */
static ffnn_status gather_step(ffnn_run *r, const ffnn_gather_source *src, const int32_t *index,
                               size_t batch, uint64_t t, const ffnn_batch_buffers *into,
                               int *x16)
{
    *x16 = gathers_bf16(r, t);
    int32_t *y = into ? into->y : r->y;
    float *tgt = into ? into->tgt : r->tgt;
    if (*x16)
        return r->ops->bf16->gather_bf16(r->ctx, src, index, batch,
                                   into ? into->x16 : r->mixed->x16, y, tgt);
    float *x = into ? into->x : r->x;
    ffnn_status st = r->ops->gather(r->ctx, src, index, batch, x, y, tgt);
    if (st == FFNN_OK && layer_xt(r, 0, batch)) /* x prepared for layer 0's dW */
        st = r->ops->xt->prepare_xt(r->ctx, x, batch, src->features, into ? into->xt : r->xt);
    return st;
}

/* The gradient all-reduce of a backward pass (r->comm): buckets of layers,
 * last layer first, each begun once its layers' gradients are written. */
typedef struct grad_sync {
    ffnn_comm *comm;
    float scale;       /* this rank's share of the batch: its rows / the step's rows */
    void *stream;      /* the backend's native stream (device comms), else NULL       */
    size_t pending;    /* the gradients [layer's weight_offset, pending) not reduced  */
} grad_sync;

/* After layer i's backward: begin the all-reduce of the layers done since the
 * last bucket once they hold FFNN_BUCKET_BYTES, or at the first layer. */
static ffnn_status sync_layer(grad_sync *g, ffnn_run *r, int i)
{
    size_t begin = i == 0 ? 0 : r->model->layers[i].weight_offset;
    if (i != 0 && (g->pending - begin) * sizeof(float) < FFNN_BUCKET_BYTES)
        return FFNN_OK;
    ffnn_status st = g->comm->ops->allreduce_begin(g->comm, r->grads + begin, g->pending - begin,
                                                   g->scale, g->stream);
    g->pending = begin;
    return st;
}

/* Where layer i's backward op writes the bias gradient of the layer below, summed
 * over the dx it writes (r->bias_grad_from_dx; that layer's own op then skips its
 * db), or NULL: no such layer, no bias, or the op does not. */
static float *below_db(const ffnn_run *r, int i)
{
    const ffnn_layer *below = i > 0 ? &r->model->layers[i - 1] : NULL;
    if (!r->bias_grad_from_dx || !r->fused || below == NULL || !below->has_bias ||
        below->kind != FFNN_LAYER_DENSE)
        return NULL;
    return r->grads + below->bias_offset;
}

/* 1 when layer i's bias gradient is summed by an op above it: the head's (layer
 * L-2 of a head step) or layer i + 1's fused dense op (its dx_db: below_db). */
static int db_from_above(const ffnn_run *r, int i, int head)
{
    const ffnn_model *m = r->model;
    if (i + 1 >= m->layer_count || !m->layers[i].has_bias)
        return 0;
    if (head && i == m->layer_count - 2)
        return 1;
    return r->fused && m->layers[i + 1].kind == FFNN_LAYER_DENSE && below_db(r, i + 1) != NULL;
}

static ffnn_status update_range(ffnn_run *r, const ffnn_optimizer_step *update, size_t off,
                                size_t n);

/* Plain SGD inside the backward (r->fused_sgd): what the layers' ops leave to the
 * step - the head's layer (its dW, db summed by the head), every bias whose
 * gradient an op above summed (db_from_above) - but for what the head's sums
 * update themselves (run_head, head_sums_apart). rest_to_update: 1 when there is
 * any; update_rest queues it, once those gradients are written (after the op of
 * layer 1). */
static int rest_param(const ffnn_run *r, int i, int head)
{
    const int top = r->model->layer_count - 1;
    if (head && head_sums_apart(r) && i >= top - 1)
        return 0; /* updated by the head's sums */
    return (head && i == top) || db_from_above(r, i, head);
}

static int rest_to_update(const ffnn_run *r, int head)
{
    for (int i = 0; i < r->model->layer_count; i++)
        if (rest_param(r, i, head))
            return 1;
    return 0;
}

static ffnn_status update_rest(ffnn_run *r, const ffnn_optimizer_step *sgd, int head)
{
    const ffnn_model *m = r->model;
    ffnn_status st = FFNN_OK;
    for (int i = 0; i < m->layer_count && st == FFNN_OK; i++) {
        const ffnn_layer *l = &m->layers[i];
        const size_t nw = l->out * l->fan_in;
        if (!rest_param(r, i, head))
            continue;
        if (head && i == m->layer_count - 1) { /* W and b: one range where adjacent */
            const int joined = l->has_bias && l->bias_offset == l->weight_offset + nw;
            st = update_range(r, sgd, l->weight_offset, nw + (joined ? l->out : 0));
            if (st == FFNN_OK && l->has_bias && !joined)
                st = update_range(r, sgd, l->bias_offset, l->out);
        } else {
            st = update_range(r, sgd, l->bias_offset, l->out);
        }
    }
    return st;
}

/* The update of a step's layers on the second stream, each as soon as its gradients
 * are complete (after its own backward op: the layers above it are done, its db
 * was summed by then), while the layers below run their backward on the main
 * queue; layer 0's update waits for the end of the backward (queue_step). For
 * the update after the backward (not fused_sgd), without clipping or
 * all-reduce, which need every gradient first. */
typedef struct early_plan {
    const ffnn_optimizer_step *update; /* NULL: off                           */
    int from;                          /* layers [from, L) queued so far     */
    int *side;                         /* set to 1 once the second stream has work */
} early_plan;

static ffnn_status update_layers(ffnn_run *r, const ffnn_optimizer_step *update, int lo,
                                 int hi);

/* After layer i's backward op: queue the update of layers [i, e->from) on the side
 * queue (layer 0: left to the caller). */
static ffnn_status queue_early(ffnn_run *r, early_plan *e, int i)
{
    if (e == NULL || e->update == NULL || i == 0)
        return FFNN_OK;
    ffnn_status st = side_open(r, e->side);
    if (st != FFNN_OK)
        return st;
    st = update_layers(r, e->update, i, e->from);
    e->from = i;
    return side_close(r, st);
}

/* 1 when layer i's weight gradient may run on the second stream, beside the layer
 * below's f' and weight gradient (the ops' dw_side; *side then 1: the caller joins
 * before the step ends): layer 1 only, whose dz buffer no later op of the
 * backward writes (layer 0 has no dx) and whose input and weights none touches
 * before the join; not under data parallelism (the all-reduce reads dW on the
 * main stream) nor for a caller without a join (side NULL). */
static int weight_grad_beside(const ffnn_run *r, int i, const grad_sync *sync, int *side)
{
    if (i != 1 || sync != NULL || side == NULL || !has_side(r))
        return 0;
    *side = 1;
    return 1;
}

/* The backward pass in bf16 (ffnn_mixed), from the fp32 d(output) in grad_buf[0]:
 * the output layer's f' in fp32 (its saved output is the fp32 act[L-1]), then one
 * rounding into grad16[0] (rows ffnn_bf16_ld(out) apart: 16-byte rows for the
 * tensor cores); each layer's op writes dW, db (fp32) and the next
 * layer's dz in bf16 (grad16 ping-pong); sync as backward's. No update here: the
 * pipeline's update writes the bf16 shadows too, after the backward (per_op.c). */
static ffnn_status backward_bf16(ffnn_run *r, size_t batch, grad_sync *sync, int head,
                                 early_plan *early, int *side)
{
    const ffnn_model *m = r->model;
    ffnn_mixed *mx = r->mixed;
    const ffnn_layer *top = &m->layers[m->layer_count - 1];
    ffnn_status st;
    int cur = 0; /* grad16[cur] holds dL/dz of layer i (rows dz_ld apart) */
    size_t dz_ld = ffnn_bf16_ld(top->out);
    int db_done = 0; /* layer i's db was summed by the op of layer i + 1 */
    int i = m->layer_count - 1;
    if (head) { /* the head wrote layer L-2's dz (rows of its width) and db */
        dz_ld = top->in;
        db_done = 1;
        i--;
    } else if ((top->act != FFNN_ACT_IDENTITY &&
                (st = r->ops->activation_backward(r->ctx, top->act, top->act_param,
                                                  r->act[m->layer_count - 1], r->grad_buf[0],
                                                  r->grad_buf[0], batch * top->out))) ||
               (st = r->ops->bf16->to_bf16(r->ctx, r->grad_buf[0], mx->grad16[0], batch, top->out,
                                     ffnn_bf16_ld(top->out)))) {
        return st;
    }
    for (; i >= 0; i--) {
        const ffnn_layer *l = &m->layers[i];
        const int has_b = l->has_bias;
        float *dx_db = below_db(r, i);
        const int dw_side = weight_grad_beside(r, i, sync, side);
        if ((st = r->ops->bf16->dense_backward_bf16(
                 r->ctx, i == 0 ? mx->x16 : mx->act16[i - 1], mx->params16 + l->weight_offset,
                 mx->grad16[cur], dz_ld, i == 0 ? NULL : mx->grad16[1 - cur],
                 r->grads + l->weight_offset,
                 has_b && !db_done ? r->grads + l->bias_offset : NULL, dx_db, batch, l->in,
                 l->out, i == 0 ? FFNN_ACT_IDENTITY : m->layers[i - 1].act, dw_side)))
            return st;
        db_done = dx_db != NULL;
        cur = 1 - cur;
        dz_ld = l->in; /* the dx written above: rows of the layer's input width */
        if ((sync && (st = sync_layer(sync, r, i)) != FFNN_OK) ||
            (st = queue_early(r, early, i)) != FFNN_OK)
            return st;
    }
    return FFNN_OK;
}

/* The parameters the layers' ops leave to the step under sgd (update_rest):
 * queued before layer 0's op, on the second stream where the backend has one (*side
 * then 1: the caller joins before the step ends; side NULL: the ops' queue). */
static ffnn_status queue_rest(ffnn_run *r, const ffnn_optimizer_step *sgd, int head, int *side)
{
    if (side == NULL || !has_side(r))
        return update_rest(r, sgd, head);
    ffnn_status st = side_open(r, side);
    if (st != FFNN_OK)
        return st;
    return side_close(r, update_rest(r, sgd, head));
}

/* Backward pass from d(output) in grad_buf[0]; writes every layer's dW, db.
 * t: the optimizer step whose dropout masks the forward applied (0: none).
 * sgd (only when r->fused_sgd, else NULL): the parameters are updated too, p -=
 * lr g: by the layers' ops, the rest by queue_rest (side: as there).
 * sync (or NULL): the all-reduce of the gradients, begun bucket by bucket.
 * xt_side (or NULL: the step made no x^T, e.g. ffnn_step_backward's caller
 * gathered the batch itself): as forward's; the layers' ops take layer_xt, a hidden
 * layer's joined first while *xt_side. */
static ffnn_status backward(ffnn_run *r, size_t batch, uint64_t t,
                            const ffnn_optimizer_step *sgd, grad_sync *sync, int *side,
                            early_plan *early, int *xt_side)
{
    const ffnn_model *m = r->model;
    ffnn_status st;
    const int head = head_step(r, t); /* the last layer's backward ran in the head */
    if (mixed_step(r, t))
        return backward_bf16(r, batch, sync, head, early, side);
    int cur = 0;       /* grad_buf[cur] holds dL/da of layer i ...             */
    int is_dz = head;  /* ... or dL/dz when the layer above applied act' already */
    for (int i = m->layer_count - 1 - head; i >= 0; i--) {
        const ffnn_layer *l = &m->layers[i];
        float *dz = r->grad_buf[cur]; /* [batch, out] */
        /* dropout: dL/da = dropout(dL/dd), the forward's mask (the fused ops are off
         * for nets with dropout: is_dz is 0 here) */
        if (t > 0 && l->has_dropout &&
            (st = layer_dropout(r, i, t, dz, dz, batch * l->out)))
            return st;
        /* f' from the saved value: z for the activations that need it, else a */
        if (!is_dz && l->act != FFNN_ACT_IDENTITY &&
            (st = r->ops->activation_backward(r->ctx, l->act, l->act_param,
                                              r->pre[i] ? r->pre[i] : r->act[i], dz, dz,
                                              batch * l->out)))
            return st;
        const float *x = i == 0                                    ? r->x
                         : t > 0 && m->layers[i - 1].has_dropout ? r->drop[i - 1]
                                                                    : r->act[i - 1];
        /* x [batch, in]: the input the forward saw */
        float *dx = i == 0 ? NULL : r->grad_buf[1 - cur];
        const int db_done = db_from_above(r, i, head); /* the op above summed db */
        float *db = l->has_bias && !db_done ? r->grads + l->bias_offset : NULL;
        float *W = r->params + l->weight_offset;  /* [out, fan_in] */
        float *dW = r->grads + l->weight_offset;  /* [out, fan_in] */
        is_dz = 0;
        if (r->fused && l->kind == FFNN_LAYER_DENSE) { /* act' of x in the dx epilogue */
            const ffnn_activation x_act = i == 0 ? FFNN_ACT_IDENTITY : m->layers[i - 1].act;
            float *dx_db = below_db(r, i);
            if (sgd && i == 0 && rest_to_update(r, head) &&
                (st = queue_rest(r, sgd, head, side)) != FFNN_OK)
                return st;
            const float *xt = xt_side ? layer_xt(r, i, batch) : NULL; /* the step's */
            if (xt && i > 0 && *xt_side) { /* made on the second stream: joined first */
                if ((st = r->ops->side->side_join(r->ctx)) != FFNN_OK)
                    return st;
                *xt_side = 0;
            }
            /* b: updated by the op with sgd, unless its db came from above */
            if ((st = r->ops->fused->dense_backward_fused(
                     r->ctx, x, W, db ? r->params + l->bias_offset : NULL, dz, dx, dW, db,
                     dx_db, batch, l->in, l->out, x_act, sgd, xt,
                     weight_grad_beside(r, i, sync, side))))
                return st;
            is_dz = 1;
            cur = 1 - cur;
            if ((sync && (st = sync_layer(sync, r, i)) != FFNN_OK) ||
                (st = queue_early(r, early, i)) != FFNN_OK)
                return st;
            continue;
        }
        switch (l->kind) {
        case FFNN_LAYER_DENSE:
            st = r->ops->dense_backward(r->ctx, x, W, dz, dx, dW, db, batch, l->in, l->out);
            break;
        case FFNN_LAYER_LOCAL1D:
            st = r->ops->local1d_backward(r->ctx, x, W, dz, dx, dW, db, batch, l->in,
                                          l->spec.local1d.R, l->spec.local1d.padding);
            break;
        default:
            st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "layer %d: unknown kind %d", i,
                           (int)l->kind);
        }
        if (st != FFNN_OK || (sync && (st = sync_layer(sync, r, i)) != FFNN_OK) ||
            (st = queue_early(r, early, i)) != FFNN_OK)
            return st;
        cur = 1 - cur;
    }
    return FFNN_OK;
}

ffnn_status ffnn_step_backward(ffnn_run *r, size_t batch, uint64_t t,
                               const ffnn_optimizer_step *sgd)
{
    return backward(r, batch, t, sgd, NULL, NULL, NULL, NULL);
}

void ffnn_step_rows(const ffnn_run *r, size_t s, size_t *first, size_t *count, size_t *rows)
{
    size_t B = r->cfg->batch_size, lo = 0;
    *rows = ffnn_step_batch(r->train.host->count, B, s);
    *count = *rows;
    if (r->comm)
        ffnn_shard_range(*rows, r->comm->rank, r->comm->size, &lo, count);
    *first = s * B + lo;
}

/* The batch of step s (0-based; optimizer step t) gathered on the backend's side
 * queue into r->spare, while the ops queued after it run on (step.h
 * ffnn_step_queue_run). *pending: 1 once the second stream has work to join. */
static ffnn_status prefetch_step(ffnn_run *r, size_t s, uint64_t t, int *pending)
{
    size_t first, batch, rows;
    ffnn_step_rows(r, s, &first, &batch, &rows);
    const ffnn_gather_source src = ffnn_step_gather_source(&r->train);
    ffnn_status st = side_open(r, pending);
    if (st != FFNN_OK)
        return st;
    int x16 = 0;
    return side_close(r, gather_step(r, &src, r->train.index + first, batch, t, r->spare,
                                     &x16));
}

/* Queue training step s (0-based) of the current epoch as optimizer step
 * opt_t (1-based). gathered: its batch is in r's buffers already (prefetched
 * during the step before, joined and swapped in by ffnn_step_queue_run);
 * prefetch: gather step s + 1's batch on the second stream after the forward pass
 * (*pending then 1 once there is side work to join). Touches no counter:
 * run_steps advances them. */
static ffnn_status queue_step(ffnn_run *r, size_t s, uint64_t opt_t, int gathered,
                              int prefetch, int *pending)
{
    const ffnn_model *m = r->model;
    size_t first, batch, rows;
    ffnn_step_rows(r, s, &first, &batch, &rows);
    float *output;
    ffnn_status st = FFNN_OK;
    size_t width = m->layers[m->layer_count - 1].out;
    ffnn_optimizer_step update = ffnn_run_update_at(r, opt_t);
    if (r->adam_scalars && (update.kind == FFNN_OPT_ADAM || update.kind == FFNN_OPT_ADAMW))
        update.device_scalars = r->adam_scalars + 2 * (opt_t - r->adam_scalars_t0);
    const ffnn_gather_source src = ffnn_step_gather_source(&r->train);
    r->dropout_row0 = first - s * r->cfg->batch_size; /* this rank's first row of the step */
    /* data parallelism: this rank's gradients are of the mean over its rows;
     * scaled by its share of the step's rows, their sum over the ranks is the
     * gradient of the step's mean (a rank without rows contributes zeros) */
    grad_sync sync = {r->comm, (float)((double)batch / (double)rows),
                      r->comm && r->ops->device ? r->ops->device->native_stream(r->ctx) : NULL,
                      m->parameter_count};
    int x16 = 0;
    const int head = head_step(r, opt_t); /* the last layer and the loss in one op */
    int side = 0; /* the head's sums, the update's rest (fused_sgd) or the early
                   * updates are on the second stream: joined before the update */
    int xt_side = 0; /* the forward's transposes (act_t) on the second stream, not
                      * joined yet */
    early_plan early = {NULL, m->layer_count, &side};
    if (r->early_update && !r->fused_sgd && r->comm == NULL &&
        r->cfg->clip_grad_norm == 0.0f && r->cfg->clip_grad_value == 0.0f && has_side(r))
        early.update = &update;
    if (gathered)
        x16 = gathers_bf16(r, opt_t);
    if (batch > 0 &&
        ((!gathered &&
          (st = gather_step(r, &src, r->train.index + first, batch, opt_t, NULL, &x16))) ||
         (st = forward(r, batch, opt_t, &output, x16, m->layer_count - head, &xt_side)) ||
         (prefetch && (st = prefetch_step(r, s + 1, opt_t + 1, pending))) ||
         (st = head ? run_head(r, batch, opt_t, first, r->fused_sgd ? &update : NULL, &side,
                               &xt_side)
                    : r->ops->loss(r->ctx, r->cfg->loss, output, r->y,
                                   r->train.targets ? r->tgt : NULL, batch, width,
                                   r->grad_buf[0], r->train.row_loss + first,
                                   r->train.row_correct + first)) ||
         (r->train.weights && /* the weighted mean's gradient (trainer.c check_weights) */
          (st = r->ops->weights->loss_weights(r->ctx, r->train.weights, r->train.index + first, batch,
                                     width, r->grad_buf[0]))) ||
         (st = backward(r, batch, opt_t, r->fused_sgd ? &update : NULL,
                        r->comm ? &sync : NULL, &side, &early, &xt_side)))) {
        if (side || xt_side) /* the second stream's work joined all the same */
            (void)r->ops->side->side_join(r->ctx);
        return st;
    }
    if ((side || xt_side) && (st = r->ops->side->side_join(r->ctx)) != FFNN_OK)
        return st;
    /* the all-reduce stage, between the backward pass and the update; a rank
     * without rows begins the same buckets as the others (collectives match
     * call by call), each zeroed (scale 0) */
    for (int i = m->layer_count - 1; r->comm && batch == 0 && i >= 0; i--)
        if ((st = sync_layer(&sync, r, i)) != FFNN_OK)
            return st;
    if (r->comm && (st = r->comm->ops->allreduce_end(r->comm, sync.stream)) != FFNN_OK)
        return st;
    /* clipping: after the all-reduce, on the step's whole gradient (every rank the
     * same) */
    if ((r->cfg->clip_grad_norm > 0.0f || r->cfg->clip_grad_value > 0.0f) &&
        (st = r->ops->grad_clip(r->ctx, r->grads, m->parameter_count, r->cfg->clip_grad_norm,
                                r->cfg->clip_grad_value,
                                r->grad_norm ? r->grad_norm + s : NULL)))
        return st;
    if (!r->fused_sgd && (st = update_layers(r, &update, 0, early.from)))
        return st;
    if (r->ema)
        st = r->ops->ema_update(r->ctx, r->ema, r->params, m->parameter_count,
                                r->cfg->ema_decay,
                                (float)(1.0 - ffnn_decimal_value(r->cfg->ema_decay)));
    return st;
}

/* One optimizer_update call over [off, off + n) of the arenas; with the bf16
 * pipeline, optimizer_update_bf16, which writes the shadow in the same pass. */
static ffnn_status update_range(ffnn_run *r, const ffnn_optimizer_step *update, size_t off,
                                size_t n)
{
    float *state = r->opt_state ? r->opt_state + off : NULL;
    if (r->mixed)
        return r->ops->bf16->optimizer_update_bf16(r->ctx, update, r->params + off, r->grads + off,
                                             state, n, r->mixed->params16 + off);
    return r->ops->optimizer_update(r->ctx, update, r->params + off, r->grads + off, state, n);
}

/* The optimizer stage over layers [lo, hi): one update over their parameters (one
 * range of the arena: layer by layer, each weight then bias); with weight decay
 * and decay_bias 0, one call per weight (decayed) and per bias (not). The state's
 * arenas are addressed through state_stride (v = m + the arena's size). */
static ffnn_status update_layers(ffnn_run *r, const ffnn_optimizer_step *update, int lo,
                                 int hi)
{
    const ffnn_model *m = r->model;
    const size_t n = m->parameter_count;
    if (lo >= hi)
        return FFNN_OK;
    if (r->cfg->decay_bias || r->cfg->weight_decay == 0.0f) {
        const size_t off = m->layers[lo].weight_offset;
        const size_t end = hi == m->layer_count ? n : m->layers[hi].weight_offset;
        ffnn_optimizer_step u = *update;
        u.state_stride = n;
        return update_range(r, &u, off, end - off);
    }
    ffnn_optimizer_step decayed = *update, plain = ffnn_optimizer_step_no_decay(*update);
    decayed.state_stride = plain.state_stride = n;
    ffnn_status st = FFNN_OK;
    for (int i = lo; i < hi && st == FFNN_OK; i++) {
        const ffnn_layer *l = &m->layers[i];
        const size_t off[2] = {l->weight_offset, l->bias_offset};
        const size_t len[2] = {l->out * l->fan_in, l->has_bias ? l->out : 0};
        for (int k = 0; k < 2 && st == FFNN_OK; k++)
            if (len[k])
                st = update_range(r, k ? &plain : &decayed, off[k], len[k]);
    }
    return st;
}

ffnn_status ffnn_step_update(ffnn_run *r, const ffnn_optimizer_step *update)
{
    return update_layers(r, update, 0, r->model->layer_count);
}

/* Where gather reads the device copy d. */
ffnn_gather_source ffnn_step_gather_source(const ffnn_device_data *d)
{
    ffnn_gather_source src = {d->images, d->values, d->host->features, d->labels, d->targets,
                              d->host->target_width};
    return src;
}



ffnn_status ffnn_step_queue(ffnn_run *r, size_t s, uint64_t opt_t)
{
    int pending = 0;
    return queue_step(r, s, opt_t, 0, 0, &pending);
}

ffnn_status ffnn_step_queue_run(ffnn_run *r, size_t first, size_t count, uint64_t opt_t)
{
    /* the next batch on the second stream (no communicator: r->spare is NULL then) */
    const int pf = r->spare != NULL && r->comm == NULL;
    ffnn_status st = FFNN_OK;
    int pending = 0;  /* the second stream holds the gather of step first + i */
    size_t swaps = 0; /* trades of r's batch buffers with the second set's      */
    for (size_t i = 0; i < count && st == FFNN_OK; i++) {
        if (pending) { /* the batch prefetched during step i - 1 becomes r's */
            pending = 0;
            if ((st = r->ops->side->side_join(r->ctx)) != FFNN_OK)
                break;
            ffnn_prefetch_swap(r);
            swaps++;
        }
        st = queue_step(r, first + i, opt_t + 1 + i, i > 0 && pf, pf && i + 1 < count,
                        &pending);
    }
    if (pending) /* after an error: the second stream's gather joined all the same */
        (void)r->ops->side->side_join(r->ctx);
    if (swaps % 2 == 1) /* r's own buffers back in place */
        ffnn_prefetch_swap(r);
    return st;
}
