/*
 * schema-eval.c: validating JSON values against a compiled schema: every
 * keyword's check, annotations for unevaluatedItems/Properties, the
 * dynamic scope of $dynamicRef, and error collection with JSON Pointers.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "schema-int.h"


/* One step of the instance path: a member name or an array index. */
struct seg {
	const char *key;	/* NULL: an index */
	size_t idx;
};

/* Annotations: what was evaluated, for unevaluated*. */
struct ann {
	const char **keys;
	size_t nkeys, capkeys;
	int all_props;
	size_t prefix;		/* items [0, prefix) were evaluated */
	int all_items;
	unsigned char *marks;	/* items evaluated by contains */
	size_t nmarks;
};

struct vctx {
	const struct saop_schema *s;
	int collect;		/* put errors in errors */
	json_t *errors;
	struct seg *path;
	size_t depth, cap;
	int path_heap, scope_heap;	/* grown from the stack to the heap */
	struct sch_res **scope;
	size_t nscope, scopecap;
	size_t evaldepth;
	pcre2_match_data *md;
	int code;		/* a failure that is not invalidity */
	/* SAOP_ELIMIT: where evaluation stopped (new string), and in what. */
	char *limit_path;
	const struct sch_node *limit_node;
};

static int eval(struct vctx *c, const struct sch_node *n, json_t *inst,
    struct ann *a);

/* ---- Annotations. ---- */

/* Free what a holds (not a itself). */
static void
ann_free(struct ann *a)
{
	free(a->keys);
	free(a->marks);
}

/*
 * 1 when a says the member key was evaluated (all_props, or key listed),
 * else 0.
 */
static int
ann_has(const struct ann *a, const char *key)
{
	size_t i;

	if (a->all_props)
		return 1;
	for (i = 0; i < a->nkeys; i++)
		if (a->keys[i] == key || strcmp(a->keys[i], key) == 0)
			return 1;
	return 0;
}

/*
 * Note in a (when not NULL) that the member key was evaluated; on ENOMEM
 * sets c->code.
 */
static void
ann_key(struct vctx *c, struct ann *a, const char *key)
{
	if (a == NULL || ann_has(a, key))
		return;
	if (a->nkeys == a->capkeys) {
		size_t nc = a->capkeys ? a->capkeys * 2 : 8;
		const char **k = realloc(a->keys, nc * sizeof(*k));

		if (k == NULL) {
			c->code = SAOP_ENOMEM;
			return;
		}
		a->keys = k;
		a->capkeys = nc;
	}
	a->keys[a->nkeys++] = key;
}

/*
 * Note in a (when not NULL) that item i of n was evaluated (by contains);
 * on ENOMEM sets c->code.
 */
static void
ann_mark(struct vctx *c, struct ann *a, size_t i, size_t n)
{
	if (a == NULL)
		return;
	if (a->marks == NULL) {
		if ((a->marks = calloc(n ? n : 1, 1)) == NULL) {
			c->code = SAOP_ENOMEM;
			return;
		}
		a->nmarks = n;
	}
	if (i < a->nmarks)
		a->marks[i] = 1;
}

/* Merge what b evaluated into a (when a is not NULL), and free b. */
static void
ann_merge(struct vctx *c, struct ann *a, struct ann *b)
{
	if (a != NULL) {
		size_t i;

		a->all_props |= b->all_props;
		a->all_items |= b->all_items;
		if (b->prefix > a->prefix)
			a->prefix = b->prefix;
		for (i = 0; i < b->nkeys; i++)
			ann_key(c, a, b->keys[i]);
		for (i = 0; i < b->nmarks; i++)
			if (b->marks[i])
				ann_mark(c, a, i, b->nmarks);
	}
	ann_free(b);
	memset(b, 0, sizeof(*b));
}

/* ---- Errors. ---- */

/*
 * Step the instance path into member key (or, key NULL, index idx),
 * moving the path to the heap when it fills.  Returns 0, or -1 with
 * c->code set.
 */
static int
push_key(struct vctx *c, const char *key, size_t idx)
{
	if (c->depth == c->cap) {
		size_t nc = c->cap * 2;
		struct seg *p;

		if (c->path_heap)
			p = realloc(c->path, nc * sizeof(*p));
		else if ((p = malloc(nc * sizeof(*p))) != NULL)
			memcpy(p, c->path, c->depth * sizeof(*p));
		if (p == NULL) {
			c->code = SAOP_ENOMEM;
			return -1;
		}
		c->path_heap = 1;
		c->path = p;
		c->cap = nc;
	}
	c->path[c->depth].key = key;
	c->path[c->depth].idx = idx;
	c->depth++;
	return 0;
}

#define PUSH(c, k, i) do { if (push_key((c), (k), (i)) != 0) return 0; } \
	while (0)
#define POP(c) ((c)->depth--)

