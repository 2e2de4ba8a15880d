/* test_predictor.c - the predictor (include/ffnn.h ffnn_predictor_*) against the
 * cpu reference forward (ffnn_model_forward) on fresh random inputs: every
 * activation, a local1d net, batches above max_batch (chunked), 1 and 2
 * threads; its predictions against softmax of the reference; its errors; the
 * model's remembered loss; and many threads predicting from one model while
 * another thread trains its own (run under ThreadSanitizer by `make tsan`).
 *
 * Tolerance: |predictor - reference| <= 1e-5 (1 + |reference|) per output. The
 * omp matmuls contract a*b+c into fma and sum in blocks, the reference sums in
 * order without fma: for fan-ins up to 64 of values of size ~1 the difference
 * is a few float ulps of the sum (measured below 1e-6). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"
#include "train/predictor.h" /* ffnn_predictor_set_column_work */

#define TOL 1e-5

/* x [n] uniform in [-2, 2) from a xorshift seeded per call (fresh inputs). */
static void random_inputs(float *x, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (float)((double)(s >> 40) / (double)(1ull << 24) * 4.0 - 2.0);
    }
}

/* Worst |a - b| / (1 + |b|) over n values (NaN on a non-finite value). */
static double worst_error(const float *a, const float *b, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i]))
            return NAN;
        double e = fabs((double)a[i] - (double)b[i]) / (1.0 + fabs((double)b[i]));
        if (e > worst)
            worst = e;
    }
    return worst;
}

/* The predictor on max_batch 32 with 1 and 2 threads against ffnn_model_forward
 * on batches 1, 7 and 77 (chunked: 32 + 32 + 13). */
static test_result compare_arch(const char *arch, uint64_t seed)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create(arch, &m));
    CHECK_OK(ffnn_model_init(m, seed));
    const size_t in = ffnn_model_input_size(m), out = ffnn_model_output_size(m);
    const size_t batches[] = {1, 7, 77};
    float *x = malloc(77 * in * sizeof *x), *ref = malloc(77 * out * sizeof *ref);
    float *y1 = malloc(77 * out * sizeof *y1), *y2 = malloc(77 * out * sizeof *y2);
    CHECK(x && ref && y1 && y2, "out of memory");
    for (int threads = 1; threads <= 2; threads++) {
        ffnn_predictor *p = NULL;
        CHECK_OK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, threads, 32, &p));
        CHECK(ffnn_predictor_threads(p) == threads, "threads %d", ffnn_predictor_threads(p));
        CHECK(ffnn_predictor_model(p) == m, "the model");
        for (size_t k = 0; k < 3; k++) {
            size_t b = batches[k];
            random_inputs(x, b * in, seed * 31 + k);
            CHECK_OK(ffnn_model_forward(m, x, b, ref));
            CHECK_OK(ffnn_predictor_forward(p, x, b, threads == 1 ? y1 : y2));
            double e = worst_error(threads == 1 ? y1 : y2, ref, b * out);
            CHECK(e <= TOL, "%s, batch %zu, %d threads: worst error %.3g > %g", arch, b,
                  threads, e, TOL);
        }
        ffnn_predictor_free(p);
    }
    /* the last batch (77 rows) gives the same bits on 1 and 2 threads */
    CHECK(memcmp(y1, y2, 77 * out * sizeof *y1) == 0, "%s: 1 and 2 threads differ", arch);
    /* one row alone (the row kernel, batch < the tile's rows) gives the bits it has
     * inside the batch of 77 (the tile kernel) */
    {
        ffnn_predictor *p = NULL;
        float one[64];
        CHECK(out <= 64, "out %zu", out);
        CHECK_OK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, 1, 32, &p));
        for (size_t r = 0; r < 77; r += 19) {
            CHECK_OK(ffnn_predictor_forward(p, x + r * in, 1, one));
            CHECK(memcmp(one, y1 + r * out, out * sizeof *one) == 0,
                  "%s: row %zu alone differs from the row in the batch", arch, r);
        }
        ffnn_predictor_free(p);
    }
    free(x), free(ref), free(y1), free(y2);
    ffnn_model_free(m);
    return TEST_PASS;
}

TEST("predictor_every_activation", test_predictor_every_activation)
{
    const char *acts[] = {"identity", "relu", "sigmoid", "tanh", "leaky_relu0.2", "elu0.5",
                          "softplus", "gelu", "gelu_tanh", "silu", "mish", "hardswish"};
    for (size_t a = 0; a < sizeof acts / sizeof *acts; a++) {
        char arch[128];
        snprintf(arch, sizeof arch, "37-45%s-29%s-10", acts[a], acts[a]);
        CHECK_PASS(compare_arch(arch, 100 + a));
    }
    return TEST_PASS;
}

