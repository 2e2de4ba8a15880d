/* test_fit.c - ffnn_train, the one-call training run: it gives the bits of the
 * loop it stands for (standardise, trainer, epochs, early stopping, restore the
 * best epoch), and refuses what it cannot do. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"

/* The loop ffnn_train documents, by hand, on the same model and data. */
static ffnn_status by_hand(ffnn_model *m, const ffnn_dataset *train, const ffnn_dataset *val,
                           const ffnn_train_config *cfg, int *epochs_run, double *best_loss)
{
    ffnn_dataset *tz = NULL, *vz = NULL;
    ffnn_trainer *t = NULL;
    ffnn_epoch_stats s;
    int stop = 0, best = 0;
    ffnn_status st = ffnn_dataset_standardize(train, m, &tz);
    if (!st && val)
        st = ffnn_dataset_standardize(val, m, &vz);
    if (!st)
        st = ffnn_trainer_create(m, tz, cfg, &t);
    if (!st && vz)
        st = ffnn_trainer_set_validation(t, vz);
    *epochs_run = 0;
    for (int e = 0; !st && !stop && e < cfg->epochs; e++) {
        st = ffnn_trainer_run_epoch(t, NULL, NULL, &s);
        ++*epochs_run;
        if (!st && cfg->early_stopping)
            st = ffnn_trainer_early_stopping(t, &best, best_loss, &stop);
    }
    if (!st && cfg->early_stopping && best > 0)
        st = ffnn_trainer_restore_best(t);
    TEST_FREE(t, tz, vz);
    return st;
}

/* Two models of one seed, one trained by ffnn_train and one by hand: the same
 * parameters, bit for bit, with and without early stopping. */
static test_result one_call_equals_loop(int patience)
{
    ffnn_dataset *all = NULL, *train = NULL, *val = NULL;
    CHECK_OK(ffnn_dataset_synthetic("synth:regression:600", 3, &all, NULL));
    CHECK_OK(ffnn_dataset_split(all, 0.25, 1, &train, &val));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.threads = 1;
    cfg.loss = FFNN_LOSS_MSE;
    cfg.learning_rate = 0.05f;
    cfg.epochs = patience ? 60 : 4;
    cfg.early_stopping = patience;
    ffnn_model *a = NULL, *b = NULL;
    CHECK_OK(ffnn_model_create("32-16tanh-1", &a));
    CHECK_OK(ffnn_model_create("32-16tanh-1", &b));
    CHECK_OK(ffnn_model_init(a, 7));
    CHECK_OK(ffnn_model_init(b, 7));
    CHECK_OK(ffnn_model_fit_standardization(a, train, 0));
    CHECK_OK(ffnn_model_fit_standardization(b, train, 0));
    ffnn_epoch_stats last;
    memset(&last, 0, sizeof last);
    CHECK_OK(ffnn_train(a, train, val, &cfg, &last));
    int epochs = 0;
    double best_loss = 0;
    CHECK_OK(by_hand(b, train, val, &cfg, &epochs, &best_loss));
    size_t n = ffnn_model_parameter_count(a);
    const float *pa = ffnn_model_parameters(a), *pb = ffnn_model_parameters(b);
    CHECK(pa && pb && n == ffnn_model_parameter_count(b), "parameters");
    CHECK(memcmp(pa, pb, n * sizeof *pa) == 0, "ffnn_train's parameters differ from the loop's");
    CHECK(last.epoch == epochs, "last epoch %d, the loop ran %d", last.epoch, epochs);
    if (patience) { /* the model holds the best epoch's weights, not the last's */
        CHECK(epochs < cfg.epochs, "early stopping never stopped (%d epochs)", epochs);
        ffnn_metrics m;
        (void)ffnn_model_set_loss(a, FFNN_LOSS_MSE);
        CHECK_OK(ffnn_model_evaluate_metrics(a, val, 256, &m, NULL));
        printf("     best epoch's val loss %.7f, the returned model's %.7f\n", best_loss,
               m.loss);
        CHECK(fabs(m.loss - best_loss) <= 1e-5 * best_loss,
              "the returned model is not the best epoch's");
    }
    printf("     patience %d: %d epochs, last train_loss %.5f, %zu parameters equal\n", patience,
           epochs, last.train_loss, n);
    TEST_FREE(a, b, train, val, all);
    return TEST_PASS;
}

TEST("fit_equals_the_loop", test_fit_equals_the_loop)
{
    return one_call_equals_loop(0);
}

TEST("fit_early_stopping_restores_best", test_fit_early_stopping_restores_best)
{
    return one_call_equals_loop(3);
}

TEST("fit_refuses", test_fit_refuses)
{
    ffnn_dataset *train = NULL;
    ffnn_model *m = NULL;
    CHECK_OK(test_synth_and_model("synth:points:100", "2-8relu-2", &train, &m));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.early_stopping = 2;
    CHECK(ffnn_train(m, train, NULL, &cfg, NULL) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "validation"),
          "early stopping without val: %s", ffnn_last_error());
    CHECK(ffnn_train(NULL, train, NULL, &cfg, NULL) == FFNN_ERR_INVALID_ARGUMENT, "NULL model");
    TEST_FREE(m, train);
    return TEST_PASS;
}
