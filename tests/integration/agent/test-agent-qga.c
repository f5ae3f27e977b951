/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The same requests against guestbench-agent and a real qemu-ga: the reply
 * shapes (return or error, error class, id) must match, and so must the texts
 * of the request-shape errors.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "harness.h"

typedef struct {
	Harness ours;
	Harness qga;
} Peers;

static gboolean peers_start(Peers *p)
{
	const char *qemu_ga = g_getenv("GB_QEMU_GA");
	/* each side blocks one command, to compare the "disabled" reply */
	const char *const ours_extra[] = { "-b", "gb-bench-list", NULL };
	const char *const qga_argv[] = { qemu_ga, "-m", "unix-listen", "-p", "@SOCK@",     "-t",
		                         "@DIR@", "-f", "@DIR@/pid",   "-b", "guest-exec", NULL };

	if (qemu_ga == NULL) {
		g_test_skip("GB_QEMU_GA is not set (qemu-guest-agent not installed)");
		return FALSE;
	}
	harness_init(&p->ours);
	harness_start_agent(&p->ours, ours_extra);
	harness_init(&p->qga);
	{
		/* "@DIR@/pid" is not a placeholder on its own: spell it out */
		g_autofree char *pidfile = g_build_filename(p->qga.tmpdir, "qemu-ga.pid", NULL);
		const char *argv[G_N_ELEMENTS(qga_argv)];
		memcpy(argv, qga_argv, sizeof(argv));
		argv[8] = pidfile;
		harness_start(&p->qga, argv);
	}
	return TRUE;
}

static void peers_stop(Peers *p)
{
	harness_stop(&p->ours);
	harness_stop(&p->qga);
}

/* "return" or "error:CLASS", plus the id text, for comparing shapes. */
static char *reply_shape(JsonNode *reply, char **desc)
{
	JsonObject *obj = json_node_get_object(reply);
	g_autofree char *id = NULL;
	g_autoptr(GError) error = NULL;

	id = harness_get_id(reply);
	if (json_object_has_member(obj, "return")) {
		*desc = NULL;
		return g_strdup_printf("return id=%s", id != NULL ? id : "(none)");
	} else {
		JsonObject *err = NULL;
		const char *klass = NULL;
		const char *text = NULL;
		g_assert_true(gb_json_get_object(obj, "error", GB_JSON_REQUIRED, &err, &error));
		g_assert_true(gb_json_get_string(err, "class", GB_JSON_REQUIRED, &klass, &error));
		g_assert_true(gb_json_get_string(err, "desc", GB_JSON_REQUIRED, &text, &error));
		*desc = g_strdup(text);
		return g_strdup_printf("error:%s id=%s", klass, id != NULL ? id : "(none)");
	}
}

typedef struct {
	const char *request;
	gboolean same_desc;
} Case;

static const Case cases[] = {
	{ "{\"execute\": \"guest-ping\"}", TRUE },
	{ "{\"execute\": \"guest-ping\", \"id\": 11}", TRUE },
	{ "{\"execute\": \"guest-ping\", \"id\": \"str\"}", TRUE },
	{ "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": 1234}, \"id\": 1}", TRUE },
	{ "{\"execute\": \"guest-sync\", \"id\": 2}", TRUE },
	{ "{\"execute\": \"guest-sync\", \"arguments\": {\"id\": \"a\"}, \"id\": 3}", TRUE },
	{ "{\"execute\": \"no-such-command\", \"id\": 4}", TRUE },
	{ "{\"execute\": \"no-such-command\"}", TRUE },
	{ "{\"execute\": \"guest-ping\", \"arguments\": {\"z\": 1}, \"id\": 5}", TRUE },
	{ "{\"execute\": \"guest-info\", \"arguments\": {\"z\": 1}}", TRUE },
	{ "{\"execute\": \"guest-ping\", \"foo\": 1, \"id\": 6}", TRUE },
	{ "{\"execute\": \"guest-ping\", \"arguments\": [1], \"id\": 7}", TRUE },
	{ "{\"execute\": 3, \"id\": 8}", TRUE },
	{ "{\"id\": 9}", TRUE },
	{ "{}", TRUE },
	{ "[1, 2]", TRUE },
	{ "\"str\"", TRUE },
	/* parse errors: same class, the wording is json-glib's vs qemu's */
	{ "{\"execute\": \"guest-ping\",}", FALSE },
	{ NULL },
};

