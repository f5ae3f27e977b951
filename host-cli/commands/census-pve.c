/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "guestbench-protocol.h"

#include "commands/census-pve.h"
#include "fleet/pve.h"
#include "fleet/target.h"
#include "render/escape.h"

/*
 * census --connect pve:///cluster (or pve+ssh://NODE/, pve:///): the CPU type
 * every node can run. Each node runs 'audit --connect pve:///' itself (over
 * ssh, as --hosts does; this very program, with the same options, for
 * pve:///) and the merged document gives, per guest, its node, its config's
 * CPU type and what the node's CPU runs (the host view's pve.node_cpu_type,
 * read by the node from its /proc/cpuinfo). The cluster runs the lowest.
 */

/* The rank of a VM's resolved type (the "pve" view member): by its level and aes. */
static guint cli_census_pve_vm_rank(JsonObject *pve)
{
	gint64 level = 0;
	gboolean aes = FALSE;

	gb_json_get_int(pve, "cpu_level", GB_JSON_OPTIONAL, 0, 4, &level, NULL);
	gb_json_get_bool(pve, "cpu_aes", GB_JSON_OPTIONAL, &aes, NULL);
	if (level >= 4)
		return 4;
	if (level == 3)
		return 3;
	if (level == 2)
		return aes ? 2 : 1;
	return 0;
}

typedef struct {
	char *name;
	char *digest; /* the node's CPU flags, hashed; NULL until a VM's host view says */
	guint rank;
	gboolean pclmulqdq;
	guint n_vms;
	GString *failed; /* why this node gave nothing */
} CliCensusNode;

static void cli_census_node_free(CliCensusNode *node)
{
	g_free(node->name);
	g_free(node->digest);
	g_string_free(node->failed, TRUE);
	g_free(node);
}

static CliCensusNode *cli_census_pve_node(GPtrArray *nodes, const char *name)
{
	CliCensusNode *node;

	for (guint i = 0; i < nodes->len; i++) {
		node = g_ptr_array_index(nodes, i);
		if (g_strcmp0(node->name, name) == 0)
			return node;
	}
	node = g_new0(CliCensusNode, 1);
	node->name = g_strdup(name);
	node->failed = g_string_new(NULL);
	g_ptr_array_add(nodes, node);
	return node;
}

typedef struct {
	char *node;
	gint64 vmid;
	char *type;
	guint rank;
	gboolean host;
} CliCensusVm;

static void cli_census_vm_free(CliCensusVm *vm)
{
	g_free(vm->node);
	g_free(vm->type);
	g_free(vm);
}

/* Runs this program's audit on the nodes; the merged (or single) JSON document. */
static JsonNode *cli_census_pve_audit(CliApp *app, const char *uri, GError **error)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GSubprocess) proc = NULL;
	g_autofree char *out = NULL;
	g_autofree char *timeout = g_strdup_printf("%g", app->opts.timeout);

	g_ptr_array_add(argv, g_file_read_link("/proc/self/exe", NULL));
	if (argv->pdata[0] == NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_IO, "cannot find this program");
		return NULL;
	}
	if (cli_pve_is_remote_uri(uri)) {
		g_auto(GStrv) hosts = cli_pve_remote_hosts(uri, error);
		if (hosts == NULL)
			return NULL;
		g_ptr_array_add(argv, g_strdup("--hosts"));
		g_ptr_array_add(argv, g_strjoinv(",", hosts));
	}
	g_ptr_array_add(argv, g_strdup("--format"));
	g_ptr_array_add(argv, g_strdup("json"));
	g_ptr_array_add(argv, g_strdup("--timeout"));
	g_ptr_array_add(argv, g_strdup(timeout));
	g_ptr_array_add(argv, g_strdup("-q"));
	if (app->opts.qga_agent != NULL) {
		g_ptr_array_add(argv, g_strdup("--qga-agent"));
		g_ptr_array_add(argv, g_strdup(app->opts.qga_agent));
	}
	g_ptr_array_add(argv, g_strdup("audit"));
	g_ptr_array_add(argv, g_strdup("--connect"));
	g_ptr_array_add(argv, g_strdup("pve:///"));
	g_ptr_array_add(argv, NULL);
	proc = g_subprocess_newv((const char *const *)argv->pdata,
	                         G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
	                         error);
	if (proc == NULL || !g_subprocess_communicate_utf8(proc, NULL, NULL, &out, NULL, error))
		return NULL;
	return gb_json_parse(out != NULL ? out : "", out != NULL ? strlen(out) : 0, error);
}