TEST("predictor_local1d", test_predictor_local1d)
{
    if (compare_arch("64-local5relu-local3sametanh-24gelu-3", 7) != TEST_PASS ||
        compare_arch("40-local7:nobias-local5samesilu-2", 8) != TEST_PASS)
        return TEST_FAIL;
    return TEST_PASS;
}

/* A batch large enough to be sliced over the threads (lanes), its rows cut into
 * pieces the lanes take in turn: 1, 2 and 3 threads give the same bits, within
 * TOL of the reference; 250 rows in chunks of 96 (3 or 4 pieces a chunk), then in
 * one chunk (10 pieces of 25 rows on 2 or 3 lanes). */
TEST("predictor_slices", test_predictor_slices)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("300-local5relu-400gelu-96tanh-10", &m));
    CHECK_OK(ffnn_model_init(m, 21));
    enum { B = 250, IN = 300, OUT = 10 };
    float *x = malloc(B * IN * sizeof *x), *ref = malloc(B * OUT * sizeof *ref);
    float *y[3] = {malloc(B * OUT * sizeof(float)), malloc(B * OUT * sizeof(float)),
                   malloc(B * OUT * sizeof(float))};
    CHECK(x && ref && y[0] && y[1] && y[2], "out of memory");
    random_inputs(x, B * IN, 5150);
    CHECK_OK(ffnn_model_forward(m, x, B, ref));
    const size_t max_batch[] = {96, B};
    for (int c = 0; c < 2; c++)
        for (int t = 0; t < 3; t++) {
            ffnn_predictor *p = NULL;
            CHECK_OK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, t + 1, max_batch[c], &p));
            memset(y[t], 0, B * OUT * sizeof(float));
            CHECK_OK(ffnn_predictor_forward(p, x, B, y[t]));
            ffnn_predictor_free(p);
            double e = worst_error(y[t], ref, B * OUT);
            CHECK(e <= TOL, "max_batch %zu, %d threads: worst error %.3g > %g", max_batch[c],
                  t + 1, e, TOL);
            CHECK(memcmp(y[t], y[0], B * OUT * sizeof(float)) == 0,
                  "max_batch %zu, %d threads: other bits than 1", max_batch[c], t + 1);
        }
    free(x), free(ref), free(y[0]), free(y[1]), free(y[2]);
    ffnn_model_free(m);
    return TEST_PASS;
}

/* Few rows split by output columns over 3 lanes (forced: the net is small) on
 * odd widths (panels cut mid-layer, a last panel part empty): the bits of 1
 * thread on batches 1, 2, 5 (rows < lanes) and 77 (chunks of 32, then of 11
 * rows a lane: the tile kernel), within TOL of the reference. */
TEST("predictor_columns", test_predictor_columns)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("37-129relu-67tanh-5", &m));
    CHECK_OK(ffnn_model_init(m, 33));
    enum { B = 77, IN = 37, OUT = 5 };
    const size_t batches[] = {1, 2, 5, 77};
    float *x = malloc(B * IN * sizeof *x), *ref = malloc(B * OUT * sizeof *ref);
    float *y1 = malloc(B * OUT * sizeof *y1), *y3 = malloc(B * OUT * sizeof *y3);
    CHECK(x && ref && y1 && y3, "out of memory");
    ffnn_predictor *p1 = NULL, *p3 = NULL;
    CHECK_OK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, 1, 32, &p1));
    CHECK_OK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, 3, 32, &p3));
    ffnn_predictor_set_column_work(p3, 1);
    for (size_t k = 0; k < sizeof batches / sizeof *batches; k++) {
        const size_t b = batches[k];
        random_inputs(x, b * IN, 900 + k);
        CHECK_OK(ffnn_model_forward(m, x, b, ref));
        memset(y3, 0xff, b * OUT * sizeof *y3); /* NaN: an output left unwritten shows */
        CHECK_OK(ffnn_predictor_forward(p1, x, b, y1));
        CHECK_OK(ffnn_predictor_forward(p3, x, b, y3));
        double e = worst_error(y3, ref, b * OUT);
        CHECK(e <= TOL, "batch %zu, 3 lanes by columns: worst error %.3g > %g", b, e, TOL);
        CHECK(memcmp(y1, y3, b * OUT * sizeof *y1) == 0,
              "batch %zu: 3 lanes by columns give other bits than 1 thread", b);
    }
    ffnn_predictor_free(p1), ffnn_predictor_free(p3);
    free(x), free(ref), free(y1), free(y3);
    ffnn_model_free(m);
    return TEST_PASS;
}

