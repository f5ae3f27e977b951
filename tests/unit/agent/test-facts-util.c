/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <glib/gstdio.h>
#include <unistd.h>

#include "util.h"

typedef struct {
	char *root;
} Fixture;

static void put(const char *root, const char *path, const char *data, gssize len)
{
	g_autofree char *full = g_build_filename(root, path, NULL);
	g_autofree char *dir = g_path_get_dirname(full);
	g_autoptr(GError) error = NULL;

	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	g_file_set_contents(full, data, len, &error);
	g_assert_no_error(error);
}

static void mklink(const char *root, const char *path, const char *target)
{
	g_autofree char *full = g_build_filename(root, path, NULL);
	g_autofree char *dir = g_path_get_dirname(full);

	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	g_assert_cmpint(symlink(target, full), ==, 0);
}

static void fixture_setup(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	fx->root = g_dir_make_tmp("gb-facts-util-XXXXXX", &error);
	g_assert_no_error(error);
	put(fx->root, "sys/devices/pci0/virtio1/block/vda/size", " 2048\n", -1);
	put(fx->root, "sys/bus/virtio/drivers/virtio_blk/.keep", "", 0);
	mklink(fx->root, "sys/block/vda", "../devices/pci0/virtio1/block/vda");
	mklink(fx->root, "sys/devices/pci0/virtio1/block/vda/device", "../../../virtio1");
	mklink(fx->root, "sys/devices/pci0/virtio1/driver",
	       "../../../bus/virtio/drivers/virtio_blk");
	mklink(fx->root, "etc/abs", "/sys/block/vda/size");
	mklink(fx->root, "etc/escape", "../../../../../../../etc/passwd");
	mklink(fx->root, "etc/escape2", "../sys/../../etc");
	mklink(fx->root, "etc/loop1", "loop2");
	mklink(fx->root, "etc/loop2", "loop1");
	mklink(fx->root, "etc/dangling", "nothing-here");
	put(fx->root, "data/binary", "ab\0cd", 5);
	put(fx->root, "data/latin1", "caf\xe9", 4);
	put(fx->root, "data/empty", "", 0);
	put(fx->root, "data/text", "  hello world \n\n", -1);
	put(fx->root, "data/dir/x", "", 0);
}

static void rm_rf(const char *path)
{
	GDir *dir;
	const char *name;

	if (g_file_test(path, G_FILE_TEST_IS_SYMLINK) || !g_file_test(path, G_FILE_TEST_IS_DIR)) {
		g_unlink(path);
		return;
	}
	dir = g_dir_open(path, 0, NULL);
	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *child = g_build_filename(path, name, NULL);
		rm_rf(child);
	}
	if (dir != NULL)
		g_dir_close(dir);
	g_rmdir(path);
}

static void fixture_teardown(Fixture *fx, gconstpointer data)
{
	rm_rf(fx->root);
	g_free(fx->root);
}

