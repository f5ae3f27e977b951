/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "gb-error.h"
#include "gb-json.h"

#include "analysis/facts.h"
#include "analysis/rules-pve.h"
#include "fleet/pve.h"

static char *fixture(const char *name)
{
	return g_build_filename(g_getenv("GB_TEST_DATA"), "pve", name, NULL);
}

static CliPveVm *load_vm(guint32 vmid, const char *name, GError **error)
{
	g_autofree char *path = fixture(name);

	return cli_pve_vm_load(vmid, path, error);
}

static GHashTable *load_models(void)
{
	g_autofree char *path = fixture("cpu-models.conf");
	g_autofree char *text = NULL;
	gsize len = 0;
	g_autoptr(GError) error = NULL;
	GHashTable *models;

	g_assert_true(g_file_get_contents(path, &text, &len, NULL));
	models = cli_pve_cpu_models_parse(text, len, &error);
	g_assert_no_error(error);
	return models;
}

static void test_pve_vm_full(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliPveVm) vm = load_vm(100, "100.conf", &error);
	const CliPveDisk *disk;
	const CliPveNic *nic;

	g_assert_no_error(error);
	g_assert_cmpuint(vm->vmid, ==, 100);
	g_assert_cmpstr(vm->name, ==, "web1"); /* not the snapshot's name */
	g_assert_cmpstr(vm->cpu_type, ==, "x86-64-v2-AES");
	g_assert_cmpstr(vm->cpu_flags, ==, "+pdpe1gb;-md-clear");
	g_assert_true(vm->cpu_hidden);
	g_assert_cmpstr(vm->scsihw, ==, "virtio-scsi-single");
	g_assert_true(vm->numa);
	g_assert_cmpstr(vm->hugepages, ==, "1024");
	g_assert_true(vm->agent);
	g_assert_cmpuint(vm->cores, ==, 2); /* [PENDING]'s 4 is not running */
	g_assert_cmpuint(vm->memory_mib, ==, 2048);
	g_assert_cmpuint(vm->disks->len, ==, 3);
	disk = g_ptr_array_index(vm->disks, 0);
	g_assert_cmpstr(disk->key, ==, "ide2");
	g_assert_true(disk->cdrom);
	disk = g_ptr_array_index(vm->disks, 1);
	g_assert_cmpstr(disk->key, ==, "scsi0");
	g_assert_cmpstr(disk->bus, ==, "scsi");
	g_assert_cmpstr(disk->volume, ==, "local-lvm:vm-100-disk-0");
	g_assert_cmpstr(disk->cache, ==, "writeback");
	g_assert_true(disk->iothread);
	g_assert_null(disk->aio);
	disk = g_ptr_array_index(vm->disks, 2);
	g_assert_cmpstr(disk->aio, ==, "native");
	g_assert_false(disk->iothread);
	g_assert_null(disk->cache);
	g_assert_cmpuint(vm->nics->len, ==, 2);
	nic = g_ptr_array_index(vm->nics, 0);
	g_assert_cmpstr(nic->model, ==, "virtio");
	g_assert_cmpstr(nic->bridge, ==, "vmbr0");
	g_assert_cmpuint(nic->queues, ==, 4);
	nic = g_ptr_array_index(vm->nics, 1);
	g_assert_cmpstr(nic->model, ==, "e1000");
	g_assert_cmpuint(nic->queues, ==, 0);
	g_assert_cmpstr(vm->port_socket, ==, "/var/run/qemu-server/100.guestbench");
	g_assert_null(vm->args_problem);
	g_assert_cmpuint(g_strv_length(vm->snapshots), ==, 2);
	g_assert_cmpstr(vm->snapshots[0], ==, "before-upgrade");
	g_assert_cmpstr(vm->snapshots[1], ==, "PENDING");
	g_assert_cmpuint(g_strv_length(vm->unknown_keys), ==, 0);
}