/* The instance path as a JSON Pointer: a new string, or NULL (ENOMEM). */
static char *
path_string(const struct vctx *c)
{
	size_t len = 1, i;
	char *p, *o;

	for (i = 0; i < c->depth; i++)
		len += c->path[i].key != NULL ?
		    2 * strlen(c->path[i].key) + 1 : 24;
	if ((p = o = malloc(len)) == NULL)
		return NULL;
	for (i = 0; i < c->depth; i++) {
		const char *k;

		*o++ = '/';
		if ((k = c->path[i].key) == NULL) {
			o += sprintf(o, "%zu", c->path[i].idx);
			continue;
		}
		for (; *k != '\0'; k++)
			if (*k == '~')
				*o++ = '~', *o++ = '0';
			else if (*k == '/')
				*o++ = '~', *o++ = '1';
			else
				*o++ = *k;
	}
	*o = '\0';
	return p;
}

static void
emit(struct vctx *c, const struct sch_node *n, const char *kw,
    const char *fmt, ...) SAOP__PRINTF(4, 5);

/* Add an error at the current instance path for keyword kw of n. */
static void
emit(struct vctx *c, const struct sch_node *n, const char *kw,
    const char *fmt, ...)
{
	char msg[640], *path, *spath, *full;
	json_t *err;
	va_list ap;

	if (!c->collect || c->errors == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	path = path_string(c);
	spath = malloc(strlen(n->loc) + strlen(kw) * 2 + 2);
	full = malloc(sizeof(msg) + (path ? strlen(path) : 0) + 16);
	if (path == NULL || spath == NULL || full == NULL) {
		c->code = SAOP_ENOMEM;
		goto out;
	}
	sprintf(spath, "%s/%s", n->loc, kw);
	sprintf(full, "%s: %s", *path ? path : "(root)", msg);
	err = json_pack("{s:s, s:s, s:s, s:s}", "path", path, "keyword", kw,
	    "schema_path", spath, "message", full);
	if (err == NULL || json_array_append_new(c->errors, err) != 0)
		c->code = SAOP_ENOMEM;
out:
	free(path);
	free(spath);
	free(full);
}

/* A short JSON text of v for messages, into buf (size bytes): buf. */
static const char *
show(const json_t *v, char *buf, size_t size)
{
	char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (t == NULL) {
		snprintf(buf, size, "?");
		return buf;
	}
	if (strlen(t) >= size && size > 4)
		snprintf(buf, size, "%.*s...", (int)(size - 4), t);
	else
		snprintf(buf, size, "%s", t);
	free(t);
	return buf;
}

/* The JSON Schema type name of v ("integer" for a JSON integer). */
static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	default:
		return "null";
	}
}

/*
 * The types in bits as words ("string, array or null") into buf (size
 * bytes, truncated to fit).
 */
static void
types_text(unsigned bits, char *buf, size_t size)
{
	static const char *const names[] = { "null", "boolean", "object",
	    "array", "number", "string", "integer" };
	size_t i, len = 0, n = 0, total = 0;

	for (i = 0; i < 7; i++)
		if (bits & (1u << i))
			total++;
	buf[0] = '\0';
	for (i = 0; i < 7; i++) {
		if (!(bits & (1u << i)))
			continue;
		n++;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
		    n == 1 ? "" : n == total ? " or " : ", ", names[i]);
		if (len >= size)
			break;
	}
}

/* ---- Values. ---- */

/* 1 when v is a number with no fractional part (1.0 is), else 0. */
static int
is_integral(const json_t *v)
{
	double d;

	if (json_is_integer(v))
		return 1;
	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	return isfinite(d) && d == floor(d);
}

/* Compare two numbers: -1, 0, 1. */
static int
num_cmp(const json_t *a, const json_t *b)
{
	long double x, y;

	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t i = json_integer_value(a), j = json_integer_value(b);

		return i < j ? -1 : i > j;
	}
	x = json_is_integer(a) ? (long double)json_integer_value(a) :
	    (long double)json_real_value(a);
	y = json_is_integer(b) ? (long double)json_integer_value(b) :
	    (long double)json_real_value(b);
	return x < y ? -1 : x > y;
}

/* JSON Schema equality (1 == 1.0, objects by members): 1 or 0. */
static int
equal(const json_t *a, const json_t *b)
{
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_number(a) && json_is_number(b))
		return num_cmp(a, b) == 0;
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		    memcmp(json_string_value(a), json_string_value(b),
		    json_string_length(a)) == 0;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (i = 0; i < json_array_size(a); i++)
			if (!equal(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach((json_t *)(uintptr_t)a, key, v) {
			json_t *w = json_object_get(b, key);

			if (w == NULL || !equal(v, w))
				return 0;
		}
		return 1;
	default:
		return 1;
	}
}

/* 1 when v is a multiple of m (within 1e-9 for reals), else 0. */
static int
multiple_of(const json_t *v, const json_t *m)
{
	double q;

	if (json_is_integer(v) && json_is_integer(m))
		return json_integer_value(v) % json_integer_value(m) == 0;
	q = json_number_value(v) / json_number_value(m);
	if (!isfinite(q))
		return fmod(json_number_value(v), json_number_value(m)) == 0;
	return fabs(q - nearbyint(q)) < 1e-9;
}