static void test_resolve(Fixture *fx, gconstpointer data)
{
	struct {
		const char *path;
		const char *expect; /* NULL: fails */
		const char *reason;
	} cases[] = {
		{ "/sys/block/vda", "/sys/devices/pci0/virtio1/block/vda", NULL },
		{ "/sys/block/vda/device", "/sys/devices/pci0/virtio1", NULL },
		{ "/sys/block/vda/device/driver", "/sys/bus/virtio/drivers/virtio_blk", NULL },
		{ "sys//block/./vda/../vda/size", "/sys/devices/pci0/virtio1/block/vda/size",
		  NULL },
		{ "/", "/", NULL },
		/* Absolute targets restart at the sysroot, like a chroot. */
		{ "/etc/abs", "/sys/devices/pci0/virtio1/block/vda/size", NULL },
		{ "/etc/escape", NULL, "escapes the sysroot" },
		{ "/etc/escape2", NULL, "escapes the sysroot" },
		{ "/..", NULL, "escapes the sysroot" },
		{ "/etc/loop1", NULL, "Too many levels of symbolic links" },
		{ "/etc/dangling", NULL, "No such file or directory" },
		{ "/nonexistent/x", NULL, "No such file or directory" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *got = agent_facts_resolve(fx->root, cases[i].path, &error);

		g_test_message("resolve %s -> %s", cases[i].path, got ? got : error->message);
		if (cases[i].expect != NULL) {
			g_assert_no_error(error);
			g_assert_cmpstr(got, ==, cases[i].expect);
		} else {
			g_assert_null(got);
			g_assert_error(error, GB_ERROR, GB_ERROR_IO);
			g_assert_nonnull(strstr(error->message, cases[i].reason));
			g_assert_true(g_str_has_prefix(error->message, cases[i].path));
		}
	}
}

static void test_read(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *text = NULL;
	g_autofree char *big = NULL;
	gint64 val = 0;

	text = agent_facts_read_line(fx->root, "/data/text", &error);
	g_assert_no_error(error);
	g_assert_cmpstr(text, ==, "hello world");
	g_clear_pointer(&text, g_free);

	text = agent_facts_read_text(fx->root, "/data/empty", &error);
	g_assert_no_error(error);
	g_assert_cmpstr(text, ==, "");
	g_clear_pointer(&text, g_free);

	g_assert_true(agent_facts_read_int(fx->root, "/sys/block/vda/size", 0, 4096, &val, &error));
	g_assert_no_error(error);
	g_assert_cmpint(val, ==, 2048);
	g_assert_false(agent_facts_read_int(fx->root, "/sys/block/vda/size", 0, 100, &val, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
	g_assert_cmpstr(error->message, ==, "/sys/block/vda/size: invalid number '2048'");
	g_clear_error(&error);
	g_assert_false(agent_facts_read_int(fx->root, "/data/empty", 0, 100, &val, &error));
	g_assert_cmpstr(error->message, ==, "/data/empty: empty value");
	g_clear_error(&error);

	text = agent_facts_read_text(fx->root, "/data/binary", &error);
	g_assert_null(text);
	g_assert_cmpstr(error->message, ==, "/data/binary: binary data");
	g_clear_error(&error);

	text = agent_facts_read_text(fx->root, "/data/latin1", &error);
	g_assert_null(text);
	g_assert_cmpstr(error->message, ==, "/data/latin1: not valid UTF-8");
	g_clear_error(&error);

	text = agent_facts_read_text(fx->root, "/data/dir", &error);
	g_assert_null(text);
	g_assert_cmpstr(error->message, ==, "/data/dir: Is a directory");
	g_clear_error(&error);

	text = agent_facts_read_text(fx->root, "/etc/escape", &error);
	g_assert_null(text);
	g_assert_cmpstr(error->message, ==, "/etc/escape: a symlink escapes the sysroot");
	g_clear_error(&error);

	/* One byte over the cap is refused, not truncated. */
	big = g_malloc0(AGENT_FACTS_MAX_FILE_SIZE + 1);
	memset(big, 'x', AGENT_FACTS_MAX_FILE_SIZE + 1);
	put(fx->root, "data/big", big, AGENT_FACTS_MAX_FILE_SIZE + 1);
	text = agent_facts_read_text(fx->root, "/data/big", &error);
	g_assert_null(text);
	g_assert_nonnull(strstr(error->message, "larger than"));
	g_clear_error(&error);
	put(fx->root, "data/big", big, AGENT_FACTS_MAX_FILE_SIZE);
	text = agent_facts_read_text(fx->root, "/data/big", &error);
	g_assert_no_error(error);
	g_assert_cmpuint(strlen(text), ==, AGENT_FACTS_MAX_FILE_SIZE);
}

/* Root reads mode-000 files anyway, so this only means something for a user. */
static void test_unreadable(Fixture *fx, gconstpointer data)
{
	g_autofree char *full = g_build_filename(fx->root, "data", "text", NULL);
	g_autoptr(GError) error = NULL;
	g_autofree char *text = NULL;

	if (getuid() == 0) {
		g_test_skip("root can read mode 000 files; the broken fixtures use a directory "
		            "where a file is expected instead");
		return;
	}
	g_assert_cmpint(g_chmod(full, 0), ==, 0);
	text = agent_facts_read_text(fx->root, "/data/text", &error);
	g_assert_null(text);
	g_assert_cmpstr(error->message, ==, "/data/text: Permission denied");
}

static void test_list_and_links(Fixture *fx, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) names = agent_facts_list_dir(fx->root, "/etc", &error);
	g_autofree char *drv = NULL;

	g_assert_no_error(error);
	g_assert_cmpuint(names->len, ==, 6);
	g_assert_cmpstr(g_ptr_array_index(names, 0), ==, "abs");
	g_assert_cmpstr(g_ptr_array_index(names, 5), ==, "loop2");
	g_clear_pointer(&names, g_ptr_array_unref);

	names = agent_facts_list_dir(fx->root, "/data/text", &error);
	g_assert_null(names);
	g_assert_cmpstr(error->message, ==, "/data/text: Not a directory");
	g_clear_error(&error);

	drv = agent_facts_link_basename(fx->root, "/sys/block/vda/device/driver", &error);
	g_assert_no_error(error);
	g_assert_cmpstr(drv, ==, "virtio_blk");
	g_assert_true(agent_facts_exists(fx->root, "/sys/block/vda/device"));
	g_assert_false(agent_facts_exists(fx->root, "/sys/block/vda/device/model"));
	g_assert_false(agent_facts_exists(fx->root, "/etc/escape"));
}

static void test_parse_int(void)
{
	struct {
		const char *str;
		gint64 min, max;
		gboolean ok;
		gint64 val;
	} cases[] = {
		{ "42", 0, 100, TRUE, 42 },
		{ " 42\n", 0, 100, TRUE, 42 },
		{ "-1", -1, 100, TRUE, -1 },
		{ "-1", 0, 100, FALSE, 0 },
		{ "101", 0, 100, FALSE, 0 },
		{ "", 0, 100, FALSE, 0 },
		{ "   ", 0, 100, FALSE, 0 },
		{ "4x", 0, 100, FALSE, 0 },
		{ "0x10", 0, 100, FALSE, 0 },
		{ "99999999999999999999", 0, G_MAXINT64, FALSE, 0 },
		{ "9223372036854775807", 0, G_MAXINT64, TRUE, G_MAXINT64 },
		{ "1 2", 0, 100, FALSE, 0 },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		gint64 val = 0;
		gboolean ok =
		    agent_facts_parse_int(cases[i].str, cases[i].min, cases[i].max, &val, &error);

		g_assert_cmpint(ok, ==, cases[i].ok);
		if (ok)
			g_assert_cmpint(val, ==, cases[i].val);
		else
			g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
	}
}

static void test_cpulist(void)
{
	struct {
		const char *str;
		const char *expect; /* joined, or NULL for an error */
	} cases[] = {
		{ "0-3,8,10-11\n", "0,1,2,3,8,10,11" },
		{ "0", "0" },
		{ "", "" },
		{ "\n", "" },
		{ "8,0-1", "0,1,8" },
		{ "3-1", NULL },
		{ "0-", NULL },
		{ "-1", NULL },
		{ "a", NULL },
		{ "0-3,2", NULL },
		{ "0-99999999", NULL },
		{ ",", NULL },
		{ "1,,2", NULL },
		{ "1-2-3", NULL },
		{ "0-65535", "*" },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(GArray) cpus = agent_facts_parse_cpulist(cases[i].str, &error);
		g_autoptr(GString) joined = g_string_new(NULL);

		if (cases[i].expect == NULL) {
			g_assert_null(cpus);
			g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
			continue;
		}
		g_assert_no_error(error);
		if (g_strcmp0(cases[i].expect, "*") == 0) {
			g_assert_cmpuint(cpus->len, ==, 65536);
			continue;
		}
		for (guint j = 0; j < cpus->len; j++)
			g_string_append_printf(joined, "%s%u", j > 0 ? "," : "",
			                       g_array_index(cpus, guint32, j));
		g_assert_cmpstr(joined->str, ==, cases[i].expect);
	}
}

static void test_bracketed(void)
{
	struct {
		const char *str;
		const char *active; /* NULL for an error */
		const char *all;
	} cases[] = {
		{ "none [mq-deadline] kyber bfq \n", "mq-deadline", "none,mq-deadline,kyber,bfq" },
		{ "[none] mq-deadline", "none", "none,mq-deadline" },
		{ "none\n", "none", "none" },
		{ "[none]", "none", "none" },
		{ "always [madvise] never", "madvise", "always,madvise,never" },
		{ "none mq-deadline", NULL, NULL },
		{ "[a] [b]", NULL, NULL },
		{ "", NULL, NULL },
		{ "  \n", NULL, NULL },
		{ "[]", NULL, NULL },
		{ "x[y]", NULL, NULL },
		{ "[x", NULL, NULL },
		{ "[\x01]", NULL, NULL },
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_auto(GStrv) all = NULL;
		g_autofree char *active = agent_facts_parse_bracketed(cases[i].str, &all, &error);
		g_autofree char *joined = NULL;

		if (cases[i].active == NULL) {
			g_assert_null(active);
			g_assert_null(all);
			g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
			continue;
		}
		g_assert_no_error(error);
		g_assert_cmpstr(active, ==, cases[i].active);
		joined = g_strjoinv(",", all);
		g_assert_cmpstr(joined, ==, cases[i].all);
	}
}

static void test_token(void)
{
	g_assert_true(agent_facts_is_token("kvm-clock"));
	g_assert_false(agent_facts_is_token(""));
	g_assert_false(agent_facts_is_token(NULL));
	g_assert_false(agent_facts_is_token("a b"));
	g_assert_false(agent_facts_is_token("a\x01"));
	g_assert_false(agent_facts_is_token("caf\xc3\xa9"));
}

static void test_add_error(void)
{
	g_autoptr(JsonArray) errors = json_array_new();
	AgentFactsContext ctx = { .sysroot = "/", .errors = errors };
	AgentFactsContext none = { .sysroot = "/" };
	JsonObject *obj;

	agent_facts_add_error(&ctx, "memory.thp", "reason");
	/* Without an errors array the entry is dropped, not a crash. */
	agent_facts_add_error(&none, "memory.thp", "reason");
	g_assert_cmpuint(json_array_get_length(errors), ==, 1);
	obj = json_array_get_object_element(errors, 0);
	g_assert_cmpstr(json_object_get_string_member(obj, "member"), ==, "memory.thp");
	g_assert_cmpstr(json_object_get_string_member(obj, "reason"), ==, "reason");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add("/facts/util/resolve", Fixture, NULL, fixture_setup, test_resolve,
	           fixture_teardown);
	g_test_add("/facts/util/read", Fixture, NULL, fixture_setup, test_read, fixture_teardown);
	g_test_add("/facts/util/list-and-links", Fixture, NULL, fixture_setup, test_list_and_links,
	           fixture_teardown);
	g_test_add("/facts/util/unreadable", Fixture, NULL, fixture_setup, test_unreadable,
	           fixture_teardown);
	g_test_add_func("/facts/util/parse-int", test_parse_int);
	g_test_add_func("/facts/util/cpulist", test_cpulist);
	g_test_add_func("/facts/util/bracketed", test_bracketed);
	g_test_add_func("/facts/util/token", test_token);
	g_test_add_func("/facts/util/add-error", test_add_error);
	return g_test_run();
}
