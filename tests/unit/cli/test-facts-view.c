/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "analysis/units.h"
#include "render/facts-view.h"
#include "render/escape.h"
#include "gb-error.h"
#include "gb-json.h"

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
	g_assert_true(JSON_NODE_HOLDS_OBJECT(node));
	return node;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (strstr(haystack, needle) == NULL)
		g_test_message("'%s' not in:\n%s", needle, haystack);
	g_assert_nonnull(strstr(haystack, needle));
}

/* No control byte other than newline, and no ESC except our own SGR codes. */
static void assert_terminal_safe(const char *text, gboolean allow_sgr,
                                 gboolean allow_crlf_in_quotes)
{
	for (const char *p = text; *p != '\0'; p++) {
		guchar c = (guchar)*p;
		if (c == '\033' && allow_sgr) {
			g_assert_cmpint(p[1], ==, '[');
			p += 2;
			while (g_ascii_isdigit(*p) || *p == ';')
				p++;
			g_assert_cmpint(*p, ==, 'm');
			continue;
		}
		if (allow_crlf_in_quotes && (c == '\r'))
			continue;
		g_assert_false((c < 0x20 && c != '\n') || c == 0x7f);
	}
	/* C1 CSI in UTF-8 */
	g_assert_null(strstr(text, "\xc2\x9b"));
}

