/* train_mnist.c - train 784-256relu-10 on an IDX data set (the MNIST layout), evaluate
 * it after every epoch, save the model, load it back and predict with it.
 *   cc train_mnist.c $(pkg-config --cflags --libs ffnn) -o train_mnist
 *   ./train_mnist [DATA_DIR [EPOCHS [MODEL_FILE]]]
 * DATA_DIR defaults to Debian's Fashion-MNIST (apt-get install dataset-fashion-mnist). */
#include <stdio.h>
#include <stdlib.h>

#include <ffnn.h>

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
    const char *path = argc > 3 ? argv[3] : "model.safetensors";
    ffnn_train_config cfg = ffnn_train_config_default(); /* batch 64, lr 0.01, sgd, all cores */
    cfg.epochs = argc > 2 ? atoi(argv[2]) : 10;
    ffnn_dataset *train = NULL, *test = NULL;
    ffnn_model *model = NULL, *loaded = NULL;
    ffnn_trainer *trainer = NULL;
    int rc = 1;

    printf("libffnn %s (header %s)\n", ffnn_version(NULL, NULL, NULL), FFNN_VERSION);
    if (ffnn_dataset_load_idx_dir(dir, &train, &test) != FFNN_OK ||
        ffnn_model_create("784-256relu-10", &model) != FFNN_OK ||
        ffnn_model_init(model, 1) != FFNN_OK ||
        ffnn_trainer_create(model, train, &cfg, &trainer) != FFNN_OK)
        goto done;
    printf("%zu training and %zu test images on %s, %d thread(s)\n", ffnn_dataset_count(train),
           ffnn_dataset_count(test), ffnn_device_name(ffnn_trainer_device(trainer)),
           ffnn_trainer_threads(trainer));
    for (int epoch = 1; epoch <= cfg.epochs; epoch++) {
        ffnn_epoch_stats stats;
        double test_loss, test_accuracy;
        if (ffnn_trainer_run_epoch(trainer, NULL, NULL, &stats) != FFNN_OK ||
            ffnn_trainer_evaluate(trainer, test, &test_loss, &test_accuracy) != FFNN_OK)
            goto done;
        printf("epoch %d  train_loss %.4f  test_loss %.4f  test_accuracy %.2f%%  %.2f s\n",
               epoch, stats.train_loss, test_loss, 100 * test_accuracy, stats.seconds);
    }

    /* the trained weights back into the model, to a file, and into a new model */
    if (ffnn_trainer_sync_model(trainer) != FFNN_OK ||
        ffnn_model_save(model, path) != FFNN_OK ||
        ffnn_model_load(path, &loaded, NULL) != FFNN_OK)
        goto done;

    /* the loaded model on the whole test set: confusion matrix [10, 10] */
    uint64_t confusion[10 * 10];
    double mean_loss;
    if (ffnn_model_evaluate(loaded, test, 1024, &mean_loss, confusion) != FFNN_OK)
        goto done;
    uint64_t right = 0;
    for (int c = 0; c < 10; c++)
        right += confusion[c * 10 + c];
    printf("%s: test_loss %.4f  test_accuracy %.2f%%\n", path, mean_loss,
           100.0 * (double)right / (double)ffnn_dataset_count(test));

    /* predict the first 5 test images: pixels / 255 as float32 [5, 784] */
    enum { N = 5, PIXELS = 784 };
    static float x[N * PIXELS];
    float probabilities[N * 10];
    int cls[N];
    for (size_t i = 0; i < N * PIXELS; i++)
        x[i] = ffnn_dataset_images(test)[i] / 255.0f;
    if (ffnn_model_predict(loaded, x, N, probabilities, cls) != FFNN_OK)
        goto done;
    for (int i = 0; i < N; i++)
        printf("test image %d: label %d, predicted %d (p = %.3f)\n", i,
               ffnn_dataset_labels(test)[i], cls[i], probabilities[i * 10 + cls[i]]);
    rc = 0;
done:
    if (rc != 0)
        fprintf(stderr, "train_mnist: %s\n", ffnn_last_error());
    ffnn_model_free(loaded);
    ffnn_trainer_free(trainer);
    ffnn_model_free(model);
    ffnn_dataset_free(train);
    ffnn_dataset_free(test);
    return rc;
}
