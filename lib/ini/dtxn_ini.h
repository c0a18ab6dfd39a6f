/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DTXN_INI_H
#define DTXN_INI_H

/**
 * @file
 * Strict INI files (issue 11, part 1): every dtxn INI reader (dtxn-app's
 * --config, cluster files, NIC and CPU models) goes through here, so that
 * every file gets the same rules and every error names file:line.
 *
 * The values are read by DPDK's rte_cfgfile, whose fixed limits
 * (CFG_NAME_LEN, CFG_VALUE_LEN) it applies by truncating silently and
 * whose errors it reports through rte_log without a file name. So the file
 * is first scanned line by line with the same tokenization (';' starts a
 * comment unless escaped as "\;", blanks around names and values are
 * dropped, "[name]" opens a section, "key = value" adds a key), and
 * refused, with one line "file:line: problem", when:
 *   - it is not a readable regular file, or has a NUL byte;
 *   - a line is longer than DTXN_INI_LINE_MAX characters;
 *   - a section header is malformed ("[x" or "[x] y"), empty, longer than
 *     DTXN_INI_NAME_MAX characters, not one of the caller's sections, or
 *     repeated;
 *   - a line is neither blank, a comment, a section header nor
 *     "key = value" (a '#' line with '=' in it, too: comments start with ';');
 *   - a key comes before any section, is empty, is not made of letters,
 *     digits, '_', '-' and '.', is longer than DTXN_INI_NAME_MAX
 *     characters or is repeated in its section;
 *   - a value is empty or longer than DTXN_INI_VALUE_MAX characters;
 *   - the file has more than DTXN_INI_ENTRIES_MAX keys.
 * Nothing is dropped or truncated: what loads is exactly what the file says.
 *
 * Thread-safety: none needed; a loaded file is read-only and may be read
 * from any thread. No EAL needed (runs before rte_eal_init()).
 */

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest section or key name, characters (rte_cfgfile's CFG_NAME_LEN - 1). */
#define DTXN_INI_NAME_MAX 63
/** Longest value, characters (rte_cfgfile's CFG_VALUE_LEN - 1). */
#define DTXN_INI_VALUE_MAX 255
/** Longest line, characters without the newline (rte_cfgfile reads lines
 * into CFG_NAME_LEN + CFG_VALUE_LEN + 4 bytes and refuses longer ones). */
#define DTXN_INI_LINE_MAX (DTXN_INI_NAME_MAX + DTXN_INI_VALUE_MAX + 4)
/** Most keys in one file. */
#define DTXN_INI_ENTRIES_MAX 1024

/** One "key = value" line of a loaded file. */
struct dtxn_ini_entry {
	const char *section;  /**< its section's name */
	const char *name;     /**< key, as written */
	const char *value;    /**< value, as rte_cfgfile reads it */
	unsigned line;        /**< 1-based line number */
};

struct dtxn_ini;

/**
 * Loads and checks an INI file (the rules are in the file comment).
 *
 * @param path      the file.
 * @param sections  NULL-terminated list of the section names allowed; NULL
 *   allows any.
 * @param err       on error, one line "path:line: problem" (or "path:
 *   problem"), no newline; may be NULL.
 * @param errlen    size of @p err, bytes.
 * @return the file, freed with dtxn_ini_free(); NULL with rte_errno set:
 *   EINVAL (@p path NULL or empty, or a rule broken), ENOENT/EACCES/...
 *   (cannot open it; the errno of open()), EISDIR (a directory), ENODEV
 *   (not a regular file), ENOMEM.
 */
struct dtxn_ini *dtxn_ini_load(const char *path, const char *const *sections, char *err,
			       size_t errlen);

/**
 * dtxn_ini_load() for a file of exactly one section, @p section, which
 * must be there (the NIC, CPU and cluster model files).
 *
 * @param err  on error "path[:line]: problem", as dtxn_ini_load() (or
 *   "path: no [section] section").
 * @return the file, or NULL with rte_errno: EINVAL (a rule broken, another
 *   section, no @p section), ENOENT (cannot read it: missing, unreadable,
 *   a directory, not a regular file), ENOMEM.
 */
struct dtxn_ini *dtxn_ini_load_one(const char *path, const char *section, char *err,
				   size_t errlen);

/** Frees a file from dtxn_ini_load(); NULL is a no-op. */
void dtxn_ini_free(struct dtxn_ini *ini);

/** @return the file's path, as given to dtxn_ini_load(). */
const char *dtxn_ini_path(const struct dtxn_ini *ini);

/** @return the number of keys of the file, all sections together. */
unsigned dtxn_ini_count(const struct dtxn_ini *ini);

/**
 * @return key @p i (0 .. dtxn_ini_count()-1), in file order; NULL if @p i
 *   is out of range. Valid until dtxn_ini_free().
 */
const struct dtxn_ini_entry *dtxn_ini_at(const struct dtxn_ini *ini, unsigned i);

/** @return the line of section @p name's header, or 0 if the file has no such section. */
unsigned dtxn_ini_section_line(const struct dtxn_ini *ini, const char *name);

/**
 * Finds an entry's key in a table of known keys.
 *
 * @param keys  the known keys; @p n of them.
 * @param err   on error, "path:line: [section] unknown key 'k' (keys: a, b, ...)".
 * @return the key's index in @p keys, or -EINVAL.
 */
int dtxn_ini_key_index(const struct dtxn_ini *ini, const struct dtxn_ini_entry *e,
		       const char *const *keys, unsigned n, char *err, size_t errlen);

/**
 * Parses an entry's value as a finite number in [@p min, @p max], or
 * exactly 0 when @p zero_ok (0 meaning "unlimited" or "off" for the
 * caller). Blanks around the number are allowed; NaN, infinities,
 * hexadecimal floats and trailing text are not.
 *
 * @param unit  for the message, e.g. "ns" or "Mops"; "" none.
 * @param v     the number on success; untouched on error.
 * @param err   on error, "path:line: key = 'value' is not a number in
 *   [min, max] unit" (with "0 or" when @p zero_ok).
 * @return 0 or -EINVAL.
 */
int dtxn_ini_number(const struct dtxn_ini *ini, const struct dtxn_ini_entry *e, double min,
		    double max, bool zero_ok, const char *unit, double *v, char *err,
		    size_t errlen);

/**
 * A file's stem: @p path without its directory and a final ".ini"
 * ("config/nic/cx5.ini" -> "cx5"), what the model readers name a model.
 *
 * @param name  filled, NUL-terminated, truncated to @p len - 1 characters.
 * @param len   size of @p name, bytes; at least 1.
 */
void dtxn_ini_stem(const char *path, char *name, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* DTXN_INI_H */
