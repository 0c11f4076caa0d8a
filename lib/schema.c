/*
 * schema.c: compiling JSON Schema (draft 2020-12 and draft-07) into a tree
 * of nodes with keyword handlers; base URIs, $id, $anchor, $dynamicAnchor
 * and $ref resolution (RFC 3986), remote documents through ref dirs and
 * file URIs, and the embedded metaschemas.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema-int.h"

#define BLOCK_SIZE	16384

/* ---- Arena. ---- */

/*
 * n zeroed bytes, 16-aligned, from s's arena (freed with s).  Returns them,
 * or NULL when out of memory.
 */
void *
saop__sch_alloc(struct saop_schema *s, size_t n)
{
	struct sch_block *b = s->blocks;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (b == NULL || b->size - b->used < n) {
		size_t size = n > BLOCK_SIZE ? n : BLOCK_SIZE;

		if ((b = malloc(sizeof(*b) + size + 16)) == NULL)
			return NULL;
		b->mem = (unsigned char *)(((uintptr_t)(b + 1) + 15) &
		    ~(uintptr_t)15);
		b->size = size;
		b->used = 0;
		b->next = s->blocks;
		s->blocks = b;
	}
	p = b->mem + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

/*
 * A copy of str in s's arena (freed with s).  Returns it, or NULL when out
 * of memory.
 */
char *
saop__sch_strdup(struct saop_schema *s, const char *str)
{
	size_t n = strlen(str) + 1;
	char *p = saop__sch_alloc(s, n);

	if (p != NULL)
		memcpy(p, str, n);
	return p;
}

/* ---- URIs (RFC 3986). ---- */

struct uri {
	const char *scheme, *auth, *path, *query, *frag;
	size_t lscheme, lauth, lpath, lquery, lfrag;
	int has_scheme, has_auth, has_query, has_frag;
};

/* Split the URI reference s into *u's components (pointers into s). */
static void
uri_parse(const char *s, struct uri *u)
{
	const char *p = s, *e;

	memset(u, 0, sizeof(*u));
	for (e = p; *e != '\0' && strchr(":/?#", *e) == NULL; e++)
		;
	if (*e == ':' && e > p) {
		u->has_scheme = 1;
		u->scheme = p;
		u->lscheme = (size_t)(e - p);
		p = e + 1;
	}
	if (p[0] == '/' && p[1] == '/') {
		p += 2;
		u->has_auth = 1;
		u->auth = p;
		while (*p != '\0' && strchr("/?#", *p) == NULL)
			p++;
		u->lauth = (size_t)(p - u->auth);
	}
	u->path = p;
	while (*p != '\0' && *p != '?' && *p != '#')
		p++;
	u->lpath = (size_t)(p - u->path);
	if (*p == '?') {
		u->has_query = 1;
		u->query = ++p;
		while (*p != '\0' && *p != '#')
			p++;
		u->lquery = (size_t)(p - u->query);
	}
	if (*p == '#') {
		u->has_frag = 1;
		u->frag = p + 1;
		u->lfrag = strlen(p + 1);
	}
}

/* Remove dot segments from path (in place, NUL-terminated). */
static void
remove_dots(char *path)
{
	char *in = path, *out = path;

	while (*in != '\0') {
		if (strncmp(in, "../", 3) == 0)
			in += 3;
		else if (strncmp(in, "./", 2) == 0)
			in += 2;
		else if (strncmp(in, "/./", 3) == 0)
			in += 2;
		else if (strcmp(in, "/.") == 0)
			in[1] = '\0';
		else if (strncmp(in, "/../", 4) == 0 ||
		    strcmp(in, "/..") == 0) {
			if (in[3] == '\0')
				in[2] = '/', in += 2;
			else
				in += 3;
			while (out > path && *--out != '/')
				;
		} else if (strcmp(in, ".") == 0 || strcmp(in, "..") == 0)
			in += strlen(in);
		else {
			do
				*out++ = *in++;
			while (*in != '\0' && *in != '/');
		}
	}
	*out = '\0';
}

/* Append the n bytes at p to buf (*len bytes long), NUL-terminated. */
static void
cat(char *buf, size_t *len, const char *p, size_t n)
{
	memcpy(buf + *len, p, n);
	*len += n;
	buf[*len] = '\0';
}

/*
 * Resolve ref against base (RFC 3986 section 5.2).  Returns a new string
 * (free()), or NULL on ENOMEM.
 */
static char *
uri_resolve(const char *base, const char *ref)
{
	struct uri b, r;
	char *out, *path;
	size_t cap, len = 0, plen;

	uri_parse(base != NULL ? base : "", &b);
	uri_parse(ref, &r);
	cap = strlen(base != NULL ? base : "") + strlen(ref) + 8;
	if ((out = malloc(cap)) == NULL || (path = malloc(cap)) == NULL) {
		free(out);
		return NULL;
	}
	out[0] = path[0] = '\0';
	plen = 0;
	if (r.has_scheme) {
		cat(out, &len, r.scheme, r.lscheme + 1);
		if (r.has_auth) {
			cat(out, &len, "//", 2);
			cat(out, &len, r.auth, r.lauth);
		}
		cat(path, &plen, r.path, r.lpath);
		remove_dots(path);
	} else {
		if (b.has_scheme)
			cat(out, &len, b.scheme, b.lscheme + 1);
		if (r.has_auth) {
			cat(out, &len, "//", 2);
			cat(out, &len, r.auth, r.lauth);
			cat(path, &plen, r.path, r.lpath);
			remove_dots(path);
		} else {
			if (b.has_auth) {
				cat(out, &len, "//", 2);
				cat(out, &len, b.auth, b.lauth);
			}
			if (r.lpath == 0) {
				cat(path, &plen, b.path, b.lpath);
				if (!r.has_query && b.has_query) {
					r.has_query = 1;
					r.query = b.query;
					r.lquery = b.lquery;
				}
			} else if (r.path[0] == '/') {
				cat(path, &plen, r.path, r.lpath);
				remove_dots(path);
			} else {
				size_t keep = b.lpath;

				if (b.has_auth && b.lpath == 0)
					cat(path, &plen, "/", 1);
				else {
					while (keep > 0 &&
					    b.path[keep - 1] != '/')
						keep--;
					cat(path, &plen, b.path, keep);
				}
				cat(path, &plen, r.path, r.lpath);
				remove_dots(path);
			}
		}
	}
	cat(out, &len, path, strlen(path));
	if (r.has_query) {
		cat(out, &len, "?", 1);
		cat(out, &len, r.query, r.lquery);
	}
	if (r.has_frag) {
		cat(out, &len, "#", 1);
		cat(out, &len, r.frag, r.lfrag);
	}
	free(path);
	return out;
}

/* The value of the hex digit c, or -1 when c is not one. */
static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode s in place. */
static void
pct_decode(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++) {
		if (s[0] == '%' && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
			*o++ = (char)(hexval(s[1]) * 16 + hexval(s[2]));
			s += 2;
		} else
			*o++ = *s;
	}
	*o = '\0';
}

/* ---- Nodes and resources. ---- */

/* The bucket, of size (a power of two) buckets, for the pointer p. */
static size_t
ptrhash(const void *p, size_t size)
{
	uintptr_t v = (uintptr_t)p;

	v ^= v >> 17;
	v *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(v >> 7) & (size - 1);
}

/* The node made for the JSON value js, or NULL when there is none yet. */
static struct sch_node *
node_find(const struct saop_schema *s, const json_t *js)
{
	struct sch_node *n;

	if (s->hsize == 0)
		return NULL;
	for (n = s->hash[ptrhash(js, s->hsize)]; n != NULL; n = n->hnext)
		if (n->js == js)
			return n;
	return NULL;
}

