/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host view built from recorded real QMP replies (tests/data/qmp/tcg-*)
 * and crafted host trees (tests/data/qmp/hosts/), the HOST-* rules over it,
 * and host-check against crafted host sysroots and once live.
 */
#include <glib/gstdio.h>
#include <string.h>

#include "analysis/audit.h"
#include "guestbench-protocol.h"
#include "analysis/host-rules.h"
#include "commands/app.h"
#include "commands/cmd-host-check.h"
#include "fleet/host-files.h"
#include "fleet/hostview.h"

static char *data_path(const char *a, const char *b, const char *c)
{
	return g_build_filename(g_getenv("GB_TEST_DATA"), a, b, c, NULL);
}

static JsonNode *load_json(const char *path)
{
	g_autofree char *text = NULL;
	g_autoptr(GError) error = NULL;
	JsonNode *node;

	g_file_get_contents(path, &text, NULL, &error);
	g_assert_no_error(error);
	node = gb_json_parse(text, strlen(text), &error);
	g_assert_no_error(error);
	return node;
}

/* The replies object cli_hostview_build() takes, from a recording directory. */
static JsonObject *load_replies(const char *recording)
{
	const char *const commands[] = { "query-block", "query-cpus-fast", "query-memdev",
		                         "query-kvm", "query-memory-size-summary" };
	JsonObject *replies = json_object_new();
	JsonObject *props = json_object_new();
	JsonObject *m0 = json_object_new();
	JsonObject *m1 = json_object_new();

	for (guint i = 0; i < G_N_ELEMENTS(commands); i++) {
		g_autofree char *file = g_strdup_printf("%s.json", commands[i]);
		g_autofree char *path = data_path("qmp", recording, file);
		g_autoptr(JsonNode) node = load_json(path);
		json_object_set_member(
		    replies, commands[i],
		    json_node_copy(json_object_get_member(json_node_get_object(node), "return")));
	}
	{
		g_autofree char *path =
		    data_path("qmp", recording, "query-cpu-model-expansion-max.json");
		g_autoptr(JsonNode) node = load_json(path);
		json_object_set_member(
		    replies, "query-cpu-model-expansion",
		    json_node_copy(json_object_get_member(json_node_get_object(node), "return")));
	}
	json_object_set_string_member(m0, "type", "memory-backend-ram");
	json_object_set_string_member(m1, "type", "memory-backend-file");
	json_object_set_string_member(m1, "mem-path", "/var/lib/guestbench-rec");
	json_object_set_object_member(props, "m0", m0);
	json_object_set_object_member(props, "m1", m1);
	json_object_set_object_member(replies, "memdev-props", props);
	return replies;
}

static JsonNode *build_view(const char *recording, const char *host)
{
	g_autoptr(JsonObject) replies = load_replies(recording);
	g_autofree char *sysroot = data_path("qmp", "hosts", host);

	return cli_hostview_build(replies, "/run/qmp.sock", 4242, sysroot);
}

static JsonNode *load_facts(const char *name)
{
	g_autofree char *file = g_strdup_printf("%s.expected.json", name);
	g_autofree char *path = data_path("facts", file, NULL);
	return load_json(path);
}

static CliFinding *find(GPtrArray *findings, const char *rule, const char *subject)
{
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		if (g_strcmp0(f->rule, rule) == 0 &&
		    (subject == NULL || g_strcmp0(f->subject, subject) == 0))
			return f;
	}
	return NULL;
}

/* find() that fails the test when there is none. */
static CliFinding *must_find(GPtrArray *findings, const char *rule, const char *subject)
{
	CliFinding *f = find(findings, rule, subject);

	if (f == NULL)
		g_assert_not_reached();
	return f;
}

static void assert_level(GPtrArray *findings, const char *rule, const char *subject, CliLevel level)
{
	CliFinding *f = find(findings, rule, subject);

	if (f == NULL)
		g_test_message("no %s for %s", rule, subject != NULL ? subject : "any subject");
	if (f == NULL)
		g_assert_not_reached();
	if (f->level != level)
		g_test_message("%s %s: %s, expected %s (%s)", rule, subject,
		               cli_level_to_string(f->level), cli_level_to_string(level),
		               f->detail);
	g_assert_cmpstr(cli_level_to_string(f->level), ==, cli_level_to_string(level));
}

