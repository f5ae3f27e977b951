/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "guestbench-protocol.h"

#include "analysis/host-rules.h"
#include "commands/cmd-host-check.h"
#include "commands/commands.h"
#include "fleet/host-files.h"
#include "fleet/pve.h"
#include "render/escape.h"
#include "render/output.h"
#include "render/prom.h"

/* KVM_GET_API_VERSION has answered 12 since Linux 2.6.22; anything else is not KVM. */
#define CLI_KVM_API_VERSION 12

static gint cli_strcmp_indirect(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

typedef struct {
	const char *sysroot;
	GPtrArray *findings;
} CliCheckCtx;

static void ctx_add(CliCheckCtx *ctx, const char *id, CliLevel level, const char *subject,
                    const char *detail, const char *hint)
{
	g_ptr_array_add(ctx->findings, cli_finding_new(id, level, subject, detail, hint));
}

static gboolean ctx_exists(CliCheckCtx *ctx, const char *path)
{
	g_autofree char *full = cli_host_path(ctx->sysroot, path);
	return g_file_test(full, G_FILE_TEST_EXISTS);
}

/* First line of a small sysfs file, stripped; NULL when unreadable. */
static char *ctx_read_line(CliCheckCtx *ctx, const char *path)
{
	g_autofree char *full = cli_host_path(ctx->sysroot, path);
	g_autofree char *text = NULL;
	gsize len = 0;
	char *nl;

	if (!g_file_get_contents(full, &text, &len, NULL) || len > 4096)
		return NULL;
	nl = strchr(text, '\n');
	if (nl != NULL)
		*nl = '\0';
	return g_strstrip(g_steal_pointer(&text));
}

static void check_cpu_virt(CliCheckCtx *ctx, char **flags)
{
	if (flags == NULL) {
		ctx_add(ctx, "HOST-CPU-VIRT", CLI_LEVEL_WARN, "cpu", "cannot read /proc/cpuinfo",
		        NULL);
	} else if (g_strv_contains((const char *const *)flags, "vmx")) {
		ctx_add(ctx, "HOST-CPU-VIRT", CLI_LEVEL_PASS, "cpu", "Intel VT-x (vmx)", NULL);
	} else if (g_strv_contains((const char *const *)flags, "svm")) {
		ctx_add(ctx, "HOST-CPU-VIRT", CLI_LEVEL_PASS, "cpu", "AMD-V (svm)", NULL);
	} else {
		ctx_add(ctx, "HOST-CPU-VIRT", CLI_LEVEL_FAIL, "cpu",
		        "no vmx or svm flag: only emulation (TCG), many times slower",
		        "enable VT-x/AMD-V in the firmware; inside a VM, enable nested "
		        "virtualization on its host");
	}
}

static void check_kvm_device(CliCheckCtx *ctx)
{
	g_autofree char *path = cli_host_path(ctx->sysroot, "/dev/kvm");
	g_autofree char *detail = NULL;
	int fd;
	int version;

	fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int errsv = errno;
		detail = g_strdup_printf("cannot open %s: %s", path, g_strerror(errsv));
		ctx_add(ctx, "HOST-KVM-DEVICE", CLI_LEVEL_FAIL, "/dev/kvm", detail,
		        errsv == ENOENT   ? "load kvm_intel or kvm_amd (modprobe) after enabling "
		                            "VT-x/AMD-V in the firmware"
		        : errsv == EACCES ? "add the user to the kvm group"
		                          : NULL);
		return;
	}
	version = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (version != CLI_KVM_API_VERSION) {
		int errsv = errno;
		detail = version < 0 ? g_strdup_printf("%s does not answer KVM_GET_API_VERSION: %s",
		                                       path, g_strerror(errsv))
		                     : g_strdup_printf("%s reports KVM API %d, expected %d", path,
		                                       version, CLI_KVM_API_VERSION);
		ctx_add(ctx, "HOST-KVM-DEVICE", CLI_LEVEL_FAIL, "/dev/kvm", detail,
		        "/dev/kvm is not the KVM device: check udev and the kvm module");
	} else {
		detail = g_strdup_printf("%s usable, KVM API %d", path, version);
		ctx_add(ctx, "HOST-KVM-DEVICE", CLI_LEVEL_PASS, "/dev/kvm", detail, NULL);
	}
	close(fd);
}

