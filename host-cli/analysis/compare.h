/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * compare and report: saved `guestbench bench --format json` documents side
 * by side. Pure functions: documents in, rows/ratios/significance out; the
 * command file (cmd-compare.c) does the I/O around them.
 */

typedef enum {
	CLI_COMPARE_BY_DOCUMENT, /* one column per document (per guest when it holds several) */
	CLI_COMPARE_BY_GUEST,    /* one document, one column per guest in it */
} CliCompareBy;

typedef enum {
	CLI_SIGNIFICANCE_UNKNOWN, /* a single run on both sides: noise cannot be told apart */
	CLI_SIGNIFICANCE_YES,
	CLI_SIGNIFICANCE_NO, /* within run-to-run noise */
} CliSignificance;

/* p below this: the difference is more than run-to-run noise. */
#define CLI_COMPARE_ALPHA 0.05

typedef struct {
	char *label;         /* column header: document id, "id/guest", or the guest name */
	char *source;        /* the file it came from */
	char *given;         /* the FILE argument as typed (a path or a saved run's id), or NULL */
	char *guest;         /* guest name in the document */
	char *test;          /* "aes", "disk", ...; NULL when the guest has no result */
	char *error;         /* why the column has no values, or NULL */
	char *timestamp;     /* when the agent ran it, or NULL */
	char *agent_version; /* or NULL */
	JsonObject *params;  /* the result's params (ref), or NULL */
	JsonObject *facts;   /* the result's facts (ref), or NULL */
	JsonObject *result;  /* the guest's whole result (ref), or NULL without one */
	guint n_runs;        /* most runs behind one of its values; 0 without values */
	/* labels.concurrent: benchmarks at once on its hypervisor while it ran; 0: not said */
	gint64 concurrent;
} CliCompareColumn;

typedef struct {
	gboolean present; /* FALSE: no number ("—"), see unavailable */
	double value;
	guint n_runs; /* 1 without a "runs" array */
	double mean;
	double stddev;     /* sample standard deviation of the runs, 0 with one run */
	char *unavailable; /* the agent's reason when the value is null, or NULL */
} CliCompareCell;

typedef struct {
	char *test;
	char *metric;
	char *unit;
	char *labels_key;  /* canonical "name=value,..." sorted by name */
	char *labels_text; /* for people: "16 KiB", "randread 4 KiB p99" */
	char **label_names;
	char **label_values;
	gboolean lower_is_better;      /* ns, %, ...: a smaller number is the better one */
	gboolean headline;             /* one of the test's headline metrics (the summary's) */
	CliCompareCell *cells;         /* one per column */
	double *ratios;                /* cells[i] / cells[0]; NAN where either is missing */
	CliSignificance *significance; /* of column i against column 0 */
} CliCompareRow;

/* Column i (i >= 1) against column 0, over the headline rows only. */
typedef struct {
	guint column;
	double geomean; /* of performance ratios (lower-is-better rows inverted); NAN if none */
	guint n_rows;   /* rows in the geomean */
	guint n_not_significant;
	int best_row;  /* highest performance ratio, -1 if none */
	int worst_row; /* lowest, -1 if none */
} CliComparePair;

/* A parameter that differs between columns that ran the same test. */
typedef struct {
	char *test;
	char *param;
	char **values;  /* per column: compact JSON, "absent", or NULL for another test */
	guint n_values; /* the columns: values has NULL holes, so it is no string vector */
} CliCompareMismatch;

typedef struct {
	CliCompareBy by;
	GPtrArray *columns;    /* CliCompareColumn */
	GPtrArray *rows;       /* CliCompareRow with a value in some column, in first-seen order */
	guint n_empty_rows;    /* rows left out: no value in any column */
	GPtrArray *pairs;      /* CliComparePair, columns 1..n-1 */
	GPtrArray *mismatches; /* CliCompareMismatch */
	GPtrArray *docs;       /* JsonNode roots keeping params/facts alive */
} CliComparison;

CliComparison *cli_comparison_new(CliCompareBy by);
void cli_comparison_free(CliComparison *cmp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliComparison, cli_comparison_free)

/*
 * ARG is a path, or the id of a saved result (basename without .json) looked
 * up in results_dir (NULL: $XDG_DATA_HOME/guestbench/results). Returns the path.
 */
char *cli_compare_resolve(const char *arg, const char *results_dir, GError **error);

/*
 * Parses and checks one bench document and adds its columns. label is the
 * document id used for column headers. Every error names the file and the
 * member ("a.json: guests[0].result.metrics[2]: Parameter 'unit' is missing").
 * It is read guest by guest: a guest whose entry cannot be read becomes a
 * column without values whose error says why (the others are kept); only a
 * document with no readable guest fails.
 */
gboolean cli_comparison_add_data(CliComparison *cmp, const char *source, const char *label,
                                 const char *data, gsize len, GError **error);
gboolean cli_comparison_add_file(CliComparison *cmp, const char *path, const char *label,
                                 GError **error);

/*
 * What a guest's bench result must be for compare and report to read it:
 * test, params, the optional members of the right types, well-typed samples
 * and no sample twice. compare reads each guest of a saved run with it, so
 * that one guest's bad result costs only that guest's column.
 */
gboolean cli_compare_check_result(JsonObject *result, GError **error);

/*
 * Whether (metric, unit) is a headline metric of test: what the benchmark is
 * for (aes: each block size's throughput; disk: throughput per phase and
 * record size; mem: page-fault time and bandwidths; net: throughput per
 * direction), not what explains it (CPU %, retransmits, latency quantiles).
 * A test this CLI does not know has none.
 */
gboolean cli_compare_is_headline(const char *test, const char *metric, const char *unit);

/*
 * Builds rows, ratios, significance, pair summaries and parameter mismatches.
 * Columns of different tests (aes and disk) fail: their metrics never match.
 */
gboolean cli_comparison_compute(CliComparison *cmp, GError **error);

/* Rows [first, end) of one metric start at first; returns end. */
guint cli_compare_group_end(CliComparison *cmp, guint first);

G_END_DECLS
