/* test_fixtures.h - what many suites start a test with: the skip without a GPU and
 * the Fashion-MNIST data set (Debian's dataset-fashion-mnist, tools/install_deps.sh). */
#ifndef FFNN_TEST_FIXTURES_H
#define FFNN_TEST_FIXTURES_H

#include "check.h"
#include "ffnn.h"

#define TEST_FASHION_DIR "/usr/share/datasets/fashion-mnist"

/* SKIP (naming why) in a build without CUDA or on a machine without a GPU. */
#define SKIP_WITHOUT_GPU()                                                        \
    do {                                                                          \
        if (!ffnn_has_cuda())                                                     \
            SKIP("build has no CUDA");                                            \
        if (ffnn_cuda_device_count() == 0)                                        \
            SKIP("no CUDA GPU");                                                  \
    } while (0)

/* Fashion-MNIST's training and test sets into *train, *test (test may be NULL);
 * the test fails, naming the error, when they do not load. */
#define LOAD_FASHION(train, test)                                                 \
    CHECK(ffnn_dataset_load_idx_dir(TEST_FASHION_DIR, train, test) == FFNN_OK,    \
          "Fashion-MNIST missing: %s", ffnn_last_error())

#endif
