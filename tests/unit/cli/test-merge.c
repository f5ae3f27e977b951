/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guestbench-protocol.h"

#include "commands/commands.h"
#include "fleet/merge.h"
#include "fleet/remote.h"

static char *data_path(const char *name)
{
	return g_build_filename(g_getenv("GB_TEST_DATA"), "merge", name, NULL);
}

static CliMerge *load(const char *first, ...) G_GNUC_NULL_TERMINATED;

static CliMerge *load(const char *first, ...)
{
	g_autoptr(CliMerge) merge = cli_merge_new(cli_command_find);
	va_list args;

	va_start(args, first);
	for (const char *name = first; name != NULL; name = va_arg(args, const char *)) {
		g_autofree char *path = data_path(name);
		g_autoptr(GError) error = NULL;
		gboolean ok = cli_merge_add_file(merge, path, &error);

		g_assert_no_error(error);
		g_assert_true(ok);
	}
	va_end(args);
	return g_steal_pointer(&merge);
}

static char *render(CliMerge *merge, CliFormat format)
{
	g_autoptr(GError) error = NULL;
	GString *out = cli_merge_render(merge, format, FALSE, &error);

	g_assert_no_error(error);
	g_assert_nonnull(out);
	return g_string_free(out, FALSE);
}

/* Exposition format: each family declared once, its samples right after it. */
static void assert_prom_grouped(const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *current = NULL;
	guint n_types = 0;

	g_assert_true(g_str_has_suffix(text, "\n"));
	for (guint i = 0; lines[i] != NULL; i++) {
		const char *line = lines[i];

		if (line[0] == '\0') {
			g_assert_null(lines[i + 1]); /* only the end */
			continue;
		}
		if (g_str_has_prefix(line, "# HELP ") || g_str_has_prefix(line, "# TYPE ")) {
			g_auto(GStrv) words = g_strsplit(line, " ", 4);

			if (g_strcmp0(current, words[2]) != 0) {
				/* a new family: never one that was already closed */
				g_assert_false(g_hash_table_contains(seen, words[2]));
				g_hash_table_add(seen, g_strdup(words[2]));
				g_free(current);
				current = g_strdup(words[2]);
			}
			if (g_str_has_prefix(line, "# TYPE "))
				n_types++;
			continue;
		}
		g_assert_nonnull(current);
		g_assert_true(g_str_has_prefix(line, current));
		g_assert_true(strchr("{ ", line[strlen(current)]) != NULL);
		/* the host is every sample's first label */
		g_assert_true(g_str_has_prefix(line + strlen(current), "{host=\""));
	}
	g_assert_cmpuint(n_types, ==, g_hash_table_size(seen));
}

static guint count_lines_with_prefix(const char *text, const char *prefix)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	guint n = 0;

	for (guint i = 0; lines[i] != NULL; i++) {
		if (g_str_has_prefix(lines[i], prefix))
			n++;
	}
	return n;
}

static void test_merge_json(void)
{
	g_autoptr(CliMerge) merge = load("hv1.json", "hv2.json", NULL);
	g_autoptr(JsonNode) root = cli_merge_to_json(merge);
	JsonObject *doc = json_node_get_object(root);
	JsonArray *guests = json_object_get_array_member(doc, "guests");
	const char *hosts[] = { "hv1", "hv1", "kvm-b", "kvm-b" };
	const char *names[] = { "web1", "db1", "web1", "old,\"quoted\"\nname" };
	const char *statuses[] = { "ok", "error", "ok", "timeout" };
	JsonObject *g;

	g_assert_cmpstr(json_object_get_string_member(doc, "command"), ==, "audit");
	g_assert_cmpstr(json_object_get_string_member(doc, "guestbench"), ==, GB_VERSION);
	g_assert_cmpuint(json_array_get_length(guests), ==, 4);
	for (guint i = 0; i < 4; i++) {
		g = json_array_get_object_element(guests, i);
		g_assert_cmpstr(json_object_get_string_member(g, "host"), ==, hosts[i]);
		g_assert_cmpstr(json_object_get_string_member(g, "name"), ==, names[i]);
		g_assert_cmpstr(json_object_get_string_member(g, "status"), ==, statuses[i]);
		g_assert_true(json_object_has_member(g, "result"));
		g_assert_cmpint(json_object_has_member(g, "error"), ==, i % 2 == 1);
	}
	/* results are carried over whole */
	g = json_array_get_object_element(guests, 0);
	g_assert_cmpstr(
	    json_object_get_string_member(json_object_get_object_member(g, "result"), "worst"), ==,
	    "FAIL");
	g = json_array_get_object_element(guests, 2);
	g_assert_cmpstr(json_object_get_string_member(g, "target"), ==, "vsock:7:4000");
	g = json_array_get_object_element(guests, 3);
	g_assert_true(json_object_get_null_member(g, "result"));
}

