/* test_arch.c - architecture strings: valid forms, canonical printing, and that
 * every malformed string is rejected with the column and token named. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"

TEST("arch_parses_seed_networks", parses_seed_networks)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create("784-256relu-10", &m));
    CHECK(ffnn_model_layer_count(m) == 2, "layers %d", ffnn_model_layer_count(m));
    CHECK(ffnn_model_input_size(m) == 784 && ffnn_model_output_size(m) == 10, "sizes");
    CHECK(ffnn_model_parameter_count(m) == 784 * 256 + 256 + 256 * 10 + 10, "count %zu",
          ffnn_model_parameter_count(m));
    size_t in, out;
    ffnn_activation act;
    int bias;
    CHECK_OK(ffnn_model_layer(m, 0, &in, &out, &act, &bias));
    CHECK(in == 784 && out == 256 && act == FFNN_ACT_RELU && bias == 1, "layer 0");
    CHECK_OK(ffnn_model_layer(m, 1, &in, &out, &act, &bias));
    CHECK(in == 256 && out == 10 && act == FFNN_ACT_IDENTITY && bias == 1, "layer 1");
    ffnn_model_free(m);

    CHECK_OK(ffnn_model_create("32-256relu:nobias-1:nobias", &m)); /* seed 001 */
    CHECK(ffnn_model_parameter_count(m) == 32 * 256 + 256, "count %zu",
          ffnn_model_parameter_count(m));
    CHECK(ffnn_model_bias(m, 0) == NULL && ffnn_model_bias(m, 1) == NULL, "no bias");
    ffnn_model_free(m);
    return TEST_PASS;
}

TEST("arch_prints_canonical_form", prints_canonical_form)
{
    const char *forms[] = {"784-256relu-10", "2-30tanh-30sigmoid-1", "32-256relu:nobias-1:nobias",
                           "5-7identity-3"};
    const char *canon[] = {"784-256relu-10", "2-30tanh-30sigmoid-1", "32-256relu:nobias-1:nobias",
                           "5-7-3"};
    for (size_t i = 0; i < 4; i++) {
        ffnn_model *m = NULL;
        char buf[128];
        CHECK_OK(ffnn_model_create(forms[i], &m));
        ffnn_model_arch_string(m, buf, sizeof buf);
        CHECK(strcmp(buf, canon[i]) == 0, "'%s' printed as '%s'", forms[i], buf);
        ffnn_model_free(m);
    }
    return TEST_PASS;
}

/* Each bad string must fail with FFNN_ERR_PARSE and a message holding `expect`. */
TEST("arch_rejects_malformed_strings", rejects_malformed)
{
    test_arch_refusal bad[] = {
        {"", "empty"},
        {"784", "at least one layer"},
        {"784-", "column 5: empty token"},
        {"784--10", "column 5: empty token"},
        {"-784-10", "column 1: empty token"},
        {"784-256relu-0", "column 13, token '0': width must be at least 1"},
        {"784-256rellu-10", "column 5, token '256rellu': unknown activation"},
        {"784-relu-10", "column 5, token 'relu': expected a width"},
        {"784x-10", "column 1, token '784x': the first token is the input width"},
        {"0-10", "column 1, token '0': width must be at least 1"},
        {"784-256relu:bias-10", "token '256relu:bias': unknown option"},
        {"784-99999999999-10", "width larger than the limit"},
        {"784-256 relu-10", "column 8: whitespace"},
        {"784-256softmax-10", "unknown activation"},
    };
    return test_arch_refused_each(bad, sizeof bad / sizeof bad[0]);
}