static void test_cpulist(void)
{
	const struct {
		const char *text;
		const char *expect; /* joined with "," or NULL for an error */
	} cases[] = {
		{ "0-3", "0,1,2,3" }, { "0-1,8,10-11\n", "0,1,8,10,11" },
		{ "", "" },           { "5,1", "1,5" },
		{ "3-1", NULL },      { "a", NULL },
		{ "1-2-3", NULL },    { "-1", NULL },
		{ "0,,1", NULL },     { "99999999", NULL },
		{ "0-65536", NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(GArray) cpus = cli_host_parse_cpulist(cases[i].text, &error);
		g_autoptr(GString) joined = g_string_new(NULL);

		if (cases[i].expect == NULL) {
			g_assert_null(cpus);
			g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
			continue;
		}
		g_assert_no_error(error);
		for (guint c = 0; c < cpus->len; c++)
			g_string_append_printf(joined, "%s%u", c > 0 ? "," : "",
			                       g_array_index(cpus, guint, c));
		g_assert_cmpstr(joined->str, ==, cases[i].expect);
	}
}

/* Field report 4: vCPUs on node 0, the guest's 16 GiB on node 1. */
static void test_numa_split(void)
{
	g_autoptr(JsonNode) view = build_view("tcg-16g", "numa-split");
	g_autoptr(JsonNode) facts = load_facts("qemu64");
	g_autoptr(GPtrArray) findings = NULL;
	JsonObject *obj = json_node_get_object(view);
	JsonArray *mem = NULL;
	g_auto(GStrv) errors = NULL;
	CliFinding *f;

	g_assert_true(gb_json_get_strv(obj, "errors", GB_JSON_REQUIRED, &errors, NULL));
	g_assert_cmpuint(g_strv_length(errors), ==, 0);
	g_assert_true(gb_json_get_array(obj, "memory_nodes", GB_JSON_REQUIRED, &mem, NULL));
	g_assert_cmpuint(json_array_get_length(mem), ==, 2);

	findings = cli_host_rules_run(json_node_get_object(facts), obj);
	assert_level(findings, "HOST-NUMA-SPLIT", "host-numa", CLI_LEVEL_WARN);
	f = must_find(findings, "HOST-NUMA-SPLIT", NULL);
	g_assert_nonnull(strstr(f->detail, "vCPUs run on node 0 only"));
	g_assert_nonnull(strstr(f->detail, "on node 1"));
	g_assert_nonnull(strstr(f->detail, "16.0 GiB"));
	g_assert_nonnull(strstr(f->hint, "nodeset='0'"));
	/* pinned (to node 0), 16 GiB on 4 KiB pages */
	assert_level(findings, "HOST-VCPU-UNPINNED", "host-vcpus", CLI_LEVEL_PASS);
	assert_level(findings, "HOST-NO-HUGEPAGES", "host-memory", CLI_LEVEL_NOTE);
	/* the recorded drives: none / writeback / unsafe / directsync */
	assert_level(findings, "HOST-CACHE-UNSAFE", "host-block/d0", CLI_LEVEL_PASS);
	assert_level(findings, "HOST-CACHE-NOT-DIRECT", "host-block/d0", CLI_LEVEL_PASS);
	assert_level(findings, "HOST-CACHE-NOT-DIRECT", "host-block/d1", CLI_LEVEL_NOTE);
	assert_level(findings, "HOST-CACHE-UNSAFE", "host-block/d1", CLI_LEVEL_PASS);
	assert_level(findings, "HOST-CACHE-UNSAFE", "host-block/d2", CLI_LEVEL_FAIL);
	g_assert_null(find(findings, "HOST-CACHE-NOT-DIRECT", "host-block/d2"));
	assert_level(findings, "HOST-CACHE-NOT-DIRECT", "host-block/d3", CLI_LEVEL_PASS);
	/* qemu64 hides aes, this host has it: the guest rule, upgraded */
	assert_level(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_FAIL);
	f = must_find(findings, "CPU-NO-AESNI", "cpu");
	g_assert_nonnull(
	    strstr(f->hint, "the host has aes: switch to host-passthrough/host-model"));
	/* and TCG's max model would give aes and pclmulqdq */
	assert_level(findings, "HOST-CPU-HIDDEN", "cpu", CLI_LEVEL_NOTE);
	f = must_find(findings, "HOST-CPU-HIDDEN", "cpu");
	g_assert_nonnull(strstr(f->detail, "aes"));
	g_assert_null(find(findings, "HOST-VIEW-ERRORS", NULL));
	g_assert_cmpint(cli_audit_worst(findings), ==, CLI_LEVEL_FAIL);
}

/* The fix of field report 4: one node, hugepages. */
static void test_numa_local_huge(void)
{
	g_autoptr(JsonNode) view = build_view("tcg-16g", "numa-local-huge");
	g_autoptr(JsonNode) facts = load_facts("cpu-host");
	g_autoptr(GPtrArray) findings = NULL;
	JsonObject *obj = json_node_get_object(view);
	gboolean huge = FALSE;
	gint64 huge_bytes = 0;

	g_assert_true(gb_json_get_bool(obj, "hugepages", GB_JSON_REQUIRED, &huge, NULL));
	g_assert_true(huge);
	g_assert_true(gb_json_get_int(obj, "hugepage_bytes", GB_JSON_REQUIRED, 0, G_MAXINT64,
	                              &huge_bytes, NULL));
	g_assert_cmpint(huge_bytes, ==, 16LL * 1024 * 1024 * 1024);
	findings = cli_host_rules_run(json_node_get_object(facts), obj);
	assert_level(findings, "HOST-NUMA-SPLIT", "host-numa", CLI_LEVEL_PASS);
	assert_level(findings, "HOST-NO-HUGEPAGES", "host-memory", CLI_LEVEL_PASS);
	assert_level(findings, "HOST-VCPU-UNPINNED", "host-vcpus", CLI_LEVEL_PASS);
	/* the guest has aes: no upgraded finding */
	g_assert_null(find(findings, "CPU-NO-AESNI", NULL));
}

static void test_unpinned(void)
{
	g_autoptr(JsonNode) view = build_view("tcg-16g", "unpinned");
	g_autoptr(JsonNode) facts = load_facts("qemu64");
	g_autoptr(GPtrArray) findings = NULL;
	CliFinding *f;

	findings = cli_host_rules_run(json_node_get_object(facts), json_node_get_object(view));
	assert_level(findings, "HOST-VCPU-UNPINNED", "host-vcpus", CLI_LEVEL_NOTE);
	f = must_find(findings, "HOST-VCPU-UNPINNED", NULL);
	g_assert_nonnull(strstr(f->detail, "2 of 2 vCPU threads may run on any of the host's 8"));
	/* vCPUs roam both nodes: not a split */
	g_assert_null(find(findings, "HOST-NUMA-SPLIT", NULL));
	/* this host has no aes to offer: the guest rule stays the guest audit's */
	g_assert_null(find(findings, "CPU-NO-AESNI", NULL));
}

/*
 * A model offering mitigation bits the guest does not see: the TCG recording's
 * expansion with md-clear, spec-ctrl and ssbd on, as KVM's host model has them
 * on an Intel host that has them.
 */
static void test_cpu_hidden_spec_ctrl(void)
{
	g_autoptr(JsonObject) replies = load_replies("tcg-16g");
	g_autofree char *sysroot = data_path("qmp", "hosts", "numa-split");
	JsonObject *expansion = json_object_get_object_member(replies, "query-cpu-model-expansion");
	JsonObject *props = json_object_get_object_member(
	    json_object_get_object_member(expansion, "model"), "props");
	g_autoptr(JsonNode) view = NULL;
	g_autoptr(JsonNode) qemu64 = load_facts("qemu64");
	g_autoptr(JsonNode) host = load_facts("cpu-host");
	g_autoptr(GPtrArray) f64 = NULL;
	g_autoptr(GPtrArray) fhost = NULL;
	g_auto(GStrv) offer = NULL;
	JsonObject *cpu_offer = NULL;
	CliFinding *f;

	json_object_set_boolean_member(props, "md-clear", TRUE);
	json_object_set_boolean_member(props, "spec-ctrl", TRUE);
	json_object_set_boolean_member(props, "ssbd", TRUE);
	view = cli_hostview_build(replies, "/run/qmp.sock", 4242, sysroot);
	g_assert_true(gb_json_get_object(json_node_get_object(view), "cpu_offer", GB_JSON_REQUIRED,
	                                 &cpu_offer, NULL));
	g_assert_true(gb_json_get_strv(cpu_offer, "flags", GB_JSON_REQUIRED, &offer, NULL));
	g_assert_true(g_strv_contains((const char *const *)offer, "md_clear"));
	g_assert_true(g_strv_contains((const char *const *)offer, "spec_ctrl"));
	g_assert_false(g_strv_contains((const char *const *)offer, "virt_ssbd"));

	f64 = cli_host_rules_run(json_node_get_object(qemu64), json_node_get_object(view));
	f = must_find(f64, "HOST-CPU-HIDDEN", "cpu");
	g_test_message("%s / %s", f->detail, f->hint);
	g_assert_nonnull(strstr(f->detail, "md_clear, spec_ctrl, ssbd"));
	g_assert_nonnull(strstr(f->hint, "-cpu MODEL,+md-clear,+spec-ctrl,+ssbd"));
	g_assert_nonnull(strstr(f->hint, "<feature policy='require' name='md-clear'/>"));
	/* the host model's guest sees md_clear (and arch_capabilities) but not the other two */
	fhost = cli_host_rules_run(json_node_get_object(host), json_node_get_object(view));
	f = must_find(fhost, "HOST-CPU-HIDDEN", "cpu");
	g_assert_null(strstr(f->detail, "md_clear"));
	g_assert_nonnull(strstr(f->detail, "spec_ctrl, ssbd"));
	g_assert_nonnull(strstr(f->hint, "-cpu MODEL,+spec-ctrl,+ssbd"));
}

/* Without guest facts the host-only rules still run. */
static void test_no_facts(void)
{
	g_autoptr(JsonNode) view = build_view("tcg-4drives", "numa-split");
	g_autoptr(GPtrArray) findings = cli_host_rules_run(NULL, json_node_get_object(view));

	assert_level(findings, "HOST-CACHE-UNSAFE", "host-block/d2", CLI_LEVEL_FAIL);
	g_assert_null(find(findings, "CPU-NO-AESNI", NULL));
	g_assert_null(find(findings, "HOST-CPU-HIDDEN", NULL));
	/* 256 MiB guest: hugepages are not worth a note */
	assert_level(findings, "HOST-NO-HUGEPAGES", "host-memory", CLI_LEVEL_PASS);
	/* the crafted tree has threads of the 16g recording, not these: said so */
	assert_level(findings, "HOST-VIEW-ERRORS", "host", CLI_LEVEL_NOTE);
}

static void test_merge(void)
{
	g_autoptr(JsonNode) view = build_view("tcg-16g", "numa-split");
	g_autoptr(JsonNode) facts = load_facts("qemu64");
	g_autoptr(GPtrArray) findings = cli_audit_run(json_node_get_object(facts));
	g_autoptr(GPtrArray) host = NULL;
	CliFinding *before = must_find(findings, "CPU-NO-AESNI", "cpu");
	guint n_before = findings->len;
	guint n_host;
	guint n_aes = 0;

	g_assert_nonnull(before);
	g_assert_cmpint(before->level, ==, CLI_LEVEL_FAIL);
	host = cli_host_rules_run(json_node_get_object(facts), json_node_get_object(view));
	n_host = host->len;
	cli_host_rules_merge(findings, host);
	g_assert_cmpuint(host->len, ==, 0);
	/* the upgraded CPU-NO-AESNI replaced the guest's, everything else was appended */
	g_assert_cmpuint(findings->len, ==, n_before + n_host - 1);
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		if (g_strcmp0(f->rule, "CPU-NO-AESNI") == 0) {
			n_aes++;
			g_assert_nonnull(strstr(f->hint, "the host has aes"));
		}
	}
	g_assert_cmpuint(n_aes, ==, 1);
}

