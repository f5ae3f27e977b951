/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <glib/gstdio.h>

#include "gb-error.h"

#include "commands/cmd-discover.h"
#include "commands/app.h"
#include "commands/commands.h"
#include "fleet/inventory.h"
#include "fleet/libvirt.h"
#include "fleet/resolve.h"

static char *fixture_dir(void)
{
	return g_build_filename(g_getenv("GB_TEST_DATA"), "libvirt", NULL);
}

static CliLibvirtDomain *parse_fixture(const char *name, GError **error)
{
	g_autofree char *dir = fixture_dir();
	g_autofree char *path = g_build_filename(dir, name, NULL);
	g_autofree char *xml = NULL;
	gsize len = 0;

	g_assert_true(g_file_get_contents(path, &xml, &len, NULL));
	return cli_libvirt_domain_parse(xml, len, error);
}

static void test_libvirt_domstatus(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLibvirtDomain) domain = parse_fixture("vm1.xml", &error);

	g_assert_no_error(error);
	g_assert_cmpstr(domain->name, ==, "vm1");
	g_assert_cmpstr(domain->state, ==, "running");
	g_assert_cmpstr(domain->socket, ==,
	                "/var/lib/libvirt/qemu/channel/target/domain-1-vm1/org.guestbench.agent.0");
	g_assert_cmpstr(domain->qga_socket, ==,
	                "/var/lib/libvirt/qemu/channel/target/domain-1-vm1/org.qemu.guest_agent.0");
	g_assert_null(domain->problem);
	g_assert_cmpstr(cli_libvirt_domain_get_socket(domain, &error), ==, domain->socket);
}

static void test_libvirt_plain_domain(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliLibvirtDomain) domain = parse_fixture("vm3-dumpxml.xml", &error);

	g_assert_no_error(error);
	g_assert_cmpstr(domain->name, ==, "vm3");
	g_assert_null(domain->state);
	g_assert_cmpstr(domain->socket, ==,
	                "/var/lib/libvirt/qemu/channel/target/domain-3-vm3/org.guestbench.agent.0");
}

static void test_libvirt_no_channel(void)
{
	struct {
		const char *file;
		const char *needle;
	} cases[] = {
		{ "vm2.xml",
		  "has no <channel> with <target type='virtio' name='org.guestbench.agent.0'/>" },
		{ "bad-pty.xml", "is type 'pty', not 'unix'" },
		{ "bad-nopath.xml", "has no absolute <source path=...>" },
		/* a channel in <domstatus>' own <devices> is not the domain's */
		{ "bad-wrong-level.xml", "has no <channel>" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliLibvirtDomain) domain = parse_fixture(cases[i].file, &error);

		g_assert_no_error(error);
		g_assert_null(domain->socket);
		g_assert_null(cli_libvirt_domain_get_socket(domain, &error));
		g_test_message("%s: %s", cases[i].file, error->message);
		g_assert_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED);
		g_assert_nonnull(strstr(error->message, cases[i].needle));
	}
}

