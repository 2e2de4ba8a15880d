/* test_fixtures.h - what many suites start a test with: the skip without a GPU and
 * the Fashion-MNIST data set (Debian's dataset-fashion-mnist, tools/install_deps.sh). */
#ifndef FFNN_TEST_FIXTURES_H
#define FFNN_TEST_FIXTURES_H

#include <string.h>

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

#endif