static void test_pve_vm_defaults(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliPveVm) vm = load_vm(101, "101.conf", &error);
	CliPveCpu cpu;
	const CliPveDisk *disk;

	g_assert_no_error(error);
	/* no cpu: line: PVE's kvm64, without aes or pclmulqdq */
	g_assert_null(vm->cpu);
	g_assert_cmpstr(vm->cpu_type, ==, "kvm64");
	cli_pve_cpu_resolve(vm, NULL, &cpu);
	g_assert_true(cpu.known);
	g_assert_false(cpu.aes);
	g_assert_false(cpu.pclmulqdq);
	g_assert_cmpuint(cpu.level, ==, 1);
	cli_pve_cpu_clear(&cpu);
	g_assert_true(vm->agent); /* agent: enabled=1,... */
	g_assert_null(vm->scsihw);
	g_assert_null(vm->port_socket);
	g_assert_null(vm->args_problem);
	disk = g_ptr_array_index(vm->disks, 1);
	g_assert_cmpstr(disk->bus, ==, "virtio");
	g_assert_cmpstr(disk->cache, ==, "none");
}

static void test_pve_cpu_types(void)
{
	g_autoptr(GHashTable) models = load_models();
	struct {
		const char *cpu;
		gboolean known, aes, pclmulqdq;
		guint level;
		const char *problem;
	} cases[] = {
		{ "x86-64-v2-AES", TRUE, TRUE, FALSE, 2, NULL },
		{ "x86-64-v2", TRUE, FALSE, FALSE, 2, NULL },
		/* PVE's v3 adds aes but still not pclmulqdq */
		{ "x86-64-v3", TRUE, TRUE, FALSE, 3, NULL },
		{ "kvm64,flags=+aes", TRUE, TRUE, FALSE, 1, NULL },
		{ "custom-aesclmul", TRUE, TRUE, TRUE, 2, NULL },
		{ "custom-epyclike", TRUE, TRUE, FALSE, 3, NULL },
		{ "custom-missing", FALSE, FALSE, FALSE, 0, "not in cpu-models.conf" },
		{ "Haswell-noTSX", TRUE, TRUE, TRUE, 3, NULL },
		{ "host", FALSE, FALSE, FALSE, 0, NULL },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *text = g_strdup_printf("cpu: %s\n", cases[i].cpu);
		g_autoptr(GError) error = NULL;
		g_autoptr(CliPveVm) vm = cli_pve_vm_parse(200, text, strlen(text), &error);
		CliPveCpu cpu;

		g_assert_no_error(error);
		cli_pve_cpu_resolve(vm, models, &cpu);
		g_test_message("%s: known %d aes %d clmul %d level %u", cases[i].cpu, cpu.known,
		               cpu.aes, cpu.pclmulqdq, cpu.level);
		g_assert_cmpint(cpu.known, ==, cases[i].known);
		g_assert_cmpint(cpu.aes, ==, cases[i].aes);
		g_assert_cmpint(cpu.pclmulqdq, ==, cases[i].pclmulqdq);
		g_assert_cmpuint(cpu.level, ==, cases[i].level);
		if (cases[i].problem != NULL)
			g_assert_nonnull(strstr(cpu.problem, cases[i].problem));
		else
			g_assert_null(cpu.problem);
		cli_pve_cpu_clear(&cpu);
	}
}

static void test_pve_vm_bad(void)
{
	struct {
		const char *file;
		const char *needle;
	} cases[] = {
		{ "truncated.conf", "line 2: not 'key: value' ('memo')" },
		{ "binary.conf", "NUL byte" },
		{ "latin1.conf", "not UTF-8" },
		{ "does-not-exist.conf", "VM 300: " },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliPveVm) vm = load_vm(300, cases[i].file, &error);

		g_assert_null(vm);
		g_assert_nonnull(error);
		g_test_message("%s: %s", cases[i].file, error->message);
		g_assert_nonnull(strstr(error->message, cases[i].needle));
	}
}

