/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "analysis/facts.h"
#include "gb-json.h"

/* The facts model: one read of a gb-get-facts document into typed members. */

static JsonNode *parse(const char *json)
{
	g_autoptr(GError) error = NULL;
	JsonNode *node = gb_json_parse(json, strlen(json), &error);

	g_assert_no_error(error);
	g_assert_true(JSON_NODE_HOLDS_OBJECT(node));
	return node;
}

static CliFacts *facts_from(const char *json)
{
	g_autoptr(JsonNode) node = parse(json);
	/* the model must not borrow from the document: it is freed here */
	return cli_facts_new(json_node_get_object(node));
}

static CliFacts *facts_from_file(const char *dir, const char *name)
{
	const char *data_dir = g_getenv("GB_TEST_DATA");
	g_autofree char *path = NULL;
	g_autofree char *data = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) node = NULL;
	gsize len = 0;

	g_assert_nonnull(data_dir);
	path = g_build_filename(data_dir, dir, name, NULL);
	g_assert_true(g_file_get_contents(path, &data, &len, &error));
	g_assert_no_error(error);
	node = gb_json_parse(data, len, &error);
	g_assert_no_error(error);
	return cli_facts_new(json_node_get_object(node));
}

/* The problems as "path: why" lines, for exact comparison. */
static char *problems_text(const CliFacts *facts)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < facts->problems->len; i++) {
		const CliFactsProblem *problem = g_ptr_array_index(facts->problems, i);
		g_string_append_printf(out, "%s: %s\n", problem->path, problem->why);
	}
	return g_string_free(out, FALSE);
}

static void assert_problems(const CliFacts *facts, const char *expected)
{
	g_autofree char *text = problems_text(facts);
	g_assert_cmpstr(text, ==, expected);
}

static void assert_path(const CliFact *fact, const char *expected)
{
	g_autofree char *path = cli_fact_path(fact);
	g_assert_cmpstr(path, ==, expected);
}

