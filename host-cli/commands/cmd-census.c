/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The census command: the fleet's CPU models, from live guests (gb-get-facts,
 * as facts asks it) and from saved facts and bench documents, grouped and
 * judged by analysis/census.c.
 */
#include "config.h"

#include <sched.h>

#include "guestbench-protocol.h"

#include "analysis/census.h"
#include "analysis/runs.h"
#include "commands/cmd-facts.h"
#include "commands/census-pve.h"
#include "commands/app.h"
#include "commands/commands.h"
#include "fleet/runner.h"
#include "fleet/target.h"
#include "render/csv.h"
#include "render/escape.h"
#include "render/output.h"
#include "render/prom.h"
#include "render/table.h"
#include "transport/qmp.h"

#define CLI_CENSUS_DESCRIPTION                                                         \
	"Groups the guests by CPU model name, ISA level, hypervisor and flag set,\n"   \
	"with counts and names; gives the baseline (the flags every guest has, over\n" \
	"the fleet and, with --by tag, per inventory tag), what each group lacks\n"    \
	"against the union of all flags, the outliers (a guest whose model or flags\n" \
	"differ from the majority of its tag group, or of the fleet) and the lowest\n" \
	"ISA level with the guests that hold the fleet there.\n"                       \
	"An operand ending in .json is a saved document (facts --format json, or a\n"  \
	"bench run, which carries each guest's facts); any other operand is a live\n"  \
	"target. Saved guests come first, then the live ones.\n"                       \
	"A guest whose cpu members cannot be read is listed with what was missing\n"   \
	"and left out of the census. Exit status 1 when a guest fails\n"               \
	"--require-level or --require-flags, 3 when a guest could not be counted\n"    \
	"or the QEMU of --qmp could not be asked (the census is still written).\n"     \
	"A fleet of x86_64 and aarch64 guests has baselines, outliers and lowest\n"    \
	"ISA levels per architecture. --require-level takes at most one x86-64\n"      \
	"and one Arm level, comma-separated (x86-64-v3,armv8.2-a): the x86-64 one\n"   \
	"applies to x86 guests, the Arm one to aarch64 guests, which reach it only\n"  \
	"with every feature it makes mandatory (Armv9.0 reaches Armv8.5, not 8.6).\n"  \
	"With --qmp, the QEMU monitor of this host (a QMP socket, or libvirt:DOMAIN\n" \
	"through the first --connect URI), each x86 baseline names the QEMU CPU\n"     \
	"model that covers it: of the named models this QEMU can run (query-cpu-\n"    \
	"definitions), the one with the most features whose every feature the\n"       \
	"baseline has (query-cpu-model-expansion), and the flags the baseline has\n"   \
	"beyond it, to add as -cpu MODEL,+FLAG."

static char *cli_census_opt_by = NULL;
static char *cli_census_opt_require_level = NULL;
static char *cli_census_opt_require_flags = NULL;
static char *cli_census_opt_qmp = NULL;
static gboolean cli_census_by_tag = FALSE;
static CliAuditRequire cli_census_require = { 0 };
/* the saved documents' guests, read by prepare; the live ones join in run */
static CliCensus *cli_census = NULL;

/* Adds each guest of one saved document; fails when it is not a facts or bench document. */
static gboolean cli_census_add_document(CliCensus *census, const char *path, GError **error)
{
	g_autofree char *data = NULL;
	gsize len = 0;
	g_autoptr(JsonNode) root = NULL;
	JsonObject *doc = NULL;
	JsonArray *guests = NULL;
	const char *version = NULL;
	const char *command = NULL;
	gboolean bench;

	if (!g_file_get_contents(path, &data, &len, error))
		return FALSE;
	root = gb_json_parse(data, len, error);
	if (root == NULL || !cli_document_open(root, &doc, &version, error) ||
	    !gb_json_get_string(doc, "command", GB_JSON_REQUIRED, &command, error) ||
	    !gb_json_get_array(doc, "guests", GB_JSON_REQUIRED, &guests, error)) {
		g_prefix_error(error, "%s: ", path);
		return FALSE;
	}
	bench = g_strcmp0(command, "bench") == 0;
	if (!bench && g_strcmp0(command, "facts") != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "%s: a '%s' document; census reads facts and bench documents", path,
		            command);
		return FALSE;
	}
	for (guint i = 0; i < json_array_get_length(guests); i++) {
		g_autoptr(GError) local_error = NULL;
		g_autofree char *fallback = g_strdup_printf("guests[%u]", i);
		JsonObject *guest = NULL;
		JsonObject *result = NULL;
		JsonObject *facts = NULL;
		const char *name = NULL;
		const char *status = NULL;

		if (!gb_json_node_get_object(json_array_get_element(guests, i), fallback, &guest,
		                             &local_error) ||
		    !gb_json_get_string(guest, "name", GB_JSON_REQUIRED, &name, &local_error) ||
		    !gb_json_get_string(guest, "status", GB_JSON_REQUIRED, &status, &local_error)) {
			cli_census_add_problem(census, name != NULL ? name : fallback, path,
			                       local_error->message);
			continue;
		}
		if (g_strcmp0(status, "ok") != 0) {
			g_autofree char *why = g_strdup_printf("status %s in the document", status);

			cli_census_add_problem(census, name, path, why);
			continue;
		}
		if (!gb_json_get_object(guest, "result", GB_JSON_REQUIRED, &result, &local_error) ||
		    (bench && !gb_json_get_object(result, "facts", GB_JSON_REQUIRED, &facts,
		                                  &local_error))) {
			g_prefix_error(&local_error, bench ? "result: " : "");
			cli_census_add_problem(census, name, path, local_error->message);
			continue;
		}
		cli_census_add(census, name, path, NULL, bench ? facts : result);
	}
	return TRUE;
}