/* ffnn_predictor_predict: the model's loss and standardisation; softmax of the
 * reference forward of the standardised rows; classes the argmax. */
TEST("predictor_predict", test_predictor_predict)
{
    ffnn_model *m = NULL;
    ffnn_predictor *p = NULL;
    enum { B = 19, IN = 12, OUT = 5 };
    float x[B * IN], xs[B * IN], ref[B * OUT], prob[B * OUT], mean[IN], scale[IN];
    int cls[B];
    ffnn_loss loss;
    CHECK_OK(ffnn_model_create("12-20tanh-5", &m));
    CHECK_OK(ffnn_model_init(m, 3));
    for (int j = 0; j < IN; j++)
        mean[j] = 0.1f * (float)j, scale[j] = 0.5f + 0.25f * (float)j;
    CHECK_OK(ffnn_model_set_standardization(m, mean, scale, NULL, NULL));
    CHECK_OK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, 2, 8, &p));
    random_inputs(x, B * IN, 42);
    /* no loss yet: refused, naming the way out */
    CHECK(ffnn_model_loss(m, &loss) != FFNN_OK, "a fresh model has no loss");
    CHECK(ffnn_predictor_predict(p, x, B, prob, cls) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "ffnn_model_set_loss"),
          "predict without a loss: %s", ffnn_last_error());
    CHECK(ffnn_model_set_loss(m, FFNN_LOSS_MSE) == FFNN_OK, "mse fits any last layer");
    CHECK(ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE) == FFNN_OK, "ce fits");
    CHECK_OK(ffnn_model_loss(m, &loss));
    CHECK(loss == FFNN_LOSS_SOFTMAX_CE, "loss %d", (int)loss);
    CHECK_OK(ffnn_predictor_predict(p, x, B, prob, cls));
    for (int i = 0; i < B * IN; i++)
        xs[i] = (x[i] - mean[i % IN]) / scale[i % IN];
    CHECK_OK(ffnn_model_forward(m, xs, B, ref));
    for (int b = 0; b < B; b++) {
        double mx = ref[b * OUT], sum = 0.0;
        int best = 0;
        for (int j = 1; j < OUT; j++)
            if (ref[b * OUT + j] > ref[b * OUT + best])
                best = j, mx = ref[b * OUT + j];
        for (int j = 0; j < OUT; j++)
            sum += exp(ref[b * OUT + j] - mx);
        CHECK(cls[b] == best, "row %d: class %d, the reference's argmax %d", b, cls[b], best);
        for (int j = 0; j < OUT; j++) {
            double want = exp(ref[b * OUT + j] - mx) / sum;
            CHECK(fabs(prob[b * OUT + j] - want) <= TOL, "row %d output %d: %g vs %g", b, j,
                  (double)prob[b * OUT + j], want);
        }
    }
    /* ffnn_model_predict with the same loss: the same bits */
    float prob2[B * OUT];
    int cls2[B];
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_predict(m, x, B, prob2, cls2));
    CHECK(memcmp(prob, prob2, sizeof prob) == 0 && memcmp(cls, cls2, sizeof cls) == 0,
          "ffnn_model_predict differs from the predictor");
    TEST_FREE(p, m);
    return TEST_PASS;
}

TEST("predictor_errors", test_predictor_errors)
{
    ffnn_model *m = NULL;
    ffnn_predictor *p = NULL;
    CHECK_OK(ffnn_model_create("4-3", &m));
    CHECK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, 1, 0, &p) == FFNN_ERR_INVALID_ARGUMENT &&
              p == NULL, "max_batch 0 accepted");
    CHECK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, -1, 4, &p) == FFNN_ERR_INVALID_ARGUMENT,
          "threads -1 accepted");
    CHECK(ffnn_predictor_create(NULL, FFNN_DEVICE_CPU, 1, 4, &p) == FFNN_ERR_INVALID_ARGUMENT,
          "NULL model accepted");
    CHECK(ffnn_model_set_loss(m, FFNN_LOSS_SIGMOID_BCE) == FFNN_OK, "bce on 3 logits");
    ffnn_model *one = NULL;
    CHECK_OK(ffnn_model_create("4-1", &one));
    CHECK(ffnn_model_set_loss(one, FFNN_LOSS_SOFTMAX_CE) == FFNN_ERR_INVALID_ARGUMENT,
          "ce on one output accepted");
    ffnn_model_free(one);
    if (ffnn_cuda_device_count() == 0) /* a CPU-only build or machine: a clear refusal */
        CHECK(ffnn_predictor_create(m, FFNN_DEVICE_CUDA, 0, 4, &p) == FFNN_ERR_UNSUPPORTED &&
                  strstr(ffnn_last_error(), "cuda"), "cuda without a GPU: %s", ffnn_last_error());
    ffnn_predictor_free(NULL);
    ffnn_model_free(m);
    return TEST_PASS;
}

