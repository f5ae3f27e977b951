/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "analysis/audit.h"
#include "render/facts-view.h"
#include "render/csv.h"
#include "render/audit-view.h"
#include "gb-error.h"
#include "gb-isa.h"
#include "gb-json.h"

/* fixtures */

static JsonNode *load_fixture(const char *name)
{
	const char *dir = g_getenv("GB_TEST_DATA");
	g_autofree char *path = NULL;
	g_autofree char *data = NULL;
	g_autoptr(GError) error = NULL;
	gsize len = 0;
	JsonNode *node;

	g_assert_nonnull(dir);
	path = g_build_filename(dir, "facts-json", name, NULL);
	g_assert_true(g_file_get_contents(path, &data, &len, &error));
	g_assert_no_error(error);
	node = gb_json_parse(data, len, &error);
	g_assert_no_error(error);
	g_assert_nonnull(node);
	return node;
}

static JsonObject *fixture_object(JsonNode *node)
{
	g_assert_true(JSON_NODE_HOLDS_OBJECT(node));
	return json_node_get_object(node);
}

static GPtrArray *audit_fixture(const char *name)
{
	g_autoptr(JsonNode) node = load_fixture(name);
	return cli_audit_run(fixture_object(node));
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

static guint count_rule(GPtrArray *findings, const char *rule, gint level)
{
	guint n = 0;
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		if (g_strcmp0(f->rule, rule) == 0 && (level < 0 || (gint)f->level == level))
			n++;
	}
	return n;
}

static void dump(GPtrArray *findings)
{
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		g_test_message("%s %s %s: %s", cli_level_to_string(f->level), f->rule, f->subject,
		               f->detail);
	}
}

static CliFinding *assert_finding(GPtrArray *findings, const char *rule, const char *subject,
                                  CliLevel level)
{
	CliFinding *f = find(findings, rule, subject);
	if (f == NULL) {
		dump(findings);
		g_test_message("no %s finding for %s", rule, subject);
	}
	g_assert_nonnull(f);
	g_assert_cmpstr(cli_level_to_string(f->level), ==, cli_level_to_string(level));
	return f;
}

static void assert_no_finding(GPtrArray *findings, const char *rule, const char *subject)
{
	CliFinding *f = find(findings, rule, subject);
	if (f != NULL) {
		dump(findings);
		g_test_message("unexpected %s finding for %s: %s", rule, subject, f->detail);
	}
	g_assert_null(f);
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (haystack == NULL || strstr(haystack, needle) == NULL)
		g_test_message("'%s' not in '%s'", needle, haystack);
	g_assert_nonnull(haystack);
	g_assert_nonnull(strstr(haystack, needle));
}

/* JSON helpers for tests that vary a fixture (building input, not reading it) */

static JsonObject *member_object(JsonObject *obj, const char *member)
{
	JsonObject *out = NULL;
	g_autoptr(GError) error = NULL;
	g_assert_true(gb_json_get_object(obj, member, GB_JSON_REQUIRED, &out, &error));
	return out;
}

static JsonObject *element_object(JsonObject *obj, const char *member, guint i)
{
	JsonArray *array = NULL;
	JsonObject *out = NULL;
	g_autoptr(GError) error = NULL;
	g_assert_true(gb_json_get_array(obj, member, GB_JSON_REQUIRED, &array, &error));
	g_assert_true(
	    gb_json_node_get_object(json_array_get_element(array, i), "element", &out, &error));
	return out;
}

static JsonArray *strv_to_array(const char *const *strv)
{
	JsonArray *array = json_array_new();
	for (guint i = 0; strv[i] != NULL; i++)
		json_array_add_string_element(array, strv[i]);
	return array;
}

/* tests */

static void test_levels(void)
{
	CliLevel level = CLI_LEVEL_PASS;

	g_assert_cmpstr(cli_level_to_string(CLI_LEVEL_PASS), ==, "PASS");
	g_assert_cmpstr(cli_level_to_string(CLI_LEVEL_NOTE), ==, "NOTE");
	g_assert_cmpstr(cli_level_to_string(CLI_LEVEL_WARN), ==, "WARN");
	g_assert_cmpstr(cli_level_to_string(CLI_LEVEL_FAIL), ==, "FAIL");
	g_assert_cmpstr(cli_level_to_string((CliLevel)42), ==, "UNKNOWN");
	g_assert_true(cli_level_from_string("warn", &level));
	g_assert_cmpint(level, ==, CLI_LEVEL_WARN);
	g_assert_true(cli_level_from_string("FAIL", &level));
	g_assert_cmpint(level, ==, CLI_LEVEL_FAIL);
	g_assert_false(cli_level_from_string("FAILED", &level));
	g_assert_false(cli_level_from_string("", &level));
	g_assert_false(cli_level_from_string(NULL, &level));
	g_assert_cmpint(level, ==, CLI_LEVEL_FAIL);
}

static void test_rules_table(void)
{
	guint n = 0;
	const CliAuditRuleInfo *rules = cli_audit_rules(&n);
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	const struct {
		const char *id;
		CliLevel level;
	} expected[] = {
		{ "CPU-LEGACY-MODEL", CLI_LEVEL_FAIL },
		{ "CPU-NO-AESNI", CLI_LEVEL_FAIL },
		{ "CPU-MISSING-SIMD", CLI_LEVEL_NOTE },
		{ "CPU-NESTED-EXPOSED", CLI_LEVEL_NOTE },
		{ "CPU-HYPERVISOR", CLI_LEVEL_WARN },
		{ "CPU-ISA-LEVEL", CLI_LEVEL_NOTE },
		{ "CPU-REQUIRED-FLAGS", CLI_LEVEL_FAIL },
		{ "CPU-VULNERABLE", CLI_LEVEL_WARN },
		{ "DISK-EMULATED", CLI_LEVEL_WARN },
		{ "DISK-WRITE-THROUGH", CLI_LEVEL_WARN },
		{ "DISK-SCHEDULER", CLI_LEVEL_NOTE },
		{ "NIC-EMULATED", CLI_LEVEL_WARN },
		{ "NIC-SINGLE-QUEUE", CLI_LEVEL_NOTE },
		{ "CLOCK-SOURCE", CLI_LEVEL_WARN },
		{ "NUMA-MEMORYLESS-NODE", CLI_LEVEL_WARN },
		{ "NUMA-SPAN", CLI_LEVEL_NOTE },
		{ "HUGEPAGES", CLI_LEVEL_NOTE },
		{ "STEAL-TIME", CLI_LEVEL_WARN },
		{ "FACTS-ERRORS", CLI_LEVEL_NOTE },
	};

	g_assert_cmpuint(n, ==, G_N_ELEMENTS(expected));
	for (guint i = 0; i < n; i++) {
		g_assert_cmpstr(rules[i].id, ==, expected[i].id);
		g_assert_cmpint(rules[i].level, ==, expected[i].level);
		g_assert_nonnull(rules[i].summary);
		g_assert_cmpuint(strlen(rules[i].summary), >, 0);
		g_assert_false(g_hash_table_contains(seen, rules[i].id));
		g_hash_table_add(seen, (gpointer)rules[i].id);
		for (const char *p = rules[i].id; *p != '\0'; p++)
			g_assert_true(g_ascii_isupper(*p) || *p == '-');
	}
}

static void test_tuned_host(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("tuned-host.json");
	guint n = 0;
	const CliAuditRuleInfo *rules = cli_audit_rules(&n);

	dump(findings);
	/* a clean guest: every rule checked something and says PASS, but the ISA level, which
	 * is a NOTE to read, and the required flags, which speak only when some are required */
	for (guint i = 0; i < n; i++) {
		if (g_strcmp0(rules[i].id, "CPU-ISA-LEVEL") == 0 ||
		    g_strcmp0(rules[i].id, "CPU-REQUIRED-FLAGS") == 0)
			continue;
		g_assert_cmpuint(count_rule(findings, rules[i].id, CLI_LEVEL_PASS), >=, 1);
	}
	g_assert_cmpuint(count_rule(findings, "CPU-ISA-LEVEL", CLI_LEVEL_NOTE), ==, 1);
	g_assert_cmpuint(count_rule(findings, "CPU-REQUIRED-FLAGS", -1), ==, 0);
	g_assert_cmpint(cli_audit_worst(findings), ==, CLI_LEVEL_NOTE);
	assert_finding(findings, "DISK-EMULATED", "block/vda", CLI_LEVEL_PASS);
	assert_finding(findings, "DISK-WRITE-THROUGH", "block/vda", CLI_LEVEL_PASS);
	assert_finding(findings, "DISK-SCHEDULER", "block/vda", CLI_LEVEL_PASS);
	assert_finding(findings, "NIC-EMULATED", "net/eth0", CLI_LEVEL_PASS);
	assert_finding(findings, "NIC-SINGLE-QUEUE", "net/eth0", CLI_LEVEL_PASS);
	assert_finding(findings, "NUMA-MEMORYLESS-NODE", "numa", CLI_LEVEL_PASS);
	assert_finding(findings, "HUGEPAGES", "memory", CLI_LEVEL_PASS);
	assert_finding(findings, "FACTS-ERRORS", "facts", CLI_LEVEL_PASS);
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		g_assert_null(f->hint);
	}
}