/* One saved document, read on a worker thread into a census of its own. */
typedef struct {
	const char *path;
	CliCensus *part;
	GError *error;
} CliCensusDocument;

static void cli_census_read_document(gpointer data, gpointer user_data)
{
	CliCensusDocument *doc = data;

	doc->part = cli_census_new();
	cli_census_add_document(doc->part, doc->path, &doc->error);
}

/* The processors this process may run on (taskset, cpusets), which GLib does not count. */
static guint cli_census_processors(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (guint)CPU_COUNT(&set);
	return g_get_num_processors();
}

/*
 * Reads the saved documents on a thread per processor (reading and parsing
 * is what a census of thousands of them costs) and adds their guests in
 * operand order, so the output does not depend on which thread was first;
 * the first document in that order that cannot be read is the error.
 */
static gboolean cli_census_add_documents(CliCensus *census, GPtrArray *paths, GError **error)
{
	guint n_threads = MIN(cli_census_processors(), paths->len);
	g_autofree CliCensusDocument *docs = g_new0(CliCensusDocument, paths->len);
	gboolean ok = TRUE;

	for (guint i = 0; i < paths->len; i++)
		docs[i].path = g_ptr_array_index(paths, i);
	if (n_threads > 1) {
		GThreadPool *pool =
		    g_thread_pool_new(cli_census_read_document, NULL, (gint)n_threads, TRUE, NULL);

		for (guint i = 0; i < paths->len; i++)
			g_thread_pool_push(pool, &docs[i], NULL);
		/* waits for every document */
		g_thread_pool_free(pool, FALSE, TRUE);
	} else {
		for (guint i = 0; i < paths->len && (i == 0 || docs[i - 1].error == NULL); i++)
			cli_census_read_document(&docs[i], NULL);
	}
	for (guint i = 0; i < paths->len; i++) {
		if (ok && docs[i].error != NULL) {
			g_propagate_error(error, g_steal_pointer(&docs[i].error));
			ok = FALSE;
		}
		if (ok)
			cli_census_take_guests(census, docs[i].part);
		g_clear_error(&docs[i].error);
		g_clear_pointer(&docs[i].part, cli_census_free);
	}
	return ok;
}