static void test_escape(void)
{
	const struct {
		const char *in;
		const char *out;
	} cases[] = {
		{ "plain text", "plain text" },
		{ "", "" },
		{ "\033[31mred", "\\x1b[31mred" },
		{ "tab\there", "tab\\there" },
		{ "cr\rlf\n", "cr\\rlf\\n" },
		{ "bell\007del\177", "bell\\x07del\\x7f" },
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
		{ "csi\xc2\x9b"
		  "31m",
		  "csi\\u009b31m" },
		{ "nel\xc2\x85", "nel\\u0085" },
		{ "bad\xff\xfe", "bad\\xff\\xfe" },
		{ "cut\xe2\x82", "cut\\xe2\\x82" },
		{ "back\\slash", "back\\slash" },
		/* right-to-left override: "FAIL" would read "LIAF"-style reordered */
		{ "x\xe2\x80\xae"
		  "LIAF",
		  "x\\u202eLIAF" },
		{ "iso\xe2\x81\xa6"
		  "late\xe2\x81\xa9",
		  "iso\\u2066late\\u2069" },
		{ "lrm\xe2\x80\x8e", "lrm\\u200e" },
		/* neighbours of the ranges stay as they are */
		{ "dash\xe2\x80\x94", "dash\xe2\x80\x94" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *out = cli_escape_terminal(cases[i].in);
		g_assert_cmpstr(out, ==, cases[i].out);
		g_assert_true(g_utf8_validate(out, -1, NULL));
	}
	{
		g_autofree char *out = cli_escape_terminal(NULL);
		g_assert_cmpstr(out, ==, "");
	}
}

static void test_format_bytes(void)
{
	const struct {
		guint64 in;
		const char *out;
	} cases[] = {
		{ 0, "0 B" },
		{ 1023, "1023 B" },
		{ 1024, "1 KiB" },
		{ 1536, "1.5 KiB" },
		{ 2097152, "2 MiB" },
		{ 16776200192, "15.6 GiB" },
		{ G_GUINT64_CONSTANT(34359738368), "32 GiB" },
		{ G_GUINT64_CONSTANT(1) << 40, "1 TiB" },
		{ G_MAXUINT64, "16.0 EiB" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *out = cli_format_bytes(cases[i].in);
		g_assert_cmpstr(out, ==, cases[i].out);
	}
}

static void test_format_rate(void)
{
	struct {
		double in;
		const char *unit;
		const char *out;
	} cases[] = {
		{ 0, "B/s", "0 B/s" },
		{ 812, "B/s", "812 B/s" },
		{ 999.4, "B/s", "999 B/s" },
		{ 999.6, "B/s", "1.00 kB/s" },
		{ 16.3e6, "B/s", "16.3 MB/s" },
		{ 853e6, "B/s", "853 MB/s" },
		{ 1.2149e9, "B/s", "1.21 GB/s" },
		{ 4.5e3, "IO/s", "4.50 kIO/s" },
		{ 2e18, "B/s", "2000 PB/s" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *out = cli_format_rate(cases[i].in, cases[i].unit);
		g_assert_cmpstr(out, ==, cases[i].out);
	}
}

/* The schedule's estimate: rounded up to what is shown. */
static void test_format_duration(void)
{
	struct {
		double in;
		const char *out;
	} cases[] = {
		{ -1, "0 s" },     { 0, "0 s" },      { 0.2, "1 s" },
		{ 59.5, "1m00s" }, { 61, "1m01s" },   { 3599.2, "1h00m" },
		{ 3601, "1h01m" }, { 7800, "2h10m" }, { 50 * 3600.0 + 1, "50h01m" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *out = cli_format_duration(cases[i].in);
		g_assert_cmpstr(out, ==, cases[i].out);
	}
}

/* The progress line is cut to the terminal: from the end, or a guest name from its start. */
static void test_text_truncate(void)
{
	struct {
		const char *in;
		gsize width;
		const char *end_cut;
		const char *start_cut;
	} cases[] = {
		{ "abcdef", 6, "abcdef", "abcdef" },
		{ "abcdef", 10, "abcdef", "abcdef" },
		{ "abcdef", 5, "abcd\u2026", "\u2026cdef" },
		{ "abcdef", 1, "\u2026", "\u2026" },
		{ "abcdef", 0, "", "" },
		{ "/tmp/a-long-dir/vm.sock", 10, "/tmp/a-lo\u2026", "\u2026r/vm.sock" },
		/* a wide character never straddles the edge */
		{ "ab\u4e2d\u6587cd", 5, "ab\u4e2d\u2026", "\u2026\u6587cd" },
		{ "ab\u4e2d\u6587cd", 4, "ab\u2026", "\u2026cd" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *end = cli_text_truncate(cases[i].in, cases[i].width);
		g_autofree char *start = cli_text_truncate_start(cases[i].in, cases[i].width);

		g_assert_cmpstr(end, ==, cases[i].end_cut);
		g_assert_cmpstr(start, ==, cases[i].start_cut);
		g_assert_cmpuint(cli_text_width(end), <=, cases[i].width);
		g_assert_cmpuint(cli_text_width(start), <=, cases[i].width);
	}
}

static void test_table_tuned(void)
{
	g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(GString) color = g_string_new(NULL);

	cli_facts_render_table(out, "web1", json_node_get_object(node), FALSE);
	cli_facts_render_table(color, "web1", json_node_get_object(node), TRUE);
	g_test_message("%s", out->str);
	g_assert_true(g_str_has_prefix(out->str, "web1\n"));
	assert_contains(out->str, "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz, GenuineIntel, "
	                          "x86_64, 4 vCPUs\n");
	assert_contains(out->str, "aes:present pclmulqdq:present avx2:present vaes:present "
	                          "sha_ni:present vmx:absent svm:absent\n");
	assert_contains(out->str, "KVM (signature KVMKVMKVM, from cpuid)\n");
	assert_contains(out->str, "  memory       15.6 GiB\n");
	/* an agent before memory.page_size_bytes: unknown */
	assert_contains(out->str, "  memory       15.6 GiB\n  page size    unknown\n");
	/* x86 has no MIDR: no line for it */
	g_assert_null(strstr(out->str, "midr"));
	assert_contains(out->str, "4096 pages of 2 MiB (4096 free), THP madvise\n");
	assert_contains(out->str, "  numa node 0  cpus 0-3 (4 vCPUs), memory 15.6 GiB\n");
	assert_contains(out->str, "kvm-clock (available: kvm-clock tsc acpi_pm)\n");
	assert_contains(out->str, "0.4 % over 200 ms\n");
	assert_contains(out->str, "  disk vda     virtio-blk, virtio_blk, scheduler none, write "
	                          "back, 20 GiB, blocks 512 B/512 B\n");
	assert_contains(out->str, "  nic eth0     virtio_net, queues 4 rx/4 tx, MTU 1500 B, speed "
	                          "unknown\n");
	assert_contains(out->str, "Debian GNU/Linux 12 (bookworm), kernel 6.1.0-18-cloud-amd64\n");
	g_assert_null(strstr(out->str, "errors"));
	g_assert_null(strchr(out->str, '\033'));
	assert_contains(color->str, "\033[32mpresent\033[0m");
	assert_contains(color->str, "\033[33mabsent\033[0m");
	assert_terminal_safe(color->str, TRUE, FALSE);
}

/* aarch64: the MIDR behind vendor and model, and the base page size. */
static void test_table_arm(void)
{
	const char *dir = g_getenv("GB_TEST_DATA");
	const struct {
		const char *fixture, *midr;
	} cases[] = {
		{ "arm-a57-xen.expected.json",
		  "  midr         implementer 0x41, variant 0x1, part 0xd07, revision 0 (from "
		  "cpuinfo)\n" },
		{ "arm-qemu-max.expected.json",
		  "  midr         implementer 0x00, variant 0x0, part 0x051, revision 0 (from "
		  "cpuinfo)\n" },
		/* no MIDR to be read: null, with an error entry */
		{ "arm-broken.expected.json", "  midr         unknown\n" },
	};

	g_assert_nonnull(dir);
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *path = g_build_filename(dir, "facts", cases[i].fixture, NULL);
		g_autofree char *data = NULL;
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) node = NULL;
		g_autoptr(GString) out = g_string_new(NULL);
		gsize len = 0;
		JsonObject *memory;

		g_assert_true(g_file_get_contents(path, &data, &len, &error));
		node = gb_json_parse(data, len, &error);
		g_assert_no_error(error);
		memory = json_object_get_object_member(json_node_get_object(node), "memory");
		if (memory != NULL)
			json_object_set_int_member(memory, "page_size_bytes", 65536);
		cli_facts_render_table(out, "arm", json_node_get_object(node), FALSE);
		g_test_message("%s", out->str);
		assert_contains(out->str, cases[i].midr);
		/* right under the cpu line */
		g_assert_nonnull(strstr(strstr(out->str, "  cpu  "), "\n  midr  "));
		if (memory != NULL)
			assert_contains(out->str, "  page size    64 KiB\n");
	}
	/* what a guest may send instead: wrong types read as unknown */
	{
		const char *doc = "{\"cpu\": {\"architecture\": \"aarch64\", \"midr\": \"0x41\"}, "
		                  "\"memory\": {\"page_size_bytes\": \"4k\"}}";
		const char *doc2 =
		    "{\"cpu\": {\"architecture\": \"aarch64\", \"midr\": "
		    "{\"implementer\": 65, \"part\": \"0xd07\", \"revision\": \"1\"}}, "
		    "\"memory\": {\"page_size_bytes\": -4096}}";
		g_autoptr(JsonNode) node = gb_json_parse(doc, strlen(doc), NULL);
		g_autoptr(JsonNode) node2 = gb_json_parse(doc2, strlen(doc2), NULL);
		g_autoptr(GString) out = g_string_new(NULL);
		g_autoptr(GString) out2 = g_string_new(NULL);

		cli_facts_render_table(out, "w", json_node_get_object(node), FALSE);
		cli_facts_render_table(out2, "w", json_node_get_object(node2), FALSE);
		assert_contains(out->str, "  midr         unknown\n");
		assert_contains(out->str, "  page size    unknown\n");
		assert_contains(out2->str,
		                "  midr         implementer unknown, variant unknown, part "
		                "0xd07, revision unknown (from unknown)\n");
		assert_contains(out2->str, "  page size    unknown\n");
	}
	/* and 4 KiB pages, as the Debian arm64 cloud kernel has */
	{
		g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
		g_autoptr(GString) out = g_string_new(NULL);
		JsonObject *memory =
		    json_object_get_object_member(json_node_get_object(node), "memory");

		json_object_set_int_member(memory, "page_size_bytes", 4096);
		cli_facts_render_table(out, "x", json_node_get_object(node), FALSE);
		assert_contains(out->str, "  memory       15.6 GiB\n  page size    4 KiB\n");
	}
}

static void test_table_legacy(void)
{
	g_autoptr(JsonNode) node = load_fixture("legacy-qemu64.json");
	g_autoptr(GString) out = g_string_new(NULL);

	cli_facts_render_table(out, "old", json_node_get_object(node), FALSE);
	assert_contains(out->str, "aes:absent pclmulqdq:absent");
	assert_contains(out->str, "  disk sda     ata, ata_piix, scheduler mq-deadline, write "
	                          "through, 10 GiB");
	assert_contains(out->str, "  disk sr0     ata, ata_piix, scheduler mq-deadline, unknown, 0 "
	                          "B, blocks 2048 B/2048 B, cdrom\n");
	assert_contains(out->str, "e1000, queues 1 rx/1 tx, MTU 1500 B, 1000 Mb/s\n");
}

static void test_table_numa(void)
{
	g_autoptr(JsonNode) node = load_fixture("numa-memoryless.json");
	g_autoptr(GString) out = g_string_new(NULL);

	cli_facts_render_table(out, "numa", json_node_get_object(node), FALSE);
	assert_contains(out->str, "numa node 0  cpus 0-3 (4 vCPUs), memory 16 GiB\n");
	assert_contains(out->str, "numa node 1  cpus 4-5 (2 vCPUs), memory 0 B\n");
	assert_contains(out->str, "numa node 2  cpus none (0 vCPUs), memory 16 GiB\n");
}

static void test_table_errors(void)
{
	g_autoptr(JsonNode) node = load_fixture("virtio-scsi-writethrough.json");
	g_autoptr(GString) out = g_string_new(NULL);

	cli_facts_render_table(out, "vm", json_node_get_object(node), FALSE);
	/* null thp and a null steal window read as "unknown", and errors are counted */
	assert_contains(out->str, "THP unknown\n");
	assert_contains(out->str, "  errors       1 member could not be read (see audit)\n");
}

static void check_hostile_doc(const char *fixture)
{
	g_autoptr(JsonNode) node = load_fixture(fixture);
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GString) color = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);

	cli_facts_render_table(table, "g\033[2Jx", json_node_get_object(node), FALSE);
	cli_facts_render_table(color, "g", json_node_get_object(node), TRUE);
	cli_facts_render_csv_rows(csv, "g", json_node_get_object(node));
	g_test_message("%s\n%s", table->str, csv->str);
	assert_terminal_safe(table->str, FALSE, FALSE);
	assert_terminal_safe(color->str, TRUE, FALSE);
	assert_terminal_safe(csv->str, FALSE, FALSE);
	g_assert_true(g_utf8_validate(table->str, -1, NULL));
	g_assert_true(g_utf8_validate(csv->str, -1, NULL));
}

static void test_hostile_strings(void)
{
	g_autoptr(JsonNode) node = load_fixture("hostile-strings.json");
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);

	check_hostile_doc("hostile-strings.json");
	cli_facts_render_table(table, "g\033[2Jx", json_node_get_object(node), FALSE);
	cli_facts_render_csv_rows(csv, "g", json_node_get_object(node));
	assert_contains(table->str, "g\\x1b[2Jx\n");
	assert_contains(table->str, "\\x1b]0;pwned\\x07QEMU Virtual CPU version 2.5+\\x1b[0m");
	assert_contains(table->str, "Genuine\\u009b31mIntel");
	assert_contains(table->str, "KVM\\r\\nFAKE  PASS");
	assert_contains(table->str, "disk sd\\x1b[31ma");
	assert_contains(table->str, "sata, ahci,\"quoted\"\\nnext,");
	assert_contains(table->str, "Evil\\x1bPOS");
	/* CSV: escaped, then RFC 4180 quoted where the field holds , or " */
	assert_contains(csv->str, "g,block,sd\\x1b[31ma,driver,\"ahci,\"\"quoted\"\"\\nnext\"\n");
	assert_contains(csv->str, "g,block,sd\\x1b[31ma,model,\\x07\\x08\\x7f\n");
}