static void test_pve_vm_odd(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliPveVm) unknown = load_vm(301, "unknown-keys.conf", &error);
	g_autoptr(CliPveVm) trunc = NULL;

	/* PVE ignores keys it does not know, with a warning: so does this, and says which */
	g_assert_no_error(error);
	g_assert_cmpuint(g_strv_length(unknown->unknown_keys), ==, 2);
	g_assert_cmpstr(unknown->unknown_keys[0], ==, "frobnicate");
	g_assert_cmpstr(unknown->unknown_keys[1], ==, "whatever2");
	g_assert_cmpuint(unknown->memory_mib, ==, 512);
	/* cut in a value: still a config, of what it says */
	trunc = load_vm(302, "truncated-ok.conf", &error);
	g_assert_no_error(error);
	g_assert_cmpuint(trunc->disks->len, ==, 1);
	/* a bad line is quoted to 60 characters, never cut inside one */
	{
		g_autoptr(GString) bad = g_string_new(NULL);
		g_autoptr(CliPveVm) vm = NULL;

		for (guint i = 0; i < 59; i++)
			g_string_append_c(bad, 'x');
		g_string_append(bad, "\u00e9\u00e9 no colon\n");
		vm = cli_pve_vm_parse(304, bad->str, bad->len, &error);
		g_assert_null(vm);
		g_assert_error(error, GB_ERROR, GB_ERROR_PARSE);
		g_assert_true(g_utf8_validate(error->message, -1, NULL));
		g_assert_nonnull(strstr(error->message, "x\u00e9')"));
		g_clear_error(&error);
		/* and a short one is quoted whole */
		g_clear_pointer(&vm, cli_pve_vm_free);
		vm =
		    cli_pve_vm_parse(304, "\u00e9 no colon\n", strlen("\u00e9 no colon\n"), &error);
		g_assert_null(vm);
		g_assert_nonnull(strstr(error->message, "('\u00e9 no colon')"));
		g_clear_error(&error);
	}
	/* two models in one net line (PVE refuses it): the model is unknown, nothing leaks */
	{
		static const char two[] = "net0: virtio=BC:24:11:2A:5B:03,i82551=vmbr0\n"
		                          "net1: e1000=BC:24:11:2A:5B:04,model=virtio\n";
		g_autoptr(CliPveVm) vm = cli_pve_vm_parse(303, two, sizeof(two) - 1, &error);

		g_assert_no_error(error);
		g_assert_cmpuint(vm->nics->len, ==, 2);
		g_assert_null(((const CliPveNic *)vm->nics->pdata[0])->model);
		g_assert_null(((const CliPveNic *)vm->nics->pdata[1])->model);
	}
}

static void test_pve_args(void)
{
	struct {
		const char *file;
		const char *needle;
	} cases[] = {
		{ "args-meta.conf", "shell metacharacter ';'" },
		{ "args-client.conf", "not a unix socket QEMU listens on" },
		{ "args-nochardev.conf", "chardev 'missing', which args: does not define" },
	};
	const char *weird[] = {
		"args: -device virtserialport,name=org.guestbench.agent.0\n",
		"args: '-chardev\n",
		"args: $(reboot)\n",
		"args: `id`\n",
		"args: -chardev\n",
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliPveVm) vm = load_vm(400, cases[i].file, &error);

		g_assert_no_error(error);
		g_assert_null(vm->port_socket);
		g_test_message("%s: %s", cases[i].file, vm->args_problem);
		g_assert_nonnull(strstr(vm->args_problem, cases[i].needle));
	}
	for (guint i = 0; i < G_N_ELEMENTS(weird); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliPveVm) vm = cli_pve_vm_parse(401, weird[i], strlen(weird[i]), &error);

		g_assert_no_error(error);
		g_assert_null(vm->port_socket);
		g_test_message("%s -> %s", weird[i], vm->args_problem);
	}
	/* the line host-check prints is one this parser finds the port in */
	{
		g_autofree char *args = cli_pve_port_args(105);
		g_autofree char *text = g_strdup_printf("args: %s\n", args);
		g_autoptr(GError) error = NULL;
		g_autoptr(CliPveVm) vm = cli_pve_vm_parse(105, text, strlen(text), &error);

		g_assert_no_error(error);
		g_assert_null(vm->args_problem);
		g_assert_true(g_str_has_suffix(vm->port_socket, "/105.guestbench"));
	}
}

