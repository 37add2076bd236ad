/* test_table.c - unit.table: the analyzer's row printer (analyze/report/table.c), on small
 * tables printed to memory: a fixed column pads each text cell on its own as printf's
 * "%*s" does (a wider cell shifts its row only), an aligned one takes its widest cell;
 * sd_table_text replaces a cell in text only, cut to its bound with "..." and control
 * characters escaped (\t), while CSV and JSON keep the cell as added.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "analyze/analyze.h"
#include "tests/unit/unit.h"

static const struct sd_col cols[] = {
	{ .name = "n", .width = 4, .fixed = 1 },
	{ .name = "name", .left = 1, .gap = " " },
	{ .name = "cmd", .left = 1 },
};

/* The table of two rows in fmt, printed as a string (caller frees). */
static char *print(enum sd_format fmt)
{
	struct sd_report_opts o = { .format = fmt };
	struct sd_table *t = sd_table_new(&o, cols, 3);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	CHECK(t && m);
	sd_table_u64(t, 7);
	sd_table_str(t, "a");
	sd_table_str(t, "x\ty,z");
	sd_table_text(t, 6, "%s", "x\ty,z");
	sd_table_u64(t, 123456);
	sd_table_str(t, "long");
	sd_table_null(t);
	sd_table_text(t, 6, "(%s)", "none at all");
	CHECK_EQ(sd_table_rows(t), 2);
	CHECK_EQ(sd_table_print(m, t, 0, "rows"), 0);
	fclose(m);
	sd_table_free(t);
	return buf;
}

static void test_text(void)
{
	char *s = print(SD_FMT_TEXT);
	CHECK_STR(s, "   n name  cmd\n"
		     "   7 a     x\\ty,z\n"
		     "123456 long  (no...\n");
	free(s);
}

static void test_data(void)
{
	char *s = print(SD_FMT_CSV);
	CHECK_STR(s, "n,name,cmd\n7,a,\"x\ty,z\"\n123456,long,\n");
	free(s);
	s = print(SD_FMT_JSON);
	CHECK_STR(s, "\"rows\":[\n{\"n\":7,\"name\":\"a\",\"cmd\":\"x\\ty,z\"},\n"
		     "{\"n\":123456,\"name\":\"long\",\"cmd\":null}]");
	free(s);
}

UNIT_MAIN({ "text", test_text }, { "data", test_data })
