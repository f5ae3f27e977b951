/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "common.h"
#include "facts.h"

G_BEGIN_DECLS

/* Largest file a collector reads: /proc/cpuinfo of a 1024-CPU guest fits. */
#define AGENT_FACTS_MAX_FILE_SIZE (4 * 1024 * 1024)

/*
 * Resolves path (absolute, in guest terms, e.g. "/sys/block/vda") under
 * sysroot, following symlinks component by component like the kernel would
 * in a chroot: an absolute link target starts again at sysroot, and a ".."
 * that would climb above sysroot fails ("escapes the sysroot") instead of
 * being clamped, so a fixture cannot make the agent read the host's files.
 * Returns the canonical guest path (always starting with "/").
 */
char *agent_facts_resolve(const char *sysroot, const char *path, GError **error);

/* TRUE when path resolves (confined) to something that exists. */
gboolean agent_facts_exists(const char *sysroot, const char *path);

/*
 * Parses a kernel "[active] other" list (queue/scheduler, THP enabled):
 * exactly one bracketed entry, or a single unbracketed one. Returns the active
 * name and fills *all (without brackets) or fails with what is wrong.
 */
char *agent_facts_parse_bracketed(const char *str, char ***all, GError **error);

/* sysroot + guest path, for open() and friends. */
char *agent_facts_host_path(const char *sysroot, const char *guest_path);

/*
 * Reads a regular file under sysroot (at most AGENT_FACTS_MAX_FILE_SIZE).
 * Error messages are "PATH: REASON" with PATH in guest terms, ready for an
 * "errors" entry. read_text also rejects NUL bytes and invalid UTF-8.
 */
GBytes *agent_facts_read_bytes(const char *sysroot, const char *path, GError **error);
char *agent_facts_read_text(const char *sysroot, const char *path, GError **error);
/* read_text, then leading/trailing whitespace stripped. */
char *agent_facts_read_line(const char *sysroot, const char *path, GError **error);
/* A single decimal number in min..max (surrounding whitespace allowed). */
gboolean agent_facts_read_int(const char *sysroot, const char *path, gint64 min, gint64 max,
                              gint64 *out, GError **error);

/* Sorted names in a directory under sysroot ("." and ".." left out). */
GPtrArray *agent_facts_list_dir(const char *sysroot, const char *path, GError **error);

/* Basename of what the symlink path points to (confined like resolve). */
char *agent_facts_link_basename(const char *sysroot, const char *path, GError **error);

/* Parses a decimal integer in min..max; "what" names it in the error. */
gboolean agent_facts_parse_int(const char *str, gint64 min, gint64 max, gint64 *out,
                               GError **error);

/* Parses a kernel CPU list ("0-3,8,10-11"; empty is valid) into sorted guint32s. */
GArray *agent_facts_parse_cpulist(const char *str, GError **error);

G_END_DECLS