static gboolean cli_census_prepare(CliApp *app, GPtrArray *args, GError **error)
{
	g_autoptr(GPtrArray) paths = NULL;

	g_clear_pointer(&cli_census, cli_census_free);
	cli_census_by_tag = FALSE;
	cli_census_require.isa_level = 0;
	cli_census_require.arm_level = 0;
	g_clear_pointer(&cli_census_require.flags, g_strfreev);
	if (cli_census_opt_by != NULL) {
		if (g_strcmp0(cli_census_opt_by, "tag") != 0 &&
		    g_strcmp0(cli_census_opt_by, "fleet") != 0) {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "--by '%s': expected tag or fleet", cli_census_opt_by);
			return FALSE;
		}
		cli_census_by_tag = g_strcmp0(cli_census_opt_by, "tag") == 0;
	}
	if (cli_census_opt_require_level != NULL &&
	    !cli_require_level_parse(cli_census_opt_require_level, &cli_census_require.isa_level,
	                             &cli_census_require.arm_level, error)) {
		g_prefix_error(error, "--require-level: ");
		return FALSE;
	}
	if (cli_census_opt_require_flags != NULL) {
		cli_census_require.flags = cli_cpu_flags_parse(cli_census_opt_require_flags, error);
		if (cli_census_require.flags == NULL) {
			g_prefix_error(error, "--require-flags: ");
			return FALSE;
		}
	}
	if (cli_census_opt_qmp != NULL && (g_strcmp0(cli_census_opt_qmp, "") == 0 ||
	                                   g_strcmp0(cli_census_opt_qmp, "unix:") == 0 ||
	                                   g_strcmp0(cli_census_opt_qmp, "libvirt:") == 0)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--qmp '%s': expected a QMP socket path, unix:PATH or libvirt:DOMAIN",
		            cli_census_opt_qmp);
		return FALSE;
	}
	if (app->opts.failed_only) {
		g_set_error_literal(
		    error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		    "--failed-only does not apply to census: it counts every guest");
		return FALSE;
	}
	if (args->len == 0 && app->opts.inventories == NULL && app->opts.connect == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "no targets or saved documents given for 'census' (name them, "
		                    "give FILE.json, --inventory FILE or --connect URI)");
		return FALSE;
	}
	cli_census = cli_census_new();
	/* the documents leave args: what remains are live targets */
	paths = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < args->len;) {
		const char *arg = g_ptr_array_index(args, i);

		if (!g_str_has_suffix(arg, ".json")) {
			i++;
			continue;
		}
		g_ptr_array_add(paths, g_ptr_array_steal_index(args, i));
	}
	return cli_census_add_documents(cli_census, paths, error);
}

/* Runs gb-get-facts on the live targets (if any) and adds what they answered. */
static gboolean cli_census_collect(CliApp *app, CliCensus *census, GError **error)
{
	/* saved documents alone need no live guest */
	if (app->args->len == 0 && app->opts.inventories == NULL && app->opts.connect == NULL)
		return TRUE;
	if (!cli_app_resolve_targets(app, error))
		return FALSE;
	cli_app_add_guests(app);
	cli_runner_run(app);
	for (guint i = 0; i < app->guests->len; i++) {
		const CliGuest *guest = g_ptr_array_index(app->guests, i);
		JsonObject *facts = NULL;

		if (guest->status == CLI_GUEST_OK &&
		    gb_json_node_get_object(guest->result, "facts", &facts, NULL)) {
			cli_census_add(census, guest->target->name, guest->target->text,
			               (const char *const *)guest->target->tags, facts);
		} else {
			g_autofree char *why =
			    g_strdup_printf("%s: %s", cli_guest_status_to_string(guest->status),
			                    guest->error != NULL ? guest->error : "no facts");

			cli_census_add_problem(census, guest->target->name, guest->target->text,
			                       why);
		}
	}
	return TRUE;
}

/* ---- the host's QEMU models (--qmp) ------------------------------------------------------ */

typedef struct {
	CliQmp *qmp;
	JsonNode *definitions;
	JsonObject *expansions;
	char **candidates;
	guint next;  /* the candidate whose expansion is asked next */
	char *error; /* what ended the conversation early */
	gboolean done;
} CliCensusQemuJob;

static void cli_census_qemu_end(CliCensusQemuJob *job, const char *what, const GError *error)
{
	if (error != NULL && job->error == NULL)
		job->error = g_strdup_printf("%s: %s", what, error->message);
	job->done = TRUE;
}

static void cli_census_qemu_expand_next(CliCensusQemuJob *job);

static void cli_census_qemu_expansion_cb(CliQmp *qmp, JsonNode *ret, const GError *error,
                                         gpointer user_data)
{
	CliCensusQemuJob *job = user_data;
	const char *name = job->candidates[job->next - 1];

	/* a model QEMU refuses to expand is left out (and named); anything else ends it all */
	if (error != NULL && !g_error_matches(error, GB_ERROR, GB_ERROR_REMOTE)) {
		g_autofree char *what = g_strdup_printf("query-cpu-model-expansion of %s", name);

		cli_census_qemu_end(job, what, error);
		return;
	}
	if (ret != NULL)
		json_object_set_member(job->expansions, name, json_node_copy(ret));
	cli_census_qemu_expand_next(job);
}

static void cli_census_qemu_expand_next(CliCensusQemuJob *job)
{
	g_autoptr(JsonObject) args = NULL;
	g_autoptr(JsonObject) model = NULL;

	if (job->candidates[job->next] == NULL) {
		job->done = TRUE;
		return;
	}
	args = json_object_new();
	model = json_object_new();
	json_object_set_string_member(model, "name", job->candidates[job->next++]);
	json_object_set_string_member(args, "type", "static");
	json_object_set_object_member(args, "model", g_steal_pointer(&model));
	cli_qmp_call(job->qmp, "query-cpu-model-expansion", args, cli_census_qemu_expansion_cb,
	             job);
}

