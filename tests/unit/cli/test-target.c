/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "gb-error.h"
#include "fleet/target.h"
#include "fleet/resolve.h"

static void test_target_unix(void)
{
	struct {
		const char *text;
		const char *path;
	} good[] = {
		{ "unix:/run/guest.sock", "/run/guest.sock" },
		{ "/run/guest.sock", "/run/guest.sock" },
		{ "./guest.sock", "./guest.sock" },
		{ "guest.sock", "guest.sock" },
		{ "/odd:name/with:colons", "/odd:name/with:colons" },
		{ "Upper:case", "Upper:case" }, /* not a scheme: schemes are lower-case */
		{ "unix:relative", "relative" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliTarget) target = cli_target_parse(good[i].text, &error);

		g_assert_no_error(error);
		g_assert_nonnull(target);
		g_assert_cmpint(target->scheme, ==, CLI_TARGET_UNIX);
		g_assert_cmpstr(target->path, ==, good[i].path);
		g_assert_cmpstr(target->text, ==, good[i].text);
		g_assert_cmpstr(target->name, ==, good[i].text);
	}
}

static void test_target_vsock(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliTarget) target = cli_target_parse("vsock:3:1234", &error);
	g_autofree char *key = NULL;

	g_assert_no_error(error);
	g_assert_cmpint(target->scheme, ==, CLI_TARGET_VSOCK);
	g_assert_cmpuint(target->cid, ==, 3);
	g_assert_cmpuint(target->port, ==, 1234);
	key = cli_target_to_key(target);
	g_assert_cmpstr(key, ==, "vsock:3:1234");
}

static void test_target_qga(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliTarget) target = cli_target_parse("qga:/run/qga.sock", &error);
	g_autoptr(CliTarget) plain = cli_target_parse("unix:/run/qga.sock", NULL);
	g_autofree char *key = NULL;
	g_autofree char *plain_key = NULL;

	g_assert_no_error(error);
	g_assert_cmpint(target->scheme, ==, CLI_TARGET_QGA);
	g_assert_cmpstr(target->path, ==, "/run/qga.sock");
	g_assert_null(target->agent_path);
	key = cli_target_to_key(target);
	g_assert_cmpstr(key, ==, "qga:/run/qga.sock");
	/* another way of talking to that socket, so not the same target */
	plain_key = cli_target_to_key(plain);
	g_assert_cmpstr(key, !=, plain_key);
}

/* What a session is opened with: the kind and the strings of the target, borrowed. */
static void test_target_address(void)
{
	g_autoptr(CliTarget) unix_target = cli_target_parse("unix:/run/a.sock", NULL);
	g_autoptr(CliTarget) vsock = cli_target_parse("vsock:3:1234", NULL);
	g_autoptr(CliTarget) qga = cli_target_parse("qga:/run/qga.sock", NULL);
	g_autoptr(CliTarget) domain = cli_target_parse("qga:/run/qga.sock", NULL);
	g_autoptr(CliAddress) copy = NULL;
	CliAddress address;

	cli_target_get_address(unix_target, &address);
	g_assert_cmpint(address.kind, ==, CLI_ADDRESS_UNIX);
	g_assert_true(address.path == unix_target->path);
	g_assert_cmpstr(address.text, ==, "unix:/run/a.sock");
	g_assert_null(address.domain);
	g_assert_null(address.agent_path);

	cli_target_get_address(vsock, &address);
	g_assert_cmpint(address.kind, ==, CLI_ADDRESS_VSOCK);
	g_assert_cmpuint(address.cid, ==, 3);
	g_assert_cmpuint(address.port, ==, 1234);
	g_assert_null(address.path);

	qga->agent_path = g_strdup("/opt/gb/agent");
	cli_target_get_address(qga, &address);
	g_assert_cmpint(address.kind, ==, CLI_ADDRESS_QGA);
	g_assert_cmpstr(address.path, ==, "/run/qga.sock");
	g_assert_cmpstr(address.agent_path, ==, "/opt/gb/agent");
	copy = cli_address_copy(&address);
	g_assert_true(copy->path != address.path);
	g_assert_cmpstr(copy->path, ==, "/run/qga.sock");
	g_assert_cmpstr(copy->text, ==, "qga:/run/qga.sock");
	g_assert_cmpstr(copy->agent_path, ==, "/opt/gb/agent");

	/* libvirt:DOMAIN with only qemu-ga's channel, as cli_target_parse_full() leaves it */
	g_clear_pointer(&domain->path, g_free);
	domain->domain = g_strdup("vm2");
	cli_target_get_address(domain, &address);
	g_assert_cmpint(address.kind, ==, CLI_ADDRESS_QGA_DOMAIN);
	g_assert_cmpstr(address.domain, ==, "vm2");
	g_assert_null(address.path);
}