static void test_legacy_qemu64(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("legacy-qemu64.json");
	CliFinding *f;

	f = assert_finding(findings, "CPU-LEGACY-MODEL", "cpu", CLI_LEVEL_FAIL);
	assert_contains(f->detail, "QEMU Virtual CPU version 2.5+");
	assert_contains(f->hint, "-cpu host");
	assert_contains(f->hint, "host-passthrough");
	f = assert_finding(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_FAIL);
	assert_contains(f->detail, "no aes, pclmulqdq");
	/* cpuid agrees with the flags: nothing to add */
	g_assert_null(strstr(f->detail, "CPUID"));
	assert_contains(f->hint, "+aes,+pclmulqdq");
	f = assert_finding(findings, "CPU-MISSING-SIMD", "cpu", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "avx2, vaes, sha_ni");
	f = assert_finding(findings, "CPU-NESTED-EXPOSED", "cpu", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "svm");
	assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_PASS);
	f = assert_finding(findings, "DISK-EMULATED", "block/sda", CLI_LEVEL_WARN);
	assert_contains(f->detail, "ata_piix");
	assert_contains(f->hint, "if=virtio");
	assert_contains(f->hint, "<target bus='virtio'/>");
	/* CD-ROMs are emulated everywhere and nobody benchmarks them */
	assert_no_finding(findings, "DISK-EMULATED", "block/sr0");
	/* write-through on IDE is DISK-EMULATED's business; no scheduler advice for ata */
	assert_no_finding(findings, "DISK-WRITE-THROUGH", NULL);
	assert_no_finding(findings, "DISK-SCHEDULER", NULL);
	f = assert_finding(findings, "NIC-EMULATED", "net/ens3", CLI_LEVEL_WARN);
	assert_contains(f->detail, "e1000");
	assert_contains(f->hint, "virtio-net-pci");
	assert_contains(f->hint, "<model type='virtio'/>");
	/* e1000 is not virtio_net: the queue rule does not apply */
	assert_no_finding(findings, "NIC-SINGLE-QUEUE", NULL);
	assert_finding(findings, "HUGEPAGES", "memory", CLI_LEVEL_PASS);
	assert_finding(findings, "NUMA-SPAN", "numa", CLI_LEVEL_PASS);
	g_assert_cmpint(cli_audit_worst(findings), ==, CLI_LEVEL_FAIL);
}

/*
 * A Windows Server guest on kvm64 (the Windows agent's document, its
 * mitigations decoded from the flags Windows gives such a guest): an e1000
 * NIC (driver service e1g60) and a NetKVM one with one RSS queue for 4 vCPUs.
 * The findings speak of Windows where the fix differs.
 */
static void test_windows_kvm64(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("windows-kvm64.json");
	CliFinding *f;

	f = assert_finding(findings, "CPU-LEGACY-MODEL", "cpu", CLI_LEVEL_FAIL);
	assert_contains(f->detail, "Common KVM processor");
	f = assert_finding(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_FAIL);
	assert_contains(f->hint, "+aes,+pclmulqdq");
	/* what Windows reports vulnerable, in the Linux names: the same fixes */
	f = assert_finding(findings, "CPU-VULNERABLE", "cpu/spec_store_bypass", CLI_LEVEL_WARN);
	assert_contains(f->hint, "ssbd");
	f = assert_finding(findings, "NIC-EMULATED", "net/Ethernet", CLI_LEVEL_WARN);
	assert_contains(f->detail, "e1g60");
	assert_contains(f->hint, "virtio-net-pci");
	assert_contains(f->hint, "NetKVM");
	assert_finding(findings, "NIC-EMULATED", "net/Ethernet 2", CLI_LEVEL_PASS);
	f = assert_finding(findings, "NIC-SINGLE-QUEUE", "net/Ethernet 2", CLI_LEVEL_NOTE);
	assert_contains(f->hint, "queues='4'");
	assert_contains(f->hint, "Set-NetAdapterAdvancedProperty -Name 'Ethernet 2'");
	assert_contains(f->hint, "*NumRssQueues");
	g_assert_null(strstr(f->hint, "ethtool"));
	/* the e1000 NIC is not virtio: no queue advice for it */
	assert_no_finding(findings, "NIC-SINGLE-QUEUE", "net/Ethernet");
	/* an IDE disk: virtio-blk, with viostor installed first */
	f = assert_finding(findings, "DISK-EMULATED", "block/PhysicalDrive0", CLI_LEVEL_WARN);
	assert_contains(f->detail, "atapi");
	assert_contains(f->hint, "viostor");
	assert_contains(f->hint, "-drive if=virtio");
	assert_finding(findings, "DISK-EMULATED", "block/PhysicalDrive1", CLI_LEVEL_PASS);
	f = assert_finding(findings, "DISK-WRITE-THROUGH", "block/PhysicalDrive1", CLI_LEVEL_WARN);
	assert_contains(f->hint, "cache='none'");
	/* no I/O scheduler nor clocksource on Windows: those rules say nothing */
	assert_no_finding(findings, "DISK-SCHEDULER", NULL);
	assert_no_finding(findings, "CLOCK-SOURCE", NULL);
	assert_finding(findings, "NUMA-SPAN", "numa", CLI_LEVEL_PASS);
	f = assert_finding(findings, "FACTS-ERRORS", "block.PhysicalDrive0.scheduler",
	                   CLI_LEVEL_NOTE);
	assert_contains(f->detail, "Windows has no I/O scheduler to choose");
}

static GPtrArray *audit_fixture_require(const char *name, guint level, const char *flags)
{
	g_autoptr(JsonNode) node = load_fixture(name);
	g_autoptr(CliFacts) facts = cli_facts_new(fixture_object(node));
	g_auto(GStrv) flag_list = flags != NULL ? g_strsplit(flags, ",", -1) : NULL;
	CliAuditRequire require = { .isa_level = level, .flags = flag_list };

	return cli_audit_run_require(facts, &require);
}

static void test_isa_level(void)
{
	g_autoptr(GPtrArray) legacy = audit_fixture("legacy-qemu64.json");
	g_autoptr(GPtrArray) legacy_v2 = audit_fixture_require("legacy-qemu64.json", 2, NULL);
	g_autoptr(GPtrArray) legacy_v1 = audit_fixture_require("legacy-qemu64.json", 1, NULL);
	g_autoptr(GPtrArray) tuned_v4 = audit_fixture_require("tuned-host.json", 4, NULL);
	g_autoptr(GPtrArray) old_agent = audit_fixture_require("tcg.json", 3, NULL);
	g_autoptr(GPtrArray) old_agent_free = audit_fixture("tcg.json");
	CliFinding *f;

	f = assert_finding(legacy, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "ISA level x86-64-v1 (x86-64-v2 lacks popcnt, sse4_1, sse4_2, "
	                           "ssse3)");
	g_assert_null(f->hint);
	f = assert_finding(legacy_v2, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_FAIL);
	assert_contains(f->detail, "below the required x86-64-v2");
	assert_contains(f->detail, "sse4_2");
	assert_contains(f->hint, "Nehalem");
	assert_contains(f->hint, "host-passthrough");
	f = assert_finding(legacy_v1, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "required x86-64-v1");
	f = assert_finding(tuned_v4, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "ISA level x86-64-v4; required x86-64-v4");
	/* an agent without isa_level: silent, unless a level is required */
	assert_no_finding(old_agent_free, "CPU-ISA-LEVEL", NULL);
	f = assert_finding(old_agent, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_WARN);
	assert_contains(f->detail, "the required x86-64-v3 cannot be checked");
	f = assert_finding(old_agent, "FACTS-ERRORS", "cpu.isa_level", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "CPU-ISA-LEVEL");
}

static void test_isa_level_bad_values(void)
{
	const char *const docs[] = {
		"{\"cpu\": {\"architecture\": \"x86_64\", \"isa_level\": \"x86-64-v9\"}}",
		"{\"cpu\": {\"architecture\": \"x86_64\", \"isa_level\": 2}}",
		"{\"cpu\": {\"architecture\": \"x86_64\", \"isa_level\": \"\"}}",
	};

	for (guint i = 0; i < G_N_ELEMENTS(docs); i++) {
		g_autoptr(JsonNode) node = json_from_string(docs[i], NULL);
		g_autoptr(CliFacts) facts = cli_facts_new(fixture_object(node));
		CliAuditRequire require = { .isa_level = 2 };
		g_autoptr(GPtrArray) findings = cli_audit_run_require(facts, &require);
		g_autoptr(GPtrArray) free_findings = cli_audit_run_facts(facts);

		dump(findings);
		assert_finding(findings, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_WARN);
		assert_finding(findings, "FACTS-ERRORS", "cpu.isa_level", CLI_LEVEL_NOTE);
		/* a value that cannot be right is noted even with nothing required */
		assert_finding(free_findings, "FACTS-ERRORS", "cpu.isa_level", CLI_LEVEL_NOTE);
		assert_no_finding(free_findings, "CPU-ISA-LEVEL", NULL);
	}
}

static void test_required_flags(void)
{
	g_autoptr(GPtrArray) legacy =
	    audit_fixture_require("legacy-qemu64.json", 0, "sse2,avx2,ssbd");
	g_autoptr(GPtrArray) tuned = audit_fixture_require("tuned-host.json", 0, "avx2,aes");
	CliFinding *f;

	f = assert_finding(legacy, "CPU-REQUIRED-FLAGS", "cpu", CLI_LEVEL_FAIL);
	assert_contains(f->detail, "required CPU flags missing: avx2,ssbd");
	assert_contains(f->hint, "+FLAG");
	assert_contains(f->hint, "<feature policy='require' name='FLAG'/>");
	f = assert_finding(tuned, "CPU-REQUIRED-FLAGS", "cpu", CLI_LEVEL_PASS);
	assert_contains(f->detail, "avx2, aes");
	g_assert_cmpint(cli_audit_worst(tuned), <, CLI_LEVEL_WARN);
}