static void cli_census_qemu_definitions_cb(CliQmp *qmp, JsonNode *ret, const GError *error,
                                           gpointer user_data)
{
	CliCensusQemuJob *job = user_data;
	g_autoptr(GError) local_error = NULL;

	if (error != NULL) {
		cli_census_qemu_end(job, "query-cpu-definitions", error);
		return;
	}
	job->definitions = json_node_copy(ret);
	job->candidates = cli_census_qemu_candidates(ret, &local_error);
	if (job->candidates == NULL) {
		cli_census_qemu_end(job, "query-cpu-definitions", local_error);
		return;
	}
	cli_census_qemu_expand_next(job);
}

static void cli_census_qemu_open_cb(CliQmp *qmp, const GError *error, gpointer user_data)
{
	CliCensusQemuJob *job = user_data;

	if (error != NULL) {
		cli_census_qemu_end(job, "cannot open the monitor", error);
		return;
	}
	cli_qmp_call(qmp, "query-cpu-definitions", NULL, cli_census_qemu_definitions_cb, job);
}

/* Asks the QEMU of --qmp for its CPU models and hands them to the census. */
static void cli_census_ask_qemu(CliApp *app, CliCensus *census)
{
	CliCensusQemuJob job = { 0 };
	const char *uri = app->opts.connect != NULL ? app->opts.connect[0] : NULL;

	job.expansions = json_object_new();
	job.qmp = cli_qmp_open_full(cli_census_opt_qmp, uri, app->context, app->opts.timeout,
	                            cli_census_qemu_open_cb, &job);
	while (!job.done && app->signal_received == 0)
		g_main_context_iteration(app->context, TRUE);
	cli_qmp_close(job.qmp);
	if (job.error != NULL) {
		g_autofree char *why =
		    g_strdup_printf("--qmp %s: %s", cli_census_opt_qmp, job.error);

		cli_census_set_qemu_error(census, why);
	} else if (job.done) {
		cli_census_set_qemu(census, job.definitions, job.expansions);
	} else {
		cli_census_set_qemu_error(census, "interrupted");
	}
	g_clear_pointer(&job.definitions, json_node_unref);
	json_object_unref(job.expansions);
	g_strfreev(job.candidates);
	g_free(job.error);
}

/* ---- rendering -------------------------------------------------------------------------- */

static char *cli_census_level(guint level)
{
	return cli_census_level_name(level);
}

/* "a, b, c, ... (N more)": names of guests, at most max of them (0: all). */
static char *cli_census_names(GPtrArray *guests, guint max)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < guests->len && (max == 0 || i < max); i++) {
		const CliCensusGuest *g = g_ptr_array_index(guests, i);

		g_string_append_printf(out, "%s%s", i > 0 ? ", " : "", g->name);
	}
	if (max != 0 && guests->len > max)
		g_string_append_printf(out, ", ... (%u more)", guests->len - max);
	return g_string_free(out, FALSE);
}

static char *cli_census_flag_list(char **flags)
{
	return flags[0] != NULL ? g_strjoinv(" ", flags) : g_strdup("(none)");
}

/* The QEMU model line under a baseline; nothing without --qmp. */
static void cli_census_table_qemu(const CliCensus *c, const CliCensusScope *s, GString *out)
{
	g_autofree char *beyond = NULL;

	if (c->qemu_models == NULL || c->qemu_models->len == 0)
		return;
	if (s->qemu_model == NULL) {
		g_string_append_printf(out,
		                       "  no named QEMU CPU model of this host covers it (%u "
		                       "models asked)\n",
		                       c->qemu_models->len);
		return;
	}
	g_string_append(out, "  QEMU CPU model covering it: ");
	cli_escape_append(out, s->qemu_model);
	beyond = g_strjoinv(" ", s->qemu_beyond);
	if (s->qemu_beyond[0] != NULL) {
		g_string_append(out, ", and beyond it: ");
		cli_escape_append(out, beyond);
	}
	g_string_append_c(out, '\n');
}

