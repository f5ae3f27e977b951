/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "common.h"

G_BEGIN_DECLS

/* What a hypervisor's CPUID leaves (0x40000000...) say. */
typedef struct {
	gboolean present;
	const char *vendor; /* static string, or raw_vendor */
	char *raw;          /* escaped signature */
	char *name;         /* a vendor read from a file (device tree, sysfs) */
	const char *source;
	/* Each non-empty leaf as three strings: "0x4000XX00", escaped signature, vendor or "". */
	GPtrArray *leaves;
} CpuHypervisor;

/*
 * Scans the hypervisor leaves (once per process for the live instruction,
 * every time for injected CPUID). Free with agent_cpu_hypervisor_clear().
 */
void agent_cpu_hypervisor_scan(AgentFactsContext *ctx, CpuHypervisor *hv);
void agent_cpu_hypervisor_clear(CpuHypervisor *hv);
/* The members present, vendor, signature, source and signatures of "hypervisor". */
void agent_cpu_hypervisor_write(JsonBuilder *builder, const CpuHypervisor *hv, gboolean have_cpuid);
/* The vendor a 12-byte hypervisor signature names, or NULL. */
const char *agent_cpu_signature_vendor(const char sig[12]);
/* The "cpuid" member: the bits the audit reads, or null without CPUID. */
void agent_cpu_add_cpuid(AgentFactsContext *ctx, JsonBuilder *builder);
/* "isa_level" and "isa_missing" from CPUID (null, with an error, without it). */
void agent_cpu_add_isa_level(AgentFactsContext *ctx, JsonBuilder *builder);

/*
 * The flags CPUID advertises, named and ordered as Linux's /proc/cpuinfo
 * names them (without the kernel's synthetic ones); NULL without CPUID.
 */
char **agent_cpu_x86_flags(AgentFactsContext *ctx);
/* The vendor string of leaf 0 ("GenuineIntel"), escaped; NULL without CPUID. */
char *agent_cpu_x86_vendor(AgentFactsContext *ctx);
/* The brand string of leaves 0x80000002-4, trimmed; NULL when the CPU has none. */
char *agent_cpu_x86_model_name(AgentFactsContext *ctx);

G_END_DECLS