static void test_vulnerable(void)
{
	g_autoptr(GPtrArray) legacy = audit_fixture("legacy-qemu64.json");
	g_autoptr(GPtrArray) tuned = audit_fixture("tuned-host.json");
	CliFinding *f;

	f = assert_finding(legacy, "CPU-VULNERABLE", "cpu/spec_store_bypass", CLI_LEVEL_WARN);
	assert_contains(f->detail, "'Vulnerable'");
	assert_contains(f->detail, "ssbd");
	assert_contains(f->hint, "-cpu MODEL,+ssbd");
	assert_contains(f->hint, "<feature policy='require' name='ssbd'/>");
	f = assert_finding(legacy, "CPU-VULNERABLE", "cpu/mds", CLI_LEVEL_WARN);
	assert_contains(f->detail, "md-clear");
	assert_contains(f->hint, "+md-clear");
	/* no CPU-model cause known: a note, not a warning */
	f = assert_finding(legacy, "CPU-VULNERABLE", "cpu/srbds", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "Vulnerable: No microcode");
	assert_no_finding(legacy, "CPU-VULNERABLE", "cpu/meltdown");
	assert_no_finding(legacy, "CPU-VULNERABLE", "cpu/spectre_v1");
	assert_finding(tuned, "CPU-VULNERABLE", "cpu", CLI_LEVEL_PASS);
}

static void test_vulnerable_aarch64(void)
{
	g_autoptr(JsonNode) node = load_fixture("legacy-qemu64.json");
	JsonObject *facts = fixture_object(node);
	JsonObject *cpu = member_object(facts, "cpu");
	g_autoptr(GPtrArray) findings = NULL;
	CliFinding *f;

	/* the kernel's words are the same on arm64, the x86 CPU bits behind them are not */
	json_object_set_string_member(cpu, "architecture", "aarch64");
	json_object_set_null_member(cpu, "cpuid");
	findings = cli_audit_run(facts);
	dump(findings);
	f = assert_finding(findings, "CPU-VULNERABLE", "cpu/spec_store_bypass", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "(no CPU-model cause known)");
	g_assert_null(strstr(f->hint, "ssbd"));
	g_assert_null(strstr(f->hint, "microcode"));
	assert_contains(f->hint, "firmware");
	f = assert_finding(findings, "CPU-VULNERABLE", "cpu/mds", CLI_LEVEL_NOTE);
	g_assert_null(strstr(f->hint, "md-clear"));
	g_assert_cmpuint(count_rule(findings, "CPU-VULNERABLE", CLI_LEVEL_WARN), ==, 0);
}

static void test_vulnerable_bad_values(void)
{
	g_autoptr(JsonNode) node =
	    json_from_string("{\"cpu\": {\"vulnerabilities\": {\"mds\": 1, \"l1tf\": null, "
	                     "\"spec_store_bypass\": \"Vulnerable\"}}, \"errors\": []}",
	                     NULL);
	g_autoptr(JsonNode) wrong =
	    json_from_string("{\"cpu\": {\"vulnerabilities\": \"Vulnerable\"}}", NULL);
	g_autoptr(GPtrArray) findings = cli_audit_run(fixture_object(node));
	g_autoptr(GPtrArray) wrong_findings = cli_audit_run(fixture_object(wrong));

	dump(findings);
	/* texts that are not strings are skipped, the rest still judged */
	g_assert_cmpuint(count_rule(findings, "CPU-VULNERABLE", -1), ==, 1);
	assert_finding(findings, "CPU-VULNERABLE", "cpu/spec_store_bypass", CLI_LEVEL_WARN);
	assert_no_finding(wrong_findings, "CPU-VULNERABLE", NULL);
	assert_finding(wrong_findings, "FACTS-ERRORS", "cpu.vulnerabilities", CLI_LEVEL_NOTE);
}

