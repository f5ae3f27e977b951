/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "analysis/facts.h"
#include "gb-error.h"
#include "gb-json.h"

/*
 * One pass over the document with the typed gb_json_* accessors. Nothing
 * here judges a value: it records what was there, of which type, and where,
 * so that every reader sees the same document the same way.
 */

static char *path_join(const char *prefix, const char *member)
{
	if (prefix == NULL || prefix[0] == '\0')
		return g_strdup(member);
	return g_strdup_printf("%s.%s", prefix, member);
}

char *cli_fact_path(const CliFact *fact)
{
	/* objects and array elements carry their own path */
	if (fact->member == NULL || fact->parent == NULL)
		return g_strdup(((const CliFactsNode *)fact)->path);
	return path_join(fact->parent->path, fact->member);
}

const char *cli_fact_string_or(const CliFactString *str, const char *fallback)
{
	return cli_fact_ok(&str->fact) ? str->value : fallback;
}

/* The order of agent/facts/facts.c's table, which is the reply order (PROTOCOL.md). */
const char *const cli_facts_section_names[] = {
	"cpu", "memory", "clocksource", "steal", "block", "net", "os", NULL,
};

gboolean cli_facts_sections_parse(const char *list, CliFactsSections *sections, GError **error)
{
	g_auto(GStrv) names = NULL;
	CliFactsSections mask = 0;

	if (list == NULL) {
		*sections = CLI_FACTS_SECTION_ALL;
		return TRUE;
	}
	names = g_strsplit(list, ",", -1);
	for (guint i = 0; names[i] != NULL; i++) {
		const char *name = g_strstrip(names[i]);
		guint k = 0;

		if (*name == '\0') {
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "empty section name in '%s'", list);
			return FALSE;
		}
		while (cli_facts_section_names[k] != NULL &&
		       strcmp(cli_facts_section_names[k], name) != 0)
			k++;
		if (cli_facts_section_names[k] == NULL) {
			g_autofree char *known = g_strjoinv(", ", (char **)cli_facts_section_names);
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "unknown section '%s' (known: %s)", name, known);
			return FALSE;
		}
		mask |= 1u << k;
	}
	*sections = mask;
	return TRUE;
}

static void facts_problem(CliFacts *facts, const CliFact *fact, char *why)
{
	CliFactsProblem *problem = g_new0(CliFactsProblem, 1);
	problem->path = cli_fact_path(fact);
	problem->why = why;
	g_ptr_array_add(facts->problems, problem);
}

static void facts_problem_free(gpointer data)
{
	CliFactsProblem *problem = data;
	g_free(problem->path);
	g_free(problem->why);
	g_free(problem);
}

static void facts_wrong_type(CliFacts *facts, CliFact *fact, const char *expected)
{
	fact->state = CLI_FACT_WRONG_TYPE;
	facts_problem(facts, fact, g_strdup_printf("wrong type (expected %s)", expected));
}

/*
 * Places the member and tells whether it holds a value to read. obj is the
 * parent's object, NULL when the parent could not be read.
 */
static gboolean facts_place(CliFacts *facts, CliFact *fact, const CliFactsNode *parent,
                            JsonObject *obj, const char *member)
{
	fact->member = member;
	fact->parent = parent;
	if (obj == NULL) {
		fact->state = CLI_FACT_NO_PARENT;
		return FALSE;
	}
	if (gb_json_has(obj, member)) {
		fact->state = CLI_FACT_OK;
		return TRUE;
	}
	/* gb_json_has() is FALSE for both; only the membership test tells them apart */
	fact->state = json_object_has_member(obj, member) ? CLI_FACT_NULL : CLI_FACT_ABSENT;
	facts_problem(facts, fact, g_strdup(fact->state == CLI_FACT_NULL ? "null" : "missing"));
	return FALSE;
}

static void facts_read_string(CliFacts *facts, CliFactString *out, const CliFactsNode *parent,
                              JsonObject *obj, const char *member)
{
	const char *value = NULL;

	if (!facts_place(facts, &out->fact, parent, obj, member))
		return;
	if (!gb_json_get_string(obj, member, GB_JSON_REQUIRED, &value, NULL)) {
		facts_wrong_type(facts, &out->fact, "string");
		return;
	}
	out->value = g_strdup(value);
}