static void test_hostile_types(void)
{
	g_autoptr(JsonNode) node = load_fixture("wrong-types.json");
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);

	check_hostile_doc("wrong-types.json");
	check_hostile_doc("missing-members.json");
	check_hostile_doc("empty.json");
	cli_facts_render_table(table, "w", json_node_get_object(node), FALSE);
	cli_facts_render_csv_rows(csv, "w", json_node_get_object(node));
	assert_contains(table->str, "  cpu          unknown, unknown, unknown, unknown\n");
	assert_contains(table->str, "  flags        unknown\n");
	assert_contains(table->str, "  hypervisor   unknown\n");
	assert_contains(table->str, "  memory       unknown\n");
	assert_contains(table->str, "  page size    unknown\n");
	/* the -5 bytes of node 0 are not shown as a size */
	assert_contains(table->str, "numa node unknown cpus unknown, memory unknown\n");
	assert_contains(table->str, "  disk unknown unknown, unknown, scheduler unknown");
	assert_contains(table->str, "  nics         unknown\n");
	assert_contains(table->str, "  os           unknown, kernel unknown\n");
	/* wrong types give empty CSV values, never the wrong thing */
	assert_contains(csv->str, "w,cpu,,count,\n");
	assert_contains(csv->str, "w,cpu,,flags,\n");
	assert_contains(csv->str, "w,memory,,total_bytes,\n");
}

