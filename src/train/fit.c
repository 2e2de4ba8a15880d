/* ffnn_train: the whole training run in one call, for programs that need no
 * per-epoch control (include/ffnn.h). It is the loop the CLI's `ffnn train` runs,
 * without the printing: standardise, create a trainer, run the epochs, stop early,
 * restore the best epoch, free the trainer. */
#include <math.h>
#include <stddef.h>

#include "core/error.h"
#include "core/model.h"
#include "ffnn.h"
#include "train/trainer.h"

ffnn_status ffnn_train_epoch(ffnn_trainer *t, const ffnn_train_config *cfg, int epochs_done,
                             ffnn_epoch_stats *stats, int *done)
{
    *done = 1;
    ffnn_status st = ffnn_trainer_run_epoch(t, NULL, NULL, stats);
    if (st != FFNN_OK)
        return st;
    int stop = 0, best = 0;
    if (cfg->early_stopping > 0 &&
        (st = ffnn_trainer_early_stopping(t, &best, NULL, &stop)) != FFNN_OK)
        return st;
    *done = stop || epochs_done + 1 >= cfg->epochs;
    if (*done && cfg->early_stopping > 0 && best > 0) /* the run's end: its best epoch */
        st = ffnn_trainer_restore_best(t);
    return st;
}

static ffnn_status fit_epochs(ffnn_trainer *t, const ffnn_train_config *cfg,
                              ffnn_epoch_stats *stats)
{
    ffnn_status st = FFNN_OK;
    for (int e = 0, done = 0; st == FFNN_OK && !done; e++)
        st = ffnn_train_epoch(t, cfg, e, stats, &done);
    return st;
}

ffnn_status ffnn_train(ffnn_model *m, const ffnn_dataset *train, const ffnn_dataset *val,
                       const ffnn_train_config *cfg, ffnn_epoch_stats *last)
{
    if (!m || !train || !cfg)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_train: the model, the training set and the config are needed");
    if (m->member_count) /* a trainer trains one network */
        return ffnn_model_refuse_ensemble(m, "ffnn_train");
    if (cfg->early_stopping > 0 && !val)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_train: early stopping (cfg.early_stopping %d) needs a validation "
                         "set (val NULL)", cfg->early_stopping);
    ffnn_dataset *train_z = NULL, *val_z = NULL;
    ffnn_trainer *t = NULL;
    ffnn_epoch_stats stats = { 0 };
    ffnn_status st = ffnn_dataset_standardize(train, m, &train_z);
    if (st == FFNN_OK && val)
        st = ffnn_dataset_standardize(val, m, &val_z);
    if (st == FFNN_OK)
        st = ffnn_trainer_create(m, train_z, cfg, &t);
    if (st == FFNN_OK && val_z)
        st = ffnn_trainer_set_validation(t, val_z);
    if (st == FFNN_OK)
        st = fit_epochs(t, cfg, &stats);
    ffnn_trainer_free(t); /* the model keeps the weights (the best epoch's, if restored) */
    ffnn_dataset_free(val_z);
    ffnn_dataset_free(train_z);
    if (st == FFNN_OK && last)
        *last = stats;
    return st;
}