/* Whether module name is loaded: /proc/modules, else /sys/module/NAME (built-in or loaded). */
static gboolean ctx_module_loaded(CliCheckCtx *ctx, const char *name)
{
	g_autofree char *full = cli_host_path(ctx->sysroot, "/proc/modules");
	g_autofree char *text = NULL;
	g_autofree char *sys = g_strdup_printf("/sys/module/%s", name);

	if (g_file_get_contents(full, &text, NULL, NULL)) {
		g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
		for (guint i = 0; lines[i] != NULL; i++) {
			g_auto(GStrv) fields = g_strsplit(lines[i], " ", 2);
			if (g_strcmp0(fields[0], name) == 0)
				return TRUE;
		}
	}
	return ctx_exists(ctx, sys);
}

/* "kvm_intel", "kvm_amd" or NULL. */
static const char *check_kvm_modules(CliCheckCtx *ctx)
{
	const char *vendor = NULL;

	if (ctx_module_loaded(ctx, "kvm_intel"))
		vendor = "kvm_intel";
	else if (ctx_module_loaded(ctx, "kvm_amd"))
		vendor = "kvm_amd";
	if (vendor != NULL && ctx_module_loaded(ctx, "kvm")) {
		g_autofree char *detail = g_strdup_printf("kvm and %s loaded", vendor);
		ctx_add(ctx, "HOST-KVM-MODULES", CLI_LEVEL_PASS, "kernel", detail, NULL);
	} else if (ctx_module_loaded(ctx, "kvm")) {
		ctx_add(ctx, "HOST-KVM-MODULES", CLI_LEVEL_FAIL, "kernel",
		        "kvm is loaded but neither kvm_intel nor kvm_amd",
		        "modprobe kvm_intel (or kvm_amd); dmesg says why it refused to load");
	} else {
		ctx_add(ctx, "HOST-KVM-MODULES", CLI_LEVEL_FAIL, "kernel",
		        "the kvm module is not loaded", "modprobe kvm_intel (or kvm_amd)");
	}
	return vendor;
}

static void check_nested(CliCheckCtx *ctx, const char *vendor)
{
	g_autofree char *path = NULL;
	g_autofree char *value = NULL;
	g_autofree char *detail = NULL;

	if (vendor == NULL) {
		ctx_add(ctx, "HOST-KVM-NESTED", CLI_LEVEL_NOTE, "kernel",
		        "no kvm_intel/kvm_amd: nested virtualization unknown", NULL);
		return;
	}
	path = g_strdup_printf("/sys/module/%s/parameters/nested", vendor);
	value = ctx_read_line(ctx, path);
	if (value == NULL) {
		detail = g_strdup_printf("cannot read %s", path);
		ctx_add(ctx, "HOST-KVM-NESTED", CLI_LEVEL_NOTE, "kernel", detail, NULL);
	} else if (g_strcmp0(value, "Y") == 0 || g_strcmp0(value, "1") == 0) {
		detail =
		    g_strdup_printf("%s nested=%s: guests may run their own VMs", vendor, value);
		ctx_add(ctx, "HOST-KVM-NESTED", CLI_LEVEL_PASS, "kernel", detail, NULL);
	} else if (g_strcmp0(value, "N") == 0 || g_strcmp0(value, "0") == 0) {
		detail = g_strdup_printf("%s nested=%s: guests cannot use KVM themselves", vendor,
		                         value);
		ctx_add(ctx, "HOST-KVM-NESTED", CLI_LEVEL_NOTE, "kernel", detail,
		        "only if guests need KVM: options kvm_intel nested=1 (or kvm_amd)");
	} else {
		g_autofree char *safe = cli_escape_terminal(value);
		detail = g_strdup_printf("%s nested has an unknown value '%s'", vendor, safe);
		ctx_add(ctx, "HOST-KVM-NESTED", CLI_LEVEL_WARN, "kernel", detail, NULL);
	}
}

