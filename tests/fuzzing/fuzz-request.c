/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One framed message -> request decoder -> every typed accessor on every
 * argument, and the same bytes through the reply decoder (the CLI's side).
 */
#include "config.h"

#include <stdlib.h>

#include "fuzz.h"
#include "guestbench-protocol.h"

static void fuzz_accessors(JsonObject *args)
{
	g_autoptr(GList) members = json_object_get_members(args);
	const char *const allowed[] = { "id", "sizes", "names", NULL };

	for (GList *l = members; l != NULL; l = l->next) {
		const char *name = l->data;
		gint64 i = 0;
		double d = 0;
		gboolean b = FALSE;
		const char *s = NULL;
		JsonObject *o = NULL;
		JsonArray *a = NULL;
		g_autoptr(GArray) ints = NULL;
		g_auto(GStrv) strv = NULL;

		for (guint flags = 0; flags <= GB_JSON_OPTIONAL; flags++) {
			gb_json_get_int(args, name, flags, -100, 100, &i, NULL);
			gb_json_get_double(args, name, flags, -1e9, 1e9, &d, NULL);
			gb_json_get_bool(args, name, flags, &b, NULL);
			gb_json_get_string(args, name, flags, &s, NULL);
			gb_json_get_object(args, name, flags, &o, NULL);
			gb_json_get_array(args, name, flags, &a, NULL);
			g_clear_pointer(&ints, g_array_unref);
			gb_json_get_int_array(args, name, flags, 0, G_MAXINT64, &ints, NULL);
			g_clear_pointer(&strv, g_strfreev);
			gb_json_get_strv(args, name, flags, &strv, NULL);
		}
		gb_json_has(args, name);
	}
	gb_json_check_members(args, allowed, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) error_reply = NULL;
	g_autoptr(JsonNode) id = NULL;
	g_autoptr(JsonNode) reply_id = NULL;
	g_autoptr(GbRequest) req = NULL;
	g_autoptr(JsonNode) ret = NULL;
	g_autoptr(GString) line = NULL;

	/* the framer caps messages at 1 MiB; so does this */
	if (size > GB_FRAMER_DEFAULT_MAX_SIZE)
		return 0;
	req = gb_request_parse((const char *)data, size, &id, &error);
	if (req == NULL) {
		if (error == NULL)
			abort();
		line = gb_reply_error(error, id);
	} else {
		if (req->execute == NULL)
			abort();
		if (req->arguments != NULL)
			fuzz_accessors(req->arguments);
		line = gb_reply_return(
		    req->arguments != NULL ? json_object_get_member(req->arguments, "id") : NULL,
		    req->id);
		g_string_free(gb_request_build(req->execute, req->arguments, req->id), TRUE);
	}
	if (!g_utf8_validate(line->str, (gssize)line->len, NULL))
		abort();
	ret = gb_reply_parse((const char *)data, size, &reply_id, &error_reply);
	if (ret == NULL && error_reply == NULL)
		abort();
	return 0;
}