/* ---- Keywords. ---- */

/*
 * Validate inst against sub with a child annotation, merged into a when
 * valid.  Returns 1 valid, 0 invalid.
 */
static int
eval_in_place(struct vctx *c, const struct sch_node *sub, json_t *inst,
    struct ann *a)
{
	struct ann child;
	int ok;

	if (a == NULL)
		return eval(c, sub, inst, NULL);
	memset(&child, 0, sizeof(child));
	ok = eval(c, sub, inst, &child);
	if (ok)
		ann_merge(c, a, &child);
	else
		ann_free(&child);
	return ok;
}

/*
 * anyOf/oneOf found no match: report the branch that came closest (one
 * whose errors are not a type mismatch at this place), after err.
 */
static void
report_branches(struct vctx *c, const struct sch_node *n,
    const struct sch_kw *k, json_t *inst)
{
	json_t *saved = c->errors, *best = NULL, *errs, *x;
	size_t i, j, bestscore = (size_t)-1, nt = 0;
	char *here = path_string(c);
	char types[256] = "";
	int tlen = 0;

	if (here == NULL) {
		c->code = SAOP_ENOMEM;
		return;
	}
	for (i = 0; i < k->u.list.n; i++) {
		size_t score;
		const char *typemsg = NULL;

		if ((c->errors = json_array()) == NULL) {
			c->code = SAOP_ENOMEM;
			break;
		}
		(void)eval(c, k->u.list.v[i], inst, NULL);
		errs = c->errors;
		score = json_array_size(errs);
		json_array_foreach(errs, j, x) {
			if (strcmp(json_string_value(json_object_get(x,
			    "path")), here) == 0 && strcmp(json_string_value(
			    json_object_get(x, "keyword")), "type") == 0) {
				score += 1000;
				typemsg = json_string_value(json_object_get(x,
				    "message"));
			}
		}
		if (typemsg != NULL && json_array_size(errs) == 1 &&
		    (typemsg = strstr(typemsg, "expected ")) != NULL) {
			const char *comma = strstr(typemsg, ", got");
			int l = comma ? (int)(comma - typemsg) - 9 : 0;

			if (l > 0 && (size_t)tlen + (size_t)l + 8 <
			    sizeof(types)) {
				tlen += snprintf(types + tlen, sizeof(types) -
				    (size_t)tlen, "%s%.*s", nt ? " or " : "", l,
				    typemsg + 9);
				nt++;
			}
		}
		if (score < bestscore) {
			json_decref(best);
			best = errs;
			bestscore = score;
		} else
			json_decref(errs);
	}
	c->errors = saved;
	if (nt == k->u.list.n)
		emit(c, n, k->name, "expected %s, got %s (%s)", types,
		    type_name(inst), k->name);
	else if (k->type == KW_ONEOF)
		emit(c, n, k->name, "must match exactly one of the %zu "
		    "schemas in oneOf, matched none; closest:",
		    k->u.list.n);
	else
		emit(c, n, k->name, "must match at least one of the %zu "
		    "schemas in anyOf, matched none; closest:", k->u.list.n);
	if (best != NULL && bestscore < 1000 && saved != NULL)
		json_array_extend(saved, best);
	json_decref(best);
	free(here);
}

/*
 * Check prefixItems and items (k) of n on the array inst, recording the
 * evaluated items in a.  Returns 1 valid, 0 invalid.
 */
static int
kw_items(struct vctx *c, const struct sch_node *n, const struct sch_kw *k,
    json_t *inst, struct ann *a)
{
	size_t size = json_array_size(inst), i, np = k->u.items.nprefix;
	int ok = 1;

	for (i = 0; i < size && i < np; i++) {
		PUSH(c, NULL, i);
		if (!eval(c, k->u.items.prefix[i], json_array_get(inst, i),
		    NULL))
			ok = 0;
		POP(c);
		if (!ok && !c->collect)
			return 0;
	}
	if (a != NULL && (i > a->prefix))
		a->prefix = i;
	if (k->u.items.rest == NULL || size <= np)
		return ok;
	if (k->u.items.rest->boolv == 0) {
		emit(c, n, k->u.items.rest_name, "must have at most %zu "
		    "item%s, has %zu", np, np == 1 ? "" : "s", size);
		return 0;
	}
	for (i = np; i < size; i++) {
		PUSH(c, NULL, i);
		if (!eval(c, k->u.items.rest, json_array_get(inst, i), NULL))
			ok = 0;
		POP(c);
		if (!ok && !c->collect)
			return 0;
	}
	if (a != NULL)
		a->all_items = 1;
	return ok;
}

/*
 * Check contains, minContains and maxContains (k) of n on the array inst,
 * marking the matching items in a.  Returns 1 valid, 0 invalid.
 */
