/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "guestbench-protocol.h"

#include "analysis/host-rules.h"

#define CLI_GIB (1024.0 * 1024 * 1024)
/* Below this a guest gains too little from hugepages to nag about them. */
#define CLI_HOST_HUGEPAGES_MIN_BYTES (8 * 1024LL * 1024 * 1024)

typedef struct {
	const CliFacts *facts;
	JsonObject *view;
	GPtrArray *findings;
	GPtrArray *errors; /* char *: what could not be read */
} CliHostCtx;

static void ctx_add(CliHostCtx *ctx, const char *rule, CliLevel level, const char *subject,
                    const char *detail, const char *hint)
{
	g_ptr_array_add(ctx->findings, cli_finding_new(rule, level, subject, detail, hint));
}

static void ctx_error(CliHostCtx *ctx, const char *what, GError *error)
{
	g_ptr_array_add(ctx->errors, g_strdup_printf("%s: %s", what, error->message));
}

/* The view's array member, element objects only (errors noted). */
static GPtrArray *ctx_get_objects(CliHostCtx *ctx, const char *member)
{
	GPtrArray *objs = g_ptr_array_new();
	g_autoptr(GError) error = NULL;
	JsonArray *array = NULL;

	if (!gb_json_get_array(ctx->view, member, GB_JSON_OPTIONAL, &array, &error)) {
		ctx_error(ctx, "host view", error);
		return objs;
	}
	for (guint i = 0; array != NULL && i < json_array_get_length(array); i++) {
		JsonObject *obj = NULL;
		g_autoptr(GError) error_local = NULL;
		if (!gb_json_node_get_object(json_array_get_element(array, i), member, &obj,
		                             &error_local)) {
			ctx_error(ctx, "host view", error_local);
			continue;
		}
		g_ptr_array_add(objs, obj);
	}
	return objs;
}

/* The guest's CPU flags from its facts (borrowed), or NULL when the facts do not say. */
static char *const *ctx_guest_flags(CliHostCtx *ctx)
{
	const CliFactStrv *flags = &ctx->facts->cpu.flags;
	return cli_fact_ok(&flags->fact) ? flags->value : NULL;
}

/* ---- rules --------------------------------------------------------------------------- */

static void rule_view_errors(CliHostCtx *ctx)
{
	g_auto(GStrv) errors = NULL;
	g_autoptr(GError) error = NULL;

	if (!gb_json_get_strv(ctx->view, "errors", GB_JSON_OPTIONAL, &errors, &error)) {
		ctx_error(ctx, "host view", error);
		return;
	}
	for (guint i = 0; errors != NULL && errors[i] != NULL; i++)
		g_ptr_array_add(ctx->errors, g_strdup(errors[i]));
}

