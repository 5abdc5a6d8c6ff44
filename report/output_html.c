/* SPDX-License-Identifier: MIT */
/* The HTML report: one self-contained page that draws itself from JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
/* cs_html_css and cs_html_js, made from report/html/ by the build. */
#include "report/html/assets.h"

/*
 * The page is the JSON report inside a <script type="application/json">
 * element plus the style and script that turn it into tables and SVG
 * charts in the browser.  Everything is inline: no network, no fonts, no
 * libraries.  The Content-Security-Policy says so to the browser too, so
 * that nothing in the data (names come from the profiled program) can make
 * it load anything.  The JSON escapes '<', '>' and '&' inside strings, so
 * "</script>" cannot occur in it.
 */

static const char head[] =
	"<!DOCTYPE html>\n"
	"<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	"style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	"<meta name=\"generator\" content=\"cacheshim report\">\n";

/* Writes s with HTML's special characters escaped. */
static void html_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

int cs_html_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		  const struct cs_output_opts *o)
{
	int ret;

	fputs(head, out);
	fputs("<title>cacheshim report", out);
	if (r->nfiles) {
		fputs(": ", out);
		html_text(out, cs_util_basename(r->files[0].program));
	}
	fputs("</title>\n<style>\n", out);
	fputs(cs_html_css, out);
	fputs("</style>\n</head>\n<body>\n<h1>cacheshim report</h1>\n"
	      "<noscript><p>This report draws its tables and charts with JavaScript; "
	      "the data are in the cs-data element of the page source.</p></noscript>\n"
	      "<div id=\"cs-report\"></div>\n"
	      "<script type=\"application/json\" id=\"cs-data\">\n",
	      out);
	ret = cs_json_print(out, r, syms, o);
	if (ret)
		return ret;
	fputs("</script>\n<script>\n", out);
	fputs(cs_html_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
	return cs_util_flushed(out);
}
