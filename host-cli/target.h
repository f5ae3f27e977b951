/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Where a guest's agent is reached. New schemes (qga:, libvirt:, @FILE
 * inventories) add a value here and a branch in cli_target_parse(); the
 * client dispatches on the scheme when it connects.
 */
typedef enum {
	CLI_TARGET_UNIX,  /* unix:PATH or a bare path */
	CLI_TARGET_VSOCK, /* vsock:CID:PORT */
} CliTargetScheme;

typedef struct {
	CliTargetScheme scheme;
	char *text;   /* exactly as given on the command line */
	char *name;   /* guest name shown in output; the text unless told otherwise */
	char *path;   /* CLI_TARGET_UNIX */
	guint32 cid;  /* CLI_TARGET_VSOCK */
	guint32 port; /* CLI_TARGET_VSOCK */
} CliTarget;

/* Fails with GB_ERROR_INVALID_ARGUMENT and a message that quotes the text. */
CliTarget *cli_target_parse(const char *text, GError **error);
void cli_target_free(CliTarget *target);
/* Canonical form ("unix:/a", "vsock:3:1234"): two targets are the same guest iff equal. */
char *cli_target_to_key(const CliTarget *target);
/*
 * Parses every text in order; fails on the first bad one or on a duplicate
 * (same canonical form). Returns a GPtrArray of CliTarget (owns them).
 */
GPtrArray *cli_targets_parse(const char *const *texts, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CliTarget, cli_target_free)

G_END_DECLS
