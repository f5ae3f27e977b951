/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <gio/gio.h>

#include "gb-error.h"
#include "fleet/host-files.h"
#include "fleet/libvirt.h"

/* Real domain XML nests about 8 deep; this only stops pathological input early. */
#define CLI_LIBVIRT_MAX_DEPTH 128
#define CLI_LIBVIRT_MAX_VIRSH_OUTPUT (16 * 1024 * 1024)

void cli_libvirt_domain_free(CliLibvirtDomain *domain)
{
	if (domain == NULL)
		return;
	g_free(domain->name);
	g_free(domain->state);
	g_free(domain->socket);
	g_free(domain->qga_socket);
	g_free(domain->problem);
	g_free(domain);
}

/* ---- parsing ------------------------------------------------------------------------- */

typedef struct {
	guint depth;
	gboolean root_seen; /* GMarkup accepts several top-level elements; XML does not */
	guint domain_depth; /* depth of <domain>, 0 until seen */
	gboolean domain_done;
	gboolean in_devices;
	gboolean in_name;
	gboolean in_channel;
	GString *name;
	char *state;
	/* the <channel> being read */
	char *ch_type;
	char *ch_source;
	char *ch_target_type;
	char *ch_target_name;
	/* results */
	char *socket;
	char *qga_socket;
	char *problem; /* why the guestbench channel cannot be used */
	gboolean has_channel;
	gboolean has_qga_channel;
	guint n_guestbench;
} CliLibvirtParser;

static const char *cli_libvirt_attr(const char **names, const char **values, const char *name)
{
	for (guint i = 0; names[i] != NULL; i++) {
		if (g_strcmp0(names[i], name) == 0)
			return values[i];
	}
	return NULL;
}

static void cli_libvirt_parser_reset_channel(CliLibvirtParser *p)
{
	g_clear_pointer(&p->ch_type, g_free);
	g_clear_pointer(&p->ch_source, g_free);
	g_clear_pointer(&p->ch_target_type, g_free);
	g_clear_pointer(&p->ch_target_name, g_free);
}

static void cli_libvirt_start_cb(GMarkupParseContext *ctx, const char *element, const char **names,
                                 const char **values, gpointer user_data, GError **error)
{
	CliLibvirtParser *p = user_data;
	guint d = ++p->depth;

	if (d > CLI_LIBVIRT_MAX_DEPTH) {
		g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
		            "elements nested deeper than %u", CLI_LIBVIRT_MAX_DEPTH);
		return;
	}
	if (d == 1) {
		if (p->root_seen) {
			g_set_error_literal(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
			                    "more than one root element");
			return;
		}
		p->root_seen = TRUE;
		if (g_strcmp0(element, "domstatus") == 0) {
			p->state = g_strdup(cli_libvirt_attr(names, values, "state"));
			return;
		}
		if (g_strcmp0(element, "domain") == 0) {
			p->domain_depth = 1;
			return;
		}
		g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
		            "root element is <%s>, not <domstatus> or <domain>", element);
		return;
	}
	if (d == 2 && p->domain_depth == 0 && g_strcmp0(element, "domain") == 0) {
		if (p->domain_done) {
			g_set_error_literal(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
			                    "more than one <domain> in <domstatus>");
			return;
		}
		p->domain_depth = 2;
		return;
	}
	if (p->domain_depth == 0)
		return;
	if (d == p->domain_depth + 1) {
		if (g_strcmp0(element, "name") == 0) {
			if (p->name != NULL) {
				g_set_error_literal(error, G_MARKUP_ERROR,
				                    G_MARKUP_ERROR_INVALID_CONTENT,
				                    "more than one <name> in <domain>");
				return;
			}
			p->name = g_string_new(NULL);
			p->in_name = TRUE;
		} else if (g_strcmp0(element, "devices") == 0) {
			p->in_devices = TRUE;
		}
		return;
	}
	if (d == p->domain_depth + 2 && p->in_devices && g_strcmp0(element, "channel") == 0) {
		cli_libvirt_parser_reset_channel(p);
		p->in_channel = TRUE;
		p->ch_type = g_strdup(cli_libvirt_attr(names, values, "type"));
		return;
	}
	if (d == p->domain_depth + 3 && p->in_channel) {
		/* libvirt writes one <source>; a second one would be ambiguous, keep the first */
		if (g_strcmp0(element, "source") == 0 && p->ch_source == NULL)
			p->ch_source = g_strdup(cli_libvirt_attr(names, values, "path"));
		else if (g_strcmp0(element, "target") == 0 && p->ch_target_name == NULL) {
			/* a <target> without a name may be followed by another one */
			g_free(p->ch_target_type);
			p->ch_target_type = g_strdup(cli_libvirt_attr(names, values, "type"));
			p->ch_target_name = g_strdup(cli_libvirt_attr(names, values, "name"));
		}
	}
}

