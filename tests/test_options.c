/*
 * test_options.c - the training-option table (src/core/train_options.def) walked
 * row by row: every option's default passes the check, its range is refused just
 * outside (by the check and by ffnn_train_config_set, the message naming it),
 * its value round-trips through ffnn_train_config_get/_set and through a
 * checkpoint file, and the command line knows it (or its row says why not).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli_run.h"
#include "core/model.h"
#include "core/train_options.h"
#include "ffnn.h"
#include "io/run_state.h"
#include "test_files.h"
#include "train/config.h"

/* Text just outside bound `max` (1) or `min` (0) of option o into buf; 0 when
 * no such value exists (a bound at the end of the type: seed's). */
static int outside_text(const ffnn_train_option *o, int max, char *buf, size_t size)
{
    const ffnn_config_limit *l = &o->limit;
    double bound = max ? l->max : l->min;
    int open = max ? l->max_open : l->min_open;
    if (o->type == FFNN_OPTION_U64)
        return 0;
    if (o->type == FFNN_OPTION_FLOAT) {
        float f = (float)bound;
        if (!open)
            f = nextafterf(f, max ? INFINITY : -INFINITY);
        snprintf(buf, size, "%.9g", (double)f);
        return 1;
    }
    snprintf(buf, size, "%.0f", max ? bound + 1 : bound - 1);
    return 1;
}

/* Write the outside value straight into c's bytes (the check must refuse it). */
static void poke_outside(ffnn_train_config *c, const ffnn_train_option *o, int max)
{
    const ffnn_config_limit *l = &o->limit;
    double bound = max ? l->max : l->min;
    int open = max ? l->max_open : l->min_open;
    char *p = (char *)c + o->offset;
    if (o->type == FFNN_OPTION_FLOAT) {
        float f = (float)bound;
        if (!open)
            f = nextafterf(f, max ? INFINITY : -INFINITY);
        memcpy(p, &f, sizeof f);
    } else if (o->type == FFNN_OPTION_SIZE) {
        size_t z = (size_t)(max ? bound + 1 : bound - 1);
        memcpy(p, &z, sizeof z);
    } else { /* int-sized: INT, BOOL, ENUM, an INT_LIST's first element */
        int i = (int)(max ? bound + 1 : bound - 1);
        memcpy(p, &i, sizeof i);
        if (o->type == FFNN_OPTION_INT_LIST) {
            int one = 1;
            memcpy((char *)c + o->count_offset, &one, sizeof one);
        }
    }
}

TEST("options_defaults_pass_limits_refused_just_outside", default_and_limits)
{
    ffnn_train_config d = ffnn_train_config_default();
    size_t refused = 0, no_outside = 0;
    (void)why, (void)why_size;
    CHECK(ffnn_train_option_count() > 30, "%zu options", ffnn_train_option_count());
    CHECK_OK(ffnn_train_config_check_settings(&d));
    for (size_t i = 0; i < ffnn_train_option_count(); i++) {
        const ffnn_train_option *o = ffnn_train_option_at(i);
        CHECK(ffnn_train_option_find(o->name) == o, "%s: not found by name", o->name);
        CHECK(o->offset + o->size <= sizeof(ffnn_train_config), "%s: outside", o->name);
        CHECK(!o->hidden || (o->offset >= offsetof(ffnn_train_config, reserved) &&
                             o->offset + o->size <= sizeof(ffnn_train_config)),
              "%s: hidden but not in reserved", o->name);
        CHECK(ffnn_option_value(&d, o) == o->default_value, "%s: default %g, row says %g",
              o->name, ffnn_option_value(&d, o), o->default_value);
        CHECK(o->help && strlen(o->help) > 5 && o->cli && *o->cli, "%s: help/cli", o->name);
        for (int max = 0; max <= 1; max++) {
            char text[64];
            ffnn_train_config c = d;
            if (!outside_text(o, max, text, sizeof text)) {
                no_outside++;
                continue;
            }
            poke_outside(&c, o, max);
            ffnn_status st = ffnn_train_config_check_settings(&c);
            CHECK(st == FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), o->name),
                  "%s just outside its %s (%s): the check said %d: %s", o->name,
                  max ? "max" : "min", text, (int)st, ffnn_last_error());
            c = d;
            if (o->type != FFNN_OPTION_BOOL && o->type != FFNN_OPTION_ENUM) {
                st = ffnn_train_config_set(&c, o->name, text);
                CHECK(st == FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), o->name) &&
                          strstr(ffnn_last_error(), "expected"),
                      "set %s %s: %d: %s", o->name, text, (int)st, ffnn_last_error());
                CHECK(memcmp(&c, &d, sizeof c) == 0, "set %s %s changed the config", o->name,
                      text);
            }
            refused++;
        }
        /* the text form reads back as itself */
        char text[FFNN_OPTION_LIST_TEXT_MAX];
        ffnn_train_config c = d;
        CHECK_OK(ffnn_train_config_get(&d, o->name, text, sizeof text));
        CHECK_OK(ffnn_train_config_set(&c, o->name, text));
        CHECK(ffnn_option_equal(&c, &d, o), "%s: '%s' read back differently", o->name, text);
    }
    printf("      %zu options: defaults pass; %zu bounds refused just outside by the check "
           "and by ffnn_train_config_set; %zu bounds with no value outside (seed's uint64)\n",
           ffnn_train_option_count(), refused, no_outside);
    return TEST_PASS;
}