static void test_real_document(void)
{
	g_autoptr(CliFacts) facts = facts_from_file("facts", "kvm-host-model.expected.json");
	const CliFactsCpu *cpu = &facts->cpu;
	const CliFactsDisk *disk;
	const CliFactsNic *nic;
	const CliFactsNumaNode *node;

	g_assert_cmpstr(cli_fact_string_or(&facts->agent_version, NULL), ==, "0.1.0");
	g_assert_cmpstr(cpu->architecture.value, ==, "x86_64");
	g_assert_cmpstr(cpu->model_name.value, ==, "AMD EPYC");
	g_assert_cmpstr(cpu->vendor.value, ==, "AuthenticAMD");
	g_assert_cmpint(cpu->count.value, ==, 2);
	g_assert_true(cli_fact_ok(&cpu->flags.fact));
	g_assert_true(g_strv_contains((const char *const *)cpu->flags.value, "aes"));
	g_assert_true(cpu->hypervisor.present.value);
	g_assert_cmpstr(cpu->hypervisor.vendor.value, ==, "bhyve");
	g_assert_cmpstr(cpu->hypervisor.source.value, ==, "cpuid");
	g_assert_cmpint(cpu->hypervisor.kind, ==, CLI_HYPERVISOR_OTHER);
	g_assert_true(cpu->cpuid.aes.value);
	g_assert_true(cpu->cpuid.pclmulqdq.value);
	g_assert_cmpstr(cpu->isa_level.value, ==, "x86-64-v4");
	g_assert_cmpuint(g_strv_length(cpu->isa_missing.value), ==, 0);
	g_assert_true(cli_fact_ok(&cpu->vulnerabilities.fact));
	for (guint i = 0; cpu->vulnerabilities.names[i] != NULL; i++) {
		if (g_strcmp0(cpu->vulnerabilities.names[i], "spec_store_bypass") == 0)
			g_assert_cmpstr(cpu->vulnerabilities.texts[i], ==, "Vulnerable");
		if (g_strcmp0(cpu->vulnerabilities.names[i], "meltdown") == 0)
			g_assert_cmpstr(cpu->vulnerabilities.texts[i], ==, "Mitigation: PTI");
	}

	g_assert_cmpint(facts->memory.total_bytes.value, ==, 25275953152);
	g_assert_cmpint(facts->memory.hugepages.total.value, ==, 0);
	g_assert_cmpint(facts->memory.hugepages.size_bytes.value, ==, 2097152);
	g_assert_cmpstr(facts->memory.thp.value, ==, "madvise");
	g_assert_cmpuint(facts->memory.numa.nodes.items->len, ==, 1);
	node = g_ptr_array_index(facts->memory.numa.nodes.items, 0);
	g_assert_cmpstr(node->node.path, ==, "memory.numa.nodes[0]");
	g_assert_cmpstr(node->node.alias, ==, "memory.numa.node0");
	g_assert_cmpuint(node->cpus.value->len, ==, 2);
	g_assert_cmpint(node->memory_bytes.value, ==, 4791721984);

	g_assert_cmpstr(facts->clocksource.current.value, ==, "kvm-clock");
	g_assert_cmpint(facts->steal.percent.fact.state, ==, CLI_FACT_NULL);
	g_assert_cmpint(facts->steal.total_ticks.value, ==, 190426);

	g_assert_cmpuint(facts->block.items->len, ==, 1);
	disk = g_ptr_array_index(facts->block.items, 0);
	g_assert_cmpstr(disk->name.value, ==, "vda");
	g_assert_cmpstr(disk->node.path, ==, "block[0]");
	g_assert_cmpstr(disk->node.alias, ==, "block.vda");
	g_assert_cmpstr(disk->bus.value, ==, "virtio-blk");
	g_assert_cmpstr(disk->write_cache.value, ==, "write back");
	g_assert_cmpint(disk->physical_block_size.value, ==, 4096);
	g_assert_false(disk->cdrom.value);
	g_assert_cmpint(disk->model.fact.state, ==, CLI_FACT_NULL);
	assert_path(&disk->model.fact, "block[0].model");

	g_assert_cmpuint(facts->net.items->len, ==, 3);
	nic = g_ptr_array_index(facts->net.items, 1);
	g_assert_cmpstr(nic->name.value, ==, "ifb0");
	g_assert_cmpint(nic->driver.fact.state, ==, CLI_FACT_NULL);
	g_assert_cmpint(nic->mtu.value, ==, 1500);

	g_assert_cmpstr(facts->os.pretty_name.value, ==, "Debian GNU/Linux 12 (bookworm)");
	g_assert_true(cli_fact_ok(&facts->errors.fact));
	/* this machine has no cpu0/cache directory; a sysroot has no page size */
	g_assert_cmpuint(facts->errors.items->len, ==, 2);

	/* the normal nulls of a real guest, in document order */
	/* x86 has no MIDR; a sysroot has no page size */
	g_assert_cmpint(facts->cpu.midr.node.fact.state, ==, CLI_FACT_NULL);
	g_assert_cmpint(facts->memory.page_size_bytes.fact.state, ==, CLI_FACT_NULL);
	assert_problems(facts, "cpu.midr: null\n"
	                       "memory.page_size_bytes: null\n"
	                       "steal.percent: null\n"
	                       "block[0].model: null\n"
	                       "net[0].speed_mbps: null\n"
	                       "net[1].driver: null\n"
	                       "net[1].speed_mbps: null\n"
	                       "net[2].driver: null\n"
	                       "net[2].speed_mbps: null\n");
}

/* Every fixture of tests/data reads without a problem the model cannot name. */
static void test_fixtures(void)
{
	const char *const names[] = { "empty.json",           "hostile-strings.json",
		                      "legacy-qemu64.json",   "missing-members.json",
		                      "numa-memoryless.json", "tcg.json",
		                      "tuned-host.json",      "virtio-scsi-writethrough.json",
		                      "wrong-types.json",     "windows-kvm64.json" };

	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autoptr(CliFacts) facts = facts_from_file("facts-json", names[i]);
		for (guint p = 0; p < facts->problems->len; p++) {
			const CliFactsProblem *problem = g_ptr_array_index(facts->problems, p);
			g_assert_nonnull(problem->path);
			g_assert_true(problem->why[0] != '\0');
		}
	}
}

/*
 * A Windows agent's document reads into the same model: its only problems are
 * the members it leaves null (no wrong type, nothing missing).
 */
static void test_windows_fixture(void)
{
	g_autoptr(CliFacts) facts = facts_from_file("facts-json", "windows-kvm64.json");

	g_assert_cmpuint(facts->problems->len, >, 0);
	for (guint p = 0; p < facts->problems->len; p++) {
		const CliFactsProblem *problem = g_ptr_array_index(facts->problems, p);
		g_test_message("%s: %s", problem->path, problem->why);
		g_assert_cmpstr(problem->why, ==, "null");
	}
}

