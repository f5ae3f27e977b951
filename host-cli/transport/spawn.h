/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * Runs an external program (virsh) with a time limit: its output is
 * collected, and a program that outlives its limit or is cancelled is
 * killed, so a stuck libvirtd never hangs a fleet run or leaves a process
 * behind.
 */

typedef struct {
	gboolean exited; /* FALSE: ended by a signal */
	int exit_status; /* when exited */
	char *out;       /* stdout, NUL-terminated (it may hold NULs of its own) */
	gsize out_len;
	char *err; /* stderr, made valid UTF-8, white space stripped */
} CliSpawnResult;

void cli_spawn_result_clear(CliSpawnResult *result);

/*
 * result is NULL when error is set: GB_ERROR_TIMEOUT when the limit passed,
 * GB_ERROR_IO when the program could not be run or read.
 */
typedef void (*CliSpawnFunc)(const CliSpawnResult *result, const GError *error, gpointer user_data);

typedef struct _CliSpawn CliSpawn;

/*
 * Starts argv (argv[0] a path or a name looked up in PATH) on context; func
 * runs there once, never from inside this call. timeout is in seconds, 0 for
 * none (the owner then bounds it with cli_spawn_cancel()). destroy (may be
 * NULL) releases user_data when the spawn is done with it, whether func ran
 * or the spawn was cancelled. NULL with error ("cannot run NAME: ...") when
 * the program cannot be started; user_data is then not taken.
 */
CliSpawn *cli_spawn_start(const char *const *argv, double timeout, GMainContext *context,
                          CliSpawnFunc func, gpointer user_data, GDestroyNotify destroy,
                          GError **error);
/* Kills the program if it still runs; func is not called any more. NULL is ignored. */
void cli_spawn_cancel(CliSpawn *spawn);
/* The same, waiting on a private main context: for callers outside the main loop. */
gboolean cli_spawn_run_sync(const char *const *argv, double timeout, CliSpawnResult *result,
                            GError **error);

/* "virsh list --name": argv joined for messages (arguments as they are). */
char *cli_spawn_describe(const char *const *argv);

G_END_DECLS