static void facts_read_int(CliFacts *facts, CliFactInt *out, const CliFactsNode *parent,
                           JsonObject *obj, const char *member)
{
	if (!facts_place(facts, &out->fact, parent, obj, member))
		return;
	if (!gb_json_get_int(obj, member, GB_JSON_REQUIRED, G_MININT64, G_MAXINT64, &out->value,
	                     NULL))
		facts_wrong_type(facts, &out->fact, "integer");
}

static void facts_read_double(CliFacts *facts, CliFactDouble *out, const CliFactsNode *parent,
                              JsonObject *obj, const char *member)
{
	if (!facts_place(facts, &out->fact, parent, obj, member))
		return;
	if (!gb_json_get_double(obj, member, GB_JSON_REQUIRED, -G_MAXDOUBLE, G_MAXDOUBLE,
	                        &out->value, NULL))
		facts_wrong_type(facts, &out->fact, "number");
}

static void facts_read_bool(CliFacts *facts, CliFactBool *out, const CliFactsNode *parent,
                            JsonObject *obj, const char *member)
{
	if (!facts_place(facts, &out->fact, parent, obj, member))
		return;
	if (!gb_json_get_bool(obj, member, GB_JSON_REQUIRED, &out->value, NULL))
		facts_wrong_type(facts, &out->fact, "boolean");
}

static void facts_read_strv(CliFacts *facts, CliFactStrv *out, const CliFactsNode *parent,
                            JsonObject *obj, const char *member)
{
	if (!facts_place(facts, &out->fact, parent, obj, member))
		return;
	if (!gb_json_get_strv(obj, member, GB_JSON_REQUIRED, &out->value, NULL))
		facts_wrong_type(facts, &out->fact, "array of strings");
}

static void facts_read_int_array(CliFacts *facts, CliFactIntArray *out, const CliFactsNode *parent,
                                 JsonObject *obj, const char *member)
{
	if (!facts_place(facts, &out->fact, parent, obj, member))
		return;
	if (!gb_json_get_int_array(obj, member, GB_JSON_REQUIRED, G_MININT64, G_MAXINT64,
	                           &out->value, NULL))
		facts_wrong_type(facts, &out->fact, "array of integers");
}

static void facts_read_str_map(CliFacts *facts, CliFactStrMap *out, const CliFactsNode *parent,
                               JsonObject *obj, const char *member)
{
	JsonObject *child = NULL;
	g_autoptr(GList) members = NULL;
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	g_autoptr(GPtrArray) texts = g_ptr_array_new();

	if (!facts_place(facts, &out->fact, parent, obj, member))
		return;
	if (!gb_json_get_object(obj, member, GB_JSON_REQUIRED, &child, NULL)) {
		facts_wrong_type(facts, &out->fact, "object of strings");
		return;
	}
	members = json_object_get_members(child);
	for (GList *l = members; l != NULL; l = l->next) {
		const char *text = NULL;
		if (!gb_json_get_string(child, l->data, GB_JSON_REQUIRED, &text, NULL))
			text = NULL;
		g_ptr_array_add(names, g_strdup(l->data));
		g_ptr_array_add(texts, g_strdup(text));
	}
	g_ptr_array_add(names, NULL);
	g_ptr_array_add(texts, NULL);
	out->names = (char **)g_ptr_array_free(g_steal_pointer(&names), FALSE);
	/* texts may hold NULLs before its end: freed by length, not as a strv */
	out->texts = (char **)g_ptr_array_free(g_steal_pointer(&texts), FALSE);
}

/* An object member; returns its JsonObject, or NULL when it cannot be read. */
static JsonObject *facts_read_node(CliFacts *facts, CliFactsNode *node, const CliFactsNode *parent,
                                   JsonObject *obj, const char *member)
{
	JsonObject *child = NULL;

	node->path = path_join(parent->path, member);
	node->alias = parent->alias != NULL ? path_join(parent->alias, member) : NULL;
	if (!facts_place(facts, &node->fact, parent, obj, member))
		return NULL;
	if (!gb_json_get_object(obj, member, GB_JSON_REQUIRED, &child, NULL)) {
		facts_wrong_type(facts, &node->fact, "object");
		return NULL;
	}
	return child;
}

