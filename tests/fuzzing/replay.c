/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs fuzz inputs without libFuzzer: each file named on the command line,
 * or every file in a named directory, goes to LLVMFuzzerTestOneInput() once.
 * Built as a test, so that the fuzz targets keep compiling and the corpus
 * keeps passing.
 */
#include "config.h"

#include <stdio.h>

#include "fuzz.h"
#include <glib.h>

static gint replay_compare(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

static gboolean replay_file(const char *path, guint *count, GError **error)
{
	g_autofree char *data = NULL;
	gsize len = 0;

	if (!g_file_get_contents(path, &data, &len, error))
		return FALSE;
	LLVMFuzzerTestOneInput((const uint8_t *)data, len);
	(*count)++;
	return TRUE;
}

static gboolean replay_path(const char *path, guint *count, GError **error)
{
	g_autoptr(GDir) dir = NULL;
	g_autoptr(GPtrArray) names = NULL;
	const char *name;

	if (!g_file_test(path, G_FILE_TEST_IS_DIR))
		return replay_file(path, count, error);
	dir = g_dir_open(path, 0, error);
	if (dir == NULL)
		return FALSE;
	/* sorted, so that a failure is reproducible by position */
	names = g_ptr_array_new_with_free_func(g_free);
	while ((name = g_dir_read_name(dir)) != NULL)
		g_ptr_array_add(names, g_build_filename(path, name, NULL));
	g_ptr_array_sort(names, replay_compare);
	for (guint i = 0; i < names->len; i++) {
		const char *file = g_ptr_array_index(names, i);

		if (!replay_file(file, count, error))
			return FALSE;
	}
	return TRUE;
}

int main(int argc, char **argv)
{
	guint count = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		g_autoptr(GError) error = NULL;

		if (!replay_path(argv[i], &count, &error)) {
			fprintf(stderr, "%s: %s\n", argv[i], error->message);
			return 1;
		}
	}
	if (count == 0) {
		fprintf(stderr, "no inputs replayed\n");
		return 1;
	}
	printf("replayed %u inputs\n", count);
	return 0;
}