TEST("arch_init_matches_pytorch_bounds", init_matches_pytorch_bounds)
{
    ffnn_model *a = NULL, *b = NULL;
    CHECK_OK(ffnn_model_create("784-256relu-10", &a));
    CHECK_OK(ffnn_model_create("784-256relu-10", &b));
    CHECK_OK(ffnn_model_init(a, 42));
    CHECK_OK(ffnn_model_init(b, 42));
    size_t n = ffnn_model_parameter_count(a);
    CHECK(memcmp(ffnn_model_parameters(a), ffnn_model_parameters(b), n * sizeof(float)) == 0,
          "same seed, different weights");
    /* every value within U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the range is used */
    size_t fan_in[2] = {784, 256};
    for (int l = 0; l < 2; l++) {
        float bound = 1.0f / sqrtf((float)fan_in[l]);
        const float *W = ffnn_model_weight(a, l);
        size_t out = l == 0 ? 256 : 10;
        float lo = 1, hi = -1;
        double mean = 0;
        for (size_t i = 0; i < out * fan_in[l]; i++) {
            CHECK(W[i] >= -bound && W[i] < bound, "layer %d weight %zu = %g", l, i, W[i]);
            lo = W[i] < lo ? W[i] : lo;
            hi = W[i] > hi ? W[i] : hi;
            mean += W[i];
        }
        mean /= (double)(out * fan_in[l]);
        CHECK(lo < -0.95f * bound && hi > 0.95f * bound, "layer %d range [%g, %g]", l, lo, hi);
        CHECK(fabs(mean) < 0.05 * bound, "layer %d mean %g", l, mean);
    }
    CHECK_OK(ffnn_model_init(b, 43));
    CHECK(memcmp(ffnn_model_parameters(a), ffnn_model_parameters(b), n * sizeof(float)) != 0,
          "different seeds, same weights");
    TEST_FREE(a, b);
    return TEST_PASS;
}

TEST("arch_enum_names", names_round_trip)
{
    ffnn_loss loss;
    CHECK_OK(ffnn_loss_from_name("bce", &loss));
    CHECK(loss == FFNN_LOSS_SIGMOID_BCE, "bce");
    CHECK(ffnn_loss_from_name("hinge", &loss) == FFNN_ERR_PARSE, "hinge accepted");
    CHECK(strstr(ffnn_last_error(), "ce, bce, mse"), "message: %s", ffnn_last_error());
    ffnn_strategy k;
    CHECK(ffnn_strategy_from_name("fast", &k) == FFNN_ERR_PARSE, "fast accepted");
    return TEST_PASS;
}

/* Activation parameters: '256leaky_relu0.2' (negative slope), '128elu0.5' (alpha);
 * the canonical string writes one only when it is not the default, as the shortest
 * decimal of the same float; the value reaches the forward pass. */