static JsonArray *facts_read_list(CliFacts *facts, CliFactsList *list, const CliFactsNode *parent,
                                  JsonObject *obj, const char *member, GDestroyNotify free_item)
{
	JsonArray *array = NULL;

	list->items = g_ptr_array_new_with_free_func(free_item);
	if (!facts_place(facts, &list->fact, parent, obj, member))
		return NULL;
	if (!gb_json_get_array(obj, member, GB_JSON_REQUIRED, &array, NULL)) {
		facts_wrong_type(facts, &list->fact, "array");
		return NULL;
	}
	return array;
}

/* Element i of a list as an object; the element is kept either way. */
static JsonObject *facts_read_element(CliFacts *facts, CliFactsNode *node, const CliFactsList *list,
                                      JsonArray *array, guint i)
{
	g_autofree char *prefix = cli_fact_path(&list->fact);
	JsonObject *obj = NULL;

	node->fact.member = NULL;
	node->fact.parent = list->fact.parent;
	node->fact.state = CLI_FACT_OK;
	node->path = g_strdup_printf("%s[%u]", prefix, i);
	if (!gb_json_node_get_object(json_array_get_element(array, i), node->path, &obj, NULL)) {
		facts_wrong_type(facts, &node->fact, "object");
		return NULL;
	}
	return obj;
}

static void facts_node_clear(CliFactsNode *node)
{
	g_free(node->path);
	g_free(node->alias);
}

/* ---- hypervisor ---------------------------------------------------------------------- */

static const struct {
	const char *vendor;
	const char *signature; /* CPUID 0x40000000 as the agent reports it */
	CliHypervisorKind kind;
} hypervisors[] = {
	{ "KVM", "KVMKVMKVM", CLI_HYPERVISOR_KVM },
	{ "TCG", "TCGTCGTCGTCG", CLI_HYPERVISOR_TCG },
	{ "Microsoft Hv", "Microsoft Hv", CLI_HYPERVISOR_HYPERV },
	{ "VMware", "VMwareVMware", CLI_HYPERVISOR_VMWARE },
	{ "Xen", "XenVMMXenVMM", CLI_HYPERVISOR_XEN },
	{ "bhyve", "bhyve bhyve ", CLI_HYPERVISOR_OTHER },
	{ "ACRN", "ACRNACRNACRN", CLI_HYPERVISOR_OTHER },
	{ "QNX", "QNXQVMBSQG", CLI_HYPERVISOR_OTHER },
	{ "Parallels", " lrpepyh  vr", CLI_HYPERVISOR_OTHER },
	{ "VirtualBox", "VBoxVBoxVBox", CLI_HYPERVISOR_OTHER },
	/* from DMI on arm64 Nitro instances: no CPUID signature exists */
	{ "Amazon EC2", "Amazon EC2", CLI_HYPERVISOR_KVM },
};

/* Signatures are padded to 12 bytes with spaces or NULs: compare them stripped. */
static gboolean signature_equal(const char *a, const char *b)
{
	g_autofree char *sa = g_strstrip(g_strdup(a));
	g_autofree char *sb = g_strstrip(g_strdup(b));
	return g_strcmp0(sa, sb) == 0;
}

CliHypervisorKind cli_hypervisor_kind(const char *vendor, const char *signature)
{
	for (guint i = 0; i < G_N_ELEMENTS(hypervisors); i++) {
		if (vendor != NULL && g_ascii_strcasecmp(vendor, hypervisors[i].vendor) == 0)
			return hypervisors[i].kind;
	}
	/* an agent that did not know the vendor passes the raw signature on */
	for (guint i = 0; i < G_N_ELEMENTS(hypervisors); i++) {
		if ((vendor != NULL && signature_equal(vendor, hypervisors[i].signature)) ||
		    (signature != NULL && signature_equal(signature, hypervisors[i].signature)))
			return hypervisors[i].kind;
	}
	return CLI_HYPERVISOR_UNKNOWN;
}