/*
 * Add n to s's node table (keyed by n->js), growing it as it fills.
 * Returns 0, or -1 when out of memory.
 */
static int
hash_add(struct saop_schema *s, struct sch_node *n)
{
	size_t i;

	if (s->hcount * 2 >= s->hsize) {
		size_t nsize = s->hsize ? s->hsize * 2 : 256;
		struct sch_node **nh = calloc(nsize, sizeof(*nh));
		struct sch_node *m, *next;

		if (nh == NULL)
			return -1;
		for (i = 0; i < s->hsize; i++)
			for (m = s->hash[i]; m != NULL; m = next) {
				size_t h = ptrhash(m->js, nsize);

				next = m->hnext;
				m->hnext = nh[h];
				nh[h] = m;
			}
		free(s->hash);
		s->hash = nh;
		s->hsize = nsize;
	}
	i = ptrhash(n->js, s->hsize);
	n->hnext = s->hash[i];
	s->hash[i] = n;
	s->hcount++;
	return 0;
}

/* The resource of absolute URI uri (no fragment), or NULL. */
static struct sch_res *
res_find(const struct saop_schema *s, const char *uri)
{
	struct sch_res *r;

	for (r = s->resources; r != NULL; r = r->next)
		if (strcmp(r->uri, uri) == 0)
			return r;
	return NULL;
}

/*
 * Find or add the resource uri, rooted at root (when it has no root yet).
 * Returns it, or NULL when out of memory.
 */
static struct sch_res *
res_add(struct saop_schema *s, const char *uri, struct sch_node *root)
{
	struct sch_res *r;

	if ((r = res_find(s, uri)) != NULL) {
		if (r->root == NULL)
			r->root = root;
		return r;
	}
	if ((r = saop__sch_alloc(s, sizeof(*r))) == NULL ||
	    (r->uri = saop__sch_strdup(s, uri)) == NULL)
		return NULL;
	r->root = root;
	r->next = s->resources;
	s->resources = r;
	return r;
}

/*
 * Register name in r as an anchor ($dynamicAnchor when dynamic) of n.
 * Returns 0, or -1 when out of memory.
 */
static int
anchor_add(struct saop_schema *s, struct sch_res *r, const char *name,
    struct sch_node *n, int dynamic)
{
	struct sch_anchor *a;

	if ((a = saop__sch_alloc(s, sizeof(*a))) == NULL ||
	    (a->name = saop__sch_strdup(s, name)) == NULL)
		return -1;
	a->node = n;
	a->dynamic = dynamic;
	a->next = r->anchors;
	r->anchors = a;
	return 0;
}

/* The anchor called name in r, or NULL. */
static struct sch_anchor *
anchor_find(const struct sch_res *r, const char *name)
{
	struct sch_anchor *a;

	for (a = r->anchors; a != NULL; a = a->next)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}

/* Compile-time context. */
struct cc {
	struct saop_schema *s;
	struct saop_err *e;
	struct sch_node *tail;
};

#define FAIL(cc, ...) saop__fail((cc)->e, SAOP_ECONFIG, 0, __VA_ARGS__)
#define NOMEM(cc) saop__fail((cc)->e, SAOP_ENOMEM, ENOMEM, "out of memory")

/*
 * loc + "/" + key, the key escaped as a JSON Pointer token.  Returns it
 * (in the arena), or NULL.
 */
static const char *
loc_join(struct cc *cc, const char *loc, const char *key)
{
	size_t n = strlen(loc), k = strlen(key), i;
	char *p, *o;

	if ((p = saop__sch_alloc(cc->s, n + 2 * k + 2)) == NULL)
		return NULL;
	memcpy(p, loc, n);
	o = p + n;
	*o++ = '/';
	for (i = 0; i < k; i++) {
		if (key[i] == '~')
			*o++ = '~', *o++ = '0';
		else if (key[i] == '/')
			*o++ = '~', *o++ = '1';
		else
			*o++ = key[i];
	}
	*o = '\0';
	return p;
}

/* loc + "/" + the index i.  Returns it (in the arena), or NULL. */
static const char *
loc_index(struct cc *cc, const char *loc, size_t i)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%zu", i);
	return loc_join(cc, loc, buf);
}

/* The dialect $schema names; -1 when it is not one we know by name. */
static int
dialect_of(const char *uri)
{
	if (strstr(uri, "json-schema.org/draft-07/") != NULL ||
	    strstr(uri, "json-schema.org/draft-06/") != NULL ||
	    strstr(uri, "json-schema.org/draft-04/") != NULL)
		return SCH_D7;
	if (strstr(uri, "json-schema.org/draft/2020-12/") != NULL ||
	    strstr(uri, "json-schema.org/draft/2019-09/") != NULL)
		return SCH_D2020;
	return -1;
}

static struct sch_res *load_uri(struct cc *cc, const char *uri, int draft,
    const char *where);

/*
 * The dialect and vocabulary of a custom metaschema: reads its
 * $vocabulary; a metaschema that cannot be read counts as 2020-12.
 * Returns the dialect (SCH_D*), *novalidation set when the validation
 * vocabulary is off.
 */
static int
custom_dialect(struct cc *cc, const char *uri, int *novalidation)
{
	struct sch_res *r;
	struct saop_err save = *cc->e;
	json_t *voc;
	char *u;

	*novalidation = 0;
	if ((u = uri_resolve(NULL, uri)) == NULL)
		return SCH_D2020;
	if (strchr(u, '#') != NULL)
		*strchr(u, '#') = '\0';
	r = res_find(cc->s, u);
	if (r == NULL)
		r = load_uri(cc, u, SCH_D2020, "$schema");
	free(u);
	*cc->e = save;
	if (r == NULL)
		return SCH_D2020;
	voc = json_object_get(r->root->js, "$vocabulary");
	if (json_is_object(voc) && json_object_get(voc,
	    "https://json-schema.org/draft/2020-12/vocab/validation") == NULL)
		*novalidation = 1;
	return r->root->draft;
}

static struct sch_node *walk(struct cc *cc, json_t *js, const char *base,
    struct sch_res *res, const char *loc, int draft, int novalidation);

/*
 * Walk every subschema of n (under the keywords that take one, a list or a
 * map of them).  Returns 0, or -1 with cc->e set.
 */
static int
walk_kids(struct cc *cc, struct sch_node *n)
{
	static const char *const single[] = { "additionalProperties",
	    "propertyNames", "not", "if", "then", "else", "contains",
	    "unevaluatedItems", "unevaluatedProperties", "items",
	    "additionalItems", NULL };
	static const char *const lists[] = { "allOf", "anyOf", "oneOf",
	    "prefixItems", "items", NULL };
	static const char *const maps[] = { "properties",
	    "patternProperties", "$defs", "definitions", "dependentSchemas",
	    "dependencies", NULL };
	const char *const *k;
	json_t *v, *child;
	const char *key;
	size_t i;

	for (k = single; *k != NULL; k++) {
		v = json_object_get(n->js, *k);
		if (v != NULL && (json_is_object(v) || json_is_boolean(v)) &&
		    walk(cc, v, n->base, n->res, loc_join(cc, n->loc, *k),
		    n->draft, n->novalidation) == NULL)
			return -1;
	}
	for (k = lists; *k != NULL; k++) {
		if (!json_is_array(v = json_object_get(n->js, *k)))
			continue;
		json_array_foreach(v, i, child)
			if (walk(cc, child, n->base, n->res, loc_index(cc,
			    loc_join(cc, n->loc, *k), i), n->draft,
			    n->novalidation) == NULL)
				return -1;
	}
	for (k = maps; *k != NULL; k++) {
		if (!json_is_object(v = json_object_get(n->js, *k)))
			continue;
		json_object_foreach(v, key, child)
			if ((json_is_object(child) || json_is_boolean(child)) &&
			    walk(cc, child, n->base, n->res, loc_join(cc,
			    loc_join(cc, n->loc, *k), key), n->draft,
			    n->novalidation) == NULL)
				return -1;
	}
	return 0;
}

