/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A saved bench run is a file anyone may have edited, or that a hostile
 * guest's result went into: compare (by guest, and by document beside a
 * valid run) and report read it guest by guest and render it as text, JSON,
 * CSV and HTML. The JSON they write must parse again; the HTML must be
 * valid UTF-8.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "render/compare-view.h"
#include "render/report.h"
#include "fuzz.h"
#include "guestbench-protocol.h"

static const char fuzz_valid_run[] =
    "{\"guestbench\": \"0.1.0\", \"command\": \"bench\", \"guests\": [{\"name\": \"valid\", "
    "\"target\": \"valid\", \"status\": \"ok\", \"result\": {\"test\": \"aes\", \"params\": "
    "{\"cipher\": \"aes-128-gcm\", \"seconds\": 1, \"sizes\": [16, 16384]}, \"metrics\": ["
    "{\"metric\": \"throughput\", \"unit\": \"B/s\", \"value\": 77000000, \"labels\": "
    "{\"size\": \"16\"}}, {\"metric\": \"throughput\", \"unit\": \"B/s\", \"value\": "
    "2.1e9, \"labels\": {\"size\": \"16384\"}, \"mean\": 2.1e9, \"stddev\": 1e7, \"runs\": "
    "[2.09e9, 2.1e9, 2.11e9]}]}}]}";

static void fuzz_saved_render(CliComparison *cmp)
{
	g_autoptr(GString) text = NULL;
	g_autoptr(GString) csv = NULL;
	g_autoptr(GString) html = NULL;
	g_autoptr(JsonNode) json = NULL;
	g_autoptr(JsonNode) back = NULL;
	g_autofree char *json_text = NULL;

	if (!cli_comparison_compute(cmp, NULL))
		return;
	text = cli_comparison_render_text(cmp);
	csv = cli_comparison_render_csv(cmp);
	html = cli_report_render_html(cmp);
	if (!g_utf8_validate(text->str, (gssize)text->len, NULL) ||
	    !g_utf8_validate(csv->str, (gssize)csv->len, NULL) ||
	    !g_utf8_validate(html->str, (gssize)html->len, NULL))
		abort();
	json = cli_comparison_to_json(cmp);
	json_text = gb_json_to_string(json, NULL);
	/* what compare --format json writes, a JSON reader reads (no inf, no nan) */
	back = gb_json_parse(json_text, strlen(json_text), NULL);
	if (back == NULL)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 512 * 1024)
		return 0;
	{
		g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_GUEST);
		if (cli_comparison_add_data(cmp, "fuzz.json", "fuzz", (const char *)data, size,
		                            NULL))
			fuzz_saved_render(cmp);
	}
	{
		g_autoptr(CliComparison) cmp = cli_comparison_new(CLI_COMPARE_BY_DOCUMENT);
		if (cli_comparison_add_data(cmp, "valid.json", "valid", fuzz_valid_run,
		                            strlen(fuzz_valid_run), NULL) &&
		    cli_comparison_add_data(cmp, "fuzz.json", "fuzz", (const char *)data, size,
		                            NULL))
			fuzz_saved_render(cmp);
	}
	return 0;
}