static void check_vhost_net(CliCheckCtx *ctx)
{
	if (ctx_exists(ctx, "/dev/vhost-net")) {
		ctx_add(ctx, "HOST-VHOST-NET", CLI_LEVEL_PASS, "/dev/vhost-net",
		        "virtio-net can run its data path in the kernel", NULL);
		return;
	}
	ctx_add(ctx, "HOST-VHOST-NET", CLI_LEVEL_WARN, "/dev/vhost-net",
	        "no /dev/vhost-net: virtio-net packets go through QEMU's userspace, one thread",
	        "modprobe vhost_net");
}

static void check_hugepages(CliCheckCtx *ctx)
{
	g_autofree char *dir_path = cli_host_path(ctx->sysroot, "/sys/devices/system/node");
	g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) detail = g_string_new(NULL);
	guint64 total = 0;
	const char *name;

	while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
		if (g_str_has_prefix(name, "node") && g_ascii_isdigit(name[4]))
			g_ptr_array_add(names, g_strdup(name));
	}
	g_ptr_array_sort(names, cli_strcmp_indirect);
	for (guint i = 0; i < names->len; i++) {
		const char *node = g_ptr_array_index(names, i);
		g_autofree char *rel =
		    g_strdup_printf("/sys/devices/system/node/%s/hugepages", node);
		g_autofree char *full = cli_host_path(ctx->sysroot, rel);
		g_autoptr(GDir) hdir = g_dir_open(full, 0, NULL);
		g_autoptr(GPtrArray) sizes = g_ptr_array_new_with_free_func(g_free);
		const char *size;

		while (hdir != NULL && (size = g_dir_read_name(hdir)) != NULL) {
			if (g_str_has_prefix(size, "hugepages-"))
				g_ptr_array_add(sizes, g_strdup(size));
		}
		g_ptr_array_sort(sizes, cli_strcmp_indirect);
		for (guint s = 0; s < sizes->len; s++) {
			const char *sz = g_ptr_array_index(sizes, s);
			g_autofree char *nr_rel = g_strdup_printf("%s/%s/nr_hugepages", rel, sz);
			g_autofree char *value = ctx_read_line(ctx, nr_rel);
			guint64 nr = 0;

			if (value == NULL ||
			    !g_ascii_string_to_unsigned(value, 10, 0, G_MAXUINT32, &nr, NULL) ||
			    nr == 0)
				continue;
			total += nr;
			g_string_append_printf(detail, "%s%s: %" G_GUINT64_FORMAT " x %s",
			                       detail->len > 0 ? ", " : "", node, nr,
			                       sz + strlen("hugepages-"));
		}
	}
	if (names->len == 0) {
		ctx_add(ctx, "HOST-HUGEPAGES", CLI_LEVEL_NOTE, "memory",
		        "no NUMA information in /sys/devices/system/node", NULL);
	} else if (total == 0) {
		ctx_add(ctx, "HOST-HUGEPAGES", CLI_LEVEL_NOTE, "memory",
		        "no hugepages reserved on any node",
		        "reserve them for big guests: vm.nr_hugepages, or per node in "
		        "/sys/devices/system/node/nodeN/hugepages/hugepages-2048kB/nr_hugepages");
	} else {
		g_string_prepend(detail, "reserved: ");
		ctx_add(ctx, "HOST-HUGEPAGES", CLI_LEVEL_PASS, "memory", detail->str, NULL);
	}
}

