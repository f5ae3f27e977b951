/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "guestbench-protocol.h"

#include "analysis/rules-pve.h"

typedef struct {
	const CliFacts *facts;
	JsonObject *pve;
	JsonObject *view;
	GPtrArray *findings;
	gint64 vmid;
	gint64 vcpus;
} CliPveCtx;

static const CliAuditRuleInfo cli_pve_rule_infos[] = {
	{ "PVE-CPU-AES-NO-PCLMUL", CLI_LEVEL_FAIL,
	  "the PVE CPU type gives aes without pclmulqdq (x86-64-v2-AES): GHASH in software" },
	{ "PVE-DISK-IOTHREAD", CLI_LEVEL_NOTE, "a PVE disk without its own I/O thread" },
	{ "PVE-NUMA", CLI_LEVEL_NOTE, "a multi-vCPU VM on a NUMA host without numa: 1" },
	{ "PVE-CPU-TYPE", CLI_LEVEL_NOTE, "the PVE CPU type (kvm64 when the config has none)" },
};

const CliAuditRuleInfo *cli_pve_rules(guint *n_rules)
{
	*n_rules = G_N_ELEMENTS(cli_pve_rule_infos);
	return cli_pve_rule_infos;
}

static const char *pve_string(JsonObject *obj, const char *member)
{
	const char *value = NULL;

	if (obj == NULL || !gb_json_get_string(obj, member, GB_JSON_OPTIONAL, &value, NULL))
		return NULL;
	return value;
}

static gboolean pve_bool(JsonObject *obj, const char *member)
{
	gboolean value = FALSE;

	if (obj == NULL || !gb_json_get_bool(obj, member, GB_JSON_OPTIONAL, &value, NULL))
		return FALSE;
	return value;
}

static GPtrArray *pve_objects(JsonObject *obj, const char *member)
{
	GPtrArray *out = g_ptr_array_new();
	JsonArray *array = NULL;

	if (!gb_json_get_array(obj, member, GB_JSON_OPTIONAL, &array, NULL) || array == NULL)
		return out;
	for (guint i = 0; i < json_array_get_length(array); i++) {
		JsonObject *item = NULL;
		if (gb_json_node_get_object(json_array_get_element(array, i), member, &item, NULL))
			g_ptr_array_add(out, item);
	}
	return out;
}

/* value with key=v set (replaced or appended); a NULL v removes key. */
static char *pve_set_prop(const char *value, const char *key, const char *v)
{
	g_auto(GStrv) items = g_strsplit(value != NULL ? value : "", ",", -1);
	GString *out = g_string_new(NULL);
	gsize n = strlen(key);
	gboolean done = FALSE;

	for (guint i = 0; items[i] != NULL; i++) {
		const char *item = items[i];
		if (item[0] == '\0')
			continue;
		if (strncmp(item, key, n) == 0 && item[n] == '=') {
			if (v == NULL || done)
				continue;
			g_string_append_printf(out, "%s%s=%s", out->len > 0 ? "," : "", key, v);
			done = TRUE;
			continue;
		}
		g_string_append_printf(out, "%s%s", out->len > 0 ? "," : "", item);
	}
	if (!done && v != NULL)
		g_string_append_printf(out, "%s%s=%s", out->len > 0 ? "," : "", key, v);
	return g_string_free(out, FALSE);
}

static void pve_set_hint(CliFinding *finding, char *hint_owned)
{
	g_free(finding->hint);
	finding->hint = hint_owned;
}

static gboolean pve_guest_flag(CliPveCtx *ctx, const char *flag)
{
	const CliFactStrv *flags = &ctx->facts->cpu.flags;

	return cli_fact_ok(&flags->fact) && flags->value != NULL &&
	       g_strv_contains((const char *const *)flags->value, flag);
}

static gboolean pve_guest_flags_known(CliPveCtx *ctx)
{
	return cli_fact_ok(&ctx->facts->cpu.flags.fact) && ctx->facts->cpu.flags.value != NULL;
}

