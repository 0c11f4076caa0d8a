/*
 * schema-int.h: the compiled form of a JSON Schema, shared by lib/schema.c
 * (compiling, $ref resolution), lib/schema-eval.c (validation) and
 * lib/schema-format.c (formats, ECMA-262 regexes).  Never installed.
 */
#ifndef SAOP_SCHEMA_INT_H
#define SAOP_SCHEMA_INT_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "saop-private.h"

/* Dialects. */
#define SCH_D2020	0
#define SCH_D7		1

/* Instance types, as a bit mask. */
#define SCH_TNULL	0x01
#define SCH_TBOOL	0x02
#define SCH_TOBJECT	0x04
#define SCH_TARRAY	0x08
#define SCH_TNUMBER	0x10
#define SCH_TSTRING	0x20
#define SCH_TINTEGER	0x40

/* Formats asserted with format_assert. */
enum sch_format {
	SCH_FMT_NONE = 0,
	SCH_FMT_DATETIME,
	SCH_FMT_DATE,
	SCH_FMT_TIME,
	SCH_FMT_EMAIL,
	SCH_FMT_URI,
	SCH_FMT_UUID,
	SCH_FMT_IPV4,
	SCH_FMT_IPV6,
	SCH_FMT_REGEX
};

enum sch_kwtype {
	KW_REF,
	KW_DYNREF,
	KW_TYPE,
	KW_ENUM,
	KW_CONST,
	KW_MULTIPLEOF,
	KW_MAXIMUM,
	KW_EXMAXIMUM,
	KW_MINIMUM,
	KW_EXMINIMUM,
	KW_MAXLENGTH,
	KW_MINLENGTH,
	KW_PATTERN,
	KW_FORMAT,
	KW_MAXITEMS,
	KW_MINITEMS,
	KW_UNIQUEITEMS,
	KW_MAXPROPS,
	KW_MINPROPS,
	KW_REQUIRED,
	KW_DEPREQUIRED,
	KW_ALLOF,
	KW_ANYOF,
	KW_ONEOF,
	KW_NOT,
	KW_IF,
	KW_DEPSCHEMAS,
	KW_ITEMS,
	KW_CONTAINS,
	KW_PROPS,
	KW_PROPNAMES,
	KW_UNEVALITEMS,
	KW_UNEVALPROPS
};

struct sch_node;
struct sch_res;

/* A compiled regular expression and its source. */
struct sch_re {
	pcre2_code *code;
	const char *src;
};

/* A named subschema: properties, dependentSchemas, dependentRequired. */
struct sch_named {
	const char *name;
	struct sch_node *node;
	json_t *list;		/* dependentRequired: the array of names */
};

struct sch_pattern {
	struct sch_re re;
	struct sch_node *node;
};

/* One keyword of a schema, compiled. */
struct sch_kw {
	enum sch_kwtype type;
	const char *name;	/* the keyword as written, for errors */
	union {
		struct sch_node *node;	/* not, propertyNames, uneval* */
		unsigned types;		/* type */
		json_t *value;		/* enum, const, limits */
		double num;
		size_t count;		/* max/minLength, Items, Props */
		struct sch_re re;	/* pattern */
		enum sch_format fmt;
		struct {		/* allOf, anyOf, oneOf */
			struct sch_node **v;
			size_t n;
		} list;
		struct {		/* required */
			const char **v;
			size_t n;
		} names;
		struct {		/* dependentRequired/Schemas */
			struct sch_named *v;
			size_t n;
		} deps;
		struct {		/* $ref, $dynamicRef */
			struct sch_node *target;
			const char *anchor;	/* dynamic: anchor name */
			const char *uri;	/* as written */
		} ref;
		struct {		/* if, then, else */
			struct sch_node *cond, *then, *els;
		} cond;
		struct {		/* (prefix)items, additionalItems */
			struct sch_node **prefix;
			size_t nprefix;
			struct sch_node *rest;
			const char *prefix_name, *rest_name;
		} items;
		struct {		/* contains, minContains, maxContains */
			struct sch_node *node;
			size_t min, max;
			int has_max;
		} contains;
		struct {		/* properties, pattern-, additional- */
			struct sch_named *props;
			size_t nprops;
			json_t *propobj;	/* "properties", for lookups */
			struct sch_pattern *pats;
			size_t npats;
			struct sch_node *additional;
		} props;
	} u;
};