/*
 * Make the node of schema js (once per JSON value), register its $id,
 * $anchor and $dynamicAnchor, and walk its subschemas.  Returns the node,
 * or NULL with cc->e set.
 */
static struct sch_node *
walk(struct cc *cc, json_t *js, const char *base, struct sch_res *res,
    const char *loc, int draft, int novalidation)
{
	struct saop_schema *s = cc->s;
	struct sch_node *n;
	json_t *v;

	if (loc == NULL) {
		NOMEM(cc);
		return NULL;
	}
	if ((n = node_find(s, js)) != NULL)
		return n;
	if (!json_is_object(js) && !json_is_boolean(js)) {
		FAIL(cc, "%s: a schema must be an object or a boolean",
		    *loc ? loc : "(root)");
		return NULL;
	}
	if ((n = saop__sch_alloc(s, sizeof(*n))) == NULL) {
		NOMEM(cc);
		return NULL;
	}
	n->js = js;
	n->loc = loc;
	n->base = base;
	n->res = res;
	n->boolv = json_is_boolean(js) ? json_is_true(js) : -1;
	n->draft = draft;
	n->novalidation = novalidation;
	if (hash_add(s, n) != 0) {
		NOMEM(cc);
		return NULL;
	}
	if (cc->tail != NULL)
		cc->tail->next_all = n;
	else
		s->all = n;
	cc->tail = n;
	if (n->boolv >= 0)
		return n;

	v = json_object_get(js, "$schema");
	if (json_is_string(v) && (res == NULL || res->root == n ||
	    json_object_get(js, "$id") != NULL)) {
		int d = dialect_of(json_string_value(v));

		if (d >= 0) {
			n->draft = d;
			n->novalidation = 0;
		} else
			n->draft = custom_dialect(cc, json_string_value(v),
			    &n->novalidation);
	}
	v = json_object_get(js, "$id");
	if (n->draft == SCH_D7 && json_object_get(js, "$ref") != NULL)
		v = NULL;
	if (json_is_string(v)) {
		const char *id = json_string_value(v);

		if (n->draft == SCH_D7 && id[0] == '#') {
			if (res != NULL &&
			    anchor_add(s, res, id + 1, n, 0) != 0) {
				NOMEM(cc);
				return NULL;
			}
		} else {
			char *abs, *hash;

			if ((abs = uri_resolve(base, id)) == NULL) {
				NOMEM(cc);
				return NULL;
			}
			if ((hash = strchr(abs, '#')) != NULL)
				*hash++ = '\0';
			n->base = saop__sch_strdup(s, abs);
			if (n->base == NULL || (res = res_add(s, abs, n)) ==
			    NULL) {
				free(abs);
				NOMEM(cc);
				return NULL;
			}
			if (res->root != n && res->root->js != js) {
				free(abs);
				FAIL(cc, "%s/$id: '%s' names two schemas",
				    loc, id);
				return NULL;
			}
			n->res = res;
			if (hash != NULL && *hash != '\0' && *hash != '/' &&
			    anchor_add(s, res, hash, n, 0) != 0) {
				free(abs);
				NOMEM(cc);
				return NULL;
			}
			free(abs);
		}
	}
	if (n->res == NULL) {
		if ((n->res = res_add(s, base, n)) == NULL) {
			NOMEM(cc);
			return NULL;
		}
	}
	if (n->draft == SCH_D2020) {
		v = json_object_get(js, "$anchor");
		if (json_is_string(v) && anchor_add(s, n->res,
		    json_string_value(v), n, 0) != 0) {
			NOMEM(cc);
			return NULL;
		}
		v = json_object_get(js, "$dynamicAnchor");
		if (json_is_string(v) && anchor_add(s, n->res,
		    json_string_value(v), n, 1) != 0) {
			NOMEM(cc);
			return NULL;
		}
	}
	if (walk_kids(cc, n) != 0)
		return NULL;
	return n;
}

/* ---- Loading documents. ---- */

/*
 * Register doc (stolen), retrieved from uri, and walk it.  Returns its
 * resource, or NULL with cc->e set.
 */
static struct sch_res *
add_doc(struct cc *cc, json_t *doc, const char *uri, int draft,
    const char *loc)
{
	struct sch_res *r;
	struct sch_node *n;
	const char *u;

	if (json_array_append_new(cc->s->docs, doc) != 0) {
		NOMEM(cc);
		return NULL;
	}
	if ((u = saop__sch_strdup(cc->s, uri)) == NULL ||
	    (r = res_add(cc->s, uri, NULL)) == NULL) {
		NOMEM(cc);
		return NULL;
	}
	if (r->root != NULL)
		return r;
	if ((n = walk(cc, doc, u, NULL, loc, draft, 0)) == NULL)
		return NULL;
	r->root = n;
	return r;
}

/*
 * Read the JSON document at path (for what, the referring place).  Returns
 * a new reference, or NULL with cc->e set.
 */
static json_t *
load_file(struct cc *cc, const char *path, const char *what)
{
	json_error_t je;
	json_t *doc;

	doc = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (doc == NULL) {
		if (je.line <= 0 || strstr(je.text, "unable to open") != NULL)
			FAIL(cc, "%s: cannot read schema file %s: %s", what,
			    path, je.text);
		else
			FAIL(cc, "%s: schema file %s, line %d, column %d: %s",
			    what, path, je.line, je.column, je.text);
	}
	return doc;
}

/*
 * Add the embedded metaschemas as resources, once per schema.  Returns 0,
 * or -SAOP_EINTERNAL with cc->e set when one does not parse.
 */
static int
load_metas(struct cc *cc)
{
	const struct saop__blob *b;
	json_error_t je;

	if (cc->s->metas_loaded)
		return 0;
	cc->s->metas_loaded = 1;
	for (b = saop__sch_metas; b->name != NULL; b++) {
		json_t *doc, *id;
		char *u, *loc;

		doc = json_loadb(b->text, b->len, 0, &je);
		if (doc == NULL)
			return saop__fail(cc->e, SAOP_EINTERNAL, 0,
			    "embedded metaschema %s: %s", b->name, je.text);
		id = json_object_get(doc, "$id");
		if (!json_is_string(id) ||
		    (u = strdup(json_string_value(id))) == NULL) {
			json_decref(doc);
			return saop__fail(cc->e, SAOP_EINTERNAL, 0,
			    "embedded metaschema %s has no $id", b->name);
		}
		if (strchr(u, '#') != NULL)
			*strchr(u, '#') = '\0';
		loc = saop__sch_alloc(cc->s, strlen(u) + 2);
		if (loc != NULL)
			sprintf(loc, "%s#", u);
		if (add_doc(cc, doc, u, dialect_of(u), loc) == NULL) {
			free(u);
			return -1;
		}
		free(u);
	}
	return 0;
}

/*
 * Find or load the resource at uri (absolute, no fragment): the embedded
 * metaschemas, a ref dir, a file: URI.  where names the referring place.
 * Returns the resource, or NULL with cc->e set.
 */
