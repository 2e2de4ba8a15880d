/* test_embedding.c - the embedding layer (core/embedding.h): the architecture
 * token, the forward rule (unseen codes read zeros), fastai's dimension rule,
 * the cpu reference's gradient against central differences, the omp backend
 * against the cpu reference (bit-equal: both copy and add in the same order),
 * the model file, the predictor, and `ffnn train` on a CSV with
 * a 100-level text column end to end. PyTorch's nn.Embedding: test_torch.c;
 * ONNX export against onnxruntime: test_onnx.c. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "check.h"
#include "cli_run.h"
#include "core/model.h"
#include "ffnn.h"
#include "test_fixtures.h"
#include "test_parity.h"
#include "train/train_internal.h"

static uint64_t em_state = 0x9e3779b97f4a7c15ull;
static float em_uniform(void) /* [0, 1) */
{
    em_state ^= em_state << 13;
    em_state ^= em_state >> 7;
    em_state ^= em_state << 17;
    return (float)(em_state >> 40) / 16777216.0f;
}

/* The codes a table of n levels may be given: mostly levels, sometimes an unseen
 * one (n, -1), a non-integer, NaN when nan_ok. */
static float em_code(size_t n, int nan_ok)
{
    const float u = em_uniform();
    if (u < 0.04f) return (float)n;
    if (u < 0.06f) return -1.0f;
    if (u < 0.08f) return 1.5f;
    if (nan_ok && u < 0.10f) return NAN;
    return (float)(size_t)(em_uniform() * (float)n);
}

TEST("embedding_arch", em_arch)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("5-embed7x3_4x2-4tanh-3", &m));
    size_t in = 0, out = 0, count = 0, levels[2], dims[2], fan_in = 0;
    ffnn_layer_kind kind;
    CHECK_OK(ffnn_model_layer(m, 0, &in, &out, NULL, NULL));
    CHECK_OK(ffnn_model_layer_kind(m, 0, &kind, &fan_in, NULL));
    CHECK(kind == FFNN_LAYER_EMBEDDING && in == 5 && out == 3 + 3 + 2 && fan_in == 1,
          "kind %d in %zu out %zu", (int)kind, in, out);
    CHECK_OK(ffnn_model_embedding(m, 0, &count, levels, dims, 2));
    CHECK(count == 2 && levels[0] == 7 && dims[0] == 3 && levels[1] == 4 && dims[1] == 2,
          "tables");
    CHECK(ffnn_model_embedding(m, 1, &count, NULL, NULL, 0) == FFNN_ERR_INVALID_ARGUMENT,
          "layer 1 is dense");
    CHECK(ffnn_model_parameter_count(m) == 7 * 3 + 4 * 2 + (8 * 4 + 4) + (4 * 3 + 3), "count");
    CHECK(ffnn_model_bias(m, 0) == NULL, "no bias");
    char buf[128];
    ffnn_model_arch_string(m, buf, sizeof buf);
    CHECK(strcmp(buf, "5-embed7x3_4x2-4tanh-3") == 0, "canonical %s", buf);
    CHECK_OK(ffnn_model_init(m, 3)); /* N(0, 1): some values beyond 1 */
    const float *W = ffnn_model_weight(m, 0);
    double sq = 0.0;
    for (size_t k = 0; k < 29; k++)
        sq += (double)W[k] * W[k];
    CHECK(sq / 29.0 > 0.3 && sq / 29.0 < 3.0, "init variance %g", sq / 29.0);
    ffnn_model_free(m);
    const char *bad[] = {"5-4-embed3x2-2", "2-embed3x2_3x2_3x2-2", "5-embed3x2relu-2",
                         "5-embed3-2", "5-embed0x2-2", "5-embed3x2:nobias-2", "5-embed3x2_-2",
                         "5-embedx2-2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        m = NULL;
        CHECK(ffnn_model_create(bad[i], &m) == FFNN_ERR_PARSE, "%s parsed", bad[i]);
    }
    CHECK(strstr(ffnn_last_error(), "column") != NULL, "%s", ffnn_last_error());
    CHECK(ffnn_model_create("5-4-embed3x2-2", &m) == FFNN_ERR_PARSE &&
              strstr(ffnn_last_error(), "first layer"),
          "%s", ffnn_last_error());
    return TEST_PASS;
}

