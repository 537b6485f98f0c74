/* shell.h — the interactive `silt sql` shell and what it shares with
 * cmd_query.c. */
#ifndef SILT_CLI_SHELL_H
#define SILT_CLI_SHELL_H

#include <stddef.h>

#include "cli.h"

/* Runs the shell on the terminal until .quit, .exit or end of input (Ctrl-D);
 * `base` gives the starting format (NULL = table) and the as-of items and
 * --unsafe-file-access that every statement gets. Returns EXIT_OK. */
int cli_sql_shell(cli_ctx *c, silt_workspace *ws, const silt_sql_opts *base);

/* Width of the terminal on stdout for the table format: 0 (no limit) when
 * `format` is not table (NULL = table), `output` is a file or stdout is not
 * a terminal; else its columns ($COLUMNS, then 80, when it does not say). */
size_t cli_table_width(const char *format, const char *output);

/* Prints the schema of dataset `name` as `silt schema NAME` does (a files
 * dataset: its tabular schema, or else the schema of its entries; `at` for
 * files datasets only). Returns EXIT_OK or EXIT_FAIL (message printed). */
int cli_schema_print(silt_workspace *ws, const char *name, const char *as_of, silt_schema_format fmt);

#endif
