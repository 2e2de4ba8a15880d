/* train_tasks.c - ffnn train's task checks, weights and cross-validation
 * (train_tasks.h). */
#define _POSIX_C_SOURCE 200809L
#include "train_tasks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_files.h"
#include "options.h"

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

int ffnn_cli_check_labels_given(const char *cmd, const char *data, const char *labels)
{
    if (!data || labels || !ends_with(data, ".npy"))
        return 0;
    fprintf(stderr, "%s: --data %s: an .npy file holds features only; give the labels or "
            "targets with --labels y.npy (or use an .npz file holding x and y)\n", cmd, data);
    return 1;
}

int ffnn_cli_check_task(const char *cmd, const ffnn_cli_train_options *o,
                        const ffnn_dataset *train)
{
    unsigned flags = o->allow_many_classes ? FFNN_TASK_ALLOW_MANY_CLASSES : 0;
    if (ffnn_dataset_check_task(train, o->cfg.loss, flags) == FFNN_OK)
        return 0;
    fprintf(stderr, "%s: --data %s%s: %s\n", cmd, o->data ? o->data : "(default)",
            o->test_split > 0 || o->val_split > 0 ? " (its training split)" : "",
            ffnn_last_error());
    return 1;
}

/* ------------------------------------------------------------ weights */

/* *w: a malloc'd copy of the weights src [n]. 0, or 1 with the message. */
static int copy_weights(const char *cmd, const float *src, size_t n, float **w)
{
    if (!(*w = malloc(n * sizeof **w))) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        return 1;
    }
    memcpy(*w, src, n * sizeof **w);
    return 0;
}

/* The one-column .npy path into w [count] (malloc'd). 0, or 1 with the message. */
static int weights_from_npy(const char *cmd, const char *path, size_t count, float **w)
{
    ffnn_dataset *ds = NULL;
    if (ffnn_dataset_load_npy(path, NULL, &ds) != FFNN_OK)
        return ffnn_cli_fail(cmd, "--sample-weight");
    int rc = 0;
    if (ffnn_dataset_features(ds) != 1 || ffnn_dataset_count(ds) != count) {
        fprintf(stderr, "%s: --sample-weight %s: expected one weight per row of --data, shape "
                "(%zu,), found %zu rows of %zu values\n", cmd, path, count,
                ffnn_dataset_count(ds), ffnn_dataset_features(ds));
        rc = 1;
    } else {
        rc = copy_weights(cmd, ffnn_dataset_float_features(ds), count, w);
    }
    ffnn_dataset_free(ds);
    return rc;
}

/* Column spec of the CSV file data (read as a float target, one per row) into
 * w [count]; the main load left the column out (ffnn_cli_weight_column_ignored).
 * 0, or 1 with the message. */
static int weights_from_column(const char *cmd, const char *data,
                               const ffnn_cli_table_options *table, const char *spec,
                               ffnn_dataset *train, float **w)
{
    ffnn_csv_options csv = table->csv;
    csv.target = spec;
    csv.features = NULL; /* read as they are (text, missing cells): only the target is kept */
    csv.text_categories = 1;
    csv.missing = 1;
    csv.ignore = NULL;
    csv.regression = 1;
    csv.class_names = NULL;
    csv.class_count = 0;
    ffnn_dataset *col = NULL;
    if (ffnn_dataset_load_csv(data, &csv, &col) != FFNN_OK)
        return ffnn_cli_fail(cmd, "--sample-weight");
    size_t n = ffnn_dataset_count(train);
    int rc = 0;
    if (ffnn_dataset_target_width(col) != 1 || ffnn_dataset_count(col) != n) {
        fprintf(stderr, "%s: --sample-weight %s: expected one column of %zu numbers, one per "
                "row of the data (rows dropped for a missing target no longer match the file's)\n",
                cmd, spec, n);
        rc = 1;
    } else {
        rc = copy_weights(cmd, ffnn_dataset_targets(col), n, w);
    }
    ffnn_dataset_free(col);
    return rc;
}

ffnn_cli_table_options ffnn_cli_weight_column_ignored(const ffnn_cli_table_options *table,
                                                      const char *data, const char *spec,
                                                      char *buf, size_t size)
{
    ffnn_cli_table_options t = *table;
    if (!spec || ends_with(spec, ".npy") || !data || t.csv.features)
        return t; /* a .npy of weights, or the user's own feature list */
    if (t.csv.ignore && *t.csv.ignore)
        snprintf(buf, size, "%s,%s", t.csv.ignore, spec);
    else
        snprintf(buf, size, "%s", spec);
    t.csv.ignore = buf;
    return t;
}