static void test_require_parse(void)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) flags = NULL;
	guint level = 0;
	const char *const bad_levels[] = { "",   "x86-64-v0",  "x86-64-v5",  "x86-64-v",
		                           "v3", "x86-64-v3 ", "x86-64-v+3", "X86-64-V3" };
	const char *const bad_flags[] = { "", ",", "avx2,", "a b", "avx2;aes", "é" };

	g_assert_true(cli_isa_level_parse("x86-64-v3", &level, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(level, ==, 3);
	for (guint i = 0; i < G_N_ELEMENTS(bad_levels); i++) {
		g_autoptr(GError) e = NULL;
		g_assert_false(cli_isa_level_parse(bad_levels[i], &level, &e));
		g_assert_error(e, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		assert_contains(e->message,
		                "expected x86-64-v1, x86-64-v2, x86-64-v3 or x86-64-v4");
	}
	/* --require-level: at most one x86-64 and one Arm level */
	{
		const struct {
			const char *list;
			guint x86, arm;
		} good[] = {
			{ "x86-64-v3", 3, 0 },
			{ "armv8.2-a", 0, 82 },
			{ "x86-64-v3,armv8.2-a", 3, 82 },
			{ "armv9.3-a,x86-64-v1", 1, 93 },
			{ "armv8-a", 0, 80 },
			{ "armv9-a", 0, 90 },
		};
		const struct {
			const char *list, *message;
		} bad[] = {
			{ "", "invalid ISA level '' in ''" },
			{ ",", "invalid ISA level '' in ','" },
			{ "x86-64-v3,", "invalid ISA level '' in 'x86-64-v3,'" },
			{ "armv8.9-a", "invalid ISA level 'armv8.9-a'" },
			{ "armv9.4-a", "invalid ISA level 'armv9.4-a'" },
			{ "armv8.0-a", "invalid ISA level 'armv8.0-a'" },
			{ "x86-64-v3, armv8.2-a", "invalid ISA level ' armv8.2-a'" },
			{ "ARMV8.2-A", "invalid ISA level 'ARMV8.2-A'" },
			{ "x86-64-v2,x86-64-v3",
			  "'x86-64-v2' and 'x86-64-v3' in 'x86-64-v2,x86-64-v3' "
			  "are both x86-64 levels" },
			{ "armv8-a,x86-64-v2,armv8-a",
			  "'armv8-a' and 'armv8-a' in "
			  "'armv8-a,x86-64-v2,armv8-a' are both Arm levels" },
		};

		for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
			guint x86 = 99, arm = 99;

			g_assert_true(cli_require_level_parse(good[i].list, &x86, &arm, &error));
			g_assert_no_error(error);
			g_assert_cmpuint(x86, ==, good[i].x86);
			g_assert_cmpuint(arm, ==, good[i].arm);
		}
		for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
			g_autoptr(GError) e = NULL;
			guint x86 = 0, arm = 0;

			g_test_message("'%s'", bad[i].list);
			g_assert_false(cli_require_level_parse(bad[i].list, &x86, &arm, &e));
			g_assert_error(e, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
			assert_contains(e->message, bad[i].message);
		}
		/* every word of the completion parses, and every Arm level name is a word */
		for (guint i = 0; cli_require_level_words[i] != NULL; i++) {
			guint x86 = 0, arm = 0;

			g_assert_true(
			    cli_require_level_parse(cli_require_level_words[i], &x86, &arm, NULL));
		}
		for (guint code = 80; code <= 99; code++) {
			g_autofree char *name = gb_isa_arm_level_name(code);

			if (name != NULL)
				g_assert_true(g_strv_contains(cli_require_level_words, name));
		}
	}
	flags = cli_cpu_flags_parse("avx2, sse4_2,avx2,md-clear", &error);
	g_assert_no_error(error);
	g_assert_cmpuint(g_strv_length(flags), ==, 3);
	g_assert_cmpstr(flags[1], ==, "sse4_2");
	for (guint i = 0; i < G_N_ELEMENTS(bad_flags); i++) {
		g_autoptr(GError) e = NULL;
		g_auto(GStrv) none = cli_cpu_flags_parse(bad_flags[i], &e);
		g_assert_null(none);
		g_assert_error(e, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		assert_contains(e->message, "invalid CPU flag");
	}
}

static void test_numa_memoryless(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("numa-memoryless.json");
	CliFinding *f;

	f = assert_finding(findings, "NUMA-MEMORYLESS-NODE", "numa/node1", CLI_LEVEL_WARN);
	assert_contains(f->detail, "2 CPUs and no memory");
	f = assert_finding(findings, "NUMA-MEMORYLESS-NODE", "numa/node2", CLI_LEVEL_WARN);
	assert_contains(f->detail, "memory and no CPUs");
	assert_no_finding(findings, "NUMA-MEMORYLESS-NODE", "numa/node0");
	assert_no_finding(findings, "NUMA-MEMORYLESS-NODE", "numa");
	f = assert_finding(findings, "NUMA-SPAN", "numa", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "3 NUMA nodes");
	f = assert_finding(findings, "HUGEPAGES", "memory", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "32.0 GiB");
	assert_contains(f->detail, "THP never");
	assert_finding(findings, "CLOCK-SOURCE", "clocksource", CLI_LEVEL_PASS);
	assert_finding(findings, "DISK-SCHEDULER", "block/nvme0n1", CLI_LEVEL_PASS);
	assert_finding(findings, "NIC-SINGLE-QUEUE", "net/eth0", CLI_LEVEL_PASS);
	assert_finding(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_PASS);
	assert_finding(findings, "CPU-MISSING-SIMD", "cpu", CLI_LEVEL_PASS);
	assert_finding(findings, "FACTS-ERRORS", "facts", CLI_LEVEL_PASS);
	g_assert_cmpint(cli_audit_worst(findings), ==, CLI_LEVEL_WARN);
}

static void test_virtio_scsi_writethrough(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("virtio-scsi-writethrough.json");
	CliFinding *f;

	f = assert_finding(findings, "DISK-WRITE-THROUGH", "block/sda", CLI_LEVEL_WARN);
	assert_contains(f->detail, "virtio-scsi");
	assert_contains(f->hint, "cache=none");
	assert_contains(f->hint, "io=native");
	assert_finding(findings, "DISK-WRITE-THROUGH", "block/vdb", CLI_LEVEL_PASS);
	f = assert_finding(findings, "DISK-SCHEDULER", "block/vdb", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "mq-deadline");
	assert_contains(f->hint, "echo none > /sys/block/vdb/queue/scheduler");
	/* virtio-scsi is not in the scheduler rule's scope */
	assert_no_finding(findings, "DISK-SCHEDULER", "block/sda");
	assert_finding(findings, "DISK-EMULATED", "block/sda", CLI_LEVEL_PASS);
	f = assert_finding(findings, "NIC-SINGLE-QUEUE", "net/eth0", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "1 rx queue for 8 vCPUs");
	assert_contains(f->hint, "queues='8'");
	assert_contains(f->hint, "mq=on,vectors=18");
	assert_contains(f->hint, "ethtool -L eth0 combined 8");
	f = assert_finding(findings, "CLOCK-SOURCE", "clocksource", CLI_LEVEL_WARN);
	assert_contains(f->detail, "hpet");
	assert_contains(f->hint, "tsc is available");
	f = assert_finding(findings, "STEAL-TIME", "steal", CLI_LEVEL_WARN);
	assert_contains(f->detail, "12.5 %");
	f = assert_finding(findings, "CPU-NESTED-EXPOSED", "cpu", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "vmx");
	/* the flags lack aes while CPUID has it: say so */
	f = assert_finding(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_FAIL);
	assert_contains(f->detail, "no aes in the CPU flags");
	assert_contains(f->detail, "CPUID reports aes but /proc/cpuinfo does not list it");
	g_assert_null(strstr(f->detail, "pclmulqdq but"));
	/* exactly 8 GiB: not "more than 8 GiB" */
	assert_finding(findings, "HUGEPAGES", "memory", CLI_LEVEL_PASS);
	/* the agent's own error is reported once, not again as "unknown" */
	f = assert_finding(findings, "FACTS-ERRORS", "memory.thp", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "No such file or directory");
	g_assert_cmpuint(count_rule(findings, "FACTS-ERRORS", -1), ==, 1);
}

static void test_tcg(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("tcg.json");
	CliFinding *f;

	f = assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_WARN);
	assert_contains(f->detail, "no hardware acceleration");
	/* "QEMU TCG CPU" (-cpu max) is not a legacy model */
	assert_finding(findings, "CPU-LEGACY-MODEL", "cpu", CLI_LEVEL_PASS);
	assert_finding(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_PASS);
	f = assert_finding(findings, "CPU-MISSING-SIMD", "cpu", CLI_LEVEL_NOTE);
	assert_contains(f->detail, "missing avx2, vaes ");
	g_assert_null(strstr(f->detail, "sha_ni"));
	/* vmxnet3 is emulated when the hypervisor is not VMware */
	f = assert_finding(findings, "NIC-EMULATED", "net/ens4", CLI_LEVEL_WARN);
	assert_contains(f->detail, "vmxnet3");
	assert_contains(f->hint, "virtio-net-pci");
	f = assert_finding(findings, "CLOCK-SOURCE", "clocksource", CLI_LEVEL_WARN);
	assert_contains(f->hint, "kvm-clock");
	/* steal percent null (no window): nothing to judge, nothing unknown */
	assert_no_finding(findings, "STEAL-TIME", NULL);
	assert_finding(findings, "FACTS-ERRORS", "facts", CLI_LEVEL_PASS);
	/* one vCPU: a single queue is enough (and vmxnet3 is not virtio_net anyway) */
	assert_no_finding(findings, "NIC-SINGLE-QUEUE", NULL);
}

static void set_hypervisor(JsonObject *facts, const char *vendor, const char *signature)
{
	JsonObject *hv = member_object(member_object(facts, "cpu"), "hypervisor");
	if (vendor != NULL)
		json_object_set_string_member(hv, "vendor", vendor);
	else
		json_object_set_null_member(hv, "vendor");
	if (signature != NULL)
		json_object_set_string_member(hv, "signature", signature);
	else
		json_object_set_null_member(hv, "signature");
}

static void test_nic_vmware(void)
{
	g_autoptr(JsonNode) node = load_fixture("tcg.json");
	JsonObject *facts = fixture_object(node);
	JsonObject *nic = element_object(facts, "net", 0);
	CliFinding *f;

	set_hypervisor(facts, "VMware", "VMwareVMware");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_finding(findings, "NIC-EMULATED", "net/ens4", CLI_LEVEL_PASS);
		assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_PASS);
	}
	/* e1000 is emulated under VMware too; the hint names VMware's own answer */
	json_object_set_string_member(nic, "driver", "e1000e");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		f = assert_finding(findings, "NIC-EMULATED", "net/ens4", CLI_LEVEL_WARN);
		assert_contains(f->hint, "vmxnet3");
	}
	/* vmxnet3 under KVM */
	json_object_set_string_member(nic, "driver", "vmxnet3");
	set_hypervisor(facts, "KVM", "KVMKVMKVM");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_finding(findings, "NIC-EMULATED", "net/ens4", CLI_LEVEL_WARN);
	}
	/* a NIC without a driver (bridge, veth) is not judged */
	json_object_set_null_member(nic, "driver");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_no_finding(findings, "NIC-EMULATED", NULL);
		assert_no_finding(findings, "FACTS-ERRORS", "net[0].driver");
	}
}

static void test_hypervisor_variants(void)
{
	g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
	JsonObject *facts = fixture_object(node);
	JsonObject *hv = member_object(member_object(facts, "cpu"), "hypervisor");
	CliFinding *f;

	/* an agent that only knew the raw signature */
	set_hypervisor(facts, NULL, "KVMKVMKVM");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_PASS);
	}
	set_hypervisor(facts, "TCGTCGTCGTCG", NULL);
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_WARN);
	}
	set_hypervisor(facts, "Microsoft Hv", "Microsoft Hv");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_PASS);
	}
	set_hypervisor(facts, "FooVisorFoo", "FooVisorFoo");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		f = assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_NOTE);
		assert_contains(f->detail, "FooVisorFoo");
	}
	set_hypervisor(facts, NULL, NULL);
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		f = assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_NOTE);
		assert_contains(f->detail, "vendor unknown");
	}
	json_object_set_boolean_member(hv, "present", FALSE);
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		f = assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_NOTE);
		assert_contains(f->detail, "no hypervisor");
	}
	json_object_set_string_member(hv, "present", "yes");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_no_finding(findings, "CPU-HYPERVISOR", NULL);
		f = assert_finding(findings, "FACTS-ERRORS", "cpu.hypervisor.present",
		                   CLI_LEVEL_NOTE);
		assert_contains(f->detail, "CPU-HYPERVISOR");
	}
}

static void test_legacy_names(void)
{
	g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
	JsonObject *facts = fixture_object(node);
	JsonObject *cpu = member_object(facts, "cpu");
	const struct {
		const char *model;
		CliLevel level;
	} cases[] = {
		{ "QEMU Virtual CPU version 2.5+", CLI_LEVEL_FAIL },
		{ "QEMU Virtual CPU version 1.0", CLI_LEVEL_FAIL },
		{ "Common KVM processor", CLI_LEVEL_FAIL },
		{ "Common 32-bit KVM processor", CLI_LEVEL_FAIL },
		{ "common kvm processor", CLI_LEVEL_FAIL },
		{ "kvm64", CLI_LEVEL_FAIL },
		{ "qemu32", CLI_LEVEL_FAIL },
		{ "Intel CPU (qemu64)", CLI_LEVEL_FAIL },
		{ "xkvm640 processor", CLI_LEVEL_PASS },
		{ "QEMU TCG CPU version 2.5+", CLI_LEVEL_PASS },
		{ "Intel Xeon Processor (Cascadelake)", CLI_LEVEL_PASS },
		{ "", CLI_LEVEL_PASS },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) findings = NULL;
		json_object_set_string_member(cpu, "model_name", cases[i].model);
		findings = cli_audit_run(facts);
		assert_finding(findings, "CPU-LEGACY-MODEL", "cpu", cases[i].level);
	}
	/* null model (aarch64 has none): nothing to judge and nothing unknown */
	json_object_set_null_member(cpu, "model_name");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_no_finding(findings, "CPU-LEGACY-MODEL", NULL);
		assert_finding(findings, "FACTS-ERRORS", "facts", CLI_LEVEL_PASS);
	}
}