/* On a GPU: the cuda predictor against the reference (skips without one). */
TEST("predictor_cuda", test_predictor_cuda)
{
    if (ffnn_cuda_device_count() == 0)
        SKIP("no CUDA GPU visible (or a CPU-only build)");
    ffnn_model *m = NULL;
    ffnn_predictor *p = NULL;
    CHECK_OK(ffnn_model_create("64-local5relu-96gelu_tanh-48mish-10", &m));
    CHECK_OK(ffnn_model_init(m, 5));
    enum { B = 300 };
    float *x = malloc(B * 64 * sizeof *x), ref[B * 10], y[B * 10];
    CHECK(x, "out of memory");
    random_inputs(x, B * 64, 9);
    CHECK_OK(ffnn_predictor_create(m, FFNN_DEVICE_CUDA, 0, 128, &p));
    CHECK_OK(ffnn_predictor_forward(p, x, B, y));
    CHECK_OK(ffnn_model_forward(m, x, B, ref));
    double e = worst_error(y, ref, B * 10);
    CHECK(e <= TOL, "cuda predictor: worst error %.3g > %g", e, TOL);
    TEST_FREE(p, m);
    free(x);
    return TEST_PASS;
}

/* Inside an epoch a const reader refuses the model (the trainer's weights are
 * newer); after the epoch the model holds the trainer's weights. */
typedef struct in_training {
    const ffnn_model *m; /* the model the trainer trains        */
    int refused;         /* a const reader refused it mid-epoch  */
    int readable;        /* readable after ffnn_trainer_sync_model */
} in_training;

static int try_predictor(void *user, ffnn_trainer *t, int epoch, size_t step, size_t steps)
{
    (void)epoch, (void)steps;
    in_training *s = user;
    ffnn_predictor *p = NULL;
    if (step != 1)
        return 0;
    s->refused = ffnn_predictor_create(s->m, FFNN_DEVICE_CPU, 1, 4, &p) ==
                     FFNN_ERR_INVALID_ARGUMENT &&
                 strstr(ffnn_last_error(), "ffnn_trainer_sync_model") != NULL;
    ffnn_predictor_free(p);
    p = NULL;
    s->readable = ffnn_trainer_sync_model(t) == FFNN_OK &&
                  ffnn_predictor_create(s->m, FFNN_DEVICE_CPU, 1, 4, &p) == FFNN_OK;
    ffnn_predictor_free(p);
    return 0;
}

TEST("predictor_model_in_training", test_predictor_model_in_training)
{
    ffnn_dataset *train = NULL;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    ffnn_epoch_stats stats;
    CHECK_OK(ffnn_dataset_synthetic("synth:points:512", 1, &train, NULL));
    CHECK_OK(ffnn_model_create("2-16tanh-2", &m));
    CHECK_OK(ffnn_model_init(m, 1));
    in_training seen = {m, 0, 0};
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.threads = 1;
    cfg.batch_size = 64;
    CHECK_OK(ffnn_trainer_create(m, train, &cfg, &t));
    ffnn_loss loss;
    CHECK_OK(ffnn_model_loss(m, &loss)); /* the trainer's loss, remembered */
    CHECK(loss == cfg.loss, "loss %d", (int)loss);
    CHECK_OK(ffnn_trainer_run_epoch_until(t, try_predictor, &seen, &stats, NULL));
    CHECK(seen.refused, "a model inside an epoch was readable through a const pointer");
    CHECK(seen.readable, "ffnn_trainer_sync_model did not make it readable");
    /* after the call the model holds the trainer's weights: its evaluation on the
     * trainer's device copy equals the model's own on the host */
    double tl, ta, ml;
    uint64_t confusion[4];
    CHECK_OK(ffnn_trainer_evaluate(t, train, &tl, &ta));
    (void)ffnn_model_set_loss(m, cfg.loss);
    CHECK_OK(ffnn_model_evaluate(m, train, 64, &ml, confusion));
    CHECK(fabs(tl - ml) <= 1e-5 * (1.0 + fabs(tl)), "trainer loss %.9g, model loss %.9g", tl,
          ml);
    TEST_FREE(t, m, train);
    return TEST_PASS;
}