static void test_shapes(void)
{
	Peers p;

	if (!peers_start(&p))
		return;
	for (guint i = 0; cases[i].request != NULL; i++) {
		g_autoptr(JsonNode) a = harness_call(&p.ours, cases[i].request);
		g_autoptr(JsonNode) b = harness_call(&p.qga, cases[i].request);
		g_autofree char *desc_a = NULL;
		g_autofree char *desc_b = NULL;
		g_autofree char *shape_a = reply_shape(a, &desc_a);
		g_autofree char *shape_b = reply_shape(b, &desc_b);
		g_test_message("%s: ours %s (%s), qemu-ga %s (%s)", cases[i].request, shape_a,
		               desc_a, shape_b, desc_b);
		g_assert_cmpstr(shape_a, ==, shape_b);
		if (cases[i].same_desc)
			g_assert_cmpstr(desc_a, ==, desc_b);
	}
	peers_stop(&p);
}

static void test_disabled(void)
{
	Peers p;
	g_autoptr(JsonNode) a = NULL;
	g_autoptr(JsonNode) b = NULL;
	g_autofree char *desc_a = NULL;
	g_autofree char *desc_b = NULL;
	g_autofree char *shape_a = NULL;
	g_autofree char *shape_b = NULL;

	if (!peers_start(&p))
		return;
	a = harness_call(&p.ours, "{\"execute\": \"gb-bench-list\", \"id\": 1}");
	b = harness_call(&p.qga, "{\"execute\": \"guest-exec\", \"arguments\": {\"path\": "
	                         "\"/bin/true\"}, \"id\": 1}");
	shape_a = reply_shape(a, &desc_a);
	shape_b = reply_shape(b, &desc_b);
	g_assert_cmpstr(shape_a, ==, shape_b);
	g_assert_cmpstr(desc_a, ==, "Command gb-bench-list has been disabled");
	g_assert_cmpstr(desc_b, ==, "Command guest-exec has been disabled");
	peers_stop(&p);
}

/* Reads replies until the one answering guest-sync-delimited id, as a host does. */
static void sync_delimited(Harness *h, gint64 id)
{
	g_autofree char *req = g_strdup_printf(
	    "\xff{\"execute\": \"guest-sync-delimited\", \"arguments\": {\"id\": %" G_GINT64_FORMAT
	    "}}\n",
	    id);
	guint skipped = 0;

	harness_send(h->fd, req, strlen(req));
	for (;;) {
		g_autofree char *line = harness_read_line(h->fd, h->buf, HARNESS_TIMEOUT_MS);
		g_autoptr(JsonNode) reply = NULL;
		JsonObject *obj;
		g_assert_nonnull(line);
		if ((guint8)line[0] != 0xff) {
			/* qemu-ga answers the 0xFF itself with a parse error first */
			g_assert_cmpuint(++skipped, <, 3);
			continue;
		}
		reply = harness_parse(line + 1);
		obj = json_node_get_object(reply);
		if (json_object_has_member(obj, "return") &&
		    json_node_get_int(harness_get_return(reply)) == id)
			return;
	}
}

static void test_sync_delimited(void)
{
	Peers p;

	if (!peers_start(&p))
		return;
	sync_delimited(&p.ours, 987654321);
	sync_delimited(&p.qga, 987654321);
	peers_stop(&p);
}

static void check_info(Harness *h)
{
	g_autoptr(JsonNode) reply = harness_call(h, "{\"execute\": \"guest-info\", \"id\": 1}");
	g_autoptr(GError) error = NULL;
	JsonObject *ret = json_node_get_object(harness_get_return(reply));
	JsonArray *cmds = NULL;
	const char *version = NULL;
	g_autofree char *id = harness_get_id(reply);

	g_assert_cmpstr(id, ==, "1");
	g_assert_true(gb_json_get_string(ret, "version", GB_JSON_REQUIRED, &version, &error));
	g_assert_true(
	    gb_json_get_array(ret, "supported_commands", GB_JSON_REQUIRED, &cmds, &error));
	g_assert_cmpuint(json_array_get_length(cmds), >, 0);
	for (guint i = 0; i < json_array_get_length(cmds); i++) {
		JsonObject *cmd = NULL;
		const char *name = NULL;
		gboolean flag = FALSE;
		g_assert_true(
		    gb_json_node_get_object(json_array_get_element(cmds, i), "cmd", &cmd, &error));
		g_assert_true(gb_json_get_string(cmd, "name", GB_JSON_REQUIRED, &name, &error));
		g_assert_true(gb_json_get_bool(cmd, "enabled", GB_JSON_REQUIRED, &flag, &error));
		g_assert_true(
		    gb_json_get_bool(cmd, "success-response", GB_JSON_REQUIRED, &flag, &error));
		g_assert_cmpuint(json_object_get_size(cmd), ==, 3);
	}
}

static void test_info(void)
{
	Peers p;

	if (!peers_start(&p))
		return;
	check_info(&p.ours);
	check_info(&p.qga);
	peers_stop(&p);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/agent-qga/shapes", test_shapes);
	g_test_add_func("/agent-qga/disabled", test_disabled);
	g_test_add_func("/agent-qga/sync-delimited", test_sync_delimited);
	g_test_add_func("/agent-qga/info", test_info);
	return g_test_run();
}
