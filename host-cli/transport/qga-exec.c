/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "guestbench-protocol.h"

#include "transport/qga-exec.h"

/* How much of the agent's stderr an error quotes. */
#define CLI_QGA_STDERR_EXCERPT 300

const char *cli_qga_get_agent_path(const CliAddress *address)
{
	if (address != NULL && address->agent_path != NULL)
		return address->agent_path;
	return GB_AGENT_DEFAULT_BINARY;
}

gboolean cli_qga_check_agent_path(const char *path, GError **error)
{
	if (path == NULL || path[0] == '\0') {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "--qga-agent needs the agent's path in the guest");
		return FALSE;
	}
	/* guest-exec does not search PATH the way a shell does: say so now */
	if (!g_path_is_absolute(path)) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--qga-agent '%s' is not an absolute path", path);
		return FALSE;
	}
	if (!g_utf8_validate(path, -1, NULL)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "--qga-agent: not valid UTF-8");
		return FALSE;
	}
	return TRUE;
}

gboolean cli_qga_check_info(JsonNode *info, GError **error)
{
	static const char *const needed[] = { "guest-exec", "guest-exec-status" };
	JsonObject *obj = NULL;
	JsonArray *commands = NULL;
	gboolean found[G_N_ELEMENTS(needed)] = { FALSE };
	gboolean enabled[G_N_ELEMENTS(needed)] = { FALSE };

	if (!gb_json_node_get_object(info, "guest-info reply", &obj, error) ||
	    !gb_json_get_array(obj, "supported_commands", GB_JSON_REQUIRED, &commands, error)) {
		g_prefix_error(error, "invalid guest-info reply: ");
		return FALSE;
	}
	for (guint i = 0; i < json_array_get_length(commands); i++) {
		JsonObject *cmd = NULL;
		const char *name = NULL;
		gboolean on = FALSE;

		if (!gb_json_node_get_object(json_array_get_element(commands, i),
		                             "supported_commands[]", &cmd, error) ||
		    !gb_json_get_string(cmd, "name", GB_JSON_REQUIRED, &name, error) ||
		    !gb_json_get_bool(cmd, "enabled", GB_JSON_REQUIRED, &on, error)) {
			g_prefix_error(error, "invalid guest-info reply: ");
			return FALSE;
		}
		for (guint j = 0; j < G_N_ELEMENTS(needed); j++) {
			if (g_strcmp0(name, needed[j]) == 0) {
				found[j] = TRUE;
				enabled[j] = on;
			}
		}
	}
	for (guint j = 0; j < G_N_ELEMENTS(needed); j++) {
		if (!found[j]) {
			g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
			            "qemu-ga does not offer %s (too old, or built without it): "
			            "a qga: target needs guest-exec and guest-exec-status",
			            needed[j]);
			return FALSE;
		}
	}
	for (guint j = 0; j < G_N_ELEMENTS(needed); j++) {
		if (!enabled[j]) {
			g_set_error(error, GB_ERROR, GB_ERROR_COMMAND_DISABLED,
			            "qemu-ga has %s disabled: a qga: target needs guest-exec and "
			            "guest-exec-status; enable them in the guest by removing them "
			            "from qemu-ga's --block-rpcs (config BLOCK_RPCS, e.g. in "
			            "/etc/sysconfig/qemu-ga) or adding them to its --allow-rpcs",
			            needed[j]);
			return FALSE;
		}
	}
	return TRUE;
}

JsonObject *cli_qga_build_exec_args(const char *agent_path, const char *execute,
                                    JsonObject *arguments)
{
	JsonObject *args = json_object_new();
	JsonArray *argv = json_array_new();
	g_autoptr(GString) request = gb_request_build(execute, arguments, NULL);

	/* one argv element: no shell in between, nothing to quote */
	if (request->len > 0 && request->str[request->len - 1] == '\n')
		g_string_truncate(request, request->len - 1);
	json_array_add_string_element(argv, "--oneshot");
	json_array_add_string_element(argv, request->str);
	json_object_set_string_member(args, "path", agent_path);
	json_object_set_array_member(args, "arg", argv);
	json_object_set_boolean_member(args, "capture-output", TRUE);
	return args;
}

GError *cli_qga_exec_error(const GError *error, const char *agent_path)
{
	const char *msg = error->message;

	/* GLib's spawn error inside qemu-ga, quoted in its desc */
	if (strstr(msg, "No such file or directory") != NULL ||
	    strstr(msg, "Not a directory") != NULL) {
		return g_error_new(GB_ERROR, GB_ERROR_NOT_SUPPORTED,
		                   "guestbench-agent is not installed in the guest at %s (install "
		                   "it there, or give its path with --qga-agent PATH or "
		                   "agent_path= in the inventory): %s",
		                   agent_path, msg);
	}
	if (strstr(msg, "Permission denied") != NULL) {
		return g_error_new(GB_ERROR, GB_ERROR_FAILED,
		                   "the guest cannot run %s (not executable, or a mount forbids "
		                   "it): %s",
		                   agent_path, msg);
	}
	return g_error_new(GB_ERROR, error->domain == GB_ERROR ? error->code : GB_ERROR_FAILED,
	                   "cannot run %s in the guest through qemu-ga: %s", agent_path, msg);
}

