/* test_optim.c - suite "optim": the optimizers. The CPU reference against
 * sequences computed here in double with PyTorch's formulas (torch.optim.SGD and
 * Adam, single-tensor path); the per-step scalars; the optimizer state a trainer
 * keeps (and exposes for checkpoints); configuration checks and names. The
 * cuda kernels are checked against this reference in test_cuda.c, whole runs in
 * test_train.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"
#include "train/train_internal.h"

enum { N = 3, STEPS = 3 };

/* Three parameters and the gradients of three steps: signs change, one gradient
 * is exactly zero (Adam: 0 / (0 + eps)), magnitudes span 1/16 to 3. */
static const double p0[N] = {0.125, -0.0625, 0.5};
static const double grads[STEPS][N] = {
    {0.5, -1.5, 0.0},
    {0.25, 0.75, -2.0},
    {-0.125, 1.0, 3.0},
};

/* |got - want| <= 1e-6 |want| (+ 1e-12 for values that cross zero). */
static int close_rel(const char *what, int step, const float *got, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - want[i]);
        if (!(diff <= 1e-6 * fabs(want[i]) + 1e-12)) {
            fprintf(stderr, "    %s after step %d, [%zu]: got %.9g want %.12g (rel %.2e)\n", what,
                    step, i, (double)got[i], want[i], diff / fabs(want[i]));
            return 0;
        }
    }
    return 1;
}

/* Run STEPS steps of cfg's optimizer through the cpu backend's optimizer_update
 * (steps from ffnn_optimizer_step_at) and compare parameters and state after each
 * with the double reference. */
static test_result run_sequence(ffnn_train_config *cfg, double lr, const char *name)
{
    cfg->learning_rate = (float)lr;
    const double mu = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double p[N], buf[N] = {0}, m[N] = {0}, v[N] = {0};
    float pf[N], gf[N], state[2 * N];
    memset(state, 0xFF, sizeof state); /* momentum must not read buf at step 1 (NaN) */
    const double wd = cfg->weight_decay;
    const int adam = cfg->optimizer == FFNN_OPT_ADAM || cfg->optimizer == FFNN_OPT_ADAMW;
    if (adam)
        memset(state, 0, sizeof state); /* the trainer zeroes Adam's m and v */
    for (int i = 0; i < N; i++) {
        p[i] = p0[i];
        pf[i] = (float)p0[i];
    }
    for (int t = 1; t <= STEPS; t++) {
        const double *g = grads[t - 1];
        for (int i = 0; i < N; i++) {
            gf[i] = (float)g[i];
            /* weight decay: L2 into the gradient, or adamw's decoupled factor */
            const double gi = cfg->optimizer == FFNN_OPT_ADAMW ? g[i] : g[i] + wd * p[i];
            switch (cfg->optimizer) {
            case FFNN_OPT_SGD: p[i] -= lr * gi; break;
            case FFNN_OPT_MOMENTUM: {
                buf[i] = t == 1 ? gi : mu * buf[i] + gi;
                double d = cfg->nesterov ? gi + mu * buf[i] : buf[i];
                p[i] -= lr * d;
                break;
            }
            case FFNN_OPT_ADAMW:
                p[i] *= 1 - lr * wd;
                /* fall through */
            case FFNN_OPT_ADAM: {
                m[i] = beta1 * m[i] + (1 - beta1) * gi;
                v[i] = beta2 * v[i] + (1 - beta2) * gi * gi;
                double step_size = lr / (1 - pow(beta1, t));
                double denom = sqrt(v[i]) / sqrt(1 - pow(beta2, t)) + eps;
                p[i] -= step_size * m[i] / denom;
                break;
            }
            }
        }
        const ffnn_optimizer_step step = ffnn_optimizer_step_at(cfg, (uint64_t)t);
        CHECK(step.first_step == (t == 1 && cfg->optimizer == FFNN_OPT_MOMENTUM),
              "%s step %d: first_step %d", name, t, step.first_step);
        CHECK_OK(ffnn_cpu_backend.optimizer_update(NULL, &step, pf, gf,
                                                   cfg->optimizer == FFNN_OPT_SGD ? NULL : state,
                                                   N));
        CHECK(close_rel(name, t, pf, p, N), "%s: parameters", name);
        if (cfg->optimizer == FFNN_OPT_MOMENTUM)
            CHECK(close_rel("momentum buffer", t, state, buf, N), "%s: buffer", name);
        if (adam) {
            CHECK(close_rel("adam m", t, state, m, N), "%s: m", name);
            CHECK(close_rel("adam v", t, state + N, v, N), "%s: v", name);
        }
    }
    return TEST_PASS;
}