static void cli_libvirt_set_problem(CliLibvirtParser *p, char *problem)
{
	if (p->problem == NULL)
		p->problem = problem;
	else
		g_free(problem);
}

static void cli_libvirt_end_channel(CliLibvirtParser *p)
{
	if (g_strcmp0(p->ch_target_name, CLI_LIBVIRT_QGA_CHANNEL) == 0 &&
	    g_strcmp0(p->ch_type, "unix") == 0) {
		p->has_qga_channel = TRUE;
		if (p->ch_source != NULL && p->qga_socket == NULL)
			p->qga_socket = g_strdup(p->ch_source);
		return;
	}
	if (g_strcmp0(p->ch_target_name, CLI_LIBVIRT_CHANNEL) != 0)
		return;
	if (++p->n_guestbench > 1) {
		g_clear_pointer(&p->socket, g_free);
		cli_libvirt_set_problem(
		    p, g_strdup("more than one <channel> named " CLI_LIBVIRT_CHANNEL));
		return;
	}
	if (g_strcmp0(p->ch_type, "unix") != 0) {
		cli_libvirt_set_problem(
		    p, g_strdup_printf("<channel> " CLI_LIBVIRT_CHANNEL " is type '%s', not 'unix'",
		                       p->ch_type != NULL ? p->ch_type : "(none)"));
		return;
	}
	if (g_strcmp0(p->ch_target_type, "virtio") != 0) {
		cli_libvirt_set_problem(
		    p, g_strdup_printf("<channel> " CLI_LIBVIRT_CHANNEL
		                       " has <target type='%s'>, not 'virtio'",
		                       p->ch_target_type != NULL ? p->ch_target_type : "(none)"));
		return;
	}
	/* usable once the domain runs: libvirt chooses a path when none is given */
	p->has_channel = TRUE;
	if (p->ch_source == NULL || p->ch_source[0] != '/') {
		cli_libvirt_set_problem(
		    p,
		    g_strdup("<channel> " CLI_LIBVIRT_CHANNEL " has no absolute <source path=...> "
		             "(is the domain running? only the live XML has it)"));
		return;
	}
	p->socket = g_strdup(p->ch_source);
}

static void cli_libvirt_end_cb(GMarkupParseContext *ctx, const char *element, gpointer user_data,
                               GError **error)
{
	CliLibvirtParser *p = user_data;
	guint d = p->depth--;

	if (p->domain_depth == 0)
		return;
	if (d == p->domain_depth) {
		p->domain_depth = 0;
		p->domain_done = TRUE;
		p->in_devices = FALSE;
	} else if (d == p->domain_depth + 1) {
		p->in_name = FALSE;
		if (g_strcmp0(element, "devices") == 0)
			p->in_devices = FALSE;
	} else if (d == p->domain_depth + 2 && p->in_channel) {
		cli_libvirt_end_channel(p);
		cli_libvirt_parser_reset_channel(p);
		p->in_channel = FALSE;
	}
}

static void cli_libvirt_text_cb(GMarkupParseContext *ctx, const char *text, gsize len,
                                gpointer user_data, GError **error)
{
	CliLibvirtParser *p = user_data;

	if (p->in_name && p->depth == p->domain_depth + 1)
		g_string_append_len(p->name, text, len);
}

static void cli_libvirt_parser_clear(CliLibvirtParser *p)
{
	cli_libvirt_parser_reset_channel(p);
	if (p->name != NULL)
		g_string_free(p->name, TRUE);
	g_free(p->state);
	g_free(p->socket);
	g_free(p->qga_socket);
	g_free(p->problem);
}

