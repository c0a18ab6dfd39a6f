/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Strict INI files (dtxn_ini.h): a line-by-line scan with rte_cfgfile's
 * tokenization that refuses what rte_cfgfile would truncate, drop or
 * report without a file name, then rte_cfgfile_load() for the values,
 * matched key by key with the scan so that each value has its line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_cfgfile.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_string_fns.h>

#include "dtxn_ini.h"

_Static_assert(DTXN_INI_NAME_MAX == CFG_NAME_LEN - 1, "rte_cfgfile's name limit");
_Static_assert(DTXN_INI_VALUE_MAX == CFG_VALUE_LEN - 1, "rte_cfgfile's value limit");

struct ini_section {
	char name[DTXN_INI_NAME_MAX + 1];
	unsigned line;
};

struct ini_key {
	struct dtxn_ini_entry pub;
	unsigned section;                     /* index in dtxn_ini.sec */
	char name[DTXN_INI_NAME_MAX + 1];
	char value[DTXN_INI_VALUE_MAX + 1];
};

struct dtxn_ini {
	char *path;
	unsigned n_sec, n_key;
	struct ini_section sec[DTXN_INI_ENTRIES_MAX];
	struct ini_key key[DTXN_INI_ENTRIES_MAX];
};

/* The scan's state and its error sink. */
struct ini_scan {
	struct dtxn_ini *ini;
	const char *const *allowed;
	unsigned line;
	char *err;
	size_t errlen;
};

static void __rte_format_printf(3, 4)
ini_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* "path:line: " + message; always -EINVAL. */
static int __rte_format_printf(2, 3)
scan_fail(struct ini_scan *s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ini_err(s->err, s->errlen, "%s:%u: %s", s->ini->path, s->line, msg);
	return -EINVAL;
}

/* Drops blanks at both ends of [*p, *p + *len). */
static void
trim(const char **p, size_t *len)
{
	while (*len > 0 && isspace((unsigned char)**p)) {
		(*p)++;
		(*len)--;
	}
	while (*len > 0 && isspace((unsigned char)(*p)[*len - 1]))
		(*len)--;
}

static bool
name_ok(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)p[i]) && p[i] != '_' && p[i] != '-' && p[i] != '.')
			return false;
	return len > 0;
}

static int
scan_section(struct ini_scan *s, const char *p, size_t len)
{
	struct dtxn_ini *ini = s->ini;
	const char *end = memchr(p, ']', len);
	const char *name = p + 1;
	size_t nlen;

	if (end == NULL)
		return scan_fail(s, "malformed section header (no ']')");
	if (end != p + len - 1)
		return scan_fail(s, "malformed section header (text after ']')");
	nlen = (size_t)(end - name);
	trim(&name, &nlen);
	if (nlen > DTXN_INI_NAME_MAX)
		return scan_fail(s, "section name longer than %d characters", DTXN_INI_NAME_MAX);
	if (!name_ok(name, nlen))
		return scan_fail(s, "section name '%.*s' is not letters, digits, '_', '-', '.'",
				 (int)nlen, name);
	if (s->allowed != NULL) {
		const char *const *a;
		char list[160] = "";

		for (a = s->allowed; *a != NULL; a++)
			if (strlen(*a) == nlen && memcmp(*a, name, nlen) == 0)
				break;
		if (*a == NULL) {
			for (a = s->allowed; *a != NULL; a++) {
				strlcat(list, list[0] ? " or [" : "[", sizeof(list));
				strlcat(list, *a, sizeof(list));
				strlcat(list, "]", sizeof(list));
			}
			return scan_fail(s, "unknown section [%.*s] (expected %s)", (int)nlen, name,
					 list);
		}
	}
	for (unsigned i = 0; i < ini->n_sec; i++)
		if (strlen(ini->sec[i].name) == nlen && memcmp(ini->sec[i].name, name, nlen) == 0)
			return scan_fail(s, "section [%.*s] repeated (first at line %u)", (int)nlen,
					 name, ini->sec[i].line);
	if (ini->n_sec == DTXN_INI_ENTRIES_MAX)
		return scan_fail(s, "more than %d sections", DTXN_INI_ENTRIES_MAX);
	memcpy(ini->sec[ini->n_sec].name, name, nlen);
	ini->sec[ini->n_sec].name[nlen] = '\0';
	ini->sec[ini->n_sec].line = s->line;
	ini->n_sec++;
	return 0;
}