void cli_qga_exec_status_free(CliQgaExecStatus *status)
{
	if (status == NULL)
		return;
	if (status->out != NULL)
		g_bytes_unref(status->out);
	if (status->err != NULL)
		g_bytes_unref(status->err);
	g_free(status);
}

/* g_base64_decode() skips what it does not know: a corrupt reply must not decode quietly. */
static GBytes *cli_qga_base64_decode(const char *text, const char *member, GError **error)
{
	gsize len = strlen(text);
	gsize padding = 0;
	gsize out_len = 0;
	guchar *out;

	if (len % 4 != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "'%s' is not base64 (length %" G_GSIZE_FORMAT
		            " is not a multiple of 4)",
		            member, len);
		return NULL;
	}
	while (padding < 2 && padding < len && text[len - 1 - padding] == '=')
		padding++;
	for (gsize i = 0; i < len - padding; i++) {
		char c = text[i];
		if (!g_ascii_isalnum(c) && c != '+' && c != '/') {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "'%s' is not base64 (bad byte at offset %" G_GSIZE_FORMAT ")",
			            member, i);
			return NULL;
		}
	}
	if (len == 0)
		return g_bytes_new(NULL, 0);
	out = g_base64_decode(text, &out_len);
	return g_bytes_new_take(out, out_len);
}

CliQgaExecStatus *cli_qga_parse_exec_status(JsonNode *ret, GError **error)
{
	g_autoptr(CliQgaExecStatus) status = g_new0(CliQgaExecStatus, 1);
	JsonObject *obj = NULL;
	const char *out = NULL;
	const char *err = NULL;

	if (!gb_json_node_get_object(ret, "guest-exec-status reply", &obj, error) ||
	    !gb_json_get_bool(obj, "exited", GB_JSON_REQUIRED, &status->exited, error) ||
	    !gb_json_get_int(obj, "signal", GB_JSON_OPTIONAL, 0, 1024, &status->signal, error) ||
	    !gb_json_get_string(obj, "out-data", GB_JSON_OPTIONAL, &out, error) ||
	    !gb_json_get_string(obj, "err-data", GB_JSON_OPTIONAL, &err, error) ||
	    !gb_json_get_bool(obj, "out-truncated", GB_JSON_OPTIONAL, &status->out_truncated,
	                      error) ||
	    !gb_json_get_bool(obj, "err-truncated", GB_JSON_OPTIONAL, &status->err_truncated,
	                      error))
		return NULL;
	if (gb_json_has(obj, "exitcode")) {
		/* qemu-ga passes through what waitpid gave: any int, negative on Windows */
		if (!gb_json_get_int(obj, "exitcode", GB_JSON_REQUIRED, G_MININT32, G_MAXINT32,
		                     &status->exitcode, error))
			return NULL;
		status->has_exitcode = TRUE;
	}
	if (out != NULL) {
		status->out = cli_qga_base64_decode(out, "out-data", error);
		if (status->out == NULL)
			return NULL;
	}
	if (err != NULL) {
		status->err = cli_qga_base64_decode(err, "err-data", error);
		if (status->err == NULL)
			return NULL;
	}
	return g_steal_pointer(&status);
}

/*
 * ": STDERR" (valid UTF-8, cut by characters), or "" when the agent wrote
 * nothing there. Not escaped: whoever shows the error does that.
 */
static char *cli_qga_stderr_excerpt(const CliQgaExecStatus *status)
{
	g_autofree char *text = NULL;
	gsize len = 0;
	const char *data;

	if (status->err == NULL)
		return g_strdup("");
	data = g_bytes_get_data(status->err, &len);
	if (len == 0)
		return g_strdup("");
	text = g_utf8_make_valid(data, len);
	g_strstrip(text);
	if (text[0] == '\0')
		return g_strdup("");
	if (g_utf8_strlen(text, -1) > CLI_QGA_STDERR_EXCERPT) {
		g_autofree char *cut = g_utf8_substring(text, 0, CLI_QGA_STDERR_EXCERPT);
		return g_strdup_printf(": %s…", cut);
	}
	return g_strdup_printf(": %s", text);
}

typedef struct {
	guint count;
	JsonNode *ret;
	JsonNode *id;
	GError *error;
} CliQgaDecode;