static void test_null_and_empty(void)
{
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);

	cli_facts_render_table(table, NULL, NULL, TRUE);
	cli_facts_render_csv_rows(csv, NULL, NULL);
	assert_contains(table->str, "  disks        unknown\n");
	assert_contains(csv->str, ",cpu,,model_name,\n");
	assert_terminal_safe(table->str, TRUE, FALSE);
}

static void test_huge(void)
{
	g_autoptr(JsonObject) facts = json_object_new();
	JsonArray *block = json_array_new();
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);
	guint lines = 0;

	for (guint i = 0; i < 10000; i++) {
		JsonObject *disk = json_object_new();
		g_autofree char *name = g_strdup_printf("vd%u", i);
		json_object_set_string_member(disk, "name", name);
		json_object_set_string_member(disk, "bus", "virtio-blk");
		json_object_set_int_member(disk, "size_bytes", (gint64)i * 1024);
		json_array_add_object_element(block, disk);
	}
	json_object_set_array_member(facts, "block", block);
	cli_facts_render_table(table, "big", facts, FALSE);
	cli_facts_render_csv_rows(csv, "big", facts);
	for (const char *p = strstr(table->str, "  disk "); p != NULL; p = strstr(p + 1, "  disk "))
		lines++;
	g_assert_cmpuint(lines, ==, 10000);
	assert_contains(table->str, "  disk vd9999  virtio-blk, unknown, scheduler unknown, "
	                            "unknown, 9.8 MiB");
	assert_contains(csv->str, "big,block,vd9999,size_bytes,10238976\n");
}