TEST("arch_activation_parameters", activation_parameters)
{
    const struct { const char *arch, *canon; } forms[] = {
        {"784-256leaky_relu0.2-10", "784-256leaky_relu0.2-10"},
        {"784-128elu0.5-10", "784-128elu0.5-10"},
        {"784-256leaky_relu0.01-128elu1-10", "784-256leaky_relu-128elu-10"},
        {"8-4leaky_relu0-2", "8-4leaky_relu0-2"},
        {"8-4elu.25:nobias:dropout0.5-2", "8-4elu0.25:nobias:dropout0.5-2"},
        {"8-local3sameleaky_relu1e-1-2", ""}, /* '-' ends the token: an error below */
        {"8-local3sameleaky_relu0.3-4gelu-4gelu_tanh-4silu-4mish-4hardswish-2",
         "8-local3sameleaky_relu0.3-4gelu-4gelu_tanh-4silu-4mish-4hardswish-2"},
        {"8-4elu2.5e1-2", "8-4elu25-2"},
        {"8-4leaky_relu0.123456789-2", "8-4leaky_relu0.12345679-2"},
        /* never an exponent: '6e+01' is refused, '1e-06' splits at '-' (fuzz finding) */
        {"67-3elu60", "67-3elu60"},
        {"8-4elu1e6-2", "8-4elu1000000-2"},
        {"8-4leaky_relu0.000001234567-2", "8-4leaky_relu0.000001234567-2"},
        {"8-4relu:dropout0.00001-2", "8-4relu:dropout0.00001-2"},
        {"8-4relu:dropout0.999999-2", "8-4relu:dropout0.999999-2"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        ffnn_model *m = NULL, *back = NULL;
        char buf[160], again[160];
        ffnn_status st = ffnn_model_create(forms[i].arch, &m);
        if (!forms[i].canon[0]) {
            CHECK(st == FFNN_ERR_PARSE, "'%s' accepted", forms[i].arch);
            continue;
        }
        CHECK_OK(st);
        ffnn_model_arch_string(m, buf, sizeof buf);
        CHECK(strcmp(buf, forms[i].canon) == 0, "'%s' printed as '%s'", forms[i].arch, buf);
        CHECK_OK(ffnn_model_create(buf, &back)); /* the canonical string round-trips */
        ffnn_model_arch_string(back, again, sizeof again);
        CHECK(strcmp(buf, again) == 0, "'%s' printed again as '%s'", buf, again);
        TEST_FREE(m, back);
    }
    /* the parameter reaches the forward pass: y = f(w x) with w = 1, x = -2 */
    const struct { const char *arch; float want; } values[] = {
        {"1-1leaky_relu:nobias", -0.02f}, {"1-1leaky_relu0.2:nobias", -0.4f},
        {"1-1elu:nobias", -0.864664717f}, {"1-1elu0.5:nobias", -0.432332358f},
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        ffnn_model *m = NULL;
        CHECK_OK(ffnn_model_create(values[i].arch, &m));
        ffnn_model_weight(m, 0)[0] = 1.0f;
        const float x = -2.0f;
        float y = 0.0f;
        CHECK_OK(ffnn_model_forward(m, &x, 1, &y));
        CHECK(fabsf(y - values[i].want) <= 1e-6f, "%s at -2: %.9g, want %.9g", values[i].arch,
              (double)y, (double)values[i].want);
        ffnn_model_free(m);
    }
    /* errors name the column of the token and of the parameter */
    const test_arch_refusal bad[] = {
        {"784-256relu0.2-10", "column 5, token '256relu0.2': relu takes no parameter, found "
                              "'0.2' at column 12"},
        {"784-256gelu1-10", "gelu takes no parameter"},
        {"784-256leaky_relu0.2x-10", "column 5, token '256leaky_relu0.2x': leaky_relu's "
                                     "negative slope at column 18: '0.2x' is not 0 or a decimal in [1e-6, 1e6]"},
        {"784-128elu0-10", "elu's alpha at column 11: '0' is not a decimal in [1e-6, 1e6]"},
        {"784-128elu+1-10", "elu's alpha at column 11: '+1' is not"},
        {"784-128elunan-10", "unknown activation"},
        {"784-128elu1e99-10", "elu's alpha at column 11: '1e99' is not"},
        {"784-128elu0x1-10", "'0x1' is not"},
        {"784-128leaky_relu.-10", "'.' is not"},
        {"784-128leaky_relu0.2.3:nobias-10", "'0.2.3' is not"},
        {"784-local3leaky_reluinf-10", "unknown activation (expected local<R>"},
        {"784-256leaky_relu-0.2-10", "column 19, token '0.2': a width is a whole number "
                                     "(an activation's parameter follows its name directly"},
        {"784-128elu0.0000009-10", "is not a decimal in [1e-6, 1e6]"},
        {"784-128leaky_relu2e6-10", "is not 0 or a decimal in [1e-6, 1e6]"},
        {"784-128relu:dropout0.0000009-10", "dropout probability must be 0 or a decimal"},
        {"784-128relu:dropout0.99999999-10", "dropout probability must be 0 or a decimal"},
    };
    return test_arch_refused_each(bad, sizeof bad / sizeof bad[0]);
}
