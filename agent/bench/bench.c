/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <gio/gio.h>
#include <stdarg.h>

#include "bench.h"

/*
 * The one table of benchmarks: adding one is a new file plus a row here (and
 * in job-run.c's runners). aes is its parameters only: its run() needs
 * libcrypto, which only the job's process links. The Windows agent has the
 * benchmarks that build there: aes and mem.
 */
static const AgentBench *const agent_benches[] = {
	&agent_bench_aes_params,
#ifndef G_OS_WIN32
	&agent_bench_disk,
#endif
	&agent_bench_mem,
#ifndef G_OS_WIN32
	&agent_bench_net,
#endif
};

const AgentBench *agent_bench_lookup(const char *name)
{
	if (name == NULL)
		return NULL;
	for (guint i = 0; i < G_N_ELEMENTS(agent_benches); i++) {
		if (g_strcmp0(agent_benches[i]->name, name) == 0)
			return agent_benches[i];
	}
	return NULL;
}

gboolean agent_bench_check_cancel(AgentBenchContext *ctx, GError **error)
{
	if (agent_bench_cancelled(ctx)) {
		g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Benchmark cancelled");
		return FALSE;
	}
	return TRUE;
}

static JsonObject *agent_bench_labels_from_va(va_list args)
{
	JsonObject *labels = json_object_new();
	const char *key;

	while ((key = va_arg(args, const char *)) != NULL) {
		const char *value = va_arg(args, const char *);
		json_object_set_string_member(labels, key, value);
	}
	return labels;
}

JsonNode *agent_bench_sample_new(const char *metric, double value, const char *unit, ...)
{
	JsonObject *obj = json_object_new();
	JsonNode *node = json_node_new(JSON_NODE_OBJECT);
	va_list args;

	json_object_set_string_member(obj, "metric", metric);
	json_object_set_double_member(obj, "value", value);
	json_object_set_string_member(obj, "unit", unit);
	va_start(args, unit);
	json_object_set_object_member(obj, "labels", agent_bench_labels_from_va(args));
	va_end(args);
	json_node_take_object(node, obj);
	return node;
}

JsonNode *agent_bench_sample_new_unavailable(const char *metric, const char *unit,
                                             const char *reason, ...)
{
	JsonObject *obj = json_object_new();
	JsonNode *node = json_node_new(JSON_NODE_OBJECT);
	va_list args;

	json_object_set_string_member(obj, "metric", metric);
	json_object_set_null_member(obj, "value");
	json_object_set_string_member(obj, "unit", unit);
	va_start(args, reason);
	json_object_set_object_member(obj, "labels", agent_bench_labels_from_va(args));
	va_end(args);
	json_object_set_string_member(obj, "unavailable", reason);
	json_node_take_object(node, obj);
	return node;
}