static void test_missing(void)
{
	g_autoptr(CliFacts) empty = facts_from("{}");
	g_autoptr(CliFacts) none = cli_facts_new(NULL);
	const char *all_missing = "agent_version: missing\n"
	                          "cpu: missing\n"
	                          "memory: missing\n"
	                          "clocksource: missing\n"
	                          "steal: missing\n"
	                          "block: missing\n"
	                          "net: missing\n"
	                          "os: missing\n"
	                          "errors: missing\n";

	/* members of a missing section are not problems of their own */
	assert_problems(empty, all_missing);
	assert_problems(none, all_missing);
	g_assert_cmpint(empty->cpu.node.fact.state, ==, CLI_FACT_ABSENT);
	g_assert_cmpint(empty->cpu.count.fact.state, ==, CLI_FACT_NO_PARENT);
	g_assert_cmpint(empty->cpu.hypervisor.present.fact.state, ==, CLI_FACT_NO_PARENT);
	g_assert_cmpint(empty->cpu.hypervisor.kind, ==, CLI_HYPERVISOR_UNKNOWN);
	g_assert_cmpuint(empty->block.items->len, ==, 0);
	assert_path(&empty->cpu.hypervisor.present.fact, "cpu.hypervisor.present");

	{
		g_autoptr(CliFacts) facts = facts_from(
		    "{\"agent_version\": \"1\", \"cpu\": {\"hypervisor\": {}}, \"memory\": "
		    "{\"numa\": {}}, \"clocksource\": {}, \"steal\": {}, \"block\": [{}], "
		    "\"net\": [], \"os\": {}, \"errors\": [{}]}");
		assert_problems(facts, "cpu.architecture: missing\n"
		                       "cpu.model_name: missing\n"
		                       "cpu.vendor: missing\n"
		                       "cpu.count: missing\n"
		                       "cpu.flags: missing\n"
		                       "cpu.hypervisor.present: missing\n"
		                       "cpu.hypervisor.vendor: missing\n"
		                       "cpu.hypervisor.signature: missing\n"
		                       "cpu.hypervisor.source: missing\n"
		                       "cpu.cpuid: missing\n"
		                       "cpu.isa_level: missing\n"
		                       "cpu.isa_missing: missing\n"
		                       "cpu.vulnerabilities: missing\n"
		                       "cpu.midr: missing\n"
		                       "memory.total_bytes: missing\n"
		                       "memory.page_size_bytes: missing\n"
		                       "memory.hugepages: missing\n"
		                       "memory.thp: missing\n"
		                       "memory.numa.nodes: missing\n"
		                       "clocksource.current: missing\n"
		                       "clocksource.available: missing\n"
		                       "steal.percent: missing\n"
		                       "steal.window_ms: missing\n"
		                       "steal.steal_ticks: missing\n"
		                       "steal.total_ticks: missing\n"
		                       "steal.user_hz: missing\n"
		                       "block[0].name: missing\n"
		                       "block[0].bus: missing\n"
		                       "block[0].driver: missing\n"
		                       "block[0].scheduler: missing\n"
		                       "block[0].schedulers: missing\n"
		                       "block[0].write_cache: missing\n"
		                       "block[0].logical_block_size: missing\n"
		                       "block[0].physical_block_size: missing\n"
		                       "block[0].size_bytes: missing\n"
		                       "block[0].rotational: missing\n"
		                       "block[0].removable: missing\n"
		                       "block[0].cdrom: missing\n"
		                       "block[0].model: missing\n"
		                       "os.kernel_release: missing\n"
		                       "os.pretty_name: missing\n"
		                       "errors[0].member: missing\n"
		                       "errors[0].reason: missing\n");
	}
}