static int
kw_contains(struct vctx *c, const struct sch_node *n,
    const struct sch_kw *k, json_t *inst, struct ann *a)
{
	size_t size = json_array_size(inst), i, found = 0;
	int collect = c->collect;

	c->collect = 0;
	for (i = 0; i < size; i++) {
		PUSH(c, NULL, i);
		if (eval(c, k->u.contains.node, json_array_get(inst, i),
		    NULL)) {
			found++;
			ann_mark(c, a, i, size);
		}
		POP(c);
		if (a == NULL && !k->u.contains.has_max &&
		    found >= k->u.contains.min)
			break;
	}
	c->collect = collect;
	if (found < k->u.contains.min) {
		emit(c, n, k->u.contains.min != 1 ? "minContains" : "contains",
		    "must contain at least %zu item%s matching 'contains', "
		    "has %zu", k->u.contains.min,
		    k->u.contains.min == 1 ? "" : "s", found);
		return 0;
	}
	if (k->u.contains.has_max && found > k->u.contains.max) {
		emit(c, n, "maxContains", "must contain at most %zu item%s "
		    "matching 'contains', has %zu", k->u.contains.max,
		    k->u.contains.max == 1 ? "" : "s", found);
		return 0;
	}
	return 1;
}

/*
 * Check properties, patternProperties and additionalProperties (k) of n
 * on the object inst, recording the evaluated members in a.  Returns 1
 * valid, 0 invalid.
 */
static int
kw_props(struct vctx *c, const struct sch_node *n, const struct sch_kw *k,
    json_t *inst, struct ann *a)
{
	const char *key;
	json_t *v;
	size_t i;
	int ok = 1;

	for (i = 0; i < k->u.props.nprops; i++) {
		const struct sch_named *p = &k->u.props.props[i];

		if ((v = json_object_get(inst, p->name)) == NULL)
			continue;
		PUSH(c, p->name, 0);
		if (!eval(c, p->node, v, NULL))
			ok = 0;
		POP(c);
		ann_key(c, a, p->name);
		if (!ok && !c->collect)
			return 0;
	}
	if (k->u.props.npats == 0 && k->u.props.additional == NULL)
		return ok;
	json_object_foreach(inst, key, v) {
		int matched = k->u.props.propobj != NULL &&
		    json_object_get(k->u.props.propobj, key) != NULL;

		for (i = 0; i < k->u.props.npats; i++) {
			const struct sch_pattern *p = &k->u.props.pats[i];

			if (saop__sch_match(&p->re, key, strlen(key),
			    &c->md) != 1)
				continue;
			matched = 1;
			PUSH(c, key, 0);
			if (!eval(c, p->node, v, NULL))
				ok = 0;
			POP(c);
			ann_key(c, a, key);
			if (!ok && !c->collect)
				return 0;
		}
		if (matched || k->u.props.additional == NULL)
			continue;
		if (k->u.props.additional->boolv == 0) {
			emit(c, n, "additionalProperties", "property '%s' is "
			    "not allowed", key);
			ok = 0;
		} else {
			PUSH(c, key, 0);
			if (!eval(c, k->u.props.additional, v, NULL))
				ok = 0;
			POP(c);
		}
		ann_key(c, a, key);
		if (!ok && !c->collect)
			return 0;
	}
	return ok;
}

/*
 * Check unevaluatedProperties or unevaluatedItems (k) of n on inst against
 * what a says was evaluated; then all of inst counts as evaluated.
 * Returns 1 valid, 0 invalid.
 */
static int
kw_uneval(struct vctx *c, const struct sch_node *n, const struct sch_kw *k,
    json_t *inst, struct ann *a)
{
	size_t i, size;
	int ok = 1;

	if (k->type == KW_UNEVALPROPS) {
		const char *key;
		json_t *v;

		if (!json_is_object(inst))
			return 1;
		json_object_foreach(inst, key, v) {
			if (ann_has(a, key))
				continue;
			if (k->u.node->boolv == 0) {
				emit(c, n, k->name, "property '%s' is not "
				    "allowed", key);
				ok = 0;
			} else {
				PUSH(c, key, 0);
				if (!eval(c, k->u.node, v, NULL))
					ok = 0;
				POP(c);
			}
			if (!ok && !c->collect)
				return 0;
		}
		a->all_props = 1;
		return ok;
	}
	if (!json_is_array(inst) || a->all_items)
		return 1;
	size = json_array_size(inst);
	for (i = a->prefix; i < size; i++) {
		if (i < a->nmarks && a->marks[i])
			continue;
		PUSH(c, NULL, i);
		if (k->u.node->boolv == 0) {
			emit(c, n, k->name, "item %zu is not allowed", i);
			ok = 0;
		} else if (!eval(c, k->u.node, json_array_get(inst, i), NULL))
			ok = 0;
		POP(c);
		if (!ok && !c->collect)
			return 0;
	}
	a->all_items = 1;
	return ok;
}

/*
 * Set *t to the schema $dynamicRef k goes to: the outermost dynamic
 * anchor of its name in the dynamic scope, else its static target.
 */