static void check_thp(CliCheckCtx *ctx)
{
	g_autofree char *line = ctx_read_line(ctx, "/sys/kernel/mm/transparent_hugepage/enabled");
	const char *open_br = line != NULL ? strchr(line, '[') : NULL;
	const char *close_br = open_br != NULL ? strchr(open_br, ']') : NULL;
	g_autofree char *mode = NULL;
	g_autofree char *detail = NULL;

	if (close_br == NULL) {
		ctx_add(ctx, "HOST-THP", CLI_LEVEL_NOTE, "memory",
		        "transparent hugepages: mode unknown (no [mode] in "
		        "/sys/kernel/mm/transparent_hugepage/enabled)",
		        NULL);
		return;
	}
	mode = g_strndup(open_br + 1, close_br - open_br - 1);
	if (g_strcmp0(mode, "never") == 0) {
		ctx_add(ctx, "HOST-THP", CLI_LEVEL_WARN, "memory",
		        "transparent hugepages: never; guest RAM stays on 4 KiB pages",
		        "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (QEMU madvises "
		        "guest RAM)");
		return;
	}
	if (g_strcmp0(mode, "always") != 0 && g_strcmp0(mode, "madvise") != 0) {
		g_autofree char *safe = cli_escape_terminal(mode);
		detail = g_strdup_printf("transparent hugepages: unknown mode '%s'", safe);
		ctx_add(ctx, "HOST-THP", CLI_LEVEL_NOTE, "memory", detail, NULL);
		return;
	}
	/* QEMU marks guest RAM MADV_HUGEPAGE, so madvise is as good as always here */
	detail = g_strdup_printf("transparent hugepages: %s", mode);
	ctx_add(ctx, "HOST-THP", CLI_LEVEL_PASS, "memory", detail, NULL);
}

static void check_aes(CliCheckCtx *ctx, char **flags)
{
	if (flags == NULL)
		return; /* HOST-CPU-VIRT already says /proc/cpuinfo is unreadable */
	if (g_strv_contains((const char *const *)flags, "aes")) {
		ctx_add(ctx, "HOST-CPU-AES", CLI_LEVEL_PASS, "cpu",
		        "AES-NI present: guests with host-passthrough/host-model get it", NULL);
		return;
	}
	ctx_add(ctx, "HOST-CPU-AES", CLI_LEVEL_WARN, "cpu",
	        "no AES-NI on the host: no guest can have hardware AES", NULL);
}

static gboolean ctx_is_live(CliCheckCtx *ctx)
{
	return ctx->sysroot == NULL || ctx->sysroot[0] == '\0' || g_strcmp0(ctx->sysroot, "/") == 0;
}

/* The host's own level, decided from CPUID as the agent decides a guest's. */
static void check_isa_level(CliCheckCtx *ctx)
{
	g_autoptr(GPtrArray) missing = NULL;
	g_autofree char *name = NULL;
	g_autofree char *detail = NULL;
	g_autofree char *lacks = NULL;
	GbIsaInput in;
	guint level;

	if (!ctx_is_live(ctx)) {
		ctx_add(ctx, "HOST-CPU-ISA-LEVEL", CLI_LEVEL_NOTE, "cpu",
		        "not checked under --host-sysroot: CPUID describes this machine, not the "
		        "tree",
		        NULL);
		return;
	}
	if (!gb_isa_input_read(gb_isa_cpuid_live, NULL, TRUE, &in)) {
		ctx_add(ctx, "HOST-CPU-ISA-LEVEL", CLI_LEVEL_NOTE, "cpu",
		        "no x86 CPUID: x86-64 levels do not apply", NULL);
		return;
	}
	level = gb_isa_level(&in, &missing);
	name = gb_isa_level_name(level);
	g_ptr_array_add(missing, NULL);
	lacks = g_strjoinv(", ", (char **)missing->pdata);
	if (level >= GB_ISA_LEVEL_MAX) {
		detail = g_strdup_printf("%s: guests on host-passthrough/host-model can be %s",
		                         name, name);
		ctx_add(ctx, "HOST-CPU-ISA-LEVEL", CLI_LEVEL_PASS, "cpu", detail, NULL);
		return;
	}
	detail =
	    g_strdup_printf("%s (x86-64-v%u lacks %s): no guest of this host can run an "
	                    "x86-64-v%u build",
	                    name != NULL ? name : "below x86-64-v1", level + 1, lacks, level + 1);
	/* RHEL 9 and most current distributions need v2: a host below it is a problem */
	ctx_add(ctx, "HOST-CPU-ISA-LEVEL", level >= 2 ? CLI_LEVEL_NOTE : CLI_LEVEL_WARN, "cpu",
	        detail, level >= 2 ? NULL : "plan hosts of x86-64-v2 or newer for current guests");
}

