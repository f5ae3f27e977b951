/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Windows collectors' decoding, under wine: the speculation-control and
 * KVA-shadow flag words Windows answers with (wine answers neither, so the
 * words here are the cases a real Windows gives), and what the agent makes
 * of wine's answer: null with the reason, never a guess.
 */
#include "config.h"

#include "mitigations.h"

/* the value decode() gives name, or NULL when it leaves it out */
static const char *lookup(char **pairs, const char *name)
{
	for (guint i = 0; pairs != NULL && pairs[i] != NULL && pairs[i + 1] != NULL; i += 2) {
		if (g_strcmp0(pairs[i], name) == 0)
			return pairs[i + 1];
	}
	return NULL;
}

static void test_decode(void)
{
	/* a Skylake guest with -cpu host: IBRS on with retpolines, SSBD on, buffers cleared,
	 * KVA shadow required and on */
	AgentWinMitigations mitigated = { TRUE,
		                          (1u << 0) | (1u << 14) | (1u << 8) | (1u << 10) |
		                              (1u << 12) | (1u << 25) | (1u << 26),
		                          TRUE, (1u << 0) | (1u << 4) | (1u << 5) };
	/* kvm64: no IBRS/IBPB, no SSBD from the CPU model */
	AgentWinMitigations kvm64 = { TRUE, (1u << 2) | (1u << 12) | (1u << 26), TRUE, (1u << 5) };
	/* a CPU that needs none: enhanced IBRS, not affected by SSB, MDS or Meltdown */
	AgentWinMitigations modern = { TRUE, (1u << 0) | (1u << 16) | (1u << 24), TRUE, (1u << 5) };
	/* only the speculation word answered; KVA shadow status not reported */
	AgentWinMitigations half = { TRUE, (1u << 1) | (1u << 12) | (1u << 8), FALSE, 0 };
	AgentWinMitigations none = { FALSE, 0, FALSE, 0 };
	g_auto(GStrv) a = agent_win_mitigations_decode(&mitigated);
	g_auto(GStrv) b = agent_win_mitigations_decode(&kvm64);
	g_auto(GStrv) c = agent_win_mitigations_decode(&modern);
	g_auto(GStrv) d = agent_win_mitigations_decode(&half);

	g_assert_cmpstr(lookup(a, "spectre_v2"), ==, "Mitigation: IBRS/IBPB, Retpolines");
	g_assert_cmpstr(lookup(a, "spec_store_bypass"), ==,
	                "Mitigation: Speculative Store Bypass disabled");
	g_assert_cmpstr(lookup(a, "mds"), ==, "Mitigation: Clear CPU buffers");
	g_assert_cmpstr(lookup(a, "meltdown"), ==, "Mitigation: KVA shadow");

	/* the audit's CPU-VULNERABLE rule fires on these */
	g_assert_true(g_str_has_prefix(lookup(b, "spectre_v2"), "Vulnerable"));
	g_assert_true(g_str_has_prefix(lookup(b, "spec_store_bypass"), "Vulnerable"));
	g_assert_cmpstr(lookup(b, "mds"), ==, "Vulnerable: Clear CPU buffers off");
	g_assert_cmpstr(lookup(b, "meltdown"), ==, "Not affected");

	g_assert_cmpstr(lookup(c, "spectre_v2"), ==, "Mitigation: Enhanced IBRS");
	g_assert_cmpstr(lookup(c, "spec_store_bypass"), ==, "Not affected");
	g_assert_cmpstr(lookup(c, "mds"), ==, "Not affected");
	g_assert_cmpstr(lookup(c, "meltdown"), ==, "Not affected");

	g_assert_cmpstr(lookup(d, "spectre_v2"), ==,
	                "Vulnerable: branch prediction barrier off by system policy");
	g_assert_cmpstr(lookup(d, "spec_store_bypass"), ==, "Vulnerable");
	g_assert_null(lookup(d, "meltdown"));
	g_assert_null(lookup(d, "mds"));

	g_assert_null(agent_win_mitigations_decode(&none));
}

/* wine answers neither class: no member, and a reason that says so */
static void test_query(void)
{
	AgentWinMitigations m;
	g_autofree char *reason = NULL;

	if (agent_win_mitigations_query(&m, &reason)) {
		g_auto(GStrv) pairs = agent_win_mitigations_decode(&m);
		/* a real Windows: at least spectre_v2 or meltdown */
		g_assert_true(lookup(pairs, "spectre_v2") != NULL ||
		              lookup(pairs, "meltdown") != NULL);
		return;
	}
	g_assert_nonnull(reason);
	g_assert_nonnull(strstr(reason, "did not report its speculation control"));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/windows/mitigations/decode", test_decode);
	g_test_add_func("/windows/mitigations/query", test_query);
	return g_test_run();
}