gboolean cli_facts_cpu_is_arm64(const CliFactsCpu *cpu)
{
	const char *arch = cli_fact_string_or(&cpu->architecture, NULL);

	return g_strcmp0(arch, "aarch64") == 0 || g_strcmp0(arch, "arm64") == 0;
}

const char *cli_hypervisor_kind_to_string(CliHypervisorKind kind)
{
	switch (kind) {
	case CLI_HYPERVISOR_KVM:
		return "KVM";
	case CLI_HYPERVISOR_TCG:
		return "TCG";
	case CLI_HYPERVISOR_VMWARE:
		return "VMware";
	case CLI_HYPERVISOR_HYPERV:
		return "Hyper-V";
	case CLI_HYPERVISOR_XEN:
		return "Xen";
	case CLI_HYPERVISOR_OTHER:
		return "other";
	case CLI_HYPERVISOR_UNKNOWN:
	default:
		return "unknown";
	}
}

/* ---- sections ------------------------------------------------------------------------ */

static void facts_read_cpu(CliFacts *facts, JsonObject *root)
{
	CliFactsCpu *cpu = &facts->cpu;
	CliFactsHypervisor *hv = &cpu->hypervisor;
	JsonObject *obj = facts_read_node(facts, &cpu->node, &facts->root, root, "cpu");
	JsonObject *hv_obj;
	JsonObject *cpuid_obj;
	JsonObject *midr_obj;

	facts_read_string(facts, &cpu->architecture, &cpu->node, obj, "architecture");
	facts_read_string(facts, &cpu->model_name, &cpu->node, obj, "model_name");
	facts_read_string(facts, &cpu->vendor, &cpu->node, obj, "vendor");
	facts_read_int(facts, &cpu->count, &cpu->node, obj, "count");
	facts_read_strv(facts, &cpu->flags, &cpu->node, obj, "flags");

	hv_obj = facts_read_node(facts, &hv->node, &cpu->node, obj, "hypervisor");
	facts_read_bool(facts, &hv->present, &hv->node, hv_obj, "present");
	facts_read_string(facts, &hv->vendor, &hv->node, hv_obj, "vendor");
	facts_read_string(facts, &hv->signature, &hv->node, hv_obj, "signature");
	facts_read_string(facts, &hv->source, &hv->node, hv_obj, "source");
	hv->kind = cli_hypervisor_kind(cli_fact_string_or(&hv->vendor, NULL),
	                               cli_fact_string_or(&hv->signature, NULL));

	cpuid_obj = facts_read_node(facts, &cpu->cpuid.node, &cpu->node, obj, "cpuid");
	facts_read_bool(facts, &cpu->cpuid.aes, &cpu->cpuid.node, cpuid_obj, "aes");
	facts_read_bool(facts, &cpu->cpuid.pclmulqdq, &cpu->cpuid.node, cpuid_obj, "pclmulqdq");
	facts_read_string(facts, &cpu->isa_level, &cpu->node, obj, "isa_level");
	facts_read_strv(facts, &cpu->isa_missing, &cpu->node, obj, "isa_missing");
	facts_read_str_map(facts, &cpu->vulnerabilities, &cpu->node, obj, "vulnerabilities");
	midr_obj = facts_read_node(facts, &cpu->midr.node, &cpu->node, obj, "midr");
	facts_read_string(facts, &cpu->midr.implementer, &cpu->midr.node, midr_obj, "implementer");
	facts_read_string(facts, &cpu->midr.variant, &cpu->midr.node, midr_obj, "variant");
	facts_read_string(facts, &cpu->midr.part, &cpu->midr.node, midr_obj, "part");
	facts_read_int(facts, &cpu->midr.revision, &cpu->midr.node, midr_obj, "revision");
	facts_read_string(facts, &cpu->midr.source, &cpu->midr.node, midr_obj, "source");
}

static void facts_numa_node_free(gpointer data)
{
	CliFactsNumaNode *node = data;
	facts_node_clear(&node->node);
	g_clear_pointer(&node->cpus.value, g_array_unref);
	g_free(node);
}