TEST("optim_cpu_reference_3_steps", cpu_reference_sequences)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.optimizer = FFNN_OPT_SGD;
    CHECK_PASS(run_sequence(&cfg, 0.1, "sgd"));
    cfg.optimizer = FFNN_OPT_MOMENTUM;
    CHECK_PASS(run_sequence(&cfg, 0.1, "momentum"));
    cfg.nesterov = 1;
    CHECK_PASS(run_sequence(&cfg, 0.1, "nesterov"));
    cfg.nesterov = 0;
    cfg.optimizer = FFNN_OPT_ADAM;
    CHECK_PASS(run_sequence(&cfg, 0.01, "adam"));
    /* weight decay (torch.optim's weight_decay) with each, and adamw */
    cfg.weight_decay = 0.25f;
    const ffnn_optimizer kinds[] = {FFNN_OPT_SGD, FFNN_OPT_MOMENTUM, FFNN_OPT_ADAM,
                                    FFNN_OPT_ADAMW};
    for (int k = 0; k < 4; k++) {
        cfg.optimizer = kinds[k];
        char name[48];
        snprintf(name, sizeof name, "%s weight_decay 0.25", ffnn_optimizer_name(kinds[k]));
        if (run_sequence(&cfg, kinds[k] >= FFNN_OPT_ADAM ? 0.01 : 0.1, name) != TEST_PASS)
            return TEST_FAIL;
    }
    return TEST_PASS;
}

/* The default configuration with Adam at lr 1e-3 (its other settings the
 * defaults: beta1 0.9, beta2 0.999, eps 1e-8), as torch.optim.Adam's. */
static ffnn_train_config adam_config(void)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.optimizer = FFNN_OPT_ADAM;
    cfg.learning_rate = 1e-3f;
    return cfg;
}

/* Adam's first step moves every parameter with a non-zero gradient by lr against
 * the gradient's sign (m / sqrt(v) = g / |g| after bias correction), to float
 * precision; a zero gradient leaves it. */
TEST("optim_adam_first_step_is_lr_sign", adam_first_step_is_lr_sign)
{
    const ffnn_train_config cfg = adam_config();
    float p[4] = {0.0f, 0.0f, 0.0f, 0.0f}, g[4] = {3e-3f, -40.0f, 0.0f, 1e-5f}, state[8] = {0};
    const ffnn_optimizer_step step = ffnn_optimizer_step_at(&cfg, 1);
    CHECK_OK(ffnn_cpu_backend.optimizer_update(NULL, &step, p, g, state, 4));
    CHECK(fabsf(p[0] + 1e-3f) < 1e-8f && fabsf(p[1] - 1e-3f) < 1e-8f && p[2] == 0.0f &&
              fabsf(p[3] + 1e-3f) < 2e-6f, /* g = 1e-5: eps takes 0.1% */
          "after one Adam step: %.9g %.9g %.9g %.9g", (double)p[0], (double)p[1], (double)p[2],
          (double)p[3]);
    return TEST_PASS;
}

/* The per-step scalars: computed in double from the decimal hyperparameters, as
 * PyTorch does with Python floats, then rounded to float. */