static void
kw_dynref(const struct vctx *c, const struct sch_kw *k,
    const struct sch_node **t)
{
	size_t i;

	*t = k->u.ref.target;
	if (k->u.ref.anchor == NULL)
		return;
	for (i = 0; i < c->nscope; i++) {
		struct sch_anchor *an;

		for (an = c->scope[i]->anchors; an != NULL; an = an->next)
			if (an->dynamic && strcmp(an->name,
			    k->u.ref.anchor) == 0) {
				*t = an->node;
				return;
			}
	}
}

/* Check keyword k of n on inst: 1 valid, 0 invalid. */
static int
kw_eval(struct vctx *c, const struct sch_node *n, const struct sch_kw *k,
    json_t *inst, struct ann *a)
{
	char buf[160];
	size_t i, j, size;
	int ok = 1, cnt;

	switch (k->type) {
	case KW_REF:
		return eval_in_place(c, k->u.ref.target, inst, a);
	case KW_DYNREF: {
		const struct sch_node *t;

		kw_dynref(c, k, &t);
		return eval_in_place(c, t, inst, a);
	}
	case KW_TYPE: {
		unsigned t = k->u.types;

		switch (json_typeof(inst)) {
		case JSON_OBJECT:
			ok = (t & SCH_TOBJECT) != 0;
			break;
		case JSON_ARRAY:
			ok = (t & SCH_TARRAY) != 0;
			break;
		case JSON_STRING:
			ok = (t & SCH_TSTRING) != 0;
			break;
		case JSON_INTEGER:
			ok = (t & (SCH_TNUMBER | SCH_TINTEGER)) != 0;
			break;
		case JSON_REAL:
			ok = (t & SCH_TNUMBER) != 0 ||
			    ((t & SCH_TINTEGER) && is_integral(inst));
			break;
		case JSON_TRUE:
		case JSON_FALSE:
			ok = (t & SCH_TBOOL) != 0;
			break;
		default:
			ok = (t & SCH_TNULL) != 0;
		}
		if (!ok) {
			types_text(t, buf, sizeof(buf));
			emit(c, n, "type", "expected %s, got %s", buf,
			    type_name(inst));
		}
		return ok;
	}
	case KW_ENUM:
		for (i = 0; i < json_array_size(k->u.value); i++)
			if (equal(inst, json_array_get(k->u.value, i)))
				return 1;
		emit(c, n, "enum", "must be one of %s",
		    show(k->u.value, buf, sizeof(buf)));
		return 0;
	case KW_CONST:
		if (equal(inst, k->u.value))
			return 1;
		emit(c, n, "const", "must be %s",
		    show(k->u.value, buf, sizeof(buf)));
		return 0;
	case KW_MULTIPLEOF:
		if (!json_is_number(inst) || multiple_of(inst, k->u.value))
			return 1;
		emit(c, n, k->name, "must be a multiple of %s",
		    show(k->u.value, buf, sizeof(buf)));
		return 0;
	case KW_MAXIMUM:
	case KW_EXMAXIMUM:
	case KW_MINIMUM:
	case KW_EXMINIMUM:
		if (!json_is_number(inst))
			return 1;
		cnt = num_cmp(inst, k->u.value);
		ok = k->type == KW_MAXIMUM ? cnt <= 0 :
		    k->type == KW_EXMAXIMUM ? cnt < 0 :
		    k->type == KW_MINIMUM ? cnt >= 0 : cnt > 0;
		if (!ok) {
			char got[64];

			emit(c, n, k->name, "must be %s %s, got %s",
			    k->type == KW_MAXIMUM ? "<=" :
			    k->type == KW_EXMAXIMUM ? "<" :
			    k->type == KW_MINIMUM ? ">=" : ">",
			    show(k->u.value, buf, sizeof(buf)),
			    show(inst, got, sizeof(got)));
		}
		return ok;
	case KW_MAXLENGTH:
	case KW_MINLENGTH:
		if (!json_is_string(inst))
			return 1;
		size = saop__utf8_count(json_string_value(inst),
		    json_string_length(inst));
		if (k->type == KW_MAXLENGTH ? size <= k->u.count :
		    size >= k->u.count)
			return 1;
		emit(c, n, k->name, "must be at %s %zu character%s long, "
		    "has %zu", k->type == KW_MAXLENGTH ? "most" : "least",
		    k->u.count, k->u.count == 1 ? "" : "s", size);
		return 0;
	case KW_PATTERN:
		if (!json_is_string(inst))
			return 1;
		cnt = saop__sch_match(&k->u.re, json_string_value(inst),
		    json_string_length(inst), &c->md);
		if (cnt < 0) {
			c->code = SAOP_ENOMEM;
			return 0;
		}
		if (cnt == 1)
			return 1;
		emit(c, n, "pattern", "must match the pattern '%s'",
		    k->u.re.src);
		return 0;
	case KW_FORMAT:
		if (!json_is_string(inst) || saop__sch_format_check(k->u.fmt,
		    json_string_value(inst), json_string_length(inst)))
			return 1;
		emit(c, n, "format", "is not a valid %s",
		    saop__sch_format_name(k->u.fmt));
		return 0;
	case KW_MAXITEMS:
	case KW_MINITEMS:
		if (!json_is_array(inst))
			return 1;
		size = json_array_size(inst);
		if (k->type == KW_MAXITEMS ? size <= k->u.count :
		    size >= k->u.count)
			return 1;
		emit(c, n, k->name, "must have at %s %zu item%s, has %zu",
		    k->type == KW_MAXITEMS ? "most" : "least", k->u.count,
		    k->u.count == 1 ? "" : "s", size);
		return 0;
	case KW_MAXPROPS:
	case KW_MINPROPS:
		if (!json_is_object(inst))
			return 1;
		size = json_object_size(inst);
		if (k->type == KW_MAXPROPS ? size <= k->u.count :
		    size >= k->u.count)
			return 1;
		emit(c, n, k->name, "must have at %s %zu propert%s, has %zu",
		    k->type == KW_MAXPROPS ? "most" : "least", k->u.count,
		    k->u.count == 1 ? "y" : "ies", size);
		return 0;
	case KW_UNIQUEITEMS:
		if (!json_is_array(inst))
			return 1;
		size = json_array_size(inst);
		for (i = 0; i < size; i++)
			for (j = i + 1; j < size; j++)
				if (equal(json_array_get(inst, i),
				    json_array_get(inst, j))) {
					emit(c, n, "uniqueItems", "items %zu "
					    "and %zu are equal; items must "
					    "be unique", i, j);
					return 0;
				}
		return 1;
	case KW_REQUIRED:
		if (!json_is_object(inst))
			return 1;
		for (i = 0; i < k->u.names.n; i++)
			if (json_object_get(inst, k->u.names.v[i]) == NULL) {
				emit(c, n, "required", "required property "
				    "'%s' is missing", k->u.names.v[i]);
				ok = 0;
				if (!c->collect)
					return 0;
			}
		return ok;
	case KW_DEPREQUIRED:
		if (!json_is_object(inst))
			return 1;
		for (i = 0; i < k->u.deps.n; i++) {
			const struct sch_named *d = &k->u.deps.v[i];
			json_t *x;

			if (json_object_get(inst, d->name) == NULL)
				continue;
			json_array_foreach(d->list, j, x) {
				if (!json_is_string(x) || json_object_get(inst,
				    json_string_value(x)) != NULL)
					continue;
				emit(c, n, k->name, "property '%s' is required "
				    "when '%s' is present",
				    json_string_value(x), d->name);
				ok = 0;
				if (!c->collect)
					return 0;
			}
		}
		return ok;
	case KW_DEPSCHEMAS:
		if (!json_is_object(inst))
			return 1;
		for (i = 0; i < k->u.deps.n; i++) {
			if (json_object_get(inst, k->u.deps.v[i].name) == NULL)
				continue;
			if (!eval_in_place(c, k->u.deps.v[i].node, inst, a)) {
				ok = 0;
				if (!c->collect)
					return 0;
			}
		}
		return ok;
	case KW_ALLOF:
		for (i = 0; i < k->u.list.n; i++)
			if (!eval_in_place(c, k->u.list.v[i], inst, a)) {
				ok = 0;
				if (!c->collect)
					return 0;
			}
		return ok;
	case KW_ANYOF:
	case KW_ONEOF: {
		int collect = c->collect;
		size_t first = 0;

		c->collect = 0;
		cnt = 0;
		for (i = 0; i < k->u.list.n; i++) {
			if (!eval_in_place(c, k->u.list.v[i], inst, a))
				continue;
			if (cnt++ == 0)
				first = i;
			if (k->type == KW_ANYOF ? a == NULL : cnt > 1)
				break;
		}
		c->collect = collect;
		if (k->type == KW_ANYOF ? cnt > 0 : cnt == 1)
			return 1;
		if (!collect)
			return 0;
		if (cnt > 1)
			emit(c, n, "oneOf", "must match exactly one of the "
			    "%zu schemas in oneOf, matched %zu and %zu",
			    k->u.list.n, first, i);
		else
			report_branches(c, n, k, inst);
		return 0;
	}
	case KW_NOT: {
		int collect = c->collect;

		c->collect = 0;
		ok = !eval(c, k->u.node, inst, NULL);
		c->collect = collect;
		if (!ok)
			emit(c, n, "not", "must not match the schema in 'not'");
		return ok;
	}
	case KW_IF: {
		int collect = c->collect;

		c->collect = 0;
		ok = eval_in_place(c, k->u.cond.cond, inst, a);
		c->collect = collect;
		if (ok)
			return k->u.cond.then == NULL ? 1 :
			    eval_in_place(c, k->u.cond.then, inst, a);
		return k->u.cond.els == NULL ? 1 :
		    eval_in_place(c, k->u.cond.els, inst, a);
	}
	case KW_ITEMS:
		return !json_is_array(inst) ? 1 : kw_items(c, n, k, inst, a);
	case KW_CONTAINS:
		return !json_is_array(inst) ? 1 :
		    kw_contains(c, n, k, inst, a);
	case KW_PROPS:
		return !json_is_object(inst) ? 1 : kw_props(c, n, k, inst, a);
	case KW_PROPNAMES: {
		const char *key;
		json_t *v;

		if (!json_is_object(inst))
			return 1;
		json_object_foreach(inst, key, v) {
			json_t *name;

			if ((name = json_string(key)) == NULL) {
				c->code = SAOP_ENOMEM;
				return 0;
			}
			PUSH(c, key, 0);
			if (!eval(c, k->u.node, name, NULL))
				ok = 0;
			POP(c);
			json_decref(name);
			if (!ok && !c->collect)
				return 0;
		}
		return ok;
	}
	case KW_UNEVALITEMS:
	case KW_UNEVALPROPS:
		return kw_uneval(c, n, k, inst, a);
	}
	return 1;
}