static const GMarkupParser cli_libvirt_markup = {
	.start_element = cli_libvirt_start_cb,
	.end_element = cli_libvirt_end_cb,
	.text = cli_libvirt_text_cb,
};

CliLibvirtDomain *cli_libvirt_domain_parse(const char *xml, gssize len, GError **error)
{
	CliLibvirtParser p = { 0 };
	g_autoptr(GMarkupParseContext) ctx = NULL;
	g_autoptr(GError) error_local = NULL;
	g_autoptr(CliLibvirtDomain) domain = NULL;
	g_autofree char *name = NULL;
	gsize size = len < 0 ? strlen(xml) : (gsize)len;

	if (size > CLI_LIBVIRT_MAX_XML_SIZE) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            "invalid domain XML: larger than %u bytes", CLI_LIBVIRT_MAX_XML_SIZE);
		return NULL;
	}
	/* GMarkup stops at a NUL inside the length it is given only by accident: refuse it */
	if (memchr(xml, '\0', size) != NULL) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "invalid domain XML: contains a NUL byte");
		return NULL;
	}
	ctx = g_markup_parse_context_new(&cli_libvirt_markup, G_MARKUP_PREFIX_ERROR_POSITION, &p,
	                                 NULL);
	if (!g_markup_parse_context_parse(ctx, xml, size, &error_local) ||
	    !g_markup_parse_context_end_parse(ctx, &error_local)) {
		/* GMarkup quotes the offending bytes, which need not be UTF-8 */
		g_autofree char *msg = g_utf8_make_valid(error_local->message, -1);

		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "invalid domain XML: %s", msg);
		cli_libvirt_parser_clear(&p);
		return NULL;
	}
	if (!p.domain_done) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "invalid domain XML: no <domain> element");
		cli_libvirt_parser_clear(&p);
		return NULL;
	}
	if (p.name == NULL || p.name->len == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    "invalid domain XML: <domain> has no <name>");
		cli_libvirt_parser_clear(&p);
		return NULL;
	}
	/* the name becomes a file name and an inventory group: hold it to the same rules */
	name = g_strstrip(g_string_free(g_steal_pointer(&p.name), FALSE));
	if (!cli_libvirt_check_name(name, &error_local)) {
		g_autofree char *msg = g_utf8_make_valid(error_local->message, -1);

		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "invalid domain XML: <name>: %s", msg);
		cli_libvirt_parser_clear(&p);
		return NULL;
	}
	domain = g_new0(CliLibvirtDomain, 1);
	domain->name = g_steal_pointer(&name);
	domain->state = g_steal_pointer(&p.state);
	domain->socket = g_steal_pointer(&p.socket);
	domain->qga_socket = g_steal_pointer(&p.qga_socket);
	domain->problem = g_steal_pointer(&p.problem);
	domain->has_channel = p.has_channel && p.n_guestbench == 1;
	domain->has_qga_channel = p.has_qga_channel;
	if (domain->problem != NULL)
		g_clear_pointer(&domain->socket, g_free);
	cli_libvirt_parser_clear(&p);
	return g_steal_pointer(&domain);
}

/* ---- finding domains ----------------------------------------------------------------- */

gboolean cli_libvirt_check_name(const char *name, GError **error)
{
	gsize len = name != NULL ? strlen(name) : 0;

	if (len == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "empty libvirt domain name");
		return FALSE;
	}
	if (!g_utf8_validate(name, -1, NULL)) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		                    "libvirt domain name is not valid UTF-8");
		return FALSE;
	}
	for (const char *c = name; *c != '\0'; c = g_utf8_next_char(c)) {
		gunichar u = g_utf8_get_char(c);
		if (u == '/' || u == '[' || u == ']' || g_unichar_iscntrl(u)) {
			g_autofree char *esc = g_strescape(name, NULL);
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "libvirt domain name '%s' contains '/', '[', ']' or a control "
			            "character",
			            esc);
			return FALSE;
		}
	}
	if (g_ascii_isspace(name[0]) || g_ascii_isspace(name[len - 1]) ||
	    g_strcmp0(name, ".") == 0 || g_strcmp0(name, "..") == 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "invalid libvirt domain name '%s'", name);
		return FALSE;
	}
	return TRUE;
}