static void test_target_bad(void)
{
	struct {
		const char *text;
		gint code;
		const char *needle;
	} bad[] = {
		{ "", GB_ERROR_INVALID_ARGUMENT, "empty" },
		{ "unix:", GB_ERROR_INVALID_ARGUMENT, "empty socket path" },
		{ "foo:bar", GB_ERROR_INVALID_ARGUMENT, "unknown scheme 'foo:'" },
		{ "http://x", GB_ERROR_INVALID_ARGUMENT, "unknown scheme 'http:'" },
		{ "vsock:", GB_ERROR_INVALID_ARGUMENT, "expected vsock:CID:PORT" },
		{ "vsock:3", GB_ERROR_INVALID_ARGUMENT, "expected vsock:CID:PORT" },
		{ "vsock::1", GB_ERROR_INVALID_ARGUMENT, "CID is empty" },
		{ "vsock:3:", GB_ERROR_INVALID_ARGUMENT, "PORT is empty" },
		{ "vsock:x:1", GB_ERROR_INVALID_ARGUMENT, "CID 'x' is not a number" },
		{ "vsock:-1:1", GB_ERROR_INVALID_ARGUMENT, "CID '-1' is not a number" },
		{ "vsock:+3:1", GB_ERROR_INVALID_ARGUMENT, "CID '+3' is not a number" },
		{ "vsock: 3:1", GB_ERROR_INVALID_ARGUMENT, "CID ' 3' is not a number" },
		{ "vsock:3:1:2", GB_ERROR_INVALID_ARGUMENT, "PORT '1:2' is not a number" },
		{ "vsock:3:4294967296", GB_ERROR_INVALID_ARGUMENT, "PORT '4294967296'" },
		{ "vsock:99999999999999999999:1", GB_ERROR_INVALID_ARGUMENT, "is not a number" },
		{ "vsock:3:0x10", GB_ERROR_INVALID_ARGUMENT, "PORT '0x10'" },
		{ "vsock:0:1", GB_ERROR_INVALID_ARGUMENT, "CID 0 cannot be connected to" },
		{ "vsock:4294967295:1", GB_ERROR_INVALID_ARGUMENT, "CID 4294967295" },
		{ "vsock:3:4294967295", GB_ERROR_INVALID_ARGUMENT, "PORT 4294967295" },
		{ "qga:", GB_ERROR_INVALID_ARGUMENT, "empty socket path" },
		{ "\xff\xfe", GB_ERROR_INVALID_ARGUMENT, "UTF-8" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliTarget) target = cli_target_parse(bad[i].text, &error);

		g_assert_null(target);
		g_assert_error(error, GB_ERROR, bad[i].code);
		g_test_message("'%s': %s", bad[i].text, error->message);
		g_assert_nonnull(strstr(error->message, bad[i].needle));
	}
}

static void test_target_long_path(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = g_strnfill(200, 'a');
	g_autofree char *text = g_strdup_printf("/%s", path);
	g_autoptr(CliTarget) target = cli_target_parse(text, &error);
	g_autofree char *fits = g_strdup_printf("/%.*s", 106, path);
	g_autoptr(CliTarget) target2 = NULL;

	g_assert_null(target);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "longer than 107 bytes"));
	g_clear_error(&error);
	/* exactly the longest path sun_path can hold with its NUL */
	target2 = cli_target_parse(fits, &error);
	g_assert_no_error(error);
	g_assert_nonnull(target2);
}

static void test_targets_duplicate(void)
{
	const char *dup1[] = { "unix:/a", "/b", "/a", NULL };
	const char *dup2[] = { "vsock:3:1", "vsock:3:01", NULL };
	const char *good[] = { "/a", "/b", "vsock:3:1", "vsock:4:1", NULL };
	const char *bad[] = { "/a", "nope:x", NULL };
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) targets = NULL;

	targets = cli_targets_parse(dup1, &error);
	g_assert_null(targets);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "duplicate target '/a'"));
	g_assert_nonnull(strstr(error->message, "unix:/a"));
	g_clear_error(&error);

	targets = cli_targets_parse(dup2, &error);
	g_assert_null(targets);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_clear_error(&error);

	targets = cli_targets_parse(bad, &error);
	g_assert_null(targets);
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_clear_error(&error);

	targets = cli_targets_parse(good, &error);
	g_assert_no_error(error);
	g_assert_cmpuint(targets->len, ==, 4);
	for (guint i = 0; i < targets->len; i++) {
		CliTarget *target = g_ptr_array_index(targets, i);
		g_assert_cmpstr(target->text, ==, good[i]);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/cli/target/unix", test_target_unix);
	g_test_add_func("/cli/target/vsock", test_target_vsock);
	g_test_add_func("/cli/target/qga", test_target_qga);
	g_test_add_func("/cli/target/address", test_target_address);
	g_test_add_func("/cli/target/bad", test_target_bad);
	g_test_add_func("/cli/target/long-path", test_target_long_path);
	g_test_add_func("/cli/target/duplicate", test_targets_duplicate);
	return g_test_run();
}