static void facts_read_memory(CliFacts *facts, JsonObject *root)
{
	CliFactsMemory *mem = &facts->memory;
	JsonObject *obj = facts_read_node(facts, &mem->node, &facts->root, root, "memory");
	JsonObject *huge;
	JsonObject *numa;
	JsonArray *nodes;

	facts_read_int(facts, &mem->total_bytes, &mem->node, obj, "total_bytes");
	facts_read_int(facts, &mem->page_size_bytes, &mem->node, obj, "page_size_bytes");
	huge = facts_read_node(facts, &mem->hugepages.node, &mem->node, obj, "hugepages");
	facts_read_int(facts, &mem->hugepages.total, &mem->hugepages.node, huge, "total");
	facts_read_int(facts, &mem->hugepages.free, &mem->hugepages.node, huge, "free");
	facts_read_int(facts, &mem->hugepages.size_bytes, &mem->hugepages.node, huge, "size_bytes");
	facts_read_string(facts, &mem->thp, &mem->node, obj, "thp");
	numa = facts_read_node(facts, &mem->numa.node, &mem->node, obj, "numa");
	nodes = facts_read_list(facts, &mem->numa.nodes, &mem->numa.node, numa, "nodes",
	                        facts_numa_node_free);
	for (guint i = 0; nodes != NULL && i < json_array_get_length(nodes); i++) {
		CliFactsNumaNode *node = g_new0(CliFactsNumaNode, 1);
		JsonObject *node_obj =
		    facts_read_element(facts, &node->node, &mem->numa.nodes, nodes, i);

		g_ptr_array_add(mem->numa.nodes.items, node);
		facts_read_int(facts, &node->id, &node->node, node_obj, "id");
		/* the agent names nodes "memory.numa.node1" in its errors */
		if (cli_fact_ok(&node->id.fact) && node->id.value >= 0 &&
		    node->id.value <= G_MAXINT32)
			node->node.alias =
			    g_strdup_printf("memory.numa.node%" G_GINT64_FORMAT, node->id.value);
		facts_read_int_array(facts, &node->cpus, &node->node, node_obj, "cpus");
		facts_read_int(facts, &node->memory_bytes, &node->node, node_obj, "memory_bytes");
	}
}

static void facts_read_clock_steal(CliFacts *facts, JsonObject *root)
{
	CliFactsClocksource *clock = &facts->clocksource;
	CliFactsSteal *steal = &facts->steal;
	JsonObject *obj;

	obj = facts_read_node(facts, &clock->node, &facts->root, root, "clocksource");
	facts_read_string(facts, &clock->current, &clock->node, obj, "current");
	facts_read_strv(facts, &clock->available, &clock->node, obj, "available");

	obj = facts_read_node(facts, &steal->node, &facts->root, root, "steal");
	facts_read_double(facts, &steal->percent, &steal->node, obj, "percent");
	facts_read_int(facts, &steal->window_ms, &steal->node, obj, "window_ms");
	facts_read_int(facts, &steal->steal_ticks, &steal->node, obj, "steal_ticks");
	facts_read_int(facts, &steal->total_ticks, &steal->node, obj, "total_ticks");
	facts_read_int(facts, &steal->user_hz, &steal->node, obj, "user_hz");
}

/* A disk or NIC named "vda" is "block.vda" in the agent's errors. */
static void facts_name_alias(CliFactsNode *node, const CliFactString *name, const char *list)
{
	if (cli_fact_ok(&name->fact) && name->value[0] != '\0')
		node->alias = g_strdup_printf("%s.%s", list, name->value);
}

static void facts_disk_free(gpointer data)
{
	CliFactsDisk *disk = data;
	facts_node_clear(&disk->node);
	g_free(disk->name.value);
	g_free(disk->bus.value);
	g_free(disk->driver.value);
	g_free(disk->scheduler.value);
	g_strfreev(disk->schedulers.value);
	g_free(disk->write_cache.value);
	g_free(disk->model.value);
	g_free(disk);
}