static void test_aarch64(void)
{
	g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
	JsonObject *facts = fixture_object(node);
	JsonObject *cpu = member_object(facts, "cpu");
	const char *const arm_flags[] = { "fp",   "asimd", "evtstrm", "aes", "pmull",
		                          "sha1", "sha2",  "crc32",   NULL };
	const char *const arm_no_pmull[] = { "fp", "asimd", "aes", NULL };
	CliFinding *f;

	const char *const missing_v81[] = { "atomics", "asimdrdm", NULL };
	CliAuditRequire require_v3 = { .isa_level = 3 };

	json_object_set_string_member(cpu, "architecture", "aarch64");
	json_object_set_null_member(cpu, "cpuid");
	json_object_set_string_member(cpu, "model_name", "Cortex-A57");
	json_object_set_string_member(cpu, "isa_level", "armv8-a");
	json_object_set_array_member(cpu, "isa_missing", strv_to_array(missing_v81));
	json_object_set_array_member(cpu, "flags", strv_to_array(arm_flags));
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		f = assert_finding(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_PASS);
		assert_contains(f->detail, "pmull");
		/* x86 extension names mean nothing here */
		assert_no_finding(findings, "CPU-MISSING-SIMD", NULL);
		assert_no_finding(findings, "CPU-NESTED-EXPOSED", NULL);
		f = assert_finding(findings, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_NOTE);
		assert_contains(f->detail, "ISA level armv8-a (armv8.1-a lacks atomics, asimdrdm");
		assert_finding(findings, "CPU-LEGACY-MODEL", "cpu", CLI_LEVEL_PASS);
		assert_finding(findings, "FACTS-ERRORS", "facts", CLI_LEVEL_PASS);
		g_assert_cmpint(cli_audit_worst(findings), ==, CLI_LEVEL_NOTE);
	}
	/* an x86-64 level required of the fleet says nothing about an arm64 guest */
	{
		g_autoptr(CliFacts) model = cli_facts_new(facts);
		g_autoptr(GPtrArray) findings = cli_audit_run_require(model, &require_v3);
		f = assert_finding(findings, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_NOTE);
		assert_contains(f->detail, "the required x86-64-v3 applies to x86 guests only");
	}
	/* an Arm level is required of arm64 guests: armv8-a reaches armv8-a, not armv8.1-a */
	{
		g_autoptr(CliFacts) model = cli_facts_new(facts);
		CliAuditRequire v80 = { .isa_level = 3, .arm_level = 80 };
		CliAuditRequire v82 = { .arm_level = 82 };
		g_autoptr(GPtrArray) reached = cli_audit_run_require(model, &v80);
		g_autoptr(GPtrArray) below = cli_audit_run_require(model, &v82);

		f = assert_finding(reached, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_NOTE);
		assert_contains(f->detail, "; required armv8-a; the required x86-64-v3 applies to "
		                           "x86 guests only");
		f = assert_finding(below, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_FAIL);
		assert_contains(f->detail,
		                "ISA level armv8-a does not reach the required armv8.2-a: "
		                "lacks atomics, asimdrdm, dcpop");
		assert_contains(f->hint, "host-passthrough");
		g_assert_cmpint(cli_audit_worst(below), ==, CLI_LEVEL_FAIL);
	}
	/* Armv9.0 reaches Armv8.5, not Armv8.6: the levels are no chain */
	{
		const char *const v9[] = { "fp",    "asimd",  "atomics", "asimdrdm", "crc32",
			                   "dcpop", "jscvt",  "fcma",    "lrcpc",    "paca",
			                   "pacg",  "dit",    "uscat",   "ilrcpc",   "flagm",
			                   "sb",    "dcpodp", "flagm2",  "frint",    "bti",
			                   "sve",   "sve2",   "aes",     "pmull",    NULL };
		const char *const none[] = { NULL };
		CliAuditRequire v85 = { .arm_level = 85 };
		CliAuditRequire v86 = { .arm_level = 86 };

		json_object_set_string_member(cpu, "isa_level", "armv9-a");
		json_object_set_array_member(cpu, "isa_missing", strv_to_array(none));
		json_object_set_array_member(cpu, "flags", strv_to_array(v9));
		{
			g_autoptr(CliFacts) model = cli_facts_new(facts);
			g_autoptr(GPtrArray) v85_findings = cli_audit_run_require(model, &v85);
			g_autoptr(GPtrArray) v86_findings = cli_audit_run_require(model, &v86);

			f = assert_finding(v85_findings, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_NOTE);
			assert_contains(f->detail,
			                "ISA level armv9-a (a lower bound from the Features "
			                "hwcaps); required armv8.5-a");
			f = assert_finding(v86_findings, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_FAIL);
			assert_contains(f->detail, "does not reach the required armv8.6-a: lacks "
			                           "i8mm, bf16");
		}
		/* a level that cannot be read cannot meet a requirement */
		json_object_set_null_member(cpu, "isa_level");
		{
			g_autoptr(CliFacts) model = cli_facts_new(facts);
			g_autoptr(GPtrArray) findings = cli_audit_run_require(model, &v85);

			f = assert_finding(findings, "CPU-ISA-LEVEL", "cpu", CLI_LEVEL_WARN);
			assert_contains(f->detail, "the required armv8.5-a cannot be checked");
		}
		json_object_set_array_member(cpu, "isa_missing", strv_to_array(missing_v81));
		json_object_set_array_member(cpu, "flags", strv_to_array(arm_flags));
	}
	/* an x86 level name on an arm64 guest is a lie: noted, not judged */
	json_object_set_string_member(cpu, "isa_level", "x86-64-v3");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_no_finding(findings, "CPU-ISA-LEVEL", NULL);
		assert_finding(findings, "FACTS-ERRORS", "cpu.isa_level", CLI_LEVEL_NOTE);
	}
	json_object_set_string_member(cpu, "isa_level", "armv8-a");
	json_object_set_array_member(cpu, "flags", strv_to_array(arm_no_pmull));
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		f = assert_finding(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_FAIL);
		assert_contains(f->detail, "no pmull");
		assert_contains(f->detail, "software path");
		assert_contains(f->hint, "Crypto Extensions");
	}
	/* QEMU named by the device tree: TCG only when the CPU is QEMU's own max */
	{
		JsonObject *hv = member_object(cpu, "hypervisor");

		json_object_set_string_member(hv, "vendor", "QEMU");
		json_object_set_null_member(hv, "signature");
		json_object_set_string_member(hv, "source", "device-tree");
		{
			g_autoptr(GPtrArray) findings = cli_audit_run(facts);
			f = assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_NOTE);
			assert_contains(f->detail, "whether KVM or TCG runs it is not visible");
		}
		/* arm64 Nitro instances: DMI only, a KVM-based hypervisor */
		json_object_set_string_member(hv, "vendor", "Amazon EC2");
		json_object_set_string_member(hv, "source", "dmi");
		{
			g_autoptr(GPtrArray) findings = cli_audit_run(facts);
			f = assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_PASS);
			assert_contains(f->detail, "hardware-accelerated hypervisor Amazon EC2");
		}
		json_object_set_string_member(hv, "vendor", "QEMU");
		json_object_set_string_member(hv, "source", "device-tree");
		json_object_set_string_member(cpu, "model_name", "QEMU max");
		{
			g_autoptr(GPtrArray) findings = cli_audit_run(facts);
			f = assert_finding(findings, "CPU-HYPERVISOR", "cpu", CLI_LEVEL_WARN);
			assert_contains(f->detail, "only TCG presents");
		}
	}
	/* an architecture with other names for everything: not judged */
	json_object_set_string_member(cpu, "architecture", "s390x");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_no_finding(findings, "CPU-NO-AESNI", NULL);
	}
}

static void test_cpuid_disagrees(void)
{
	g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
	JsonObject *facts = fixture_object(node);
	JsonObject *cpuid = member_object(member_object(facts, "cpu"), "cpuid");
	CliFinding *f;

	/* flags list aes, CPUID says no: still PASS (the kernel uses it), but say so */
	json_object_set_boolean_member(cpuid, "pclmulqdq", FALSE);
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		f = assert_finding(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_PASS);
		assert_contains(f->detail,
		                "/proc/cpuinfo lists pclmulqdq but CPUID does not report it");
	}
	/* cpuid of the wrong shape: the flags still decide; the shape is noted */
	json_object_set_string_member(cpuid, "aes", "true");
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_finding(findings, "CPU-NO-AESNI", "cpu", CLI_LEVEL_PASS);
		assert_finding(findings, "FACTS-ERRORS", "cpu.cpuid.aes", CLI_LEVEL_NOTE);
	}
}

static void test_flags_empty(void)
{
	g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
	JsonObject *facts = fixture_object(node);
	JsonObject *cpu = member_object(facts, "cpu");
	const char *const none[] = { NULL };
	CliFinding *f;

	/* no CPU has no flags: an empty list is "could not read", not "no AES" */
	json_object_set_array_member(cpu, "flags", strv_to_array(none));
	{
		g_autoptr(GPtrArray) findings = cli_audit_run(facts);
		assert_no_finding(findings, "CPU-NO-AESNI", NULL);
		f = assert_finding(findings, "FACTS-ERRORS", "cpu.flags", CLI_LEVEL_NOTE);
		assert_contains(f->detail, "unknown: cpu.flags missing or of the wrong type");
		assert_contains(f->detail, "CPU-NO-AESNI, CPU-MISSING-SIMD, CPU-NESTED-EXPOSED");
		g_assert_cmpuint(count_rule(findings, "FACTS-ERRORS", -1), ==, 1);
	}
}