static void rule_cache(CliHostCtx *ctx, gboolean unsafe_rule)
{
	g_autoptr(GPtrArray) devs = ctx_get_objects(ctx, "block");

	for (guint i = 0; i < devs->len; i++) {
		JsonObject *dev = g_ptr_array_index(devs, i);
		g_autoptr(GError) error = NULL;
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;
		const char *name = NULL, *disk = NULL, *file = NULL, *mode = NULL;
		gboolean writeback = FALSE, direct = FALSE, no_flush = FALSE;

		if (!gb_json_get_string(dev, "device", GB_JSON_REQUIRED, &name, &error) ||
		    !gb_json_get_string(dev, "disk", GB_JSON_OPTIONAL, &disk, &error) ||
		    !gb_json_get_string(dev, "file", GB_JSON_REQUIRED, &file, &error) ||
		    !gb_json_get_string(dev, "cache", GB_JSON_REQUIRED, &mode, &error) ||
		    !gb_json_get_bool(dev, "writeback", GB_JSON_REQUIRED, &writeback, &error) ||
		    !gb_json_get_bool(dev, "direct", GB_JSON_REQUIRED, &direct, &error) ||
		    !gb_json_get_bool(dev, "no_flush", GB_JSON_REQUIRED, &no_flush, &error)) {
			if (unsafe_rule)
				ctx_error(ctx, "host view block", error);
			continue;
		}
		/* the disk as the guest sees it (vda) when libvirt told, else QMP's name */
		subject = g_strdup_printf("host-block/%s", disk != NULL ? disk : name);
		if (unsafe_rule) {
			if (no_flush) {
				detail =
				    g_strdup_printf("%s: cache=unsafe ignores the guest's flushes: "
				                    "a host crash loses acknowledged writes",
				                    file);
				ctx_add(
				    ctx, "HOST-CACHE-UNSAFE", CLI_LEVEL_FAIL, subject, detail,
				    "use cache=none (or writeback) outside throw-away test guests");
			} else {
				detail =
				    g_strdup_printf("%s: cache=%s honours flushes", file, mode);
				ctx_add(ctx, "HOST-CACHE-UNSAFE", CLI_LEVEL_PASS, subject, detail,
				        NULL);
			}
			continue;
		}
		if (no_flush)
			continue; /* HOST-CACHE-UNSAFE says it louder */
		if (writeback && !direct) {
			detail = g_strdup_printf("%s: cache=writeback goes through the host page "
			                         "cache: double caching, and guest benchmarks "
			                         "measure host RAM",
			                         file);
			ctx_add(ctx, "HOST-CACHE-NOT-DIRECT", CLI_LEVEL_NOTE, subject, detail,
			        "cache=none (O_DIRECT) for production disks");
		} else {
			detail = g_strdup_printf("%s: cache=%s (%s)", file, mode,
			                         direct ? "O_DIRECT" : "write-through");
			ctx_add(ctx, "HOST-CACHE-NOT-DIRECT", CLI_LEVEL_PASS, subject, detail,
			        NULL);
		}
	}
}

static void rule_cache_unsafe(CliHostCtx *ctx)
{
	rule_cache(ctx, TRUE);
}

static void rule_cache_not_direct(CliHostCtx *ctx)
{
	rule_cache(ctx, FALSE);
}

static void rule_vcpu_unpinned(CliHostCtx *ctx)
{
	g_autoptr(GPtrArray) vcpus = ctx_get_objects(ctx, "vcpus");
	g_autoptr(GError) error = NULL;
	g_autofree char *detail = NULL;
	gint64 host_cpus = 0;
	guint n_known = 0, n_unpinned = 0;

	if (!gb_json_get_int(ctx->view, "host_cpus", GB_JSON_OPTIONAL, 0, G_MAXINT32, &host_cpus,
	                     &error)) {
		ctx_error(ctx, "host view", error);
		return;
	}
	for (guint i = 0; i < vcpus->len; i++) {
		g_autoptr(GArray) allowed = NULL;
		g_autoptr(GError) error_local = NULL;

		if (!gb_json_get_int_array(g_ptr_array_index(vcpus, i), "cpus_allowed",
		                           GB_JSON_OPTIONAL, 0, G_MAXINT32, &allowed,
		                           &error_local)) {
			ctx_error(ctx, "host view vcpus", error_local);
			continue;
		}
		if (allowed == NULL)
			continue;
		n_known++;
		if ((gint64)allowed->len >= host_cpus)
			n_unpinned++;
	}
	/* a single host CPU leaves nothing to pin to */
	if (n_known == 0 || host_cpus < 2)
		return;
	if (n_unpinned > 0) {
		detail = g_strdup_printf("%u of %u vCPU threads may run on any of the host's "
		                         "%" G_GINT64_FORMAT " CPUs",
		                         n_unpinned, n_known, host_cpus);
		ctx_add(ctx, "HOST-VCPU-UNPINNED", CLI_LEVEL_NOTE, "host-vcpus", detail,
		        "pin vCPUs to host CPUs of one NUMA node (libvirt <vcpupin>, taskset)");
		return;
	}
	detail = g_strdup_printf("all %u vCPU threads pinned to a subset of the %" G_GINT64_FORMAT
	                         " host CPUs",
	                         n_known, host_cpus);
	ctx_add(ctx, "HOST-VCPU-UNPINNED", CLI_LEVEL_PASS, "host-vcpus", detail, NULL);
}