/* The cpu-models.conf entry that adds pclmulqdq (and aes) to what the VM's type gives. */
static char *pve_clmul_model_hint(CliPveCtx *ctx)
{
	const char *type = pve_string(ctx->pve, "cpu_type");
	const char *flags = pve_string(ctx->pve, "cpu_model_flags");
	const char *base = pve_string(ctx->pve, "cpu_base");
	g_autofree char *with_aes = NULL;
	g_autofree char *name = NULL;
	g_autofree char *all = NULL;

	if (type == NULL || g_str_has_prefix(type, "custom-"))
		type = "x86-64-v2-AES";
	if (flags == NULL || g_strcmp0(pve_string(ctx->pve, "cpu_type"), "kvm64") == 0 ||
	    g_strcmp0(pve_string(ctx->pve, "cpu_type"), "qemu64") == 0) {
		flags = "+aes;+popcnt;+pni;+sse4.1;+sse4.2;+ssse3";
		type = "x86-64-v2-AES";
	}
	if (base == NULL || strchr(base, '-') != NULL || g_str_has_prefix(base, "custom") ||
	    g_strcmp0(base, "kvm64") == 0)
		base = "qemu64";
	with_aes =
	    strstr(flags, "+aes") != NULL ? g_strdup(flags) : g_strdup_printf("+aes;%s", flags);
	all = strstr(with_aes, "+pclmulqdq") != NULL ? g_strdup(with_aes)
	                                             : g_strdup_printf("%s;+pclmulqdq", with_aes);
	name = g_strdup_printf("%s-clmul", type);
	return g_strdup_printf(
	    "per-VM flags= cannot add pclmulqdq (PVE allows only a short list there), and PVE's "
	    "x86-64-v2-AES, -v3 and -v4 all lack it: define a custom model (cluster-wide) with "
	    "printf 'cpu-model: %s\\n    flags %s\\n    reported-model %s\\n\\n' >> "
	    "/etc/pve/virtual-guest/cpu-models.conf, then qm set %" G_GINT64_FORMAT
	    " --cpu custom-%s and a cold restart (qm shutdown %" G_GINT64_FORMAT
	    " && qm start %" G_GINT64_FORMAT
	    "); every node must have pclmulqdq (guestbench census --connect pve:///cluster). On "
	    "a single node, --cpu host gives everything",
	    name, all, base, ctx->vmid, name, ctx->vmid, ctx->vmid);
}

static void pve_cpu(CliPveCtx *ctx)
{
	const char *type = pve_string(ctx->pve, "cpu_type");
	const char *line = pve_string(ctx->pve, "cpu");
	g_autofree char *detail = NULL;

	if (type == NULL)
		return;
	detail = g_strdup_printf(
	    "PVE CPU type %s%s%s%s", type,
	    line == NULL ? " (PVE's default: the config has no cpu: line)" : "",
	    pve_string(ctx->pve, "cpu_problem") != NULL ? ": " : "",
	    pve_string(ctx->pve, "cpu_problem") != NULL ? pve_string(ctx->pve, "cpu_problem") : "");
	if (g_strcmp0(type, "kvm64") == 0 || g_strcmp0(type, "qemu64") == 0) {
		g_autofree char *hint =
		    g_strdup_printf("kvm64 is x86-64-v1 without aes: qm set %" G_GINT64_FORMAT
		                    " --cpu x86-64-v2-AES (PVE 8's default for new VMs), x86-64-v3 "
		                    "where every node "
		                    "has AVX2, then a cold restart",
		                    ctx->vmid);
		g_ptr_array_add(ctx->findings, cli_finding_new("PVE-CPU-TYPE", CLI_LEVEL_NOTE,
		                                               "pve-cpu", detail, hint));
		return;
	}
	g_ptr_array_add(ctx->findings, cli_finding_new("PVE-CPU-TYPE",
	                                               pve_string(ctx->pve, "cpu_problem") != NULL
	                                                   ? CLI_LEVEL_WARN
	                                                   : CLI_LEVEL_PASS,
	                                               "pve-cpu", detail, NULL));
}