static struct sch_res *
load_uri(struct cc *cc, const char *uri, int draft, const char *where)
{
	struct saop_schema *s = cc->s;
	struct sch_res *r;
	char *path = NULL, *loc;
	json_t *doc;
	size_t i;

	if ((r = res_find(s, uri)) != NULL)
		return r;
	if (strstr(uri, "://json-schema.org/") != NULL) {
		if (load_metas(cc) != 0)
			return NULL;
		if ((r = res_find(s, uri)) != NULL)
			return r;
	}
	for (i = 0; i < s->nref_dirs && path == NULL; i++) {
		const char *eq = strchr(s->ref_dirs[i], '=');
		size_t plen = (size_t)(eq - s->ref_dirs[i]);

		if (strncmp(uri, s->ref_dirs[i], plen) == 0) {
			const char *rest = uri + plen;

			while (*rest == '/')
				rest++;
			if ((path = malloc(strlen(eq) + strlen(rest) + 2)) ==
			    NULL) {
				NOMEM(cc);
				return NULL;
			}
			sprintf(path, "%s/%s", eq + 1, rest);
		}
	}
	if (path == NULL && strncmp(uri, "file:", 5) == 0) {
		const char *p = uri + 5;

		if (strncmp(p, "//", 2) == 0) {
			p += 2;
			while (*p != '\0' && *p != '/')
				p++;
		}
		if ((path = strdup(p)) == NULL) {
			NOMEM(cc);
			return NULL;
		}
		if (strchr(path, '?') != NULL)
			*strchr(path, '?') = '\0';
	}
	if (path == NULL) {
		FAIL(cc, "%s: cannot resolve '%s': no schema has that URI and "
		    "no ref dir maps it to a folder", where, uri);
		return NULL;
	}
	pct_decode(path);
	doc = load_file(cc, path, where);
	free(path);
	if (doc == NULL)
		return NULL;
	if ((loc = malloc(strlen(uri) + 2)) == NULL) {
		json_decref(doc);
		NOMEM(cc);
		return NULL;
	}
	sprintf(loc, "%s#", uri);
	r = add_doc(cc, doc, uri, draft, saop__sch_strdup(s, loc));
	free(loc);
	return r;
}

/* ---- Resolving references. ---- */

/*
 * Follow JSON Pointer ptr (decoded) from root.  Returns the value there
 * (borrowed), or NULL when there is none.
 */
static json_t *
pointer_get(json_t *root, const char *ptr)
{
	char tok[1024];
	json_t *v = root;

	while (*ptr == '/' && v != NULL) {
		size_t n = 0;

		ptr++;
		while (*ptr != '\0' && *ptr != '/' && n < sizeof(tok) - 1) {
			if (ptr[0] == '~' && ptr[1] == '0')
				tok[n++] = '~', ptr += 2;
			else if (ptr[0] == '~' && ptr[1] == '1')
				tok[n++] = '/', ptr += 2;
			else
				tok[n++] = *ptr++;
		}
		tok[n] = '\0';
		if (json_is_object(v))
			v = json_object_get(v, tok);
		else if (json_is_array(v)) {
			char *end;
			unsigned long i;

			if (n == 0 || (n > 1 && tok[0] == '0'))
				return NULL;
			errno = 0;
			i = strtoul(tok, &end, 10);
			if (*end != '\0' || errno != 0)
				return NULL;
			v = json_array_get(v, i);
		} else
			return NULL;
	}
	return *ptr == '\0' ? v : NULL;
}

/*
 * Resolve ref as written in node n (keyword kw): the target node, and for
 * a plain-name fragment the anchor found (in *anchor).  Returns the node,
 * or NULL with cc->e set.
 */
static struct sch_node *
resolve_ref(struct cc *cc, struct sch_node *n, const char *ref,
    const char *kw, struct sch_anchor **anchor)
{
	struct sch_res *r;
	struct sch_node *t = NULL;
	const char *where = loc_join(cc, n->loc, kw);
	char *abs, *frag;
	json_t *js;

	*anchor = NULL;
	if ((abs = uri_resolve(n->base, ref)) == NULL) {
		NOMEM(cc);
		return NULL;
	}
	frag = strchr(abs, '#');
	if (frag != NULL)
		*frag++ = '\0';
	else
		frag = abs + strlen(abs);
	if ((r = load_uri(cc, abs, n->draft, where)) == NULL)
		goto out;
	pct_decode(frag);
	if (r->root->res != r && res_find(cc->s, r->root->base) != NULL)
		r = r->root->res;
	if (*frag == '\0')
		t = r->root;
	else if (*frag == '/') {
		js = pointer_get(r->root->js, frag);
		if (js == NULL) {
			FAIL(cc, "%s: '%s' points at nothing in %s", where, ref,
			    r->uri);
			goto out;
		}
		if ((t = node_find(cc->s, js)) == NULL) {
			char *loc = saop__sch_alloc(cc->s, strlen(r->uri) +
			    strlen(frag) + 2);

			if (loc == NULL) {
				NOMEM(cc);
				goto out;
			}
			if (r->root->loc[0] == '\0' || r->root->loc[0] == '/')
				strcpy(loc, frag);
			else
				sprintf(loc, "%s#%s", r->uri, frag);
			t = walk(cc, js, r->root->base, r->root->res, loc,
			    r->root->draft, r->root->novalidation);
		}
	} else {
		*anchor = anchor_find(r, frag);
		if (*anchor == NULL)
			FAIL(cc, "%s: no anchor '%s' in %s", where, frag,
			    r->uri);
		else
			t = (*anchor)->node;
	}
out:
	free(abs);
	return t;
}

/* ---- Compiling keywords. ---- */

/*
 * Append a zeroed keyword of type and name to *v (*n used, *cap
 * allocated), growing it.  Returns the keyword, or NULL with cc->e set.
 */
static struct sch_kw *
kw_add(struct cc *cc, struct sch_kw **v, size_t *n, size_t *cap,
    enum sch_kwtype type, const char *name)
{
	struct sch_kw *k;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;

		if ((k = realloc(*v, nc * sizeof(*k))) == NULL) {
			NOMEM(cc);
			return NULL;
		}
		*v = k;
		*cap = nc;
	}
	k = &(*v)[(*n)++];
	memset(k, 0, sizeof(*k));
	k->type = type;
	k->name = name;
	return k;
}

/*
 * The node of the subschema js of n at n's location + k1 (+ k2) (+ idx,
 * when not -1), walked when new.  Returns it, or NULL with cc->e set.
 */
static struct sch_node *
sub(struct cc *cc, struct sch_node *n, json_t *js, const char *k1,
    const char *k2, long idx)
{
	struct sch_node *m;
	const char *loc;

	if ((m = node_find(cc->s, js)) != NULL)
		return m;
	loc = loc_join(cc, n->loc, k1);
	if (loc != NULL && k2 != NULL)
		loc = loc_join(cc, loc, k2);
	if (loc != NULL && idx >= 0)
		loc = loc_index(cc, loc, (size_t)idx);
	return walk(cc, js, n->base, n->res, loc, n->draft, n->novalidation);
}

/* The SCH_T* bit of the JSON type named t, or -1 when t names none. */
static int
type_bits(const char *t)
{
	static const struct {
		const char *name;
		unsigned bit;
	} types[] = { { "null", SCH_TNULL }, { "boolean", SCH_TBOOL },
	    { "object", SCH_TOBJECT }, { "array", SCH_TARRAY },
	    { "number", SCH_TNUMBER }, { "string", SCH_TSTRING },
	    { "integer", SCH_TINTEGER } };
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(t, types[i].name) == 0)
			return (int)types[i].bit;
	return -1;
}

