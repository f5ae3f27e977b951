/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * The gb-get-facts document (PROTOCOL.md), read once into typed members.
 *
 * Every member keeps how it was read (CliFactState) next to its value, so
 * each reader keeps its own policy: the audit notes what it needed and could
 * not read (FACTS-ERRORS), the views show "unknown". Values are stored over
 * the full range of their JSON type; a reader that wants a narrower range
 * (a count of at least 1) checks it itself. Strings are copies: the model
 * outlives the JSON it came from.
 */

typedef enum {
	CLI_FACT_OK,         /* read, of the contract's type */
	CLI_FACT_ABSENT,     /* not in its object */
	CLI_FACT_NULL,       /* null: the agent could not read it (see errors) */
	CLI_FACT_WRONG_TYPE, /* present, of another type (or a string not UTF-8) */
	CLI_FACT_NO_PARENT,  /* its object could not be read; that one is the problem */
} CliFactState;

typedef struct _CliFactsNode CliFactsNode;

/* What every member has: its state, and where it lives (for its path). */
typedef struct {
	CliFactState state;
	const char *member;         /* "bus"; NULL for an array element */
	const CliFactsNode *parent; /* NULL for the document itself */
} CliFact;

/*
 * An object of the document: "cpu", "cpu.hypervisor", "block[2]". Every
 * element struct of a list starts with one, so an element is its node. alias
 * is how the agent's errors name the object ("block.vda",
 * "memory.numa.node1"), or NULL.
 */
struct _CliFactsNode {
	CliFact fact;
	char *path; /* "" for the document, "cpu.hypervisor", "block[2]" */
	char *alias;
};

typedef struct {
	CliFact fact;
	char *value;
} CliFactString;

typedef struct {
	CliFact fact;
	gint64 value;
} CliFactInt;

typedef struct {
	CliFact fact;
	double value; /* finite; an integer member reads as a number too */
} CliFactDouble;

typedef struct {
	CliFact fact;
	gboolean value;
} CliFactBool;

typedef struct {
	CliFact fact;
	char **value; /* NULL-terminated; wrong type if any element is not a string */
} CliFactStrv;

typedef struct {
	CliFact fact;
	GArray *value; /* gint64; wrong type if any element is not an integer */
} CliFactIntArray;

/* An object of strings (name -> text): a member that is not a string reads as NULL text. */
typedef struct {
	CliFact fact;
	char **names; /* NULL-terminated, in document order */
	char **texts; /* same length; an element is NULL when that member is not a string */
} CliFactStrMap;

/* An array of objects: every element is kept, objects or not, in order. */
typedef struct {
	CliFact fact;
	GPtrArray *items; /* the element structs below; each starts with a CliFactsNode */
} CliFactsList;

/* One classification of cpu.hypervisor, from its vendor or raw signature. */
typedef enum {
	CLI_HYPERVISOR_UNKNOWN, /* present, vendor and signature not known (or not read) */
	CLI_HYPERVISOR_KVM,
	CLI_HYPERVISOR_TCG,
	CLI_HYPERVISOR_VMWARE,
	CLI_HYPERVISOR_HYPERV,
	CLI_HYPERVISOR_XEN,
	CLI_HYPERVISOR_OTHER, /* hardware-assisted: bhyve, ACRN, QNX, Parallels, VirtualBox */
} CliHypervisorKind;

typedef struct {
	CliFactsNode node;
	CliFactBool present;
	CliFactString vendor;
	CliFactString signature;
	CliFactString source;
	CliHypervisorKind kind; /* from vendor and signature as read; UNKNOWN when neither */
} CliFactsHypervisor;

/* What CPUID itself reports (null on non-x86); the bits a reader compares with the flags. */
typedef struct {
	CliFactsNode node;
	CliFactBool aes;
	CliFactBool pclmulqdq;
} CliFactsCpuid;

typedef struct {
	CliFactsNode node;
	CliFactString architecture;
	CliFactString model_name;
	CliFactString vendor;
	CliFactInt count;
	CliFactStrv flags;
	CliFactsHypervisor hypervisor;
	CliFactsCpuid cpuid;
	CliFactString isa_level; /* "x86-64-v2"; absent from agents before it */
	CliFactStrv isa_missing;
	CliFactStrMap vulnerabilities; /* name -> the kernel's text */
	struct {
		CliFactsNode node;         /* MIDR_EL1 of the first CPU; null off aarch64 */
		CliFactString implementer; /* "0x41" */
		CliFactString variant;
		CliFactString part;
		CliFactInt revision;
		CliFactString source; /* "cpuinfo" or "midr_el1" */
	} midr;
} CliFactsCpu;

typedef struct {
	CliFactsNode node; /* path "memory.numa.nodes[N]", alias "memory.numa.nodeID" */
	CliFactInt id;
	CliFactIntArray cpus;
	CliFactInt memory_bytes;
} CliFactsNumaNode;

typedef struct {
	CliFactsNode node;
	CliFactInt total_bytes;
	CliFactInt page_size_bytes; /* the kernel's base page size; absent from agents before it */
	CliFactString thp;
	struct {
		CliFactsNode node;
		CliFactInt total;
		CliFactInt free;
		CliFactInt size_bytes;
	} hugepages;
	struct {
		CliFactsNode node;
		CliFactsList nodes; /* CliFactsNumaNode */
	} numa;
} CliFactsMemory;