/* Replies of the wrong shape: notes, never criticals or crashes. */
static void test_hostile_replies(void)
{
	const char *const bad[] = {
		"{\"query-block\": 5}",
		"{\"query-block\": [1, {\"device\": 3}, {\"inserted\": {\"drv\": \"raw\"}}]}",
		"{\"query-block\": [{\"device\": \"d0\", \"inserted\": {\"drv\": \"raw\", "
		"\"file\": "
		"\"/x\", \"cache\": {\"writeback\": \"yes\", \"direct\": true, \"no-flush\": "
		"false}}}]}",
		"{\"query-cpus-fast\": [{\"cpu-index\": -1, \"thread-id\": 5}, {\"thread-id\": "
		"\"x\"}]}",
		"{\"query-memdev\": [{\"size\": -5}, {\"id\": \"m0\", \"size\": 1, \"host-nodes\": "
		"[\"a\"]}], \"memdev-props\": {\"m0\": 7}}",
		"{\"query-kvm\": [], \"query-memory-size-summary\": {\"base-memory\": \"big\"}}",
		"{\"query-cpu-model-expansion\": {\"model\": {\"name\": 1}}}",
		"{\"errors\": {\"query-memdev\": 5, \"query-kvm\": \"The command query-kvm has not "
		"been found\"}}",
		"{\"libvirt\": 5}",
		"{\"libvirt\": {\"xml\": \"<domain><devices><disk>\"}}",
		"{\"libvirt\": {\"xml\": \"<network/>\"}}",
		"{\"libvirt\": {\"host\": \"hv1\", \"pinning\": {\"host_cpus\": 0, \"vcpus\": "
		"[1]}}}",
		"{\"libvirt\": {\"host\": \"hv1\", \"pinning\": {\"host_cpus\": 4, \"vcpus\": "
		"[\"x\"], "
		"\"emulator\": \"0-\"}}, \"query-cpus-fast\": [{\"cpu-index\": 0, \"thread-id\": "
		"5}]}",
	};
	g_autofree char *sysroot = data_path("qmp", "hosts", "numa-split");

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) replies = gb_json_parse(bad[i], strlen(bad[i]), &error);
		g_autoptr(JsonNode) view = NULL;
		g_autoptr(GPtrArray) findings = NULL;
		g_auto(GStrv) errors = NULL;

		g_assert_no_error(error);
		view = cli_hostview_build(json_node_get_object(replies), "q", 4242, sysroot);
		g_assert_true(gb_json_get_strv(json_node_get_object(view), "errors",
		                               GB_JSON_REQUIRED, &errors, NULL));
		g_assert_cmpuint(g_strv_length(errors), >, 0);
		findings = cli_host_rules_run(NULL, json_node_get_object(view));
		assert_level(findings, "HOST-VIEW-ERRORS", "host", CLI_LEVEL_NOTE);
	}
}

