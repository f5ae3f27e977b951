/* SPDX-License-Identifier: GPL-2.0-or-later */
/* "guestbench jobs" and "cancel": the gb-bench-list reply checked, and the table and CSV. */
#include "config.h"

#include <string.h>

#include "guestbench-protocol.h"

#include "commands/cmd-jobs.h"

static JsonNode *parse(const char *json, GError **error)
{
	g_autoptr(JsonNode) ret = gb_json_parse(json, strlen(json), NULL);

	g_assert_nonnull(ret);
	return cli_jobs_parse_list(ret, error);
}

static void test_jobs_parse_ok(void)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(JsonNode) list = parse(
	    "{\"jobs\": [{\"job\": 3, \"test\": \"aes\", \"state\": \"cancelled\", \"progress\": "
	    "0.5, \"phase\": \"x\", \"age\": 12.5, \"error\": \"Benchmark cancelled\", \"extra\": "
	    "\"\\u001b[31m\"}, {\"job\": 4, \"test\": \"mem\", \"state\": \"running\"}]}",
	    &error);
	g_autofree char *text = NULL;

	g_assert_no_error(error);
	text = gb_json_to_string(list, NULL);
	/* rebuilt from checked members: nothing else is echoed; no age from an old agent is null */
	g_assert_cmpstr(text, ==,
	                "{\"jobs\":[{\"job\":3,\"test\":\"aes\",\"state\":\"cancelled\","
	                "\"progress\":0.5,\"phase\":\"x\",\"age\":12.5,\"error\":\"Benchmark "
	                "cancelled\"},{\"job\":4,\"test\":\"mem\",\"state\":\"running\","
	                "\"progress\":0.0,\"phase\":\"\",\"age\":null}]}");
}

static void test_jobs_parse_bad(void)
{
	static const struct {
		const char *json;
		const char *message;
	} cases[] = {
		{ "[]", "Invalid parameter type for 'return', expected: object" },
		{ "{}", "jobs" },
		{ "{\"jobs\": {}}", "jobs" },
		{ "{\"jobs\": [1]}", "jobs[0]" },
		{ "{\"jobs\": [{\"test\": \"aes\", \"state\": \"done\"}]}", "job" },
		{ "{\"jobs\": [{\"job\": 0, \"test\": \"aes\", \"state\": \"done\"}]}", "job" },
		{ "{\"jobs\": [{\"job\": 1, \"test\": 5, \"state\": \"done\"}]}", "test" },
		{ "{\"jobs\": [{\"job\": 1, \"test\": \"aes\", \"state\": \"paused\"}]}",
		  "jobs[0]: unknown state 'paused'" },
		{ "{\"jobs\": [{\"job\": 1, \"test\": \"aes\", \"state\": \"done\", \"progress\": "
		  "2}]}",
		  "progress" },
		{ "{\"jobs\": [{\"job\": 1, \"test\": \"aes\", \"state\": \"done\", \"age\": -1}]}",
		  "age" },
		{ "{\"jobs\": [{\"job\": 1, \"test\": \"aes\", \"state\": \"done\", \"age\": "
		  "\"1\"}]}",
		  "age" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(JsonNode) list = parse(cases[i].json, &error);

		g_test_message("%s -> %s", cases[i].json, error != NULL ? error->message : "ok");
		g_assert_null(list);
		g_assert_nonnull(error);
		g_assert_nonnull(strstr(error->message, cases[i].message));
	}
}

static CliResults *sample_results(void)
{
	CliResults *results = cli_results_new("jobs");
	g_autoptr(GError) error = NULL;
	JsonNode *busy = parse("{\"jobs\": [{\"job\": 1, \"test\": \"aes\", \"state\": \"done\", "
	                       "\"progress\": 1, \"phase\": \"done\", \"age\": 3725}, "
	                       "{\"job\": 2, \"test\": \"disk\", \"state\": \"running\", "
	                       "\"progress\": 0.426, \"phase\": \"write 4k\", \"age\": 65.2}]}",
	                       &error);
	JsonNode *idle = parse("{\"jobs\": []}", &error);

	g_assert_no_error(error);
	cli_results_add(results, cli_result_new("vm1", "/vm1.sock", CLI_GUEST_OK, NULL, busy));
	cli_results_add(results, cli_result_new("vm2", "/vm2.sock", CLI_GUEST_OK, NULL, idle));
	cli_results_add(
	    results, cli_result_new("vm3", "/vm3.sock", CLI_GUEST_ERROR, "cannot connect", NULL));
	return results;
}

static void test_jobs_table(void)
{
	g_autoptr(CliResults) results = sample_results();
	g_autoptr(CliTable) table = cli_cmd_jobs.render_table(results);
	g_autoptr(GString) out = g_string_new(NULL);
	g_auto(GStrv) lines = NULL;

	cli_table_render(table, FALSE, out);
	g_test_message("%s", out->str);
	lines = g_strsplit(out->str, "\n", -1);
	g_assert_cmpuint(g_strv_length(lines), ==, 6);
	g_assert_true(g_str_has_prefix(lines[0], "GUEST  STATUS  JOB  TEST  STATE"));
	g_assert_nonnull(strstr(lines[1], "1    aes   done     100%      1 h 02 min  done"));
	g_assert_nonnull(strstr(lines[2], "2    disk  running  42%       1 min 05 s  write 4k"));
	g_assert_nonnull(strstr(lines[3], "vm2"));
	g_assert_nonnull(strstr(lines[3], "no jobs"));
	g_assert_nonnull(strstr(lines[4], "error"));
	g_assert_nonnull(strstr(lines[4], "cannot connect"));

	/* --failed-only: only the guests that are not ok */
	{
		g_autoptr(CliResults) failed = cli_results_filter_failed(results);

		g_clear_pointer(&table, cli_table_free);
		table = cli_cmd_jobs.render_table(failed);
		g_assert_cmpuint(cli_table_get_n_rows(table), ==, 1);
	}
}

static void test_jobs_csv(void)
{
	g_autoptr(CliResults) results = sample_results();
	g_autoptr(GString) out = cli_cmd_jobs.render_csv(results);

	g_assert_cmpstr(out->str, ==,
	                "guest,target,status,job,test,state,progress,age_seconds,phase,error\n"
	                "vm1,/vm1.sock,ok,1,aes,done,1,3725.0,done,\n"
	                "vm1,/vm1.sock,ok,2,disk,running,0.426,65.2,write 4k,\n"
	                "vm2,/vm2.sock,ok,,,,,,,\n"
	                "vm3,/vm3.sock,error,,,,,,,cannot connect\n");
	/* jobs has no Prometheus form: --format prom is refused before any guest */
	g_assert_null(cli_cmd_jobs.render_prom);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/jobs/parse/ok", test_jobs_parse_ok);
	g_test_add_func("/jobs/parse/bad", test_jobs_parse_bad);
	g_test_add_func("/jobs/table", test_jobs_table);
	g_test_add_func("/jobs/csv", test_jobs_csv);
	return g_test_run();
}