static void test_wrong_types(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("wrong-types.json");
	const char *const unknown[] = {
		"cpu.architecture",
		"cpu.model_name",
		"cpu.flags",
		"cpu.hypervisor.present",
		"memory.total_bytes",
		"memory.numa.nodes[0].id",
		"memory.numa.nodes[0].cpus",
		"memory.numa.nodes[0].memory_bytes",
		"memory.numa.nodes[1]",
		"clocksource.current",
		"steal.percent",
		"block[0]",
		"block[1]",
		"block[2]",
		"block[3].name",
		"block[3].bus",
		"block[3].cdrom",
		"net",
		"errors[0]",
		"errors[1]",
		"errors[2]",
	};

	dump(findings);
	for (guint i = 0; i < G_N_ELEMENTS(unknown); i++) {
		CliFinding *f =
		    assert_finding(findings, "FACTS-ERRORS", unknown[i], CLI_LEVEL_NOTE);
		g_autofree char *prefix =
		    g_strdup_printf("unknown: %s missing or of the wrong type", unknown[i]);
		g_assert_true(g_str_has_prefix(f->detail, prefix));
	}
	/* nothing was judged on garbage */
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		g_assert_cmpstr(f->rule, ==, "FACTS-ERRORS");
		g_assert_cmpint(f->level, ==, CLI_LEVEL_NOTE);
	}
}

static void test_missing_members(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("missing-members.json");
	const char *const unknown[] = {
		"cpu.flags",   "cpu.hypervisor", "memory.total_bytes", "memory.numa.nodes",
		"clocksource", "steal",          "block[0].name",      "block[0].bus",
	};

	dump(findings);
	for (guint i = 0; i < G_N_ELEMENTS(unknown); i++)
		assert_finding(findings, "FACTS-ERRORS", unknown[i], CLI_LEVEL_NOTE);
	/* nullable members absent: silence (model_name, driver, errors) */
	assert_no_finding(findings, "FACTS-ERRORS", "cpu.model_name");
	assert_no_finding(findings, "FACTS-ERRORS", "net[0].driver");
	assert_no_finding(findings, "FACTS-ERRORS", "errors");
	g_assert_cmpuint(count_rule(findings, "FACTS-ERRORS", -1), ==, G_N_ELEMENTS(unknown));
	g_assert_cmpint(cli_audit_worst(findings), ==, CLI_LEVEL_NOTE);
}

static void check_empty(GPtrArray *findings)
{
	const char *const sections[] = { "cpu", "memory", "clocksource", "steal", "block", "net" };
	CliFinding *f;

	g_assert_cmpuint(findings->len, ==, G_N_ELEMENTS(sections));
	for (guint i = 0; i < G_N_ELEMENTS(sections); i++)
		assert_finding(findings, "FACTS-ERRORS", sections[i], CLI_LEVEL_NOTE);
	/* one note per missing section, naming every rule that needed it */
	f = find(findings, "FACTS-ERRORS", "cpu");
	assert_contains(f->detail, "needed by CPU-LEGACY-MODEL, CPU-NO-AESNI");
	assert_contains(f->detail, "CPU-HYPERVISOR");
}

static void test_empty(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("empty.json");
	g_autoptr(GPtrArray) findings_null = cli_audit_run(NULL);
	check_empty(findings);
	check_empty(findings_null);
}

static void test_extra_members(void)
{
	g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
	JsonObject *facts = fixture_object(node);
	g_autoptr(GPtrArray) before = cli_audit_run(facts);
	g_autoptr(GPtrArray) after = NULL;

	json_object_set_string_member(facts, "future_section", "x");
	json_object_set_int_member(member_object(facts, "cpu"), "microcode", 0x42);
	json_object_set_boolean_member(element_object(facts, "block", 0), "dax", TRUE);
	json_object_set_array_member(member_object(facts, "memory"), "tiers", json_array_new());
	after = cli_audit_run(facts);
	g_assert_cmpuint(after->len, ==, before->len);
	for (guint i = 0; i < after->len; i++) {
		CliFinding *a = g_ptr_array_index(before, i);
		CliFinding *b = g_ptr_array_index(after, i);
		g_assert_cmpstr(a->rule, ==, b->rule);
		g_assert_cmpstr(a->subject, ==, b->subject);
		g_assert_cmpint(a->level, ==, b->level);
	}
}

static JsonObject *make_huge(guint n)
{
	JsonObject *facts = json_object_new();
	JsonArray *block = json_array_new();
	JsonArray *net = json_array_new();

	for (guint i = 0; i < n; i++) {
		JsonObject *disk = json_object_new();
		JsonObject *nic = json_object_new();
		g_autofree char *dname = g_strdup_printf("sd%u", i);
		g_autofree char *nname = g_strdup_printf("eth%u", i);
		json_object_set_string_member(disk, "name", dname);
		json_object_set_string_member(disk, "bus", i % 2 == 0 ? "sata" : "virtio-blk");
		json_object_set_string_member(disk, "driver", i % 2 == 0 ? "ahci" : "virtio_blk");
		json_object_set_string_member(disk, "scheduler", "mq-deadline");
		json_object_set_string_member(disk, "write_cache", "write through");
		json_array_add_object_element(block, disk);
		json_object_set_string_member(nic, "name", nname);
		json_object_set_string_member(nic, "driver", "e1000");
		json_array_add_object_element(net, nic);
	}
	json_object_set_array_member(facts, "block", block);
	json_object_set_array_member(facts, "net", net);
	return facts;
}

static void test_huge_arrays(void)
{
	g_autoptr(JsonObject) facts = make_huge(10000);
	g_autoptr(GPtrArray) findings = cli_audit_run(facts);
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);

	g_assert_cmpuint(count_rule(findings, "DISK-EMULATED", CLI_LEVEL_WARN), ==, 5000);
	g_assert_cmpuint(count_rule(findings, "DISK-EMULATED", CLI_LEVEL_PASS), ==, 5000);
	g_assert_cmpuint(count_rule(findings, "DISK-WRITE-THROUGH", CLI_LEVEL_WARN), ==, 5000);
	g_assert_cmpuint(count_rule(findings, "DISK-SCHEDULER", CLI_LEVEL_NOTE), ==, 5000);
	g_assert_cmpuint(count_rule(findings, "NIC-EMULATED", CLI_LEVEL_WARN), ==, 10000);
	assert_finding(findings, "DISK-EMULATED", "block/sd9998", CLI_LEVEL_WARN);
	cli_audit_render_table(table, "big", findings, FALSE);
	cli_audit_render_csv_rows(csv, "big", findings);
	g_assert_cmpuint(table->len, >, 0);
	g_assert_cmpuint(csv->len, >, 0);
}

static void test_errors_coverage(void)
{
	const char *const spellings[] = { "block[0].bus", "block.vda.bus", "block/vda.bus",
		                          "block[0]", "block" };

	for (guint i = 0; i <= G_N_ELEMENTS(spellings); i++) {
		g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
		JsonObject *facts = fixture_object(node);
		JsonArray *errors = json_array_new();
		g_autoptr(GPtrArray) findings = NULL;

		json_object_set_null_member(element_object(facts, "block", 0), "bus");
		if (i < G_N_ELEMENTS(spellings)) {
			JsonObject *entry = json_object_new();
			json_object_set_string_member(entry, "member", spellings[i]);
			json_object_set_string_member(entry, "reason", "gone");
			json_array_add_object_element(errors, entry);
		}
		json_object_set_array_member(facts, "errors", errors);
		findings = cli_audit_run(facts);
		if (i < G_N_ELEMENTS(spellings)) {
			/* the agent said why: once, in its words */
			CliFinding *f =
			    assert_finding(findings, "FACTS-ERRORS", spellings[i], CLI_LEVEL_NOTE);
			g_assert_true(g_str_has_prefix(f->detail, "the agent could not read"));
			g_assert_cmpuint(count_rule(findings, "FACTS-ERRORS", -1), ==, 1);
		} else {
			CliFinding *f = assert_finding(findings, "FACTS-ERRORS", "block[0].bus",
			                               CLI_LEVEL_NOTE);
			assert_contains(f->detail, "DISK-EMULATED, DISK-WRITE-THROUGH, "
			                           "DISK-SCHEDULER");
		}
		assert_no_finding(findings, "DISK-EMULATED", "block/vda");
	}
}

/*
 * The same member named in several errors entries (a guest that lists a disk
 * twice names its errors twice): one finding, no double free. A guest chooses
 * how often it repeats a name; every spelling repeated, in a fleet of two.
 */
static void test_errors_repeated(void)
{
	g_autoptr(CliAuditSummary) summary = cli_audit_summary_new();

	for (guint guest = 0; guest < 2; guest++) {
		g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
		JsonObject *facts = fixture_object(node);
		JsonArray *block = NULL;
		JsonArray *errors = json_array_new();
		g_autoptr(GPtrArray) findings = NULL;

		json_object_set_null_member(element_object(facts, "block", 0), "bus");
		/* the same disk twice, as the hostile guest sent it */
		block = json_object_get_array_member(facts, "block");
		json_array_add_element(block, json_node_copy(json_array_get_element(block, 0)));
		for (guint i = 0; i < 3; i++) {
			const char *const members[] = { "block[0].bus", "block.vda.bus", "" };
			for (guint m = 0; m < G_N_ELEMENTS(members); m++) {
				JsonObject *entry = json_object_new();
				json_object_set_string_member(entry, "member", members[m]);
				json_object_set_string_member(entry, "reason", "gone");
				json_array_add_object_element(errors, entry);
			}
		}
		json_object_set_array_member(facts, "errors", errors);
		findings = cli_audit_run(facts);
		/* the agent's own entries, each as sent: nothing lost, nothing judged twice */
		g_assert_cmpuint(count_rule(findings, "FACTS-ERRORS", -1), >=, 6);
		assert_no_finding(findings, "DISK-EMULATED", "block/vda");
		cli_audit_summary_add(summary, guest == 0 ? "bad" : "other", findings);
	}
}