TEST("optim_step_scalars", step_scalars)
{
    const ffnn_train_config cfg = adam_config();
    for (uint64_t t = 1; t <= 1000; t *= 10) {
        const ffnn_optimizer_step s = ffnn_optimizer_step_at(&cfg, t);
        const double td = (double)t;
        CHECK(s.one_minus_beta1 == (float)(1.0 - 0.9), "1 - beta1 = %.9g", (double)s.one_minus_beta1);
        /* (float)(1 - 0.999) = 0.001f, not 1 - 0.999f = 0.00099998713f */
        CHECK(s.one_minus_beta2 == (float)(1.0 - 0.999), "1 - beta2 = %.9g",
              (double)s.one_minus_beta2);
        CHECK(s.step_size == (float)(1e-3 / (1.0 - pow(0.9, td))), "t %u: step_size %.9g",
              (unsigned)t, (double)s.step_size);
        CHECK(s.bias_correction2_sqrt == (float)sqrt(1.0 - pow(0.999, td)),
              "t %u: bias_correction2_sqrt %.9g", (unsigned)t, (double)s.bias_correction2_sqrt);
        CHECK(s.eps == 1e-8f && s.beta2 == 0.999f && s.lr == 1e-3f && s.kind == FFNN_OPT_ADAM,
              "copied hyperparameters");
        CHECK(s.first_step == 0, "t %u: first_step %d (momentum's flag)", (unsigned)t,
              s.first_step);
    }
    CHECK(ffnn_optimizer_state_count(FFNN_OPT_SGD) == 0 &&
              ffnn_optimizer_state_count(FFNN_OPT_MOMENTUM) == 1 &&
              ffnn_optimizer_state_count(FFNN_OPT_ADAM) == 2,
          "state counts");
    return TEST_PASS;
}

/* A captured CUDA graph is replayed only while the step's scalars are the same bytes
 * (src/strategy/graph.c): sgd's every step and momentum's after the first must be,
 * with weight decay and Nesterov too; Adam's change with t (never replayed). Adam's
 * bias corrections once leaked into sgd's struct, and no sgd graph was ever replayed. */
TEST("optim_steps_replayable", steps_replayable)
{
    const ffnn_optimizer kinds[] = {FFNN_OPT_SGD, FFNN_OPT_MOMENTUM, FFNN_OPT_ADAM,
                                    FFNN_OPT_ADAMW};
    for (int k = 0; k < 4; k++) {
        ffnn_train_config cfg = ffnn_train_config_default();
        cfg.optimizer = kinds[k];
        cfg.learning_rate = 0.05f;
        cfg.weight_decay = 1e-4f;
        cfg.momentum = 0.9f;
        cfg.nesterov = 1;
        const int first = kinds[k] == FFNN_OPT_MOMENTUM ? 2 : 1;
        const ffnn_optimizer_step ref = ffnn_optimizer_step_at(&cfg, (uint64_t)first);
        const uint64_t ts[] = {2, 3, 59, 60, 1000, 100000};
        for (int i = 0; i < 6; i++) {
            const ffnn_optimizer_step s = ffnn_optimizer_step_at(&cfg, ts[i]);
            const int same = memcmp(&s, &ref, sizeof s) == 0;
            if (kinds[k] == FFNN_OPT_ADAM || kinds[k] == FFNN_OPT_ADAMW)
                CHECK(!same || ts[i] == (uint64_t)first, "%s: step %llu has step 1's scalars",
                      ffnn_optimizer_name(kinds[k]), (unsigned long long)ts[i]);
            else
                CHECK(same, "%s: step %llu's scalars differ from step %d's",
                      ffnn_optimizer_name(kinds[k]), (unsigned long long)ts[i], first);
        }
        if (kinds[k] == FFNN_OPT_MOMENTUM) {
            const ffnn_optimizer_step s1 = ffnn_optimizer_step_at(&cfg, 1);
            CHECK(s1.first_step == 1 && memcmp(&s1, &ref, sizeof s1) != 0,
                  "momentum: step 1 (buf = g) looks like the later steps");
        }
    }
    return TEST_PASS;
}