/* A host view that is not what cli_hostview_build() makes. */
static void test_hostile_view(void)
{
	const char *const bad[] = {
		/* well-formed but empty: no findings to make, nothing to complain about */
		"{}",
		"{\"host_nodes\": [{}, {}], \"vcpus\": [{\"nodes\": [0]}], \"memory_nodes\": "
		"[{\"node\": 0, \"bytes\": 0}]}",
		"{\"block\": 1, \"vcpus\": \"x\", \"host_nodes\": null, \"errors\": 3}",
		"{\"block\": [{\"device\": 1}], \"vcpus\": [{\"cpus_allowed\": [\"a\"]}], "
		"\"host_cpus\": -1}",
		"{\"host_nodes\": [{}, {}], \"vcpus\": [{\"nodes\": [0]}], \"memory_nodes\": "
		"[{\"node\": 1, \"bytes\": -1}]}",
		"{\"memory_bytes\": \"8G\", \"cpu_offer\": {\"model\": \"max\", \"flags\": 5}, "
		"\"host_cpu_flags\": {}}",
	};
	g_autoptr(JsonNode) facts = load_facts("qemu64");

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) view = gb_json_parse(bad[i], strlen(bad[i]), &error);
		g_autoptr(GPtrArray) findings = NULL;

		g_assert_no_error(error);
		findings =
		    cli_host_rules_run(json_node_get_object(facts), json_node_get_object(view));
		g_assert_nonnull(findings);
		g_assert_null(find(findings, "HOST-NUMA-SPLIT", NULL));
		if (i > 1)
			assert_level(findings, "HOST-VIEW-ERRORS", "host", CLI_LEVEL_NOTE);
		else
			g_assert_null(find(findings, "HOST-VIEW-ERRORS", NULL));
	}
	{
		g_autoptr(GPtrArray) findings = cli_host_rules_run(NULL, NULL);
		assert_level(findings, "HOST-VIEW-ERRORS", "host", CLI_LEVEL_NOTE);
	}
}

static void write_file(const char *root, const char *rel, const char *text)
{
	g_autofree char *path = g_build_filename(root, rel, NULL);
	g_autofree char *dir = g_path_get_dirname(path);

	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void rm_rf(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const char *name;

	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *child = g_build_filename(path, name, NULL);
		if (g_file_test(child, G_FILE_TEST_IS_DIR) &&
		    !g_file_test(child, G_FILE_TEST_IS_SYMLINK))
			rm_rf(child);
		else
			g_unlink(child);
	}
	g_rmdir(path);
}

/* Ugly host files: backwards cpulists, garbage numa_maps, no Cpus_allowed_list. */
static void test_ugly_host(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *root = g_dir_make_tmp("gb-host-XXXXXX", &error);
	g_autoptr(JsonObject) replies = load_replies("tcg-16g");
	g_autoptr(JsonNode) view = NULL;
	g_autoptr(GPtrArray) findings = NULL;
	g_auto(GStrv) errors = NULL;
	g_autofree char *joined = NULL;

	g_assert_no_error(error);
	write_file(root, "sys/devices/system/node/node0/cpulist", "3-1\n");
	write_file(root, "sys/devices/system/node/node1/cpulist", "4-7\n");
	write_file(root, "sys/devices/system/node/nodeX/cpulist", "0\n");
	write_file(root, "proc/4242/task/16644/status", "Name:\tCPU 0/TCG\n");
	write_file(root, "proc/4242/task/16645/status", "Cpus_allowed_list:\tlots\n");
	write_file(root, "proc/4242/numa_maps", "7f00 default N0=12 N1=abc kernelpagesize_kB=4\n");
	write_file(root, "proc/4242/smaps", "Size: lots kB\nKernelPageSize: 2048\n\x01\n");
	write_file(root, "proc/cpuinfo", "processor\t: 0\n");
	view = cli_hostview_build(replies, "q", 4242, root);
	g_assert_true(gb_json_get_strv(json_node_get_object(view), "errors", GB_JSON_REQUIRED,
	                               &errors, NULL));
	joined = g_strjoinv("\n", errors);
	g_assert_nonnull(strstr(joined, "range 3-1 is backwards"));
	g_assert_nonnull(strstr(joined, "no Cpus_allowed_list"));
	g_assert_nonnull(strstr(joined, "invalid CPU list 'lots'"));
	g_assert_nonnull(strstr(joined, "is not numa_maps"));
	g_assert_nonnull(strstr(joined, "no flags line"));
	findings = cli_host_rules_run(NULL, json_node_get_object(view));
	assert_level(findings, "HOST-VIEW-ERRORS", "host", CLI_LEVEL_NOTE);
	g_assert_null(find(findings, "HOST-NUMA-SPLIT", NULL));

	/* a pid whose /proc is gone (QEMU exited meanwhile) */
	g_clear_pointer(&view, json_node_unref);
	view = cli_hostview_build(replies, "q", 999999, root);
	g_clear_pointer(&errors, g_strfreev);
	g_assert_true(gb_json_get_strv(json_node_get_object(view), "errors", GB_JSON_REQUIRED,
	                               &errors, NULL));
	g_assert_cmpuint(g_strv_length(errors), >=, 3);
	rm_rf(root);
}

/* ---- libvirt domains --------------------------------------------------------------------- */

/* A live domain XML as libvirt gives it: disks with target, serial and alias. */
static const char libvirt_xml[] =
    "<domain type='qemu' id='3'><name>vm1</name>"
    "<memoryBacking><hugepages/></memoryBacking>"
    "<numatune><memory mode='strict' nodeset='0'/></numatune>"
    "<devices>"
    "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
    "<source file='/var/lib/libvirt/images/a.img'/><target dev='vda' bus='virtio'/>"
    "<serial>gbscratch</serial><alias name='virtio-disk0'/></disk>"
    "<disk type='file' device='cdrom'><target dev='sda' bus='sata'/></disk>"
    "<disk type='file' device='disk'><target dev='vdc' bus='virtio'/>"
    "<alias name='virtio-disk2'/></disk>"
    "<channel type='unix'><target type='virtio' name='org.guestbench.agent.0'/>"
    "<alias name='channel0'/></channel>"
    "</devices></domain>";

/* The 4-drive recording as libvirt names the devices (-device ...,id=virtio-diskN). */
static JsonObject *load_libvirt_replies(const char *xml, const char *host)
{
	JsonObject *replies = load_replies("tcg-4drives");
	JsonArray *block = json_object_get_array_member(replies, "query-block");
	JsonObject *libvirt = json_object_new();

	for (guint i = 0; i < json_array_get_length(block); i++) {
		JsonObject *dev = json_array_get_object_element(block, i);
		g_autofree char *qdev =
		    g_strdup_printf("/machine/peripheral/virtio-disk%u/virtio-backend", i);
		json_object_set_string_member(dev, "device", "");
		json_object_set_string_member(dev, "qdev", qdev);
	}
	json_object_set_string_member(libvirt, "domain", "vm1");
	json_object_set_string_member(libvirt, "xml", xml);
	if (host != NULL)
		json_object_set_string_member(libvirt, "host", host);
	json_object_set_object_member(replies, "libvirt", libvirt);
	return replies;
}

static JsonObject *view_find(JsonObject *view, const char *array, const char *member,
                             const char *value)
{
	JsonArray *items = json_object_get_array_member(view, array);

	for (guint i = 0; i < json_array_get_length(items); i++) {
		JsonObject *item = json_array_get_object_element(items, i);
		const char *v = NULL;
		if (gb_json_get_string(item, member, GB_JSON_OPTIONAL, &v, NULL) &&
		    g_strcmp0(v, value) == 0)
			return item;
	}
	return NULL;
}

