/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "commands/commands.h"

G_BEGIN_DECLS

/*
 * The reply of gb-bench-list ({"return": {"jobs": [...]}}), checked and
 * rebuilt from checked members only: {"jobs": [{"job", "test", "state",
 * "progress", "phase", "age" (null when the agent does not say), "error"
 * when there is one}]}. NULL with an error naming the member otherwise.
 */
JsonNode *cli_jobs_parse_list(JsonNode *ret, GError **error);

G_END_DECLS