/* A reader that asks for some sections reads those, and no other is a problem. */
static void test_sections(void)
{
	g_autoptr(JsonNode) node = parse(
	    "{\"agent_version\": 1, \"cpu\": {\"model_name\": \"m\", \"flags\": [\"b\", \"a\"], "
	    "\"count\": \"two\"}, \"memory\": 7, \"steal\": null, \"block\": [3], \"net\": {}, "
	    "\"errors\": [{\"member\": 1}]}");
	JsonObject *obj = json_node_get_object(node);
	g_autoptr(CliFacts) cpu = cli_facts_new_sections(obj, CLI_FACTS_SECTION_CPU);
	g_autoptr(CliFacts) all = cli_facts_new_sections(obj, CLI_FACTS_SECTION_ALL);
	g_autoptr(CliFacts) plain = cli_facts_new(obj);
	g_autofree char *all_text = problems_text(all);
	g_autofree char *plain_text = problems_text(plain);

	assert_problems(cpu, "agent_version: wrong type (expected string)\n"
	                     "cpu.architecture: missing\n"
	                     "cpu.vendor: missing\n"
	                     "cpu.count: wrong type (expected integer)\n"
	                     "cpu.hypervisor: missing\n"
	                     "cpu.cpuid: missing\n"
	                     "cpu.isa_level: missing\n"
	                     "cpu.isa_missing: missing\n"
	                     "cpu.vulnerabilities: missing\n"
	                     "cpu.midr: missing\n");
	g_assert_cmpstr(cpu->cpu.model_name.value, ==, "m");
	g_assert_cmpstr(cpu->cpu.flags.value[1], ==, "a");
	/* the sections not asked for: under no object, empty lists, nothing freed twice */
	g_assert_cmpint(cpu->memory.node.fact.state, ==, CLI_FACT_NO_PARENT);
	g_assert_cmpint(cpu->memory.hugepages.total.fact.state, ==, CLI_FACT_NO_PARENT);
	g_assert_cmpint(cpu->steal.node.fact.state, ==, CLI_FACT_NO_PARENT);
	g_assert_cmpint(cpu->block.fact.state, ==, CLI_FACT_NO_PARENT);
	g_assert_cmpuint(cpu->block.items->len, ==, 0);
	g_assert_cmpuint(cpu->net.items->len, ==, 0);
	g_assert_cmpuint(cpu->errors.items->len, ==, 0);
	g_assert_cmpuint(cpu->memory.numa.nodes.items->len, ==, 0);
	/* every section is what cli_facts_new() reads */
	g_assert_cmpstr(all_text, ==, plain_text);
	g_assert_true(strstr(all_text, "memory: wrong type (expected object)\n") != NULL);
	g_assert_true(strstr(all_text, "block[0]: wrong type (expected object)\n") != NULL);
	g_assert_cmpuint(all->block.items->len, ==, 1);
	g_assert_cmpuint(all->errors.items->len, ==, 1);
}

static void test_null(void)
{
	g_autoptr(CliFacts) facts = facts_from(
	    "{\"agent_version\": null, \"cpu\": {\"architecture\": \"aarch64\", \"model_name\": "
	    "null, \"vendor\": \"ARM\", \"count\": null, \"flags\": null, \"hypervisor\": null, "
	    "\"cpuid\": null}, \"memory\": null, \"clocksource\": {\"current\": null, "
	    "\"available\": null}, \"steal\": null, \"block\": null, \"net\": null, \"os\": null, "
	    "\"errors\": null}");

	assert_problems(facts, "agent_version: null\n"
	                       "cpu.model_name: null\n"
	                       "cpu.count: null\n"
	                       "cpu.flags: null\n"
	                       "cpu.hypervisor: null\n"
	                       "cpu.cpuid: null\n"
	                       "cpu.isa_level: missing\n"
	                       "cpu.isa_missing: missing\n"
	                       "cpu.vulnerabilities: missing\n"
	                       "cpu.midr: missing\n"
	                       "memory: null\n"
	                       "clocksource.current: null\n"
	                       "clocksource.available: null\n"
	                       "steal: null\n"
	                       "block: null\n"
	                       "net: null\n"
	                       "os: null\n"
	                       "errors: null\n");
	g_assert_cmpint(facts->cpu.model_name.fact.state, ==, CLI_FACT_NULL);
	g_assert_null(facts->cpu.model_name.value);
	g_assert_cmpstr(cli_fact_string_or(&facts->cpu.model_name, "none"), ==, "none");
	g_assert_cmpint(facts->memory.total_bytes.fact.state, ==, CLI_FACT_NO_PARENT);
	g_assert_cmpint(facts->block.fact.state, ==, CLI_FACT_NULL);
	g_assert_cmpuint(facts->block.items->len, ==, 0);
}