/*
 * A non-negative integer count (1.0 counts) into *out.  Returns 0, or -1
 * when v is not one.
 */
static int
get_count(json_t *v, size_t *out)
{
	double d;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (size_t)json_integer_value(v);
		return 0;
	}
	if (json_is_real(v) && (d = json_real_value(v)) >= 0 &&
	    d == floor(d)) {
		*out = d >= (double)SIZE_MAX ? SIZE_MAX : (size_t)d;
		return 0;
	}
	return -1;
}

/*
 * The nodes of the subschemas in the array arr under keyword k of n, in an
 * arena array.  Returns it (its length in *count), or NULL with cc->e set.
 */
static struct sch_node **
sub_list(struct cc *cc, struct sch_node *n, json_t *arr, const char *k,
    size_t *count)
{
	struct sch_node **v;
	json_t *x;
	size_t i;

	*count = json_array_size(arr);
	if ((v = saop__sch_alloc(cc->s, (*count + 1) * sizeof(*v))) == NULL) {
		NOMEM(cc);
		return NULL;
	}
	json_array_foreach(arr, i, x)
		if ((v[i] = sub(cc, n, x, k, NULL, (long)i)) == NULL)
			return NULL;
	return v;
}

/*
 * Compile the keywords of n into n->kw (n->nkw of them), resolving its
 * references.  Returns 0, or -1 with cc->e set (SAOP_ECONFIG naming the
 * location of a bad keyword).
 */
static int
compile_node(struct cc *cc, struct sch_node *n)
{
	struct sch_kw *kw = NULL, *k;
	size_t nkw = 0, cap = 0, i;
	json_t *js = n->js, *v, *x;
	const char *key, *where = NULL;
	int d7 = n->draft == SCH_D7, valid = !n->novalidation, rc = -1, rx;

	n->compiled = 1;
	if (n->boolv >= 0)
		return 0;
#define WHERE(k) (where = loc_join(cc, n->loc, (k)))
#define BAD(k, what) do { WHERE(k); \
	FAIL(cc, "%s: %s", where ? where : k, what); goto out; } while (0)