TEST("options_set_and_get_by_name", set_by_name)
{
    ffnn_train_config c = ffnn_train_config_default();
    char text[64];
    (void)why, (void)why_size;
    CHECK_OK(ffnn_train_config_set(&c, "cuda_block_1d", "128"));
    CHECK(ffnn_cfg_cuda_block_1d(&c) == 128, "reserved[0] %d", ffnn_cfg_cuda_block_1d(&c));
    CHECK_OK(ffnn_train_config_get(&c, "cuda_block_1d", text, sizeof text));
    CHECK(strcmp(text, "128") == 0, "get: %s", text);
    CHECK_OK(ffnn_train_config_set(&c, "cuda_block_2d", "12")); /* in range, not a shape */
    CHECK(ffnn_train_config_check_settings(&c) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "cuda_block_2d"),
          "12 passed: %s", ffnn_last_error());
    CHECK(ffnn_train_config_set(&c, "no_such", "1") == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "no_such"), "%s", ffnn_last_error());
    CHECK(ffnn_train_config_set(&c, "loss", "hinge") == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "mse"), "%s", ffnn_last_error());
    CHECK(ffnn_train_config_set(&c, "learning_rate", "1e-50") == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "32-bit"), "%s", ffnn_last_error());
    CHECK_OK(ffnn_train_config_set(&c, "lr_milestones", "3,7,9"));
    CHECK(c.lr_milestone_count == 3 && c.lr_milestones[2] == 9, "milestones");
    CHECK(ffnn_train_config_set(&c, "lr_milestones", "3,3") == FFNN_ERR_INVALID_ARGUMENT,
          "not increasing");
    CHECK_OK(ffnn_train_config_set(&c, "shuffle", "false"));
    CHECK(c.shuffle == 0, "shuffle");
    CHECK(ffnn_train_config_get(&c, "lr_milestones", text, 3) == FFNN_ERR_INVALID_ARGUMENT,
          "small buffer");
    return TEST_PASS;
}

/* A value of o other than its default, inside its range, as text. */
static void sample_text(const ffnn_train_option *o, char *buf, size_t size)
{
    const ffnn_config_limit *l = &o->limit;
    double v = o->default_value + 1;
    switch (o->type) {
    case FFNN_OPTION_ENUM: { /* the next value, by name */
        ffnn_train_config c = ffnn_train_config_default();
        int next = (int)o->default_value + 1;
        memcpy((char *)&c + o->offset, &next, sizeof next);
        ffnn_train_config_get(&c, o->name, buf, size);
        return;
    }
    case FFNN_OPTION_BOOL: snprintf(buf, size, "%s", o->default_value ? "false" : "true"); return;
    case FFNN_OPTION_INT_LIST: snprintf(buf, size, "2,5"); return;
    case FFNN_OPTION_FLOAT:
        v = o->default_value != 0 ? o->default_value / 2 : (l->min + (l->max < 1 ? l->max : 1)) / 2;
        snprintf(buf, size, "%.9g", v);
        return;
    default:
        if (v > l->max)
            v = o->default_value - 1;
        snprintf(buf, size, "%.0f", v);
        return;
    }
}

/* Write a checkpoint of cfg (a 4-3 model at epoch 0) to path and read it back. */
static ffnn_status ck_round_trip(const char *path, const ffnn_train_config *cfg,
                                 ffnn_run_state *back)
{
    ffnn_model *m = NULL;
    ffnn_status st = ffnn_model_create("4-3", &m);
    if (st != FFNN_OK)
        return st;
    const size_t n = m->parameter_count;
    float *floats = calloc(4 * n, sizeof *floats); /* params, up to 2 states, ema */
    ffnn_run_state s;
    memset(&s, 0, sizeof s);
    s.model = m;
    s.params = floats;
    s.cfg = *cfg;
    s.train_count = 1000;
    s.steps_per_epoch = cfg->drop_last ? 1000 / cfg->batch_size
                                       : (1000 + cfg->batch_size - 1) / cfg->batch_size;
    s.epoch_rng[0] = 1;
    s.opt_state = cfg->optimizer != FFNN_OPT_SGD ? floats + n : NULL;
    s.ema = cfg->ema_decay > 0 ? floats + 3 * n : NULL;
    s.plateau.best = HUGE_VAL;
    s.plateau.lr = cfg->learning_rate;
    s.es_best_loss = HUGE_VAL;
    st = floats ? ffnn_checkpoint_write(path, &s) : FFNN_ERR_NO_MEMORY;
    if (st == FFNN_OK)
        st = ffnn_checkpoint_read(path, NULL, back);
    free(floats);
    ffnn_model_free(m);
    return st;
}

