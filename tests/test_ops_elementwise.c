/* test_ops_elementwise.c - the op table's element-wise groups (activations, losses,
 * optimizers, clip/dropout/ema, gather) and the bf16 ops; the table, its targets and
 * tolerances: test_ops.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "check.h"
#include "core/activation.h"
#include "core/dropout.h"
#include "ffnn.h"
#include "op_table.h"
#include "test_numeric.h"

/* ------------------------------------------------------------------ element-wise */

/* Every activation, leaky_relu and elu also with a parameter other than the default;
 * inputs in [-6, 6] with relu's kink (0), saturation (+-40) and hardswish's corners
 * (+-3); forward and backward (from the saved value: a, or z for the activations of
 * ffnn_act_grad_from_input), out of place and in place. */
TEST("ops_table_activations", op_test_activations)
{
    static const struct {
        ffnn_activation act;
        float param;
    } acts[] = {
        {FFNN_ACT_IDENTITY, 0.0f}, {FFNN_ACT_RELU, 0.0f},        {FFNN_ACT_SIGMOID, 0.0f},
        {FFNN_ACT_TANH, 0.0f},     {FFNN_ACT_LEAKY_RELU, 0.01f}, {FFNN_ACT_LEAKY_RELU, 0.2f},
        {FFNN_ACT_ELU, 1.0f},      {FFNN_ACT_ELU, 0.5f},         {FFNN_ACT_SOFTPLUS, 0.0f},
        {FFNN_ACT_GELU, 0.0f},     {FFNN_ACT_GELU_TANH, 0.0f},   {FFNN_ACT_SILU, 0.0f},
        {FFNN_ACT_MISH, 0.0f},     {FFNN_ACT_HARDSWISH, 0.0f}};
    static const size_t sizes[] = {1, 31, 10007, 16385, 300000, 300001};
    group g;
    op_group_begin(&g, "activation", 0xA0761D6478BD642FULL);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const size_t n = sizes[si];
        pool hp = {.t = NULL};
        float *z = op_hf32(&hp, n), *da = op_hf32(&hp, n), *a_ref = op_hf32(&hp, n),
              *dz_ref = op_hf32(&hp, n);
        if (op_host_failed(&g, &hp))
            continue;
        fill_uniform(&g.r, z, n, -6.0f, 6.0f);
        for (size_t i = 0; i < n; i += 97)
            z[i] = 0.0f;
        for (size_t i = 5; i < n; i += 101)
            z[i] = i % 2 ? 40.0f : -40.0f;
        for (size_t i = 7; i < n; i += 103)
            z[i] = i % 2 ? 3.0f : -3.0f;
        fill_uniform(&g.r, da, n, -1.0f, 1.0f);
        for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
            const ffnn_activation act = acts[ai].act;
            const float prm = acts[ai].param;
            const float *saved = ffnn_act_grad_from_input(act) ? z : a_ref;
            ffnn_cpu_backend.activation_forward(NULL, act, prm, z, a_ref, n);
            ffnn_cpu_backend.activation_backward(NULL, act, prm, saved, da, dz_ref, n);
            char sh[48];
            snprintf(sh, sizeof sh, "%s(%g) n=%zu", ffnn_activation_name(act), (double)prm, n);
            FOR_TARGETS(&g, t, t->elementwise) {
                pool p = {.t = t};
                result r = RESULT_INIT;
                const tol tl = t->host ? OP_BITS : (tol){1e-6, 1e-5, 0};
                void *dz_ = op_dbuf(&p, z, n * 4), *dsv = op_dbuf(&p, saved, n * 4);
                void *dda = op_dbuf(&p, da, n * 4), *da_out = op_dbuf(&p, NULL, n * 4);
                void *ddz = op_dbuf(&p, NULL, n * 4);
                op_pool_check(&r, &p);
                /* then in place: a = f(a) over z's buffer, dz = da f'(saved) over da's */
                for (int in_place = 0; in_place <= 1 && r.ok; in_place++) {
                    void *a_out = in_place ? dz_ : da_out, *dz_out = in_place ? dda : ddz;
                    if (op_call_ok(&r, in_place ? "forward in place" : "forward",
                                   t->ops->activation_forward(t->ctx, act, prm, dz_, a_out, n)) &&
                        op_call_ok(
                            &r, in_place ? "backward in place" : "backward",
                            t->ops->activation_backward(t->ctx, act, prm, dsv, dda, dz_out, n))) {
                        op_compare(&r, in_place ? "a (in place)" : "a", op_fetch_f32(&p, a_out, n),
                                   a_ref, NULL, n, tl);
                        op_compare(&r, in_place ? "dz (in place)" : "dz",
                                   op_fetch_f32(&p, dz_out, n), dz_ref, NULL, n, tl);
                    }
                }
                op_pool_free(&p);
                op_entry_line(&g, "activation", t, FFNN_PRECISION_FP32, sh, 2.0 * n, &r);
            }
        }
        op_pool_free(&hp);
    }
    return op_group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ losses */

