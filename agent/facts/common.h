/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "facts.h"

G_BEGIN_DECLS

/* TRUE when str is printable ASCII without whitespace (a kernel token such as "kvm-clock"). */
gboolean agent_facts_is_token(const char *str);

/* Appends {"member", "reason"} to ctx->errors. */
void agent_facts_add_error(AgentFactsContext *ctx, const char *member, const char *reason);
/*
 * Waits window_ms in slices of at most 10 ms, so that a set *cancel (may be
 * NULL) is seen within 10 ms: FALSE with "cancelled" then. The window of a
 * CPU load sample (steal.c, and win32/facts-cpu.c's GetSystemTimes).
 */
gboolean agent_facts_wait_window(guint window_ms, gint *cancel, GError **error);

/* CPUID through ctx->cpuid or the real instruction; FALSE when not available. */
gboolean agent_facts_cpuid(AgentFactsContext *ctx, guint32 leaf, guint32 subleaf, guint32 regs[4]);

/* Adds a member with a string value, or null when value is NULL. */
void agent_facts_builder_add_string(JsonBuilder *builder, const char *member, const char *value);
/* Adds a member with an integer value, or null when ok is FALSE. */
void agent_facts_builder_add_int_or_null(JsonBuilder *builder, const char *member, gboolean ok,
                                         gint64 value);
/* Adds a member with an array of strings, or null when values is NULL. */
void agent_facts_builder_add_strv(JsonBuilder *builder, const char *member, char **values);

G_END_DECLS