#define ADD(t, nm) do { if ((k = kw_add(cc, &kw, &nkw, &cap, (t), (nm))) \
	== NULL) goto out; } while (0)

	if ((v = json_object_get(js, "$ref")) != NULL) {
		struct sch_anchor *a;

		if (!json_is_string(v))
			BAD("$ref", "must be a string");
		ADD(KW_REF, "$ref");
		k->u.ref.uri = json_string_value(v);
		if ((k->u.ref.target = resolve_ref(cc, n, k->u.ref.uri,
		    "$ref", &a)) == NULL)
			goto out;
		if (d7)
			goto done;
	}
	if (!d7 && (v = json_object_get(js, "$dynamicRef")) != NULL) {
		struct sch_anchor *a;
		const char *h;

		if (!json_is_string(v))
			BAD("$dynamicRef", "must be a string");
		ADD(KW_DYNREF, "$dynamicRef");
		k->u.ref.uri = json_string_value(v);
		if ((k->u.ref.target = resolve_ref(cc, n, k->u.ref.uri,
		    "$dynamicRef", &a)) == NULL)
			goto out;
		h = strchr(k->u.ref.uri, '#');
		if (a != NULL && a->dynamic && h != NULL && h[1] != '/')
			k->u.ref.anchor = a->name;
	}
	if (valid && (v = json_object_get(js, "type")) != NULL) {
		unsigned bits = 0;
		int b;

		if (json_is_string(v)) {
			if ((b = type_bits(json_string_value(v))) < 0)
				BAD("type", "unknown type");
			bits = (unsigned)b;
		} else if (json_is_array(v)) {
			json_array_foreach(v, i, x) {
				if (!json_is_string(x) ||
				    (b = type_bits(json_string_value(x))) < 0)
					BAD("type", "unknown type in the list");
				bits |= (unsigned)b;
			}
		} else
			BAD("type", "must be a string or an array of strings");
		ADD(KW_TYPE, "type");
		k->u.types = bits;
	}
	if (valid && (v = json_object_get(js, "enum")) != NULL) {
		if (!json_is_array(v))
			BAD("enum", "must be an array");
		ADD(KW_ENUM, "enum");
		k->u.value = v;
	}
	if (valid && (v = json_object_get(js, "const")) != NULL) {
		ADD(KW_CONST, "const");
		k->u.value = v;
	}
	if (valid) {
		static const struct {
			const char *name;
			enum sch_kwtype t;
		} nums[] = { { "multipleOf", KW_MULTIPLEOF },
		    { "maximum", KW_MAXIMUM },
		    { "exclusiveMaximum", KW_EXMAXIMUM },
		    { "minimum", KW_MINIMUM },
		    { "exclusiveMinimum", KW_EXMINIMUM } }, counts[] = {
		    { "maxLength", KW_MAXLENGTH },
		    { "minLength", KW_MINLENGTH },
		    { "maxItems", KW_MAXITEMS }, { "minItems", KW_MINITEMS },
		    { "maxProperties", KW_MAXPROPS },
		    { "minProperties", KW_MINPROPS } };

		/* The numeric bounds, then the counts. */
		for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
			if ((v = json_object_get(js, nums[i].name)) == NULL)
				continue;
			if (!json_is_number(v))
				BAD(nums[i].name, "must be a number");
			if (nums[i].t == KW_MULTIPLEOF &&
			    json_number_value(v) <= 0)
				BAD(nums[i].name, "must be greater than 0");
			ADD(nums[i].t, nums[i].name);
			k->u.value = v;
		}
		for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			size_t c;

			if ((v = json_object_get(js, counts[i].name)) == NULL)
				continue;
			if (get_count(v, &c) != 0)
				BAD(counts[i].name,
				    "must be a non-negative integer");
			ADD(counts[i].t, counts[i].name);
			k->u.count = c;
		}
	}
	if (valid && (v = json_object_get(js, "pattern")) != NULL) {
		char msg[256];

		if (!json_is_string(v))
			BAD("pattern", "must be a string");
		ADD(KW_PATTERN, "pattern");
		if ((rx = saop__sch_regex(&k->u.re, json_string_value(v), msg,
		    sizeof(msg))) != 0) {
			nkw--;
			if (rx == SCH_RE_NOMEM) {
				NOMEM(cc);
				goto out;
			}
			BAD("pattern", msg);
		}
	}
	if ((v = json_object_get(js, "format")) != NULL &&
	    cc->s->format_assert && json_is_string(v) &&
	    saop__sch_format(json_string_value(v)) != SCH_FMT_NONE) {
		ADD(KW_FORMAT, "format");
		k->u.fmt = saop__sch_format(json_string_value(v));
	}
	if (valid && (v = json_object_get(js, "uniqueItems")) != NULL) {
		if (!json_is_boolean(v))
			BAD("uniqueItems", "must be a boolean");
		if (json_is_true(v))
			ADD(KW_UNIQUEITEMS, "uniqueItems");
	}
	if (valid && (v = json_object_get(js, "required")) != NULL) {
		if (!json_is_array(v))
			BAD("required", "must be an array of strings");
		ADD(KW_REQUIRED, "required");
		k->u.names.n = json_array_size(v);
		k->u.names.v = saop__sch_alloc(cc->s,
		    (k->u.names.n + 1) * sizeof(char *));
		if (k->u.names.v == NULL) {
			NOMEM(cc);
			goto out;
		}
		json_array_foreach(v, i, x) {
			if (!json_is_string(x))
				BAD("required", "must be an array of strings");
			k->u.names.v[i] = json_string_value(x);
		}
	}
	/* dependentRequired, dependentSchemas, draft-07 dependencies. */
	{
		static const char *const dk[] = { "dependentRequired",
		    "dependentSchemas", "dependencies" };
		size_t j;

		for (j = 0; j < 3; j++) {
			size_t kr = SIZE_MAX, ks = SIZE_MAX, ki;

			if ((j < 2) == d7 || (v = json_object_get(js, dk[j])) ==
			    NULL)
				continue;
			if (!json_is_object(v))
				BAD(dk[j], "must be an object");
			json_object_foreach(v, key, x) {
				struct sch_named *d;

				if (json_is_array(x) && j != 1) {
					if (!valid)
						continue;
					if (kr == SIZE_MAX) {
						ADD(KW_DEPREQUIRED, dk[j]);
						kr = nkw - 1;
					}
					ki = kr;
				} else if ((json_is_object(x) ||
				    json_is_boolean(x)) && j != 0) {
					if (ks == SIZE_MAX) {
						ADD(KW_DEPSCHEMAS, dk[j]);
						ks = nkw - 1;
					}
					ki = ks;
				} else
					BAD(dk[j], "has a member of the wrong "
					    "type");
				k = &kw[ki];
				if (k->u.deps.v == NULL && (k->u.deps.v =
				    saop__sch_alloc(cc->s, json_object_size(v) *
				    sizeof(struct sch_named))) == NULL) {
					NOMEM(cc);
					goto out;
				}
				d = &k->u.deps.v[k->u.deps.n++];
				d->name = key;
				if (json_is_array(x)) {
					d->list = x;
					continue;
				}
				if ((d->node = sub(cc, n, x, dk[j], key,
				    -1)) == NULL)
					goto out;
			}
		}
	}
	{
		static const struct {
			const char *name;
			enum sch_kwtype t;
		} lists[] = { { "allOf", KW_ALLOF }, { "anyOf", KW_ANYOF },
		    { "oneOf", KW_ONEOF } };

		for (i = 0; i < 3; i++) {
			if ((v = json_object_get(js, lists[i].name)) == NULL)
				continue;
			if (!json_is_array(v) || json_array_size(v) == 0)
				BAD(lists[i].name, "must be a non-empty array");
			ADD(lists[i].t, lists[i].name);
			if ((k->u.list.v = sub_list(cc, n, v, lists[i].name,
			    &k->u.list.n)) == NULL)
				goto out;
		}
	}
	if ((v = json_object_get(js, "not")) != NULL) {
		ADD(KW_NOT, "not");
		if ((k->u.node = sub(cc, n, v, "not", NULL, -1)) == NULL)
			goto out;
	}
	if ((v = json_object_get(js, "if")) != NULL) {
		json_t *t = json_object_get(js, "then");
		json_t *e = json_object_get(js, "else");

		ADD(KW_IF, "if");
		if ((k->u.cond.cond = sub(cc, n, v, "if", NULL, -1)) == NULL ||
		    (t != NULL && (k->u.cond.then = sub(cc, n, t, "then",
		    NULL, -1)) == NULL) ||
		    (e != NULL && (k->u.cond.els = sub(cc, n, e, "else",
		    NULL, -1)) == NULL))
			goto out;
	}
	/* Arrays. */
	{
		json_t *pre = NULL, *rest = NULL;
		const char *pn = NULL, *rn = NULL;

		if (d7) {
			v = json_object_get(js, "items");
			if (json_is_array(v)) {
				pre = v;
				pn = "items";
				rest = json_object_get(js, "additionalItems");
				rn = "additionalItems";
			} else if (v != NULL) {
				rest = v;
				rn = "items";
			}
		} else {
			pre = json_object_get(js, "prefixItems");
			pn = "prefixItems";
			rest = json_object_get(js, "items");
			rn = "items";
			if (pre != NULL && !json_is_array(pre))
				BAD("prefixItems", "must be an array");
		}
		if (pre != NULL || rest != NULL) {
			ADD(KW_ITEMS, pre != NULL ? pn : rn);
			k->u.items.prefix_name = pn;
			k->u.items.rest_name = rn;
			if (pre != NULL && (k->u.items.prefix = sub_list(cc, n,
			    pre, pn, &k->u.items.nprefix)) == NULL)
				goto out;
			if (rest != NULL && (k->u.items.rest = sub(cc, n, rest,
			    rn, NULL, -1)) == NULL)
				goto out;
		}
	}
	if ((v = json_object_get(js, "contains")) != NULL) {
		json_t *mn = d7 ? NULL : json_object_get(js, "minContains");
		json_t *mx = d7 ? NULL : json_object_get(js, "maxContains");

		ADD(KW_CONTAINS, "contains");
		if ((k->u.contains.node = sub(cc, n, v, "contains", NULL,
		    -1)) == NULL)
			goto out;
		k->u.contains.min = 1;
		if (mn != NULL && valid && get_count(mn, &k->u.contains.min))
			BAD("minContains", "must be a non-negative integer");
		if (mx != NULL && valid) {
			if (get_count(mx, &k->u.contains.max))
				BAD("maxContains",
				    "must be a non-negative integer");
			k->u.contains.has_max = 1;
		}
	}
	/* Objects. */
	{
		json_t *pr = json_object_get(js, "properties");
		json_t *pp = json_object_get(js, "patternProperties");
		json_t *ap = json_object_get(js, "additionalProperties");

		if (pr != NULL || pp != NULL || ap != NULL) {
			ADD(KW_PROPS, pr != NULL ? "properties" :
			    pp != NULL ? "patternProperties" :
			    "additionalProperties");
			if (pr != NULL) {
				if (!json_is_object(pr))
					BAD("properties", "must be an object");
				k->u.props.propobj = pr;
				k->u.props.props = saop__sch_alloc(cc->s,
				    (json_object_size(pr) + 1) *
				    sizeof(struct sch_named));
				if (k->u.props.props == NULL) {
					NOMEM(cc);
					goto out;
				}
				json_object_foreach(pr, key, x) {
					struct sch_named *p = &k->u.props.props
					    [k->u.props.nprops++];

					p->name = key;
					if ((p->node = sub(cc, n, x,
					    "properties", key, -1)) == NULL)
						goto out;
				}
			}
			if (pp != NULL) {
				if (!json_is_object(pp))
					BAD("patternProperties",
					    "must be an object");
				k->u.props.pats = saop__sch_alloc(cc->s,
				    (json_object_size(pp) + 1) *
				    sizeof(struct sch_pattern));
				if (k->u.props.pats == NULL) {
					NOMEM(cc);
					goto out;
				}
				json_object_foreach(pp, key, x) {
					struct sch_pattern *p = &k->u.props.pats
					    [k->u.props.npats];
					char msg[256];

					if ((rx = saop__sch_regex(&p->re, key,
					    msg, sizeof(msg))) == SCH_RE_NOMEM) {
						NOMEM(cc);
						goto out;
					} else if (rx != 0) {
						BAD("patternProperties", msg);
					}
					k->u.props.npats++;
					if ((p->node = sub(cc, n, x,
					    "patternProperties", key, -1)) ==
					    NULL)
						goto out;
				}
			}
			if (ap != NULL && (k->u.props.additional = sub(cc, n,
			    ap, "additionalProperties", NULL, -1)) == NULL)
				goto out;
		}
	}
	if ((v = json_object_get(js, "propertyNames")) != NULL) {
		ADD(KW_PROPNAMES, "propertyNames");
		if ((k->u.node = sub(cc, n, v, "propertyNames", NULL, -1)) ==
		    NULL)
			goto out;
	}
	if (!d7 && (v = json_object_get(js, "unevaluatedItems")) != NULL) {
		ADD(KW_UNEVALITEMS, "unevaluatedItems");
		if ((k->u.node = sub(cc, n, v, "unevaluatedItems", NULL,
		    -1)) == NULL)
			goto out;
		n->uneval = 1;
	}
	if (!d7 && (v = json_object_get(js, "unevaluatedProperties")) !=
	    NULL) {
		ADD(KW_UNEVALPROPS, "unevaluatedProperties");
		if ((k->u.node = sub(cc, n, v, "unevaluatedProperties", NULL,
		    -1)) == NULL)
			goto out;
		n->uneval = 1;
	}
