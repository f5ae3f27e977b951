/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/*
 * bench --contention: a guest's result alone on its hypervisor (solo) and with
 * every guest of that hypervisor at once (loaded), sample by sample, matched as
 * compare matches them. Adds to the loaded result (an object)
 * "contention": {"solo": SOLO RESULT, "samples": [{"metric", "unit", "labels",
 * "solo", "loaded", "ratio"}]}, ratio = loaded / solo (null where either is
 * missing). Fails when the two results cannot be read as bench results.
 */
gboolean cli_bench_contention_attach(JsonNode *loaded, JsonNode *solo, GError **error);

G_END_DECLS