int ffnn_cli_sample_weights(const char *cmd, const char *data,
                            const ffnn_cli_table_options *table, const char *spec,
                            ffnn_dataset *train)
{
    if (!spec)
        return 0;
    float *w = NULL;
    int npy = ends_with(spec, ".npy");
    if (!npy && !(data && (ends_with(data, ".csv") || ends_with(data, ".tsv") ||
                           ends_with(data, ".txt") || ends_with(data, ".gz")))) {
        fprintf(stderr, "%s: --sample-weight %s: a column name or index goes with a CSV "
                "--data; else give a .npy file of one weight per row\n", cmd, spec);
        return 1;
    }
    int rc = npy ? weights_from_npy(cmd, spec, ffnn_dataset_count(train), &w)
                 : weights_from_column(cmd, data, table, spec, train, &w);
    if (rc == 0 && ffnn_dataset_set_sample_weights(train, w) != FFNN_OK)
        rc = ffnn_cli_fail(cmd, "--sample-weight");
    free(w);
    return rc;
}

/* The weight of each class from spec "LABEL:W,..." (labels: the class texts, or
 * numbers without class names; unnamed classes 1) into cw [classes]. */
static int parse_class_weights(const char *cmd, const char *spec, const ffnn_dataset *d,
                               float *cw, int classes)
{
    for (int c = 0; c < classes; c++)
        cw[c] = 1.0f;
    const char *p = spec;
    while (*p) {
        const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        char label[256], *tail;
        if (!colon || colon == p || (size_t)(colon - p) >= sizeof label)
            goto bad;
        memcpy(label, p, (size_t)(colon - p));
        label[colon - p] = '\0';
        double v = strtod(colon + 1, &tail);
        if (tail != end || !(v >= 0.0) || v > 1e30)
            goto bad;
        int found = -1;
        for (int c = 0; c < classes && found < 0; c++) {
            const char *name = ffnn_dataset_class_name(d, c);
            char num[24];
            if (!name)
                snprintf(num, sizeof num, "%d", c), name = num;
            if (strcmp(name, label) == 0)
                found = c;
        }
        if (found < 0) {
            fprintf(stderr, "%s: --class-weight: '%s' is not a class of the data\n", cmd, label);
            return 1;
        }
        cw[found] = (float)v;
        p = comma ? comma + 1 : end;
    }
    return 0;
bad:
    fprintf(stderr, "%s: --class-weight expects balanced or LABEL:W,... (W a number >= 0), "
            "found '%s'\n", cmd, spec);
    return 1;
}

int ffnn_cli_class_weights(const char *cmd, const char *spec, ffnn_dataset *sets[], int n)
{
    if (!spec)
        return 0;
    ffnn_dataset *train = sets[0];
    int classes = ffnn_dataset_classes(train);
    if (!ffnn_dataset_labels(train) || classes < 1) {
        fprintf(stderr, "%s: --class-weight: the data has float targets, not classes (use "
                "--sample-weight)\n", cmd);
        return 1;
    }
    float *cw = malloc((size_t)classes * sizeof *cw);
    if (!cw)
        return fprintf(stderr, "%s: out of memory\n", cmd), 1;
    int rc = 0;
    if (strcmp(spec, "balanced") == 0) /* of the training split */
        rc = ffnn_dataset_balanced_class_weights(train, cw) == FFNN_OK
                 ? 0 : ffnn_cli_fail(cmd, "--class-weight");
    else
        rc = parse_class_weights(cmd, spec, train, cw, classes);
    for (int i = 0; rc == 0 && i < n; i++)
        if (sets[i] && ffnn_dataset_apply_class_weights(sets[i], cw, classes) != FFNN_OK)
            rc = ffnn_cli_fail(cmd, "--class-weight");
    free(cw);
    return rc;
}

void ffnn_cli_weighted_text(const ffnn_metrics *m, char *out, size_t size)
{
    out[0] = '\0';
    if (!(m->weight_sum > 0.0))
        return;
    int k = snprintf(out, size, "weighted: loss %.4f", m->weighted_loss);
    if (k > 0 && (size_t)k < size && m->weighted_accuracy == m->weighted_accuracy)
        snprintf(out + k, size - (size_t)k, ", accuracy %.2f%%", 100.0 * m->weighted_accuracy);
    k = (int)strlen(out);
    snprintf(out + k, size - (size_t)k, " (weights summing to %.6g)", m->weight_sum);
}