static int
scan_key(struct ini_scan *s, const char *p, size_t len)
{
	struct dtxn_ini *ini = s->ini;
	const char *eq = memchr(p, '=', len);
	const char *name = p, *val = eq + 1;
	size_t nlen = (size_t)(eq - p), vlen = len - nlen - 1;
	struct ini_key *k;

	trim(&name, &nlen);
	trim(&val, &vlen);
	if (p[0] == '#')
		return scan_fail(s, "comments start with ';' (this '#' line has an '=': a key?)");
	if (nlen == 0)
		return scan_fail(s, "no key before '='");
	if (nlen > DTXN_INI_NAME_MAX)
		return scan_fail(s, "key '%.20s...' longer than %d characters", name,
				 DTXN_INI_NAME_MAX);
	if (!name_ok(name, nlen))
		return scan_fail(s, "key '%.*s' is not letters, digits, '_', '-', '.'", (int)nlen,
				 name);
	if (ini->n_sec == 0)
		return scan_fail(s, "key '%.*s' outside a section", (int)nlen, name);
	if (vlen == 0)
		return scan_fail(s, "%.*s: empty value", (int)nlen, name);
	if (vlen > DTXN_INI_VALUE_MAX)
		return scan_fail(s, "%.*s: value longer than %d characters", (int)nlen, name,
				 DTXN_INI_VALUE_MAX);
	for (unsigned i = ini->n_key; i-- > 0 && ini->key[i].section == ini->n_sec - 1;)
		if (strlen(ini->key[i].name) == nlen && memcmp(ini->key[i].name, name, nlen) == 0)
			return scan_fail(s, "%.*s: repeated in [%s] (first at line %u)", (int)nlen,
					 name, ini->sec[ini->n_sec - 1].name, ini->key[i].pub.line);
	if (ini->n_key == DTXN_INI_ENTRIES_MAX)
		return scan_fail(s, "more than %d keys", DTXN_INI_ENTRIES_MAX);
	k = &ini->key[ini->n_key++];
	memcpy(k->name, name, nlen);
	k->name[nlen] = '\0';
	k->section = ini->n_sec - 1;
	k->pub.line = s->line;
	return 0;
}

/* One line (without its newline) as rte_cfgfile would tokenize it. */
static int
scan_line(struct ini_scan *s, const char *buf, size_t len)
{
	const char *p = buf, *semi = memchr(buf, ';', len);

	if (memchr(buf, '\0', len) != NULL)
		return scan_fail(s, "NUL byte (not a text file?)");
	if (len > DTXN_INI_LINE_MAX)
		return scan_fail(s, "line longer than %d characters", DTXN_INI_LINE_MAX);
	/* rte_cfgfile: the first ';' starts a comment unless written "\;" */
	if (semi != NULL && (semi == buf || semi[-1] != '\\'))
		len = (size_t)(semi - buf);
	trim(&p, &len);
	if (len == 0)
		return 0;
	if (p[0] == '[')
		return scan_section(s, p, len);
	if (memchr(p, '=', len) != NULL)
		return scan_key(s, p, len);
	if (p[0] == '#')
		return 0; /* rte_cfgfile skips a line without '=' */
	return scan_fail(s, "expected 'key = value', '[section]' or a ';' comment");
}

static int
scan_file(struct ini_scan *s, FILE *f)
{
	char buf[DTXN_INI_LINE_MAX + 2];
	size_t len = 0;
	int ch, rc;

	s->line = 1;
	while ((ch = getc(f)) != EOF) {
		if (ch != '\n') {
			if (len < sizeof(buf))
				buf[len++] = (char)ch;
			if (len == sizeof(buf)) /* too long: say so without reading on */
				return scan_line(s, buf, len);
			continue;
		}
		rc = scan_line(s, buf, len);
		if (rc != 0)
			return rc;
		len = 0;
		s->line++;
	}
	if (ferror(f)) {
		ini_err(s->err, s->errlen, "%s: %s", s->ini->path, strerror(errno));
		return -EIO;
	}
	return len > 0 ? scan_line(s, buf, len) : 0;
}

/* Takes every value from rte_cfgfile, checking it saw the keys the scan did. */
static int
read_values(struct dtxn_ini *ini, char *err, size_t errlen)
{
	struct rte_cfgfile *cfg = rte_cfgfile_load(ini->path, 0);
	struct rte_cfgfile_entry *ents = NULL;
	char sec[CFG_NAME_LEN];
	unsigned k = 0;
	int rc = -EINVAL;

	if (cfg == NULL || rte_cfgfile_num_sections(cfg, NULL, 0) != (int)ini->n_sec)
		goto out;
	ents = calloc(RTE_MAX(ini->n_key, 1u), sizeof(*ents));
	if (ents == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned s = 0; s < ini->n_sec; s++) {
		int n = rte_cfgfile_section_entries_by_index(cfg, (int)s, sec, ents,
							     (int)(ini->n_key - k));

		if (n < 0 || strcmp(sec, ini->sec[s].name) != 0)
			goto out;
		for (int i = 0; i < n; i++, k++)
			if (ini->key[k].section != s || strcmp(ents[i].name, ini->key[k].name) != 0)
				goto out;
			else
				strlcpy(ini->key[k].value, ents[i].value, sizeof(ini->key[k].value));
	}
	rc = k == ini->n_key ? 0 : -EINVAL;
out:
	if (rc == -EINVAL)
		ini_err(err, errlen, "%s: rte_cfgfile reads it differently (report this file)",
			ini->path);
	else if (rc == -ENOMEM)
		ini_err(err, errlen, "%s: out of memory", ini->path);
	free(ents);
	if (cfg != NULL)
		rte_cfgfile_close(cfg);
	return rc;
}

