/*
 * hash.c: two open-addressing hash maps for the analyzer (symbol cache, function table,
 * call-tree children). Linear probing, power-of-two capacity, load factor <= 1/2, no
 * deletion. A zeroed struct is an empty map. Not thread-safe (the CLI has one thread).
 */
#include "analyze/util/util.h"
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const void *key, size_t len)
{
	return sd_mix64(sd_fnv1a(key, len));
}

/* u64 keys: slot empty when vals[i] == UINT32_MAX (values are ids < UINT32_MAX). */
int sd_u64map_get(const struct sd_u64map *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return 0;
	for (size_t i = sd_mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->vals[i] == UINT32_MAX)
			return 0;
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return 1;
		}
	}
}

static void u64_insert(uint64_t *keys, uint32_t *vals, size_t cap, uint64_t key, uint32_t val)
{
	size_t i = sd_mix64(key) & (cap - 1);

	while (vals[i] != UINT32_MAX && keys[i] != key)
		i = (i + 1) & (cap - 1);
	keys[i] = key;
	vals[i] = val;
}

int sd_u64map_put(struct sd_u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		uint64_t *keys = malloc(cap * sizeof(*keys));
		uint32_t *vals = malloc(cap * sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		memset(vals, 0xff, cap * sizeof(*vals));
		for (size_t i = 0; i < m->cap; i++)
			if (m->vals[i] != UINT32_MAX)
				u64_insert(keys, vals, cap, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	uint32_t old;
	if (!sd_u64map_get(m, key, &old))
		m->n++;
	u64_insert(m->keys, m->vals, m->cap, key, val);
	return 0;
}

void sd_u64map_fini(struct sd_u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* String keys: slot empty when keys[i] == NULL. */
static size_t str_find(const struct sd_strmap *m, const void *key, size_t len)
{
	size_t i = hash_bytes(key, len) & (m->cap - 1);

	while (m->keys[i] && !(m->klens[i] == len && memcmp(m->keys[i], key, len) == 0))
		i = (i + 1) & (m->cap - 1);
	return i;
}

int sd_strmap_get(const struct sd_strmap *m, const void *key, size_t len, uint32_t *val)
{
	if (!m->cap)
		return 0;
	size_t i = str_find(m, key, len);
	if (!m->keys[i])
		return 0;
	*val = m->vals[i];
	return 1;
}

int sd_strmap_put(struct sd_strmap *m, const void *key, size_t len, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct sd_strmap nm = { .cap = m->cap ? m->cap * 2 : 64 };
		nm.keys = calloc(nm.cap, sizeof(*nm.keys));
		nm.klens = calloc(nm.cap, sizeof(*nm.klens));
		nm.vals = calloc(nm.cap, sizeof(*nm.vals));
		if (!nm.keys || !nm.klens || !nm.vals) {
			free(nm.keys);
			free(nm.klens);
			free(nm.vals);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->keys[i])
				continue;
			size_t j = str_find(&nm, m->keys[i], m->klens[i]);
			nm.keys[j] = m->keys[i];
			nm.klens[j] = m->klens[i];
			nm.vals[j] = m->vals[i];
		}
		nm.n = m->n;
		free(m->keys);
		free(m->klens);
		free(m->vals);
		*m = nm;
	}
	size_t i = str_find(m, key, len);
	if (!m->keys[i]) {
		char *k = malloc(len + 1);
		if (!k)
			return -ENOMEM;
		memcpy(k, key, len);
		k[len] = 0;
		m->keys[i] = k;
		m->klens[i] = len;
		m->n++;
	}
	m->vals[i] = val;
	return 0;
}

void sd_strmap_fini(struct sd_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->klens);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

int sd_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *np = realloc(*(void **)pp, ncap * size);
	if (!np)
		return -ENOMEM;
	memset((char *)np + *cap * size, 0, (ncap - *cap) * size);
	*(void **)pp = np;
	*cap = ncap;
	return 0;
}