static void facts_read_block(CliFacts *facts, JsonObject *root)
{
	JsonArray *array =
	    facts_read_list(facts, &facts->block, &facts->root, root, "block", facts_disk_free);

	for (guint i = 0; array != NULL && i < json_array_get_length(array); i++) {
		CliFactsDisk *disk = g_new0(CliFactsDisk, 1);
		CliFactsNode *node = &disk->node;
		JsonObject *obj = facts_read_element(facts, node, &facts->block, array, i);

		g_ptr_array_add(facts->block.items, disk);
		facts_read_string(facts, &disk->name, node, obj, "name");
		facts_name_alias(node, &disk->name, "block");
		facts_read_string(facts, &disk->bus, node, obj, "bus");
		facts_read_string(facts, &disk->driver, node, obj, "driver");
		facts_read_string(facts, &disk->scheduler, node, obj, "scheduler");
		facts_read_strv(facts, &disk->schedulers, node, obj, "schedulers");
		facts_read_string(facts, &disk->write_cache, node, obj, "write_cache");
		facts_read_int(facts, &disk->logical_block_size, node, obj, "logical_block_size");
		facts_read_int(facts, &disk->physical_block_size, node, obj, "physical_block_size");
		facts_read_int(facts, &disk->size_bytes, node, obj, "size_bytes");
		facts_read_bool(facts, &disk->rotational, node, obj, "rotational");
		facts_read_bool(facts, &disk->removable, node, obj, "removable");
		facts_read_bool(facts, &disk->cdrom, node, obj, "cdrom");
		facts_read_string(facts, &disk->model, node, obj, "model");
	}
}

static void facts_nic_free(gpointer data)
{
	CliFactsNic *nic = data;
	facts_node_clear(&nic->node);
	g_free(nic->name.value);
	g_free(nic->driver.value);
	g_free(nic);
}

static void facts_read_net(CliFacts *facts, JsonObject *root)
{
	JsonArray *array =
	    facts_read_list(facts, &facts->net, &facts->root, root, "net", facts_nic_free);

	for (guint i = 0; array != NULL && i < json_array_get_length(array); i++) {
		CliFactsNic *nic = g_new0(CliFactsNic, 1);
		CliFactsNode *node = &nic->node;
		JsonObject *obj = facts_read_element(facts, node, &facts->net, array, i);

		g_ptr_array_add(facts->net.items, nic);
		facts_read_string(facts, &nic->name, node, obj, "name");
		facts_name_alias(node, &nic->name, "net");
		facts_read_string(facts, &nic->driver, node, obj, "driver");
		facts_read_int(facts, &nic->mtu, node, obj, "mtu");
		facts_read_int(facts, &nic->rx_queues, node, obj, "rx_queues");
		facts_read_int(facts, &nic->tx_queues, node, obj, "tx_queues");
		facts_read_int(facts, &nic->speed_mbps, node, obj, "speed_mbps");
	}
}

static void facts_error_free(gpointer data)
{
	CliFactsError *entry = data;
	facts_node_clear(&entry->node);
	g_free(entry->member.value);
	g_free(entry->reason.value);
	g_free(entry);
}

static void facts_read_os_errors(CliFacts *facts, JsonObject *root)
{
	CliFactsOs *os = &facts->os;
	JsonObject *obj = facts_read_node(facts, &os->node, &facts->root, root, "os");
	JsonArray *array;

	facts_read_string(facts, &os->kernel_release, &os->node, obj, "kernel_release");
	facts_read_string(facts, &os->pretty_name, &os->node, obj, "pretty_name");

	array =
	    facts_read_list(facts, &facts->errors, &facts->root, root, "errors", facts_error_free);
	for (guint i = 0; array != NULL && i < json_array_get_length(array); i++) {
		CliFactsError *entry = g_new0(CliFactsError, 1);
		JsonObject *entry_obj =
		    facts_read_element(facts, &entry->node, &facts->errors, array, i);

		g_ptr_array_add(facts->errors.items, entry);
		facts_read_string(facts, &entry->member, &entry->node, entry_obj, "member");
		facts_read_string(facts, &entry->reason, &entry->node, entry_obj, "reason");
	}
}