/* A merged document merged again keeps every guest's host; its own name is only a fallback. */
static void test_merge_remerge(void)
{
	g_autoptr(CliMerge) first = load("hv1.json", "hv2.json", NULL);
	g_autofree char *text = render(first, CLI_FORMAT_JSON);
	g_autoptr(CliMerge) again = cli_merge_new(cli_command_find);
	g_autoptr(CliMerge) twice = cli_merge_new(cli_command_find);
	g_autoptr(GError) error = NULL;
	g_autofree char *hv1 = data_path("hv1.json");
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests;

	g_assert_true(
	    cli_merge_add_data(again, "merged.json", "merged", text, strlen(text), &error));
	g_assert_no_error(error);
	root = cli_merge_to_json(again);
	guests = json_object_get_array_member(json_node_get_object(root), "guests");
	g_assert_cmpuint(json_array_get_length(guests), ==, 4);
	g_assert_cmpstr(
	    json_object_get_string_member(json_array_get_object_element(guests, 3), "host"), ==,
	    "kvm-b");

	/* hv1's web1 is already in the merge: the same series twice is refused */
	g_assert_true(
	    cli_merge_add_data(twice, "merged.json", "merged", text, strlen(text), &error));
	g_assert_false(cli_merge_add_file(twice, hv1, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(
	    strstr(error->message, "guest 'web1' of host 'hv1' is also in merged.json"));
}

static void test_merge_prom(void)
{
	g_autoptr(CliMerge) merge = load("hv1.json", "hv2.json", NULL);
	g_autofree char *text = render(merge, CLI_FORMAT_PROM);

	assert_prom_grouped(text);
	g_assert_cmpuint(count_lines_with_prefix(text, "# HELP guestbench_up "), ==, 1);
	g_assert_cmpuint(count_lines_with_prefix(text, "guestbench_up{"), ==, 4);
	g_assert_nonnull(strstr(text, "guestbench_up{host=\"hv1\",guest=\"db1\","));
	g_assert_nonnull(strstr(text, "guestbench_audit_finding{host=\"hv1\",guest=\"web1\","
	                              "rule=\"CPU-NO-AESNI\",level=\"FAIL\",subject=\"cpu\"} 1\n"));
	g_assert_nonnull(strstr(text, "guestbench_audit_finding{host=\"kvm-b\",guest=\"web1\","
	                              "rule=\"DISK-EMULATED\",level=\"WARN\""));
	/* label values escaped as the format wants: quote, backslash, newline */
	g_assert_nonnull(strstr(text, "guest=\"old,\\\"quoted\\\"\\\\nname\""));
	g_assert_cmpuint(count_lines_with_prefix(text, "guestbench_audit_worst_level{"), ==, 2);
}

static void test_merge_facts_prom(void)
{
	g_autoptr(CliMerge) merge = load("facts.json", NULL);
	g_autofree char *text = render(merge, CLI_FORMAT_PROM);

	assert_prom_grouped(text);
	g_assert_nonnull(strstr(text, "guestbench_fact_block_info{host=\"kvm-c\",guest=\"app1\","
	                              "disk=\"sda\",bus=\"ata\""));
}

static void test_merge_csv(void)
{
	g_autoptr(CliMerge) merge = load("hv1.json", "hv2.json", NULL);
	g_autofree char *text = render(merge, CLI_FORMAT_CSV);

	/* one header, with the host column first */
	g_assert_true(g_str_has_prefix(text, "host,guest,level,rule,subject,detail,hint\n"));
	g_assert_cmpuint(count_lines_with_prefix(text, "host,"), ==, 1);
	g_assert_cmpuint(count_lines_with_prefix(text, "hv1,web1,"), ==, 2);
	g_assert_cmpuint(count_lines_with_prefix(text, "hv1,db1,FAIL,GUEST-UNREACHABLE,"), ==, 1);
	g_assert_cmpuint(count_lines_with_prefix(text, "kvm-b,web1,WARN,DISK-EMULATED,"), ==, 1);
	/* a newline in a guest name is shown, so the record stays on its line */
	g_assert_nonnull(strstr(text, "\nkvm-b,\"old,\"\"quoted\"\"\\nname\",FAIL,"));
	g_assert_cmpuint(count_lines_with_prefix(text, "name\""), ==, 0);
}

static void test_merge_table(void)
{
	g_autoptr(CliMerge) merge = load("hv1.json", "hv2.json", NULL);
	g_autofree char *text = render(merge, CLI_FORMAT_TABLE);
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) failed = NULL;
	g_autoptr(GString) failed_json = NULL;
	g_autoptr(JsonNode) root = NULL;
	JsonArray *guests = NULL;

	g_assert_true(g_str_has_prefix(text, "== host hv1 ==\n"));
	g_assert_nonnull(strstr(text, "\n== host kvm-b ==\n"));
	g_assert_nonnull(strstr(text, "CPU-NO-AESNI"));
	g_assert_nonnull(strstr(text, "cannot connect to /run/guestbench/db1.sock"));
	/* the guest's newline is shown, not printed */
	g_assert_null(strstr(text, "\"\nname"));
	g_assert_null(strchr(text, '\033'));

	/* --failed-only: the ok guests go from every format, those not ok stay with their host */
	cli_merge_keep_failed(merge);
	failed = cli_merge_render(merge, CLI_FORMAT_TABLE, FALSE, &error);
	g_assert_no_error(error);
	g_test_message("%s", failed->str);
	g_assert_null(strstr(failed->str, "CPU-NO-AESNI"));
	g_assert_nonnull(strstr(failed->str, "cannot connect to /run/guestbench/db1.sock"));
	g_assert_nonnull(strstr(failed->str, "== host hv1 =="));
	g_assert_nonnull(strstr(failed->str, "== host kvm-b =="));
	failed_json = cli_merge_render(merge, CLI_FORMAT_JSON, FALSE, &error);
	g_assert_no_error(error);
	root = json_from_string(failed_json->str, &error);
	g_assert_no_error(error);
	guests = json_object_get_array_member(json_node_get_object(root), "guests");
	g_assert_cmpuint(json_array_get_length(guests), ==, 2);
	g_assert_cmpstr(
	    json_object_get_string_member(json_array_get_object_element(guests, 0), "status"), ==,
	    "error");
	g_assert_cmpstr(
	    json_object_get_string_member(json_array_get_object_element(guests, 1), "status"), ==,
	    "timeout");
}

static void test_merge_mixed_commands(void)
{
	g_autoptr(CliMerge) merge = load("hv1.json", NULL);
	g_autofree char *path = data_path("facts.json");
	g_autoptr(GError) error = NULL;

	g_assert_false(cli_merge_add_file(merge, path, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "is a 'facts' document"));
	g_assert_nonnull(strstr(error->message, "hv1.json a 'audit' one"));
}

static void test_merge_bad_documents(void)
{
	struct {
		const char *file;
		int code;
		const char *message;
	} cases[] = {
		{ "broken.json", GB_ERROR_PARSE, "JSON parse error" },
		{ "duplicate-key.json", GB_ERROR_PARSE, "" },
		{ "not-object.json", GB_ERROR_INVALID_ARGUMENT, "not a guestbench document" },
		{ "not-guestbench.json", GB_ERROR_INVALID_ARGUMENT, "not a guestbench document" },
		{ "no-command.json", GB_ERROR_INVALID_ARGUMENT, "'command' is missing" },
		{ "compare.json", GB_ERROR_INVALID_ARGUMENT, "command 'compare' is not one" },
		{ "guests-not-array.json", GB_ERROR_INVALID_ARGUMENT, "'guests', expected" },
		{ "guest-not-object.json", GB_ERROR_INVALID_ARGUMENT, "guests[0]: " },
		{ "bad-status.json", GB_ERROR_INVALID_ARGUMENT, "'status' is 'down'" },
		{ "error-missing.json", GB_ERROR_INVALID_ARGUMENT, "'error' is missing" },
		{ "name-not-string.json", GB_ERROR_INVALID_ARGUMENT, "'name', expected" },
		{ "host-control.json", GB_ERROR_INVALID_ARGUMENT, "control character (U+001B)" },
		{ "host-empty.json", GB_ERROR_INVALID_ARGUMENT, "1 to 253 bytes" },
		{ "duplicate.json", GB_ERROR_INVALID_ARGUMENT, "guest 'a' of host 'duplicate'" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(CliMerge) merge = cli_merge_new(cli_command_find);
		g_autofree char *path = data_path(cases[i].file);
		g_autoptr(GError) error = NULL;

		g_test_message("%s", cases[i].file);
		g_assert_false(cli_merge_add_file(merge, path, &error));
		g_assert_error(error, GB_ERROR, cases[i].code);
		/* every message names the file */
		g_assert_nonnull(strstr(error->message, cases[i].file));
		g_assert_nonnull(strstr(error->message, cases[i].message));
	}
}

/* Results that are not what audit writes: rendered as empty, never a critical or a crash. */
static void test_merge_hostile(void)
{
	g_autoptr(CliMerge) merge = load("hostile.json", NULL);
	g_autofree char *prom = render(merge, CLI_FORMAT_PROM);
	g_autofree char *csv = render(merge, CLI_FORMAT_CSV);
	g_autofree char *table = render(merge, CLI_FORMAT_TABLE);
	g_autofree char *json = render(merge, CLI_FORMAT_JSON);

	assert_prom_grouped(prom);
	g_assert_nonnull(strstr(prom, "guestbench_up{host=\"evil\\\"host\\\\\",guest=\"g2\""));
	g_assert_cmpuint(count_lines_with_prefix(prom, "guestbench_audit_finding{"), ==, 0);
	g_assert_true(g_str_has_prefix(csv, "host,"));
	g_assert_null(strchr(table, '\033'));
	g_assert_nonnull(strcasestr(table, "e\\x1b[2J  error: boom\\x1b[31m"));
	g_assert_nonnull(strstr(json, "\"host\" : \"evil\\\"host\\\\\""));
}

static void test_merge_files(void)
{
	g_autoptr(CliMerge) merge = cli_merge_new(cli_command_find);
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = g_dir_make_tmp("gb-merge-XXXXXX", &error);
	g_autofree char *nameless = NULL;
	g_autofree char *big = NULL;
	g_autofree char *missing = NULL;
	g_autofree char *table = NULL;
	int fd;

	g_assert_no_error(error);
	missing = g_build_filename(dir, "missing.json", NULL);
	g_assert_false(cli_merge_add_file(merge, missing, &error));
	g_assert_nonnull(strstr(error->message, "missing.json"));
	g_clear_error(&error);

	g_assert_false(cli_merge_add_file(merge, dir, &error));
	g_assert_nonnull(strstr(error->message, "is a directory"));
	g_clear_error(&error);

	/* no "host" and a file name that is only the extension: nothing names the host */
	nameless = g_build_filename(dir, ".json", NULL);
	g_assert_true(g_file_set_contents(
	    nameless, "{\"guestbench\":\"0\",\"command\":\"ping\",\"guests\":[]}", -1, NULL));
	g_assert_false(cli_merge_add_file(merge, nameless, &error));
	g_assert_nonnull(strstr(error->message, "no 'host' member"));
	g_clear_error(&error);

	/* a sparse file over the limit is refused by its size, before it is read */
	big = g_build_filename(dir, "big.json", NULL);
	fd = g_open(big, O_CREAT | O_WRONLY, 0600);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(ftruncate(fd, (off_t)CLI_MERGE_MAX_FILE_SIZE + 1), ==, 0);
	g_close(fd, NULL);
	g_assert_false(cli_merge_add_file(merge, big, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_TOO_LARGE);
	g_clear_error(&error);

	/* nothing was half-added by the failures */
	table = render(merge, CLI_FORMAT_TABLE);
	g_assert_cmpstr(table, ==, "");
	g_unlink(nameless);
	g_unlink(big);
	g_rmdir(dir);
}

/* The command through the real CLI: exit statuses, -o, refused formats. */
static void run_cli(const char *const *args, int *status, char **out, char **err)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GError) error = NULL;
	int wait_status = 0;

	g_ptr_array_add(argv, (gpointer)g_getenv("GB_CLI"));
	for (guint i = 0; args[i] != NULL; i++)
		g_ptr_array_add(argv, (gpointer)args[i]);
	g_ptr_array_add(argv, NULL);
	g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
	                           out, err, &wait_status, &error));
	g_assert_no_error(error);
	g_assert_true(WIFEXITED(wait_status));
	*status = WEXITSTATUS(wait_status);
}