static void rule_numa_split(CliHostCtx *ctx)
{
	g_autoptr(GPtrArray) host_nodes = ctx_get_objects(ctx, "host_nodes");
	g_autoptr(GPtrArray) vcpus = ctx_get_objects(ctx, "vcpus");
	g_autoptr(GPtrArray) mem_nodes = ctx_get_objects(ctx, "memory_nodes");
	g_autoptr(GHashTable) cpu_nodes = g_hash_table_new(g_direct_hash, g_direct_equal);
	g_autofree char *detail = NULL;
	g_autofree char *hint = NULL;
	gint64 cpu_node = -1, top_node = -1;
	gint64 total = 0, top = 0, local = 0;
	gboolean all_known = vcpus->len > 0;

	if (host_nodes->len < 2)
		return; /* one node: nothing can be split */
	for (guint i = 0; i < vcpus->len; i++) {
		g_autoptr(GArray) nodes = NULL;
		if (!gb_json_get_int_array(g_ptr_array_index(vcpus, i), "nodes", GB_JSON_REQUIRED,
		                           0, 1023, &nodes, NULL) ||
		    nodes->len == 0) {
			all_known = FALSE;
			continue;
		}
		for (guint n = 0; n < nodes->len; n++) {
			cpu_node = g_array_index(nodes, gint64, n);
			g_hash_table_add(cpu_nodes, GINT_TO_POINTER(cpu_node + 1));
		}
	}
	/* vCPUs free to roam over nodes: placement is the scheduler's, not a split */
	if (!all_known || g_hash_table_size(cpu_nodes) != 1)
		return;
	for (guint i = 0; i < mem_nodes->len; i++) {
		gint64 node = 0, bytes = 0;
		g_autoptr(GError) error = NULL;

		if (!gb_json_get_int(g_ptr_array_index(mem_nodes, i), "node", GB_JSON_REQUIRED, 0,
		                     1023, &node, &error) ||
		    !gb_json_get_int(g_ptr_array_index(mem_nodes, i), "bytes", GB_JSON_REQUIRED, 0,
		                     G_MAXINT64 / 1024, &bytes, &error)) {
			ctx_error(ctx, "host view memory_nodes", error);
			return;
		}
		total += bytes;
		if (bytes > top) {
			top = bytes;
			top_node = node;
		}
		if (node == cpu_node)
			local = bytes;
	}
	if (total == 0)
		return;
	if (local * 2 >= total) {
		detail = g_strdup_printf("vCPUs on node %" G_GINT64_FORMAT ", %.0f%% of QEMU's "
		                         "memory there too",
		                         cpu_node, 100.0 * local / total);
		ctx_add(ctx, "HOST-NUMA-SPLIT", CLI_LEVEL_PASS, "host-numa", detail, NULL);
		return;
	}
	detail = g_strdup_printf("vCPUs run on node %" G_GINT64_FORMAT " only, but %.0f%% of "
	                         "QEMU's memory (%.1f GiB) is on node %" G_GINT64_FORMAT
	                         ": every guest memory access crosses the interconnect",
	                         cpu_node, 100.0 * top / total, top / CLI_GIB, top_node);
	hint = g_strdup_printf("bind memory to node %" G_GINT64_FORMAT " (libvirt <numatune> "
	                       "mode='strict' nodeset='%" G_GINT64_FORMAT "', or -object "
	                       "memory-backend-*,host-nodes=%" G_GINT64_FORMAT ",policy=bind)",
	                       cpu_node, cpu_node, cpu_node);
	ctx_add(ctx, "HOST-NUMA-SPLIT", CLI_LEVEL_WARN, "host-numa", detail, hint);
}

