/* schedule.c - the learning rate of each step (schedule.h): torch.optim.lr_scheduler's
 * closed forms per epoch, the linear warm-up per step, reduce-on-plateau's update. */
#define _USE_MATH_DEFINES
#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include "core/optim.h"
#include "core/schedule.h"

ffnn_plateau ffnn_plateau_start(const ffnn_train_config *cfg)
{
    ffnn_plateau p = {ffnn_decimal_value(cfg->learning_rate), HUGE_VAL, 0};
    return p;
}

void ffnn_plateau_update(ffnn_plateau *p, const ffnn_train_config *cfg, double metric)
{
    if (cfg->lr_schedule != FFNN_LR_PLATEAU)
        return;
    /* torch: is_better(a, best) = a < best * (1 - threshold) (mode min, rel) */
    if (metric < p->best * (1.0 - ffnn_decimal_value(cfg->lr_threshold))) {
        p->best = metric;
        p->bad_epochs = 0;
    } else {
        p->bad_epochs++;
    }
    if (p->bad_epochs > cfg->lr_patience) {
        double reduced = p->lr * ffnn_decimal_value(cfg->lr_factor);
        const double floor_lr = ffnn_decimal_value(cfg->lr_min);
        if (reduced < floor_lr)
            reduced = floor_lr;
        if (p->lr - reduced > 1e-8) /* torch's eps */
            p->lr = reduced;
        p->bad_epochs = 0;
    }
}

/* The epoch schedule's rate of epoch e (0-based), base the configured rate. */
static double epoch_lr(const ffnn_train_config *cfg, const ffnn_plateau *p, double base,
                       uint64_t e)
{
    const double gamma = ffnn_decimal_value(cfg->lr_gamma);
    switch (cfg->lr_schedule) {
    case FFNN_LR_STEP:
        return base * pow(gamma, (double)(e / (uint64_t)(cfg->lr_step_size > 0 ? cfg->lr_step_size
                                                                                 : 1)));
    case FFNN_LR_MULTISTEP: {
        int passed = 0; /* milestones m <= e (torch: bisect_right(milestones, e)) */
        for (int i = 0; i < cfg->lr_milestone_count && i < FFNN_LR_MILESTONES_MAX; i++)
            passed += (uint64_t)cfg->lr_milestones[i] <= e;
        return base * pow(gamma, passed);
    }
    case FFNN_LR_EXPONENTIAL: return base * pow(gamma, (double)e);
    case FFNN_LR_COSINE: {
        const double eta_min = ffnn_decimal_value(cfg->lr_min);
        const double t_max = cfg->lr_t_max > 0 ? cfg->lr_t_max : (cfg->epochs > 0 ? cfg->epochs : 1);
        return eta_min + (base - eta_min) * (1.0 + cos(M_PI * (double)e / t_max)) / 2.0;
    }
    case FFNN_LR_LINEAR: {
        const double total =
            cfg->lr_total_iters > 0 ? cfg->lr_total_iters : (cfg->epochs > 0 ? cfg->epochs : 1);
        const double end = ffnn_decimal_value(cfg->lr_end_factor);
        const double done = (double)e < total ? (double)e : total;
        return base * (1.0 + (end - 1.0) * done / total);
    }
    case FFNN_LR_PLATEAU: return p ? p->lr : base;
    case FFNN_LR_CONSTANT: break;
    }
    return base;
}

double ffnn_schedule_lr(const ffnn_train_config *cfg, const ffnn_plateau *p, uint64_t t,
                        size_t steps_per_epoch)
{
    const double base = ffnn_decimal_value(cfg->learning_rate);
    const uint64_t k = t > 0 ? t - 1 : 0; /* 0-based step of the run */
    const uint64_t e = steps_per_epoch ? k / steps_per_epoch : 0;
    double lr = epoch_lr(cfg, p, base, e);
    if (cfg->warmup_steps > 0 && k < (uint64_t)cfg->warmup_steps)
        lr *= (double)(k + 1) / (double)cfg->warmup_steps;
    return lr;
}

int ffnn_schedule_constant_within_epochs(const ffnn_train_config *cfg)
{
    return cfg->warmup_steps == 0;
}