#define CLI_HOST_VULN_DIR "/sys/devices/system/cpu/vulnerabilities"

/* The host kernel's own report: what it says Vulnerable, no guest can be protected from. */
static void check_vulnerabilities(CliCheckCtx *ctx)
{
	g_autofree char *dir_path = cli_host_path(ctx->sysroot, CLI_HOST_VULN_DIR);
	g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *detail = NULL;
	guint n_vulnerable = 0;
	guint n_read = 0;
	const char *name;

	if (dir == NULL) {
		ctx_add(ctx, "HOST-CPU-VULNERABLE", CLI_LEVEL_NOTE, "cpu",
		        "no " CLI_HOST_VULN_DIR " (a kernel before 4.15): vulnerabilities unknown",
		        NULL);
		return;
	}
	while ((name = g_dir_read_name(dir)) != NULL)
		g_ptr_array_add(names, g_strdup(name));
	g_ptr_array_sort(names, cli_strcmp_indirect);
	for (guint i = 0; i < names->len; i++) {
		const char *file = g_ptr_array_index(names, i);
		g_autofree char *path = g_strdup_printf(CLI_HOST_VULN_DIR "/%s", file);
		g_autofree char *text = ctx_read_line(ctx, path);
		g_autofree char *subject = NULL;
		g_autofree char *what = NULL;

		if (text == NULL || !g_utf8_validate(text, -1, NULL))
			continue;
		n_read++;
		if (!g_str_has_prefix(text, "Vulnerable"))
			continue;
		n_vulnerable++;
		subject = g_strdup_printf("cpu/%s", file);
		what = g_strdup_printf("the host kernel reports %s: '%s'", file, text);
		ctx_add(ctx, "HOST-CPU-VULNERABLE", CLI_LEVEL_WARN, subject, what,
		        "update the host's CPU microcode (intel-microcode, amd64-microcode) and "
		        "kernel: a guest is not protected beyond its host");
	}
	if (n_vulnerable > 0)
		return;
	detail = g_strdup_printf("%u vulnerability files, none says Vulnerable", n_read);
	ctx_add(ctx, "HOST-CPU-VULNERABLE", CLI_LEVEL_PASS, "cpu", detail, NULL);
}

/*
 * On a Proxmox VE node: each VM of this node with or without our port, and
 * for those without it the exact args: line and the qm commands that add it.
 */