const char *cli_libvirt_get_dir(const char *dir)
{
	const char *env;

	if (dir != NULL)
		return dir;
	env = g_getenv(CLI_LIBVIRT_DIR_ENV);
	if (env != NULL && env[0] != '\0')
		return env;
	return NULL;
}

/* Parses, checks it is the domain asked for; the error says where the XML came from. */
static CliLibvirtDomain *cli_libvirt_domain_parse_for(const char *name, const char *where,
                                                      const char *xml, gsize len, GError **error)
{
	g_autoptr(CliLibvirtDomain) domain = cli_libvirt_domain_parse(xml, len, error);

	if (domain == NULL) {
		g_prefix_error(error, "%s: ", where);
		return NULL;
	}
	if (g_strcmp0(domain->name, name) != 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "%s: describes domain '%s', not '%s'",
		            where, domain->name, name);
		return NULL;
	}
	return g_steal_pointer(&domain);
}

CliLibvirtDomain *cli_libvirt_domain_load(const char *dir, const char *name, GError **error)
{
	g_autofree char *path = NULL;
	g_autofree char *xml = NULL;
	g_autoptr(GError) error_local = NULL;
	gsize len = 0;

	if (!cli_libvirt_check_name(name, error))
		return NULL;
	path = g_strdup_printf("%s/%s.xml", dir, name);
	if (cli_read_regular_file(path, CLI_LIBVIRT_MAX_XML_SIZE, &xml, &len, &error_local))
		return cli_libvirt_domain_parse_for(name, path, xml, len, error);
	if (g_error_matches(error_local, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED,
		            "libvirt domain '%s' is not running (no %s)", name, path);
		return NULL;
	}
	g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "libvirt domain '%s': %s", name,
	            error_local->message);
	return NULL;
}

static gint cli_libvirt_strcmp(gconstpointer a, gconstpointer b)
{
	return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

static GPtrArray *cli_libvirt_list_dir(const char *dir, GError **error)
{
	g_autoptr(GDir) gdir = g_dir_open(dir, 0, error);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	const char *entry;

	if (gdir == NULL)
		return NULL;
	while ((entry = g_dir_read_name(gdir)) != NULL) {
		g_autofree char *path = NULL;

		if (!g_str_has_suffix(entry, ".xml") || strlen(entry) == strlen(".xml"))
			continue;
		path = g_build_filename(dir, entry, NULL);
		/* libvirt keeps other state here too (pid files, per-domain directories) */
		if (!g_file_test(path, G_FILE_TEST_IS_REGULAR))
			continue;
		g_ptr_array_add(names, g_strndup(entry, strlen(entry) - strlen(".xml")));
	}
	g_ptr_array_sort(names, cli_libvirt_strcmp);
	return g_steal_pointer(&names);
}

GPtrArray *cli_libvirt_list_domains(const char *dir, char **source_out, GError **error)
{
	g_autoptr(GError) error_local = NULL;
	g_autoptr(GPtrArray) names = cli_libvirt_list_dir(dir, &error_local);

	if (names == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot list libvirt domains: %s",
		            error_local->message);
		return NULL;
	}
	if (source_out != NULL)
		*source_out = g_strdup(dir);
	return g_steal_pointer(&names);
}

const char *cli_libvirt_domain_get_socket(const CliLibvirtDomain *domain, GError **error)
{
	if (domain->socket != NULL)
		return domain->socket;
	if (domain->problem != NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED, "libvirt domain '%s': %s",
		            domain->name, domain->problem);
		return NULL;
	}
	g_set_error(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED,
	            "libvirt domain '%s' has no <channel> with <target type='virtio' "
	            "name='" CLI_LIBVIRT_CHANNEL "'/>: add <channel type='unix'><source "
	            "mode='bind' path='/run/guestbench/DOMAIN.sock'/><target type='virtio' "
	            "name='" CLI_LIBVIRT_CHANNEL "'/></channel> to its <devices> (virsh edit; "
	            "it takes effect at the next start)",
	            domain->name);
	return NULL;
}

const char *cli_libvirt_channel_snippet(void)
{
	return "<channel type='unix'>\n"
	       "  <source mode='bind' path='/run/guestbench/DOMAIN.sock'/>\n"
	       "  <target type='virtio' name='" CLI_LIBVIRT_CHANNEL "'/>\n"
	       "</channel>\n";
}
