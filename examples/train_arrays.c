/* train_arrays.c - train on data held in your own arrays: points (x0, x1) in [-1, 1)^2,
 * labelled 1 inside the circle x0^2 + x1^2 < 0.5, else 0; a 2-16tanh-16tanh-2 network
 * with Adam; then the accuracy on fresh points and the class probabilities of three.
 *   cc train_arrays.c $(pkg-config --cflags --libs ffnn) -o train_arrays
 *   ./train_arrays */
#include <stdint.h>
#include <stdio.h>

#include <ffnn.h>

enum { TRAIN = 2000, TEST = 500 };

/* count points into x [count, 2] and their labels [count], from a small LCG */
static void make_points(uint32_t seed, size_t count, float *x, int32_t *labels)
{
    for (size_t i = 0; i < count; i++) {
        for (int j = 0; j < 2; j++) {
            seed = seed * 1664525u + 1013904223u;
            x[2 * i + j] = (float)(seed >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
        }
        labels[i] = x[2 * i] * x[2 * i] + x[2 * i + 1] * x[2 * i + 1] < 0.5f;
    }
}

int main(void)
{
    static float x_train[TRAIN * 2], x_test[TEST * 2];
    static int32_t y_train[TRAIN], y_test[TEST];
    make_points(1, TRAIN, x_train, y_train);
    make_points(2, TEST, x_test, y_test);

    ffnn_dataset *train = NULL, *test = NULL;
    ffnn_model *model = NULL;
    ffnn_trainer *trainer = NULL;
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.optimizer = FFNN_OPT_ADAM;
    cfg.learning_rate = 0.01f;
    cfg.batch_size = 32;
    cfg.epochs = 40;
    int rc = 1;
    /* the arrays are copied: labels [count] (class indices), no float targets */
    if (ffnn_dataset_from_arrays(TRAIN, 2, x_train, y_train, 0, NULL, &train) != FFNN_OK ||
        ffnn_dataset_from_arrays(TEST, 2, x_test, y_test, 0, NULL, &test) != FFNN_OK ||
        ffnn_model_create("2-16tanh-16tanh-2", &model) != FFNN_OK ||
        ffnn_model_init(model, 1) != FFNN_OK ||
        ffnn_trainer_create(model, train, &cfg, &trainer) != FFNN_OK)
        goto done;
    ffnn_epoch_stats stats;
    for (int epoch = 1; epoch <= cfg.epochs; epoch++)
        if (ffnn_trainer_run_epoch(trainer, NULL, NULL, &stats) != FFNN_OK)
            goto done;
    double loss, accuracy;
    if (ffnn_trainer_evaluate(trainer, test, &loss, &accuracy) != FFNN_OK ||
        ffnn_trainer_sync_model(trainer) != FFNN_OK)
        goto done;
    printf("after %d epochs: train_loss %.4f  test_loss %.4f  test_accuracy %.2f%%\n",
           cfg.epochs, stats.train_loss, loss, 100 * accuracy);

    const float points[3 * 2] = {0.0f, 0.0f, 0.6f, 0.6f, -0.9f, 0.1f};
    float p[3 * 2];
    int cls[3];
    if (ffnn_model_predict(model, points, 3, p, cls) != FFNN_OK)
        goto done;
    for (int i = 0; i < 3; i++)
        printf("(%+.1f, %+.1f): class %d, p(inside) = %.3f\n", points[2 * i], points[2 * i + 1],
               cls[i], p[2 * i + 1]);
    rc = 0;
done:
    if (rc != 0)
        fprintf(stderr, "train_arrays: %s\n", ffnn_last_error());
    ffnn_trainer_free(trainer);
    ffnn_model_free(model);
    ffnn_dataset_free(train);
    ffnn_dataset_free(test);
    return rc;
}