static void test_pve_vmid(void)
{
	const char *bad[] = { "",     "abc",  "99",   "0100", "1000000000",
		              "-100", "+100", "100 ", "1e3",  "１００" };
	guint32 vmid = 0;

	g_assert_true(cli_pve_parse_vmid("100", &vmid, NULL));
	g_assert_cmpuint(vmid, ==, 100);
	g_assert_true(cli_pve_parse_vmid("999999999", &vmid, NULL));
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		g_assert_false(cli_pve_parse_vmid(bad[i], &vmid, &error));
		g_assert_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT);
		g_assert_nonnull(strstr(error->message, "is not a VMID"));
	}
}

static CliPveMembers *parse_members(const char *name, GError **error)
{
	g_autofree char *path = fixture(name);
	g_autofree char *text = NULL;
	gsize len = 0;

	g_assert_true(g_file_get_contents(path, &text, &len, NULL));
	return cli_pve_members_parse(text, len, error);
}

static void test_pve_members(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliPveMembers) members = parse_members("members.json", &error);
	const CliPveNode *node;
	const char *bad[] = { "members-array.json", "members-text.json", "members-badname.json" };

	g_assert_no_error(error);
	g_assert_cmpstr(members->local, ==, "pve1");
	g_assert_cmpuint(members->nodes->len, ==, 2);
	node = g_ptr_array_index(members->nodes, 1);
	g_assert_cmpstr(node->name, ==, "pve2");
	g_assert_cmpstr(node->ip, ==, "127.0.0.2");
	g_assert_true(node->online);
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error_bad = NULL;
		g_autoptr(CliPveMembers) m = parse_members(bad[i], &error_bad);
		g_assert_null(m);
		g_test_message("%s: %s", bad[i], error_bad->message);
		g_assert_true(g_str_has_prefix(error_bad->message, ".members: "));
	}
}

static void test_pve_cpu_models_bad(void)
{
	g_autofree char *path = fixture("cpu-models-bad.conf");
	g_autofree char *text = NULL;
	gsize len = 0;
	g_autoptr(GError) error = NULL;
	GHashTable *models;

	g_assert_true(g_file_get_contents(path, &text, &len, NULL));
	models = cli_pve_cpu_models_parse(text, len, &error);
	g_assert_null(models);
	g_assert_nonnull(strstr(error->message, "line 4: expected 'cpu-model: NAME'"));
}

static void test_pve_json(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CliPveVm) vm = load_vm(100, "100.conf", &error);
	g_autoptr(GHashTable) models = load_models();
	g_autoptr(JsonNode) node = cli_pve_vm_to_json(vm, models);
	g_autofree char *text = gb_json_to_string(node, NULL);

	g_assert_nonnull(strstr(text, "\"cpu_type\":\"x86-64-v2-AES\""));
	g_assert_nonnull(strstr(text, "\"cpu_aes\":true,\"cpu_pclmulqdq\":false"));
	g_assert_nonnull(strstr(text, "\"queues\":4"));
}

/* Every prefix of a real config, and every byte flipped: an error or a config, never a crash. */
static void test_pve_prefixes(void)
{
	g_autofree char *path = fixture("100.conf");
	g_autofree char *text = NULL;
	gsize len = 0;

	g_assert_true(g_file_get_contents(path, &text, &len, NULL));
	for (gsize n = 0; n <= len; n++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(CliPveVm) vm = cli_pve_vm_parse(100, text, n, &error);
		g_assert_true((vm == NULL) != (error == NULL));
	}
	for (gsize i = 0; i < len; i += 7) {
		g_autofree char *copy = g_memdup2(text, len);
		g_autoptr(GError) error = NULL;
		g_autoptr(CliPveVm) vm = NULL;

		copy[i] ^= 0x5a;
		vm = cli_pve_vm_parse(100, copy, len, &error);
		g_assert_true((vm == NULL) != (error == NULL));
	}
}

static CliFinding *find_finding(GPtrArray *findings, const char *rule, const char *subject)
{
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		if (g_strcmp0(f->rule, rule) == 0 &&
		    (subject == NULL || g_strcmp0(f->subject, subject) == 0))
			return f;
	}
	return NULL;
}

static CliFinding *must_find(GPtrArray *findings, const char *rule, const char *subject)
{
	CliFinding *f = find_finding(findings, rule, subject);

	if (f == NULL)
		g_error("no finding %s %s", rule, subject != NULL ? subject : "");
	return f;
}