TEST("embedding_forward_rule", em_forward_rule)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("3-embed4x2_3x1", &m)); /* 1 passed, 2 codes; out 4 */
    float *W = ffnn_model_weight(m, 0);
    for (int k = 0; k < 11; k++)
        W[k] = (float)(k + 1); /* table 0 rows (1,2) (3,4) (5,6) (7,8); table 1: 9 10 11 */
    const float x[] = {0.5f, 2, 1, -7, 3, 0, 9, 4, 2.5f, 1, NAN, 2};
    const float want[] = {0.5f, 5, 6, 10, -7, 7, 8, 9, 9, 0, 0, 0, 1, 0, 0, 11};
    float y[16];
    CHECK_OK(ffnn_model_forward(m, x, 4, y));
    for (int i = 0; i < 16; i++)
        CHECK(y[i] == want[i], "y[%d] = %g, expected %g", i, (double)y[i], (double)want[i]);
    ffnn_model_free(m);
    /* fastai's rule: min(600, round(1.6 n^0.56)) */
    CHECK(ffnn_embedding_dim_rule(2) == 2 && ffnn_embedding_dim_rule(100) == 21 &&
              ffnn_embedding_dim_rule(33) == 11 && ffnn_embedding_dim_rule(1000000) == 600 &&
              ffnn_embedding_dim_rule(1) == 2,
          "rule: %zu %zu %zu %zu", ffnn_embedding_dim_rule(2), ffnn_embedding_dim_rule(100),
          ffnn_embedding_dim_rule(33), ffnn_embedding_dim_rule(1000000));
    return TEST_PASS;
}

enum { GC_N = 10, GC_F = 5 };

/* Analytic gradient (ffnn_trainer_gradient, the cpu reference) of every
 * parameter of arch against (L(p+h) - L(p-h)) / 2h, h = 1e-2: |fd - g| <= 1e-4 +
 * 1e-3 |g| (tests/test_gradcheck.c has the reasoning; these nets are smooth). */
TEST("embedding_gradcheck_cpu", em_gradcheck)
{
    const char *arch = "5-embed7x3_4x2-4tanh-3";
    float x[GC_N * GC_F];
    int32_t y[GC_N], rows[GC_N];
    for (int i = 0; i < GC_N; i++) {
        for (int f = 0; f < 3; f++)
            x[i * GC_F + f] = 2.0f * em_uniform() - 1.0f;
        x[i * GC_F + 3] = i == 4 ? -1.0f : (float)(i % 6); /* level 6 unseen: its rows' */
        x[i * GC_F + 4] = i == 7 ? 4.0f : (float)(i % 3);  /* gradient stays 0          */
        y[i] = i % 3;
        rows[i] = i;
    }
    ffnn_dataset *ds = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(GC_N, GC_F, x, y, 0, NULL, &ds));
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create(arch, &m));
    CHECK_OK(ffnn_model_init(m, 11));
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
    cfg.batch_size = GC_N;
    cfg.eval_batch_size = GC_N;
    ffnn_trainer *t = NULL;
    CHECK_OK(ffnn_trainer_create(m, ds, &cfg, &t));
    float *p = ffnn_model_parameters(m);
    const size_t n = ffnn_model_parameter_count(m);
    float *g = malloc(n * sizeof *g);
    CHECK(g != NULL, "malloc");
    double L0, Lp, Lm;
    CHECK_OK(ffnn_trainer_gradient(t, rows, GC_N, &L0, g));
    for (size_t k = 18; k < 21; k++) /* table 0, row 6: no sample has it */
        CHECK(g[k] == 0.0f, "unseen row's gradient %g", (double)g[k]);
    const float h = 1e-2f;
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        const float saved = p[i];
        p[i] = saved + h;
        CHECK_OK(ffnn_trainer_upload_model(t));
        CHECK_OK(ffnn_trainer_gradient(t, rows, GC_N, &Lp, NULL));
        p[i] = saved - h;
        CHECK_OK(ffnn_trainer_upload_model(t));
        CHECK_OK(ffnn_trainer_gradient(t, rows, GC_N, &Lm, NULL));
        p[i] = saved;
        const double fd = (Lp - Lm) / (2.0 * h);
        CHECK(fabs(fd - g[i]) <= 1e-4 + 1e-3 * fabs(g[i]),
              "parameter %zu (%s): analytic %.6g, central difference %.6g", i,
              i < 29 ? "embedding" : "dense", (double)g[i], fd);
        nonzero += i < 29 && g[i] != 0.0f;
    }
    CHECK(nonzero >= 20, "only %zu embedding gradients non-zero", nonzero);
    CHECK_OK(ffnn_trainer_upload_model(t));
    free(g);
    ffnn_trainer_free(t);
    ffnn_model_free(m);
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

