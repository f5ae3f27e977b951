/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "guestbench-protocol.h"

#include "commands/commands.h"
#include "render/csv.h"
#include "render/prom.h"

static void cli_ping_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
                              gpointer user_data)
{
	CliGuest *guest = user_data;
	const gint64 *sent_us = cli_guest_get_data(guest);
	g_autoptr(JsonBuilder) builder = NULL;

	if (error != NULL) {
		cli_guest_finish(guest, NULL, error);
		return;
	}
	builder = json_builder_new();
	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "rtt_ms");
	json_builder_add_double_value(builder, (g_get_monotonic_time() - *sent_us) / 1000.0);
	json_builder_end_object(builder);
	cli_guest_finish(guest, json_builder_get_root(builder), NULL);
}

static void cli_ping_start(CliGuest *guest, CliSession *session)
{
	gint64 *sent_us = g_new(gint64, 1);

	/* the round trip of guest-ping alone: connect and sync are not part of it */
	*sent_us = g_get_monotonic_time();
	cli_guest_set_data(guest, sent_us, g_free);
	cli_session_call(session, "guest-ping", NULL, cli_ping_reply_cb, guest);
}

static char *cli_ping_describe(const CliResult *guest)
{
	JsonObject *obj = NULL;
	double rtt = 0;

	if (!gb_json_node_get_object(guest->result, "result", &obj, NULL) ||
	    !gb_json_get_double(obj, "rtt_ms", GB_JSON_REQUIRED, 0, G_MAXDOUBLE, &rtt, NULL))
		return g_strdup("");
	return g_strdup_printf("%.3f ms", rtt);
}

/* rtt_ms of an ok ping guest, from our own result. */
static gboolean cli_ping_get_rtt(const CliResult *guest, double *rtt)
{
	JsonObject *obj = NULL;

	return guest->status == CLI_GUEST_OK &&
	       gb_json_node_get_object(guest->result, "result", &obj, NULL) &&
	       gb_json_get_double(obj, "rtt_ms", GB_JSON_REQUIRED, 0, G_MAXDOUBLE, rtt, NULL);
}

static GString *cli_ping_render_csv(const CliResults *results)
{
	GString *out = g_string_new("guest,target,status,rtt_ms,error\n");

	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		g_autofree char *rtt_text = NULL;
		double rtt = 0;

		if (cli_ping_get_rtt(guest, &rtt))
			rtt_text = g_strdup_printf("%.3f", rtt);
		cli_csv_append_field(out, guest->name);
		g_string_append_c(out, ',');
		cli_csv_append_field(out, guest->target);
		g_string_append_printf(out, ",%s,%s,", cli_guest_status_to_string(guest->status),
		                       rtt_text != NULL ? rtt_text : "");
		cli_csv_append_text(out, guest->error);
		g_string_append_c(out, '\n');
	}
	return out;
}

static GString *cli_ping_render_prom(const CliResults *results)
{
	GString *out = g_string_new(NULL);

	cli_prom_append_up(out, results);
	cli_prom_family(out, "guestbench_ping_rtt_seconds", "gauge",
	                "Round-trip time of guest-ping (guests that answered).");
	for (guint i = 0; i < results->guests->len; i++) {
		const CliResult *guest = g_ptr_array_index(results->guests, i);
		double rtt = 0;

		if (cli_ping_get_rtt(guest, &rtt))
			cli_prom_sample(out, "guestbench_ping_rtt_seconds", rtt / 1000.0, "guest",
			                guest->name, "target", guest->target, NULL);
	}
	return out;
}

const CliCommand cli_cmd_ping = {
	.name = "ping",
	.parameter_string = "ping TARGET...",
	.summary = "Check that each guest's agent answers; round-trip time in ms",
	.start = cli_ping_start,
	.describe = cli_ping_describe,
	.render_csv = cli_ping_render_csv,
	.render_prom = cli_ping_render_prom,
};