/*
 * The guest of a real qemu64 VM given aes (what x86-64-v2-AES shows), an e1000 NIC
 * with one queue and an ATA disk; the config of VM 100 (101 for the SATA disk):
 * each finding's fix is a qm command, and aes without pclmulqdq is its own finding.
 */
static GPtrArray *run_pve_rules(const char *conf, guint32 vmid, gboolean add_aes,
                                JsonNode **facts_out)
{
	g_autofree char *path =
	    g_build_filename(g_getenv("GB_TEST_DATA"), "facts-json", "legacy-qemu64.json", NULL);
	g_autofree char *text = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GHashTable) models = load_models();
	g_autoptr(CliPveVm) vm = load_vm(vmid, conf, &error);
	JsonNode *facts = NULL;
	g_autoptr(JsonObject) view = json_object_new();
	g_autoptr(JsonArray) nodes = json_array_new();
	g_autoptr(CliFacts) model = NULL;
	JsonObject *cpu = NULL;
	JsonArray *flags = NULL;
	GPtrArray *findings;

	g_assert_no_error(error);
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	facts = gb_json_parse(text, strlen(text), &error);
	g_assert_no_error(error);
	cpu = json_object_get_object_member(json_node_get_object(facts), "cpu");
	flags = json_object_get_array_member(cpu, "flags");
	if (add_aes)
		json_array_add_string_element(flags, "aes");
	json_array_add_object_element(nodes, json_object_new());
	json_array_add_object_element(nodes, json_object_new());
	json_object_set_array_member(view, "host_nodes", g_steal_pointer(&nodes));
	json_object_set_member(view, "pve", cli_pve_vm_to_json(vm, models));
	model = cli_facts_new(json_node_get_object(facts));
	findings = cli_audit_run_facts(model);
	cli_pve_rules_apply(findings, model, view);
	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		g_test_message("%s %s %s: %s\n  hint: %s", cli_level_to_string(f->level), f->rule,
		               f->subject, f->detail, f->hint != NULL ? f->hint : "-");
	}
	*facts_out = facts;
	return findings;
}

static void test_pve_rules(void)
{
	g_autoptr(JsonNode) facts = NULL;
	g_autoptr(GPtrArray) findings = run_pve_rules("100.conf", 100, TRUE, &facts);
	CliFinding *f;

	/* x86-64-v2-AES: aes without pclmulqdq is its own finding, with the model to add */
	g_assert_null(find_finding(findings, "CPU-NO-AESNI", NULL));
	f = must_find(findings, "PVE-CPU-AES-NO-PCLMUL", "cpu");
	g_assert_cmpint(f->level, ==, CLI_LEVEL_FAIL);
	g_assert_nonnull(strstr(f->detail, "x86-64-v2-AES gives the guest aes but not pclmulqdq"));
	g_assert_nonnull(strstr(
	    f->hint, "printf 'cpu-model: x86-64-v2-AES-clmul\\n    flags "
	             "+aes;+popcnt;+pni;+sse4.1;+sse4.2;+ssse3;+pclmulqdq\\n    "
	             "reported-model qemu64\\n\\n' >> /etc/pve/virtual-guest/cpu-models.conf"));
	g_assert_nonnull(strstr(f->hint, "qm set 100 --cpu custom-x86-64-v2-AES-clmul"));
	/* e1000 and one queue: the NIC line to set, with the VM's own MAC and bridge */
	f = must_find(findings, "NIC-EMULATED", "net/ens3");
	g_assert_nonnull(
	    strstr(f->hint, "qm set 100 --net0 virtio=BC:24:11:2A:5B:01,bridge=vmbr0"));
	f = find_finding(findings, "NIC-SINGLE-QUEUE", "net/ens3");
	/* one queue, two vCPUs? then the line gains queues= */
	if (f != NULL && f->level != CLI_LEVEL_PASS)
		g_assert_nonnull(strstr(f->hint, "queues=2"));
	/* scsi1 has no iothread; scsi0 has one on virtio-scsi-single */
	f = must_find(findings, "PVE-DISK-IOTHREAD", "pve-disk/scsi1");
	g_assert_cmpstr(f->hint, ==,
	                "qm set 100 --scsi1 local-lvm:vm-100-disk-1,aio=native,size=8G,iothread=1, "
	                "then a cold restart");
	f = must_find(findings, "PVE-DISK-IOTHREAD", "pve-disk/scsi0");
	g_assert_cmpint(f->level, ==, CLI_LEVEL_PASS);
	g_assert_cmpint(must_find(findings, "PVE-NUMA", NULL)->level, ==, CLI_LEVEL_PASS);
	must_find(findings, "PVE-CPU-TYPE", NULL);
}