/* Host findings name the disk as the guest does, matched through the XML's alias. */
static void test_libvirt_disks(void)
{
	g_autoptr(JsonObject) replies = load_libvirt_replies(libvirt_xml, NULL);
	g_autofree char *sysroot = data_path("qmp", "hosts", "numa-split");
	g_autoptr(JsonNode) node = cli_hostview_build(replies, "libvirt:vm1", 4242, sysroot);
	JsonObject *view = json_node_get_object(node);
	g_autoptr(GPtrArray) findings = cli_host_rules_run(NULL, view);
	JsonObject *vda = view_find(view, "block", "disk", "vda");
	JsonObject *vdc = view_find(view, "block", "disk", "vdc");
	JsonObject *other =
	    view_find(view, "block", "qdev", "/machine/peripheral/virtio-disk1/virtio-backend");
	CliFinding *f;

	g_assert_nonnull(vda);
	g_assert_cmpstr(json_object_get_string_member(vda, "serial"), ==, "gbscratch");
	/* QMP's path stays in the view, for reference */
	g_assert_cmpstr(json_object_get_string_member(vda, "device"), ==,
	                "/machine/peripheral/virtio-disk0/virtio-backend");
	g_assert_nonnull(vdc);
	g_assert_true(json_object_get_null_member(vdc, "serial"));
	/* a QMP device the XML does not have keeps QMP's name */
	g_assert_nonnull(other);
	g_assert_true(json_object_get_null_member(other, "disk"));
	/* the recording's third drive is cache=unsafe: it is the guest's vdc */
	assert_level(findings, "HOST-CACHE-UNSAFE", "host-block/vdc", CLI_LEVEL_FAIL);
	assert_level(findings, "HOST-CACHE-UNSAFE", "host-block/vda", CLI_LEVEL_PASS);
	must_find(findings, "HOST-CACHE-UNSAFE",
	          "host-block//machine/peripheral/virtio-disk1/virtio-backend");
	g_assert_null(find(findings, "HOST-CACHE-UNSAFE",
	                   "host-block//machine/peripheral/virtio-disk2/virtio-backend"));
	/* <memoryBacking><hugepages/> counts, <numatune> is shown */
	g_assert_true(json_object_get_boolean_member(view, "hugepages"));
	f = must_find(findings, "HOST-NO-HUGEPAGES", "host-memory");
	g_assert_cmpint(f->level, ==, CLI_LEVEL_PASS);
	g_assert_cmpstr(json_object_get_string_member(
	                    json_object_get_object_member(
	                        json_object_get_object_member(view, "libvirt"), "numatune"),
	                    "nodeset"),
	                ==, "0");
	/* a local domain: no remote note */
	g_assert_true(json_object_get_null_member(view, "remote_host"));
	g_assert_null(find(findings, "HOST-VIEW-REMOTE", NULL));
}

/* A remote domain: pinning and NUMA tuning from libvirt, never this host's files. */
static void test_libvirt_remote(void)
{
	g_autoptr(JsonObject) replies = load_libvirt_replies(libvirt_xml, "hv1");
	JsonObject *libvirt = json_object_get_object_member(replies, "libvirt");
	JsonObject *pinning = json_object_new();
	JsonArray *vcpus = json_array_new();
	/* a tree full of this host's QEMU 4242: none of it may show */
	g_autofree char *sysroot = data_path("qmp", "hosts", "numa-split");
	g_autoptr(JsonNode) node = NULL;
	g_autoptr(GPtrArray) findings = NULL;
	g_autoptr(JsonNode) facts = load_facts("qemu64");
	g_auto(GStrv) errors = NULL;
	g_autoptr(GArray) allowed = NULL;
	JsonObject *view;
	JsonObject *lv;
	CliFinding *f;

	json_array_add_string_element(vcpus, "0-7");
	json_array_add_string_element(vcpus, "2");
	json_object_set_int_member(pinning, "host_cpus", 8);
	json_object_set_array_member(pinning, "vcpus", vcpus);
	json_object_set_string_member(pinning, "emulator", "0-1");
	json_object_set_object_member(libvirt, "pinning", pinning);

	node = cli_hostview_build(replies, "libvirt:vm1", 4242, sysroot);
	view = json_node_get_object(node);
	g_assert_true(json_object_get_null_member(view, "pid"));
	g_assert_cmpstr(json_object_get_string_member(view, "remote_host"), ==, "hv1");
	g_assert_nonnull(strstr(json_object_get_string_member(view, "local_only"), "hv1"));
	g_assert_cmpint(json_object_get_int_member(view, "host_cpus"), ==, 8);
	g_assert_cmpuint(json_array_get_length(json_object_get_array_member(view, "host_nodes")),
	                 ==, 0);
	g_assert_cmpuint(json_array_get_length(json_object_get_array_member(view, "memory_nodes")),
	                 ==, 0);
	g_assert_cmpuint(
	    json_array_get_length(json_object_get_array_member(view, "host_cpu_flags")), ==, 0);
	g_assert_true(gb_json_get_int_array(
	    json_array_get_object_element(json_object_get_array_member(view, "vcpus"), 1),
	    "cpus_allowed", GB_JSON_REQUIRED, 0, 100, &allowed, NULL));
	g_assert_cmpuint(allowed->len, ==, 1);
	g_assert_cmpint(g_array_index(allowed, gint64, 0), ==, 2);
	lv = json_object_get_object_member(view, "libvirt");
	g_assert_cmpuint(json_array_get_length(json_object_get_array_member(lv, "emulator_cpus")),
	                 ==, 2);
	g_assert_cmpstr(
	    json_object_get_string_member(json_object_get_object_member(lv, "numatune"), "mode"),
	    ==, "strict");
	/* nothing was read, so nothing failed */
	g_assert_true(gb_json_get_strv(view, "errors", GB_JSON_REQUIRED, &errors, NULL));
	g_assert_cmpuint(g_strv_length(errors), ==, 0);

	findings = cli_host_rules_run(json_node_get_object(facts), view);
	f = must_find(findings, "HOST-VIEW-REMOTE", "host");
	g_assert_cmpint(f->level, ==, CLI_LEVEL_NOTE);
	g_assert_nonnull(strstr(f->detail, "numa_maps"));
	g_assert_nonnull(strstr(f->detail, "runs on hv1"));
	g_assert_null(find(findings, "HOST-VIEW-ERRORS", NULL));
	f = must_find(findings, "HOST-VCPU-UNPINNED", "host-vcpus");
	g_assert_cmpint(f->level, ==, CLI_LEVEL_NOTE);
	g_assert_nonnull(strstr(f->detail, "1 of 2 vCPU threads may run on any of the host's 8"));
	assert_level(findings, "HOST-CACHE-UNSAFE", "host-block/vdc", CLI_LEVEL_FAIL);
	/* CPU-NO-AESNI needs the host's cpuinfo, which a remote host does not give */
	g_assert_null(find(findings, "CPU-NO-AESNI", NULL));

	/* the pinning could not be read: said, and no vCPU finding made up */
	g_clear_pointer(&node, json_node_unref);
	g_clear_pointer(&findings, g_ptr_array_unref);
	json_object_remove_member(libvirt, "pinning");
	node = cli_hostview_build(replies, "libvirt:vm1", 0, sysroot);
	findings = cli_host_rules_run(NULL, json_node_get_object(node));
	g_assert_null(find(findings, "HOST-VCPU-UNPINNED", NULL));
	must_find(findings, "HOST-VIEW-REMOTE", "host");
}