static void test_errors_numa(void)
{
	g_autoptr(JsonNode) node = load_fixture("numa-memoryless.json");
	JsonObject *facts = fixture_object(node);
	JsonObject *memory = member_object(facts, "memory");
	JsonObject *numa = member_object(memory, "numa");
	JsonObject *node1 = element_object(numa, "nodes", 1);
	JsonArray *errors = json_array_new();
	JsonObject *entry = json_object_new();
	g_autoptr(GPtrArray) findings = NULL;

	/* the agent's spelling for node ids, as agent/facts/memory.c writes it */
	json_object_set_null_member(node1, "cpus");
	json_object_set_string_member(entry, "member", "memory.numa.node1.cpus");
	json_object_set_string_member(entry, "reason", "node1/cpulist: Permission denied");
	json_array_add_object_element(errors, entry);
	json_object_set_array_member(facts, "errors", errors);
	findings = cli_audit_run(facts);
	assert_finding(findings, "FACTS-ERRORS", "memory.numa.node1.cpus", CLI_LEVEL_NOTE);
	assert_no_finding(findings, "FACTS-ERRORS", "memory.numa.nodes[1].cpus");
	g_assert_cmpuint(count_rule(findings, "FACTS-ERRORS", -1), ==, 1);
	/* node 1 is not judged; node 2 still is */
	assert_no_finding(findings, "NUMA-MEMORYLESS-NODE", "numa/node1");
	assert_finding(findings, "NUMA-MEMORYLESS-NODE", "numa/node2", CLI_LEVEL_WARN);
}

static void test_findings_json(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("legacy-qemu64.json");
	g_autoptr(JsonNode) node = cli_audit_findings_to_json(findings);
	g_autoptr(GPtrArray) empty = g_ptr_array_new();
	g_autoptr(JsonNode) empty_node = cli_audit_findings_to_json(empty);
	const char *const allowed[] = { "rule", "level", "subject", "detail", "hint", NULL };
	JsonArray *array;
	guint n_hints = 0;

	g_assert_true(JSON_NODE_HOLDS_ARRAY(node));
	array = json_node_get_array(node);
	g_assert_cmpuint(json_array_get_length(array), ==, findings->len);
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		g_autoptr(GError) error = NULL;
		JsonObject *obj = NULL;
		const char *str = NULL;
		CliLevel level = CLI_LEVEL_PASS;

		g_assert_true(gb_json_node_get_object(json_array_get_element(array, i), "finding",
		                                      &obj, &error));
		g_assert_true(gb_json_check_members(obj, allowed, &error));
		g_assert_no_error(error);
		g_assert_cmpuint(json_object_get_size(obj), ==, 5);
		g_assert_true(gb_json_get_string(obj, "rule", GB_JSON_REQUIRED, &str, &error));
		g_assert_cmpstr(str, ==, f->rule);
		g_assert_true(gb_json_get_string(obj, "level", GB_JSON_REQUIRED, &str, &error));
		g_assert_true(cli_level_from_string(str, &level));
		g_assert_cmpint(level, ==, f->level);
		g_assert_true(gb_json_get_string(obj, "subject", GB_JSON_REQUIRED, &str, &error));
		g_assert_cmpstr(str, ==, f->subject);
		g_assert_true(gb_json_get_string(obj, "detail", GB_JSON_REQUIRED, &str, &error));
		g_assert_cmpstr(str, ==, f->detail);
		/* hint is always there: a string, or null when there is none */
		str = NULL;
		g_assert_true(gb_json_get_string(obj, "hint", GB_JSON_OPTIONAL, &str, &error));
		g_assert_cmpstr(str, ==, f->hint);
		if (str != NULL)
			n_hints++;
	}
	g_assert_cmpuint(n_hints, >, 0);
	g_assert_true(JSON_NODE_HOLDS_ARRAY(empty_node));
	g_assert_cmpuint(json_array_get_length(json_node_get_array(empty_node)), ==, 0);
}

/* the byte offset of the n-th occurrence-free column: where needle starts in line */
static gssize column_of(const char *line, const char *needle)
{
	const char *p = strstr(line, needle);
	return p != NULL ? p - line : -1;
}

static void test_render_table(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("legacy-qemu64.json");
	g_autoptr(GString) plain = g_string_new(NULL);
	g_autoptr(GString) color = g_string_new(NULL);
	g_auto(GStrv) lines = NULL;
	gssize subject_col = -1;
	guint n_rows = 0;

	cli_audit_render_table(plain, "vm1", findings, FALSE);
	cli_audit_render_table(color, "vm1", findings, TRUE);

	g_assert_null(strchr(plain->str, '\033'));
	assert_contains(plain->str, "vm1  FAIL  CPU-LEGACY-MODEL");
	assert_contains(plain->str, "vm1  WARN  DISK-EMULATED");
	assert_contains(plain->str, "\n    hint: use -cpu host");
	assert_contains(color->str, "vm1  \033[1;31mFAIL\033[0m  CPU-LEGACY-MODEL");
	assert_contains(color->str, "\033[32mPASS\033[0m");

	/* aligned: the subject column starts at the same offset on every finding line */
	lines = g_strsplit(plain->str, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		CliFinding *f;
		gssize col;
		if (!g_str_has_prefix(lines[i], "vm1  "))
			continue;
		f = g_ptr_array_index(findings, n_rows);
		n_rows++;
		col = column_of(lines[i] + 11 + strlen(f->rule), f->subject);
		g_assert_cmpint(col, >=, 2);
		col += 11 + (gssize)strlen(f->rule);
		if (subject_col < 0)
			subject_col = col;
		g_assert_cmpint(col, ==, subject_col);
	}
	g_assert_cmpuint(n_rows, ==, findings->len);
}

static void test_render_hostile(void)
{
	g_autoptr(GPtrArray) findings = audit_fixture("hostile-strings.json");
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);
	const char *guest = "evil\033[2J\x9b\xc2\x9bname";
	CliFinding *f;

	dump(findings);
	f = assert_finding(findings, "CPU-LEGACY-MODEL", "cpu", CLI_LEVEL_FAIL);
	assert_contains(f->detail, "\033]0;pwned");
	f = assert_finding(findings, "DISK-EMULATED", "block/sd\033[31ma", CLI_LEVEL_WARN);
	assert_contains(f->detail, "ahci,\"quoted\"\nnext");
	assert_finding(findings, "NIC-EMULATED", "net/eth0\033[8m", CLI_LEVEL_WARN);
	assert_finding(findings, "FACTS-ERRORS", "os.\033[31m", CLI_LEVEL_NOTE);

	cli_audit_render_table(table, guest, findings, TRUE);
	cli_audit_render_csv_rows(csv, guest, findings);
	for (const char *p = table->str; *p != '\0'; p++) {
		/* the only escapes are our own colour codes, "\033[" + digits/; + "m" */
		if (*p == '\033') {
			g_assert_cmpint(p[1], ==, '[');
			p += 2;
			while (g_ascii_isdigit(*p) || *p == ';')
				p++;
			g_assert_cmpint(*p, ==, 'm');
			continue;
		}
		g_assert_cmpint(*p, !=, '\007');
		g_assert_cmpint(*p, !=, '\r');
		g_assert_false((guchar)*p < 0x20 && *p != '\n');
	}
	g_assert_null(strstr(table->str, "\xc2\x9b"));
	assert_contains(table->str, "evil\\x1b[2J\\x9b\\u009bname");
	assert_contains(table->str, "block/sd\\x1b[31ma");
	assert_contains(table->str, "\\x1b]0;pwned\\x07QEMU");
	assert_contains(table->str, "ahci,\"quoted\"\\nnext");
	/* a fake line cannot be injected: "FAKE  PASS" stays on the real line */
	assert_contains(table->str, "KVM\\r\\nFAKE  PASS");
	/* CSV: CR/LF kept inside quotes, every other control escaped */
	g_assert_null(strchr(csv->str, '\033'));
	g_assert_null(strchr(csv->str, '\007'));
	/* one record per line: the newline is shown, not kept */
	assert_contains(csv->str,
	                "\"emulated storage: bus sata, driver ahci,\"\"quoted\"\"\\nnext");
	assert_contains(csv->str, "evil\\x1b[2J\\x9b\\u009bname,WARN,DISK-EMULATED,");
}

static void test_csv(void)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GPtrArray) findings =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_finding_free);
	const struct {
		const char *in;
		const char *out;
	} fields[] = {
		{ "plain", "plain" },   { "", "" },
		{ "a,b", "\"a,b\"" },   { "say \"hi\"", "\"say \"\"hi\"\"\"" },
		{ "x\ny", "\"x\ny\"" }, { "x\ry", "\"x\ry\"" },
		{ "\"", "\"\"\"\"" },   { "tab\there", "tab\there" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
		g_string_truncate(out, 0);
		cli_csv_append_field(out, fields[i].in);
		g_assert_cmpstr(out->str, ==, fields[i].out);
	}

	g_string_truncate(out, 0);
	cli_audit_render_csv_header(out);
	g_assert_cmpstr(out->str, ==, "guest,level,rule,subject,detail,hint\n");
	g_ptr_array_add(findings, cli_finding_new("DISK-EMULATED", CLI_LEVEL_WARN, "block/sda",
	                                          "bus ata, driver ata_piix", "use \"virtio\""));
	g_ptr_array_add(findings, cli_finding_new("CPU-HYPERVISOR", CLI_LEVEL_PASS, "cpu",
	                                          "line1\nline2\ttab", NULL));
	g_string_truncate(out, 0);
	cli_audit_render_csv_rows(out, "web,1", findings);
	g_assert_cmpstr(out->str, ==,
	                "\"web,1\",WARN,DISK-EMULATED,block/sda,\"bus ata, driver ata_piix\","
	                "\"use \"\"virtio\"\"\"\n"
	                "\"web,1\",PASS,CPU-HYPERVISOR,cpu,line1\\nline2\\ttab,\n");
}