/* A layer of `count` tables on `passed` values, its array owned by the caller. */
static void em_spec(ffnn_embedding_spec *s, ffnn_embedding_table *t, size_t passed,
                    const size_t *levels, const size_t *dims, size_t count)
{
    memset(s, 0, sizeof *s);
    for (size_t j = 0; j < count; j++) {
        t[j].levels = levels[j];
        t[j].dim = dims[j];
    }
    s->table = t;
    s->count = count;
    s->in = passed + count;
    ffnn_embedding_layout(s);
}

/* Random x [batch, in] (codes included), W [weights], dz [batch, out]. */
static void em_fill(const ffnn_embedding_spec *s, size_t batch, float *x, float *W, float *dz)
{
    for (size_t b = 0; b < batch; b++) {
        for (size_t p = 0; p < s->passed; p++)
            x[b * s->in + p] = 2.0f * em_uniform() - 1.0f;
        for (size_t j = 0; j < s->count; j++)
            x[b * s->in + s->passed + j] = em_code(s->table[j].levels, 1);
    }
    for (size_t k = 0; k < s->weights; k++)
        W[k] = 2.0f * em_uniform() - 1.0f;
    for (size_t k = 0; k < batch * s->out; k++)
        dz[k] = 2.0f * em_uniform() - 1.0f;
}

/* backend `ops` against the cpu reference on fresh random inputs (codes with
 * unseen levels, -1, 1.5 and NaN among them; 1, 37 and 1500 rows): forward and
 * backward bit-equal (every backend's kernels copy and add in the reference's
 * order: core/embedding.h). Also test_cuda.c's for the cuda backend. */
