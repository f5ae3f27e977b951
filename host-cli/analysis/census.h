/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "analysis/audit.h"

G_BEGIN_DECLS

/*
 * The fleet's CPU models (guestbench census): guests grouped by (model name,
 * ISA level, hypervisor, flag set), the baseline (flags every guest has, over
 * the fleet and per tag), what each group lacks against the union, the
 * outliers of each tag group (or of the fleet) and the lowest ISA level.
 * Pure: the facts come in as gb-get-facts objects, nothing is read or shown.
 */

typedef struct {
	char *name;
	char *source;  /* the target or the saved document it came from */
	char **tags;   /* never NULL */
	char *problem; /* why the guest is not counted ("cpu.isa_level absent"); NULL when it is */
	char *model;   /* cpu.model_name */
	char *arch;    /* "x86_64" or "aarch64" (cpu.architecture; absent: x86_64) */
	guint isa_level;  /* x86: 1..4; aarch64: a gb-isa.h Arm code (80..93) */
	char *hypervisor; /* cpu.hypervisor.vendor, "none" on bare metal */
	char **flags;     /* sorted, no repeats */
	guint group;      /* index in CliCensus.groups */
	char *outlier;    /* why it is an outlier of its tag group or fleet; NULL when not */
	char *require;    /* what --require-level/--require-flags found lacking; NULL when none */
} CliCensusGuest;

typedef struct {
	char *model;
	char *arch;
	guint isa_level;
	char *hypervisor;
	char **flags;      /* sorted */
	GPtrArray *guests; /* CliCensusGuest, borrowed */
	char **lacks;      /* flags of its architecture's union this group does not have, sorted */
} CliCensusGroup;

typedef struct {
	char *tag;  /* NULL: the whole fleet */
	char *arch; /* NULL unless the fleet mixes architectures: then one scope per arch */
	guint n_guests;
	char **baseline;  /* flags every guest of the tag has, sorted */
	char *majority;   /* "MODEL" of the most common (model, flags), NULL when none */
	guint n_majority; /* how many guests share it */
	/* with the host's QEMU models (cli_census_set_qemu()): */
	char *qemu_model; /* the most featureful runnable model the baseline covers; NULL: none */
	char **
	    qemu_beyond; /* baseline flags QEMU knows that qemu_model lacks; NULL without a model */
} CliCensusScope;

/* A named CPU model of the host's QEMU. */
typedef struct {
	char *name;
	char **flags; /* what it turns on that a guest kernel shows, as /proc/cpuinfo names it */
	char *
	    *unavailable; /* what this host's QEMU cannot give it (QEMU's names); empty: runnable */
} CliCensusQemuModel;
/*
 * One architecture of the fleet. Flags and ISA levels of different
 * architectures are not comparable, so baselines, unions, outliers and the
 * lowest level are taken per architecture. On aarch64 the levels are not a
 * chain (Armv8.6 and Armv9.0 each lack something of the other): the lowest
 * is their meet, which no guest may hold exactly.
 */
typedef struct {
	char *arch;
	guint n_guests;
	char **baseline;    /* flags every guest of the arch has, sorted */
	char **all_flags;   /* their union */
	guint lowest_level; /* what every guest of the arch reaches */
	GPtrArray *lowest;  /* CliCensusGuest at exactly lowest_level, borrowed */
} CliCensusArch;

typedef struct {
	GPtrArray *guests;  /* CliCensusGuest, in the order added */
	GPtrArray *archs;   /* CliCensusArch, most guests first, then first seen */
	GPtrArray *groups;  /* CliCensusGroup, largest first, then first seen */
	GPtrArray *scopes;  /* CliCensusScope: the fleet, then each tag (when by_tag) */
	char **baseline;    /* flags every counted guest has */
	char **all_flags;   /* the union */
	guint lowest_level; /* 0 when no guest is counted or architectures are mixed */
	GPtrArray *lowest;  /* CliCensusGuest at lowest_level, borrowed */
	guint n_counted;
	guint n_problems;
	guint n_outliers;
	guint n_require_failed;
	GPtrArray *qemu_models; /* CliCensusQemuModel; NULL when the host's QEMU was not asked */
	char *qemu_error;       /* why the host's QEMU models are unknown or partly unknown */
} CliCensus;

CliCensus *cli_census_new(void);
void cli_census_free(CliCensus *census);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliCensus, cli_census_free)

/*
 * Adds one guest; facts may be NULL or hold anything: a guest whose
 * cpu.model_name, cpu.isa_level or cpu.flags cannot be read gets a problem
 * naming each, and is left out of the groups. tags may be NULL.
 */
void cli_census_add(CliCensus *census, const char *name, const char *source,
                    const char *const *tags, JsonObject *facts);
/* Adds a guest that has no facts at all (unreachable, a failed run): problem is why. */
void cli_census_add_problem(CliCensus *census, const char *name, const char *source,
                            const char *problem);
/*
 * Moves the guests of part (added to it alone, not finished) to the end of
 * census, in their order; part is left without guests. Lets documents be
 * read into parts on several threads and joined in a fixed order.
 */
void cli_census_take_guests(CliCensus *census, CliCensus *part);
/*
 * Groups, baselines, outliers and the lowest level. by_tag: outliers are
 * judged within each tag group (guests without tags: within the fleet) and a
 * scope is made per tag; require may be NULL.
 */
/*
 * The host's QEMU CPU models. cli_census_qemu_candidates() reads the "return"
 * of query-cpu-definitions and gives the models worth expanding (named,
 * migration-safe, not aliases); cli_census_set_qemu() takes that same
 * definitions node and expansions, {NAME: "return" of query-cpu-model-expansion
 * of type static}; a model whose reply is missing or malformed is left out and
 * named in qemu_error. Call before cli_census_finish().
 */
char **cli_census_qemu_candidates(JsonNode *definitions, GError **error);
void cli_census_set_qemu(CliCensus *census, JsonNode *definitions, JsonObject *expansions);
/* The host's QEMU could not be asked: why. */
void cli_census_set_qemu_error(CliCensus *census, const char *why);
/*
 * The /proc/cpuinfo name of a QEMU CPU feature (sse4.2 -> sse4_2, tsc-deadline
 * -> tsc_deadline_timer, md-clear -> md_clear), NULL for a feature no guest
 * kernel lists there (VMX capabilities, KVM and Hyper-V enlightenments,
 * IA32_ARCH_CAPABILITIES bits).
 */
char *cli_census_flag_from_qemu(const char *feature);

void cli_census_finish(CliCensus *census, gboolean by_tag, const CliAuditRequire *require);

/* "x86-64-v3" or "armv8.2-a" for a CliCensusGuest isa_level. */
char *cli_census_level_name(guint level);

G_END_DECLS