TEST("optim_names_and_defaults", names_and_defaults)
{
    const char *names[] = {"sgd", "momentum", "adam", "adamw"};
    for (int i = 0; i < 4; i++) {
        ffnn_optimizer o = (ffnn_optimizer)99;
        CHECK_OK(ffnn_optimizer_from_name(names[i], &o));
        CHECK((int)o == i, "%s -> %d", names[i], (int)o);
        CHECK(strcmp(ffnn_optimizer_name(o), names[i]) == 0, "%d -> %s", i,
              ffnn_optimizer_name(o));
    }
    ffnn_optimizer o = FFNN_OPT_ADAM;
    CHECK(ffnn_optimizer_from_name("lamb", &o) == FFNN_ERR_PARSE && o == FFNN_OPT_ADAM,
          "lamb accepted");
    CHECK(strstr(ffnn_last_error(), "unknown optimizer 'lamb' (expected one of: sgd, momentum, "
                                    "adam, adamw)"),
          "%s", ffnn_last_error());
    ffnn_train_config c = ffnn_train_config_default();
    CHECK(c.optimizer == FFNN_OPT_SGD && c.momentum == 0.9f && c.nesterov == 0 &&
              c.beta1 == 0.9f && c.beta2 == 0.999f && c.epsilon == 1e-8f,
          "defaults: %d %g %d %g %g %g", (int)c.optimizer, (double)c.momentum, c.nesterov,
          (double)c.beta1, (double)c.beta2, (double)c.epsilon);
    return TEST_PASS;
}

/* Weight decay's scalars and one element of each optimizer against the formula
 * written out: sgd/momentum/adam add wd p to g (one fma), adamw multiplies p by
 * (float)(1 - lr wd) computed in double from the decimal values. */
TEST("optim_weight_decay_scalars", weight_decay_scalars)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.optimizer = FFNN_OPT_ADAMW;
    cfg.learning_rate = 1e-3f;
    cfg.weight_decay = 0.05f;
    ffnn_optimizer_step s = ffnn_optimizer_step_at(&cfg, 1);
    CHECK(s.weight_decay == 0.0f && s.decay_factor == (float)(1.0 - 1e-3 * 0.05),
          "adamw: wd %g factor %.9g", (double)s.weight_decay, (double)s.decay_factor);
    const ffnn_optimizer_step plain = ffnn_optimizer_step_no_decay(s);
    CHECK(plain.decay_factor == 1.0f && plain.weight_decay == 0.0f, "no_decay kept a decay");
    cfg.optimizer = FFNN_OPT_SGD;
    cfg.learning_rate = 0.1f;
    cfg.weight_decay = 0.25f;
    s = ffnn_optimizer_step_at(&cfg, 1);
    CHECK(s.weight_decay == 0.25f && s.decay_factor == 1.0f, "sgd: wd %g factor %g",
          (double)s.weight_decay, (double)s.decay_factor);
    float p = 2.0f, g = 0.5f;
    CHECK_OK(ffnn_cpu_backend.optimizer_update(NULL, &s, &p, &g, NULL, 1));
    /* g' = 0.5 + 0.25 * 2 = 1 (exact); p = 2 - 0.1f * 1 */
    CHECK(p == 2.0f - 0.1f, "sgd with decay: %.9g, want %.9g", (double)p, (double)(2.0f - 0.1f));
    cfg.optimizer = FFNN_OPT_ADAMW;
    cfg.weight_decay = 0.5f;
    s = ffnn_optimizer_step_at(&cfg, 1);
    float q = 1.0f, zero = 0.0f, state[2] = {0, 0};
    CHECK_OK(ffnn_cpu_backend.optimizer_update(NULL, &s, &q, &zero, state, 1));
    /* zero gradient: m = v = 0, the update adds 0: only the decay acts */
    CHECK(q == (float)(1.0 - 0.1 * 0.5), "adamw decay of 1: %.9g", (double)q);
    return TEST_PASS;
}