static void test_wrong_types(void)
{
	/* every level: a section, a nested object, a member, an element, an array's element */
	g_autoptr(CliFacts) facts = facts_from(
	    "{\"agent_version\": 1, \"cpu\": {\"architecture\": [], \"model_name\": {}, "
	    "\"vendor\": true, \"count\": 2.0, \"flags\": [\"aes\", 1], \"hypervisor\": "
	    "{\"present\": \"yes\", \"vendor\": 7, \"signature\": \"KVMKVMKVM\", \"source\": "
	    "null}, \"cpuid\": []}, \"memory\": {\"total_bytes\": \"4G\", \"hugepages\": [], "
	    "\"thp\": 0, \"numa\": {\"nodes\": [1, {\"id\": \"0\", \"cpus\": [0, \"1\"], "
	    "\"memory_bytes\": 1.5}]}}, \"clocksource\": [], \"steal\": {\"percent\": \"2\", "
	    "\"window_ms\": 0.5, \"steal_ticks\": true, \"total_ticks\": {}, \"user_hz\": []}, "
	    "\"block\": {}, \"net\": [\"eth0\", {\"name\": 3, \"driver\": \"e1000\", \"mtu\": "
	    "\"1500\", \"rx_queues\": -1, \"tx_queues\": 9223372036854775807, \"speed_mbps\": "
	    "false}], \"os\": \"linux\", \"errors\": {}}");
	const CliFactsNic *nic;

	assert_problems(facts, "agent_version: wrong type (expected string)\n"
	                       "cpu.architecture: wrong type (expected string)\n"
	                       "cpu.model_name: wrong type (expected string)\n"
	                       "cpu.vendor: wrong type (expected string)\n"
	                       "cpu.count: wrong type (expected integer)\n"
	                       "cpu.flags: wrong type (expected array of strings)\n"
	                       "cpu.hypervisor.present: wrong type (expected boolean)\n"
	                       "cpu.hypervisor.vendor: wrong type (expected string)\n"
	                       "cpu.hypervisor.source: null\n"
	                       "cpu.cpuid: wrong type (expected object)\n"
	                       "cpu.isa_level: missing\n"
	                       "cpu.isa_missing: missing\n"
	                       "cpu.vulnerabilities: missing\n"
	                       "cpu.midr: missing\n"
	                       "memory.total_bytes: wrong type (expected integer)\n"
	                       "memory.page_size_bytes: missing\n"
	                       "memory.hugepages: wrong type (expected object)\n"
	                       "memory.thp: wrong type (expected string)\n"
	                       "memory.numa.nodes[0]: wrong type (expected object)\n"
	                       "memory.numa.nodes[1].id: wrong type (expected integer)\n"
	                       "memory.numa.nodes[1].cpus: wrong type (expected array of "
	                       "integers)\n"
	                       "memory.numa.nodes[1].memory_bytes: wrong type (expected "
	                       "integer)\n"
	                       "clocksource: wrong type (expected object)\n"
	                       "steal.percent: wrong type (expected number)\n"
	                       "steal.window_ms: wrong type (expected integer)\n"
	                       "steal.steal_ticks: wrong type (expected integer)\n"
	                       "steal.total_ticks: wrong type (expected integer)\n"
	                       "steal.user_hz: wrong type (expected integer)\n"
	                       "block: wrong type (expected array)\n"
	                       "net[0]: wrong type (expected object)\n"
	                       "net[1].name: wrong type (expected string)\n"
	                       "net[1].mtu: wrong type (expected integer)\n"
	                       "net[1].speed_mbps: wrong type (expected integer)\n"
	                       "os: wrong type (expected object)\n"
	                       "errors: wrong type (expected array)\n");
	/* the signature alone still classifies */
	g_assert_cmpint(facts->cpu.hypervisor.kind, ==, CLI_HYPERVISOR_KVM);
	/* a numa node whose id cannot be read has no alias */
	g_assert_null(
	    ((CliFactsNumaNode *)g_ptr_array_index(facts->memory.numa.nodes.items, 1))->node.alias);
	/* elements that are not objects are kept, so views can show them as unknown */
	g_assert_cmpuint(facts->net.items->len, ==, 2);
	nic = g_ptr_array_index(facts->net.items, 0);
	g_assert_cmpint(nic->node.fact.state, ==, CLI_FACT_WRONG_TYPE);
	g_assert_cmpint(nic->driver.fact.state, ==, CLI_FACT_NO_PARENT);
	nic = g_ptr_array_index(facts->net.items, 1);
	g_assert_null(nic->node.alias);
	/* values are kept over the whole range of their type: range is the reader's business */
	g_assert_cmpint(nic->rx_queues.value, ==, -1);
	g_assert_cmpint(nic->tx_queues.value, ==, G_MAXINT64);
	g_assert_cmpint(facts->memory.hugepages.total.fact.state, ==, CLI_FACT_NO_PARENT);
}

