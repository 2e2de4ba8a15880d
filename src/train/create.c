/*
 * create.c - ffnn_trainer_create: a trainer of one strategy (trainer.c), or the
 * fastest of the candidates by measurement where the strategy asks for that
 * (tune.c; the registry says which, strategy/strategy.h).
 */
#include "core/error.h"
#include "core/model.h"
#include "strategy/strategy.h"
#include "train/trainer.h"

ffnn_status ffnn_trainer_create(ffnn_model *m, const ffnn_dataset *train,
                                const ffnn_train_config *cfg, ffnn_trainer **out)
{
    return ffnn_trainer_create_parallel(m, train, cfg, NULL, out);
}

ffnn_status ffnn_trainer_create_parallel(ffnn_model *m, const ffnn_dataset *train,
                                         const ffnn_train_config *cfg, ffnn_comm *comm,
                                         ffnn_trainer **out)
{
    if (!m || !train || !cfg || !out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_create: NULL argument");
    if (m->member_count) /* a trainer trains one network */
        return ffnn_model_refuse_ensemble(m, "ffnn_trainer_create");
    /* tune measures in one process (tune.c); the ranks of data-parallel training
     * must run one strategy, so there tune is auto (the rule, the same everywhere) */
    if (ffnn_strategy_measured(cfg->strategy) && !comm)
        return ffnn_trainer_create_tuned(m, train, cfg, out);
    return ffnn_trainer_create_one(m, train, cfg, comm, out);
}