int cli_census_pve_run(CliApp *app, const char *uri, GError **error)
{
	g_autoptr(JsonNode) root = cli_census_pve_audit(app, uri, error);
	g_autoptr(GPtrArray) nodes =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_census_node_free);
	g_autoptr(GPtrArray) vms =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_census_vm_free);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *local = cli_pve_local_node();
	JsonObject *doc = NULL;
	JsonArray *guests = NULL;
	guint cluster = G_MAXUINT;
	gboolean all_clmul = TRUE, mixed = FALSE, any_unknown = FALSE;
	const char *first_digest = NULL;

	/* a bad URI or .members: nothing was run */
	if (root == NULL && error != NULL && *error != NULL &&
	    g_error_matches(*error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT))
		return CLI_EXIT_USAGE;
	if (root == NULL || !gb_json_node_get_object(root, "document", &doc, error) ||
	    !gb_json_get_array(doc, "guests", GB_JSON_REQUIRED, &guests, error)) {
		g_prefix_error(error, "census %s: the nodes' audit: ", uri);
		return CLI_EXIT_GUEST;
	}
	for (guint i = 0; i < json_array_get_length(guests); i++) {
		JsonObject *g = NULL, *result = NULL, *view = NULL, *pve = NULL;
		const char *host = NULL, *error_text = NULL;
		CliCensusNode *node;

		if (!gb_json_node_get_object(json_array_get_element(guests, i), "guest", &g, NULL))
			continue;
		gb_json_get_string(g, "host", GB_JSON_OPTIONAL, &host, NULL);
		node = cli_census_pve_node(nodes, host != NULL ? host : local);
		gb_json_get_string(g, "error", GB_JSON_OPTIONAL, &error_text, NULL);
		if (!gb_json_get_object(g, "result", GB_JSON_OPTIONAL, &result, NULL) ||
		    result == NULL ||
		    !gb_json_get_object(result, "host", GB_JSON_OPTIONAL, &view, NULL) ||
		    view == NULL) {
			if (error_text != NULL && node->failed->len == 0)
				g_string_append(node->failed, error_text);
			continue;
		}
		if (gb_json_get_object(view, "pve", GB_JSON_OPTIONAL, &pve, NULL) && pve != NULL) {
			CliCensusVm *vm = g_new0(CliCensusVm, 1);
			const char *node_type = NULL, *digest = NULL;
			const char *type = NULL;
			gboolean is_host = FALSE;

			/* the node's CPU, as the node itself read it for this VM's host view */
			gb_json_get_string(pve, "node_cpu_type", GB_JSON_OPTIONAL, &node_type,
			                   NULL);
			gb_json_get_string(pve, "node_cpu_digest", GB_JSON_OPTIONAL, &digest, NULL);
			if (node_type != NULL && node->digest == NULL) {
				node->rank = cli_pve_cpu_type_rank(node_type);
				node->digest = g_strdup(digest != NULL ? digest : "");
				gb_json_get_bool(pve, "node_pclmulqdq", GB_JSON_OPTIONAL,
				                 &node->pclmulqdq, NULL);
			}

			gb_json_get_int(pve, "vmid", GB_JSON_OPTIONAL, 0, G_MAXUINT32, &vm->vmid,
			                NULL);
			gb_json_get_string(pve, "cpu_type", GB_JSON_OPTIONAL, &type, NULL);
			gb_json_get_bool(pve, "cpu_host", GB_JSON_OPTIONAL, &is_host, NULL);
			vm->node = g_strdup(node->name);
			vm->type = g_strdup(type != NULL ? type : "?");
			vm->rank = cli_census_pve_vm_rank(pve);
			vm->host = is_host;
			node->n_vms++;
			g_ptr_array_add(vms, vm);
		}
	}
	g_string_append_printf(out, "Proxmox VE %s: %u node(s)\n", uri, nodes->len);
	for (guint i = 0; i < nodes->len; i++) {
		CliCensusNode *node = g_ptr_array_index(nodes, i);
		g_autofree char *name = cli_escape_terminal(node->name);

		if (node->digest == NULL) {
			g_autofree char *why = cli_escape_terminal(
			    node->failed->len > 0 ? node->failed->str : "no VM with a host view");
			g_string_append_printf(out, "  node %-16s CPU unknown (%s)\n", name, why);
			any_unknown = TRUE;
			continue;
		}
		all_clmul = all_clmul && node->pclmulqdq;
		cluster = MIN(cluster, node->rank);
		if (first_digest == NULL)
			first_digest = node->digest;
		else if (g_strcmp0(first_digest, node->digest) != 0)
			mixed = TRUE;
		g_string_append_printf(out, "  node %-16s can run %s%s (%u VM(s) audited)\n", name,
		                       cli_pve_cpu_types[node->rank].type,
		                       node->pclmulqdq ? ", has pclmulqdq" : ", no pclmulqdq",
		                       node->n_vms);
	}
	if (cluster == G_MAXUINT) {
		g_string_append(out, "cluster-safe CPU type: unknown (no node's CPU was seen)\n");
		if (!cli_app_write_doc(app, out, error))
			return CLI_EXIT_USAGE;
		return CLI_EXIT_GUEST;
	}
	g_string_append_printf(out,
	                       "cluster-safe CPU type: %s%s (every node can run it: live "
	                       "migration works)\n",
	                       cli_pve_cpu_types[cluster].type,
	                       any_unknown ? " among the nodes seen" : "");
	if (all_clmul && cluster >= 2)
		g_string_append_printf(
		    out,
		    "  every node has pclmulqdq, which %s lacks: for AES-GCM at full speed a "
		    "custom "
		    "model, cpu-model: %s-clmul with flags %s+pclmulqdq "
		    "(guestbench audit prints the cpu-models.conf entry)\n",
		    cli_pve_cpu_types[cluster].type, cli_pve_cpu_types[cluster].type,
		    cluster >= 3 ? "+aes;...;" : "+aes;+popcnt;+pni;+sse4.1;+sse4.2;+ssse3;");
	for (guint i = 0; i < vms->len; i++) {
		CliCensusVm *vm = g_ptr_array_index(vms, i);
		g_autofree char *node = cli_escape_terminal(vm->node);
		g_autofree char *type = cli_escape_terminal(vm->type);

		if (vm->host && mixed)
			g_string_append_printf(
			    out,
			    "  VM %" G_GINT64_FORMAT " on %s: cpu %s on nodes of "
			    "different CPUs: live migration may fail; qm set %" G_GINT64_FORMAT
			    " --cpu %s\n",
			    vm->vmid, node, type, vm->vmid, cli_pve_cpu_types[cluster].type);
		else if (!vm->host && vm->rank < cluster)
			g_string_append_printf(
			    out,
			    "  VM %" G_GINT64_FORMAT " on %s: cpu %s, below what "
			    "every node runs: qm set %" G_GINT64_FORMAT " --cpu %s\n",
			    vm->vmid, node, type, vm->vmid, cli_pve_cpu_types[cluster].type);
	}
	if (!cli_app_write_doc(app, out, error))
		return CLI_EXIT_USAGE;
	return any_unknown ? CLI_EXIT_GUEST : CLI_EXIT_OK;
}