/* The CPU audit's members: wrong types, and a vulnerability that is not text. */
static void test_cpu_audit_members(void)
{
	g_autoptr(CliFacts) bad =
	    facts_from("{\"cpu\": {\"isa_level\": 3, \"isa_missing\": [\"avx\", 1], "
	               "\"vulnerabilities\": [\"mds\"]}}");
	g_autoptr(CliFacts) mixed = facts_from(
	    "{\"cpu\": {\"isa_level\": \"x86-64-v2\", \"isa_missing\": [], \"vulnerabilities\": "
	    "{\"mds\": 5, \"spec_store_bypass\": \"Vulnerable\", \"l1tf\": null}}}");
	const CliFactStrMap *v = &mixed->cpu.vulnerabilities;

	g_assert_cmpint(bad->cpu.isa_level.fact.state, ==, CLI_FACT_WRONG_TYPE);
	g_assert_cmpint(bad->cpu.isa_missing.fact.state, ==, CLI_FACT_WRONG_TYPE);
	g_assert_cmpint(bad->cpu.vulnerabilities.fact.state, ==, CLI_FACT_WRONG_TYPE);
	g_assert_null(bad->cpu.vulnerabilities.names);
	g_assert_cmpstr(mixed->cpu.isa_level.value, ==, "x86-64-v2");
	g_assert_true(cli_fact_ok(&v->fact));
	g_assert_cmpuint(g_strv_length(v->names), ==, 3);
	g_assert_cmpstr(v->names[0], ==, "mds");
	g_assert_null(v->texts[0]);
	g_assert_cmpstr(v->names[1], ==, "spec_store_bypass");
	g_assert_cmpstr(v->texts[1], ==, "Vulnerable");
	g_assert_null(v->texts[2]);
}

static void test_huge_arrays(void)
{
	const guint n = 20000;
	g_autoptr(GString) json = g_string_new("{\"block\": [");
	g_autoptr(CliFacts) facts = NULL;
	const CliFactsDisk *last;

	for (guint i = 0; i < n; i++)
		g_string_append_printf(json, "%s{\"bus\": \"nvme\"}", i > 0 ? ", " : "");
	g_string_append(json, "], \"cpu\": {\"flags\": [");
	for (guint i = 0; i < n; i++)
		g_string_append_printf(json, "%s\"f%u\"", i > 0 ? ", " : "", i);
	g_string_append(json, "]}}");
	facts = facts_from(json->str);

	g_assert_cmpuint(facts->block.items->len, ==, n);
	g_assert_cmpuint(g_strv_length(facts->cpu.flags.value), ==, n);
	last = g_ptr_array_index(facts->block.items, n - 1);
	g_assert_cmpstr(last->node.path, ==, "block[19999]");
	g_assert_cmpstr(last->bus.value, ==, "nvme");
	assert_path(&last->name.fact, "block[19999].name");
	/* 12 missing members per disk, 10 of cpu, 7 of the document */
	g_assert_cmpuint(facts->problems->len, ==, n * 12 + 17);
}

static void test_unnamed_items(void)
{
	g_autoptr(CliFacts) facts = facts_from(
	    "{\"block\": [{\"name\": \"\", \"bus\": \"ata\"}, {\"bus\": \"nvme\"}, {\"name\": "
	    "\"sr0\"}], \"net\": [{\"name\": null, \"driver\": \"virtio_net\"}, {\"name\": "
	    "\"eth0\"}]}");
	const CliFactsDisk *disk;
	const CliFactsNic *nic;

	disk = g_ptr_array_index(facts->block.items, 0);
	/* an empty name is a name the agent's errors cannot use */
	g_assert_cmpstr(disk->name.value, ==, "");
	g_assert_null(disk->node.alias);
	disk = g_ptr_array_index(facts->block.items, 1);
	g_assert_cmpint(disk->name.fact.state, ==, CLI_FACT_ABSENT);
	g_assert_null(disk->node.alias);
	disk = g_ptr_array_index(facts->block.items, 2);
	g_assert_cmpstr(disk->node.alias, ==, "block.sr0");
	nic = g_ptr_array_index(facts->net.items, 0);
	g_assert_cmpint(nic->name.fact.state, ==, CLI_FACT_NULL);
	g_assert_null(nic->node.alias);
	g_assert_cmpstr(nic->driver.value, ==, "virtio_net");
	nic = g_ptr_array_index(facts->net.items, 1);
	g_assert_cmpstr(nic->node.path, ==, "net[1]");
	g_assert_cmpstr(nic->node.alias, ==, "net.eth0");
}