/* Through libvirt no socket peer names QEMU: its vCPU thread's process does. */
static void test_libvirt_local_pid(void)
{
	g_autofree char *root = g_dir_make_tmp("gb-hostview-XXXXXX", NULL);
	g_autoptr(JsonObject) replies = load_libvirt_replies(libvirt_xml, NULL);
	g_autoptr(JsonNode) node = NULL;
	g_auto(GStrv) errors = NULL;
	gint64 pid = 0;

	g_assert_nonnull(root);

	/* query-cpus-fast of tcg-4drives: vCPU 0 is thread 16585 */
	write_file(root, "proc/16585/status", "Name:\tCPU 0/TCG\nTgid:\t777\nPid:\t16585\n");
	write_file(root, "proc/777/comm", "qemu-system-x86\n");
	write_file(root, "proc/777/task/16585/status", "Cpus_allowed_list:\t0-1\n");
	write_file(root, "proc/777/task/16586/status", "Cpus_allowed_list:\t1\n");
	node = cli_hostview_build(replies, "libvirt:vm1", 0, root);
	g_assert_true(gb_json_get_int(json_node_get_object(node), "pid", GB_JSON_REQUIRED, 0,
	                              G_MAXINT32, &pid, NULL));
	g_assert_cmpint(pid, ==, 777);
	g_assert_true(json_object_get_null_member(json_node_get_object(node), "remote_host"));

	/* a thread id that now belongs to something else is not taken for QEMU */
	write_file(root, "proc/777/comm", "bash\n");
	g_clear_pointer(&node, json_node_unref);
	node = cli_hostview_build(replies, "libvirt:vm1", 0, root);
	g_assert_true(json_object_get_null_member(json_node_get_object(node), "pid"));
	g_assert_true(gb_json_get_strv(json_node_get_object(node), "errors", GB_JSON_REQUIRED,
	                               &errors, NULL));
	g_assert_nonnull(errors[0]);
	g_assert_nonnull(strstr(errors[0], "belongs to process 777 (bash), not QEMU"));
	g_clear_pointer(&errors, g_strfreev);

	/* no such thread: said */
	g_clear_pointer(&node, json_node_unref);
	rm_rf(root);
	g_assert_cmpint(g_mkdir(root, 0755), ==, 0);
	node = cli_hostview_build(replies, "libvirt:vm1", 0, root);
	g_assert_true(json_object_get_null_member(json_node_get_object(node), "pid"));
	g_assert_true(gb_json_get_strv(json_node_get_object(node), "errors", GB_JSON_REQUIRED,
	                               &errors, NULL));
	g_assert_true(g_strv_length(errors) > 0);
	g_assert_nonnull(strstr(errors[0], "QEMU's pid"));
	g_assert_nonnull(strstr(errors[0], "/proc/16585/status"));
	rm_rf(root);
}

static void test_rules_table(void)
{
	guint n = 0;
	const CliAuditRuleInfo *rules = cli_host_rules(&n);

	g_assert_cmpuint(n, >=, 7);
	for (guint i = 0; i < n; i++) {
		g_assert_nonnull(rules[i].summary);
		for (const char *p = rules[i].id; *p != '\0'; p++)
			g_assert_true(g_ascii_isupper(*p) || *p == '-');
	}
}

/* ---- host-check ---------------------------------------------------------------------- */

static GPtrArray *check_tree(const char *name)
{
	g_autofree char *root = data_path("qmp", "hosts", name);
	return cli_host_check_collect(root);
}

static void test_check_kvm_nested(void)
{
	g_autoptr(GPtrArray) f = check_tree("check-kvm-nested");
	CliFinding *kvm;

	assert_level(f, "HOST-CPU-VIRT", "cpu", CLI_LEVEL_PASS);
	assert_level(f, "HOST-KVM-MODULES", "kernel", CLI_LEVEL_PASS);
	assert_level(f, "HOST-KVM-NESTED", "kernel", CLI_LEVEL_PASS);
	assert_level(f, "HOST-VHOST-NET", "/dev/vhost-net", CLI_LEVEL_PASS);
	assert_level(f, "HOST-HUGEPAGES", "memory", CLI_LEVEL_PASS);
	g_assert_nonnull(strstr(must_find(f, "HOST-HUGEPAGES", NULL)->detail,
	                        "node0: 512 x 2048kB, node1: 512 x 2048kB"));
	assert_level(f, "HOST-THP", "memory", CLI_LEVEL_PASS);
	assert_level(f, "HOST-CPU-AES", "cpu", CLI_LEVEL_PASS);
	/* each file the host kernel says Vulnerable, verbatim; mitigated ones are not listed */
	assert_level(f, "HOST-CPU-VULNERABLE", "cpu/spec_store_bypass", CLI_LEVEL_WARN);
	assert_level(f, "HOST-CPU-VULNERABLE", "cpu/mds", CLI_LEVEL_WARN);
	g_assert_nonnull(strstr(must_find(f, "HOST-CPU-VULNERABLE", "cpu/mds")->detail,
	                        "'Vulnerable: Clear CPU buffers attempted, no microcode; SMT "
	                        "vulnerable'"));
	g_assert_nonnull(strstr(must_find(f, "HOST-CPU-VULNERABLE", "cpu/mds")->hint, "microcode"));
	g_assert_null(find(f, "HOST-CPU-VULNERABLE", "cpu/meltdown"));
	g_assert_null(find(f, "HOST-CPU-VULNERABLE", "cpu"));
	/* CPUID is this machine's, not the tree's: not judged */
	assert_level(f, "HOST-CPU-ISA-LEVEL", "cpu", CLI_LEVEL_NOTE);
	g_assert_nonnull(strstr(must_find(f, "HOST-CPU-ISA-LEVEL", "cpu")->detail,
	                        "not checked under --host-sysroot"));
	/* a crafted /dev/kvm is a plain file: it must not pass for the KVM device */
	assert_level(f, "HOST-KVM-DEVICE", "/dev/kvm", CLI_LEVEL_FAIL);
	kvm = must_find(f, "HOST-KVM-DEVICE", NULL);
	g_assert_nonnull(strstr(kvm->detail, "does not answer KVM_GET_API_VERSION"));
}

