/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "render/table.h"

G_BEGIN_DECLS

/*
 * What a run produced, as the renderers see it: the command's name and, per
 * guest, its status, error and result document. The runner, merge (one set
 * per hypervisor), --hosts and discover build these; every renderer (table,
 * text, CSV, Prometheus, HTML, the JSON contract document) takes one, never
 * the application or the fleet.
 */

typedef enum {
	CLI_GUEST_PENDING,
	CLI_GUEST_RUNNING,
	CLI_GUEST_OK,
	CLI_GUEST_ERROR,
	CLI_GUEST_TIMEOUT,
	/* not asked: another guestbench process holds the guest's port (transport/lock.h) */
	CLI_GUEST_BUSY,
} CliGuestStatus;

/* "pending", "running", "ok", "error", "timeout", "busy". */
const char *cli_guest_status_to_string(CliGuestStatus status);
/* The final states a saved document may carry: ok, error, timeout, busy. */
gboolean cli_guest_status_from_string(const char *text, CliGuestStatus *status);

/* One guest's outcome; all members owned. */
typedef struct {
	char *name;   /* shown in output */
	char *target; /* as given on the command line */
	CliGuestStatus status;
	char *error;      /* NULL when ok */
	JsonNode *result; /* NULL when there is none */
} CliResult;

CliResult *cli_result_new(const char *name, const char *target, CliGuestStatus status,
                          const char *error, JsonNode *result);
void cli_result_free(CliResult *result);

typedef struct {
	char *command;     /* the command's name */
	GPtrArray *guests; /* CliResult, in target order */
} CliResults;

CliResults *cli_results_new(const char *command);
void cli_results_free(CliResults *results);
/* Takes ownership of result. */
void cli_results_add(CliResults *results, CliResult *result);
/* The guests that are not ok (--failed-only), in the same order: a new set. */
CliResults *cli_results_filter_failed(const CliResults *results);

/* The --format json contract document, pretty-printed, trailing newline. */
GString *cli_results_render_json(const CliResults *results);

/* The DETAIL cell of an ok guest in the default table; NULL describes nothing. */
typedef char *(*CliResultDescribeFunc)(const CliResult *result);
/* The default GUEST/STATUS/DETAIL table, one row per guest. */
CliTable *cli_results_default_table(const CliResults *results, CliResultDescribeFunc describe);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliResult, cli_result_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliResults, cli_results_free)

G_END_DECLS
