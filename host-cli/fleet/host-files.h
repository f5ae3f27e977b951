/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Highest CPU number accepted in a cpulist (Linux NR_CPUS tops out at 8192). */
#define CLI_HOST_MAX_CPU 65535

/* Files of the host (or of --host-sysroot DIR): the host view and host-check read them. */
char *cli_host_path(const char *sysroot, const char *path);
/* "0-3,8,10-11" -> sorted CPU numbers; "" is empty; anything else fails. */
GArray *cli_host_parse_cpulist(const char *text, GError **error);
/* The flags of the first "flags" line of SYSROOT/proc/cpuinfo, or NULL with error. */
char **cli_host_read_cpu_flags(const char *sysroot, GError **error);

/* SYSROOT/path read whole; refuses files over 64 MiB and files with NUL bytes. */
char *cli_host_read(const char *sysroot, const char *path, GError **error);
/* A decimal number of at most max. */
gboolean cli_host_parse_uint(const char *text, guint64 max, guint64 *out);

/*
 * Reads a regular file of at most max_size bytes (a FIFO or /dev/zero would
 * otherwise block or never end). The message names the path.
 */
gboolean cli_read_regular_file(const char *path, gsize max_size, char **contents, gsize *len,
                               GError **error);

G_END_DECLS