test_result ffnn_test_embedding_backend(const ffnn_backend_ops *ops, char *why, size_t why_size)
{
    (void)why, (void)why_size;
    const size_t levels[] = {100, 3, 1000, 17}, dims[] = {21, 2, 7, 33};
    const size_t batches[] = {1, 37, 1500};
    ffnn_embedding_table tab[4];
    ffnn_embedding_spec s;
    void *ctx = NULL;
    CHECK_OK(ops->create(NULL, &ctx));
    for (size_t shape = 0; shape < 2; shape++) {
        em_spec(&s, tab, shape ? 0 : 6, levels + shape, dims + shape, shape ? 3 : 4);
        for (size_t bi = 0; bi < 3; bi++) {
            const size_t B = batches[bi];
            const size_t nx = B * s.in, na = B * s.out;
            float *x = malloc(nx * 4), *W = malloc(s.weights * 4), *dz = malloc(na * 4);
            float *a0 = malloc(na * 4), *a1 = malloc(na * 4);
            float *g0 = malloc(s.weights * 4), *g1 = malloc(s.weights * 4);
            CHECK(x && W && dz && a0 && a1 && g0 && g1, "malloc");
            em_fill(&s, B, x, W, dz);
            ffnn_cpu_embedding_forward(x, W, a0, B, &s);
            ffnn_cpu_embedding_backward(x, dz, g0, B, &s);
            void *dx = NULL, *dW = NULL, *ddz = NULL, *da = NULL, *dg = NULL;
            CHECK_OK(ops->alloc(ctx, nx * 4, &dx));
            CHECK_OK(ops->alloc(ctx, s.weights * 4, &dW));
            CHECK_OK(ops->alloc(ctx, na * 4, &ddz));
            CHECK_OK(ops->alloc(ctx, na * 4, &da));
            CHECK_OK(ops->alloc(ctx, s.weights * 4, &dg));
            CHECK_OK(ops->upload(ctx, dx, x, nx * 4));
            CHECK_OK(ops->upload(ctx, dW, W, s.weights * 4));
            CHECK_OK(ops->upload(ctx, ddz, dz, na * 4));
            CHECK_OK(ops->upload(ctx, dg, W, s.weights * 4)); /* stale: overwritten */
            memset(a1, 0xFF, na * 4); /* NaN: a value the kernel forgets fails */
            CHECK_OK(ops->upload(ctx, da, a1, na * 4));
            CHECK_OK(ops->embedding_forward(ctx, dx, dW, da, B, &s));
            CHECK_OK(ops->embedding_backward(ctx, dx, ddz, dg, B, &s));
            CHECK_OK(ops->download(ctx, a1, da, na * 4));
            CHECK_OK(ops->download(ctx, g1, dg, s.weights * 4));
            for (size_t k = 0; k < na; k++)
                CHECK(memcmp(&a0[k], &a1[k], 4) == 0, "%s forward batch %zu: a[%zu] = %.9g, "
                      "reference %.9g", ops->name, B, k, (double)a1[k], (double)a0[k]);
            for (size_t k = 0; k < s.weights; k++)
                CHECK(memcmp(&g0[k], &g1[k], 4) == 0, "%s backward batch %zu: dW[%zu] = %.9g, "
                      "reference %.9g", ops->name, B, k, (double)g1[k], (double)g0[k]);
            void *bufs[] = {dx, dW, ddz, da, dg};
            for (int i = 0; i < 5; i++)
                ops->release(ctx, bufs[i]);
            free(x), free(W), free(dz), free(a0), free(a1), free(g0), free(g1);
        }
    }
    ops->destroy(ctx);
    return TEST_PASS;
}

TEST("embedding_omp_matches_cpu", em_omp_matches_cpu)
{
    return ffnn_test_embedding_backend(&ffnn_omp_backend, why, why_size);
}

/* A small table net trained a few steps on the cpu, for the file tests. */
static test_result em_trained(ffnn_model **out, ffnn_dataset **data)
{
    enum { N = 64, F = 4 };
    float x[N * F];
    int32_t y[N];
    for (int i = 0; i < N; i++) {
        x[i * F + 0] = 2.0f * em_uniform() - 1.0f;
        x[i * F + 1] = 2.0f * em_uniform() - 1.0f;
        x[i * F + 2] = (float)(i % 30);
        x[i * F + 3] = (float)(i % 5);
        y[i] = (i % 30) < 15;
    }
    CHECK_OK(ffnn_dataset_from_arrays(N, F, x, y, 0, NULL, data));
    CHECK_OK(ffnn_model_create("4-embed30x4_5x2-8relu-2", out));
    CHECK_OK(ffnn_model_init(*out, 5));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.epochs = 3;
    cfg.batch_size = 16;
    cfg.optimizer = FFNN_OPT_ADAM;
    cfg.learning_rate = 0.01f;
    ffnn_trainer *t = NULL;
    CHECK_OK(ffnn_trainer_create(*out, *data, &cfg, &t));
    ffnn_epoch_stats stats;
    for (int e = 0; e < 3; e++)
        CHECK_OK(ffnn_trainer_run_epoch(t, NULL, NULL, &stats));
    ffnn_trainer_free(t);
    return TEST_PASS;
}