/* ---- many threads: N predictors on one model while another thread trains ---- */

#define PREDICT_THREADS 4
#define ROUNDS 20
/* Threads of the trainer (its omp backend's pool of pthreads, as the predictors'
 * 2 each: TSan sees them all). */
#define TRAINER_THREADS 2

typedef struct predict_job {
    const ffnn_model *m;
    const float *x;      /* [rows, in] */
    const float *want;   /* [rows, out]: a single-threaded predictor's outputs */
    size_t rows, in, out;
    int ok;
} predict_job;

static void *predict_thread(void *arg)
{
    predict_job *j = arg;
    ffnn_predictor *p = NULL;
    float *y = malloc(j->rows * j->out * sizeof *y);
    j->ok = y && ffnn_predictor_create(j->m, FFNN_DEVICE_CPU, 2, 16, &p) == FFNN_OK;
    for (int r = 0; j->ok && r < ROUNDS; r++)
        j->ok = ffnn_predictor_forward(p, j->x, j->rows, y) == FFNN_OK &&
                memcmp(y, j->want, j->rows * j->out * sizeof *y) == 0;
    ffnn_predictor_free(p);
    free(y);
    return NULL;
}

typedef struct train_job {
    ffnn_status st;
    double loss;
} train_job;

static void *train_thread(void *arg)
{
    train_job *j = arg;
    ffnn_dataset *train = NULL;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    ffnn_epoch_stats stats;
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.threads = TRAINER_THREADS;
    cfg.batch_size = 32;
    j->st = ffnn_dataset_synthetic("synth:points:1024", 2, &train, NULL);
    if (j->st == FFNN_OK)
        j->st = ffnn_model_create("2-32relu-2", &m);
    if (j->st == FFNN_OK)
        j->st = ffnn_model_init(m, 2);
    if (j->st == FFNN_OK)
        j->st = ffnn_trainer_create(m, train, &cfg, &t);
    for (int e = 0; e < 3 && j->st == FFNN_OK; e++)
        j->st = ffnn_trainer_run_epoch(t, NULL, NULL, &stats);
    j->loss = j->st == FFNN_OK ? stats.train_loss : NAN;
    TEST_FREE(t, m, train);
    return NULL;
}

TEST("predictor_threads", test_predictor_threads)
{
    ffnn_model *m = NULL;
    ffnn_predictor *p = NULL;
    CHECK_OK(ffnn_model_create("50-local3relu-640gelu-330tanh-7", &m));
    CHECK_OK(ffnn_model_init(m, 11));
    const size_t rows = 41, in = 50, out = 7; /* 16-row chunks worth two lanes each */
    float *x = malloc(rows * in * sizeof *x), *want = malloc(rows * out * sizeof *want);
    CHECK(x && want, "out of memory");
    random_inputs(x, rows * in, 77);
    CHECK_OK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, 1, 16, &p));
    CHECK_OK(ffnn_predictor_forward(p, x, rows, want));
    ffnn_predictor_free(p);
    predict_job jobs[PREDICT_THREADS];
    pthread_t tid[PREDICT_THREADS], trainer;
    train_job tj = {FFNN_OK, 0.0};
    CHECK(pthread_create(&trainer, NULL, train_thread, &tj) == 0, "pthread_create");
    for (int i = 0; i < PREDICT_THREADS; i++) {
        jobs[i] = (predict_job){m, x, want, rows, in, out, 0};
        CHECK(pthread_create(&tid[i], NULL, predict_thread, &jobs[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < PREDICT_THREADS; i++)
        pthread_join(tid[i], NULL);
    pthread_join(trainer, NULL);
    for (int i = 0; i < PREDICT_THREADS; i++)
        CHECK(jobs[i].ok, "thread %d: an error or outputs other than the single-threaded "
              "predictor's (%s)", i, ffnn_last_error());
    CHECK(tj.st == FFNN_OK && isfinite(tj.loss), "the training thread: status %d", (int)tj.st);
    free(x);
    free(want);
    ffnn_model_free(m);
    return TEST_PASS;
}