/* Outputs [batch, width] and labels [batch] that stress the kernels: large logits
 * (the max shift), all-equal rows and a repeated maximum (argmax ties go to the
 * first index), zeros (width 1: z > 0 is false); mse's width-1 label is a value. */
static void loss_inputs(rng *r, ffnn_loss loss, size_t batch, size_t width, float *out, int32_t *y)
{
    const float lo = loss == FFNN_LOSS_MSE ? -0.5f : -4.0f,
                hi = loss == FFNN_LOSS_MSE ? 1.5f : 4.0f;
    for (size_t b = 0; b < batch; b++) {
        float *row = out + b * width;
        fill_uniform(r, row, width, lo, hi);
        if (loss != FFNN_LOSS_MSE && b % 7 == 3)
            for (size_t j = 0; j < width; j++)
                row[j] *= 25.0f; /* |z| up to 100 */
        if (b % 11 == 5)
            memset(row, 0, width * sizeof *row);
        if (b % 13 == 6 && width > 2)
            row[rng_below(r, width - 1)] = row[width - 1] = 9.0f;
        y[b] =
            (int32_t)(width > 1                      ? rng_below(r, width)
                      : loss == FFNN_LOSS_SOFTMAX_CE ? 0
                                                     : rng_below(r, loss == FFNN_LOSS_MSE ? 4 : 2));
    }
}

/* Float targets for bce / mse: uniform, plus 0, 1 and exactly 0.5 (on the threshold). */
static void loss_targets(rng *r, ffnn_loss loss, size_t n, float *t)
{
    const float lo = loss == FFNN_LOSS_MSE ? -0.5f : 0.0f, hi = loss == FFNN_LOSS_MSE ? 1.5f : 1.0f;
    for (size_t i = 0; i < n; i++) {
        t[i] = rng_uniform(r, lo, hi);
        if (i % 5 == 1)
            t[i] = (float)rng_below(r, 2);
        if (i % 17 == 3)
            t[i] = 0.5f;
    }
}

/* One loss entry: with the gradient, then without (evaluation). */
static void loss_entry(group *g, const target *t, ffnn_loss loss, size_t batch, size_t width,
                       const float *out, const int32_t *y, const float *tg, const float *dout_ref,
                       const float *loss_ref, const uint8_t *ok_ref)
{
    const size_t n = batch * width;
    pool p = {.t = t};
    result r;
    op_result_init(&r);
    const void *d_out = op_dbuf(&p, out, n * 4);
    const void *d_y = tg ? NULL : op_dbuf(&p, y, batch * 4),
               *d_t = tg ? op_dbuf(&p, tg, n * 4) : NULL;
    void *d_dout = op_dbuf(&p, NULL, n * 4), *d_loss = op_dbuf(&p, NULL, batch * 4);
    void *d_ok = op_dbuf(&p, NULL, batch), *d_loss2 = op_dbuf(&p, NULL, batch * 4);
    void *d_ok2 = op_dbuf(&p, NULL, batch);
    op_pool_check(&r, &p);
    const tol tl_loss = t->host ? OP_BITS : (tol){1e-5, 1e-5, 0};
    const tol tl_dout = t->host ? OP_BITS : (tol){1e-6, 1e-5, 0};
    if (r.ok &&
        op_call_ok(
            &r, "loss",
            t->ops->loss(t->ctx, loss, d_out, d_y, d_t, batch, width, d_dout, d_loss, d_ok)) &&
        op_call_ok(
            &r, "loss (dout NULL)",
            t->ops->loss(t->ctx, loss, d_out, d_y, d_t, batch, width, NULL, d_loss2, d_ok2))) {
        op_compare(&r, "row_loss", op_fetch_f32(&p, d_loss, batch), loss_ref, NULL, batch, tl_loss);
        op_compare(&r, "dout", op_fetch_f32(&p, d_dout, n), dout_ref, NULL, n, tl_dout);
        op_compare_u8(&r, "row_correct", op_fetch(&p, d_ok, batch), ok_ref, batch);
        op_compare(&r, "row_loss (dout NULL)", op_fetch_f32(&p, d_loss2, batch), loss_ref, NULL,
                   batch, tl_loss);
        op_compare_u8(&r, "row_correct (dout NULL)", op_fetch(&p, d_ok2, batch), ok_ref, batch);
    }
    /* refused as the reference refuses: softmax_ce with float targets */
    if (r.ok && loss == FFNN_LOSS_SOFTMAX_CE && batch == 1 && width == 2) {
        void *ft = op_dbuf(&p, out, n * 4);
        const ffnn_status st = t->ops->loss(t->ctx, FFNN_LOSS_SOFTMAX_CE, d_out, NULL, ft, batch,
                                            width, NULL, d_loss2, d_ok2);
        if (st != FFNN_ERR_INVALID_ARGUMENT || !strstr(ffnn_last_error(), "softmax_ce")) {
            fprintf(stderr, "    softmax_ce with float targets: status %d (%s)\n", (int)st,
                    ffnn_last_error());
            r.ok = 0;
        }
    }
    op_pool_free(&p);
    char sh[48];
    snprintf(sh, sizeof sh, "%s%s %zux%zu", ffnn_loss_name(loss), tg ? "+t" : "", batch, width);
    op_entry_line(g, "loss", t, FFNN_PRECISION_FP32, sh, 10.0 * n, &r);
}