typedef struct {
	CliFactsNode node;
	CliFactString current;
	CliFactStrv available;
} CliFactsClocksource;

typedef struct {
	CliFactsNode node;
	CliFactDouble percent;
	CliFactInt window_ms;
	CliFactInt steal_ticks;
	CliFactInt total_ticks;
	CliFactInt user_hz;
} CliFactsSteal;

typedef struct {
	CliFactsNode node; /* path "block[N]", alias "block.NAME" */
	CliFactString name;
	CliFactString bus;
	CliFactString driver;
	CliFactString scheduler;
	CliFactStrv schedulers;
	CliFactString write_cache;
	CliFactInt logical_block_size;
	CliFactInt physical_block_size;
	CliFactInt size_bytes;
	CliFactBool rotational;
	CliFactBool removable;
	CliFactBool cdrom;
	CliFactString model;
} CliFactsDisk;

typedef struct {
	CliFactsNode node; /* path "net[N]", alias "net.NAME" */
	CliFactString name;
	CliFactString driver;
	CliFactInt mtu;
	CliFactInt rx_queues;
	CliFactInt tx_queues;
	CliFactInt speed_mbps;
} CliFactsNic;

typedef struct {
	CliFactsNode node;
	CliFactString kernel_release;
	CliFactString pretty_name;
} CliFactsOs;

/* One entry of the agent's own "errors": a member it could not read, and why. */
typedef struct {
	CliFactsNode node; /* path "errors[N]" */
	CliFactString member;
	CliFactString reason;
} CliFactsError;

/* A member the model could not read: "cpu.count", "wrong type (expected integer)". */
typedef struct {
	char *path;
	char *why;
} CliFactsProblem;

typedef struct {
	CliFactsNode root; /* always OK: no document reads like an empty one */
	CliFactString agent_version;
	CliFactsCpu cpu;
	CliFactsMemory memory;
	CliFactsClocksource clocksource;
	CliFactsSteal steal;
	CliFactsList block; /* CliFactsDisk */
	CliFactsList net;   /* CliFactsNic */
	CliFactsOs os;
	CliFactsList errors; /* CliFactsError */
	/* CliFactsProblem: every known member missing, null or of the wrong type, in
	 * document order; members under an unreadable object are not listed again */
	GPtrArray *problems;
} CliFacts;

/*
 * The sections of gb-get-facts a reader asked for (its "sections" argument):
 * a view shows those only, so a section left out of the request is not shown
 * as if it could not be read.
 */
typedef enum {
	CLI_FACTS_SECTION_CPU = 1 << 0,
	CLI_FACTS_SECTION_MEMORY = 1 << 1,
	CLI_FACTS_SECTION_CLOCKSOURCE = 1 << 2,
	CLI_FACTS_SECTION_STEAL = 1 << 3,
	CLI_FACTS_SECTION_BLOCK = 1 << 4,
	CLI_FACTS_SECTION_NET = 1 << 5,
	CLI_FACTS_SECTION_OS = 1 << 6,
	CLI_FACTS_SECTION_ALL = (1 << 7) - 1,
} CliFactsSections;

/* The section names in reply order, NULL-terminated: "cpu", "memory", ..., "os". */
extern const char *const cli_facts_section_names[];

/*
 * "steal,cpu" -> the mask; NULL -> CLI_FACTS_SECTION_ALL. An empty or unknown
 * name fails with GB_ERROR_INVALID_ARGUMENT naming it and the known ones.
 */
gboolean cli_facts_sections_parse(const char *list, CliFactsSections *sections, GError **error);

/* Reads a gb-get-facts result; facts may be NULL (then every section is absent). Never NULL. */
CliFacts *cli_facts_new(JsonObject *facts);
/*
 * The same, reading only the sections asked for (the agent's errors go with
 * os): what a reader that needs one section pays. The members of a section
 * not asked for are CLI_FACT_NO_PARENT, its lists empty, and none of them is
 * in problems.
 */
CliFacts *cli_facts_new_sections(JsonObject *facts, CliFactsSections sections);
void cli_facts_free(CliFacts *facts);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliFacts, cli_facts_free)

/* "cpu.hypervisor.vendor", "block[2].bus", "block[2]" (newly allocated). */
char *cli_fact_path(const CliFact *fact);

/* The member holds a usable value. */
static inline gboolean cli_fact_ok(const CliFact *fact)
{
	return fact->state == CLI_FACT_OK;
}

/* The string, or fallback when it could not be read. */
const char *cli_fact_string_or(const CliFactString *str, const char *fallback);

/* The kind for a vendor name or a CPUID signature (either may be NULL). */
CliHypervisorKind cli_hypervisor_kind(const char *vendor, const char *signature);
/* "KVM", "TCG", "VMware", "Hyper-V", "Xen", "other", "unknown". */
const char *cli_hypervisor_kind_to_string(CliHypervisorKind kind);
/* TRUE when cpu.architecture says aarch64 (or arm64): its flags have other names. */
gboolean cli_facts_cpu_is_arm64(const CliFactsCpu *cpu);

G_END_DECLS