/* aes without pclmulqdq: replaces the guest rule's CPU-NO-AESNI with what PVE did. */
static void pve_aes_no_pclmul(CliPveCtx *ctx)
{
	const char *type = pve_string(ctx->pve, "cpu_type");
	g_autofree char *detail = NULL;
	g_autofree char *hint = NULL;

	if (!pve_guest_flags_known(ctx) || !pve_guest_flag(ctx, "aes") ||
	    pve_guest_flag(ctx, "pclmulqdq"))
		return;
	for (guint i = 0; i < ctx->findings->len; i++) {
		CliFinding *f = g_ptr_array_index(ctx->findings, i);
		if (g_strcmp0(f->rule, "CPU-NO-AESNI") == 0)
			g_ptr_array_remove_index(ctx->findings, i--);
	}
	detail = g_strdup_printf("PVE CPU type %s gives the guest aes but not pclmulqdq: "
	                         "AES-GCM's GHASH runs in software, at a fraction of the host's "
	                         "AES-GCM speed",
	                         type != NULL ? type : "?");
	hint = pve_clmul_model_hint(ctx);
	g_ptr_array_add(ctx->findings, cli_finding_new("PVE-CPU-AES-NO-PCLMUL", CLI_LEVEL_FAIL,
	                                               "cpu", detail, hint));
}

static JsonObject *pve_find(GPtrArray *items, const char *key)
{
	for (guint i = 0; i < items->len; i++) {
		if (g_strcmp0(pve_string(g_ptr_array_index(items, i), "key"), key) == 0)
			return g_ptr_array_index(items, i);
	}
	return NULL;
}

static void pve_disks(CliPveCtx *ctx)
{
	g_autoptr(GPtrArray) disks = pve_objects(ctx->pve, "disks");
	const char *scsihw = pve_string(ctx->pve, "scsihw");

	for (guint i = 0; i < disks->len; i++) {
		JsonObject *d = g_ptr_array_index(disks, i);
		const char *bus = pve_string(d, "bus");
		const char *key = pve_string(d, "key");
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;
		g_autofree char *value = NULL;
		g_autofree char *hint = NULL;
		gboolean single = g_strcmp0(scsihw, "virtio-scsi-single") == 0;

		if (key == NULL || pve_bool(d, "cdrom") ||
		    g_strcmp0(pve_string(d, "volume"), "none") == 0)
			continue;
		subject = g_strdup_printf("pve-disk/%s", key);
		if (g_strcmp0(bus, "virtio") == 0 || g_strcmp0(bus, "scsi") == 0) {
			if (pve_bool(d, "iothread") && (g_strcmp0(bus, "virtio") == 0 || single)) {
				detail = g_strdup_printf("%s has its own I/O thread (iothread=1%s)",
				                         key, single ? ", virtio-scsi-single" : "");
				g_ptr_array_add(ctx->findings,
				                cli_finding_new("PVE-DISK-IOTHREAD", CLI_LEVEL_PASS,
				                                subject, detail, NULL));
				continue;
			}
			value = pve_set_prop(pve_string(d, "value"), "iothread", "1");
			if (g_strcmp0(bus, "scsi") == 0 && !single) {
				detail = g_strdup_printf(
				    "%s is on scsihw %s: one controller, one I/O thread for all "
				    "SCSI "
				    "disks (iothread=1 needs virtio-scsi-single)",
				    key, scsihw != NULL ? scsihw : "lsi (PVE's default)");
				hint =
				    g_strdup_printf("qm set %" G_GINT64_FORMAT
				                    " --scsihw virtio-scsi-single --%s %s, then a "
				                    "cold restart",
				                    ctx->vmid, key, value);
			} else {
				detail = g_strdup_printf("%s has no I/O thread of its own: its I/O "
				                         "runs in QEMU's main loop",
				                         key);
				hint = g_strdup_printf("qm set %" G_GINT64_FORMAT
				                       " --%s %s, then a cold restart",
				                       ctx->vmid, key, value);
			}
			g_ptr_array_add(ctx->findings,
			                cli_finding_new("PVE-DISK-IOTHREAD", CLI_LEVEL_NOTE,
			                                subject, detail, hint));
		}
	}
}