static void test_hostile_strings(void)
{
	g_autoptr(GString) long_name = g_string_new(NULL);
	g_autoptr(GString) json = g_string_new(NULL);
	g_autoptr(CliFacts) facts = NULL;
	const CliFactsDisk *disk;

	for (guint i = 0; i < 100000; i++)
		g_string_append_c(long_name, 'a' + i % 26);
	g_string_append_printf(
	    json,
	    "{\"cpu\": {\"model_name\": \"\\u001b]0;pwned\\u0007QEMU\\u001b[0m\", \"vendor\": "
	    "\"%s\", \"hypervisor\": {\"present\": true, \"vendor\": \"\\u202eKVM\", "
	    "\"signature\": \"\\\\x00\\\\x01\"}}, \"block\": [{\"name\": \"../../etc\\nvda\"}], "
	    "\"errors\": [{\"member\": \"block.../../etc\\nvda.bus\", \"reason\": "
	    "\"\\u009b31m\"}]}",
	    long_name->str);
	facts = facts_from(json->str);

	/* kept raw: escaping is the job of whoever shows them */
	g_assert_cmpstr(facts->cpu.model_name.value, ==, "\033]0;pwned\aQEMU\033[0m");
	g_assert_cmpuint(strlen(facts->cpu.vendor.value), ==, 100000);
	g_assert_cmpint(facts->cpu.hypervisor.kind, ==, CLI_HYPERVISOR_UNKNOWN);
	g_assert_cmpstr(facts->cpu.hypervisor.signature.value, ==, "\\x00\\x01");
	disk = g_ptr_array_index(facts->block.items, 0);
	g_assert_cmpstr(disk->node.alias, ==, "block.../../etc\nvda");
	g_assert_cmpstr(((CliFactsError *)g_ptr_array_index(facts->errors.items, 0))->reason.value,
	                ==,
	                "\xc2\x9b"
	                "31m");
}

static void test_hypervisor_kind(void)
{
	const struct {
		const char *vendor;
		const char *signature;
		CliHypervisorKind kind;
	} cases[] = {
		{ "KVM", "KVMKVMKVM", CLI_HYPERVISOR_KVM },
		{ "kvm", NULL, CLI_HYPERVISOR_KVM },
		{ NULL, "KVMKVMKVM", CLI_HYPERVISOR_KVM },
		{ "KVMKVMKVM", NULL,
		  CLI_HYPERVISOR_KVM }, /* an agent that passed the signature on */
		{ NULL, "KVMKVMKVM   ", CLI_HYPERVISOR_KVM },
		{ "TCG", NULL, CLI_HYPERVISOR_TCG },
		{ NULL, "TCGTCGTCGTCG", CLI_HYPERVISOR_TCG },
		{ "Microsoft Hv", NULL, CLI_HYPERVISOR_HYPERV },
		{ "microsoft hv", NULL, CLI_HYPERVISOR_HYPERV },
		{ NULL, "Microsoft Hv", CLI_HYPERVISOR_HYPERV },
		{ "VMware", NULL, CLI_HYPERVISOR_VMWARE },
		{ NULL, "VMwareVMware", CLI_HYPERVISOR_VMWARE },
		{ "Xen", NULL, CLI_HYPERVISOR_XEN },
		{ NULL, "XenVMMXenVMM", CLI_HYPERVISOR_XEN },
		{ "bhyve", NULL, CLI_HYPERVISOR_OTHER },
		{ NULL, "bhyve bhyve ", CLI_HYPERVISOR_OTHER },
		{ "ACRN", NULL, CLI_HYPERVISOR_OTHER },
		{ "QNX", NULL, CLI_HYPERVISOR_OTHER },
		{ NULL, "QNXQVMBSQG", CLI_HYPERVISOR_OTHER },
		{ "Parallels", NULL, CLI_HYPERVISOR_OTHER },
		{ NULL, " lrpepyh  vr", CLI_HYPERVISOR_OTHER },
		{ "VirtualBox", NULL, CLI_HYPERVISOR_OTHER },
		{ NULL, "VBoxVBoxVBox", CLI_HYPERVISOR_OTHER },
		/* the vendor decides over the signature (Hyper-V enlightenments on KVM) */
		{ "KVM", "Microsoft Hv", CLI_HYPERVISOR_KVM },
		{ "Mystery", "KVMKVMKVM", CLI_HYPERVISOR_KVM },
		{ "Mystery", "Mystery", CLI_HYPERVISOR_UNKNOWN },
		{ "QEMU", NULL, CLI_HYPERVISOR_UNKNOWN },
		{ "", "", CLI_HYPERVISOR_UNKNOWN },
		{ NULL, NULL, CLI_HYPERVISOR_UNKNOWN },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(JsonBuilder) builder = json_builder_new();
		g_autoptr(JsonNode) root = NULL;
		g_autoptr(CliFacts) facts = NULL;

		g_test_message("vendor '%s', signature '%s'",
		               cases[i].vendor != NULL ? cases[i].vendor : "(null)",
		               cases[i].signature != NULL ? cases[i].signature : "(null)");
		g_assert_cmpint(cli_hypervisor_kind(cases[i].vendor, cases[i].signature), ==,
		                cases[i].kind);
		/* and the same through a document */
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "cpu");
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "hypervisor");
		json_builder_begin_object(builder);
		json_builder_set_member_name(builder, "present");
		json_builder_add_boolean_value(builder, TRUE);
		json_builder_set_member_name(builder, "vendor");
		if (cases[i].vendor != NULL)
			json_builder_add_string_value(builder, cases[i].vendor);
		else
			json_builder_add_null_value(builder);
		json_builder_set_member_name(builder, "signature");
		if (cases[i].signature != NULL)
			json_builder_add_string_value(builder, cases[i].signature);
		else
			json_builder_add_null_value(builder);
		json_builder_end_object(builder);
		json_builder_end_object(builder);
		json_builder_end_object(builder);
		root = json_builder_get_root(builder);
		facts = cli_facts_new(json_node_get_object(root));
		g_assert_cmpint(facts->cpu.hypervisor.kind, ==, cases[i].kind);
	}
	g_assert_cmpstr(cli_hypervisor_kind_to_string(CLI_HYPERVISOR_KVM), ==, "KVM");
	g_assert_cmpstr(cli_hypervisor_kind_to_string(CLI_HYPERVISOR_TCG), ==, "TCG");
	g_assert_cmpstr(cli_hypervisor_kind_to_string(CLI_HYPERVISOR_VMWARE), ==, "VMware");
	g_assert_cmpstr(cli_hypervisor_kind_to_string(CLI_HYPERVISOR_HYPERV), ==, "Hyper-V");
	g_assert_cmpstr(cli_hypervisor_kind_to_string(CLI_HYPERVISOR_XEN), ==, "Xen");
	g_assert_cmpstr(cli_hypervisor_kind_to_string(CLI_HYPERVISOR_OTHER), ==, "other");
	g_assert_cmpstr(cli_hypervisor_kind_to_string(CLI_HYPERVISOR_UNKNOWN), ==, "unknown");
}