static void test_summary(void)
{
	g_autoptr(CliAuditSummary) summary = cli_audit_summary_new();
	g_autoptr(GPtrArray) tuned = audit_fixture("tuned-host.json");
	g_autoptr(GPtrArray) legacy = audit_fixture("legacy-qemu64.json");
	g_autoptr(GPtrArray) cache = audit_fixture("virtio-scsi-writethrough.json");
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(JsonNode) node = NULL;
	g_autoptr(GError) error = NULL;
	JsonObject *root = NULL;
	JsonArray *rules = NULL;
	gint64 n = 0;
	const char *str = NULL;
	gboolean seen_write_through = FALSE;
	gboolean seen_legacy = FALSE;

	cli_audit_summary_add(summary, "web1", tuned);
	cli_audit_summary_add(summary, "legacy", legacy);
	cli_audit_summary_add(summary, "cache1", cache);
	cli_audit_summary_render_table(summary, table);
	g_test_message("%s", table->str);
	assert_contains(table->str, "3 guests, worst level FAIL (columns count guests)\nRULE       "
	                            "           PASS  NOTE  WARN  FAIL  NOT PASSING\n");
	/* CPU-LEGACY-MODEL: 2 PASS, 0 NOTE, 0 WARN, 1 FAIL */
	assert_contains(table->str, "CPU-LEGACY-MODEL         2     0     0     1  "
	                            "FAIL: legacy\n");
	assert_contains(table->str, "DISK-EMULATED            2     0     1     0  "
	                            "WARN: legacy\n");
	/* cache1 has a WARN and a PASS disk: counted once, at WARN */
	assert_contains(table->str, "DISK-WRITE-THROUGH       1     0     1     0  "
	                            "WARN: cache1\n");
	assert_contains(table->str, "CPU-NO-AESNI             1     0     0     2  "
	                            "FAIL: legacy, cache1\n");

	node = cli_audit_summary_to_json(summary);
	g_assert_true(gb_json_node_get_object(node, "summary", &root, &error));
	g_assert_true(gb_json_get_int(root, "guests", GB_JSON_REQUIRED, 0, 100, &n, &error));
	g_assert_cmpint(n, ==, 3);
	g_assert_true(gb_json_get_string(root, "worst", GB_JSON_REQUIRED, &str, &error));
	g_assert_cmpstr(str, ==, "FAIL");
	g_assert_true(gb_json_get_array(root, "rules", GB_JSON_REQUIRED, &rules, &error));
	for (guint i = 0; i < json_array_get_length(rules); i++) {
		JsonObject *rule = NULL;
		JsonObject *counts = NULL;
		JsonObject *guests = NULL;
		g_auto(GStrv) warn = NULL;
		gint64 pass = 0;
		gint64 nwarn = 0;

		g_assert_true(gb_json_node_get_object(json_array_get_element(rules, i), "rule",
		                                      &rule, &error));
		g_assert_true(gb_json_get_string(rule, "rule", GB_JSON_REQUIRED, &str, &error));
		g_assert_true(
		    gb_json_get_object(rule, "counts", GB_JSON_REQUIRED, &counts, &error));
		g_assert_true(
		    gb_json_get_object(rule, "guests", GB_JSON_REQUIRED, &guests, &error));
		g_assert_true(
		    gb_json_get_int(counts, "PASS", GB_JSON_REQUIRED, 0, 3, &pass, &error));
		g_assert_true(
		    gb_json_get_int(counts, "WARN", GB_JSON_REQUIRED, 0, 3, &nwarn, &error));
		g_assert_true(gb_json_get_strv(guests, "WARN", GB_JSON_REQUIRED, &warn, &error));
		g_assert_cmpuint(g_strv_length(warn), ==, (guint)nwarn);
		if (g_strcmp0(str, "DISK-WRITE-THROUGH") == 0) {
			seen_write_through = TRUE;
			g_assert_cmpint(pass, ==, 1);
			g_assert_cmpint(nwarn, ==, 1);
			g_assert_cmpstr(warn[0], ==, "cache1");
		}
		if (g_strcmp0(str, "CPU-LEGACY-MODEL") == 0) {
			g_auto(GStrv) pass_guests = NULL;
			seen_legacy = TRUE;
			g_assert_true(gb_json_get_strv(guests, "PASS", GB_JSON_REQUIRED,
			                               &pass_guests, &error));
			g_assert_cmpuint(g_strv_length(pass_guests), ==, 2);
			g_assert_cmpstr(pass_guests[0], ==, "web1");
			g_assert_cmpstr(pass_guests[1], ==, "cache1");
		}
	}
	g_assert_no_error(error);
	g_assert_true(seen_write_through);
	g_assert_true(seen_legacy);
}

static void test_summary_many(void)
{
	g_autoptr(CliAuditSummary) summary = cli_audit_summary_new();
	g_autoptr(GPtrArray) legacy = audit_fixture("legacy-qemu64.json");
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GPtrArray) odd = g_ptr_array_new_with_free_func((GDestroyNotify)cli_finding_free);
	g_autoptr(CliAuditSummary) empty = cli_audit_summary_new();
	g_autoptr(GString) empty_table = g_string_new(NULL);

	for (guint i = 0; i < 20; i++) {
		g_autofree char *name = g_strdup_printf("vm%02u", i);
		cli_audit_summary_add(summary, name, legacy);
	}
	/* a rule id the table does not know, and a guest name with an escape */
	g_ptr_array_add(odd, cli_finding_new("HOST-QMP-CACHE", CLI_LEVEL_WARN, "block/vda",
	                                     "cache=writethrough", NULL));
	cli_audit_summary_add(summary, "bad\033name", odd);
	cli_audit_summary_render_table(summary, table);
	assert_contains(table->str, "21 guests, worst level FAIL");
	assert_contains(table->str, "FAIL: vm00, vm01, vm02, vm03, vm04, vm05, vm06, vm07 "
	                            "(+12 more)");
	assert_contains(table->str, "HOST-QMP-CACHE");
	assert_contains(table->str, "WARN: bad\\x1bname");
	g_assert_null(strchr(table->str, '\033'));
	/* known rules first, in table order; unknown ones after */
	g_assert_true(strstr(table->str, "FACTS-ERRORS") < strstr(table->str, "HOST-QMP-CACHE"));
	g_assert_true(strstr(table->str, "CPU-LEGACY-MODEL") < strstr(table->str, "DISK-EMULATED"));

	cli_audit_summary_render_table(empty, empty_table);
	assert_contains(empty_table->str, "0 guests, worst level PASS");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/audit/levels", test_levels);
	g_test_add_func("/audit/rules-table", test_rules_table);
	g_test_add_func("/audit/tuned-host", test_tuned_host);
	g_test_add_func("/audit/legacy-qemu64", test_legacy_qemu64);
	g_test_add_func("/audit/windows-kvm64", test_windows_kvm64);
	g_test_add_func("/audit/numa-memoryless", test_numa_memoryless);
	g_test_add_func("/audit/virtio-scsi-writethrough", test_virtio_scsi_writethrough);
	g_test_add_func("/audit/tcg", test_tcg);
	g_test_add_func("/audit/nic-vmware", test_nic_vmware);
	g_test_add_func("/audit/hypervisor-variants", test_hypervisor_variants);
	g_test_add_func("/audit/legacy-names", test_legacy_names);
	g_test_add_func("/audit/aarch64", test_aarch64);
	g_test_add_func("/audit/cpuid-disagrees", test_cpuid_disagrees);
	g_test_add_func("/audit/flags-empty", test_flags_empty);
	g_test_add_func("/audit/wrong-types", test_wrong_types);
	g_test_add_func("/audit/missing-members", test_missing_members);
	g_test_add_func("/audit/empty", test_empty);
	g_test_add_func("/audit/extra-members", test_extra_members);
	g_test_add_func("/audit/huge-arrays", test_huge_arrays);
	g_test_add_func("/audit/errors-coverage", test_errors_coverage);
	g_test_add_func("/audit/errors-repeated", test_errors_repeated);
	g_test_add_func("/audit/errors-numa", test_errors_numa);
	g_test_add_func("/audit/findings-json", test_findings_json);
	g_test_add_func("/audit/render-table", test_render_table);
	g_test_add_func("/audit/render-hostile", test_render_hostile);
	g_test_add_func("/audit/isa-level", test_isa_level);
	g_test_add_func("/audit/isa-level-bad-values", test_isa_level_bad_values);
	g_test_add_func("/audit/required-flags", test_required_flags);
	g_test_add_func("/audit/vulnerable", test_vulnerable);
	g_test_add_func("/audit/vulnerable-aarch64", test_vulnerable_aarch64);
	g_test_add_func("/audit/vulnerable-bad-values", test_vulnerable_bad_values);
	g_test_add_func("/audit/require-parse", test_require_parse);
	g_test_add_func("/audit/csv", test_csv);
	g_test_add_func("/audit/summary", test_summary);
	g_test_add_func("/audit/summary-many", test_summary_many);
	return g_test_run();
}
