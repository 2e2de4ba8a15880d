/* model_command.c - the frame of the commands on a model file (model_command.h). */
#include "model_command.h"

typedef struct frame {
    const ffnn_cli_model_command *c;
    void *ctx;
    ffnn_cli_model_options *model;
    ffnn_cli_table_options *table;
} frame;

static int frame_option(void *arg, int c, const char *value)
{
    frame *f = arg;
    int rc;
    if (ffnn_cli_model_option(f->c->cmd, f->model, c, value, &rc) ||
        ffnn_cli_table_option(f->c->cmd, f->table, c, value, &rc))
        return rc;
    return f->c->option(f->ctx, c, value);
}

int ffnn_cli_run_model_command(const ffnn_cli_model_command *c, int argc, char **argv,
                               void *ctx, ffnn_cli_model_options *model,
                               ffnn_cli_table_options *table)
{
    *model = (ffnn_cli_model_options)FFNN_CLI_MODEL_OPTIONS_DEFAULT;
    table->csv = ffnn_csv_options_default();
    frame f = {c, ctx, model, table};
    ffnn_model *m = NULL;
    int operands;
    int rc = ffnn_cli_getopt(c->cmd, argc, argv, c->longopts, c->usage, frame_option, &f,
                             &operands);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (operands < argc)
        return ffnn_cli_unexpected(c->cmd, argv[operands]);
    if (!model->path)
        return ffnn_cli_missing(c->cmd, "--model FILE");
    if (c->check && (rc = c->check(ctx)) != 0)
        return rc;
    if ((rc = ffnn_cli_open_model(c->cmd, model, &m)) == 0)
        rc = c->run(ctx, m);
    ffnn_model_free(m);
    return rc;
}
