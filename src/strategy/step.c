/* step.c - the shared step's driver (step.h): the gather, one queued step
 * (gather, forward, loss or head, backward, all-reduce, clipping, update, EMA) and
 * runs of steps with the next batch prefetched. The phases: step_phases.h. */
#include "core/error.h"
#include "core/optim.h"
#include "data/dataset.h"
#include "strategy/mixed.h"
#include "strategy/prefetch.h"
#include "strategy/step_phases.h"
#include "strategy/xt.h"

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

/* 1 when training step t gathers its batch straight into bf16 (x16). */
static int gathers_bf16(const ffnn_run *r, uint64_t t)
{
    return ffnn_mixed_step(r, t) && r->ops->bf16;
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
                                   into ? into->x16 : r->ext.mixed->x16, y, tgt);
    float *x = into ? into->x : r->x;
    ffnn_status st = r->ops->gather(r->ctx, src, index, batch, x, y, tgt);
    if (st == FFNN_OK && ffnn_xt_for_layer(r, 0, batch)) /* x prepared for layer 0's dW */
        st = r->ops->xt->prepare_xt(r->ctx, x, batch, src->features, into ? into->xt : r->ext.xt->x);
    return st;
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
 * queue into r->ext.spare, while the ops queued after it run on (step.h
 * ffnn_step_queue_run). *pending: 1 once the second stream has work to join. */
static ffnn_status prefetch_step(ffnn_run *r, size_t s, uint64_t t, int *pending)
{
    size_t first, batch, rows;
    ffnn_step_rows(r, s, &first, &batch, &rows);
    const ffnn_gather_source src = ffnn_step_gather_source(&r->train);
    ffnn_status st = ffnn_step_side_open(r, pending);
    if (st != FFNN_OK)
        return st;
    int x16 = 0;
    return ffnn_step_side_close(r, gather_step(r, &src, r->train.index + first, batch, t,
                                               r->ext.spare, &x16));
}

/* The stages of training step s after its backward pass: the gradients' all-reduce
 * (sync->comm), clipping, the update of layers [0, early_from) (the layers above
 * were updated early; fused_sgd: all inside the backward) and the EMA. */
static ffnn_status finish_step(ffnn_run *r, size_t s, size_t batch, ffnn_grad_sync *sync,
                               const ffnn_optimizer_step *update, int early_from)
{
    const ffnn_model *m = r->model;
    ffnn_status st = FFNN_OK;
    /* the all-reduce stage, between the backward pass and the update; a rank
     * without rows begins the same buckets as the others (collectives match
     * call by call), each zeroed (scale 0) */
    for (int i = m->layer_count - 1; r->comm && batch == 0 && i >= 0; i--)
        if ((st = ffnn_step_sync_layer(sync, r, i)) != FFNN_OK)
            return st;
    if (r->comm && (st = r->comm->ops->allreduce_end(r->comm, sync->stream)) != FFNN_OK)
        return st;
    /* clipping: after the all-reduce, on the step's whole gradient (every rank the
     * same) */
    if ((r->cfg->clip_grad_norm > 0.0f || r->cfg->clip_grad_value > 0.0f) &&
        (st = r->ops->grad_clip(r->ctx, r->grads, m->parameter_count, r->cfg->clip_grad_norm,
                                r->cfg->clip_grad_value,
                                r->grad_norm ? r->grad_norm + s : NULL)))
        return st;
    if (!r->plan.fused_sgd && (st = ffnn_step_update_layers(r, update, 0, early_from)))
        return st;
    if (r->ema)
        st = r->ops->ema_update(r->ctx, r->ema, r->params, m->parameter_count,
                                r->cfg->ema_decay,
                                (float)(1.0 - ffnn_decimal_value(r->cfg->ema_decay)));
    return st;
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
    if (r->ext.scalars && (update.kind == FFNN_OPT_ADAM || update.kind == FFNN_OPT_ADAMW))
        update.device_scalars = r->ext.scalars->adam + 2 * (opt_t - r->ext.scalars->t0);
    const ffnn_gather_source src = ffnn_step_gather_source(&r->train);
    r->dropout_row0 = first - s * r->cfg->batch_size; /* this rank's first row of the step */
    /* data parallelism: this rank's gradients are of the mean over its rows;
     * scaled by its share of the step's rows, their sum over the ranks is the
     * gradient of the step's mean (a rank without rows contributes zeros) */
    ffnn_grad_sync sync = {r->comm, (float)((double)batch / (double)rows),
                           r->comm && r->ops->device ? r->ops->device->native_stream(r->ctx)
                                                            : NULL,
                           m->parameter_count};
    int x16 = 0;
    const int head = ffnn_step_head_runs(r, opt_t); /* the last layer and the loss in one op */
    int side = 0; /* the head's sums, the update's rest (fused_sgd) or the early
                   * updates are on the second stream: joined before the update */
    int xt_side = 0; /* the forward's transposes (xt.h act) on the second stream, not
                      * joined yet */
    ffnn_early_plan early = {NULL, m->layer_count, &side};
    if (r->plan.early_update && !r->plan.fused_sgd && r->comm == NULL &&
        r->cfg->clip_grad_norm == 0.0f && r->cfg->clip_grad_value == 0.0f && ffnn_step_has_side(r))
        early.update = &update;
    if (gathered)
        x16 = gathers_bf16(r, opt_t);
    if (batch > 0 &&
        ((!gathered &&
          (st = gather_step(r, &src, r->train.index + first, batch, opt_t, NULL, &x16))) ||
         (st = ffnn_step_forward_layers(r, batch, opt_t, &output, x16, m->layer_count - head,
                                        &xt_side)) ||
         (prefetch && (st = prefetch_step(r, s + 1, opt_t + 1, pending))) ||
         (st = head ? ffnn_step_head(r, batch, opt_t, first,
                                     r->plan.fused_sgd ? &update : NULL, &side, &xt_side)
                    : r->ops->loss(r->ctx, r->cfg->loss, output, r->y,
                                   r->train.targets ? r->tgt : NULL, batch, width,
                                   r->grad_buf[0], r->train.row_loss + first,
                                   r->train.row_correct + first)) ||
         (r->train.weights && /* the weighted mean's gradient (trainer.c check_weights) */
          (st = r->ops->weights->loss_weights(r->ctx, r->train.weights, r->train.index + first, batch,
                                     width, r->grad_buf[0]))) ||
         (st = ffnn_step_backward_pass(r, batch, opt_t, r->plan.fused_sgd ? &update : NULL,
                                       r->comm ? &sync : NULL, &side, &early, &xt_side)))) {
        if (side || xt_side) /* the second stream's work joined all the same */
            (void)r->ops->side->side_join(r->ctx);
        return st;
    }
    if ((side || xt_side) && (st = r->ops->side->side_join(r->ctx)) != FFNN_OK)
        return st;
    return finish_step(r, s, batch, &sync, &update, early.from);
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
    /* the next batch on the second stream (no communicator: r->ext.spare is NULL then) */
    const int pf = r->ext.spare != NULL && r->comm == NULL;
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