static void check_pve(CliCheckCtx *ctx)
{
	g_autofree char *dir = g_build_filename(cli_pve_get_etc(), "qemu-server", NULL);
	g_autoptr(GArray) vmids = NULL;

	if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
		return;
	vmids = cli_pve_list_vmids(dir, NULL);
	for (guint i = 0; vmids != NULL && i < vmids->len; i++) {
		guint32 vmid = g_array_index(vmids, guint32, i);
		g_autoptr(GError) error = NULL;
		g_autoptr(CliPveVm) vm = cli_pve_vm_load(vmid, NULL, &error);
		g_autofree char *subject = g_strdup_printf("pve:%u", vmid);
		g_autofree char *detail = NULL;
		g_autofree char *args = NULL;
		g_autofree char *hint = NULL;

		if (vm == NULL) {
			ctx_add(ctx, "HOST-PVE-PORT", CLI_LEVEL_WARN, subject, error->message,
			        NULL);
			continue;
		}
		if (vm->port_socket != NULL) {
			detail = g_strdup_printf("VM %u%s%s%s: args: adds our port on %s", vmid,
			                         vm->name != NULL ? " (" : "",
			                         vm->name != NULL ? vm->name : "",
			                         vm->name != NULL ? ")" : "", vm->port_socket);
			ctx_add(ctx, "HOST-PVE-PORT", CLI_LEVEL_PASS, subject, detail, NULL);
			continue;
		}
		detail = g_strdup_printf(
		    "VM %u%s%s%s has no guestbench port%s%s", vmid, vm->name != NULL ? " (" : "",
		    vm->name != NULL ? vm->name : "", vm->name != NULL ? ")" : "",
		    vm->args_problem != NULL ? ": " : (vm->agent ? " (qemu-ga's is used)" : ""),
		    vm->args_problem != NULL ? vm->args_problem : "");
		args = cli_pve_port_args(vmid);
		/* args: is one line: a VM that has one keeps it, ours is appended */
		hint = g_strdup_printf(
		    "the line is args: %s%s%s -- "
		    "as root: qm set %u --args '%s%s%s', then a cold restart: "
		    "qm shutdown %u && qm start %u",
		    vm->args != NULL && vm->args_problem == NULL ? vm->args : "",
		    vm->args != NULL && vm->args_problem == NULL ? " " : "", args, vmid,
		    vm->args != NULL && vm->args_problem == NULL ? vm->args : "",
		    vm->args != NULL && vm->args_problem == NULL ? " " : "", args, vmid, vmid);
		ctx_add(ctx, "HOST-PVE-PORT", CLI_LEVEL_NOTE, subject, detail, hint);
	}
}

GPtrArray *cli_host_check_collect(const char *sysroot)
{
	g_auto(GStrv) flags = cli_host_read_cpu_flags(sysroot, NULL);
	CliCheckCtx ctx = {
		.sysroot = sysroot,
		.findings = g_ptr_array_new_with_free_func((GDestroyNotify)cli_finding_free),
	};
	const char *vendor;

	check_cpu_virt(&ctx, flags);
	check_kvm_device(&ctx);
	vendor = check_kvm_modules(&ctx);
	check_nested(&ctx, vendor);
	check_vhost_net(&ctx);
	check_hugepages(&ctx);
	check_thp(&ctx);
	check_aes(&ctx, flags);
	check_isa_level(&ctx);
	check_vulnerabilities(&ctx);
	check_pve(&ctx);
	return ctx.findings;
}

/* What each check looks at, in virt-host-validate's words. */
static const char *cli_host_check_title(const char *id)
{
	const struct {
		const char *id;
		const char *title;
	} titles[] = {
		{ "HOST-CPU-VIRT", "Checking for hardware virtualization" },
		{ "HOST-KVM-DEVICE", "Checking if device /dev/kvm is usable" },
		{ "HOST-KVM-MODULES", "Checking for the KVM kernel modules" },
		{ "HOST-KVM-NESTED", "Checking nested virtualization" },
		{ "HOST-VHOST-NET", "Checking if device /dev/vhost-net exists" },
		{ "HOST-HUGEPAGES", "Checking for reserved hugepages" },
		{ "HOST-THP", "Checking transparent hugepages" },
		{ "HOST-CPU-AES", "Checking for AES-NI" },
		{ "HOST-CPU-ISA-LEVEL", "Checking the x86-64 ISA level" },
		{ "HOST-CPU-VULNERABLE", "Checking CPU vulnerabilities" },
		{ "HOST-PVE-PORT", "Checking a Proxmox VE VM for our port" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(titles); i++) {
		if (g_strcmp0(titles[i].id, id) == 0)
			return titles[i].title;
	}
	return id;
}

static GString *cli_host_check_render_text(GPtrArray *findings, gboolean color)
{
	const char *colors[] = { "\033[32m", "\033[36m", "\033[33m", "\033[1;31m" };
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < findings->len; i++) {
		CliFinding *f = g_ptr_array_index(findings, i);
		g_autofree char *detail = cli_escape_terminal(f->detail);

		g_string_append_printf(out, "  HOST: %-46s: %s%s%s (%s)\n",
		                       cli_host_check_title(f->rule), color ? colors[f->level] : "",
		                       cli_level_to_string(f->level), color ? "\033[0m" : "",
		                       detail);
		if (f->hint != NULL && f->level != CLI_LEVEL_PASS) {
			g_autofree char *hint = cli_escape_terminal(f->hint);
			g_string_append_printf(out, "        hint: %s\n", hint);
		}
	}
	return out;
}