/* Validate inst against n: 1 valid, 0 invalid (errors when collecting). */
static int
eval(struct vctx *c, const struct sch_node *n, json_t *inst, struct ann *a)
{
	struct ann local;
	size_t i;
	int ok = 1, pushed = 0;

	if (n->boolv >= 0) {
		if (n->boolv)
			return 1;
		if (c->depth > 0 && c->path[c->depth - 1].key != NULL)
			emit(c, n, "false", "property '%s' is not allowed",
			    c->path[c->depth - 1].key);
		else if (c->depth > 0)
			emit(c, n, "false", "item %zu is not allowed",
			    c->path[c->depth - 1].idx);
		else
			emit(c, n, "false", "no value is allowed here");
		return 0;
	}
	if (c->code != 0)
		return 0;
	if (++c->evaldepth > SAOP_MAX_EVAL_DEPTH) {
		/* A verdict on the value (see limit_errors), not a failure. */
		c->code = SAOP_ELIMIT;
		c->evaldepth--;
		if (c->limit_path == NULL) {
			c->limit_node = n;
			if ((c->limit_path = path_string(c)) == NULL)
				c->code = SAOP_ENOMEM;
		}
		return 0;
	}
	if (c->nscope == 0 || c->scope[c->nscope - 1] != n->res) {
		if (c->nscope == c->scopecap) {
			size_t nc = c->scopecap * 2;
			struct sch_res **p;

			if (c->scope_heap)
				p = realloc(c->scope, nc * sizeof(*p));
			else if ((p = malloc(nc * sizeof(*p))) != NULL)
				memcpy(p, c->scope, c->nscope * sizeof(*p));
			if (p == NULL) {
				c->code = SAOP_ENOMEM;
				c->evaldepth--;
				return 0;
			}
			c->scope = p;
			c->scope_heap = 1;
			c->scopecap = nc;
		}
		c->scope[c->nscope++] = n->res;
		pushed = 1;
	}
	if (n->uneval && a == NULL) {
		memset(&local, 0, sizeof(local));
		a = &local;
	}
	for (i = 0; i < n->nkw; i++) {
		if (!kw_eval(c, n, &n->kw[i], inst, a)) {
			ok = 0;
			if (!c->collect || c->code != 0)
				break;
		}
	}
	if (a == &local)
		ann_free(&local);
	if (pushed)
		c->nscope--;
	c->evaldepth--;
	return ok;
}