static GString *cli_census_render_table(const CliCensus *c, gboolean color)
{
	GString *out = g_string_new(NULL);
	g_autoptr(CliTable) table = cli_table_new("GROUP", "GUESTS", "MODEL", "ISA", "HYPERVISOR",
	                                          "FLAGS", "LACKS", "NAMES", NULL);

	cli_table_set_column_kind(table, 1, CLI_COLUMN_NUMBER);
	cli_table_set_column_kind(table, 5, CLI_COLUMN_NUMBER);
	for (guint i = 0; i < c->groups->len; i++) {
		const CliCensusGroup *g = g_ptr_array_index(c->groups, i);
		g_autofree char *id = g_strdup_printf("%u", i + 1);
		g_autofree char *n = g_strdup_printf("%u", g->guests->len);
		g_autofree char *level = cli_census_level(g->isa_level);
		g_autofree char *n_flags = g_strdup_printf("%u", g_strv_length(g->flags));
		g_autofree char *lacks = cli_census_flag_list(g->lacks);
		g_autofree char *names = cli_census_names(g->guests, 5);

		cli_table_add_row(table, id, n, g->model, level, g->hypervisor, n_flags, lacks,
		                  names, NULL);
	}
	if (c->groups->len > 0)
		cli_table_render(table, color, out);
	g_string_append_printf(out, "\n%u guest(s) counted, %u group(s), %u not counted\n",
	                       c->n_counted, c->groups->len, c->n_problems);
	for (guint i = 0; i < c->scopes->len; i++) {
		const CliCensusScope *s = g_ptr_array_index(c->scopes, i);
		g_autofree char *flags = cli_census_flag_list(s->baseline);

		if (s->n_guests == 0)
			continue;
		g_string_append(out, "baseline of ");
		if (s->tag != NULL) {
			g_string_append(out, "tag ");
			cli_escape_append(out, s->tag);
			if (s->arch != NULL)
				g_string_append_printf(out, " (%s)", s->arch);
		} else if (s->arch != NULL) {
			g_string_append_printf(out, "the fleet's %s guests", s->arch);
		} else {
			g_string_append(out, "the fleet");
		}
		g_string_append_printf(out, " (%u guests, %u flags): ", s->n_guests,
		                       g_strv_length(s->baseline));
		cli_escape_append(out, flags);
		g_string_append_c(out, '\n');
		cli_census_table_qemu(c, s, out);
	}
	if (c->qemu_error != NULL) {
		g_string_append(out, "QEMU CPU models: ");
		cli_escape_append(out, c->qemu_error);
		g_string_append_c(out, '\n');
	}
	/* levels of different architectures are not comparable: one line each */
	for (guint i = 0; i < c->archs->len; i++) {
		const CliCensusArch *a = g_ptr_array_index(c->archs, i);
		g_autofree char *names = cli_census_names(a->lowest, 20);
		g_autofree char *level = cli_census_level(a->lowest_level);

		g_string_append(out, "lowest ISA level");
		if (c->archs->len > 1)
			g_string_append_printf(out, " of the %s guests", a->arch);
		if (a->lowest->len == 0) {
			/* Armv8.6 and Armv9.0 guests meet at Armv8.5, which neither holds */
			g_string_append_printf(out, ": %s, reached by every guest, held by none\n",
			                       level);
			continue;
		}
		g_string_append_printf(out, ": %s, held by %u guest(s): ", level, a->lowest->len);
		cli_escape_append(out, names);
		g_string_append_c(out, '\n');
	}
	for (guint pass = 0; pass < 3; pass++) {
		static const char *const titles[] = { "outliers", "required and lacking",
			                              "not counted" };
		gboolean first = TRUE;

		for (guint i = 0; i < c->guests->len; i++) {
			const CliCensusGuest *g = g_ptr_array_index(c->guests, i);
			const char *what = pass == 0   ? g->outlier
			                   : pass == 1 ? g->require
			                               : g->problem;

			if (what == NULL)
				continue;
			if (first)
				g_string_append_printf(out, "%s:\n", titles[pass]);
			first = FALSE;
			g_string_append(out, "  ");
			cli_escape_append(out, g->name);
			if (pass == 2) {
				g_string_append(out, " (");
				cli_escape_append(out, g->source);
				g_string_append(out, ")");
			}
			g_string_append(out, ": ");
			cli_escape_append(out, what);
			g_string_append_c(out, '\n');
		}
	}
	return out;
}

/* member NULL: the array alone, after a member name already set */
static void cli_census_json_strv(JsonBuilder *b, const char *member, char **strv)
{
	if (member != NULL)
		json_builder_set_member_name(b, member);
	json_builder_begin_array(b);
	for (guint i = 0; strv != NULL && strv[i] != NULL; i++)
		json_builder_add_string_value(b, strv[i]);
	json_builder_end_array(b);
}

static void cli_census_json_names(JsonBuilder *b, const char *member, GPtrArray *guests)
{
	json_builder_set_member_name(b, member);
	json_builder_begin_array(b);
	for (guint i = 0; i < guests->len; i++)
		json_builder_add_string_value(
		    b, ((CliCensusGuest *)g_ptr_array_index(guests, i))->name);
	json_builder_end_array(b);
}

