/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "guestbench-protocol.h"

G_BEGIN_DECLS

/* Settings after the config file and the command line were merged. */
typedef struct {
	char *method;      /* virtio-serial | unix-listen | vsock-listen | stdio */
	char *path;        /* port path, socket path or CID:PORT; NULL = default */
	char *sysroot;     /* root the facts are read under; "/" by default */
	char *scratch_dir; /* only place a disk benchmark may write */
	char **allow_rpcs; /* NULL = all; entries may be globs */
	char **block_rpcs; /* NULL = none; entries may be globs */
	gboolean verbose;
	gsize max_message_size;
	guint max_depth;
	gint64 max_bench_seconds;   /* cap on any benchmark's duration */
	gint64 max_bench_file_size; /* cap on the disk benchmark's file, bytes */
	gint64 linger_seconds;      /* a session process ends after this long without work */
	char *bench_worker;         /* guestbench-agent-bench: each job runs in it; not a key */
} AgentConfig;

typedef struct _AgentContext AgentContext;
struct _AgentContext {
	AgentConfig *config;
	gpointer jobs; /* the benchmark job runner, once there is one */
};

/*
 * A command handler: args is the request's "arguments" (NULL when absent).
 * Returns the "return" value (owned; NULL node types are fine) or NULL with
 * error set. Handlers validate args with the gb_json_* accessors and reject
 * unknown members ("Parameter 'x' is unexpected").
 */
typedef JsonNode *(*AgentCommandFunc)(AgentContext *ctx, JsonObject *args, GError **error);

typedef struct {
	const char *name;
	AgentCommandFunc func;
	gboolean success_response; /* FALSE only for commands that never reply */
} AgentCommand;

G_END_DECLS
