/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <glib/gstdio.h>
#include <unistd.h>

#include "gb-error.h"

#include "fleet/inventory.h"
#include "fleet/resolve.h"

static char *data_path(const char *name)
{
	return g_build_filename(g_getenv("GB_TEST_DATA"), "inventory", name, NULL);
}

static gboolean target_has_name(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(((const CliTarget *)a)->name, b) == 0;
}

static CliTarget *find(GPtrArray *targets, const char *name)
{
	guint idx = 0;

	g_assert_true(g_ptr_array_find_with_equal_func(targets, name, target_has_name, &idx));
	return g_ptr_array_index(targets, idx);
}

static void test_inventory_good(void)
{
	g_autofree char *path = data_path("good.ini");
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *web2_sock = g_build_filename(dir, "web2.sock", NULL);
	g_autofree char *web2_qmp = g_build_filename(dir, "qmp/web2.qmp", NULL);
	g_autofree char *qga_sock = g_build_filename(dir, "qga/old.sock", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) targets = cli_inventory_load(path, NULL, &error);
	g_autofree char *origin = NULL;
	CliTarget *t;

	g_assert_no_error(error);
	g_assert_cmpuint(targets->len, ==, 6);
	t = g_ptr_array_index(targets, 0);
	g_assert_cmpstr(t->name, ==, "web1");
	g_assert_cmpstr(t->path, ==, "/run/guestbench/web1.sock");
	g_assert_cmpstr(t->text, ==, "unix:/run/guestbench/web1.sock");
	g_assert_cmpuint(g_strv_length(t->tags), ==, 2);
	g_assert_cmpstr(t->tags[1], ==, "production");
	origin = g_strdup_printf("%s:3", path);
	g_assert_cmpstr(t->origin, ==, origin);
	g_assert_null(t->qmp);

	t = find(targets, "web2");
	g_assert_cmpstr(t->path, ==, web2_sock);
	g_assert_cmpstr(t->qmp, ==, web2_qmp);
	g_assert_cmpuint(g_strv_length(t->tags), ==, 2); /* a trailing ';' adds no tag */

	t = find(targets, "db1");
	g_assert_cmpstr(t->qmp, ==, "/run/qemu/db1.qmp");
	g_assert_cmpstr(t->agent_path, ==, "/usr/local/bin/guestbench-agent");
	g_assert_cmpuint(t->require_level, ==, 3);
	g_assert_cmpuint(t->require_arm_level, ==, 82);           /* gb-isa.h's code of armv8.2-a */
	g_assert_cmpuint(g_strv_length(t->require_flags), ==, 2); /* repeats once */
	g_assert_cmpstr(t->require_flags[1], ==, "aes");
	g_assert_cmpuint(find(targets, "web1")->require_level, ==, 0);
	g_assert_cmpuint(find(targets, "web1")->require_arm_level, ==, 0);
	g_assert_null(find(targets, "web1")->require_flags);

	t = find(targets, "büro-ünïcode 1");
	g_assert_cmpint(t->scheme, ==, CLI_TARGET_VSOCK);
	g_assert_cmpuint(t->cid, ==, 7);
	g_assert_cmpuint(g_strv_length(t->tags), ==, 0);

	t = find(targets, "indented");
	g_assert_cmpstr(t->path, ==, "/run/guestbench/indented.sock");

	t = find(targets, "qga-only");
	g_assert_cmpint(t->scheme, ==, CLI_TARGET_QGA);
	g_assert_cmpstr(t->path, ==, qga_sock);
}

/* The shipped example stays valid for this parser. */
static void test_inventory_example(void)
{
	g_autofree char *path = g_build_filename(g_getenv("GB_TEST_DATA"), "..", "..", "packaging",
	                                         "examples", "fleet.ini", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) targets = cli_inventory_load(path, NULL, &error);

	g_assert_no_error(error);
	g_assert_cmpuint(targets->len, ==, 4);
}