/*
 * The errors of a value whose evaluation nested deeper than
 * SAOP_MAX_EVAL_DEPTH: one "limit" error at the instance path where it
 * stopped (c->limit_path).  A new array, or NULL when out of memory.
 */
static json_t *
limit_errors(const struct vctx *c)
{
	const char *loc = c->limit_node->loc;
	json_t *errs, *err;
	char msg[256];

	snprintf(msg, sizeof(msg), "the value nests too deep to validate: "
	    "evaluation stopped here, %d schemas deep (saop's limit), at "
	    "schema %s%s", SAOP_MAX_EVAL_DEPTH, loc[0] == '/' ||
	    loc[0] == '\0' ? "#" : "", loc);
	err = json_pack("{s:s, s:s, s:s, s:s}", "path", c->limit_path,
	    "keyword", "limit", "schema_path", loc, "message", msg);
	if (err == NULL || (errs = json_array()) == NULL) {
		json_decref(err);
		return NULL;
	}
	if (json_array_append_new(errs, err) != 0) {
		json_decref(errs);
		return NULL;
	}
	return errs;
}

/*
 * Validate instance against s, collecting errors into *errors when not
 * NULL (see saop.h).  Returns 1 valid, 0 invalid, or a negative
 * saop_errcode with e set.
 */