static void rule_no_hugepages(CliHostCtx *ctx)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *detail = NULL;
	gint64 bytes = -1;
	gboolean huge = FALSE;

	if (!gb_json_get_int(ctx->view, "memory_bytes", GB_JSON_OPTIONAL, 0, G_MAXINT64, &bytes,
	                     &error) ||
	    !gb_json_get_bool(ctx->view, "hugepages", GB_JSON_OPTIONAL, &huge, &error)) {
		ctx_error(ctx, "host view", error);
		return;
	}
	/* QMP knows the configured size; the guest's MemTotal is a little less */
	if (bytes < 0 && cli_fact_ok(&ctx->facts->memory.total_bytes.fact) &&
	    ctx->facts->memory.total_bytes.value >= 0)
		bytes = ctx->facts->memory.total_bytes.value;
	if (bytes < 0)
		return;
	if (huge) {
		ctx_add(ctx, "HOST-NO-HUGEPAGES", CLI_LEVEL_PASS, "host-memory",
		        "guest memory is backed by huge pages", NULL);
		return;
	}
	detail = g_strdup_printf("%.1f GiB of guest memory on 4 KiB host pages", bytes / CLI_GIB);
	if (bytes >= CLI_HOST_HUGEPAGES_MIN_BYTES) {
		ctx_add(ctx, "HOST-NO-HUGEPAGES", CLI_LEVEL_NOTE, "host-memory", detail,
		        "back guest RAM with hugepages (libvirt <memoryBacking><hugepages/>, or "
		        "memory-backend-file,mem-path=/dev/hugepages)");
		return;
	}
	ctx_add(ctx, "HOST-NO-HUGEPAGES", CLI_LEVEL_PASS, "host-memory", detail, NULL);
}

static gboolean ctx_view_has_flag(CliHostCtx *ctx, const char *member, const char *flag)
{
	g_auto(GStrv) flags = NULL;
	g_autoptr(GError) error = NULL;

	if (!gb_json_get_strv(ctx->view, member, GB_JSON_OPTIONAL, &flags, &error)) {
		ctx_error(ctx, "host view", error);
		return FALSE;
	}
	return flags != NULL && g_strv_contains((const char *const *)flags, flag);
}

static void rule_cpu_no_aesni(CliHostCtx *ctx)
{
	char *const *guest = ctx_guest_flags(ctx);

	if (guest == NULL || g_strv_contains((const char *const *)guest, "aes"))
		return;
	if (!ctx_view_has_flag(ctx, "host_cpu_flags", "aes"))
		return;
	ctx_add(ctx, "CPU-NO-AESNI", CLI_LEVEL_FAIL, "cpu",
	        "no aes in the guest's CPU flags, though the host CPU has it: AES-GCM runs at "
	        "about half speed",
	        "the host has aes: switch to host-passthrough/host-model (-cpu host), or add "
	        "+aes,+pclmulqdq to the named model");
}

const char *const cli_host_spec_ctrl_flags[] = {
	"md_clear",  "spec_ctrl", "ssbd",  "virt_ssbd", "arch_capabilities",
	"flush_l1d", "ibpb",      "stibp", NULL,
};

