/* test_fixtures.h - what many suites start a test with: the skip without a GPU and
 * the Fashion-MNIST data set (Debian's dataset-fashion-mnist, tools/install_deps.sh);
 * and what they end one with: TEST_FREE. */
#ifndef FFNN_TEST_FIXTURES_H
#define FFNN_TEST_FIXTURES_H

#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ffnn.h"

#define TEST_FASHION_DIR "/usr/share/datasets/fashion-mnist"
/* The CSV data sets of Debian's python3-sklearn: TEST_SKLEARN_DATA "iris.csv". */
#define TEST_SKLEARN_DATA "/usr/lib/python3/dist-packages/sklearn/datasets/data/"

/* SKIP (naming it and the package) when the sklearn data file at path is missing. */
#define SKIP_WITHOUT_SKLEARN_FILE(path)                                           \
    do {                                                                          \
        if (access(path, R_OK) != 0)                                              \
            SKIP("needs %s (apt-get install python3-sklearn)", path);             \
    } while (0)

/* SKIP (naming why) in a build without CUDA or on a machine without a GPU. */
#define SKIP_WITHOUT_GPU()                                                        \
    do {                                                                          \
        if (!ffnn_has_cuda())                                                     \
            SKIP("build has no CUDA");                                            \
        if (ffnn_cuda_device_count() == 0)                                        \
            SKIP("no CUDA GPU");                                                  \
    } while (0)

/* Check that call, a load of Fashion-MNIST (or of a part of it), returned FFNN_OK;
 * the test fails naming the error and the package to install. */
#define CHECK_FASHION(call)                                                       \
    CHECK((call) == FFNN_OK,                                                      \
          "Fashion-MNIST missing (%s); install it: apt-get install dataset-fashion-mnist", \
          ffnn_last_error())

/* Fashion-MNIST's training and test sets into *train, *test (test may be NULL);
 * the test fails, naming the error, when they do not load. */
#define LOAD_FASHION(train, test)                                                 \
    CHECK_FASHION(ffnn_dataset_load_idx_dir(TEST_FASHION_DIR, train, test))

/* ffnn_train_config_default() on device with the kernels strategy. */
static inline ffnn_train_config test_train_config(ffnn_device device, ffnn_strategy strategy)
{
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = device;
    cfg.strategy = strategy;
    return cfg;
}

/* The refusal tests' inputs: *train the training set of spec (a synth: data set,
 * seed 1; no test set) and *m a new arch model (parameters zero); the first failing
 * call's status (the caller frees what was made). */
static inline ffnn_status test_synth_and_model(const char *spec, const char *arch,
                                               ffnn_dataset **train, ffnn_model **m)
{
    ffnn_status st = ffnn_dataset_synthetic(spec, 1, train, NULL);
    return st == FFNN_OK ? ffnn_model_create(arch, m) : st;
}

/* A model file at path: a new arch model initialised with seed, with loss recorded
 * (the model freed); the first failing call's status. */
static inline ffnn_status test_save_new_model(const char *path, const char *arch,
                                              uint64_t seed, ffnn_loss loss)
{
    ffnn_model *m = NULL;
    ffnn_status st = ffnn_model_create(arch, &m);
    if (st == FFNN_OK)
        st = ffnn_model_init(m, seed);
    if (st == FFNN_OK)
        st = ffnn_model_set_loss(m, loss);
    if (st == FFNN_OK)
        st = ffnn_model_save(m, path);
    ffnn_model_free(m);
    return st;
}

/* Free what a test made, in the order given (1 to 8 arguments): each a model, data
 * set, trainer, predictor or table, NULL allowed (as their free functions take it).
 * TEST_FREE(t, m, train, test) is ffnn_trainer_free(t); ffnn_model_free(m); ... */
#define TEST_FREE(...)                                                            \
    do {                                                                          \
        TEST_FREE_PICK_(__VA_ARGS__, TEST_FREE8_, TEST_FREE7_, TEST_FREE6_,       \
                        TEST_FREE5_, TEST_FREE4_, TEST_FREE3_, TEST_FREE2_,       \
                        TEST_FREE1_, unused)(__VA_ARGS__)                         \
    } while (0)
#define TEST_FREE_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, name, ...) name
#define TEST_FREE_ONE_(p)                                                         \
    _Generic((p), ffnn_model *: ffnn_model_free, ffnn_dataset *: ffnn_dataset_free, \
             ffnn_trainer *: ffnn_trainer_free, ffnn_predictor *: ffnn_predictor_free, \
             ffnn_table *: ffnn_table_free)(p);
#define TEST_FREE1_(a) TEST_FREE_ONE_(a)
#define TEST_FREE2_(a, ...) TEST_FREE_ONE_(a) TEST_FREE1_(__VA_ARGS__)
#define TEST_FREE3_(a, ...) TEST_FREE_ONE_(a) TEST_FREE2_(__VA_ARGS__)
#define TEST_FREE4_(a, ...) TEST_FREE_ONE_(a) TEST_FREE3_(__VA_ARGS__)
#define TEST_FREE5_(a, ...) TEST_FREE_ONE_(a) TEST_FREE4_(__VA_ARGS__)
#define TEST_FREE6_(a, ...) TEST_FREE_ONE_(a) TEST_FREE5_(__VA_ARGS__)
#define TEST_FREE7_(a, ...) TEST_FREE_ONE_(a) TEST_FREE6_(__VA_ARGS__)
#define TEST_FREE8_(a, ...) TEST_FREE_ONE_(a) TEST_FREE7_(__VA_ARGS__)

/* An architecture string the parser must refuse: FFNN_ERR_PARSE, no model, and a
 * message containing expect. */
static inline test_result test_arch_refused(const char *arch, const char *expect)
{
    ffnn_model *m = NULL;
    ffnn_status st = ffnn_model_create(arch, &m);
    CHECK(st == FFNN_ERR_PARSE, "'%s' gave status %d", arch, (int)st);
    CHECK(m == NULL, "'%s' set the output", arch);
    CHECK(strstr(ffnn_last_error(), expect) != NULL, "'%s': message '%s' lacks '%s'", arch,
          ffnn_last_error(), expect);
    return TEST_PASS;
}

/* One architecture string the parser must refuse and a part of its message. */
typedef struct test_arch_refusal {
    const char *arch, *expect;
} test_arch_refusal;

/* test_arch_refused on each of the n cases of bad[n]; TEST_FAIL at the first one
 * accepted or refused otherwise. */
static inline test_result test_arch_refused_each(const test_arch_refusal *bad, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (test_arch_refused(bad[i].arch, bad[i].expect) != TEST_PASS)
            return TEST_FAIL;
    return TEST_PASS;
}

#endif