static void test_csv(void)
{
	g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
	g_autoptr(GString) out = g_string_new(NULL);
	g_auto(GStrv) lines = NULL;

	cli_facts_render_csv_header(out);
	g_assert_cmpstr(out->str, ==, "guest,section,item,key,value\n");
	cli_facts_render_csv_rows(out, "web,1", json_node_get_object(node));
	g_test_message("%s", out->str);
	assert_contains(out->str, "\"web,1\",cpu,,model_name,Intel(R) Xeon(R) Gold 6338 CPU @ "
	                          "2.00GHz\n");
	assert_contains(out->str, "\"web,1\",cpu,,count,4\n");
	assert_contains(out->str, "\"web,1\",cpu,hypervisor,present,true\n");
	assert_contains(out->str, "\"web,1\",memory,,total_bytes,16776200192\n");
	assert_contains(out->str, "\"web,1\",memory,hugepages,size_bytes,2097152\n");
	assert_contains(out->str, "\"web,1\",numa,node0,cpus,0-3\n");
	assert_contains(out->str, "\"web,1\",clocksource,,available,kvm-clock tsc acpi_pm\n");
	assert_contains(out->str, "\"web,1\",steal,,percent,0.4\n");
	assert_contains(out->str, "\"web,1\",block,vda,write_cache,write back\n");
	assert_contains(out->str, "\"web,1\",block,vda,model,\n");
	assert_contains(out->str, "\"web,1\",net,eth0,speed_mbps,\n");
	assert_contains(out->str, "\"web,1\",os,,pretty_name,Debian GNU/Linux 12 (bookworm)\n");
	/* every row has exactly five fields (no field here holds a quoted comma but the guest) */
	lines = g_strsplit(out->str, "\n", -1);
	for (guint i = 1; lines[i] != NULL && lines[i][0] != '\0'; i++) {
		guint commas = 0;
		const char *rest = lines[i] + strlen("\"web,1\"");
		g_assert_true(g_str_has_prefix(lines[i], "\"web,1\","));
		for (const char *p = rest; *p != '\0'; p++)
			commas += *p == ',';
		g_assert_cmpuint(commas, ==, 4);
	}
}