static void cli_census_json_member(JsonBuilder *b, const char *member, const char *value)
{
	json_builder_set_member_name(b, member);
	if (value != NULL)
		json_builder_add_string_value(b, value);
	else
		json_builder_add_null_value(b);
}

static GString *cli_census_render_json(const CliCensus *c)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	g_autoptr(JsonNode) root = NULL;

	json_builder_begin_object(b);
	cli_census_json_member(b, "guestbench", GB_VERSION);
	cli_census_json_member(b, "command", "census");
	json_builder_set_member_name(b, "guests");
	json_builder_begin_array(b);
	for (guint i = 0; i < c->guests->len; i++) {
		const CliCensusGuest *g = g_ptr_array_index(c->guests, i);
		g_autofree char *level = g->problem == NULL ? cli_census_level(g->isa_level) : NULL;

		json_builder_begin_object(b);
		cli_census_json_member(b, "name", g->name);
		cli_census_json_member(b, "source", g->source);
		cli_census_json_strv(b, "tags", g->tags);
		cli_census_json_member(b, "problem", g->problem);
		cli_census_json_member(b, "model", g->model);
		cli_census_json_member(b, "architecture", g->arch);
		cli_census_json_member(b, "isa_level", level);
		cli_census_json_member(b, "hypervisor", g->hypervisor);
		json_builder_set_member_name(b, "group");
		if (g->problem == NULL)
			json_builder_add_int_value(b, g->group + 1);
		else
			json_builder_add_null_value(b);
		cli_census_json_member(b, "outlier", g->outlier);
		cli_census_json_member(b, "require", g->require);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_set_member_name(b, "groups");
	json_builder_begin_array(b);
	for (guint i = 0; i < c->groups->len; i++) {
		const CliCensusGroup *g = g_ptr_array_index(c->groups, i);
		g_autofree char *level = cli_census_level(g->isa_level);

		json_builder_begin_object(b);
		json_builder_set_member_name(b, "group");
		json_builder_add_int_value(b, i + 1);
		json_builder_set_member_name(b, "count");
		json_builder_add_int_value(b, g->guests->len);
		cli_census_json_member(b, "model", g->model);
		cli_census_json_member(b, "architecture", g->arch);
		cli_census_json_member(b, "isa_level", level);
		cli_census_json_member(b, "hypervisor", g->hypervisor);
		cli_census_json_strv(b, "flags", g->flags);
		cli_census_json_strv(b, "lacks", g->lacks);
		cli_census_json_names(b, "guests", g->guests);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_set_member_name(b, "baselines");
	json_builder_begin_array(b);
	for (guint i = 0; i < c->scopes->len; i++) {
		const CliCensusScope *s = g_ptr_array_index(c->scopes, i);

		json_builder_begin_object(b);
		cli_census_json_member(b, "tag", s->tag);
		cli_census_json_member(b, "architecture", s->arch);
		json_builder_set_member_name(b, "count");
		json_builder_add_int_value(b, s->n_guests);
		cli_census_json_strv(b, "flags", s->baseline);
		if (c->qemu_models != NULL) {
			cli_census_json_member(b, "qemu_model", s->qemu_model);
			json_builder_set_member_name(b, "qemu_beyond");
			if (s->qemu_beyond != NULL)
				cli_census_json_strv(b, NULL, s->qemu_beyond);
			else
				json_builder_add_null_value(b);
		}
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_set_member_name(b, "qemu");
	if (c->qemu_models != NULL) {
		json_builder_begin_object(b);
		cli_census_json_member(b, "qmp", cli_census_opt_qmp);
		json_builder_set_member_name(b, "models");
		json_builder_add_int_value(b, c->qemu_models->len);
		cli_census_json_member(b, "error", c->qemu_error);
		json_builder_end_object(b);
	} else {
		json_builder_add_null_value(b);
	}
	cli_census_json_strv(b, "union", c->all_flags);
	json_builder_set_member_name(b, "architectures");
	json_builder_begin_array(b);
	for (guint i = 0; i < c->archs->len; i++) {
		const CliCensusArch *a = g_ptr_array_index(c->archs, i);
		g_autofree char *level = cli_census_level(a->lowest_level);

		json_builder_begin_object(b);
		cli_census_json_member(b, "architecture", a->arch);
		json_builder_set_member_name(b, "count");
		json_builder_add_int_value(b, a->n_guests);
		cli_census_json_strv(b, "baseline", a->baseline);
		cli_census_json_strv(b, "union", a->all_flags);
		json_builder_set_member_name(b, "lowest");
		json_builder_begin_object(b);
		cli_census_json_member(b, "isa_level", level);
		cli_census_json_names(b, "guests", a->lowest);
		json_builder_end_object(b);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_set_member_name(b, "lowest");
	if (c->lowest_level != 0) {
		g_autofree char *level = cli_census_level(c->lowest_level);

		json_builder_begin_object(b);
		cli_census_json_member(b, "isa_level", level);
		cli_census_json_names(b, "guests", c->lowest);
		json_builder_end_object(b);
	} else {
		json_builder_add_null_value(b);
	}
	json_builder_end_object(b);
	root = json_builder_get_root(b);
	return cli_output_json_document(root);
}

/* The scope a guest's migration pool is: its first tag's with --by tag, else the fleet's. */
static const CliCensusScope *cli_census_scope_of(const CliCensus *c, const CliCensusGuest *g)
{
	for (guint i = 1; g->tags[0] != NULL && i < c->scopes->len; i++) {
		const CliCensusScope *s = g_ptr_array_index(c->scopes, i);

		if (g_strcmp0(s->tag, g->tags[0]) == 0)
			return s;
	}
	return c->scopes->len > 0 ? g_ptr_array_index(c->scopes, 0) : NULL;
}

static GString *cli_census_render_csv(const CliCensus *c)
{
	GString *out = g_string_new("guest,source,group,model,isa_level,hypervisor,outlier,"
	                            "require,problem,qemu_model\n");

	for (guint i = 0; i < c->guests->len; i++) {
		const CliCensusGuest *g = g_ptr_array_index(c->guests, i);
		g_autofree char *level = g->problem == NULL ? cli_census_level(g->isa_level) : NULL;
		g_autofree char *group =
		    g->problem == NULL ? g_strdup_printf("%u", g->group + 1) : NULL;
		const CliCensusScope *scope = g->problem == NULL ? cli_census_scope_of(c, g) : NULL;
		const char *fields[] = { g->name,    g->source,
			                 group,      g->model,
			                 level,      g->hypervisor,
			                 g->outlier, g->require,
			                 g->problem, scope != NULL ? scope->qemu_model : NULL };

		for (guint f = 0; f < G_N_ELEMENTS(fields); f++) {
			if (f > 0)
				g_string_append_c(out, ',');
			cli_csv_append_text(out, fields[f]);
		}
		g_string_append_c(out, '\n');
	}
	return out;
}

static GString *cli_census_render_prom(const CliCensus *c)
{
	GString *out = g_string_new(NULL);
	g_autoptr(GHashTable) models = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GPtrArray) order = g_ptr_array_new();

	cli_prom_family(out, "guestbench_cpu_isa_level", "gauge",
	                "A guest's x86-64 ISA level (1..4)");
	for (guint i = 0; i < c->guests->len; i++) {
		const CliCensusGuest *g = g_ptr_array_index(c->guests, i);
		guint n;

		if (g->problem != NULL)
			continue;
		if (g_str_equal(g->arch, "x86_64"))
			cli_prom_sample(out, "guestbench_cpu_isa_level", g->isa_level, "guest",
			                g->name, "model", g->model, NULL);
		n = GPOINTER_TO_UINT(g_hash_table_lookup(models, g->model));
		if (n == 0)
			g_ptr_array_add(order, g->model);
		g_hash_table_insert(models, g->model, GUINT_TO_POINTER(n + 1));
	}
	cli_prom_family(out, "guestbench_cpu_arm_isa_level", "gauge",
	                "An aarch64 guest's Arm A-profile level as major.minor (8.0..9.3)");
	for (guint i = 0; i < c->guests->len; i++) {
		const CliCensusGuest *g = g_ptr_array_index(c->guests, i);

		if (g->problem == NULL && g_str_equal(g->arch, "aarch64"))
			cli_prom_sample(out, "guestbench_cpu_arm_isa_level", g->isa_level / 10.0,
			                "guest", g->name, "model", g->model, NULL);
	}
	cli_prom_family(out, "guestbench_cpu_model_guests", "gauge",
	                "How many guests run each CPU model");
	for (guint i = 0; i < order->len; i++) {
		const char *model = g_ptr_array_index(order, i);

		cli_prom_sample(out, "guestbench_cpu_model_guests",
		                GPOINTER_TO_UINT(g_hash_table_lookup(models, model)), "model",
		                model, NULL);
	}
	cli_prom_family(out, "guestbench_cpu_outlier", "gauge",
	                "1 for a guest whose model or flags differ from its group's majority");
	for (guint i = 0; i < c->guests->len; i++) {
		const CliCensusGuest *g = g_ptr_array_index(c->guests, i);

		if (g->problem == NULL)
			cli_prom_sample(out, "guestbench_cpu_outlier", g->outlier != NULL, "guest",
			                g->name, NULL);
	}
	return out;
}

static int cli_census_run(CliApp *app, GError **error)
{
	g_autoptr(CliCensus) census = g_steal_pointer(&cli_census);
	g_autoptr(GString) doc = NULL;

	/* a Proxmox VE node or cluster: the CPU type every node can run */
	if (app->opts.connect != NULL && cli_pve_is_uri(app->opts.connect[0])) {
		if (g_strv_length(app->opts.connect) > 1 || app->args->len > 0 ||
		    app->opts.format != CLI_FORMAT_TABLE) {
			g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			                    "census --connect pve:... takes no other connection or "
			                    "document and writes the table only");
			return CLI_EXIT_USAGE;
		}
		return cli_census_pve_run(app, app->opts.connect[0], error);
	}

	if (!cli_census_collect(app, census, error))
		return CLI_EXIT_USAGE;
	if (cli_census_opt_qmp != NULL && app->signal_received == 0)
		cli_census_ask_qemu(app, census);
	cli_census_finish(census, cli_census_by_tag, &cli_census_require);
	switch (app->opts.format) {
	case CLI_FORMAT_JSON:
		doc = cli_census_render_json(census);
		break;
	case CLI_FORMAT_CSV:
		doc = cli_census_render_csv(census);
		break;
	case CLI_FORMAT_PROM:
		doc = cli_census_render_prom(census);
		cli_prom_drop_duplicates(doc);
		break;
	default:
		doc = cli_census_render_table(census, cli_app_use_color(app));
		break;
	}
	if (!cli_app_write_doc(app, doc, error))
		return CLI_EXIT_USAGE;
	if (app->signal_received != 0)
		return 128 + app->signal_received;
	if (census->n_problems > 0 || census->qemu_error != NULL)
		return CLI_EXIT_GUEST;
	return census->n_require_failed > 0 ? CLI_EXIT_FINDING : CLI_EXIT_OK;
}

static const char *const cli_census_by_words[] = { "tag", "fleet", NULL };

static const CliCompletion cli_census_completions[] = {
	{ "by", CLI_COMPLETE_WORD, cli_census_by_words },
	{ "require-level", CLI_COMPLETE_LIST, cli_require_level_words },
	{ NULL, CLI_COMPLETE_TARGET, NULL },
	{ NULL },
};

static const GOptionEntry cli_census_entries[] = {
	{ "by", 0, 0, G_OPTION_ARG_STRING, &cli_census_opt_by,
	  "Outliers and baselines per inventory tag (tag) or over the whole fleet (fleet, the "
	  "default)",
	  "tag|fleet" },
	{ "require-level", 0, 0, G_OPTION_ARG_STRING, &cli_census_opt_require_level,
	  "Exit 1 when a guest is below this ISA level: x86-64-v1..x86-64-v4 for x86 guests, "
	  "armv8-a..armv9.3-a for aarch64 guests (comma list, one of each)",
	  "LEVEL[,LEVEL]" },
	{ "require-flags", 0, 0, G_OPTION_ARG_STRING, &cli_census_opt_require_flags,
	  "Exit 1 when a guest lacks one of these /proc/cpuinfo flags (comma list)", "LIST" },
	{ "qmp", 0, 0, G_OPTION_ARG_FILENAME, &cli_census_opt_qmp,
	  "Name the QEMU CPU model covering each baseline, asking this QEMU monitor (QMP socket, "
	  "unix:PATH or libvirt:DOMAIN)",
	  "PATH" },
	{ NULL }
};

const CliCommand cli_cmd_census = {
	.name = "census",
	.parameter_string = "census TARGET|FILE.json...",
	.summary = "The fleet's CPU models: groups, baseline, outliers, lowest ISA level",
	.description = CLI_CENSUS_DESCRIPTION,
	.entries = cli_census_entries,
	.completions = cli_census_completions,
	.common_options = CLI_OPTIONS_TARGETS,
	.prepare = cli_census_prepare,
	.start = cli_facts_start,
	.formats = CLI_FORMAT_BIT(CLI_FORMAT_TABLE) | CLI_FORMAT_BIT(CLI_FORMAT_JSON) |
	           CLI_FORMAT_BIT(CLI_FORMAT_CSV) | CLI_FORMAT_BIT(CLI_FORMAT_PROM),
	.run = cli_census_run,
};
