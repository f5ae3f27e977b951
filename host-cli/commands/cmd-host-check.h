/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "fleet/app.h"

G_BEGIN_DECLS

/*
 * host-check: the hypervisor's own readiness, read under sysroot (NULL or
 * "/" for the real host). One CliFinding per check (rule = check id, subject
 * = what was checked). Never NULL.
 */
GPtrArray *cli_host_check_collect(const char *sysroot);
/* The "host-check" command's run(). */
int cli_host_check_run(CliApp *app, GError **error);

G_END_DECLS