/* Sections not asked for are not shown at all; the ones asked, missing or not, are. */
static void test_sections(void)
{
	g_autoptr(JsonNode) node = load_fixture("tuned-host.json");
	g_autoptr(CliFacts) model = cli_facts_new(json_node_get_object(node));
	g_autoptr(CliFacts) empty = cli_facts_new(NULL);
	g_autoptr(GString) table = g_string_new(NULL);
	g_autoptr(GString) csv = g_string_new(NULL);
	g_autoptr(GString) missing = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	CliFactsSections sections = 0;

	g_assert_true(cli_facts_sections_parse(NULL, &sections, &error));
	g_assert_cmpint(sections, ==, CLI_FACTS_SECTION_ALL);
	g_assert_true(cli_facts_sections_parse(" os,steal", &sections, &error));
	g_assert_no_error(error);
	g_assert_cmpint(sections, ==, CLI_FACTS_SECTION_OS | CLI_FACTS_SECTION_STEAL);
	g_assert_false(cli_facts_sections_parse("cpu,disk", &sections, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_assert_cmpstr(error->message, ==,
	                "unknown section 'disk' (known: cpu, memory, clocksource, steal, block, "
	                "net, os)");
	g_clear_error(&error);
	g_assert_false(cli_facts_sections_parse("cpu,,os", &sections, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
	g_clear_error(&error);

	cli_facts_view_table(table, "g", model, CLI_FACTS_SECTION_STEAL, FALSE);
	g_assert_cmpstr(table->str, ==,
	                "g\n  steal        0.4 % over 200 ms\n  agent        0.1.0\n");
	cli_facts_view_csv_rows(csv, "g", model, CLI_FACTS_SECTION_OS);
	g_assert_null(strstr(csv->str, ",cpu,"));
	g_assert_null(strstr(csv->str, ",steal,"));
	assert_contains(csv->str, "g,os,,kernel_release,6.1.0-18-cloud-amd64\n");
	assert_contains(csv->str, "g,agent,,agent_version,");
	/* asked for and absent from the reply: unknown, as before */
	cli_facts_view_table(missing, "g", empty, CLI_FACTS_SECTION_BLOCK, FALSE);
	g_assert_cmpstr(missing->str, ==, "g\n  disks        unknown\n  agent        unknown\n");
}

/* An aarch64 guest: the flags that matter there, not x86 names that are always absent. */
static void test_table_arm64(void)
{
	g_autoptr(JsonNode) node = load_fixture("legacy-qemu64.json");
	g_autoptr(GString) out = g_string_new(NULL);
	JsonObject *cpu = json_object_get_object_member(json_node_get_object(node), "cpu");
	JsonArray *flags = json_array_new();
	const char *const names[] = { "fp", "asimd", "aes", "pmull", "sha2", "atomics", "sve" };

	for (guint i = 0; i < G_N_ELEMENTS(names); i++)
		json_array_add_string_element(flags, names[i]);
	json_object_set_array_member(cpu, "flags", flags);
	json_object_set_string_member(cpu, "architecture", "aarch64");
	cli_facts_render_table(out, "arm", json_node_get_object(node), FALSE);
	assert_contains(out->str, "  flags        aes:present pmull:present sha2:present "
	                          "sha512:absent atomics:present sve:present sve2:absent\n");
	g_assert_null(strstr(out->str, "pclmulqdq"));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/facts-view/escape", test_escape);
	g_test_add_func("/facts-view/table-arm", test_table_arm);
	g_test_add_func("/facts-view/format-bytes", test_format_bytes);
	g_test_add_func("/facts-view/format-rate", test_format_rate);
	g_test_add_func("/facts-view/format-duration", test_format_duration);
	g_test_add_func("/facts-view/text-truncate", test_text_truncate);
	g_test_add_func("/facts-view/table-tuned", test_table_tuned);
	g_test_add_func("/facts-view/table-legacy", test_table_legacy);
	g_test_add_func("/facts-view/table-arm64", test_table_arm64);
	g_test_add_func("/facts-view/table-numa", test_table_numa);
	g_test_add_func("/facts-view/table-errors", test_table_errors);
	g_test_add_func("/facts-view/hostile-strings", test_hostile_strings);
	g_test_add_func("/facts-view/hostile-types", test_hostile_types);
	g_test_add_func("/facts-view/null-and-empty", test_null_and_empty);
	g_test_add_func("/facts-view/huge", test_huge);
	g_test_add_func("/facts-view/csv", test_csv);
	g_test_add_func("/facts-view/sections", test_sections);
	return g_test_run();
}