TEST("ops_table_losses", op_test_losses)
{
    static const ffnn_loss losses[] = {FFNN_LOSS_SOFTMAX_CE, FFNN_LOSS_SIGMOID_BCE, FFNN_LOSS_MSE};
    static const size_t widths[] = {1, 2, 10, 37}, batches[] = {1, 64, 203, 1000, 5000};
    group g;
    op_group_begin(&g, "loss", 0x94D049BB133111EBULL);
    for (size_t li = 0; li < 3; li++)
        for (size_t wi = 0; wi < 4; wi++)
            for (size_t bi = 0; bi < 5; bi++)
                for (int with_t = 0; with_t <= (losses[li] != FFNN_LOSS_SOFTMAX_CE); with_t++) {
                    const size_t batch = batches[bi], width = widths[wi], n = batch * width;
                    pool hp = {.t = NULL};
                    float *out = op_hf32(&hp, n), *tg = op_hf32(&hp, n), *dout = op_hf32(&hp, n);
                    float *rl = op_hf32(&hp, batch);
                    int32_t *y = op_hbuf(&hp, batch * 4);
                    uint8_t *ok = op_hbuf(&hp, batch);
                    if (op_host_failed(&g, &hp))
                        continue;
                    loss_inputs(&g.r, losses[li], batch, width, out, y);
                    loss_targets(&g.r, losses[li], n, tg);
                    const float *t_ = with_t ? tg : NULL;
                    ffnn_cpu_backend.loss(NULL, losses[li], out, with_t ? NULL : y, t_, batch,
                                          width, dout, rl, ok);
                    for (size_t k = 0; k < g.T.n; k++)
                        if (g.T.t[k].elementwise)
                            loss_entry(&g, &g.T.t[k], losses[li], batch, width, out, y, t_, dout,
                                       rl, ok);
                    op_pool_free(&hp);
                }
    return op_group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ optimizers */

/* Five steps of each optimizer on the same arena, reference and target side by
 * side, state carried on each side: fresh gradients each step (in [-1, 1] on odd
 * steps, [-0.1, 0.1] on even ones), every 7th exactly zero (Adam's 0 / (0 + eps)). */
TEST("ops_table_optimizers", op_test_optimizers)
{
    static const struct {
        ffnn_optimizer kind;
        int nesterov;
        float lr, beta1, wd;
    } cases[] = {
        {FFNN_OPT_SGD, 0, 0.05f, 0.9f, 0},
        {FFNN_OPT_MOMENTUM, 0, 0.01f, 0.9f, 0},
        {FFNN_OPT_MOMENTUM, 1, 0.05f, 0.9f, 0},
        {FFNN_OPT_ADAM, 0, 1e-3f, 0.9f, 0},
        {FFNN_OPT_ADAM, 0, 0.01f, 0.6f, 0}, /* lerp weight >= 0.5 */
        /* weight decay (L2 into the gradient) and adamw's decoupled decay */
        {FFNN_OPT_SGD, 0, 0.05f, 0.9f, 0.01f},
        {FFNN_OPT_MOMENTUM, 0, 0.05f, 0.9f, 0.01f},
        {FFNN_OPT_MOMENTUM, 1, 0.05f, 0.9f, 5e-4f},
        {FFNN_OPT_ADAM, 0, 1e-3f, 0.9f, 0.01f},
        {FFNN_OPT_ADAMW, 0, 1e-3f, 0.9f, 0.01f},
        {FFNN_OPT_ADAMW, 0, 1e-3f, 0.9f, 0.05f},
    };
    static const size_t sizes[] = {1, 255, 16385, 203530, 1000003};
    enum { STEPS = 5 };
    group g;
    op_group_begin(&g, "optimizer_update", 0x853C49E6748FEA9BULL);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            ffnn_train_config cfg = ffnn_train_config_default();
            cfg.optimizer = cases[ci].kind;
            cfg.nesterov = cases[ci].nesterov;
            cfg.learning_rate = cases[ci].lr;
            cfg.beta1 = cases[ci].beta1;
            cfg.weight_decay = cases[ci].wd;
            const size_t n = sizes[si], ns = ffnn_optimizer_state_count(cfg.optimizer) * n;
            pool hp = {.t = NULL};
            float *p0 = op_hf32(&hp, n), *g_[STEPS], *pr = op_hf32(&hp, n),
                  *sr = op_hf32(&hp, ns + 1);
            for (int s = 0; s < STEPS; s++)
                g_[s] = op_hf32(&hp, n);
            if (op_host_failed(&g, &hp))
                continue;
            fill_uniform(&g.r, p0, n, -1.0f, 1.0f);
            for (int s = 0; s < STEPS; s++) {
                const float m = s % 2 ? 0.1f : 1.0f;
                fill_uniform(&g.r, g_[s], n, -m, m);
                for (size_t i = 0; i < n; i += 7)
                    g_[s][i] = 0.0f;
            }
            char sh[48];
            snprintf(sh, sizeof sh, "%s%s wd%g n=%zu", ffnn_optimizer_name(cfg.optimizer),
                     cfg.nesterov ? "+nesterov" : "", (double)cfg.weight_decay, n);
            FOR_TARGETS(&g, t, t->elementwise) {
                pool p = {.t = t};
                result r = RESULT_INIT;
                memcpy(pr, p0, n * 4);
                memset(sr, 0, (ns + 1) * 4);
                void *dp = op_dbuf(&p, p0, n * 4), *ds = op_dbuf(&p, sr, (ns + 1) * 4);
                void *dg = op_dbuf(&p, NULL, n * 4);
                op_pool_check(&r, &p);
                for (uint64_t step = 1; step <= STEPS && r.ok; step++) {
                    const ffnn_optimizer_step st = ffnn_optimizer_step_at(&cfg, step);
                    ffnn_cpu_backend.optimizer_update(NULL, &st, pr, g_[step - 1], ns ? sr : NULL,
                                                      n);
                    if (t->ops->upload(t->ctx, dg, g_[step - 1], n * 4) != FFNN_OK)
                        p.failed = 1;
                    op_pool_check(&r, &p);
                    if (r.ok && op_call_ok(&r, "optimizer_update",
                                           t->ops->optimizer_update(t->ctx, &st, dp, dg,
                                                                    ns ? ds : NULL, n))) {
                        op_compare(&r, "params", op_fetch_f32(&p, dp, n), pr, NULL, n,
                                   t->host ? OP_BITS : (tol){1e-7, 1e-6, 0});
                        op_compare(&r, "state", op_fetch_f32(&p, ds, ns), sr, NULL, ns,
                                   t->host ? OP_BITS : (tol){1e-12, 1e-6, 0});
                    }
                }
                op_pool_free(&p);
                op_entry_line(&g, "optimizer_update", t, FFNN_PRECISION_FP32, sh,
                              (cfg.optimizer >= FFNN_OPT_ADAM ? 12.0 : 3.0) * n * STEPS, &r);
            }
            op_pool_free(&hp);
        }
    return op_group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ clip, dropout, ema */

/* grad_clip (value then norm, two settings) with its norm output; dropout for p in
 * 0 .. 0.9 (the same integer mask everywhere); ema_update. The reference itself is
 * checked too where n is large: after the norm clip the norm is max_norm, dropout
 * drops p of the elements within 6 standard deviations and scales the kept ones by
 * 1/(1-p), and another step's key draws an independent mask. */
static int reference_dropout_ok(const float *in, const float *out, const float *other, size_t n,
                                double p, float scale)
{
    size_t dropped = 0, same = 0;
    for (size_t i = 0; i < n; i++) {
        dropped += out[i] == 0.0f;
        same += (other[i] == 0.0f) == (out[i] == 0.0f);
        if (out[i] != 0.0f && out[i] != in[i] * scale) {
            fprintf(stderr, "    reference dropout: kept [%zu] not scaled\n", i);
            return 0;
        }
    }
    const double sd = sqrt(n * p * (1 - p)), agree = p * p + (1 - p) * (1 - p);
    if (fabs((double)dropped - n * p) > 6 * sd + 1 ||
        (p > 0 && fabs((double)same / n - agree) >= 0.01)) {
        fprintf(stderr, "    reference dropout p %g: %zu of %zu dropped, masks agree on %zu\n", p,
                dropped, n, same);
        return 0;
    }
    return 1;
}

TEST("ops_table_clip_dropout_ema", op_test_clip_dropout_ema)
{
    static const size_t sizes[] = {1, 1023, 203530, 300007, 1000003};
    static const float clips[2][2] = {{0.5f, 0.008f}, {0.05f, 0.008f}}; /* max_norm, max_value */
    static const double ps[] = {0.0, 0.1, 0.4, 0.5, 0.8, 0.9};
    group g;
    op_group_begin(&g, "clip_dropout_ema", 0x2545F4914F6CDD1DULL);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const size_t n = sizes[si];
        pool hp = {.t = NULL};
        float *g0 = op_hf32(&hp, n), *gc[2] = {op_hf32(&hp, n), op_hf32(&hp, n)}, norm[2];
        float *e = op_hf32(&hp, n), *e_ref = op_hf32(&hp, n), *d_ref[6], *d_other = op_hf32(&hp, n);
        for (int k = 0; k < 6; k++)
            d_ref[k] = op_hf32(&hp, n);
        if (op_host_failed(&g, &hp))
            continue;
        fill_uniform(&g.r, g0, n, -0.01f, 0.01f);
        fill_uniform(&g.r, e, n, 0.5f, 1.0f); /* no zeros: a zero output is a drop */
        result refr;
        op_result_init(&refr);
        for (int c = 0; c < 2; c++) {
            memcpy(gc[c], g0, n * 4);
            ffnn_cpu_backend.grad_clip(NULL, gc[c], n, clips[c][0], clips[c][1], &norm[c]);
            double sq = 0;
            for (size_t i = 0; i < n; i++)
                sq += (double)gc[c][i] * gc[c][i];
            if (norm[c] > clips[c][0] && !(fabs(sqrt(sq) - clips[c][0]) < 1e-5)) {
                fprintf(stderr, "    reference clip: norm %g after clipping to %g\n", sqrt(sq),
                        (double)clips[c][0]);
                refr.ok = 0;
            }
        }
        const uint64_t key = ffnn_dropout_key(11, 5, 2);
        for (int k = 0; k < 6; k++) {
            ffnn_cpu_backend.dropout(NULL, e, d_ref[k], n, key, ffnn_dropout_threshold(ps[k]),
                                     ffnn_dropout_scale(ps[k]));
            ffnn_cpu_backend.dropout(NULL, e, d_other, n, ffnn_dropout_key(11, 6, 2),
                                     ffnn_dropout_threshold(ps[k]), ffnn_dropout_scale(ps[k]));
            if (n >= 100000 &&
                !reference_dropout_ok(e, d_ref[k], d_other, n, ps[k], ffnn_dropout_scale(ps[k])))
                refr.ok = 0;
        }
        memcpy(e_ref, e, n * 4);
        ffnn_cpu_backend.ema_update(NULL, e_ref, g0, n, 0.999f, 0.001f);
        if (!refr.ok)
            g.failed++;
        char sh[32];
        snprintf(sh, sizeof sh, "n=%zu", n);
        FOR_TARGETS(&g, t, t->elementwise) {
            pool p = {.t = t};
            result r = RESULT_INIT;
            void *dg[2] = {op_dbuf(&p, g0, n * 4), op_dbuf(&p, g0, n * 4)};
            void *dnorm = op_dbuf(&p, NULL, 8), *de = op_dbuf(&p, e, n * 4),
                 *dd = op_dbuf(&p, NULL, n * 4);
            void *dge = op_dbuf(&p, g0, n * 4);
            op_pool_check(&r, &p);
            for (int c = 0; c < 2 && r.ok; c++)
                if (op_call_ok(&r, "grad_clip",
                               t->ops->grad_clip(t->ctx, dg[c], n, clips[c][0], clips[c][1],
                                                 (float *)dnorm + c))) {
                    op_compare(&r, "clipped", op_fetch_f32(&p, dg[c], n), gc[c], NULL, n,
                               (tol){t->host ? 0 : 1e-12, 1e-6, 0});
                }
            if (r.ok)
                op_compare(&r, "norm", op_fetch_f32(&p, dnorm, 2), norm, NULL, 2,
                           (tol){0, 1e-6, 0});
            for (int q = 0; q < 6 && r.ok; q++)
                if (op_call_ok(&r, "dropout",
                               t->ops->dropout(t->ctx, de, dd, n, key,
                                               ffnn_dropout_threshold(ps[q]),
                                               ffnn_dropout_scale(ps[q]))))
                    op_compare(&r, "dropout", op_fetch_f32(&p, dd, n), d_ref[q], NULL, n, OP_BITS);
            if (r.ok && op_call_ok(&r, "ema_update",
                                   t->ops->ema_update(t->ctx, de, dge, n, 0.999f, 0.001f)))
                op_compare(&r, "ema", op_fetch_f32(&p, de, n), e_ref, NULL, n,
                           t->host ? OP_BITS : (tol){1e-12, 1e-6, 0});
            op_pool_free(&p);
            op_entry_line(&g, "clip_dropout_ema", t, FFNN_PRECISION_FP32, sh, 12.0 * n, &r);
        }
        op_pool_free(&hp);
    }
    return op_group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ gather */

/* Gather over the four kinds of data set (bit 0: float features, else uint8 images;
 * bit 1: float targets, else labels) from 50 samples; widths 1 and 3 take cuda's
 * one-value path, 8 and 784 its four-value path; 4100 rows are more than its
 * launch's 4096 row blocks. Images: first byte 0, last 255. */
TEST("ops_table_gather", op_test_gather)
{
    static const size_t features_list[] = {1, 3, 8, 784}, batches[] = {1, 37, 4096, 4100};
    const size_t count = 50;
    group g;
    op_group_begin(&g, "gather", 0xBF58476D1CE4E5B9ULL);
    for (int kind = 0; kind < 4; kind++)
        for (size_t fi = 0; fi < 4; fi++)
            for (size_t bi = 0; bi < 4; bi++) {
                const int float_x = kind & 1, float_t = (kind & 2) != 0;
                const size_t features = features_list[fi], batch = batches[bi];
                const size_t width = float_t ? 1 + 2 * bi : 0; /* 1, 3, 5, 7 */
                pool hp = {.t = NULL};
                uint8_t *images = op_hbuf(&hp, count * features);
                float *values = op_hf32(&hp, count * features),
                      *targets_ = op_hf32(&hp, count * width + 1);
                int32_t *labels = op_hbuf(&hp, count * 4), *index = op_hbuf(&hp, batch * 4);
                float *x_ref = op_hf32(&hp, batch * features),
                      *t_ref = op_hf32(&hp, batch * width + 1);
                int32_t *y_ref = op_hbuf(&hp, batch * 4);
                if (op_host_failed(&g, &hp))
                    continue;
                for (size_t i = 0; i < count * features; i++)
                    images[i] = i == 0                      ? 0
                                : i + 1 == count * features ? 255
                                                            : (uint8_t)rng_next(&g.r);
                fill_uniform(&g.r, values, count * features, -3.0f, 3.0f);
                for (size_t i = 0; i < count; i++)
                    labels[i] = (int32_t)rng_below(&g.r, 1000);
                fill_uniform(&g.r, targets_, count * width, -1.0f, 2.0f);
                for (size_t b = 0; b < batch; b++)
                    index[b] = (int32_t)rng_below(&g.r, count);
                index[0] = (int32_t)(count - 1);
                const ffnn_gather_source src = {
                    float_x ? NULL : images, float_x ? values : NULL,   features,
                    float_t ? NULL : labels, float_t ? targets_ : NULL, width};
                ffnn_cpu_backend.gather(NULL, &src, index, batch, x_ref, y_ref, t_ref);
                char sh[48];
                snprintf(sh, sizeof sh, "%s%s b%zu f%zu", float_x ? "f32" : "u8",
                         float_t ? "+t" : "+y", batch, features);
                FOR_TARGETS(&g, t, t->elementwise) {
                    pool p = {.t = t};
                    result r = RESULT_INIT;
                    const ffnn_gather_source dsrc = {
                        float_x ? NULL : op_dbuf(&p, images, count * features),
                        float_x ? op_dbuf(&p, values, count * features * 4) : NULL,
                        features,
                        float_t ? NULL : op_dbuf(&p, labels, count * 4),
                        float_t ? op_dbuf(&p, targets_, (count * width + 1) * 4) : NULL,
                        width};
                    const void *di = op_dbuf(&p, index, batch * 4);
                    void *dx = op_dbuf(&p, NULL, batch * features * 4),
                         *dy = op_dbuf(&p, NULL, batch * 4);
                    void *dt = op_dbuf(&p, NULL, (batch * width + 1) * 4);
                    op_pool_check(&r, &p);
                    if (r.ok &&
                        op_call_ok(&r, "gather",
                                   t->ops->gather(t->ctx, &dsrc, di, batch, dx, float_t ? NULL : dy,
                                                  float_t ? dt : NULL))) {
                        /* x = byte / 255: one division (host), 1e-6 relative on cuda */
                        op_compare(&r, "x", op_fetch_f32(&p, dx, batch * features), x_ref, NULL,
                                   batch * features,
                                   float_x || t->host ? OP_BITS : (tol){0, 1e-6, 0});
                        if (float_t)
                            op_compare(&r, "t", op_fetch_f32(&p, dt, batch * width), t_ref, NULL,
                                       batch * width, OP_BITS);
                        else
                            op_compare_u8(&r, "y", op_fetch(&p, dy, batch * 4),
                                          (const uint8_t *)y_ref, batch * 4);
                    }
                    op_pool_free(&p);
                    op_entry_line(&g, "gather", t, FFNN_PRECISION_FP32, sh, 0.0, &r);
                }
                op_pool_free(&hp);
            }
    return op_group_end(&g, why, why_size);
}

/* ------------------------------------------------------------------ bf16 ops */

/* The mixed-precision ops (backend.h, cuda's cublaslt strategy) on bf16 contexts:
 *   to_bf16          rows into a wider ld: bf16 of each value (round to nearest
 *                    even, bf16_bits), bit for bit; the cells past a row untouched
 *   dense_act_forward_bf16  on bf16 values x16, W16 (the reference on the same
 *                    values: exact products, fp32 sums): the fp32 bound, and for a
 *                    bf16 output + 2^-8 |want| (one rounding, half an ulp, twice)
 *   optimizer_update_bf16   the parameters as optimizer_update (1e-7 + 1e-6) and
 *                    the shadow the bf16 bits of the updated parameters, exactly */
static int bf16_target(const target *t)
{
    /* the mixed-precision ops run on cuBLASLt (the cublaslt strategy) only */
    return t->precision == FFNN_PRECISION_BF16 && !strcmp(t->variant, "cublaslt") &&
           t->ops->bf16;
}

static void bf16_entry(group *g, const target *t, dense_shape s, pool *hp)
{
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out, ld = s.in + 3;
    float *x = op_hf32(hp, nx), *W = op_hf32(hp, nw), *b = op_hf32(hp, s.out),
          *want = op_hf32(hp, nz);
    uint16_t *x16 = op_hbuf(hp, nx * 2), *W16 = op_hbuf(hp, nw * 2), *b16 = op_hbuf(hp, s.out * 2);
    uint16_t *xpad = op_hbuf(hp, s.batch * ld * 2);
    float *ax = op_hf32(hp, nx), *aW = op_hf32(hp, nw), *ab = op_hf32(hp, s.out),
          *S = op_hf32(hp, nz);
    float *a16f = op_hf32(hp, nz);
    if (hp->failed)
        return;
    fill_uniform(&g->r, x, nx, -1.0f, 1.0f);
    fill_uniform(&g->r, W, nw, -1.0f, 1.0f);
    fill_uniform(&g->r, b, s.out, -1.0f, 1.0f);
    for (size_t i = 0; i < s.batch * ld; i++)
        xpad[i] = (i % ld) < s.in ? bf16_bits(x[i / ld * s.in + i % ld]) : 0x7FC1;
    for (size_t i = 0; i < nx; i++)
        x16[i] = bf16_bits(x[i]), x[i] = bf16_value(x16[i]);
    for (size_t i = 0; i < nw; i++)
        W16[i] = bf16_bits(W[i]), W[i] = bf16_value(W16[i]);
    for (size_t i = 0; i < s.out; i++)
        b16[i] = bf16_bits(b[i]), b[i] = bf16_value(b16[i]);
    abs_copy(ax, x, nx), abs_copy(aW, W, nw), abs_copy(ab, b, s.out);
    ffnn_cpu_backend.dense_forward(NULL, ax, aW, ab, S, s.batch, s.in, s.out);
    char sh[40];
    op_shape_text(sh, sizeof sh, s);
    pool p = {.t = t};
    result r;
    op_result_init(&r);
    /* to_bf16 of the fp32 x (before its rounding above: xpad holds those bits) */
    float *xf = op_hf32(hp, nx);
    if (xf) {
        for (size_t i = 0; i < nx; i++) /* any fp32 values: these round to x16 again */
            xf[i] = x[i] + (x[i] == 0 ? 0 : x[i] * 0x1p-10f);
    }
    void *dxf = op_dbuf(&p, xf, nx * 4), *dpad = op_dbuf(&p, NULL, s.batch * ld * 2);
    op_pool_check(&r, &p);
    if (r.ok && xf) {
        uint16_t *pad_want = op_hbuf(hp, s.batch * ld * 2);
        if (pad_want && t->ops->upload(t->ctx, dpad, xpad, s.batch * ld * 2) == FFNN_OK &&
            op_call_ok(&r, "to_bf16", t->ops->bf16->to_bf16(t->ctx, dxf, dpad, s.batch, s.in, ld))) {
            for (size_t i = 0; i < s.batch * ld; i++)
                pad_want[i] = (i % ld) < s.in ? bf16_bits(xf[i / ld * s.in + i % ld]) : 0x7FC1;
            op_compare_u8(&r, "to_bf16", op_fetch(&p, dpad, s.batch * ld * 2),
                          (const uint8_t *)pad_want, s.batch * ld * 2);
        }
    }
    op_pool_free(&p);
    op_entry_line(g, "to_bf16", t, FFNN_PRECISION_BF16, sh, 0.0, &r);

    const ffnn_activation *acts = op_fused_acts;
    op_result_init(&r);
    p = (pool){.t = t};
    const void *dx16 = op_dbuf(&p, x16, nx * 2), *dW16 = op_dbuf(&p, W16, nw * 2);
    const void *db = op_dbuf(&p, b, s.out * 4), *db16 = op_dbuf(&p, b16, s.out * 2);
    void *da = op_dbuf(&p, NULL, nz * 4), *da16 = op_dbuf(&p, NULL, nz * 2);
    op_pool_check(&r, &p);
    for (size_t ai = 0; ai < 4 && r.ok; ai++)
        for (int bias = 0; bias <= 1 && r.ok; bias++) {
            ffnn_cpu_backend.dense_forward(NULL, x, W, bias ? b : NULL, want, s.batch, s.in, s.out);
            ffnn_cpu_backend.activation_forward(NULL, acts[ai], 0.0f, want, want, nz);
            if (!op_call_ok(&r, "dense_act_forward_bf16",
                            t->ops->bf16->dense_act_forward_bf16(t->ctx, dx16, dW16, bias ? db : NULL,
                                                           bias ? db16 : NULL, da, NULL, s.batch,
                                                           s.in, s.out, acts[ai])) ||
                !op_call_ok(&r, "dense_act_forward_bf16 (bf16 out)",
                            t->ops->bf16->dense_act_forward_bf16(t->ctx, dx16, dW16, bias ? db : NULL,
                                                           bias ? db16 : NULL, NULL, da16, s.batch,
                                                           s.in, s.out, acts[ai])))
                break;
            char what[48];
            snprintf(what, sizeof what, "a (%s%s)", ffnn_activation_name(acts[ai]),
                     bias ? ", bias" : "");
            op_compare(&r, what, op_fetch_f32(&p, da, nz), want, S, nz,
                       op_matmul_tol(FFNN_PRECISION_FP32, s.in));
            const uint16_t *g16 = op_fetch(&p, da16, nz * 2);
            if (g16) {
                for (size_t i = 0; i < nz; i++)
                    a16f[i] = bf16_value(g16[i]);
                /* the bf16 output: one rounding of the fp32 result where cuBLASLt's
                 * epilogue does it all (relu or identity, no bias): 2^-8 |a| more.
                 * Two roundings (cublas_lt.cu) with sigmoid and tanh (D = bf16(z),
                 * then the activation kernel writes bf16(act(D))) and with a bias
                 * where cuBLASLt has no bias epilogue for the output's layout (odd
                 * widths: D = bf16(x W^T), then bias_act_rows_kernel): the first
                 * rounding moves its value by up to 2^-8 of it <= 2^-8 S, and the
                 * rest is 1-Lipschitz in it, so 2^-8 S more on top. */
                tol tl = op_matmul_tol(FFNN_PRECISION_FP32, s.in);
                tl.rtol += 1.0 / 256.0;
                if (bias || acts[ai] == FFNN_ACT_SIGMOID || acts[ai] == FFNN_ACT_TANH)
                    tl.srel += 1.0 / 256.0;
                snprintf(what, sizeof what, "a16 (%s%s)", ffnn_activation_name(acts[ai]),
                         bias ? ", bias" : "");
                op_compare(&r, what, a16f, want, S, nz, tl);
            } else {
                r.ok = 0;
            }
        }
    op_pool_free(&p);
    op_entry_line(g, "dense_act_fwd_bf16", t, FFNN_PRECISION_BF16, sh, 2.0 * nz * s.in, &r);
}

static void optimizer_bf16_entry(group *g, const target *t, size_t n, pool *hp)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.optimizer = FFNN_OPT_ADAM;
    cfg.learning_rate = 1e-3f;
    float *p0 = op_hf32(hp, n), *gr = op_hf32(hp, n), *pr = op_hf32(hp, n),
          *sr = op_hf32(hp, 2 * n);
    uint16_t *shadow_want = op_hbuf(hp, n * 2);
    if (hp->failed)
        return;
    fill_uniform(&g->r, p0, n, -1.0f, 1.0f);
    fill_uniform(&g->r, gr, n, -0.1f, 0.1f);
    memcpy(pr, p0, n * 4);
    memset(sr, 0, 2 * n * 4);
    pool p = {.t = t};
    result r;
    op_result_init(&r);
    void *dp = op_dbuf(&p, p0, n * 4), *dg = op_dbuf(&p, gr, n * 4),
         *ds = op_dbuf(&p, sr, 2 * n * 4);
    void *dsh = op_dbuf(&p, NULL, n * 2);
    op_pool_check(&r, &p);
    for (uint64_t step = 1; step <= 3 && r.ok; step++) {
        const ffnn_optimizer_step st = ffnn_optimizer_step_at(&cfg, step);
        ffnn_cpu_backend.optimizer_update(NULL, &st, pr, gr, sr, n);
        if (!op_call_ok(&r, "optimizer_update_bf16",
                        t->ops->bf16->optimizer_update_bf16(t->ctx, &st, dp, dg, ds, n, dsh)))
            break;
        const float *gp = op_fetch_f32(&p, dp, n);
        op_compare(&r, "params", gp, pr, NULL, n, (tol){1e-7, 1e-6, 0});
        if (gp) {
            for (size_t i = 0; i < n; i++)
                shadow_want[i] = bf16_bits(gp[i]);
            op_compare_u8(&r, "shadow16", op_fetch(&p, dsh, n * 2), (const uint8_t *)shadow_want,
                          n * 2);
        }
    }
    op_pool_free(&p);
    char sh[32];
    snprintf(sh, sizeof sh, "adam n=%zu", n);
    op_entry_line(g, "optimizer_bf16", t, FFNN_PRECISION_BF16, sh, 36.0 * n, &r);
}

TEST("ops_table_bf16", op_test_bf16)
{
    static const dense_shape shapes[] = {{1, 8, 8},     {7, 24, 5},    {64, 784, 256},
                                         {64, 256, 10}, {257, 40, 17}, {2000, 16, 3}};
    static const size_t sizes[] = {1, 255, 203530};
    group g;
    op_group_begin(&g, "bf16", 0x5851F42D4C957F2DULL);
    op_say_missing(&g, bf16_target);
    for (size_t k = 0; k < g.T.n; k++) {
        const target *t = &g.T.t[k];
        if (!bf16_target(t))
            continue;
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            pool hp = {.t = NULL};
            bf16_entry(&g, t, shapes[i], &hp);
            g.failed += hp.failed;
            op_pool_free(&hp);
        }
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            pool hp = {.t = NULL};
            optimizer_bf16_entry(&g, t, sizes[i], &hp);
            g.failed += hp.failed;
            op_pool_free(&hp);
        }
    }
    return op_group_end(&g, why, why_size);
}