static void test_libvirt_hostile(void)
{
	struct {
		const char *file;
		const char *needle;
	} cases[] = {
		{ "bad-truncated.xml", "invalid domain XML: " },
		{ "bad-entity.xml", "invalid domain XML: " },
		{ "bad-xxe.xml", "invalid domain XML: " },
		{ "bad-root.xml", "root element is <network>" },
		{ "bad-noname.xml", "<domain> has no <name>" },
	};
	const char *inline_cases[][2] = {
		{ "", "Document was empty" },
		{ "<domstatus state='running'/>", "no <domain> element" },
		{ "<domain><name>a</name><name>b</name></domain>", "more than one <name>" },
		{ "<domstatus><domain><name>a</name></domain><domain><name>b</name></domain>"
		  "</domstatus>",
		  "more than one <domain>" },
		{ "<domain><name>a</name><devices><channel type='unix'><target type='virtio' "
		  "name='org.guestbench.agent.0'/></channel></devices></domain>",
		  NULL },
		{ "<domain><name>\xff</name></domain>", "invalid domain XML" },
		{ "<domain><name>a</name><devices><channel type='unix'><source/><target/>"
		  "</channel></devices></domain>",
		  NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliLibvirtDomain) domain = parse_fixture(cases[i].file, &error);

		g_assert_null(domain);
		g_test_message("%s: %s", cases[i].file, error->message);
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
		g_assert_nonnull(strstr(error->message, cases[i].needle));
	}
	for (guint i = 0; i < G_N_ELEMENTS(inline_cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliLibvirtDomain) domain =
		    cli_libvirt_domain_parse(inline_cases[i][0], -1, &error);

		if (inline_cases[i][1] == NULL) {
			/* parses, but the channel is unusable: missing attributes are not a crash
			 */
			g_assert_no_error(error);
			g_assert_null(domain->socket);
			g_assert_null(cli_libvirt_domain_get_socket(domain, &error));
			g_assert_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED);
			continue;
		}
		g_assert_null(domain);
		g_test_message("%u: %s", i, error->message);
		g_assert_nonnull(strstr(error->message, inline_cases[i][1]));
	}
}

static void test_libvirt_huge(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) xml = g_string_new("<domain><name>a</name>");
	g_autoptr(GString) deep = g_string_new("<domain>");
	g_autoptr(CliLibvirtDomain) domain = NULL;
	const char nul[] = "<domain><name>a\0b</name></domain>";

	while (xml->len <= CLI_LIBVIRT_MAX_XML_SIZE)
		g_string_append(xml, "<description>padding padding padding</description>");
	g_string_append(xml, "</domain>");
	domain = cli_libvirt_domain_parse(xml->str, xml->len, &error);
	g_assert_null(domain);
	g_assert_nonnull(strstr(error->message, "larger than"));
	g_clear_error(&error);

	for (guint i = 0; i < 10000; i++)
		g_string_append(deep, "<a>");
	domain = cli_libvirt_domain_parse(deep->str, deep->len, &error);
	g_assert_null(domain);
	g_assert_nonnull(strstr(error->message, "nested deeper than"));
	g_clear_error(&error);

	domain = cli_libvirt_domain_parse(nul, sizeof(nul) - 1, &error);
	g_assert_null(domain);
	g_assert_nonnull(strstr(error->message, "NUL"));
}