static void test_merge_cli(void)
{
	g_autofree char *hv1 = data_path("hv1.json");
	g_autofree char *hv2 = data_path("hv2.json");
	g_autofree char *broken = data_path("broken.json");
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = g_dir_make_tmp("gb-merge-XXXXXX", &error);
	g_autofree char *outfile = g_build_filename(dir, "fleet.prom", NULL);
	g_autofree char *written = NULL;
	int status;

	if (g_getenv("GB_CLI") == NULL) {
		g_test_skip("GB_CLI not set");
		return;
	}
	{
		const char *args[] = { "merge", "--format", "prom", "-o", outfile, hv1, hv2, NULL };
		g_autofree char *out = NULL;
		g_autofree char *err = NULL;

		run_cli(args, &status, &out, &err);
		g_assert_cmpint(status, ==, 0);
		g_assert_cmpstr(out, ==, "");
		g_assert_true(g_file_get_contents(outfile, &written, NULL, NULL));
		assert_prom_grouped(written);
	}
	{
		const char *args[] = { "merge", hv1, broken, NULL };
		g_autofree char *out = NULL;
		g_autofree char *err = NULL;

		run_cli(args, &status, &out, &err);
		g_assert_cmpint(status, ==, 2);
		g_assert_nonnull(strstr(err, "broken.json: JSON parse error"));
		g_assert_cmpstr(out, ==, "");
	}
	{
		const char *args[] = { "merge", "--format", "html", hv1, NULL };
		g_autofree char *out = NULL;
		g_autofree char *err = NULL;

		run_cli(args, &status, &out, &err);
		g_assert_cmpint(status, ==, 2);
	}
	{
		const char *args[] = { "merge", NULL };
		g_autofree char *out = NULL;
		g_autofree char *err = NULL;

		run_cli(args, &status, &out, &err);
		g_assert_cmpint(status, ==, 2);
		g_assert_nonnull(strstr(err, "at least one FILE"));
	}
	{
		const char *args[] = { "merge", "--format", "json", hv1, NULL };
		g_autofree char *out = NULL;
		g_autofree char *err = NULL;

		run_cli(args, &status, &out, &err);
		g_assert_cmpint(status, ==, 0);
		g_assert_nonnull(strstr(out, "\"host\" : \"hv1\""));
	}
	g_unlink(outfile);
	g_rmdir(dir);
}

