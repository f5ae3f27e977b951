/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The agent's configuration API. This header is deliberately not called
 * agent/config.h: that name would shadow the meson-generated config.h
 * (GB_VERSION, GB_AGENT_PORT_NAME, ...) for every file under agent/.
 */

#include <glib.h>

#include "agent.h"

G_BEGIN_DECLS

#define AGENT_DEFAULT_MAX_BENCH_SECONDS 600
#define AGENT_DEFAULT_MAX_BENCH_FILE_SIZE (G_GINT64_CONSTANT(8) * 1024 * 1024 * 1024)

/* Accepted ranges, named in error messages. */
#define AGENT_MIN_MESSAGE_SIZE 128
#define AGENT_MAX_MESSAGE_SIZE (G_GUINT64_CONSTANT(256) * 1024 * 1024)
#define AGENT_MAX_BENCH_SECONDS (7 * 24 * 3600)
#define AGENT_MIN_BENCH_FILE_SIZE 4096
/* How long a session process outlives the last request (session.c). */
#define AGENT_DEFAULT_LINGER_SECONDS 10
#define AGENT_MIN_LINGER_SECONDS 1
#define AGENT_MAX_LINGER_SECONDS 86400

/* Every value at its default: virtio-serial, sysroot "/", no allow/block lists. */
AgentConfig *agent_config_new(void);
void agent_config_free(AgentConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AgentConfig, agent_config_free)

/*
 * Reads [general] from a GKeyFile into config, overriding what is set.
 * A missing file is fine unless required (an explicit -c). Unknown groups or
 * keys and values of the wrong type fail with GB_ERROR_INVALID_ARGUMENT and a
 * message naming the file, the group and the key.
 */
gboolean agent_config_load_file(AgentConfig *config, const char *filename, gboolean required,
                                GError **error);

/* The same from a key file in memory (what the resident process hands a session). */
gboolean agent_config_load_data(AgentConfig *config, const char *data, gsize len, const char *name,
                                GError **error);
/* Every setting as a key file that agent_config_load_data() reads back as it is. */
char *agent_config_to_data(const AgentConfig *config, gsize *len);

/* Splits "a,b;c" into a vector; blanks trimmed, empty entries dropped; NULL for none. */
char **agent_config_split_list(const char *value);

/* TRUE if method is one of virtio-serial, unix-listen, vsock-listen, stdio. */
gboolean agent_config_method_is_valid(const char *method);

/* Cross-checks after merging file and command line (e.g. vsock-listen needs a path). */
gboolean agent_config_check(const AgentConfig *config, GError **error);

G_END_DECLS