static void test_check_kvm_no_nested(void)
{
	g_autoptr(GPtrArray) f = check_tree("check-kvm-no-nested");

	assert_level(f, "HOST-KVM-NESTED", "kernel", CLI_LEVEL_NOTE);
	g_assert_nonnull(strstr(must_find(f, "HOST-KVM-NESTED", NULL)->detail, "nested=N"));
	assert_level(f, "HOST-HUGEPAGES", "memory", CLI_LEVEL_NOTE);
	assert_level(f, "HOST-THP", "memory", CLI_LEVEL_WARN);
	/* all mitigated; a file of binary junk is skipped, not judged */
	assert_level(f, "HOST-CPU-VULNERABLE", "cpu", CLI_LEVEL_PASS);
	g_assert_nonnull(strstr(must_find(f, "HOST-CPU-VULNERABLE", "cpu")->detail,
	                        "2 vulnerability files, none says Vulnerable"));
}

static void test_check_no_kvm(void)
{
	g_autoptr(GPtrArray) f = check_tree("check-no-kvm");
	CliFinding *kvm;

	assert_level(f, "HOST-CPU-VIRT", "cpu", CLI_LEVEL_FAIL);
	assert_level(f, "HOST-KVM-DEVICE", "/dev/kvm", CLI_LEVEL_FAIL);
	kvm = must_find(f, "HOST-KVM-DEVICE", NULL);
	g_assert_nonnull(strstr(kvm->detail, "No such file or directory"));
	g_assert_nonnull(strstr(kvm->hint, "modprobe"));
	assert_level(f, "HOST-KVM-MODULES", "kernel", CLI_LEVEL_FAIL);
	assert_level(f, "HOST-KVM-NESTED", "kernel", CLI_LEVEL_NOTE);
	assert_level(f, "HOST-VHOST-NET", "/dev/vhost-net", CLI_LEVEL_WARN);
	assert_level(f, "HOST-THP", "memory", CLI_LEVEL_PASS);
	assert_level(f, "HOST-CPU-AES", "cpu", CLI_LEVEL_WARN);
}

static void test_check_empty_root(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *root = g_dir_make_tmp("gb-check-XXXXXX", &error);
	g_autoptr(GPtrArray) f = NULL;

	write_file(root, "sys/module/kvm_amd/parameters/nested", "maybe\n");
	write_file(root, "sys/kernel/mm/transparent_hugepage/enabled", "always madvise never\n");
	f = cli_host_check_collect(root);
	assert_level(f, "HOST-CPU-VIRT", "cpu", CLI_LEVEL_WARN);
	assert_level(f, "HOST-KVM-NESTED", "kernel", CLI_LEVEL_WARN);
	assert_level(f, "HOST-THP", "memory", CLI_LEVEL_NOTE);
	assert_level(f, "HOST-HUGEPAGES", "memory", CLI_LEVEL_NOTE);
	g_assert_null(find(f, "HOST-CPU-AES", NULL));
	/* a kernel before 4.15 */
	assert_level(f, "HOST-CPU-VULNERABLE", "cpu", CLI_LEVEL_NOTE);
	rm_rf(root);
}

/* The real CLI: the crafted trees through --host-sysroot, then this very host. */
static void test_check_cli(void)
{
	const char *cli = g_getenv("GB_CLI");
	g_autofree char *root = data_path("qmp", "hosts", "check-no-kvm");
	g_autofree char *out = NULL;
	g_autofree char *err = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) doc = NULL;
	JsonObject *obj;
	const char *worst = NULL;
	int status = 0;

	g_assert_nonnull(cli);
	{
		const char *argv[] = { cli,     "host-check", "--host-sysroot", root, "--color",
			               "never", NULL };
		g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
		                           &out, &err, &status, &error));
		g_assert_no_error(error);
		g_assert_true(WIFEXITED(status));
		g_assert_cmpint(WEXITSTATUS(status), ==, 1);
		g_assert_nonnull(strstr(out, "Checking if device /dev/kvm is usable"));
		g_assert_nonnull(strstr(out, ": FAIL (cannot open"));
		g_assert_nonnull(strstr(out, "hint: modprobe vhost_net"));
	}
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);
	{
		g_autofree char *ok_root = data_path("qmp", "hosts", "check-kvm-nested");
		const char *argv[] = { cli,     "--format", "json", "host-check", "--host-sysroot",
			               ok_root, NULL };
		g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
		                           &out, &err, &status, &error));
		doc = gb_json_parse(out, strlen(out), &error);
		g_assert_no_error(error);
		obj = json_node_get_object(doc);
		g_assert_true(gb_json_get_string(obj, "worst", GB_JSON_REQUIRED, &worst, NULL));
		g_assert_cmpstr(worst, ==, "FAIL"); /* the crafted /dev/kvm */
	}
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);
	/* prom, as node_exporter reads it: each finding and the worst level (3: FAIL) */
	{
		const char *argv[] = { cli,    "host-check", "--host-sysroot", root, "--format",
			               "prom", NULL };
		g_auto(GStrv) lines = NULL;
		guint n_findings = 0;

		g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
		                           &out, &err, &status, &error));
		g_assert_no_error(error);
		g_assert_cmpint(WEXITSTATUS(status), ==, 1);
		g_assert_cmpstr(err, ==, "");
		g_assert_true(g_str_has_prefix(out, "# HELP guestbench_host_check_finding "));
		g_assert_nonnull(strstr(out,
		                        "guestbench_host_check_finding{rule=\"HOST-KVM-DEVICE\","
		                        "level=\"FAIL\",subject=\"/dev/kvm\"} 1\n"));
		g_assert_true(g_str_has_suffix(out, "\nguestbench_host_check_worst_level 3\n"));
		lines = g_strsplit(out, "\n", -1);
		for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++) {
			g_assert_true(lines[i][0] == '#' ||
			              g_str_has_prefix(lines[i], "guestbench_host_check_"));
			n_findings += g_str_has_prefix(lines[i], "guestbench_host_check_finding{");
		}
		g_assert_cmpuint(n_findings, >=, 5);
	}
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);
	/* usage errors: targets, a sysroot that is not a directory, csv */
	{
		const char *argv1[] = { cli, "host-check", "unix:/x", NULL };
		const char *argv2[] = { cli, "host-check", "--host-sysroot", "/nonexistent/x",
			                NULL };
		const char *argv3[] = { cli, "host-check", "--format", "csv", NULL };
		const char **argvs[] = { argv1, argv2, argv3 };
		for (guint i = 0; i < G_N_ELEMENTS(argvs); i++) {
			g_assert_true(g_spawn_sync(NULL, (char **)argvs[i], NULL, G_SPAWN_DEFAULT,
			                           NULL, NULL, &out, &err, &status, &error));
			g_assert_cmpint(WEXITSTATUS(status), ==, 2);
			g_assert_nonnull(strstr(err, "guestbench: "));
			g_clear_pointer(&out, g_free);
			g_clear_pointer(&err, g_free);
		}
	}
	/* live: this host, whatever it has; without /dev/kvm it must FAIL and say why */
	{
		const char *argv[] = { cli, "host-check", NULL };
		g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
		                           &out, &err, &status, &error));
		g_assert_nonnull(strstr(out, "Checking for hardware virtualization"));
		g_assert_nonnull(strstr(out, "Checking the x86-64 ISA level"));
		g_assert_nonnull(strstr(out, "Checking CPU vulnerabilities"));
		if (!g_file_test("/dev/kvm", G_FILE_TEST_EXISTS)) {
			g_assert_cmpint(WEXITSTATUS(status), ==, 1);
			g_assert_nonnull(strstr(out, "FAIL (cannot open /dev/kvm: No such file"));
		} else {
			g_assert_cmpint(WEXITSTATUS(status), <=, 1);
		}
	}
}

