/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arm64 facts read from files, so they run on any build machine: MIDR_EL1
 * names (/proc/cpuinfo and sysfs), the Armv8.x/Armv9.x level from the
 * Features hwcaps, hypervisor evidence without CPUID. Each case writes a
 * throw-away sysroot with the files a guest kernel would have.
 */
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "facts-test.h"
#include "gb-isa.h"

static void tree_remove(const char *path)
{
	if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
		g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
		const char *name;
		while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
			g_autofree char *child = g_build_filename(path, name, NULL);
			tree_remove(child);
		}
		g_rmdir(path);
	} else {
		g_remove(path);
	}
}

/* A sysroot holding pairs of (guest path, content) with explicit lengths (NUL bytes allowed). */
typedef struct {
	const char *path;
	const char *data;
	gssize len; /* -1: strlen */
} TreeFile;

static char *tree_new(const TreeFile *files, guint n)
{
	g_autoptr(GError) error = NULL;
	char *root = g_dir_make_tmp("gb-facts-arm-XXXXXX", &error);

	g_assert_no_error(error);
	for (guint i = 0; i < n; i++) {
		g_autofree char *full = g_build_filename(root, files[i].path, NULL);
		g_autofree char *dir = g_path_get_dirname(full);
		g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
		g_file_set_contents(full, files[i].data, files[i].len, &error);
		g_assert_no_error(error);
	}
	return root;
}

static JsonNode *run_cpu(const char *root, JsonArray **errors_out)
{
	g_autoptr(JsonArray) errors = json_array_new();
	g_autofree char *cpuid_path = facts_fixture_path("aarch64.cpuid");
	g_autoptr(GError) error = NULL;
	/* "unavailable": no CPUID, as on arm64 */
	g_autoptr(FactsFakeCpuid) fake = facts_fake_cpuid_load(cpuid_path, &error);
	AgentFactsContext ctx = {
		.sysroot = root, .cpuid = facts_fake_cpuid, .cpuid_data = fake, .errors = errors
	};
	JsonNode *node;

	g_assert_no_error(error);
	node = agent_facts_collect_cpu(&ctx);
	if (errors_out != NULL)
		*errors_out = g_steal_pointer(&errors);
	return node;
}

static char *cpuinfo_text(const char *implementer, const char *part, const char *features)
{
	return g_strdup_printf("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: %s\n"
	                       "CPU implementer\t: %s\nCPU architecture: 8\nCPU variant\t: 0x1\n"
	                       "CPU part\t: %s\nCPU revision\t: 2\n",
	                       features, implementer, part);
}