struct dtxn_ini *
dtxn_ini_load(const char *path, const char *const *sections, char *err, size_t errlen)
{
	struct ini_scan s = { .allowed = sections, .err = err, .errlen = errlen };
	struct dtxn_ini *ini = NULL;
	struct stat st;
	FILE *f = NULL;
	int rc;

	ini_err(err, errlen, "%s", "");
	if (path == NULL || path[0] == '\0') {
		ini_err(err, errlen, "empty file name");
		rc = -EINVAL;
		goto fail;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		ini_err(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -ENODEV;
		ini_err(err, errlen, "%s: %s, not an INI file", path,
			rc == -EISDIR ? "a directory" : "not a regular file");
		goto fail;
	}
	ini = calloc(1, sizeof(*ini));
	if (ini == NULL || (ini->path = strdup(path)) == NULL) {
		rc = -ENOMEM;
		ini_err(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	s.ini = ini;
	rc = scan_file(&s, f);
	if (rc == 0)
		rc = read_values(ini, err, errlen);
	if (rc != 0)
		goto fail;
	fclose(f);
	for (unsigned k = 0; k < ini->n_key; k++) {
		ini->key[k].pub.section = ini->sec[ini->key[k].section].name;
		ini->key[k].pub.name = ini->key[k].name;
		ini->key[k].pub.value = ini->key[k].value;
	}
	return ini;
fail:
	if (f != NULL)
		fclose(f);
	dtxn_ini_free(ini);
	rte_errno = -rc;
	return NULL;
}

struct dtxn_ini *
dtxn_ini_load_one(const char *path, const char *section, char *err, size_t errlen)
{
	const char *const sections[] = { section, NULL };
	struct dtxn_ini *ini = dtxn_ini_load(path, sections, err, errlen);

	if (ini == NULL) {
		if (rte_errno != EINVAL && rte_errno != ENOMEM)
			rte_errno = ENOENT;
		return NULL;
	}
	if (dtxn_ini_section_line(ini, section) == 0) {
		ini_err(err, errlen, "%s: no [%s] section", path, section);
		dtxn_ini_free(ini);
		rte_errno = EINVAL;
		return NULL;
	}
	return ini;
}

void
dtxn_ini_free(struct dtxn_ini *ini)
{
	if (ini == NULL)
		return;
	free(ini->path);
	free(ini);
}

const char *
dtxn_ini_path(const struct dtxn_ini *ini)
{
	return ini->path;
}

unsigned
dtxn_ini_count(const struct dtxn_ini *ini)
{
	return ini->n_key;
}

const struct dtxn_ini_entry *
dtxn_ini_at(const struct dtxn_ini *ini, unsigned i)
{
	return i < ini->n_key ? &ini->key[i].pub : NULL;
}

unsigned
dtxn_ini_section_line(const struct dtxn_ini *ini, const char *name)
{
	for (unsigned i = 0; i < ini->n_sec; i++)
		if (strcmp(ini->sec[i].name, name) == 0)
			return ini->sec[i].line;
	return 0;
}

int
dtxn_ini_key_index(const struct dtxn_ini *ini, const struct dtxn_ini_entry *e,
		   const char *const *keys, unsigned n, char *err, size_t errlen)
{
	char list[256] = "";

	for (unsigned k = 0; k < n; k++)
		if (strcmp(e->name, keys[k]) == 0)
			return (int)k;
	for (unsigned k = 0; k < n; k++) {
		if (k > 0)
			strlcat(list, ", ", sizeof(list));
		strlcat(list, keys[k], sizeof(list));
	}
	ini_err(err, errlen, "%s:%u: [%s] unknown key '%s' (keys: %s)", ini->path, e->line,
		e->section, e->name, list);
	return -EINVAL;
}

int
dtxn_ini_number(const struct dtxn_ini *ini, const struct dtxn_ini_entry *e, double min,
		double max, bool zero_ok, const char *unit, double *v, char *err, size_t errlen)
{
	const char *s = e->value;
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	while (end != s && isspace((unsigned char)*end))
		end++;
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(x) ||
	    strpbrk(s, "xX") != NULL || (!(x >= min && x <= max) && !(zero_ok && x == 0))) {
		ini_err(err, errlen, "%s:%u: %s = '%s' is not a number in %s[%g, %g]%s%s",
			ini->path, e->line, e->name, e->value, zero_ok ? "{0} or " : "", min,
			max, unit[0] ? " " : "", unit);
		return -EINVAL;
	}
	*v = x;
	return 0;
}

void
dtxn_ini_stem(const char *path, char *name, size_t len)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base == NULL ? path : base + 1;
	n = strlen(base);
	if (n > 4 && strcmp(base + n - 4, ".ini") == 0)
		n -= 4;
	if (n >= len)
		n = len - 1;
	memcpy(name, base, n);
	name[n] = '\0';
}