TEST("embedding_model_file", em_model_file)
{
    ffnn_model *m = NULL, *back = NULL;
    ffnn_dataset *ds = NULL;
    CHECK_PASS(em_trained(&m, &ds));
    char path[64];
    snprintf(path, sizeof path, "/tmp/ffnn_embedding_%d.safetensors", (int)getpid());
    CHECK_OK(ffnn_model_save(m, path));
    CHECK_OK(ffnn_model_load(path, &back, NULL));
    unlink(path);
    const size_t n = ffnn_model_parameter_count(m);
    CHECK(ffnn_model_parameter_count(back) == n &&
              memcmp(ffnn_model_parameters(m), ffnn_model_parameters(back), n * 4) == 0,
          "parameters differ after the round trip");
    const float *x = ffnn_dataset_float_features(ds);
    float y0[64 * 2], y1[64 * 2];
    CHECK_OK(ffnn_model_forward(m, x, 64, y0));
    ffnn_predictor *p = NULL;
    CHECK_OK(ffnn_predictor_create(back, FFNN_DEVICE_CPU, 2, 64, &p));
    CHECK_OK(ffnn_predictor_forward(p, x, 64, y1));
    for (int i = 0; i < 128; i++)
        CHECK(fabsf(y0[i] - y1[i]) <= 1e-5f * (1.0f + fabsf(y0[i])), "y[%d]: %g vs %g", i,
              (double)y0[i], (double)y1[i]);
    ffnn_predictor_free(p);
    ffnn_model_free(back);
    ffnn_model_free(m);
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

/* End to end through the CLI: a CSV with a 100-level text column trains with it
 * embedded (the data line says so), saves, resumes bit-exactly from a checkpoint,
 * and predicts raw rows, an unseen level among them (counted in the note). */
TEST("embedding_cli_csv_end_to_end", em_cli)
{
    char dir[] = "/tmp/ffnn_embed_cli_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char csv[96], pred[96], model[96], ck[96], resumed[96], out[96];
    snprintf(csv, sizeof csv, "%s/train.csv", dir);
    snprintf(pred, sizeof pred, "%s/predict.csv", dir);
    snprintf(model, sizeof model, "%s/m.safetensors", dir);
    snprintf(ck, sizeof ck, "%s/ck.safetensors", dir);
    snprintf(resumed, sizeof resumed, "%s/r.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    FILE *f = fopen(csv, "w");
    CHECK(f != NULL, "%s", csv);
    fprintf(f, "age,color,city,y\n");
    for (int i = 0; i < 1500; i++) {
        const int city = (int)(em_uniform() * 100.0f), color = i % 3;
        const float age = 2.0f * em_uniform() - 1.0f;
        const float score = (float)((city * 37) % 100) / 50.0f - 1.0f + age * 0.5f;
        fprintf(f, "%.3f,%s,c%03d,%s\n", (double)age, color == 0 ? "r" : color == 1 ? "g" : "b",
                city, score > 0.0f ? "yes" : "no");
    }
    fclose(f);
    f = fopen(pred, "w");
    CHECK(f != NULL, "%s", pred);
    fprintf(f, "age,color,city\n0.5,r,c001\n0.1,g,unseen_city\n-0.2,b,c050\n");
    fclose(f);
    const char *train[] = {"train", "--data", csv, "--epochs", "4", "--test-split", "0.2",
                           "--optimizer", "adam", "--lr", "0.01", "--save", model, NULL};
    CHECK(cli_run(train, out, NULL) == 0, "ffnn train failed (output in %s)", out);
    CHECK(file_contains(out, "one-hot: color (3); embedded: city (100 levels, dim 21)") &&
              file_contains(out, "arch 5-embed100x21-256relu-2"),
          "the data line does not name the embedded column (%s)", out);
    const char *predict[] = {"predict", "--model", model, "--data", pred, NULL};
    CHECK(cli_run(predict, out, NULL) == 0, "ffnn predict failed (%s)", out);
    CHECK(file_contains(out, "class,p_no,p_yes") &&
              file_contains(out, "1 cell of a category the model was not trained on"),
          "predict on raw rows (%s)", out);
    /* the same run stopped at step 40 and resumed: the same bits */
    const char *part[] = {"train", "--data", csv, "--epochs", "4", "--test-split", "0.2",
                          "--optimizer", "adam", "--lr", "0.01", "--checkpoint", ck,
                          "--max-steps", "40", NULL};
    CHECK(cli_run(part, out, NULL) == 0, "ffnn train --max-steps failed (%s)", out);
    const char *resume[] = {"train", "--data", csv, "--test-split", "0.2", "--resume", ck,
                            "--save", resumed, NULL};
    CHECK(cli_run(resume, out, NULL) == 0, "ffnn train --resume failed (%s)", out);
    ffnn_model *a = NULL, *b = NULL;
    CHECK_OK(ffnn_model_load(model, &a, NULL));
    CHECK_OK(ffnn_model_load(resumed, &b, NULL));
    const size_t n = ffnn_model_parameter_count(a);
    CHECK(n == ffnn_model_parameter_count(b) &&
              memcmp(ffnn_model_parameters(a), ffnn_model_parameters(b), n * 4) == 0,
          "the resumed run's weights differ from the uninterrupted run's");
    ffnn_model_free(a);
    ffnn_model_free(b);
    /* one-hot when the threshold is above the level count; a bad override refused */
    const char *onehot[] = {"train", "--data", csv, "--epochs", "1", "--max-one-hot", "100",
                            NULL};
    CHECK(cli_run(onehot, out, NULL) == 0 && file_contains(out, "one-hot: color (3), city (100)"),
          "--max-one-hot 100 (%s)", out);
    const char *bad[] = {"train", "--data", csv, "--epochs", "1", "--embedding-dim", "age:3",
                         NULL};
    CHECK(cli_run(bad, out, NULL) != 0 && file_contains(out, "'age' is a numeric column"),
          "--embedding-dim age:3 (%s)", out);
    const char *files[] = {csv, pred, model, ck, resumed, out};
    for (int i = 0; i < 6; i++)
        unlink(files[i]);
    rmdir(dir);
    return TEST_PASS;
}

/* On a GPU: every strategy that runs the layer follows the cpu reference step by
 * step (200 steps, test_steps_follow's fp32 bound) on a table net with two
 * embedded columns; persistent refuses it naming the layer. */
TEST("embedding_cuda_strategies_follow_cpu", em_cuda_strategies)
{
    SKIP_WITHOUT_GPU();
    enum { N = 3000, F = 5 };
    float *x = malloc(N * F * sizeof *x);
    int32_t *y = malloc(N * sizeof *y);
    CHECK(x && y, "malloc");
    for (int i = 0; i < N; i++) {
        for (int f = 0; f < 3; f++)
            x[i * F + f] = 2.0f * em_uniform() - 1.0f;
        x[i * F + 3] = (float)(size_t)(em_uniform() * 50.0f);
        x[i * F + 4] = (float)(size_t)(em_uniform() * 7.0f);
        y[i] = ((int)x[i * F + 3] * 7 + (int)x[i * F + 4] + (x[i * F] > 0.0f)) % 4;
    }
    ffnn_dataset *ds = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(N, F, x, y, 0, NULL, &ds));
    free(x), free(y);
    const char *arch = "5-embed50x8_7x3-64relu-32tanh-4";
    const ffnn_strategy runs[] = {FFNN_STRATEGY_NAIVE, FFNN_STRATEGY_TILED, FFNN_STRATEGY_CUBLAS,
                                  FFNN_STRATEGY_CUBLASLT, FFNN_STRATEGY_FUSED,
                                  FFNN_STRATEGY_GRAPH};
    const test_follow_opt opts[] = {{FFNN_OPT_SGD, 0, 0.05f, "sgd"},
                                    {FFNN_OPT_ADAM, 0, 0.001f, "adam"}};
    for (size_t s = 0; s < sizeof runs / sizeof *runs; s++)
        for (int o = 0; o < 2; o++)
            if (test_follow_optimizer(ds, arch, runs[s], FFNN_PRECISION_FP32, &opts[o], 200) !=
                TEST_PASS)
                return TEST_FAIL;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    CHECK_OK(ffnn_model_create("5-embed50x8_7x3-64relu-4", &m));
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CUDA, FFNN_STRATEGY_PERSISTENT);
    CHECK(ffnn_trainer_create(m, ds, &cfg, &t) == FFNN_ERR_UNSUPPORTED &&
              strstr(ffnn_last_error(), "embedding layer"),
          "persistent: %s", ffnn_last_error());
    ffnn_model_free(m);
    ffnn_dataset_free(ds);
    return TEST_PASS;
}