static void test_midr_names(void)
{
	struct {
		const char *implementer, *part;
		const char *vendor, *model;
	} cases[] = {
		{ "0x00", "0x051", "0x00", "QEMU max" },
		{ "0x41", "0xd07", "ARM", "Cortex-A57" },
		{ "0x41", "0xd0c", "ARM", "Neoverse-N1" }, /* Graviton2, Ampere Altra */
		{ "0x41", "0xd40", "ARM", "Neoverse-V1" }, /* Graviton3 */
		{ "0x41", "0xd49", "ARM", "Neoverse-N2" },
		{ "0x41", "0xd4f", "ARM", "Neoverse-V2" },
		{ "0x41", "0xd03", "ARM", "Cortex-A53" },
		{ "0x41", "0xd08", "ARM", "Cortex-A72" },
		{ "0x41", "0xd0b", "ARM", "Cortex-A76" },
		{ "0xc0", "0xac3", "Ampere", "Ampere-1" }, /* AmpereOne */
		{ "0x61", "0x023", "Apple", "M1 Firestorm" },
		{ "0x51", "0xc00", "Qualcomm", "Falkor" },
		{ "0x48", "0xd01", "HiSilicon", "Kunpeng-920" },
		{ "0x46", "0x001", "Fujitsu", "A64FX" },
		{ "0x41", "0xfff", "ARM", "ARM part 0xfff" },
		{ "0x99", "0x123", "0x99", "0x99 part 0x123" },
		{ "0x7", "0x5", "0x07", "0x07 part 0x005" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *text =
		    cpuinfo_text(cases[i].implementer, cases[i].part, "fp asimd");
		const TreeFile files[] = { { "proc/cpuinfo", text, -1 },
			                   { "proc/sys/kernel/arch", "aarch64\n", -1 } };
		g_autofree char *root = tree_new(files, G_N_ELEMENTS(files));
		g_autoptr(JsonArray) errors = NULL;
		g_autoptr(JsonNode) cpu = run_cpu(root, &errors);

		g_test_message("%s %s", cases[i].implementer, cases[i].part);
		g_assert_cmpstr(facts_get_str(cpu, "vendor"), ==, cases[i].vendor);
		g_assert_cmpstr(facts_get_str(cpu, "model_name"), ==, cases[i].model);
		g_assert_cmpstr(facts_get_str(cpu, "midr.source"), ==, "cpuinfo");
		g_assert_cmpstr(facts_get_str(cpu, "midr.variant"), ==, "0x1");
		g_assert_cmpint(facts_get_int(cpu, "midr.revision"), ==, 2);
		g_assert_null(facts_error_for(errors, "cpu.midr"));
		g_assert_null(facts_error_for(errors, "cpu.model_name"));
		tree_remove(root);
	}
}

/* Lines that are not what the kernel prints: no MIDR from cpuinfo, an error naming the line. */
static void test_midr_malformed(void)
{
	struct {
		const char *implementer, *part;
		const char *reason; /* substring of the cpu.midr error */
	} cases[] = {
		{ "41", "0xd0c", "'CPU implementer' is not a 0x hex number up to 0xff: '41'" },
		{ "0x", "0xd0c", "'CPU implementer' is not a 0x hex number" },
		{ "0x100", "0xd0c", "up to 0xff: '0x100'" },
		{ "0x4 1", "0xd0c", "'0x4 1'" },
		{ "-0x41", "0xd0c", "'-0x41'" },
		{ "0x+41", "0xd0c", "'0x+41'" },
		{ "0x41garbage", "0xd0c", "'0x41garbage'" },
		{ "0x41", "0x1000", "'CPU part' is not a 0x hex number up to 0xfff: '0x1000'" },
		{ "0x41", "d0c", "'CPU part'" },
		{ "0x41", "0x\x01", "'0x\\001'" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *text =
		    cpuinfo_text(cases[i].implementer, cases[i].part, "fp asimd");
		const TreeFile files[] = { { "proc/cpuinfo", text, -1 },
			                   { "proc/sys/kernel/arch", "aarch64\n", -1 } };
		g_autofree char *root = tree_new(files, G_N_ELEMENTS(files));
		g_autoptr(JsonArray) errors = NULL;
		g_autoptr(JsonNode) cpu = run_cpu(root, &errors);
		const char *reason = facts_error_for(errors, "cpu.midr");

		g_test_message("%s %s: %s", cases[i].implementer, cases[i].part, reason);
		g_assert_true(facts_is_null(cpu, "midr"));
		g_assert_true(facts_is_null(cpu, "model_name"));
		g_assert_true(facts_is_null(cpu, "vendor"));
		g_assert_nonnull(reason);
		g_assert_nonnull(strstr(reason, cases[i].reason));
		/* no sysfs register either */
		g_assert_nonnull(strstr(reason, "midr_el1: No such file or directory"));
		g_assert_cmpstr(facts_error_for(errors, "cpu.model_name"), ==,
		                "no MIDR_EL1 to name the CPU from (see cpu.midr)");
		tree_remove(root);
	}
}

#define MIDR_EL1 "sys/devices/system/cpu/cpu0/regs/identification/midr_el1"

/* No MIDR lines in cpuinfo: the sysfs register decides, and garbage there is an error. */
static void test_midr_sysfs(void)
{
	struct {
		const char *midr;
		const char *model; /* NULL: an error */
		const char *reason;
	} cases[] = {
		{ "0x00000000410fd0c1\n", "Neoverse-N1", NULL },
		{ "0x00000000411fd402\n", "Neoverse-V1", NULL },
		{ "0x00000000460f0010\n", "A64FX", NULL },
		{ "0x00000000c00fac30\n", "Ampere-1", NULL },
		{ "0x000000004a0f0010\n", "0x4a part 0x001", NULL },
		{ "hello\n", NULL, "not a 32-bit register in 0x hex: 'hello'" },
		{ "0x\n", NULL, "'0x'" },
		{ "0x100000000\n", NULL, "'0x100000000'" },
		{ "0x00000000410fd0c1 0x1\n", NULL, "'0x00000000410fd0c1 0x1'" },
		{ "0x0000000000000000410fd0c1\n", NULL, "'0x0000000000000000410fd0c1'" },
		{ "", NULL, "not a 32-bit register" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		const TreeFile files[] = {
			{ "proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd\n", -1 },
			{ "proc/sys/kernel/arch", "aarch64\n", -1 },
			{ MIDR_EL1, cases[i].midr, -1 },
		};
		g_autofree char *root = tree_new(files, G_N_ELEMENTS(files));
		g_autoptr(JsonArray) errors = NULL;
		g_autoptr(JsonNode) cpu = run_cpu(root, &errors);
		const char *reason = facts_error_for(errors, "cpu.midr");

		g_test_message("%s: %s", cases[i].midr, reason);
		if (cases[i].model != NULL) {
			g_assert_cmpstr(facts_get_str(cpu, "model_name"), ==, cases[i].model);
			g_assert_cmpstr(facts_get_str(cpu, "midr.source"), ==, "midr_el1");
			g_assert_null(reason);
		} else {
			g_assert_true(facts_is_null(cpu, "midr"));
			g_assert_true(facts_is_null(cpu, "model_name"));
			g_assert_nonnull(reason);
			/* both sources are named: cpuinfo's missing line, then the register */
			g_assert_nonnull(
			    strstr(reason, "/proc/cpuinfo: no 'CPU implementer' line"));
			g_assert_nonnull(strstr(reason, cases[i].reason));
		}
		tree_remove(root);
	}
}

/* x86 files: no MIDR is looked for, so no error about it. */
static void test_midr_not_on_x86(void)
{
	g_autoptr(JsonArray) errors = NULL;
	g_autoptr(JsonNode) cpu = facts_run("qemu64", agent_facts_collect_cpu, &errors);

	g_assert_true(facts_is_null(cpu, "midr"));
	g_assert_null(facts_error_for(errors, "cpu.midr"));
	g_assert_cmpstr(facts_get_str(cpu, "isa_level"), ==, "x86-64-v1");
}

static void test_features(void)
{
	g_autoptr(GString) huge = g_string_new("fp asimd aes pmull crc32 atomics asimdrdm dcpop");
	const char *bad = "processor\t: 0\nFeatures\t: fp asimd \x01 aes\nCPU implementer\t: 0x41\n"
	                  "CPU variant\t: 0x0\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";
	const char *none = "processor\t: 0\nCPU implementer\t: 0x41\nCPU variant\t: 0x0\n"
	                   "CPU part\t: 0xd0c\nCPU revision\t: 1\n";
	g_autofree char *huge_text = NULL;

	/* a Features line of 100000 names (about 1 MiB): all kept, the level still found */
	for (guint i = 0; i < 100000; i++)
		g_string_append_printf(huge, " x%u", i);
	huge_text = cpuinfo_text("0x41", "0xd0c", huge->str);
	{
		const TreeFile files[] = { { "proc/cpuinfo", huge_text, -1 } };
		g_autofree char *root = tree_new(files, G_N_ELEMENTS(files));
		g_autoptr(JsonNode) cpu = run_cpu(root, NULL);

		g_assert_cmpstr(facts_get_str(cpu, "architecture"), ==, "aarch64");
		g_assert_cmpuint(
		    json_array_get_length(json_node_get_array(facts_get(cpu, "flags"))), ==,
		    100008);
		g_assert_cmpstr(facts_get_str(cpu, "isa_level"), ==, "armv8.2-a");
		tree_remove(root);
	}
	/* a control byte in Features: no flags, so no level, each with a reason */
	{
		const TreeFile files[] = { { "proc/cpuinfo", bad, -1 } };
		g_autofree char *root = tree_new(files, G_N_ELEMENTS(files));
		g_autoptr(JsonArray) errors = NULL;
		g_autoptr(JsonNode) cpu = run_cpu(root, &errors);

		g_assert_true(facts_is_null(cpu, "flags"));
		g_assert_true(facts_is_null(cpu, "isa_level"));
		g_assert_true(facts_is_null(cpu, "isa_missing"));
		g_assert_cmpstr(facts_error_for(errors, "cpu.flags"), ==,
		                "/proc/cpuinfo: flags hold non-printable bytes");
		g_assert_cmpstr(facts_error_for(errors, "cpu.isa_level"), ==,
		                "no Features line (hwcaps) to tell the Arm level from");
		g_assert_cmpstr(facts_get_str(cpu, "model_name"), ==, "Neoverse-N1");
		tree_remove(root);
	}
	/* no Features line at all */
	{
		const TreeFile files[] = { { "proc/cpuinfo", none, -1 } };
		g_autofree char *root = tree_new(files, G_N_ELEMENTS(files));
		g_autoptr(JsonArray) errors = NULL;
		g_autoptr(JsonNode) cpu = run_cpu(root, &errors);

		g_assert_true(facts_is_null(cpu, "flags"));
		g_assert_true(facts_is_null(cpu, "isa_level"));
		g_assert_cmpstr(facts_error_for(errors, "cpu.flags"), ==,
		                "/proc/cpuinfo: no 'Features' line");
		tree_remove(root);
	}
}

static char *level_of(const char *features, char **missing_out)
{
	g_auto(GStrv) hwcaps = g_strsplit(features, " ", -1);
	g_autoptr(GPtrArray) missing = NULL;
	char *name = gb_isa_arm_level_name(gb_isa_arm_level((const char *const *)hwcaps, &missing));

	g_ptr_array_add(missing, NULL);
	*missing_out = g_strjoinv(",", (char **)missing->pdata);
	return name;
}

#define ARM_V8_5                                                                             \
	"fp asimd atomics asimdrdm crc32 dcpop jscvt fcma lrcpc paca pacg dit uscat ilrcpc " \
	"flagm sb dcpodp flagm2 frint bti"

static void test_isa_level_arm(void)
{
	struct {
		const char *features;
		const char *level;
		const char *missing;
	} cases[] = {
		/* QEMU 7.2 cortex-a57/a53/a72 */
		{ "fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid", "armv8-a",
		  "atomics,asimdrdm" },
		{ "", "armv8-a", "atomics,asimdrdm,crc32" },
		/* QEMU 7.2 cortex-a76 / neoverse-n1 */
		{ "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm "
		  "lrcpc dcpop asimddp",
		  "armv8.2-a", "jscvt,fcma,paca,pacg" },
		{ "atomics asimdrdm crc32", "armv8.1-a", "dcpop" },
		/* a v8.3 CPU on a kernel without pointer authentication shows as v8.2 */
		{ "atomics asimdrdm crc32 dcpop jscvt fcma lrcpc", "armv8.2-a", "paca,pacg" },
		/* cumulative: v8.4 features without v8.1's crc32 are still v8.0 */
		{ "atomics asimdrdm dcpop jscvt fcma lrcpc paca pacg dit uscat ilrcpc flagm",
		  "armv8-a", "crc32" },
		{ ARM_V8_5, "armv8.5-a", "i8mm,bf16" },
		{ ARM_V8_5 " sve sve2", "armv9-a", "i8mm,bf16" },
		{ ARM_V8_5 " sve sve2 i8mm bf16", "armv9.1-a", "afp,wfxt" },
		{ ARM_V8_5 " i8mm bf16 afp wfxt mops hbc", "armv8.8-a", "" },
		{ ARM_V8_5 " sve2 i8mm bf16 afp wfxt mops hbc", "armv9.3-a", "" },
		/* SVE2 below v8.5 is not Armv9 */
		{ "atomics asimdrdm crc32 dcpop sve sve2", "armv8.2-a",
		  "jscvt,fcma,lrcpc,paca,pacg" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *missing = NULL;
		g_autofree char *level = level_of(cases[i].features, &missing);
		g_autofree char *again = NULL;
		guint code = 0;

		g_test_message("%s -> %s missing %s", cases[i].features, level, missing);
		g_assert_cmpstr(level, ==, cases[i].level);
		g_assert_cmpstr(missing, ==, cases[i].missing);
		g_assert_true(gb_isa_arm_level_parse(level, &code));
		again = gb_isa_arm_level_name(code);
		g_assert_cmpstr(again, ==, level);
	}
}

static void test_isa_level_arm_names(void)
{
	const char *const bad[] = { "armv8.0-a", "armv10-a",  "armv8.9-a",  "armv9.4-a",
		                    "ARMV8-A",   "armv8-a ",  "armv8.10-a", "armv8",
		                    "armv8-r",   "x86-64-v2", "",           "armv7-a",
		                    "armv8.-a" };
	struct {
		guint a, b, meet;
	} meets[] = {
		{ 86, 90, 85 }, { 90, 86, 85 }, { 91, 92, 91 }, { 80, 93, 80 },
		{ 93, 88, 88 }, { 82, 82, 82 }, { 90, 85, 85 }, { 90, 84, 84 },
	};
	guint code = 0;

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_test_message("'%s'", bad[i]);
		g_assert_false(gb_isa_arm_level_parse(bad[i], &code));
	}
	g_assert_false(gb_isa_arm_level_parse(NULL, &code));
	g_assert_true(gb_isa_arm_level_parse("armv9.3-a", &code));
	g_assert_cmpuint(code, ==, 93);
	g_assert_null(gb_isa_arm_level_name(94));
	g_assert_null(gb_isa_arm_level_name(79));
	for (guint i = 0; i < G_N_ELEMENTS(meets); i++)
		g_assert_cmpuint(gb_isa_arm_level_meet(meets[i].a, meets[i].b), ==, meets[i].meet);
}

static char *lacks_of(const char *features, guint required)
{
	g_auto(GStrv) hwcaps = g_strsplit(features, " ", -1);
	g_autoptr(GPtrArray) lacks = gb_isa_arm_level_lacks((const char *const *)hwcaps, required);

	g_ptr_array_add(lacks, NULL);
	return g_strjoinv(",", (char **)lacks->pdata);
}

/* What a required level needs that the hwcaps lack: empty exactly when the level is reached. */
static void test_isa_level_arm_lacks(void)
{
	const char *const features[] = {
		"",
		"fp asimd aes pmull crc32",
		"atomics asimdrdm crc32 dcpop",
		ARM_V8_5,
		ARM_V8_5 " sve2",
		ARM_V8_5 " i8mm bf16",
		ARM_V8_5 " sve2 i8mm bf16 afp wfxt mops hbc",
	};
	struct {
		const char *features;
		guint required;
		const char *lacks;
	} cases[] = {
		{ "fp asimd aes pmull crc32", 82, "atomics,asimdrdm,dcpop" },
		{ "", 81, "atomics,asimdrdm,crc32" },
		{ "atomics asimdrdm crc32 dcpop", 82, "" },
		/* Armv9.0 needs sve2 and Armv8.5; Armv8.6 has i8mm and bf16, Armv9.0 need not */
		{ ARM_V8_5 " i8mm bf16", 90, "sve2" },
		{ ARM_V8_5 " sve2", 86, "i8mm,bf16" },
		{ ARM_V8_5 " sve2", 90, "" },
		{ "atomics asimdrdm crc32 sve2", 90,
		  "dcpop,jscvt,fcma,lrcpc,paca,pacg,dit,uscat,"
		  "ilrcpc,flagm,sb,dcpodp,flagm2,frint,bti" },
		{ "atomics", 80, "" },
		/* not a level: nothing asked, nothing lacking */
		{ "", 0, "" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *lacks = lacks_of(cases[i].features, cases[i].required);

		g_test_message("%s for %u: %s", cases[i].features, cases[i].required, lacks);
		g_assert_cmpstr(lacks, ==, cases[i].lacks);
	}
	/* consistent with the level and meet: nothing lacking <=> the level includes it */
	for (guint i = 0; i < G_N_ELEMENTS(features); i++) {
		g_auto(GStrv) hwcaps = g_strsplit(features[i], " ", -1);
		guint level = gb_isa_arm_level((const char *const *)hwcaps, NULL);

		for (guint required = 80; required <= 93; required++) {
			g_autofree char *name = gb_isa_arm_level_name(required);
			g_autofree char *lacks = NULL;

			if (name == NULL)
				continue;
			lacks = lacks_of(features[i], required);
			g_assert_cmpint(lacks[0] == '\0', ==,
			                gb_isa_arm_level_meet(level, required) == required);
		}
	}
}

static void test_hypervisor(void)
{
	struct {
		const char *tree;
		gboolean present;
		const char *vendor;
		const char *source;
	} cases[] = {
		{ "aarch64", TRUE, "KVM", "dmi" },
		{ "arm-qemu-max", TRUE, "QEMU", "device-tree" },
		{ "arm-a57-xen", TRUE, "Xen", "device-tree" },
		{ "arm-midr-sysfs", TRUE, "acrn", "sysfs" },
		{ "arm-broken", FALSE, NULL, NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(JsonNode) cpu = facts_run(cases[i].tree, agent_facts_collect_cpu, NULL);

		g_test_message("%s", cases[i].tree);
		g_assert_true(facts_get_bool(cpu, "hypervisor.present") == cases[i].present);
		if (cases[i].vendor != NULL) {
			g_assert_cmpstr(facts_get_str(cpu, "hypervisor.vendor"), ==,
			                cases[i].vendor);
			g_assert_cmpstr(facts_get_str(cpu, "hypervisor.source"), ==,
			                cases[i].source);
		} else {
			g_assert_true(facts_is_null(cpu, "hypervisor.vendor"));
		}
		/* never a CPUID signature without CPUID */
		g_assert_true(facts_is_null(cpu, "hypervisor.signature"));
		g_assert_true(facts_is_null(cpu, "cpuid"));
	}
}

/* DMI without CPUID: EC2's Nitro instances name themselves; bare-metal ones have no hypervisor. */
static void test_hypervisor_ec2(void)
{
	struct {
		const char *product;
		gboolean present;
	} cases[] = { { "c6g.large", TRUE }, { "a1.metal", FALSE }, { "m7g.metal", FALSE } };

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *text = cpuinfo_text("0x41", "0xd0c", "fp asimd aes pmull");
		const TreeFile files[] = {
			{ "proc/cpuinfo", text, -1 },
			{ "sys/class/dmi/id/sys_vendor", "Amazon EC2\n", -1 },
			{ "sys/class/dmi/id/product_name", cases[i].product, -1 },
		};
		g_autofree char *root = tree_new(files, G_N_ELEMENTS(files));
		g_autoptr(JsonNode) cpu = run_cpu(root, NULL);

		g_test_message("%s", cases[i].product);
		g_assert_true(facts_get_bool(cpu, "hypervisor.present") == cases[i].present);
		if (cases[i].present) {
			g_assert_cmpstr(facts_get_str(cpu, "hypervisor.vendor"), ==, "Amazon EC2");
			g_assert_cmpstr(facts_get_str(cpu, "hypervisor.source"), ==, "dmi");
		}
		tree_remove(root);
	}
}

/* A device tree that is not QEMU's virt board proves nothing. */
static void test_hypervisor_other_board(void)
{
	static const char rpi[] = "raspberrypi,4-model-b\0brcm,bcm2711";
	static const char virt_second[] = "vendor,board\0linux,dummy-virt";
	struct {
		const char *data;
		gssize len;
		gboolean present;
	} cases[] = {
		{ rpi, sizeof(rpi), FALSE },
		{ virt_second, sizeof(virt_second), TRUE },
		/* no terminating NUL: not a property the kernel wrote */
		{ "linux,dummy-virt", 16, FALSE },
		{ "", 0, FALSE },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *text = cpuinfo_text("0x41", "0xd08", "fp asimd");
		const TreeFile files[] = {
			{ "proc/cpuinfo", text, -1 },
			{ "sys/firmware/devicetree/base/compatible", cases[i].data, cases[i].len },
		};
		g_autofree char *root = tree_new(files, G_N_ELEMENTS(files));
		g_autoptr(JsonNode) cpu = run_cpu(root, NULL);

		g_test_message("case %u", i);
		g_assert_true(facts_get_bool(cpu, "hypervisor.present") == cases[i].present);
		tree_remove(root);
	}
}

static void test_hugepage_sizes(void)
{
	g_autoptr(JsonNode) max = facts_run("arm-qemu-max", agent_facts_collect_memory, NULL);
	g_autoptr(JsonNode) k64 = facts_run("arm-a57-xen", agent_facts_collect_memory, NULL);
	g_autoptr(JsonArray) errors = NULL;
	g_autoptr(JsonNode) broken = facts_run("arm-broken", agent_facts_collect_memory, &errors);
	g_autofree char *s_max = facts_get_joined(max, "hugepages.sizes_bytes");
	g_autofree char *s_k64 = facts_get_joined(k64, "hugepages.sizes_bytes");
	g_autofree char *s_broken = facts_get_joined(broken, "hugepages.sizes_bytes");

	g_assert_cmpstr(s_max, ==, "65536,2097152,33554432,1073741824");
	g_assert_cmpstr(s_k64, ==, "2097152,536870912,17179869184");
	g_assert_cmpstr(s_broken, ==, "2097152");
	g_assert_cmpstr(facts_error_for(errors, "memory.hugepages.sizes_bytes"), ==,
	                "/sys/kernel/mm/hugepages/hugepages-lotskB: not hugepages-<N>kB");
	/* the base page size is the running kernel's: not known from a tree */
	g_assert_true(facts_is_null(max, "page_size_bytes"));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/facts/arm/midr/names", test_midr_names);
	g_test_add_func("/facts/arm/midr/malformed", test_midr_malformed);
	g_test_add_func("/facts/arm/midr/sysfs", test_midr_sysfs);
	g_test_add_func("/facts/arm/midr/not-on-x86", test_midr_not_on_x86);
	g_test_add_func("/facts/arm/features", test_features);
	g_test_add_func("/facts/arm/isa-level", test_isa_level_arm);
	g_test_add_func("/facts/arm/isa-level/names", test_isa_level_arm_names);
	g_test_add_func("/facts/arm/isa-level/lacks", test_isa_level_arm_lacks);
	g_test_add_func("/facts/arm/hypervisor", test_hypervisor);
	g_test_add_func("/facts/arm/hypervisor/other-board", test_hypervisor_other_board);
	g_test_add_func("/facts/arm/hypervisor/ec2", test_hypervisor_ec2);
	g_test_add_func("/facts/arm/hugepage-sizes", test_hugepage_sizes);
	return g_test_run();
}
