/* test_determinism.c - the same seed gives bit-identical runs: every per-step loss
 * and every final weight equal, bit for bit, across two trainers (cuda: no
 * order-dependent atomics anywhere in training; cpu: trivially). */
#include <string.h>

#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"

/* Train two fresh trainers on the same model/data/config; compare bit for bit. */
static test_result same_bits(ffnn_device device, ffnn_strategy kernels)
{
    ffnn_dataset *train = NULL, *test = NULL, *part = NULL;
    CHECK_FASHION(ffnn_dataset_load_idx_dir(TEST_FASHION_DIR, &train, &test));
    CHECK_OK(ffnn_dataset_slice(train, 0, device == FFNN_DEVICE_CPU ? 2560 : 12800, &part));
    ffnn_model *m[2] = {NULL, NULL};
    double loss[2][200];
    ffnn_train_config cfg = test_train_config(device, kernels);
    cfg.learning_rate = 0.1f;
    cfg.seed = 9;
    int steps = device == FFNN_DEVICE_CPU ? 40 : 200;
    for (int r = 0; r < 2; r++) {
        ffnn_trainer *t = NULL;
        CHECK_OK(ffnn_model_create("784-256relu-10", &m[r]));
        CHECK_OK(ffnn_model_init(m[r], 9));
        CHECK_OK(ffnn_trainer_create(m[r], part, &cfg, &t));
        for (int s = 0; s < steps; s++)
            CHECK_OK(ffnn_trainer_step(t, &loss[r][s]));
        CHECK_OK(ffnn_trainer_sync_model(t));
        ffnn_trainer_free(t);
    }
    for (int s = 0; s < steps; s++)
        CHECK(memcmp(&loss[0][s], &loss[1][s], sizeof(double)) == 0,
              "step %d: %.17g vs %.17g", s + 1, loss[0][s], loss[1][s]);
    size_t n = ffnn_model_parameter_count(m[0]);
    CHECK(memcmp(ffnn_model_parameters(m[0]), ffnn_model_parameters(m[1]), n * sizeof(float)) == 0,
          "final weights differ");
    ffnn_model_free(m[0]);
    ffnn_model_free(m[1]);
    TEST_FREE(part, train, test);
    return TEST_PASS;
}

TEST("determinism_cpu_same_seed_same_bits", cpu_deterministic)
{
    return same_bits(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
}

static test_result cuda_deterministic(ffnn_strategy k, char *why, size_t why_size)
{
    SKIP_WITHOUT_GPU();
    return same_bits(FFNN_DEVICE_CUDA, k);
}

TEST("determinism_cuda_tiled_same_seed_same_bits", cuda_tiled_deterministic)
{
    return cuda_deterministic(FFNN_STRATEGY_TILED, why, why_size);
}

TEST("determinism_cuda_naive_same_seed_same_bits", cuda_naive_deterministic)
{
    return cuda_deterministic(FFNN_STRATEGY_NAIVE, why, why_size);
}