done:
	if (nkw > 0) {
		if ((n->kw = saop__sch_alloc(cc->s, nkw * sizeof(*kw))) ==
		    NULL) {
			NOMEM(cc);
			goto out;
		}
		memcpy(n->kw, kw, nkw * sizeof(*kw));
		n->nkw = nkw;
	}
	rc = 0;
out:
	if (rc != 0) {
		/* Free the regexes compiled so far. */
		for (i = 0; i < nkw; i++)
			if (kw[i].type == KW_PATTERN)
				pcre2_code_free(kw[i].u.re.code);
			else if (kw[i].type == KW_PROPS) {
				size_t j;

				for (j = 0; j < kw[i].u.props.npats; j++)
					pcre2_code_free(
					    kw[i].u.props.pats[j].re.code);
			}
	}
	free(kw);
	return rc;
#undef WHERE
#undef BAD
#undef ADD
}

/* ---- Public calls. ---- */

/* Free s, its compiled regexes and its documents (see saop.h). */
void
saop_schema_free(struct saop_schema *s)
{
	struct sch_node *n;
	struct sch_block *b, *next;
	size_t i, j;

	if (s == NULL)
		return;
	for (n = s->all; n != NULL; n = n->next_all)
		for (i = 0; i < n->nkw; i++) {
			if (n->kw[i].type == KW_PATTERN)
				pcre2_code_free(n->kw[i].u.re.code);
			else if (n->kw[i].type == KW_PROPS)
				for (j = 0; j < n->kw[i].u.props.npats; j++)
					pcre2_code_free(
					    n->kw[i].u.props.pats[j].re.code);
		}
	for (i = 0; i < s->nref_dirs; i++)
		free(s->ref_dirs[i]);
	free(s->ref_dirs);
	free(s->hash);
	json_decref(s->docs);
	for (b = s->blocks; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
	free(s);
}

/*
 * A new empty schema holding opts's ref dirs and format setting.  Returns
 * it, or NULL with e set (SAOP_ECONFIG for a ref dir that is not URI=DIR).
 */
static struct saop_schema *
schema_new(const struct saop_schema_opts *opts, struct saop_err *e)
{
	struct saop_schema *s;
	size_t n = 0, i;

	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->docs = json_array()) == NULL) {
		free(s);
		saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		return NULL;
	}
	if (opts != NULL) {
		s->format_assert = opts->format_assert;
		while (opts->ref_dirs != NULL && opts->ref_dirs[n] != NULL)
			n++;
	}
	if (n > 0 && (s->ref_dirs = calloc(n, sizeof(char *))) == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		const char *rd = opts->ref_dirs[i];

		if (strchr(rd, '=') == NULL || rd[0] == '=') {
			saop__fail(e, SAOP_ECONFIG, 0, "ref dir '%s' is not "
			    "URI=DIR", rd);
			saop_schema_free(s);
			return NULL;
		}
		if ((s->ref_dirs[i] = strdup(rd)) == NULL)
			goto nomem;
		s->nref_dirs++;
	}
	return s;
nomem:
	saop_schema_free(s);
	saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
	return NULL;
}

/* ---- $ref loops. ---- */

/*
 * The i-th schema (from 0) that n applies to the very value n is applied
 * to: the target of $ref (and of a $dynamicRef that resolves statically),
 * the members of allOf, anyOf and oneOf, not, if/then/else and
 * dependentSchemas.  Keywords that go into the value (properties, items,
 * contains...) are left out: a path through them ends with the value.
 * Returns the schema, with *ref the keyword when it is a reference (NULL
 * when it is a subschema of n), or NULL past the last.
 */
static struct sch_node *
in_place(const struct sch_node *n, size_t i, const char **ref)
{
	const struct sch_kw *k;
	struct sch_node *c[3];
	size_t j, m;

	*ref = NULL;
	for (j = 0; j < n->nkw; j++) {
		k = &n->kw[j];
		switch (k->type) {
		case KW_REF:
		case KW_DYNREF:
			/* A dynamic anchor resolves only as it is used. */
			if (k->type == KW_DYNREF && k->u.ref.anchor != NULL)
				continue;
			if (i-- == 0) {
				*ref = k->name;
				return k->u.ref.target;
			}
			continue;
		case KW_ALLOF:
		case KW_ANYOF:
		case KW_ONEOF:
			if (i < k->u.list.n)
				return k->u.list.v[i];
			i -= k->u.list.n;
			continue;
		case KW_NOT:
			if (i-- == 0)
				return k->u.node;
			continue;
		case KW_IF:
			m = 0;
			c[m++] = k->u.cond.cond;
			if (k->u.cond.then != NULL)
				c[m++] = k->u.cond.then;
			if (k->u.cond.els != NULL)
				c[m++] = k->u.cond.els;
			if (i < m)
				return c[i];
			i -= m;
			continue;
		case KW_DEPSCHEMAS:
			for (m = 0; m < k->u.deps.n; m++)
				if (k->u.deps.v[m].node != NULL && i-- == 0)
					return k->u.deps.v[m].node;
			continue;
		default:
			continue;
		}
	}
	return NULL;
}

/* A node's location as a URI reference: "#/a/b", or "uri#/a/b". */
static const char *
loc_ref(const char *loc, char *buf, size_t size)
{
	if (loc[0] != '\0' && loc[0] != '/')
		return loc;
	snprintf(buf, size, "#%s", loc);
	return buf;
}

/*
 * Fail naming the loop found: from open[from] through open[n-1] and back,
 * closed by the keyword ref of open[n-1] (a reference) or by the subschema
 * back at open[from].  doc names the root document.  Returns
 * -SAOP_ECONFIG with cc->e set.
 */
static int
loop_fail(struct cc *cc, struct sch_node **open, size_t from, size_t n,
    const char *ref, const char *doc)
{
	const struct sch_node *last = open[n - 1];
	char chain[240], one[128], where[256];
	const char *loc, *hash;
	size_t i, len = 0;

	chain[0] = '\0';
	for (i = from; i <= n && len < sizeof(chain); i++) {
		loc = loc_ref(open[i < n ? i : from]->loc, one, sizeof(one));
		len += (size_t)snprintf(chain + len, sizeof(chain) - len,
		    "%s%s", i > from ? " -> " : "", loc);
	}
	if (len >= sizeof(chain))
		memcpy(chain + sizeof(chain) - 4, "...", 4);
	/* Where it closes, as a JSON Pointer in its document. */
	loc = ref != NULL ? last->loc : open[from]->loc;
	if ((hash = strchr(loc, '#')) != NULL && loc[0] != '/') {
		snprintf(where, sizeof(where), "%.*s", (int)(hash - loc), loc);
		doc = where;
		loc = hash + 1;
	}
	return FAIL(cc, "%s%s%s: a $ref loop in %s that never goes into the "
	    "value, so no value can be validated: %s", loc, ref ? "/" : "",
	    ref ? ref : "", doc, chain);
}