int ffnn_cli_encode_keeping_weights(const char *cmd, ffnn_dataset **sets, int n, FILE *info,
                                    const ffnn_cli_embedding_options *emb)
{
    float *w[3] = {NULL, NULL, NULL};
    int rc = 0;
    for (int i = 0; i < n && i < 3; i++) {
        const float *src = sets[i] ? ffnn_dataset_sample_weights(sets[i]) : NULL;
        size_t count = sets[i] ? ffnn_dataset_count(sets[i]) : 0;
        if (src && !(w[i] = malloc(count * sizeof *w[i])))
            rc = 1, fprintf(stderr, "%s: out of memory\n", cmd);
        else if (src)
            memcpy(w[i], src, count * sizeof *w[i]);
    }
    if (rc == 0)
        rc = ffnn_cli_encode_splits(cmd, sets, n, info, emb);
    for (int i = 0; rc == 0 && i < n && i < 3; i++) /* the encoding keeps the rows */
        if (w[i] && !ffnn_dataset_sample_weights(sets[i]) &&
            ffnn_dataset_set_sample_weights(sets[i], w[i]) != FFNN_OK)
            rc = ffnn_cli_fail(cmd, "--sample-weight");
    for (int i = 0; i < 3; i++)
        free(w[i]);
    return rc;
}

int ffnn_cli_print_weighted_test(int json, const ffnn_model *model,
                                 const ffnn_dataset *test, size_t batch, FILE *info)
{
    ffnn_metrics m;
    if (ffnn_model_evaluate_metrics(model, test, batch, &m, NULL) != FFNN_OK)
        return ffnn_cli_fail("ffnn train", "evaluating the weighted test set");
    if (json) {
        printf("{\"test_weighted_loss\": %.6f, \"test_weighted_accuracy\": %.6f, "
               "\"test_loss\": %.6f, \"test_accuracy\": %.6f, \"test_weight_sum\": %.9g}\n",
               m.weighted_loss, m.weighted_accuracy, m.loss, m.accuracy, m.weight_sum);
        fflush(stdout);
        return 0;
    }
    char text[160];
    ffnn_cli_weighted_text(&m, text, sizeof text);
    fprintf(info, "test (%zu samples, after training): loss %.4f", m.count, m.loss);
    if (m.accuracy == m.accuracy)
        fprintf(info, ", accuracy %.2f%%", 100.0 * m.accuracy);
    fprintf(info, "; %s\n", text);
    fflush(info);
    return 0;
}

/* ------------------------------------------------------------ cross-validation */

int ffnn_cli_cv_check(const char *cmd, const ffnn_cli_train_options *o)
{
    const char *clash = o->test_split > 0 ? "--test-split" : o->val_split > 0 ? "--val-split"
                        : o->test_path ? "--test" : o->resume_path ? "--resume"
                        : o->checkpoint_path ? "--checkpoint"
                        : o->cfg.early_stopping ? "--early-stopping" : o->gpus ? "--gpus"
                        : o->max_steps ? "--max-steps" : o->log_path ? "--log"
                        : o->log_steps ? "--log-steps" : NULL;
    if (!o->cv || !clash)
        return 0;
    fprintf(stderr, "%s: --cv K holds out each fold in turn; it excludes %s\n", cmd, clash);
    return 2;
}

/* The metrics cross-validation reports (regression: the targets' units). */
enum { CV_LOSS, CV_ACCURACY, CV_MSE, CV_RMSE, CV_MAE, CV_R2, CV_WLOSS, CV_WACCURACY, CV_METRICS };
static const char *const cv_names[CV_METRICS] = {"loss", "accuracy", "mse", "rmse", "mae", "r2",
                                                 "weighted_loss", "weighted_accuracy"};

/* Train one model on train (a fresh one, as ffnn train would start it) and
 * measure it on test into v [CV_METRICS]. 0, or 1 with the message. */
static int cv_fold(const char *cmd, const ffnn_cli_train_options *o, const char *arch,
                   const ffnn_dataset *train, const ffnn_dataset *test, double *v)
{
    ffnn_train_config cfg = o->cfg;
    ffnn_model *model = NULL;
    ffnn_dataset *std = NULL;
    ffnn_trainer *t = NULL;
    ffnn_metrics m;
    int regression = ffnn_dataset_target_width(train) > 0 && cfg.loss == FFNN_LOSS_MSE;
    if (ffnn_cli_train_model(o->init_path, o->arch, arch, cfg.seed, o->loss_given, &cfg.loss,
                             &model))
        return 1;
    int rc = 0;
    if (o->standardize && (ffnn_model_fit_standardization(model, train, regression) != FFNN_OK ||
                           ffnn_dataset_standardize(train, model, &std) != FFNN_OK))
        rc = ffnn_cli_fail(cmd, "--standardize");
    if (rc == 0 && ffnn_trainer_create(model, std ? std : train, &cfg, &t) != FFNN_OK)
        rc = ffnn_cli_fail(cmd, "--cv");
    for (int e = 0; rc == 0 && e < cfg.epochs; e++) {
        ffnn_epoch_stats stats;
        if (ffnn_trainer_run_epoch(t, NULL, NULL, &stats) != FFNN_OK)
            rc = ffnn_cli_fail(cmd, "--cv: training");
    }
    if (rc == 0 && ffnn_trainer_evaluate_metrics(t, test, &m, NULL) != FFNN_OK)
        rc = ffnn_cli_fail(cmd, "--cv: evaluating");
    if (rc == 0) {
        const double all[CV_METRICS] = {m.loss, m.accuracy, m.mse, m.rmse, m.mae, m.r2,
                                        m.weighted_loss, m.weighted_accuracy};
        memcpy(v, all, sizeof all);
    }
    ffnn_trainer_free(t);
    ffnn_dataset_free(std);
    ffnn_model_free(model);
    return rc;
}