/* The highest "x86-64-vN (supported" line of glibc's loader, or NULL without one. */
static char *ldso_level(void)
{
	const char *argv[] = { "/lib64/ld-linux-x86-64.so.2", "--help", NULL };
	g_autofree char *out = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_test(argv[0], G_FILE_TEST_EXISTS) ||
	    !g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out,
	                  NULL, NULL, NULL))
		return NULL;
	lines = g_strsplit(out, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_autofree char *l = g_strstrip(g_strdup(lines[i]));
		if (g_str_has_prefix(l, "x86-64-v") && strstr(l, "(supported") != NULL)
			return g_strndup(l, strlen("x86-64-vN"));
	}
	return g_strdup("x86-64-v1");
}

/* This very host: its ISA level is what glibc's loader says, its vulnerabilities sysfs'. */
static void test_check_live_cpu(void)
{
	g_autoptr(GPtrArray) f = cli_host_check_collect(NULL);
	g_autofree char *want = ldso_level();
	CliFinding *isa = must_find(f, "HOST-CPU-ISA-LEVEL", "cpu");
	g_autoptr(GDir) dir = g_dir_open("/sys/devices/system/cpu/vulnerabilities", 0, NULL);
	const char *name;

	if (want == NULL) {
		g_test_skip("no x86-64 ld.so here");
		return;
	}
	g_test_message("%s", isa->detail);
	g_assert_true(g_str_has_prefix(isa->detail, want));
	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *path =
		    g_build_filename("/sys/devices/system/cpu/vulnerabilities", name, NULL);
		g_autofree char *text = NULL;
		g_autofree char *subject = g_strdup_printf("cpu/%s", name);

		if (!g_file_get_contents(path, &text, NULL, NULL))
			continue;
		if (g_str_has_prefix(text, "Vulnerable"))
			assert_level(f, "HOST-CPU-VULNERABLE", subject, CLI_LEVEL_WARN);
		else
			g_assert_null(find(f, "HOST-CPU-VULNERABLE", subject));
	}
}

/* --qmp belongs to one guest, and to the command that reads the host view. */
static void test_qmp_option(void)
{
	g_autoptr(CliApp) app = cli_app_new();
	g_autoptr(CliApp) app2 = cli_app_new();
	g_autoptr(CliApp) app3 = cli_app_new();
	g_autoptr(CliApp) app4 = cli_app_new();
	g_autoptr(GError) error = NULL;
	const char *argv1[] = { "guestbench", "--qmp", "/run/q.sock", "audit", "unix:/a", NULL };
	const char *argv2[] = { "guestbench", "audit",   "--qmp", "/run/q.sock",
		                "unix:/a",    "unix:/b", NULL };
	const char *argv3[] = { "guestbench", "audit", "--qmp=", "unix:/a", NULL };
	const char *argv4[] = { "guestbench", "--qmp", "/run/q.sock", "facts", "unix:/a", NULL };
	CliGuest *guest;

	g_assert_true(cli_app_parse(app, argv1, &error));
	g_assert_no_error(error);
	cli_app_add_guests(app);
	guest = g_ptr_array_index(app->guests, 0);
	g_assert_cmpstr(cli_hostview_get_qmp_path(app, guest), ==, "/run/q.sock");
	g_assert_false(cli_app_parse(app2, argv2, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_nonnull(strstr(error->message, "2 targets"));
	g_clear_error(&error);
	g_assert_false(cli_app_parse(app3, argv3, &error));
	g_assert_nonnull(error);
	g_clear_error(&error);
	/* a command that would ignore it refuses it */
	g_assert_false(cli_app_parse(app4, argv4, &error));
	g_assert_nonnull(strstr(error->message, "--qmp does not apply to 'facts'"));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/host-rules/cpulist", test_cpulist);
	g_test_add_func("/host-rules/numa-split", test_numa_split);
	g_test_add_func("/host-rules/numa-local-huge", test_numa_local_huge);
	g_test_add_func("/host-rules/unpinned", test_unpinned);
	g_test_add_func("/host-rules/no-facts", test_no_facts);
	g_test_add_func("/host-rules/merge", test_merge);
	g_test_add_func("/host-rules/hostile-replies", test_hostile_replies);
	g_test_add_func("/host-rules/hostile-view", test_hostile_view);
	g_test_add_func("/host-rules/ugly-host", test_ugly_host);
	g_test_add_func("/host-rules/table", test_rules_table);
	g_test_add_func("/host-rules/libvirt-disks", test_libvirt_disks);
	g_test_add_func("/host-rules/libvirt-remote", test_libvirt_remote);
	g_test_add_func("/host-rules/libvirt-local-pid", test_libvirt_local_pid);
	g_test_add_func("/host-check/kvm-nested", test_check_kvm_nested);
	g_test_add_func("/host-check/kvm-no-nested", test_check_kvm_no_nested);
	g_test_add_func("/host-check/no-kvm", test_check_no_kvm);
	g_test_add_func("/host-check/empty-root", test_check_empty_root);
	g_test_add_func("/host-check/cli", test_check_cli);
	g_test_add_func("/host-rules/cpu-hidden-spec-ctrl", test_cpu_hidden_spec_ctrl);
	g_test_add_func("/host-check/live-cpu", test_check_live_cpu);
	g_test_add_func("/host-rules/qmp-option", test_qmp_option);
	return g_test_run();
}
