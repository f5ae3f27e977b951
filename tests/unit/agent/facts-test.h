/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "facts.h"

G_BEGIN_DECLS

/*
 * A fake CPUID read from tests/data/facts/TREE.cpuid: lines "LEAF SUBLEAF EAX
 * EBX ECX EDX" in hex, '#' comments; leaves not listed read as zeros (as a
 * real CPU past its maximum leaf). A file saying "unavailable" stands for a
 * CPU without CPUID (arm64).
 */
typedef struct {
	GHashTable *leaves; /* (leaf << 32 | subleaf) -> guint32[4] */
	gboolean unavailable;
} FactsFakeCpuid;

FactsFakeCpuid *facts_fake_cpuid_load(const char *path, GError **error);
void facts_fake_cpuid_free(FactsFakeCpuid *fake);
gboolean facts_fake_cpuid(guint32 leaf, guint32 subleaf, guint32 regs[4], gpointer user_data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FactsFakeCpuid, facts_fake_cpuid_free)

/* GB_TEST_DATA/facts/NAME */
char *facts_fixture_path(const char *name);

/*
 * Runs one collector (or, with func NULL, agent_facts_collect with all
 * sections) against fixture tree, steal window 0. Returns the node; the
 * errors recorded are in *errors (owned).
 */
JsonNode *facts_run(const char *tree, AgentFactsCollector func, JsonArray **errors);

/* The node at a dotted path ("hypervisor.vendor", "nodes.1.cpus"); NULL if absent. */
JsonNode *facts_get(JsonNode *root, const char *path);
/* Asserting accessors on top of facts_get. */
const char *facts_get_str(JsonNode *root, const char *path);
gint64 facts_get_int(JsonNode *root, const char *path);
gboolean facts_get_bool(JsonNode *root, const char *path);
gboolean facts_is_null(JsonNode *root, const char *path);
/* A JSON array of strings/ints joined with ',' for compact comparisons. */
char *facts_get_joined(JsonNode *root, const char *path);

/* The reason recorded for member, or NULL. */
const char *facts_error_for(JsonArray *errors, const char *member);
/* All members in errors, sorted, joined with ' '. */
char *facts_error_members(JsonArray *errors);

char *facts_to_string(JsonNode *node);

G_END_DECLS