/* ------------------------------------------------------------ trainer */

/* A trainer on the first 256 Fashion-MNIST images, file order, batch 32. */
static ffnn_status small_trainer(ffnn_optimizer opt, ffnn_dataset **full, ffnn_dataset **train,
                                 ffnn_model **m, ffnn_trainer **t)
{
    ffnn_status st;
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
    cfg.optimizer = opt;
    cfg.learning_rate = opt == FFNN_OPT_ADAM ? 1e-3f : 0.01f;
    cfg.batch_size = 32;
    cfg.shuffle = 0;
    if ((st = ffnn_dataset_load_idx_dir("/usr/share/datasets/fashion-mnist", full, NULL)) ||
        (st = ffnn_dataset_slice(*full, 0, 256, train)) ||
        (st = ffnn_model_create("784-16relu-10", m)) || (st = ffnn_model_init(*m, 7)))
        return st;
    return ffnn_trainer_create(*m, *train, &cfg, t);
}

/* After one step the trainer's state is what the optimizer makes of the first
 * batch's gradient: momentum's buf = g exactly; Adam's m = lerp(0, g, 0.1) and
 * v = (0.001 g) g, to the bit. The state has the documented size, and
 * ffnn_trainer_optimizer_state refuses a buffer that is too small. */
TEST("optim_trainer_state", trainer_state)
{
    static const ffnn_optimizer opts[] = {FFNN_OPT_SGD, FFNN_OPT_MOMENTUM, FFNN_OPT_ADAM};
    for (int k = 0; k < 3; k++) {
        ffnn_dataset *full = NULL, *train = NULL;
        ffnn_model *m = NULL;
        ffnn_trainer *t = NULL;
        CHECK_OK(small_trainer(opts[k], &full, &train, &m, &t));
        const size_t np = ffnn_model_parameter_count(m);
        const size_t want = ffnn_optimizer_state_count(opts[k]) * np;
        size_t count = 0;
        CHECK_OK(ffnn_trainer_optimizer_state(t, NULL, &count));
        CHECK(count == want, "%s: state count %zu, want %zu", ffnn_optimizer_name(opts[k]),
              count, want);
        CHECK(ffnn_trainer_optimizer_steps(t) == 0, "steps before training");
        float *g = malloc(np * sizeof *g), *state = malloc((want + 1) * sizeof *state);
        CHECK(g && state, "out of memory");
        int32_t rows[32];
        for (int i = 0; i < 32; i++)
            rows[i] = i;
        double loss, step_loss;
        CHECK_OK(ffnn_trainer_gradient(t, rows, 32, &loss, g));
        CHECK_OK(ffnn_trainer_step(t, &step_loss));
        CHECK(step_loss == loss, "the first step's batch is rows 0..31: %.9g vs %.9g", step_loss,
              loss);
        CHECK(ffnn_trainer_optimizer_steps(t) == 1, "steps after one step");
        count = want + 1;
        CHECK_OK(ffnn_trainer_optimizer_state(t, state, &count));
        CHECK(count == want, "count after download %zu", count);
        size_t nonzero = 0;
        for (size_t i = 0; i < np; i++) {
            nonzero += g[i] != 0.0f;
            if (opts[k] == FFNN_OPT_MOMENTUM)
                CHECK(state[i] == g[i], "momentum buf[%zu] %.9g, g %.9g", i, (double)state[i],
                      (double)g[i]);
            if (opts[k] == FFNN_OPT_ADAM) {
                const float m1 = 0.1f * g[i], v1 = (0.001f * g[i]) * g[i];
                CHECK(state[i] == m1 && state[np + i] == v1, "adam [%zu]: m %.9g v %.9g, want %.9g %.9g",
                      i, (double)state[i], (double)state[np + i], (double)m1, (double)v1);
            }
        }
        CHECK(nonzero > np / 2, "the gradient is mostly zero (%zu of %zu non-zero)", nonzero, np);
        if (want > 0) {
            count = want - 1;
            CHECK(ffnn_trainer_optimizer_state(t, state, &count) == FFNN_ERR_INVALID_ARGUMENT,
                  "a too small buffer was accepted");
            CHECK(strstr(ffnn_last_error(), "room for"), "%s", ffnn_last_error());
        }
        free(g);
        free(state);
        TEST_FREE(t, m, train, full);
    }
    return TEST_PASS;
}