static void pve_numa(CliPveCtx *ctx)
{
	JsonArray *nodes = NULL;
	g_autofree char *detail = NULL;
	g_autofree char *hint = NULL;

	if (!gb_json_get_array(ctx->view, "host_nodes", GB_JSON_OPTIONAL, &nodes, NULL) ||
	    nodes == NULL || json_array_get_length(nodes) < 2 || ctx->vcpus < 2)
		return;
	if (pve_bool(ctx->pve, "numa")) {
		g_ptr_array_add(ctx->findings,
		                cli_finding_new("PVE-NUMA", CLI_LEVEL_PASS, "pve-numa",
		                                "numa: 1: the guest knows the host's NUMA layout",
		                                NULL));
		return;
	}
	detail = g_strdup_printf("%" G_GINT64_FORMAT " vCPUs on a host of %u NUMA nodes, "
	                         "numa: 0: the guest cannot place memory near its vCPUs",
	                         ctx->vcpus, json_array_get_length(nodes));
	hint =
	    g_strdup_printf("qm set %" G_GINT64_FORMAT " --numa 1, then a cold restart", ctx->vmid);
	g_ptr_array_add(ctx->findings,
	                cli_finding_new("PVE-NUMA", CLI_LEVEL_NOTE, "pve-numa", detail, hint));
}

/* The n-th guest item of list whose bus or driver makes it match, in the guest's order. */
static guint pve_guest_index(const CliFactsList *list, const char *subject_name, gboolean is_nic)
{
	guint n = 0;

	if (!cli_fact_ok(&list->fact))
		return G_MAXUINT;
	for (guint i = 0; i < list->items->len; i++) {
		const char *name =
		    is_nic ? ((const CliFactsNic *)g_ptr_array_index(list->items, i))->name.value
		           : ((const CliFactsDisk *)g_ptr_array_index(list->items, i))->name.value;
		if (g_strcmp0(name, subject_name) == 0)
			return n;
		n++;
	}
	return G_MAXUINT;
}