/* The metrics of this run: NaN in every fold (regression's accuracy,
 * classification's mse, no weights) is left out. */
static int cv_shown(const double *v, int folds, int k)
{
    for (int f = 0; f < folds; f++)
        if (v[f * CV_METRICS + k] == v[f * CV_METRICS + k])
            return 1;
    return 0;
}

static void cv_print_fold(const ffnn_cli_train_options *o, int f, size_t count, const double *v)
{
    if (o->json) {
        printf("{\"cv_fold\": %d, \"test_count\": %zu", f + 1, count);
        for (int k = 0; k < CV_METRICS; k++)
            if (v[k] == v[k])
                printf(", \"%s\": %.9g", cv_names[k], v[k]);
        printf("}\n");
    } else {
        printf("fold %d/%d: %zu test rows ", f + 1, o->cv, count);
        for (int k = 0; k < CV_METRICS; k++)
            if (v[k] == v[k])
                printf(" %s %.6g", cv_names[k], v[k]);
        printf("\n");
    }
    fflush(stdout);
}

/* mean and standard deviation (numpy's default: over K, not K - 1) per metric. */
static void cv_print_summary(const ffnn_cli_train_options *o, const double *v)
{
    int K = o->cv;
    double mean[CV_METRICS], sd[CV_METRICS];
    for (int k = 0; k < CV_METRICS; k++) {
        double s = 0, s2 = 0;
        for (int f = 0; f < K; f++)
            s += v[f * CV_METRICS + k];
        mean[k] = s / K;
        for (int f = 0; f < K; f++)
            s2 += (v[f * CV_METRICS + k] - mean[k]) * (v[f * CV_METRICS + k] - mean[k]);
        sd[k] = sqrt(s2 / K);
    }
    if (o->json) {
        for (int part = 0; part < 2; part++) {
            printf(part ? ", \"std\": {" : "{\"cv_folds\": %d, \"mean\": {", K);
            for (int k = 0, n = 0; k < CV_METRICS; k++)
                if (cv_shown(v, K, k))
                    printf("%s\"%s\": %.9g", n++ ? ", " : "", cv_names[k],
                           part ? sd[k] : mean[k]);
            printf("}");
        }
        printf("}\n");
    } else {
        printf("mean +- std over %d folds:", K);
        for (int k = 0; k < CV_METRICS; k++)
            if (cv_shown(v, K, k))
                printf("  %s %.6g +- %.2g", cv_names[k], mean[k], sd[k]);
        printf("\n");
    }
    fflush(stdout);
}

int ffnn_cli_train_cv(const char *cmd, const ffnn_cli_train_options *o, const ffnn_dataset *data,
                      const char *arch, const char *description)
{
    int K = o->cv;
    double *v = calloc((size_t)K * CV_METRICS, sizeof *v); /* [K, CV_METRICS] */
    if (!v)
        return fprintf(stderr, "%s: out of memory\n", cmd), 1;
    if (!o->json)
        printf("cross-validation: %d folds of %s, %s, seed %llu; each fold's model trained "
               "%d epochs on the other folds\n", K, description,
               ffnn_dataset_labels(data) ? "stratified by class" : "shuffled",
               (unsigned long long)o->cfg.seed, o->cfg.epochs);
    int rc = 0;
    for (int f = 0; rc == 0 && f < K; f++) {
        ffnn_dataset *train = NULL, *test = NULL;
        if (ffnn_dataset_fold(data, K, f, o->cfg.seed, &train, &test) != FFNN_OK)
            rc = ffnn_cli_fail(cmd, "--cv");
        else if ((rc = cv_fold(cmd, o, arch, train, test, v + f * CV_METRICS)) == 0)
            cv_print_fold(o, f, ffnn_dataset_count(test), v + f * CV_METRICS);
        ffnn_dataset_free(train);
        ffnn_dataset_free(test);
    }
    if (rc == 0)
        cv_print_summary(o, v);
    if (rc == 0 && o->save_path) /* stderr with --json, as the other notes */
        fprintf(o->json ? stderr : stdout, "--save: refitting one model on all %zu rows (the "
                "fold models are not kept)\n", ffnn_dataset_count(data));
    free(v);
    return rc;
}