/* Out-of-range hyperparameters fail at create time with a message naming them. */
TEST("optim_rejects_bad_config", rejects_bad_config)
{
    ffnn_dataset *full = NULL, *train = NULL;
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_dataset_load_idx_dir("/usr/share/datasets/fashion-mnist", &full, NULL));
    CHECK_OK(ffnn_dataset_slice(full, 0, 100, &train));
    CHECK_OK(ffnn_model_create("784-8relu-10", &m));
    struct {
        int optimizer, nesterov;
        float momentum, beta1, beta2, eps;
        const char *expect;
    } bad[] = {
        {7, 0, 0.9f, 0.9f, 0.999f, 1e-8f, "unknown optimizer 7"},
        {1, 0, 1.0f, 0.9f, 0.999f, 1e-8f, "momentum must be in [0, 1), found 1"},
        {1, 0, -0.5f, 0.9f, 0.999f, 1e-8f, "momentum must be in [0, 1), found -0.5"},
        {1, 0, NAN, 0.9f, 0.999f, 1e-8f, "momentum must be in [0, 1)"},
        {0, 1, 0.9f, 0.9f, 0.999f, 1e-8f, "nesterov needs the momentum optimizer"},
        {1, 1, 0.0f, 0.9f, 0.999f, 1e-8f, "with a momentum > 0"},
        {2, 0, 0.9f, 1.0f, 0.999f, 1e-8f, "beta1 must be in [0, 1), found 1"},
        {2, 0, 0.9f, 0.9f, -0.5f, 1e-8f, "beta2 must be in [0, 1), found -0.5"},
        {2, 0, 0.9f, 0.9f, INFINITY, 1e-8f, "beta2 must be in [0, 1)"},
        {2, 0, 0.9f, 0.9f, 0.999f, 0.0f, "epsilon must be in (0, 1], found 0"},
        {2, 0, 0.9f, 0.9f, 0.999f, 2.0f, "epsilon must be in (0, 1], found 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
        cfg.optimizer = (ffnn_optimizer)bad[i].optimizer;
        cfg.nesterov = bad[i].nesterov;
        cfg.momentum = bad[i].momentum;
        cfg.beta1 = bad[i].beta1;
        cfg.beta2 = bad[i].beta2;
        cfg.epsilon = bad[i].eps;
        ffnn_trainer *t = NULL;
        ffnn_status st = ffnn_trainer_create(m, train, &cfg, &t);
        CHECK(st == FFNN_ERR_INVALID_ARGUMENT && t == NULL, "case %zu: status %d", i, (int)st);
        CHECK(strstr(ffnn_last_error(), bad[i].expect), "case %zu: '%s' lacks '%s'", i,
              ffnn_last_error(), bad[i].expect);
    }
    /* the edges that are allowed: momentum 0, beta1 0 */
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
    cfg.optimizer = FFNN_OPT_MOMENTUM;
    cfg.momentum = 0.0f;
    cfg.beta1 = 0.0f;
    ffnn_trainer *t = NULL;
    CHECK_OK(ffnn_trainer_create(m, train, &cfg, &t));
    TEST_FREE(t, m, train, full);
    return TEST_PASS;
}