static void pve_rewrite(CliPveCtx *ctx)
{
	g_autoptr(GPtrArray) disks = pve_objects(ctx->pve, "disks");
	g_autoptr(GPtrArray) nics = pve_objects(ctx->pve, "nics");
	const char *type_or_default =
	    pve_string(ctx->pve, "cpu_type") != NULL ? pve_string(ctx->pve, "cpu_type") : "kvm64";

	for (guint i = 0; i < ctx->findings->len; i++) {
		CliFinding *f = g_ptr_array_index(ctx->findings, i);

		if (f->level == CLI_LEVEL_PASS)
			continue;
		if (g_strcmp0(f->rule, "CPU-NO-AESNI") == 0) {
			pve_set_hint(f, pve_clmul_model_hint(ctx));
		} else if (g_strcmp0(f->rule, "CPU-LEGACY-MODEL") == 0 ||
		           g_strcmp0(f->rule, "CPU-ISA-LEVEL") == 0 ||
		           g_strcmp0(f->rule, "CPU-MISSING-SIMD") == 0 ||
		           g_strcmp0(f->rule, "HOST-CPU-HIDDEN") == 0) {
			pve_set_hint(
			    f, g_strdup_printf(
			           "qm set %" G_GINT64_FORMAT
			           " --cpu x86-64-v3 where every node of the cluster has AVX2 "
			           "(else x86-64-v2-AES; guestbench census --connect "
			           "pve:///cluster names the highest), or --cpu host when the "
			           "VM never migrates; then a cold restart",
			           ctx->vmid));
		} else if (g_str_has_prefix(f->rule, "HOST-CACHE-") &&
		           g_str_has_prefix(f->subject, "host-block/")) {
			/* PVE 8 names the drive drive-KEY; with -blockdev the device is KEY */
			const char *key = f->subject + strlen("host-block/");
			JsonObject *d;
			g_autofree char *value = NULL;

			if (g_str_has_prefix(key, "drive-"))
				key += strlen("drive-");
			d = pve_find(disks, key);
			if (d == NULL)
				continue;
			value = pve_set_prop(pve_string(d, "value"), "cache", NULL);
			pve_set_hint(f, g_strdup_printf("qm set %" G_GINT64_FORMAT
			                                " --%s %s (no cache= is PVE's default, "
			                                "cache=none), then a cold restart",
			                                ctx->vmid, key, value));
		} else if ((g_strcmp0(f->rule, "NIC-SINGLE-QUEUE") == 0 ||
		            g_strcmp0(f->rule, "NIC-EMULATED") == 0) &&
		           g_str_has_prefix(f->subject, "net/")) {
			const char *eth = f->subject + strlen("net/");
			guint n = pve_guest_index(&ctx->facts->net, eth, TRUE);
			JsonObject *nic = n < nics->len ? g_ptr_array_index(nics, n) : NULL;
			g_autofree char *value = NULL;
			g_autofree char *queues = NULL;
			const char *key = nic != NULL ? pve_string(nic, "key") : NULL;
			const char *model = nic != NULL ? pve_string(nic, "model") : NULL;

			if (key == NULL)
				continue;
			value = g_strdup(pve_string(nic, "value"));
			if (model != NULL && g_strcmp0(model, "virtio") != 0 &&
			    g_str_has_prefix(value, model) && value[strlen(model)] == '=') {
				g_autofree char *rest = g_strdup(value + strlen(model));
				g_free(value);
				value = g_strdup_printf("virtio%s", rest);
			}
			queues = g_strdup_printf("%" G_GINT64_FORMAT, MAX(ctx->vcpus, 2));
			if (g_strcmp0(f->rule, "NIC-SINGLE-QUEUE") == 0) {
				g_autofree char *with = pve_set_prop(value, "queues", queues);
				pve_set_hint(f, g_strdup_printf("qm set %" G_GINT64_FORMAT
				                                " --%s %s, then in the "
				                                "guest ethtool -L %s combined %s",
				                                ctx->vmid, key, with, eth, queues));
			} else {
				pve_set_hint(f,
				             g_strdup_printf("qm set %" G_GINT64_FORMAT
				                             " --%s %s (virtio-net), then a cold "
				                             "restart",
				                             ctx->vmid, key, value));
			}
		} else if (g_strcmp0(f->rule, "DISK-EMULATED") == 0) {
			JsonObject *emulated = NULL;
			g_autofree char *value = NULL;
			guint free_scsi = 0;
			for (guint j = 0; j < disks->len && emulated == NULL; j++) {
				JsonObject *d = g_ptr_array_index(disks, j);
				const char *bus = pve_string(d, "bus");
				if ((g_strcmp0(bus, "sata") == 0 || g_strcmp0(bus, "ide") == 0) &&
				    !pve_bool(d, "cdrom"))
					emulated = d;
			}
			if (emulated == NULL)
				continue;
			value = pve_set_prop(pve_string(emulated, "value"), "iothread", "1");
			while (free_scsi < 31) {
				g_autofree char *k = g_strdup_printf("scsi%u", free_scsi);
				if (pve_find(disks, k) == NULL)
					break;
				free_scsi++;
			}
			pve_set_hint(
			    f, g_strdup_printf("qm set %" G_GINT64_FORMAT
			                       " --delete %s (the disk stays, "
			                       "as unused), then qm set %" G_GINT64_FORMAT
			                       " --scsihw virtio-scsi-single --scsi%u %s --boot "
			                       "order=scsi%u, and a cold restart",
			                       ctx->vmid, pve_string(emulated, "key"), ctx->vmid,
			                       free_scsi, value, free_scsi));
		} else if (g_strcmp0(f->rule, "CPU-VULNERABLE") == 0 &&
		           (g_strcmp0(f->subject, "cpu/mds") == 0 ||
		            g_strcmp0(f->subject, "cpu/spec_store_bypass") == 0)) {
			/* PVE's per-VM flags= takes exactly these mitigation bits */
			gboolean mds = g_strcmp0(f->subject, "cpu/mds") == 0;
			pve_set_hint(f, g_strdup_printf("qm set %" G_GINT64_FORMAT
			                                " --cpu %s,flags=%s%s, then a "
			                                "cold restart (keep the VM's other flags=)",
			                                ctx->vmid, type_or_default,
			                                mds ? "+md-clear" : "+ssbd",
			                                mds ? "" : " (AMD: +virt-ssbd;+amd-ssbd)"));
		} else if (g_strcmp0(f->rule, "CPU-NESTED-EXPOSED") == 0) {
			pve_set_hint(
			    f, g_strdup_printf("if the guest does not need nested VMs: qm set "
			                       "%" G_GINT64_FORMAT
			                       " --cpu %s,flags=-nested-virt, then a cold "
			                       "restart",
			                       ctx->vmid, type_or_default));
		} else if (g_strcmp0(f->rule, "HOST-NO-HUGEPAGES") == 0) {
			pve_set_hint(
			    f, g_strdup_printf(
			           "qm set %" G_GINT64_FORMAT
			           " --numa 1 --hugepages 1024 (PVE needs numa: 1 for it; "
			           "reserve 1 GiB pages on the host: hugepagesz=1G "
			           "hugepages=N on its kernel command line), then a cold restart",
			           ctx->vmid));
		} else if (g_strcmp0(f->rule, "HOST-NUMA-SPLIT") == 0) {
			pve_set_hint(f,
			             g_strdup_printf(
			                 "qm set %" G_GINT64_FORMAT
			                 " --numa 1 --numa0 cpus=0-%" G_GINT64_FORMAT
			                 ",hostnodes=N,memory=MiB,policy=bind (N: the node of the "
			                 "vCPUs), then a cold restart",
			                 ctx->vmid, MAX(ctx->vcpus, 1) - 1));
		} else if (g_strcmp0(f->rule, "HOST-VCPU-UNPINNED") == 0) {
			pve_set_hint(f, g_strdup_printf("qm set %" G_GINT64_FORMAT
			                                " --affinity CPUS (host CPUs of one NUMA "
			                                "node, at least one per vCPU)",
			                                ctx->vmid));
		} else if (g_strcmp0(f->rule, "CPU-HYPERVISOR") == 0) {
			pve_set_hint(f, g_strdup_printf("qm set %" G_GINT64_FORMAT
			                                " --kvm 1 on a node with /dev/kvm (kvm: 0 "
			                                "emulates the CPU), then a cold restart",
			                                ctx->vmid));
		}
	}
}

void cli_pve_rules_apply(GPtrArray *findings, const CliFacts *facts, JsonObject *view)
{
	CliPveCtx ctx = { facts, NULL, view, findings, 0, 1 };

	if (view == NULL || !gb_json_get_object(view, "pve", GB_JSON_OPTIONAL, &ctx.pve, NULL) ||
	    ctx.pve == NULL ||
	    !gb_json_get_int(ctx.pve, "vmid", GB_JSON_REQUIRED, 1, G_MAXUINT32, &ctx.vmid, NULL))
		return;
	gb_json_get_int(ctx.pve, "vcpus", GB_JSON_OPTIONAL, 1, 1 << 20, &ctx.vcpus, NULL);
	pve_rewrite(&ctx);
	pve_cpu(&ctx);
	pve_aes_no_pclmul(&ctx);
	pve_disks(&ctx);
	pve_numa(&ctx);
}