static void rule_cpu_hidden(CliHostCtx *ctx)
{
	char *const *guest = ctx_guest_flags(ctx);
	g_autoptr(GString) hidden = g_string_new(NULL);
	g_autoptr(GString) spec_plus = g_string_new(NULL);
	g_autoptr(GString) spec_xml = g_string_new(NULL);
	g_autofree char *hint = NULL;
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) offer = NULL;
	g_autofree char *detail = NULL;
	JsonObject *cpu_offer = NULL;
	const char *model = NULL;

	if (guest == NULL)
		return;
	if (!gb_json_get_object(ctx->view, "cpu_offer", GB_JSON_OPTIONAL, &cpu_offer, &error) ||
	    (cpu_offer != NULL &&
	     (!gb_json_get_string(cpu_offer, "model", GB_JSON_REQUIRED, &model, &error) ||
	      !gb_json_get_strv(cpu_offer, "flags", GB_JSON_REQUIRED, &offer, &error)))) {
		ctx_error(ctx, "host view cpu_offer", error);
		return;
	}
	if (cpu_offer == NULL)
		return;
	for (guint i = 0; offer[i] != NULL; i++) {
		if (g_strv_contains((const char *const *)guest, offer[i]))
			continue;
		g_string_append_printf(hidden, "%s%s", hidden->len > 0 ? ", " : "", offer[i]);
		if (g_strv_contains(cli_host_spec_ctrl_flags, offer[i])) {
			g_autofree char *prop = g_strdelimit(g_strdup(offer[i]), "_", '-');
			g_string_append_printf(spec_plus, ",+%s", prop);
			if (spec_xml->len == 0)
				g_string_append_printf(
				    spec_xml, "<feature policy='require' name='%s'/>", prop);
		}
	}
	if (hidden->len == 0) {
		detail = g_strdup_printf("the guest sees every flag that matters of QEMU's '%s' "
		                         "model",
		                         model);
		ctx_add(ctx, "HOST-CPU-HIDDEN", CLI_LEVEL_PASS, "cpu", detail, NULL);
		return;
	}
	detail = g_strdup_printf("QEMU's '%s' model could give %s, the guest does not get it",
	                         model, hidden->str);
	if (spec_plus->len == 0) {
		ctx_add(ctx, "HOST-CPU-HIDDEN", CLI_LEVEL_NOTE, "cpu", detail,
		        "host-passthrough/host-model (-cpu host) passes them through");
		return;
	}
	/* mitigation bits: the guest kernel cannot use the host's mitigations without them */
	hint =
	    g_strdup_printf("host-passthrough/host-model (-cpu host) passes them through; to keep "
	                    "a named model, add the mitigation bits: -cpu MODEL%s (libvirt %s "
	                    "for each)",
	                    spec_plus->str, spec_xml->str);
	ctx_add(ctx, "HOST-CPU-HIDDEN", CLI_LEVEL_NOTE, "cpu", detail, hint);
}

static void rule_view_remote(CliHostCtx *ctx)
{
	g_autoptr(GError) error = NULL;
	const char *note = NULL;

	if (!gb_json_get_string(ctx->view, "local_only", GB_JSON_OPTIONAL, &note, &error)) {
		ctx_error(ctx, "host view", error);
		return;
	}
	if (note != NULL)
		ctx_add(ctx, "HOST-VIEW-REMOTE", CLI_LEVEL_NOTE, "host", note,
		        "for NUMA placement of memory and huge page use, run the audit on the "
		        "hypervisor itself (--hosts)");
}

static void rule_view_errors_report(CliHostCtx *ctx)
{
	g_autofree char *detail = NULL;
	g_autoptr(GString) joined = g_string_new(NULL);

	if (ctx->errors->len == 0)
		return;
	for (guint i = 0; i < ctx->errors->len; i++)
		g_string_append_printf(joined, "%s%s", i > 0 ? "; " : "",
		                       (const char *)g_ptr_array_index(ctx->errors, i));
	detail = g_strdup_printf("part of the host view is missing: %s", joined->str);
	ctx_add(ctx, "HOST-VIEW-ERRORS", CLI_LEVEL_NOTE, "host", detail,
	        "run as root on the host where QEMU runs (it reads /proc/PID of QEMU)");
}

typedef struct {
	CliAuditRuleInfo info;
	void (*func)(CliHostCtx *ctx);
} CliHostRule;