static GString *cli_host_check_render_json(CliApp *app, GPtrArray *findings)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(JsonNode) root = NULL;

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "guestbench");
	json_builder_add_string_value(builder, GB_VERSION);
	json_builder_set_member_name(builder, "command");
	json_builder_add_string_value(builder, "host-check");
	json_builder_set_member_name(builder, "host_sysroot");
	json_builder_add_string_value(
	    builder, app->opts.host_sysroot != NULL ? app->opts.host_sysroot : "/");
	json_builder_set_member_name(builder, "worst");
	json_builder_add_string_value(builder, cli_level_to_string(cli_audit_worst(findings)));
	json_builder_set_member_name(builder, "checks");
	json_builder_add_value(builder, cli_audit_findings_to_json(findings));
	json_builder_end_object(builder);
	root = json_builder_get_root(builder);
	return cli_output_json_document(root);
}

/* For node_exporter's textfile collector, as audit's findings are (without a guest label). */
static GString *cli_host_check_render_prom(GPtrArray *findings)
{
	GString *out = g_string_new(NULL);

	cli_prom_family(out, "guestbench_host_check_finding", "gauge",
	                "One host-check finding of this host (1), by rule, level and subject");
	for (guint i = 0; i < findings->len; i++) {
		const CliFinding *f = g_ptr_array_index(findings, i);

		cli_prom_sample(out, "guestbench_host_check_finding", 1, "rule", f->rule, "level",
		                cli_level_to_string(f->level), "subject", f->subject, NULL);
	}
	cli_prom_family(out, "guestbench_host_check_worst_level", "gauge",
	                "This host's worst check: 0 PASS, 1 NOTE, 2 WARN, 3 FAIL");
	cli_prom_sample(out, "guestbench_host_check_worst_level", cli_audit_worst(findings), NULL);
	return out;
}

int cli_host_check_run(CliApp *app, GError **error)
{
	g_autoptr(GPtrArray) findings = NULL;
	g_autoptr(GString) out = NULL;

	if (app->args->len > 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "host-check takes no targets (it checks this host)");
		return CLI_EXIT_USAGE;
	}
	findings = cli_host_check_collect(app->opts.host_sysroot);
	if (app->opts.format == CLI_FORMAT_JSON)
		out = cli_host_check_render_json(app, findings);
	else if (app->opts.format == CLI_FORMAT_PROM)
		out = cli_host_check_render_prom(findings);
	else
		out = cli_host_check_render_text(findings, cli_app_use_color(app));
	if (!cli_app_write_doc(app, out, error))
		return CLI_EXIT_USAGE;
	return cli_audit_worst(findings) == CLI_LEVEL_FAIL ? CLI_EXIT_FINDING : CLI_EXIT_OK;
}

const CliCommand cli_cmd_host_check = {
	.name = "host-check",
	.parameter_string = "host-check",
	.summary = "Check this hypervisor host: KVM, nested, vhost-net, hugepages, THP, AES-NI, "
	           "ISA level, vulnerabilities, Proxmox VE VMs' ports",
	.description = "Reads --host-sysroot DIR (default /). On a Proxmox VE node (/etc/pve, or\n"
	               "$GUESTBENCH_PVE_ETC) each VM's config too: the args: line that adds the\n"
	               "guestbench port, and the qm commands to apply it. Exit status 1 when a\n"
	               "check FAILs.",
	.formats = CLI_FORMAT_BIT(CLI_FORMAT_TABLE) | CLI_FORMAT_BIT(CLI_FORMAT_JSON) |
	           CLI_FORMAT_BIT(CLI_FORMAT_PROM),
	.common_options = CLI_OPTIONS_SYSROOT,
	.run = cli_host_check_run,
};