static void test_libvirt_names(void)
{
	const char *good[] = { "vm1", "web-01.example", "ünïcödé", "a b" };
	const char *bad[] = { "", "a/b", "..", ".", "a]b", "[a", "a\nb", " a", "a ", "\xff" };

	for (guint i = 0; i < G_N_ELEMENTS(good); i++)
		g_assert_true(cli_libvirt_check_name(good[i], NULL));
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_assert_false(cli_libvirt_check_name(bad[i], &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	}
}

/* A state directory as libvirt keeps it: NAME.xml plus other files. */
static char *make_state_dir(void)
{
	g_autofree char *src = fixture_dir();
	char *dir = g_dir_make_tmp("gb-libvirt-XXXXXX", NULL);
	const char *copies[][2] = {
		{ "vm1.xml", "vm1.xml" },
		{ "vm2.xml", "vm2.xml" },
		{ "bad-truncated.xml", "vm8.xml" },
		{ "vm3-dumpxml.xml", "other.xml" }, /* describes vm3, not "other" */
	};

	for (guint i = 0; i < G_N_ELEMENTS(copies); i++) {
		g_autofree char *from = g_build_filename(src, copies[i][0], NULL);
		g_autofree char *to = g_build_filename(dir, copies[i][1], NULL);
		g_autofree char *data = NULL;
		gsize len = 0;
		g_assert_true(g_file_get_contents(from, &data, &len, NULL));
		g_assert_true(g_file_set_contents(to, data, len, NULL));
	}
	{
		g_autofree char *pid = g_build_filename(dir, "vm1.pid", NULL);
		g_autofree char *sub = g_build_filename(dir, "domain-1-vm1.xml", NULL);
		g_assert_true(g_file_set_contents(pid, "1234", -1, NULL));
		/* a directory with a .xml name is not a domain */
		g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
	}
	return dir;
}

static void rm_state_dir(const char *dir)
{
	const char *names[] = { "vm1.xml", "vm2.xml", "vm8.xml", "other.xml", "vm1.pid", NULL };
	g_autofree char *sub = g_build_filename(dir, "domain-1-vm1.xml", NULL);

	for (guint i = 0; names[i] != NULL; i++) {
		g_autofree char *path = g_build_filename(dir, names[i], NULL);
		g_unlink(path);
	}
	g_rmdir(sub);
	g_rmdir(dir);
}

static void test_libvirt_targets(void)
{
	g_autofree char *dir = make_state_dir();
	CliTargetOptions opts = { .libvirt_dir = dir };
	g_autoptr(GError) error = NULL;
	g_autoptr(CliTarget) vm1 = cli_target_parse_full("libvirt:vm1", &opts, &error);
	g_autoptr(CliTarget) vm2 = NULL;
	g_autoptr(CliTarget) vm8 = NULL;
	g_autoptr(CliTarget) gone = NULL;
	g_autoptr(CliTarget) other = NULL;
	g_autoptr(CliTarget) bad = NULL;
	g_autoptr(GPtrArray) targets = NULL;
	g_autofree char *key = NULL;
	const char *dup[] = { "libvirt:vm1",
		              "/var/lib/libvirt/qemu/channel/target/domain-1-vm1/"
		              "org.guestbench.agent.0",
		              NULL };

	g_assert_no_error(error);
	g_assert_null(vm1->error);
	g_assert_cmpint(vm1->scheme, ==, CLI_TARGET_UNIX);
	g_assert_cmpstr(vm1->text, ==, "libvirt:vm1");
	g_assert_cmpstr(vm1->path, ==,
	                "/var/lib/libvirt/qemu/channel/target/domain-1-vm1/org.guestbench.agent.0");
	key = cli_target_to_key(vm1);
	g_assert_cmpstr(key, ==,
	                "unix:/var/lib/libvirt/qemu/channel/target/domain-1-vm1/"
	                "org.guestbench.agent.0");

	/* only qemu-ga's channel: libvirt holds that socket, so the guest is reached through
	 * libvirt's agent command, never by the path */
	vm2 = cli_target_parse_full("libvirt:vm2", &opts, &error);
	g_assert_no_error(error);
	g_assert_null(vm2->error);
	g_assert_cmpint(vm2->scheme, ==, CLI_TARGET_QGA);
	g_assert_cmpstr(vm2->domain, ==, "vm2");
	g_assert_null(vm2->path);
	/* a domain that cannot be used is the guest's own error, not a usage error */
	vm8 = cli_target_parse_full("libvirt:vm8", &opts, &error);
	g_assert_no_error(error);
	g_test_message("vm8: %s", vm8->error);
	g_assert_nonnull(strstr(vm8->error, "vm8.xml: invalid domain XML"));
	gone = cli_target_parse_full("libvirt:gone", &opts, &error);
	g_assert_no_error(error);
	g_assert_nonnull(strstr(gone->error, "libvirt domain 'gone' is not running (no "));
	other = cli_target_parse_full("libvirt:other", &opts, &error);
	g_assert_no_error(error);
	g_assert_nonnull(strstr(other->error, "describes domain 'vm3', not 'other'"));

	bad = cli_target_parse_full("libvirt:../etc/passwd", &opts, &error);
	g_assert_null(bad);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_clear_error(&error);

	/* the same guest by domain and by socket */
	targets = cli_targets_resolve(dup, &opts, &error);
	g_assert_null(targets);
	g_assert_nonnull(strstr(error->message, "duplicate target"));
	g_clear_error(&error);

	/* the environment names the directory when no option does */
	g_setenv(CLI_LIBVIRT_DIR_ENV, dir, TRUE);
	{
		g_autoptr(CliTarget) env = cli_target_parse("libvirt:vm1", &error);
		g_assert_no_error(error);
		g_assert_null(env->error);
	}
	g_unsetenv(CLI_LIBVIRT_DIR_ENV);
	rm_state_dir(dir);
}

static void test_libvirt_discover(void)
{
	g_autofree char *dir = make_state_dir();
	g_autofree char *out_path = g_build_filename(dir, "out.ini", NULL);
	g_autoptr(CliApp) app = cli_app_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) guests = NULL;
	g_autofree char *text = NULL;
	gsize len = 0;
	const char *argv[] = { "guestbench", "discover", "--libvirt-dir", dir, "-o", NULL, NULL };
	CliTarget *t;
	int rc;

	argv[5] = out_path;
	g_assert_true(cli_app_parse(app, argv, &error));
	g_assert_no_error(error);
	rc = app->command->run(app, &error);
	g_assert_no_error(error);
	/* vm8.xml is broken: that is a failure; vm2 merely lacks the channel */
	g_assert_cmpint(rc, ==, CLI_EXIT_GUEST);
	g_assert_true(g_file_get_contents(out_path, &text, &len, NULL));
	g_test_message("%s", text);
	g_assert_nonnull(strstr(text,
	                        "[guest vm1]\ntarget=unix:/var/lib/libvirt/qemu/channel/"
	                        "target/domain-1-vm1/org.guestbench.agent.0\ntags=libvirt\n"));
	/* qemu-ga's channel only: listed, reached through libvirt as libvirt:vm2 is */
	g_assert_nonnull(strstr(text, "[guest vm2]\ntarget=libvirt:vm2\ntags=libvirt;qga\n"));
	g_assert_null(strstr(text, "libvirt domain 'vm2' has no <channel>"));
	g_assert_nonnull(strstr(text, "vm8.xml: invalid domain XML"));
	g_assert_nonnull(strstr(text, "describes domain 'vm3', not 'other'"));
	g_assert_nonnull(strstr(text, "#   <channel type='unix'>"));
	g_assert_null(strstr(text, "domain-1-vm1.xml"));

	/* what discover writes, the inventory parser reads back */
	guests = cli_inventory_parse(out_path, text, len, NULL, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(guests->len, ==, 2);
	t = g_ptr_array_index(guests, 0);
	g_assert_cmpstr(t->name, ==, "vm1");
	g_assert_cmpstr(t->tags[0], ==, "libvirt");
	t = g_ptr_array_index(guests, 1);
	g_assert_cmpstr(t->name, ==, "vm2");
	g_assert_cmpstr(t->tags[1], ==, "qga");
	g_unlink(out_path);
	rm_state_dir(dir);
}

static void test_libvirt_discover_missing_dir(void)
{
	g_autoptr(CliApp) app = cli_app_new();
	g_autoptr(GError) error = NULL;
	const char *argv[] = { "guestbench", "discover", "--libvirt-dir", "/nonexistent/gb", NULL };
	const char *argv_bad[] = { "guestbench", "discover", "a/b", NULL };
	g_autoptr(CliApp) app2 = cli_app_new();

	g_assert_true(cli_app_parse(app, argv, &error));
	g_assert_cmpint(app->command->run(app, &error), ==, CLI_EXIT_GUEST);
	g_assert_nonnull(strstr(error->message, "cannot list libvirt domains"));
	g_clear_error(&error);
	g_assert_false(cli_app_parse(app2, argv_bad, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
}

/* --libvirt-dir among --connect options leaves them all as given, and they are freed. */
static void test_libvirt_connect_options(void)
{
	g_autoptr(CliApp) app = cli_app_new();
	g_autoptr(GError) error = NULL;
	const char *argv[] = {
		"guestbench",      "ping",      "--connect",     "test:///default", "--libvirt-dir",
		"/nonexistent/gb", "--connect", "test:///other", "libvirt:test",    NULL
	};

	g_assert_true(cli_app_parse(app, argv, &error));
	g_assert_no_error(error);
	g_assert_cmpstr(app->opts.libvirt_dir, ==, "/nonexistent/gb");
	g_assert_nonnull(app->opts.connect);
	g_assert_cmpuint(g_strv_length(app->opts.connect), ==, 2);
	g_assert_cmpstr(app->opts.connect[0], ==, "test:///default");
	g_assert_cmpstr(app->opts.connect[1], ==, "test:///other");
}

/*
 * libvirt:DOMAIN through the API on libvirt's test driver (the real library,
 * no daemon): test:///default has one running domain, "test", without a
 * guestbench channel. Never the default URI: the machine's libvirtd is not ours.
 */
static void test_libvirt_api_test_driver(void)
{
	const char *const uris[] = { "test:///default", NULL };
	CliTargetOptions opts = { .connect = uris };
	g_autoptr(GError) error = NULL;
	g_autoptr(CliTarget) test = NULL;
	g_autoptr(CliTarget) nope = NULL;
	g_autoptr(GPtrArray) all = NULL;

	g_unsetenv(CLI_LIBVIRT_DIR_ENV);
	test = cli_target_parse_full("libvirt:test", &opts, &error);
	g_assert_no_error(error);
#ifdef HAVE_LIBVIRT
	g_test_message("%s", test->error);
	g_assert_cmpstr(test->domain, ==, "test");
	g_assert_cmpstr(test->uri, ==, "test:///default");
	g_assert_null(test->host);
	g_assert_nonnull(strstr(test->error, "libvirt domain 'test' has no <channel> with "));
	g_assert_nonnull(strstr(test->error, "path='/run/guestbench/DOMAIN.sock'"));
	nope = cli_target_parse_full("libvirt:nope", &opts, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(nope->error, ==, "no domain 'nope' on test:///default");
	all = cli_targets_from_libvirt(uris, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(all->len, ==, 1);
	g_assert_cmpstr(((CliTarget *)g_ptr_array_index(all, 0))->name, ==, "test");
#else
	/* without libvirt the guest's error says what is missing and what still works */
	g_test_message("%s", test->error);
	g_assert_nonnull(strstr(test->error, "built without libvirt"));
	g_assert_nonnull(strstr(test->error, "--libvirt-dir"));
	all = cli_targets_from_libvirt(uris, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(all->len, ==, 1);
	g_assert_nonnull(
	    strstr(((CliTarget *)g_ptr_array_index(all, 0))->error, "built without libvirt"));
	(void)nope;
#endif
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/libvirt/domstatus", test_libvirt_domstatus);
	g_test_add_func("/libvirt/plain-domain", test_libvirt_plain_domain);
	g_test_add_func("/libvirt/no-channel", test_libvirt_no_channel);
	g_test_add_func("/libvirt/hostile", test_libvirt_hostile);
	g_test_add_func("/libvirt/huge", test_libvirt_huge);
	g_test_add_func("/libvirt/names", test_libvirt_names);
	g_test_add_func("/libvirt/targets", test_libvirt_targets);
	g_test_add_func("/libvirt/discover", test_libvirt_discover);
	g_test_add_func("/libvirt/discover-missing-dir", test_libvirt_discover_missing_dir);
	g_test_add_func("/libvirt/connect-options", test_libvirt_connect_options);
	g_test_add_func("/libvirt/api-test-driver", test_libvirt_api_test_driver);
	return g_test_run();
}