static void test_pve_rules_kvm64(void)
{
	g_autoptr(JsonNode) facts = NULL;
	g_autoptr(GPtrArray) findings = run_pve_rules("101.conf", 101, FALSE, &facts);
	CliFinding *f;

	/* kvm64 by default: no aes at all, the guest rule stays with PVE's fix */
	f = must_find(findings, "CPU-NO-AESNI", "cpu");
	g_assert_nonnull(strstr(f->hint, "cpu-models.conf"));
	g_assert_null(find_finding(findings, "PVE-CPU-AES-NO-PCLMUL", NULL));
	f = must_find(findings, "PVE-CPU-TYPE", NULL);
	g_assert_nonnull(strstr(f->detail, "kvm64 (PVE's default: the config has no cpu: line)"));
	g_assert_nonnull(strstr(f->hint, "qm set 101 --cpu x86-64-v2-AES"));
	/* the SATA disk moves to virtio-scsi */
	f = must_find(findings, "DISK-EMULATED", NULL);
	g_assert_nonnull(strstr(f->hint, "qm set 101 --delete sata0"));
	g_assert_nonnull(strstr(f->hint, "--scsihw virtio-scsi-single --scsi0 "
	                                 "local:101/vm-101-disk-0.qcow2,size=16G,iothread=1"));
	/* two vCPUs would be needed for PVE-NUMA: one here */
	g_assert_null(find_finding(findings, "PVE-NUMA", NULL));
}

/* Hostile "pve" members: skipped, never a crash. */
static void test_pve_rules_hostile(void)
{
	const char *views[] = {
		"{}",
		"{\"pve\": 1}",
		"{\"pve\": {\"vmid\": \"x\"}}",
		"{\"pve\": {\"vmid\": 100, \"disks\": [1, null, {\"key\": 3}], \"nics\": {}}}",
		"{\"pve\": {\"vmid\": 100, \"cpu_type\": null, \"vcpus\": -5}, \"host_nodes\": 7}",
	};

	for (guint i = 0; i < G_N_ELEMENTS(views); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) node = gb_json_parse(views[i], strlen(views[i]), &error);
		g_autoptr(GPtrArray) findings =
		    g_ptr_array_new_with_free_func((GDestroyNotify)cli_finding_free);
		g_autoptr(CliFacts) facts = cli_facts_new(NULL);

		g_assert_no_error(error);
		cli_pve_rules_apply(findings, facts, json_node_get_object(node));
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/pve/vm/full", test_pve_vm_full);
	g_test_add_func("/pve/vm/defaults", test_pve_vm_defaults);
	g_test_add_func("/pve/vm/bad", test_pve_vm_bad);
	g_test_add_func("/pve/vm/odd", test_pve_vm_odd);
	g_test_add_func("/pve/vm/prefixes", test_pve_prefixes);
	g_test_add_func("/pve/cpu/types", test_pve_cpu_types);
	g_test_add_func("/pve/cpu/models-bad", test_pve_cpu_models_bad);
	g_test_add_func("/pve/args", test_pve_args);
	g_test_add_func("/pve/vmid", test_pve_vmid);
	g_test_add_func("/pve/members", test_pve_members);
	g_test_add_func("/pve/json", test_pve_json);
	g_test_add_func("/pve/rules/v2-aes", test_pve_rules);
	g_test_add_func("/pve/rules/kvm64", test_pve_rules_kvm64);
	g_test_add_func("/pve/rules/hostile", test_pve_rules_hostile);
	return g_test_run();
}