static const CliHostRule cli_host_rule_table[] = {
	{ { "HOST-CACHE-UNSAFE", CLI_LEVEL_FAIL, "a disk with cache=unsafe (flushes ignored)" },
	  rule_cache_unsafe },
	{ { "HOST-CACHE-NOT-DIRECT", CLI_LEVEL_NOTE,
	    "a disk with cache=writeback (through the host page cache)" },
	  rule_cache_not_direct },
	{ { "HOST-VCPU-UNPINNED", CLI_LEVEL_NOTE, "vCPU threads may run on any host CPU" },
	  rule_vcpu_unpinned },
	{ { "HOST-NUMA-SPLIT", CLI_LEVEL_WARN,
	    "vCPUs on one host NUMA node, most guest memory on another" },
	  rule_numa_split },
	{ { "HOST-NO-HUGEPAGES", CLI_LEVEL_NOTE, "a guest of 8 GiB or more without hugepages" },
	  rule_no_hugepages },
	{ { "CPU-NO-AESNI", CLI_LEVEL_FAIL, "the guest lacks aes that the host CPU has" },
	  rule_cpu_no_aesni },
	{ { "HOST-CPU-HIDDEN", CLI_LEVEL_NOTE,
	    "CPU flags QEMU could give (host or max model) that the guest does not see" },
	  rule_cpu_hidden },
	{ { "HOST-VIEW-REMOTE", CLI_LEVEL_NOTE,
	    "the domain runs on a remote hypervisor: its local-only extras are not read" },
	  rule_view_remote },
	{ { "HOST-VIEW-ERRORS", CLI_LEVEL_NOTE, "parts of the host view could not be read" },
	  rule_view_errors_report },
};

const CliAuditRuleInfo *cli_host_rules(guint *n_rules)
{
	static CliAuditRuleInfo infos[G_N_ELEMENTS(cli_host_rule_table)];

	for (guint i = 0; i < G_N_ELEMENTS(cli_host_rule_table); i++)
		infos[i] = cli_host_rule_table[i].info;
	*n_rules = G_N_ELEMENTS(cli_host_rule_table);
	return infos;
}

GPtrArray *cli_host_rules_run(JsonObject *guest_facts, JsonObject *host_view)
{
	g_autoptr(CliFacts) facts = cli_facts_new(guest_facts);
	return cli_host_rules_run_facts(facts, host_view);
}

GPtrArray *cli_host_rules_run_facts(const CliFacts *guest_facts, JsonObject *host_view)
{
	g_autoptr(GPtrArray) errors = g_ptr_array_new_with_free_func(g_free);
	CliHostCtx ctx = {
		.facts = guest_facts,
		.view = host_view,
		.findings = g_ptr_array_new_with_free_func((GDestroyNotify)cli_finding_free),
		.errors = errors,
	};

	if (host_view == NULL) {
		ctx_add(&ctx, "HOST-VIEW-ERRORS", CLI_LEVEL_NOTE, "host", "no host view", NULL);
		return ctx.findings;
	}
	rule_view_errors(&ctx);
	for (guint i = 0; i < G_N_ELEMENTS(cli_host_rule_table); i++)
		cli_host_rule_table[i].func(&ctx);
	return ctx.findings;
}

void cli_host_rules_merge(GPtrArray *findings, GPtrArray *host_findings)
{
	while (host_findings->len > 0) {
		CliFinding *host = g_ptr_array_steal_index(host_findings, 0);
		gboolean replaced = FALSE;

		for (guint i = 0; i < findings->len && !replaced; i++) {
			CliFinding *old = g_ptr_array_index(findings, i);
			if (g_strcmp0(old->rule, host->rule) == 0 &&
			    g_strcmp0(old->subject, host->subject) == 0) {
				cli_finding_free(old);
				findings->pdata[i] = host;
				replaced = TRUE;
			}
		}
		if (!replaced)
			g_ptr_array_add(findings, host);
	}
}