static void test_paths(void)
{
	g_autoptr(CliFacts) facts = facts_from(
	    "{\"memory\": {\"numa\": {\"nodes\": [{\"id\": 3, \"cpus\": [], \"memory_bytes\": "
	    "0}, {\"id\": -1}]}}, \"errors\": [{\"member\": \"memory.thp\", \"reason\": null}, "
	    "5]}");
	const CliFactsNumaNode *node;
	const CliFactsError *entry;

	assert_path(&facts->root.fact, "");
	assert_path(&facts->memory.node.fact, "memory");
	assert_path(&facts->memory.numa.nodes.fact, "memory.numa.nodes");
	assert_path(&facts->memory.hugepages.size_bytes.fact, "memory.hugepages.size_bytes");
	node = g_ptr_array_index(facts->memory.numa.nodes.items, 0);
	assert_path(&node->node.fact, "memory.numa.nodes[0]");
	assert_path(&node->cpus.fact, "memory.numa.nodes[0].cpus");
	g_assert_cmpstr(node->node.alias, ==, "memory.numa.node3");
	g_assert_cmpuint(node->cpus.value->len, ==, 0);
	node = g_ptr_array_index(facts->memory.numa.nodes.items, 1);
	/* no node has id -1: no name for the agent's errors */
	g_assert_null(node->node.alias);
	entry = g_ptr_array_index(facts->errors.items, 0);
	g_assert_cmpstr(entry->member.value, ==, "memory.thp");
	g_assert_cmpint(entry->reason.fact.state, ==, CLI_FACT_NULL);
	entry = g_ptr_array_index(facts->errors.items, 1);
	assert_path(&entry->node.fact, "errors[1]");
	g_assert_cmpint(entry->node.fact.state, ==, CLI_FACT_WRONG_TYPE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/facts/real-document", test_real_document);
	g_test_add_func("/facts/fixtures", test_fixtures);
	g_test_add_func("/facts/windows-fixture", test_windows_fixture);
	g_test_add_func("/facts/missing", test_missing);
	g_test_add_func("/facts/null", test_null);
	g_test_add_func("/facts/sections", test_sections);
	g_test_add_func("/facts/wrong-types", test_wrong_types);
	g_test_add_func("/facts/huge-arrays", test_huge_arrays);
	g_test_add_func("/facts/cpu-audit-members", test_cpu_audit_members);
	g_test_add_func("/facts/unnamed-items", test_unnamed_items);
	g_test_add_func("/facts/hostile-strings", test_hostile_strings);
	g_test_add_func("/facts/hypervisor-kind", test_hypervisor_kind);
	g_test_add_func("/facts/paths", test_paths);
	return g_test_run();
}