/* --hosts: what the remote guestbench gets from the local command line. */
static void test_remote_build_args(void)
{
	struct {
		const char *argv[16];
		const char *want; /* the arguments joined by '|', NULL when refused */
	} cases[] = {
		{ { "gb", "--hosts", "a,b", "audit", "x", NULL }, "--format|json|audit|x" },
		{ { "gb", "--hosts=a", "-o", "f", "--format", "csv", "ping", "-q", NULL },
		  "--format|json|ping|-q" },
		{ { "gb", "-ofile", "--output=f", "--format=prom", "--color", "never", "ping",
		    NULL },
		  "--format|json|ping" },
		{ { "gb", "-j", "4", "-j8", "--tag", "-o", "--timeout=3", "facts", NULL },
		  "--format|json|-j|4|-j8|--tag|-o|--timeout=3|facts" },
		{ { "gb", "ping", "--", "-o", "--hosts", NULL },
		  "--format|json|ping|--|-o|--hosts" },
		{ { "gb", "-qv", "ping", NULL }, "--format|json|-qv|ping" },
		{ { "gb", "-qo", "f", "ping", NULL }, NULL },
		{ { "gb", "-vj4", "ping", NULL }, NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(GPtrArray) args = cli_remote_build_args(cases[i].argv, &error);
		g_autofree char *joined = NULL;

		if (cases[i].want == NULL) {
			g_assert_null(args);
			g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
			continue;
		}
		g_assert_no_error(error);
		g_ptr_array_add(args, NULL);
		joined = g_strjoinv("|", (char **)args->pdata);
		g_assert_cmpstr(joined, ==, cases[i].want);
	}
}

static void test_remote_check_host(void)
{
	const char *good[] = { "hv1", "root@hv1.example.org", "hv1:2222", "[::1]" };
	const char *bad[] = { "", "-oProxyCommand=x", "a b", "a\tb", "h\033", "h\xc3\xa9" };

	for (guint i = 0; i < G_N_ELEMENTS(good); i++)
		g_assert_true(cli_remote_check_host(good[i], NULL));
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;

		g_assert_false(cli_remote_check_host(bad[i], &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/merge/json", test_merge_json);
	g_test_add_func("/merge/remerge", test_merge_remerge);
	g_test_add_func("/merge/prom", test_merge_prom);
	g_test_add_func("/merge/facts-prom", test_merge_facts_prom);
	g_test_add_func("/merge/csv", test_merge_csv);
	g_test_add_func("/merge/table", test_merge_table);
	g_test_add_func("/merge/mixed-commands", test_merge_mixed_commands);
	g_test_add_func("/merge/bad-documents", test_merge_bad_documents);
	g_test_add_func("/merge/hostile", test_merge_hostile);
	g_test_add_func("/merge/files", test_merge_files);
	g_test_add_func("/merge/cli", test_merge_cli);
	g_test_add_func("/remote/build-args", test_remote_build_args);
	g_test_add_func("/remote/check-host", test_remote_check_host);
	return g_test_run();
}
