/*
 * repair-anchor.c: the schema's anchoring in local repair (see
 * repair-private.h for the rooms).  A reading that moved where a string
 * ends is taken only where the schema anchors it (its strings end before
 * keys the schema knows); a quote read inside a string next to structure
 * stands only in a string the schema asks for (saop__rep_swallowed(), the
 * invariant every reading is checked against); and among several readings
 * the schema picks the one that fits.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "repair-private.h"

/*
 * The schema anchors strings: a reading of one whole value that moved
 * where a string ends (a quote read inside, a quote missing) must have
 * its strings end before a key the schema knows (saop__rep_anchored()).  Judged
 * here, during the search, so that a reading the schema rules out never
 * makes a reading it keeps look too costly.  Returns 1 anchored, 0 ruled
 * out, 2 when there is nothing to judge (no schema, no such repair, a
 * cut or several values, or a text jansson cannot hold).
 */
int
saop__rep_anchor_check(const struct lex *lx, const struct saop__buf *out)
{
	json_error_t je;
	json_t *v;
	int a;

	if (lx->schema == NULL || lx->truncated || lx->nvals != 1 ||
	    !(lx->repairs & (R_UNESCAPED_QUOTE | R_MISSING_CLOSE |
	    R_MISSING_OPEN)))
		return 2;
	if ((v = json_loadb(out->data, out->len, JSON_DECODE_ANY |
	    JSON_ALLOW_NUL, &je)) == NULL)
		return 2;
	a = saop__rep_anchored(lx->schema, v);
	json_decref(v);
	return a;
}

/*
 * Does the schema s ask for a string where its subschema n applies: does
 * n reject each of {}, [], null, true and 0?  (With {} as the schema,
 * anything fits: it asks for nothing.)  1 or 0, -1 out of memory.
 */
int
saop__rep_asks_string(const struct saop_schema *s, const struct sch_node *n)
{
	static const char *const probes[] = { "{}", "[]", "null", "true",
	    "0" };
	pcre2_match_data *md = NULL;
	json_error_t je;
	size_t k;
	int rc = 1;

	for (k = 0; k < sizeof(probes) / sizeof(probes[0]) && rc == 1; k++) {
		json_t *v = json_loads(probes[k], JSON_DECODE_ANY, &je);

		if (v == NULL)
			rc = -1;
		else if (saop__sch_item_valid(s, n, v, 0, &md))
			rc = 0;
		json_decref(v);
	}
	if (md != NULL)
		pcre2_match_data_free(md);
	return rc;
}

/*
 * Does the schema s name the property key[0..len) (strict JSON string
 * text, without its quotes) and ask for a string wherever it names it
 * (saop__rep_asks_string())?  A key with an escape is not looked up.
 * 1 or 0, -1 out of memory.
 */
static int
key_asks_string(const struct saop_schema *s, const char *key, size_t len)
{
	const struct sch_node *nd;
	size_t k, i;
	int found = 0, rc;

	if (memchr(key, '\\', len) != NULL)
		return 0;
	for (nd = s->all; nd != NULL; nd = nd->next_all)
		for (k = 0; k < nd->nkw; k++) {
			const struct sch_kw *kw = &nd->kw[k];

			if (kw->type != KW_PROPS)
				continue;
			for (i = 0; i < kw->u.props.nprops; i++) {
				const struct sch_named *p;

				p = &kw->u.props.props[i];
				if (strlen(p->name) != len ||
				    memcmp(p->name, key, len) != 0)
					continue;
				if ((rc = saop__rep_asks_string(s,
				    p->node)) != 1)
					return rc;
				found = 1;
			}
		}
	return found;
}

/*
 * The invariant of every reading, checked in keep() (which every reading
 * of every rule passes): no string swallows structure.  Each '\\"' inside
 * a string of the output out must be marked (struct mark) as an escaped
 * quote of the input (M_ESCAPED), a '"' in a string of other quotes
 * (M_INNER) or a quote read inside between words (M_PROSE).  A quote read
 * inside next to structure, or a closing quote whose place is in doubt
 * (M_ANCHOR), only stands in a string the schema anchors: the reading is
 * anchored (a is 1, see saop__rep_anchor_check()) and the string is the
 * value of a member whose key the schema names and asks a string for, or
 * the whole value where the schema asks for a string
 * (saop__rep_asks_string()).  Returns 1 when a string breaks it, 0 when
 * none does, -1 out of memory.
 */