TEST_DIR_CASE("options_checkpoint_round_trip", "opt", checkpoint_round_trip)
{
    char path[512], text[64];
    size_t recorded = 0, not_recorded = 0;
    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/run.ckpt", dir);
    for (size_t i = 0; i < ffnn_train_option_count(); i++) {
        const ffnn_train_option *o = ffnn_train_option_at(i);
        ffnn_train_config c = ffnn_train_config_default();
        if (o->checkpoint == FFNN_CK_NONE) {
            CHECK(!o->resume_match, "%s: not recorded, so resume cannot compare it", o->name);
            not_recorded++;
            continue;
        }
        if (o->checkpoint == FFNN_CK_MOMENTUM)
            c.optimizer = FFNN_OPT_MOMENTUM;
        if (o->checkpoint == FFNN_CK_ADAM)
            c.optimizer = FFNN_OPT_ADAM;
        sample_text(o, text, sizeof text);
        CHECK_OK(ffnn_train_config_set(&c, o->name, text));
        CHECK(!ffnn_option_is_default(&c, o), "%s: sample %s is the default", o->name, text);
        ffnn_run_state back;
        ffnn_status st = ck_round_trip(path, &c, &back);
        CHECK(st == FFNN_OK, "%s = %s: %s", o->name, text, ffnn_last_error());
        int same = ffnn_option_equal(&back.cfg, &c, o);
        ffnn_run_state_free(&back);
        CHECK(same, "%s = %s did not round-trip through %s", o->name, text, path);
        recorded++;
    }
    printf("      %zu options written as a non-default value and read back equal; %zu not "
           "recorded (device, strategy, launch settings: a resumed run may change them)\n",
           recorded, not_recorded);
    return TEST_PASS;
}

/* The first word of o->cli ("--batch" of "--batch", "--lr-schedule" of
 * "--lr-schedule step:N") into buf. */
static void cli_word(const ffnn_train_option *o, char *buf, size_t size)
{
    size_t n = strcspn(o->cli, " ");
    snprintf(buf, size, "%.*s", (int)n, o->cli);
}

TEST_DIR_CASE("options_cli_knows_every_option", "opt", cli_knows_every_option)
{
    char help[512], out[512], word[64], needle[80], text[64];
    size_t direct = 0, through = 0, none = 0;
    UNUSED_WHY();
    snprintf(help, sizeof help, "%s/help.txt", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    const char *args[] = {"train", "--help", NULL};
    CHECK(cli_run(args, help, NULL) == 0, "ffnn train --help failed (%s)", cli_binary());
    for (size_t i = 0; i < ffnn_train_option_count(); i++) {
        const ffnn_train_option *o = ffnn_train_option_at(i);
        if (strncmp(o->cli, "none: ", 6) == 0) {
            CHECK(strlen(o->cli) > 12, "%s: no reason why the command line lacks it", o->name);
            none++;
            continue;
        }
        CHECK(strncmp(o->cli, "--", 2) == 0, "%s: cli '%s'", o->name, o->cli);
        cli_word(o, word, sizeof word);
        snprintf(needle, sizeof needle, "  %s ", word);
        CHECK(file_contains(help, needle), "%s: '%s' is not in ffnn train --help", o->name,
              word);
        if (strchr(o->cli, ' ')) {
            through++;
            continue;
        }
        direct++;
        /* the command line parses it: just outside the range is refused, naming it */
        if (o->type == FFNN_OPTION_BOOL || o->type == FFNN_OPTION_ENUM ||
            !outside_text(o, 1, text, sizeof text))
            continue;
        const char *bad[] = {"train", word, text, "--data", "synth:points:50", NULL};
        int rc = cli_run(bad, out, NULL);
        CHECK(rc == 2 && file_contains(out, word) && file_contains(out, "expects"),
              "ffnn train %s %s: exit %d", word, text, rc);
    }
    printf("      %zu options with their own flag (each refused just above its range), %zu "
           "through another option's value, %zu without one (each says why)\n", direct,
           through, none);
    return TEST_PASS;
}