/*
 * Refuse a loop of references that never goes into the value (JSON
 * Schema leaves such schemas undefined): {"$ref": "#"}, or $defs that
 * refer to each other through $ref, allOf, not...  Such a loop would only
 * end at the evaluation limit, on any value that reaches it.  A
 * depth-first search over in_place() edges, without recursion.  doc names
 * the root document.  Returns 0, or -SAOP_ECONFIG naming the loop.
 */
static int
check_loops(struct cc *cc, const char *doc)
{
	struct sch_node **open = NULL, *n, *t, **p;
	size_t *next = NULL, *q, depth = 0, cap = 0, i;
	const char *ref;
	int rc = 0;

	for (n = cc->s->all; n != NULL && rc == 0; n = n->next_all) {
		if (n->visit != 0)
			continue;
		t = n;
		for (;;) {
			if (t != NULL) {	/* open t */
				if (depth == cap) {
					cap = cap ? cap * 2 : 64;
					p = realloc(open, cap * sizeof(*p));
					if (p != NULL)
						open = p;
					q = realloc(next, cap * sizeof(*q));
					if (q != NULL)
						next = q;
					if (p == NULL || q == NULL) {
						rc = NOMEM(cc);
						break;
					}
				}
				t->visit = 1;
				open[depth] = t;
				next[depth++] = 0;
			}
			if (depth == 0)
				break;
			t = in_place(open[depth - 1], next[depth - 1]++, &ref);
			if (t == NULL) {		/* close the top */
				open[--depth]->visit = 2;
				continue;
			}
			if (t->visit == 2) {
				t = NULL;
				continue;
			}
			if (t->visit == 1) {
				for (i = 0; open[i] != t; i++)
					;
				rc = loop_fail(cc, open, i, depth, ref, doc);
				break;
			}
		}
	}
	free(open);
	free(next);
	return rc;
}

/*
 * Register doc as the root schema at base and compile all it reaches.
 * Returns 0, or a negative saop_errcode with e set.
 */
static int
compile_root(struct saop_schema *s, json_t *doc, const char *base,
    struct saop_err *e)
{
	struct cc cc = { s, e, NULL };
	struct sch_node *n;
	struct saop_err dummy;
	const char *b;

	if (e == NULL)
		cc.e = &dummy;
	if (json_array_append(s->docs, doc) != 0)
		return NOMEM(&cc);
	if ((b = saop__sch_strdup(s, base)) == NULL)
		return NOMEM(&cc);
	if ((s->root = walk(&cc, doc, b, NULL, "", SCH_D2020, 0)) == NULL)
		return -cc.e->code;
	if (res_find(s, base) == NULL && res_add(s, base, s->root) == NULL)
		return NOMEM(&cc);
	for (n = s->all; n != NULL; n = n->next_all)
		if (!n->compiled && compile_node(&cc, n) != 0)
			return -cc.e->code;
	return check_loops(&cc, base);
}

/*
 * Compile schema against base (see saop.h).  Returns a new schema, or NULL
 * with e set.
 */
struct saop_schema *
saop_schema_compile(const json_t *schema, const char *base,
    const struct saop_schema_opts *opts, struct saop_err *e)
{
	struct saop_schema *s;
	char *abs = NULL;

	if (schema == NULL) {
		saop__fail(e, SAOP_ECONFIG, 0, "no schema");
		return NULL;
	}
	if ((s = schema_new(opts, e)) == NULL)
		return NULL;
	if (base == NULL)
		base = "saop:/schema.json";
	if ((abs = uri_resolve(NULL, base)) == NULL) {
		saop__fail(e, SAOP_ENOMEM, ENOMEM, "out of memory");
		saop_schema_free(s);
		return NULL;
	}
	if (strchr(abs, '#') != NULL)
		*strchr(abs, '#') = '\0';
	/* The schema is only read: jansson's API wants it non-const. */
	if (compile_root(s, (json_t *)(uintptr_t)schema, abs, e) != 0) {
		free(abs);
		saop_schema_free(s);
		return NULL;
	}
	free(abs);
	return s;
}

/*
 * A file: URI for path (made absolute), percent-encoding what needs it.
 * Returns a new string, or NULL with errno set.
 */
static char *
file_uri(const char *path)
{
	char *rp, *out, *o;
	const char *p;

	if ((rp = realpath(path, NULL)) == NULL)
		return NULL;
	if ((out = malloc(strlen(rp) * 3 + 8)) == NULL) {
		free(rp);
		return NULL;
	}
	o = out + sprintf(out, "file://");
	for (p = rp; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (c <= 0x20 || c >= 0x7f || strchr("%#?[]", c) != NULL)
			o += sprintf(o, "%%%02X", c);
		else
			*o++ = (char)c;
	}
	*o = '\0';
	free(rp);
	return out;
}

/*
 * Read and compile the schema file path, its base URI the file's (see
 * saop.h).  Returns a new schema, or NULL with e set.
 */
struct saop_schema *
saop_schema_load(const char *path, const struct saop_schema_opts *opts,
    struct saop_err *e)
{
	struct saop_schema *s;
	json_error_t je;
	json_t *doc;
	char *uri;

	doc = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (doc == NULL) {
		if (je.line <= 0 || strstr(je.text, "unable to open") != NULL)
			saop__fail(e, SAOP_ECONFIG, 0,
			    "cannot read schema file %s: %s", path, je.text);
		else
			/* A place in the schema file, not in the input: in
			 * the message only, never as the error's line. */
			saop__fail(e, SAOP_ECONFIG, 0, "schema file %s is not "
			    "JSON: line %d, column %d: %s", path, je.line,
			    je.column, je.text);
		return NULL;
	}
	if ((uri = file_uri(path)) == NULL) {
		saop__fail(e, SAOP_ECONFIG, errno, "schema file %s: %s", path,
		    strerror(errno));
		json_decref(doc);
		return NULL;
	}
	s = saop_schema_compile(doc, uri, opts, e);
	free(uri);
	json_decref(doc);
	return s;
}

/*
 * Compile the embedded SAOP envelope v1 schema (see saop.h).  Returns a new
 * schema, or NULL with e set.
 */
struct saop_schema *
saop_schema_envelope_v1(struct saop_err *e)
{
	struct saop_schema *s;
	json_error_t je;
	json_t *doc;

	doc = json_loadb(saop__envelope_v1.text, saop__envelope_v1.len, 0,
	    &je);
	if (doc == NULL) {
		saop__fail(e, SAOP_EINTERNAL, 0, "embedded %s: %s",
		    saop__envelope_v1.name, je.text);
		return NULL;
	}
	s = saop_schema_compile(doc, NULL, NULL, e);
	json_decref(doc);
	return s;
}

/*
 * The document s was compiled from (see saop.h).  Returns it (borrowed),
 * or NULL when s is NULL.
 */
const json_t *
saop_schema_document(const struct saop_schema *s)
{
	return s != NULL && s->root != NULL ? s->root->js : NULL;
}

/* Is s the SAOP envelope v1 (see saop.h)?  Returns 1 or 0. */
int
saop_schema_is_envelope(const struct saop_schema *s)
{
	const char *id = json_string_value(json_object_get(
	    saop_schema_document(s), "$id"));

	return id != NULL && strcmp(id, SAOP_ENVELOPE_V1_ID) == 0;
}