static gboolean cli_qga_decode_cb(const char *msg, gsize len, const GError *error,
                                  gpointer user_data)
{
	CliQgaDecode *decode = user_data;

	decode->count++;
	if (decode->count > 1)
		return FALSE;
	if (error != NULL) {
		decode->error = g_error_copy(error);
		return TRUE;
	}
	decode->ret = gb_reply_parse(msg, len, &decode->id, &decode->error);
	return TRUE;
}

JsonNode *cli_qga_decode_reply(const CliQgaExecStatus *status, const char *execute,
                               const char *agent_path, gsize max_reply_size, GError **error)
{
	g_autoptr(GbFramer) framer = NULL;
	g_autofree char *excerpt = cli_qga_stderr_excerpt(status);
	CliQgaDecode decode = { 0 };
	const guint8 *data;
	gsize len = 0;

	if (status->signal != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "%s: %s in the guest was killed by signal %" G_GINT64_FORMAT " (%s)%s",
		            execute, agent_path, status->signal, g_strsignal((int)status->signal),
		            excerpt);
		return NULL;
	}
	if (status->has_exitcode && status->exitcode != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "%s: %s in the guest exited with status %" G_GINT64_FORMAT "%s",
		            execute, agent_path, status->exitcode, excerpt);
		return NULL;
	}
	if (status->out_truncated) {
		g_set_error(error, GB_ERROR, GB_ERROR_TOO_LARGE,
		            "%s: the reply of %s was truncated by qemu-ga (it captures at most "
		            "16 MiB of output; %" G_GSIZE_FORMAT " bytes arrived)",
		            execute, agent_path,
		            status->out != NULL ? g_bytes_get_size(status->out) : (gsize)0);
		return NULL;
	}
	if (status->out != NULL)
		data = g_bytes_get_data(status->out, &len);
	if (len == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "%s: %s in the guest printed no reply%s", execute, agent_path, excerpt);
		return NULL;
	}
	if (len > max_reply_size) {
		g_set_error(error, GB_ERROR, GB_ERROR_TOO_LARGE,
		            "invalid reply to %s: %" G_GSIZE_FORMAT " bytes, over the limit of "
		            "%" G_GSIZE_FORMAT,
		            execute, len, max_reply_size);
		return NULL;
	}
	/* the same framer as on the agent's own port: size and depth limits apply alike */
	framer = gb_framer_new(max_reply_size, GB_FRAMER_DEFAULT_MAX_DEPTH);
	gb_framer_push(framer, data, len, cli_qga_decode_cb, &decode);
	if (decode.count == 0 && gb_framer_is_partial(framer)) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            "invalid reply to %s: the agent's output ends inside a message",
		            execute);
	} else if (decode.count == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "%s: %s in the guest printed no reply%s", execute, agent_path, excerpt);
	} else if (decode.count > 1 || gb_framer_is_partial(framer)) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            "invalid reply to %s: the agent printed more than one message",
		            execute);
	} else if (decode.ret != NULL) {
		g_clear_pointer(&decode.id, json_node_unref);
		g_clear_error(&decode.error);
		return decode.ret;
	} else if (g_error_matches(decode.error, GB_ERROR, GB_ERROR_REMOTE) ||
	           g_error_matches(decode.error, GB_ERROR, GB_ERROR_COMMAND_NOT_FOUND)) {
		/* the agent's own error reply: as the direct session reports it */
		g_propagate_prefixed_error(error, g_steal_pointer(&decode.error), "%s: ", execute);
	} else {
		g_propagate_prefixed_error(error, g_steal_pointer(&decode.error),
		                           "invalid reply to %s: ", execute);
	}
	g_clear_pointer(&decode.ret, json_node_unref);
	g_clear_pointer(&decode.id, json_node_unref);
	g_clear_error(&decode.error);
	return NULL;
}

gboolean cli_qga_check_final_status(JsonNode *reply, gint64 *job, GError **error)
{
	JsonObject *obj = NULL;
	const char *state = NULL;

	*job = 0;
	/* a dry run has no job; anything with one is the final status of that job */
	if (!gb_json_node_get_object(reply, "gb-bench-start reply", &obj, NULL) ||
	    !gb_json_get_int(obj, "job", GB_JSON_REQUIRED, 1, G_MAXINT64, job, NULL)) {
		*job = 0;
		return TRUE;
	}
	if (gb_json_get_string(obj, "state", GB_JSON_OPTIONAL, &state, NULL) &&
	    g_strcmp0(state, "running") == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            "invalid reply to gb-bench-start: the one-shot agent exited with job "
		            "%" G_GINT64_FORMAT " still running (its answer must be the job's "
		            "final status)",
		            *job);
		return FALSE;
	}
	return TRUE;
}