int
saop_schema_validate(const struct saop_schema *s, const json_t *instance,
    json_t **errors, struct saop_err *e)
{
	struct seg segs[32];
	struct sch_res *scope[16];
	struct vctx c;
	json_t *inst = (json_t *)(uintptr_t)instance;
	int ok;

	if (errors != NULL)
		*errors = NULL;
	if (s == NULL || instance == NULL)
		return saop__fail(e, SAOP_EINTERNAL, 0, "no schema or value");
	memset(&c, 0, sizeof(c));
	c.s = s;
	/* The path and the scope start on the stack; they grow on the heap. */
	c.path = segs;
	c.cap = sizeof(segs) / sizeof(segs[0]);
	c.scope = scope;
	c.scopecap = sizeof(scope) / sizeof(scope[0]);
	ok = eval(&c, s->root, inst, NULL);
	if (!ok && c.code == 0 && errors != NULL) {
		/* Run again, collecting every error. */
		c.collect = 1;
		c.depth = c.nscope = c.evaldepth = 0;
		if ((c.errors = json_array()) == NULL)
			c.code = SAOP_ENOMEM;
		else
			(void)eval(&c, s->root, inst, NULL);
	}
	if (c.path_heap)
		free(c.path);
	if (c.scope_heap)
		free(c.scope);
	if (c.md != NULL)
		pcre2_match_data_free(c.md);
	if (c.code == SAOP_ELIMIT) {
		/* Too deep to judge: invalid, with the one error that says so. */
		json_decref(c.errors);
		c.errors = NULL;
		if (errors != NULL && (c.errors = limit_errors(&c)) == NULL)
			c.code = SAOP_ENOMEM;
		else
			ok = 0;
	}
	free(c.limit_path);
	if (c.code != 0 && c.code != SAOP_ELIMIT) {
		json_decref(c.errors);
		return saop__fail(e, c.code, ENOMEM, "out of memory");
	}
	if (ok)
		return 1;
	if (errors != NULL)
		*errors = c.errors;
	return 0;
}

/*
 * The schema every item of a top-level array must match, when that is all
 * the root judges (see schema-int.h), with the count limits in *min and
 * *max.  Returns it, or NULL.
 */
const struct sch_node *
saop__sch_items_schema(const struct saop_schema *s, size_t *min,
    size_t *max)
{
	const struct sch_node *n = s->root, *items = NULL;
	size_t i;

	*min = 0;
	*max = SIZE_MAX;
	if (n == NULL || n->boolv >= 0 || n->uneval)
		return NULL;
	for (i = 0; i < n->nkw; i++) {
		const struct sch_kw *k = &n->kw[i];

		switch (k->type) {
		case KW_TYPE:
			if ((k->u.types & SCH_TARRAY) == 0)
				return NULL;
			break;
		case KW_ITEMS:
			if (k->u.items.nprefix != 0 ||
			    k->u.items.rest == NULL ||
			    k->u.items.rest->boolv == 0 || items != NULL)
				return NULL;
			items = k->u.items.rest;
			break;
		case KW_MINITEMS:
			if (k->u.count > *min)
				*min = k->u.count;
			break;
		case KW_MAXITEMS:
			if (k->u.count < *max)
				*max = k->u.count;
			break;
		default:
			return NULL;
		}
	}
	return items;
}

/*
 * Validate item idx of the root array against n as the whole validation
 * would (see schema-int.h).  Returns 1 when it matches, else 0.
 */
int
saop__sch_item_valid(const struct saop_schema *s, const struct sch_node *n,
    json_t *item, size_t idx, pcre2_match_data **md)
{
	struct seg segs[32];
	struct sch_res *scope[16];
	struct vctx c;
	int ok;

	/* As eval(root) then kw_items would: root in scope, one level in. */
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.path = segs;
	c.cap = sizeof(segs) / sizeof(segs[0]);
	c.scope = scope;
	c.scopecap = sizeof(scope) / sizeof(scope[0]);
	c.scope[c.nscope++] = s->root->res;
	c.evaldepth = 1;
	c.md = *md;
	c.path[c.depth].key = NULL;
	c.path[c.depth].idx = idx;
	c.depth++;
	ok = eval(&c, n, item, NULL);
	*md = c.md;
	free(c.limit_path);
	if (c.path_heap)
		free(c.path);
	if (c.scope_heap)
		free(c.scope);
	return ok && c.code == 0;
}

/* What stream_item() checks each item of an array with. */
struct stream {
	const struct saop_schema *s;
	const struct sch_node *items;
	pcre2_match_data *md;
};

/* saop__json_fast_items' callback: 0 when item i is valid, else 1. */
static int
stream_item(void *arg, json_t *item, size_t i)
{
	struct stream *st = arg;

	return saop__sch_item_valid(st->s, st->items, item, i, &st->md) ? 0 :
	    1;
}

/*
 * See saop.h: is text one array the root schema judges item by item
 * (type, items, min/maxItems), all valid?  Then no tree of the whole is
 * needed: each item is parsed, checked and dropped.  Returns 1, or 0 for
 * "not known" (the caller validates the whole value).
 */
int
saop_schema_valid_items(const struct saop_schema *s, const char *text, size_t len)
{
	struct stream st;
	size_t min, max, n;
	int rc;

	if ((st.items = saop__sch_items_schema(s, &min, &max)) == NULL)
		return 0;
	st.s = s;
	st.md = NULL;
	rc = saop__json_fast_items(text, len, stream_item, &st, &n);
	if (st.md != NULL)
		pcre2_match_data_free(st.md);
	return rc == 0 && n >= min && n <= max;
}