int
saop__rep_swallowed(const struct lex *lx, const struct saop__buf *out, int a)
{
	const char *t = out->data;
	size_t n = out->len, i, m = 0, depth = 0, ks = 0, kl = 0, open;
	char prev = 0;
	int need, rc;

	for (i = 0; i < n; i++) {
		if (t[i] != '"') {
			if (t[i] == '{' || t[i] == '[')
				depth++;
			else if ((t[i] == '}' || t[i] == ']') && depth > 0)
				depth--;
			if (!is_space((unsigned char)t[i]))
				prev = t[i];
			continue;
		}
		open = i;
		need = 0;
		for (i++; i < n && t[i] != '"'; i++) {
			if (t[i] != '\\')
				continue;
			if (i + 1 < n && t[i + 1] == '"') {
				while (m < lx->nmarks && lx->marks[m].out < i)
					m++;
				/* A quote from nowhere: no. */
				if (m == lx->nmarks || lx->marks[m].out != i)
					return 1;
				if (lx->marks[m].kind == M_ANCHOR)
					need = 1;
			}
			i++;
		}
		while (m < lx->nmarks && lx->marks[m].out < i)
			m++;
		if (m < lx->nmarks && lx->marks[m].out == i &&
		    lx->marks[m].kind == M_ANCHOR)
			need = 1;
		if (need) {
			if (a != 1 || (depth > 0 && prev != ':'))
				return 1;
			rc = depth == 0 ? saop__rep_asks_string(lx->schema,
			    lx->schema->root) : key_asks_string(lx->schema,
			    t + ks, kl);
			if (rc != 1)
				return rc < 0 ? -1 : 1;
		}
		ks = open + 1;
		kl = i > open ? i - open - 1 : 0;
		prev = '"';
	}
	return 0;
}

/*
 * Does every object of v that has a key the schema names anywhere
 * (properties) have only such keys?  The anchor of saop-validate(1): a
 * string that swallowed a member, or a member made of a string's inside,
 * shows as a key the schema does not know beside keys it knows.  1 or 0.
 */
int
saop__rep_anchored(const struct saop_schema *s, const json_t *v)
{
	const char *key;
	json_t *m;
	size_t i, known = 0, unknown = 0;
	const struct sch_node *nd;

	if (json_is_array(v)) {
		json_array_foreach(v, i, m)
			if (!saop__rep_anchored(s, m))
				return 0;
		return 1;
	}
	if (!json_is_object(v))
		return 1;
	json_object_foreach((json_t *)v, key, m) {
		int found = 0;

		for (nd = s->all; nd != NULL && !found; nd = nd->next_all)
			for (i = 0; i < nd->nkw && !found; i++)
				if (nd->kw[i].type == KW_PROPS &&
				    nd->kw[i].u.props.propobj != NULL &&
				    json_object_get(nd->kw[i].u.props.propobj,
				    key) != NULL)
					found = 1;
		if (found)
			known++;
		else
			unknown++;
		if (!saop__rep_anchored(s, m))
			return 0;
	}
	return known == 0 || unknown == 0;
}

/*
 * Of the candidates c[0..n), the one the schema takes: the only one that
 * fits, or of those that fit the only one anchored (see saop__rep_anchored()).
 * Returns its index, -1 when none or several, -2 out of memory.
 */
int
saop__rep_schema_pick(const struct saop_schema *s, struct cand *c, size_t n)
{
	struct saop_err e;
	int fit[MAX_READINGS * 2], nfit = 0, pick = -1, nanch = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		json_t *errors = NULL;
		int rc;

		fit[k] = 0;
		if (c[k].v == NULL)
			continue;
		rc = saop_schema_validate(s, c[k].v, &errors, &e);
		json_decref(errors);
		if (rc == -SAOP_ENOMEM)
			return -2;
		if (rc == 1) {
			fit[k] = 1;
			nfit++;
			pick = (int)k;
		}
	}
	if (nfit <= 1)
		return pick;
	pick = -1;
	for (k = 0; k < n; k++)
		if (fit[k] && saop__rep_anchored(s, c[k].v)) {
			nanch++;
			pick = (int)k;
		}
	return nanch == 1 ? pick : -1;
}

/*
 * Does the string t[0..len) fit the schema s?  1, 0 (or not UTF-8), -1
 * out of memory.
 */
int
saop__rep_fits_string(const struct saop_schema *s, const char *t, size_t len)
{
	struct saop_err e;
	json_t *v, *errors = NULL;
	int rc;

	if ((v = json_stringn(t, len)) == NULL) {
		/* Not UTF-8 (no string), or no memory? */
		rc = (v = json_stringn_nocheck(t, len)) != NULL ? 0 : -1;
		json_decref(v);
		return rc;
	}
	rc = saop_schema_validate(s, v, &errors, &e);
	json_decref(errors);
	json_decref(v);
	return rc == -SAOP_ENOMEM ? -1 : rc == 1;
}