CliFacts *cli_facts_new_sections(JsonObject *facts_obj, CliFactsSections sections)
{
	CliFacts *facts = g_new0(CliFacts, 1);
	/* no document reads like an empty one: every section absent */
	g_autoptr(JsonObject) empty = facts_obj == NULL ? json_object_new() : NULL;
	JsonObject *root = facts_obj != NULL ? facts_obj : empty;

	facts->problems = g_ptr_array_new_with_free_func(facts_problem_free);
	facts->root.fact.state = CLI_FACT_OK;
	facts->root.path = g_strdup("");
	facts_read_string(facts, &facts->agent_version, &facts->root, root, "agent_version");
	/* a section not asked for is placed under no object: NO_PARENT, no problems */
	facts_read_cpu(facts, sections & CLI_FACTS_SECTION_CPU ? root : NULL);
	facts_read_memory(facts, sections & CLI_FACTS_SECTION_MEMORY ? root : NULL);
	facts_read_clock_steal(
	    facts,
	    sections & (CLI_FACTS_SECTION_CLOCKSOURCE | CLI_FACTS_SECTION_STEAL) ? root : NULL);
	facts_read_block(facts, sections & CLI_FACTS_SECTION_BLOCK ? root : NULL);
	facts_read_net(facts, sections & CLI_FACTS_SECTION_NET ? root : NULL);
	facts_read_os_errors(facts, sections & CLI_FACTS_SECTION_OS ? root : NULL);
	return facts;
}

CliFacts *cli_facts_new(JsonObject *facts_obj)
{
	return cli_facts_new_sections(facts_obj, CLI_FACTS_SECTION_ALL);
}

void cli_facts_free(CliFacts *facts)
{
	if (facts == NULL)
		return;
	facts_node_clear(&facts->root);
	g_free(facts->agent_version.value);

	facts_node_clear(&facts->cpu.node);
	g_free(facts->cpu.architecture.value);
	g_free(facts->cpu.model_name.value);
	g_free(facts->cpu.vendor.value);
	g_strfreev(facts->cpu.flags.value);
	facts_node_clear(&facts->cpu.hypervisor.node);
	g_free(facts->cpu.hypervisor.vendor.value);
	g_free(facts->cpu.hypervisor.signature.value);
	g_free(facts->cpu.hypervisor.source.value);
	facts_node_clear(&facts->cpu.cpuid.node);
	g_free(facts->cpu.isa_level.value);
	g_strfreev(facts->cpu.isa_missing.value);
	facts_node_clear(&facts->cpu.midr.node);
	g_free(facts->cpu.midr.implementer.value);
	g_free(facts->cpu.midr.variant.value);
	g_free(facts->cpu.midr.part.value);
	g_free(facts->cpu.midr.source.value);
	if (facts->cpu.vulnerabilities.names != NULL) {
		for (guint i = 0; facts->cpu.vulnerabilities.names[i] != NULL; i++)
			g_free(facts->cpu.vulnerabilities.texts[i]);
		g_free(facts->cpu.vulnerabilities.texts);
		g_strfreev(facts->cpu.vulnerabilities.names);
	}

	facts_node_clear(&facts->memory.node);
	g_free(facts->memory.thp.value);
	facts_node_clear(&facts->memory.hugepages.node);
	facts_node_clear(&facts->memory.numa.node);
	g_clear_pointer(&facts->memory.numa.nodes.items, g_ptr_array_unref);

	facts_node_clear(&facts->clocksource.node);
	g_free(facts->clocksource.current.value);
	g_strfreev(facts->clocksource.available.value);
	facts_node_clear(&facts->steal.node);

	g_clear_pointer(&facts->block.items, g_ptr_array_unref);
	g_clear_pointer(&facts->net.items, g_ptr_array_unref);

	facts_node_clear(&facts->os.node);
	g_free(facts->os.kernel_release.value);
	g_free(facts->os.pretty_name.value);
	g_clear_pointer(&facts->errors.items, g_ptr_array_unref);

	g_ptr_array_unref(facts->problems);
	g_free(facts);
}