static void test_inventory_bad_files(void)
{
	struct {
		const char *file;
		const char *message; /* after "PATH" */
	} cases[] = {
		{ "bad-unknown-key.ini",
		  ":3: unknown key 'tag' in [guest a] (expected target, tags, qmp, agent_path, "
		  "connect, require_level, require_flags or host)" },
		{ "bad-dup-name.ini", ":6: duplicate guest 'a' (first at line 1)" },
		{ "bad-scheme.ini",
		  ":3: [guest b]: invalid target 'http://b': unknown scheme 'http:'" },
		{ "bad-group.ini", ":3: group [general] is not [guest NAME] or [hypervisor NAME]" },
		{ "bad-nested.ini",
		  ":1: [guest a]: target '@other.ini' is an inventory: an inventory cannot include "
		  "another" },
		{ "bad-no-target.ini", ":2: [guest a]: no target=" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *path = data_path(cases[i].file);
		g_autoptr(GError) error = NULL;
		g_autoptr(GPtrArray) targets = cli_inventory_load(path, NULL, &error);
		g_autofree char *want = g_strconcat(path, cases[i].message, NULL);

		g_assert_null(targets);
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_test_message("%s", error->message);
		g_assert_true(g_str_has_prefix(error->message, want));
	}
}

static void test_inventory_bad_text(void)
{
	struct {
		const char *text;
		const char *message;
	} cases[] = {
		{ "", "x.ini: no [guest NAME] or [hypervisor NAME] groups" },
		{ "# only a comment\n", "x.ini: no [guest NAME] or [hypervisor NAME] groups" },
		{ "target=/a\n", "x.ini:1: key 'target' before the first [guest NAME] group" },
		{ "[guest a]\ntarget=/a\ntarget=/b\n",
		  "x.ini:3: key 'target' given twice in [guest a] (first at line 2)" },
		{ "[guest a]\njust words\n",
		  "x.ini:2: not a [guest NAME] group, a key=value or a # comment" },
		{ "[guest a\ntarget=/a\n",
		  "x.ini:1: group header '[guest a' does not end with ']'" },
		{ "[guest ]\ntarget=/a\n",
		  "x.ini:1: group [guest ] is not [guest NAME] or [hypervisor NAME]" },
		{ "[guest]\ntarget=/a\n",
		  "x.ini:1: group [guest] is not [guest NAME] or [hypervisor NAME]" },
		{ "[guestx]\ntarget=/a\n",
		  "x.ini:1: group [guestx] is not [guest NAME] or [hypervisor NAME]" },
		{ "[guest a]b]\ntarget=/a\n",
		  "x.ini:1: group [guest a]b] is not [guest NAME] or [hypervisor NAME]" },
		{ "[guest a]\ntarget[de]=/a\n", "x.ini:2: unknown key 'target[de]'" },
		{ "[guest a]\ntarget=\n", "x.ini:1: [guest a]: invalid target '': empty" },
		{ "[guest a]\ntarget=unix:\n",
		  "x.ini:1: [guest a]: invalid target 'unix:': empty" },
		{ "[guest a]\ntarget=qga:\n",
		  "x.ini:1: [guest a]: invalid target 'qga:': empty socket path" },
		{ "[guest a]\ntarget=vsock:0:1\n",
		  "x.ini:1: [guest a]: invalid target 'vsock:0:1'" },
		/* GKeyFile returns a value and an error for a bad escape: one error only */
		{ "[guest a]\ntarget=vsock:7\\4000\n",
		  "x.ini:1: [guest a]: target= cannot be read" },
		{ "[guest a]\ntarget=/a\nqmp=/q\\4\n", "x.ini:1: [guest a]: qmp= cannot be read" },
		{ "[guest a]\ntarget=/a\ntags=web;;db\n",
		  "x.ini:1: [guest a]: empty tag in tags=" },
		{ "[guest a]\ntarget=/a\ntags=we b\n", "x.ini:1: [guest a]: tag 'we b' contains" },
		{ "[guest a]\ntarget=/a\nagent_path=bin/agent\n",
		  "x.ini:1: [guest a]: agent_path 'bin/agent' is not an absolute path" },
		{ "[guest a]\ntarget=/a\nqmp=\n", "x.ini:1: [guest a]: empty qmp=" },
		{ "[guest a]\ntarget=/a\nrequire_level=x86-64-v5\n",
		  "x.ini:1: [guest a]: require_level: invalid ISA level 'x86-64-v5' in 'x86-64-v5' "
		  "(expected x86-64-v1..x86-64-v4, armv8-a" },
		{ "[guest a]\ntarget=/a\nrequire_level=armv8.2-a,armv9-a\n",
		  "x.ini:1: [guest a]: require_level: 'armv8.2-a' and 'armv9-a' in "
		  "'armv8.2-a,armv9-a' are both Arm levels" },
		{ "[guest a]\ntarget=/a\nrequire_level=\n",
		  "x.ini:1: [guest a]: require_level: invalid ISA level ''" },
		{ "[guest a]\ntarget=/a\nrequire_flags=avx2,,aes\n",
		  "x.ini:1: [guest a]: require_flags: invalid CPU flag '' in 'avx2,,aes'" },
		{ "[guest a]\ntarget=/a\nrequire_flags=av x2\n",
		  "x.ini:1: [guest a]: require_flags: invalid CPU flag 'av x2'" },
		{ "[guest a]\ntarget=/a\n[guest b]\ntarget=/b\xff\n", "x.ini:4: not valid UTF-8" },
		{ "[guest a]\ntarget=/a\nhost=\n",
		  "x.ini:1: [guest a]: host: host name must have 1 to 253 bytes, not 0" },
		{ "[guest a]\ntarget=/a\nhost=hv\\t1\n",
		  "x.ini:1: [guest a]: host: host name has a control character (U+0009)" },
		/* connect= and [hypervisor NAME] */
		{ "[guest a]\ntarget=/a\nconnect=qemu:///system\n",
		  "x.ini:1: [guest a]: connect= is for target=libvirt:DOMAIN, not '/a'" },
		{ "[guest a]\ntarget=libvirt:a\nconnect=\n",
		  "x.ini:1: [guest a]: connect= must be one libvirt URI" },
		{ "[guest a]\ntarget=libvirt:a\nconnect=qemu:///system qemu:///session\n",
		  "x.ini:1: [guest a]: connect= must be one libvirt URI" },
		{ "[hypervisor h]\ntags=x\n", "x.ini:1: [hypervisor h]: no connect=" },
		{ "[hypervisor h]\nconnect=test:///default\ntarget=/a\n",
		  "x.ini:3: unknown key 'target' in [hypervisor h] (expected connect or tags)" },
		{ "[hypervisor h]\nconnect=test:///default\n[hypervisor "
		  "h]\nconnect=test:///default\n",
		  "x.ini:3: duplicate hypervisor 'h' (first at line 1)" },
		{ "[hypervisor ]\nconnect=test:///default\n",
		  "x.ini:1: group [hypervisor ] is not [guest NAME] or [hypervisor NAME]" },
		{ "[hypervisor h]\nconnect=test:///default\ntags=a b\n",
		  "x.ini:1: [hypervisor h]: tag 'a b' contains" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(GPtrArray) targets = cli_inventory_parse(
		    "x.ini", cases[i].text, strlen(cases[i].text), NULL, &error);

		g_assert_null(targets);
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_test_message("%u: %s", i, error->message);
		g_assert_true(g_str_has_prefix(error->message, cases[i].message));
	}
	{
		const char nul[] = "[guest a]\ntarget=/a\0\n";
		g_autoptr(GError) error = NULL;
		g_autoptr(GPtrArray) targets =
		    cli_inventory_parse("x.ini", nul, sizeof(nul) - 1, NULL, &error);
		g_assert_null(targets);
		g_assert_cmpstr(error->message, ==, "x.ini:2: contains a NUL byte");
	}
	{
		/* a relative socket path that only becomes too long once anchored */
		g_autofree char *name = g_strnfill(100, 's');
		g_autofree char *text = g_strdup_printf("[guest a]\ntarget=%s\n", name);
		g_autoptr(GError) error = NULL;
		g_autoptr(GPtrArray) targets =
		    cli_inventory_parse("/tmp/some/dir/x.ini", text, strlen(text), NULL, &error);
		g_assert_null(targets);
		g_assert_nonnull(strstr(error->message, "longer than 107 bytes"));
	}
}

/* host=: the hypervisor a guest runs on; without it, this host */
static void test_inventory_host(void)
{
	const char text[] = "[guest a]\ntarget=/a\nhost=hv1\n[guest b]\ntarget=/b\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) targets =
	    cli_inventory_parse("x.ini", text, sizeof(text) - 1, NULL, &error);

	g_assert_no_error(error);
	g_assert_cmpstr(find(targets, "a")->host, ==, "hv1");
	g_assert_cmpstr(cli_target_get_hypervisor(find(targets, "a")), ==, "hv1");
	g_assert_null(find(targets, "b")->host);
	g_assert_cmpstr(cli_target_get_hypervisor(find(targets, "b")), ==, g_get_host_name());
}

static void test_inventory_unreadable(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) targets = NULL;
	g_autofree char *dir = g_dir_make_tmp("gb-inv-XXXXXX", NULL);
	g_autofree char *fifo = g_build_filename(dir, "fifo.ini", NULL);

	targets = cli_inventory_load("/nonexistent/fleet.ini", NULL, &error);
	g_assert_null(targets);
	g_assert_cmpstr(error->message, ==,
	                "inventory cannot read /nonexistent/fleet.ini: No such file or directory");
	g_clear_error(&error);

	targets = cli_inventory_load(dir, NULL, &error);
	g_assert_null(targets);
	g_assert_nonnull(strstr(error->message, "not a regular file"));
	g_clear_error(&error);

	/* a FIFO without a writer must not block */
	g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
	targets = cli_inventory_load(fifo, NULL, &error);
	g_assert_null(targets);
	g_assert_nonnull(strstr(error->message, "not a regular file"));
	g_clear_error(&error);
	g_unlink(fifo);

	targets = cli_inventory_load("/dev/zero", NULL, &error);
	g_assert_null(targets);
	g_assert_nonnull(strstr(error->message, "not a regular file"));
	g_clear_error(&error);

	if (getuid() != 0) {
		g_autofree char *secret = g_build_filename(dir, "secret.ini", NULL);
		g_assert_true(g_file_set_contents(secret, "[guest a]\ntarget=/a\n", -1, NULL));
		g_chmod(secret, 0);
		targets = cli_inventory_load(secret, NULL, &error);
		g_assert_null(targets);
		g_assert_nonnull(strstr(error->message, "Permission denied"));
		g_clear_error(&error);
		g_unlink(secret);
	}
	g_rmdir(dir);
}

static void test_inventory_selection(void)
{
	g_autofree char *path = data_path("good.ini");
	g_autofree char *at = g_strdup_printf("@%s", path);
	struct {
		const char *tags[3];
		const char *names[3];
		guint n;
		const char *first;
	} cases[] = {
		{ { NULL }, { NULL }, 6, "web1" },
		{ { "web", NULL }, { NULL }, 2, "web1" },
		{ { "db", "staging", NULL }, { NULL }, 2, "web2" }, /* any of the tags */
		{ { NULL }, { "web*", NULL }, 2, "web1" },
		{ { NULL }, { "*1", "ind*" }, 4, "web1" },
		{ { "production", NULL }, { "db?", NULL }, 1, "db1" }, /* tags and names */
		{ { NULL }, { "büro-*", NULL }, 1, "büro-ünïcode 1" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		CliTargetOptions opts = { .tags = cases[i].tags[0] != NULL ? cases[i].tags : NULL,
			                  .names =
			                      cases[i].names[0] != NULL ? cases[i].names : NULL };
		const char *texts[] = { at, NULL };
		g_autoptr(GError) error = NULL;
		g_autoptr(GPtrArray) targets = cli_targets_resolve(texts, &opts, &error);

		g_assert_no_error(error);
		g_assert_cmpuint(targets->len, ==, cases[i].n);
		g_assert_cmpstr(((CliTarget *)g_ptr_array_index(targets, 0))->name, ==,
		                cases[i].first);
	}
}

static void test_inventory_resolve_errors(void)
{
	g_autofree char *path = data_path("good.ini");
	g_autofree char *at = g_strdup_printf("@%s", path);
	const char *tags[] = { "nope", NULL };
	const char *names[] = { "x*", NULL };
	const char *inventories[] = { path, NULL };
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) targets = NULL;

	{
		CliTargetOptions opts = { .tags = tags, .names = names };
		const char *texts[] = { at, "/other.sock", NULL };
		targets = cli_targets_resolve(texts, &opts, &error);
		g_assert_null(targets);
		g_assert_cmpstr(error->message, ==,
		                "no inventory guest matches --tag 'nope' --name 'x*'");
		g_clear_error(&error);
	}
	{
		CliTargetOptions opts = { .tags = tags };
		const char *texts[] = { "/a.sock", NULL };
		targets = cli_targets_resolve(texts, &opts, &error);
		g_assert_null(targets);
		g_assert_nonnull(
		    strstr(error->message, "selects guests of an inventory, but none"));
		g_clear_error(&error);
	}
	{
		/* the same inventory twice: every guest is a duplicate */
		CliTargetOptions opts = { .inventories = inventories };
		const char *texts[] = { at, NULL };
		targets = cli_targets_resolve(texts, &opts, &error);
		g_assert_null(targets);
		g_assert_nonnull(strstr(error->message, "duplicate target [guest web1] at"));
		g_clear_error(&error);
	}
	{
		/* a command-line target that is also an inventory guest */
		const char *texts[] = { "/run/guestbench/web1.sock", at, NULL };
		targets = cli_targets_resolve(texts, NULL, &error);
		g_assert_null(targets);
		g_assert_nonnull(
		    strstr(error->message, "same guest as '/run/guestbench/web1.sock'"));
		g_clear_error(&error);
	}
	{
		const char *texts[] = { "@", NULL };
		targets = cli_targets_resolve(texts, NULL, &error);
		g_assert_null(targets);
		g_assert_cmpstr(error->message, ==, "empty inventory file name");
		g_clear_error(&error);
	}
	{
		/* command-line targets always run; the selection only filters the inventory */
		CliTargetOptions opts = { .tags = (const char *[]){ "db", NULL } };
		const char *texts[] = { "/x.sock", at, NULL };
		targets = cli_targets_resolve(texts, &opts, &error);
		g_assert_no_error(error);
		g_assert_cmpuint(targets->len, ==, 2);
		g_assert_cmpstr(((CliTarget *)g_ptr_array_index(targets, 0))->name, ==, "/x.sock");
		g_assert_cmpstr(((CliTarget *)g_ptr_array_index(targets, 1))->name, ==, "db1");
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/inventory/good", test_inventory_good);
	g_test_add_func("/inventory/example", test_inventory_example);
	g_test_add_func("/inventory/bad-files", test_inventory_bad_files);
	g_test_add_func("/inventory/bad-text", test_inventory_bad_text);
	g_test_add_func("/inventory/unreadable", test_inventory_unreadable);
	g_test_add_func("/inventory/host", test_inventory_host);
	g_test_add_func("/inventory/selection", test_inventory_selection);
	g_test_add_func("/inventory/resolve-errors", test_inventory_resolve_errors);
	return g_test_run();
}