/* A compiled (sub)schema. */
struct sch_node {
	json_t *js;		/* its JSON (borrowed from a document) */
	int boolv;		/* true/false schema: 1/0; else -1 */
	int draft;		/* SCH_D2020, SCH_D7 */
	int novalidation;	/* metaschema without validation vocab */
	int compiled;
	int uneval;		/* has unevaluatedItems/Properties */
	int visit;		/* $ref loop search: 0 new, 1 open, 2 done */
	const char *base;	/* its absolute base URI, no fragment */
	const char *loc;	/* where: "/json/pointer", "uri#/..." */
	struct sch_res *res;	/* the schema resource it belongs to */
	struct sch_kw *kw;
	size_t nkw;
	struct sch_node *next_all;	/* every node, for the compile loop */
	struct sch_node *hnext;		/* json_t pointer hash chain */
};

/* A plain or dynamic anchor of a resource. */
struct sch_anchor {
	const char *name;
	struct sch_node *node;
	int dynamic;
	struct sch_anchor *next;
};

/* A schema resource: a document or a subschema with $id. */
struct sch_res {
	const char *uri;	/* absolute, without fragment */
	struct sch_node *root;
	struct sch_anchor *anchors;
	struct sch_res *next;
};

/* An arena block. */
struct sch_block {
	struct sch_block *next;
	size_t used, size;
	unsigned char *mem;
};

struct saop_schema {
	struct sch_node *root;
	struct sch_res *resources;
	struct sch_node *all;		/* every node */
	struct sch_node **hash;		/* json_t * -> node */
	size_t hsize, hcount;
	struct sch_block *blocks;
	json_t *docs;			/* every document loaded (owned) */
	char **ref_dirs;		/* "URI=DIR" copies */
	size_t nref_dirs;
	int format_assert;
	int metas_loaded;
	const char *root_loc_prefix;
};

/* Arena allocation (zeroed), freed with the schema; NULL on ENOMEM. */
void *saop__sch_alloc(struct saop_schema *s, size_t n);
/* A copy of str in the arena; NULL on ENOMEM. */
char *saop__sch_strdup(struct saop_schema *s, const char *str);

/*
 * Translate an ECMA-262 pattern to PCRE2 and compile it into re.  Returns
 * 0, or -1 (not a pattern) or SCH_RE_NOMEM with a message in msg.
 */
#define SCH_RE_NOMEM	(-2)
int saop__sch_regex(struct sch_re *re, const char *src, char *msg,
    size_t msglen);

/*
 * 1 when str (len bytes) matches re, 0 when not, -1 on ENOMEM; *md holds
 * the match data from call to call (NULL first; pcre2_match_data_free it).
 */
int saop__sch_match(const struct sch_re *re, const char *str, size_t len,
    pcre2_match_data **md);

/* The format named name, or SCH_FMT_NONE when it is not asserted. */
enum sch_format saop__sch_format(const char *name);

/* 1 when str (len bytes) is a valid fmt (or fmt is not checked), else 0. */
int saop__sch_format_check(enum sch_format fmt, const char *str, size_t len);

/* The name of fmt. */
const char *saop__sch_format_name(enum sch_format fmt);

/*
 * Streaming a top-level array (saop-validate -q: the value is not kept).
 *
 * When the root schema judges an array by nothing but "type", "items" (one
 * schema for every item), "minItems" and "maxItems", the subschema every
 * item must match, with the item count limits in *min and *max; else
 * NULL.
 */
const struct sch_node *saop__sch_items_schema(const struct saop_schema *s,
    size_t *min, size_t *max);

/*
 * 1 when item, item idx of the root array, matches n (from
 * saop__sch_items_schema); 0 when it does not or the check failed (the
 * caller validates the whole value again to learn which).  *md holds the
 * match data from call to call (NULL first; pcre2_match_data_free it).
 */
int saop__sch_item_valid(const struct saop_schema *s,
    const struct sch_node *n, json_t *item, size_t idx,
    pcre2_match_data **md);

/*
 * The embedded metaschemas (draft 2020-12 and its vocabularies, draft-07):
 * texts ending with a NULL name.
 */
extern const struct saop__blob saop__sch_metas[];

#endif /* SAOP_SCHEMA_INT_H */
